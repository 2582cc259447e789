"""Running one operation, the same way for every way in (REST, JSON-RPC,
XML-RPC, the web pages): take the credentials and the field choice out of
the parameters, resolve the caller, run the service in a unit of work
(call/unit_of_work.py: its transaction and its Context) after the login
rule, trim the answer to the requested fields. Services never see
credentials or field lists."""

import time
from contextlib import contextmanager, nullcontext

from .. import errors
from ..accounts.auth import CredentialsRefused, extract_credentials
from ..accounts.caller import ANONYMOUS, load_caller
from ..call import fields
from ..call.fields import FieldFilter
from ..store.db import TextRefused
from .operation import EXEMPT, REQUIRED, SELF


# Parameters that shape the call, not the service's work: the answer's
# fields, and the reference's web-session token (a cookie's twin that only
# its own pages send), which the service never reads.
_CALL_KEYS = ("include_fields", "exclude_fields", "Bugzilla_api_token", "Service_api_token")
# The filter of a call that names no fields (most calls): one for all, as a
# filter never changes once made.
_NO_CHOICE = FieldFilter()
# The block of a call whose transaction nobody times (no --metrics).
_UNTIMED = nullcontext()


class Runner:
    """Runs operations for the ways in.

    units: the UnitOfWork every call runs in (its Database, Config,
    Authenticator and clock are the Runner's).
    """

    def __init__(self, units):
        self.units = units
        self.db = units.db
        self.config = units.config
        self.auth = units.auth
        self.limiter = None             # limits.Limiter when rate limits are set
        self.on_transaction = None      # told (writes, seconds) of each call's transaction

    @property
    def clock(self):
        """The units' clock: the current aware UTC datetime."""
        return self.units.clock

    def run(self, operation, params, headers, remote_ip, page=False):
        """Run `operation` as the caller the credentials name.

        params: the merged parameters (credential and field keys are removed
        from it). headers: upper-case header names to values.
        Returns the service's result, trimmed by include/exclude fields.
        Errors: every ServiceError of authentication (300, 301, 306, 32000
        an invalid token or a throttled attempt), 410 when the operation
        needs a login, those of the service, 54 for a number too large for
        SQL (or a date) that the service let through, 32000 for a request
        beyond the database's statement size limits, and 32000 for a text the
        database cannot keep (PostgreSQL: the NUL character).
        page: the token is a web page's session (which acts as the account
        its sudo names, accounts/sudo.py).
        """
        try:
            return self._run(operation, params, headers, remote_ip, page)
        except TextRefused:
            raise _text_refused() from None
        finally:
            if self.limiter is not None:
                self.limiter.after_call()

    def _run(self, operation, params, headers, remote_ip, page):
        creds = extract_credentials(params, headers, operation.keeps_credentials)
        creds.page_session = page
        flt = _field_filter(params)
        forgiving = operation.anonymous_when_key_refused and creds.login is None
        now = self.units.clock()
        # API keys and tokens are checked inside the call's own transaction
        # (one transaction per call). Passwords are checked before it, as
        # login does, since each outcome is stored at once.
        in_call = operation.login != SELF and bool(creds.api_key
                                                   or (creds.token and creds.login is None))
        if operation.login == SELF or in_call:
            caller = ANONYMOUS
        else:
            caller = self.auth.resolve_password(creds, remote_ip, now)
        call = (operation, params, caller, creds if in_call else None, remote_ip, flt)
        presented = creds if operation.login == SELF else None
        try:
            try:
                result = self._run_in_transaction(*call, forgiving=forgiving,
                                                  presented=presented)
            except _UseDue as due:
                # A read call's key or token whose use is to be recorded (once
                # a minute): recorded first, so the call sees it, then the call.
                self.auth.record_use(due.use, remote_ip, now)
                result = self._run_in_transaction(*call, forgiving=forgiving, use_recorded=True,
                                                  presented=presented)
        except CredentialsRefused as refused:
            self.auth.record_failure(refused.subject, now)
            raise
        return fields.apply(result, operation.shapes, flt)

    def run_many(self, calls, headers, remote_ip, page=False, then=None):
        """Run reading operations one after another as one caller, in one
        read transaction, so that they see one state of the database (a web
        page's reads: a bug, its comments and its update_token agree).

        calls: [(operation, params)]; none may write or check credentials
        itself. The credentials come from `headers` only: credential keys in
        the params are dropped. Each operation's login rule, field choice
        and answer shape apply as in `run`.
        then: called with the results of `calls` in the same transaction
        (as their services answered: the fields they were asked for, not yet
        trimmed), returns more calls to run there, whose results follow (the
        reads a page chooses by what it read).
        Returns the results in order. Errors: as `run`; the first failing
        call ends them all. ValueError for an operation that writes.
        page: as `run`.
        """
        try:
            return self._run_many(calls, headers, remote_ip, page, then)
        except TextRefused:
            raise _text_refused() from None
        finally:
            if self.limiter is not None:
                self.limiter.after_call()

    def _run_many(self, calls, headers, remote_ip, page, then=None):
        creds = extract_credentials({}, headers)
        creds.page_session = page
        prepared = _prepared(calls)
        now = self.units.clock()
        in_call = bool(creds.api_key or (creds.token and creds.login is None))
        caller = ANONYMOUS if in_call else self.auth.resolve_password(creds, remote_ip, now)
        checked = creds if in_call else None
        try:
            try:
                results, ran = self._run_many_in_transaction(prepared, caller, checked,
                                                             remote_ip, then=then,
                                                             page_reads=page)
            except _UseDue as due:
                self.auth.record_use(due.use, remote_ip, now)
                results, ran = self._run_many_in_transaction(prepared, caller, checked,
                                                             remote_ip, use_recorded=True,
                                                             then=then, page_reads=page)
        except CredentialsRefused as refused:
            self.auth.record_failure(refused.subject, now)
            raise
        return [fields.apply(result, operation.shapes, flt)
                for result, (operation, _, flt) in zip(results, ran, strict=True)]

    def _run_many_in_transaction(self, prepared, given, creds, remote_ip, use_recorded=False,
                                 then=None, page_reads=False):
        """([results], [the prepared calls they answer]) of `prepared` and
        of what `then` adds (read from a replica when the database has one,
        for an anonymous page or calls that all may be)."""
        names = tuple(operation.name for operation, _, _ in prepared)
        counted, counted_more = [], []

        def identify(conn, generations):
            caller = self._identify(conn, generations, given, creds, remote_ip, False,
                                    use_recorded)
            self._count(conn, caller, creds, remote_ip, names, False, counted)
            return caller

        # Anonymous pages, and reads that may all come from a replica,
        # come from one when the database has replicas.
        anonymous = creds is None and getattr(given, "id", given) is None
        replica = (page_reads and anonymous) or all(
            operation.from_replica for operation, _, _ in prepared)

        def read_all(ctx):
            # One snapshot: the catalog generation, and what one call found
            # out about a bug's visibility, hold for the others too.
            memo, results, ran = {}, [], list(prepared)

            def run_each(calls):
                for operation, params, flt in calls:
                    call = self.units.new_context(ctx.conn, ctx.caller, ctx.now, remote_ip,
                                                  flt, generation=ctx.catalog_generation)
                    call.memo = memo
                    results.append(self._service(call, operation, params))
            run_each(prepared)
            if then is not None:
                more = _prepared(then(list(results)))
                if more:
                    # Counted against the rate limits as a call of its own,
                    # as if made apart.
                    self._count(ctx.conn, ctx.caller, creds, remote_ip,
                                tuple(operation.name for operation, _, _ in more), False,
                                counted_more)
                ran.extend(more)
                run_each(more)
            return results, ran
        with self._timed(False):
            return self.units.run(read_all, caller=identify, remote_ip=remote_ip,
                                  replica=replica, anonymous=anonymous)

    def call(self, operation, params, user_id=None, remote_ip="127.0.0.1", now=None):
        """Run `operation` as account `user_id` (None: anonymous), already
        known to be who it is: the operator's own commands and service-level
        tests. The operation's rules apply as in `run`.

        Returns the trimmed result. Errors: as `run`, without those of
        authentication.
        """
        params = dict(params)
        flt = _field_filter(params)
        try:
            result = self._run_in_transaction(operation, params, user_id, None, remote_ip, flt,
                                              now=now)
        except TextRefused:
            raise _text_refused() from None
        return fields.apply(result, operation.shapes, flt)

    def parameters(self):
        """{name: value} of every instance parameter, as the installation
        holds them, for a way in that follows them itself (the web pages'
        cookie path, sign-in choices, user menus, bug list size): read in a
        transaction of its own, from this process's copy while the catalog
        has not changed. Shown to nobody as it is: never a caller's answer."""
        with self.db.transaction(write=False) as conn:
            ctx = self.units.new_context(conn, ANONYMOUS, self.units.clock(), "")
            return dict(ctx.cached("params", ctx.load_parameters))

    def _run_in_transaction(self, operation, params, caller, creds, remote_ip, flt,
                            forgiving=False, use_recorded=False, now=None, presented=None):
        """The call's result, in its transaction; `creds` (when not None)
        are checked in it first (when `forgiving`, a key or token that is
        refused leaves the call anonymous, and is not counted); a `caller`
        given as an account id (or None with no creds: anonymous) is loaded
        in it; `presented`: the credentials an operation that checks its own
        gets in its context. Errors: as `run`, and _UseDue when a read
        call's API key or token use is to be recorded first."""
        counted = []

        def identify(conn, generations):
            who = self._identify(conn, generations, caller, creds, remote_ip, forgiving,
                                 use_recorded, may_write=operation.writes)
            self._count(conn, who, creds, remote_ip, (operation.name,), operation.writes,
                        counted)
            return who
        # Login checks the password on a connection of its own, which
        # records the outcome; the call's transaction must not have read
        # anything before (its snapshot would then be too old to write the
        # token), so that call keeps no copies of the catalogue.

        def work(ctx):
            ctx.credentials = presented
            return self._service(ctx, operation, params)
        with self._timed(operation.writes):
            return self.units.run(work, write=operation.writes, caller=identify, now=now,
                                  remote_ip=remote_ip, fields=flt,
                                  catalog=operation.login != SELF,
                                  replica=operation.from_replica and presented is None,
                                  anonymous=creds is None and getattr(caller, "id", caller) is None)

    def _count(self, conn, caller, creds, remote_ip, names, writes, counted):
        """Count the call against the rate limits, once however often its
        transaction is tried (`counted`: a list, empty until it was).
        Errors: 32000 (HTTP 429) past a limit (limits.Limiter.check)."""
        if self.limiter is not None and not counted:
            counted.append(True)
            self.limiter.check(conn, caller, creds.api_key if creds else None, remote_ip,
                               names, writes)

    def _timed(self, writes):
        """A context manager telling on_transaction (when set) how long the
        block's transaction took."""
        return _UNTIMED if self.on_transaction is None else self._timing(writes)

    @contextmanager
    def _timing(self, writes):
        started = time.perf_counter()
        try:
            yield
        finally:
            if self.on_transaction is not None:
                self.on_transaction(writes, time.perf_counter() - started)

    def _identify(self, conn, generations, caller, creds, remote_ip, forgiving, use_recorded,
                  may_write=False):
        """The call's Caller, in its transaction `conn` (whose generations
        are `generations`, a cache.Generations): `creds` (when not None) are
        checked first (see _run_in_transaction); a `caller` given as an
        account id (or None with no creds: anonymous) is loaded."""
        if creds is not None:
            try:
                caller, use = self.auth.identify(conn, creds, remote_ip, self.units.clock(),
                                                 may_write=may_write, generations=generations)
            except errors.ServiceError:
                if not forgiving:
                    raise
                caller, use = ANONYMOUS, None
            if use is not None and not use_recorded:
                raise _UseDue(use)
        elif caller is None:
            caller = ANONYMOUS
        elif isinstance(caller, int):
            caller = load_caller(conn, caller)
        return caller

    def _service(self, ctx, operation, params):
        """The service's result for `params` in `ctx`, after the login rule."""
        if not ctx.caller.is_logged_in:
            if operation.login == REQUIRED or (operation.login not in (EXEMPT, SELF)
                                               and ctx.param_is_on("requirelogin")):
                errors.require_login(ctx)
        if operation.not_while_acting and ctx.caller.sudoer_id is not None:
            raise errors.ServiceError(errors.USER_ERROR, "While you act as another user you "
                                      "cannot change their password, e-mail address, API keys "
                                      "or two-factor sign-in.")
        try:
            return operation.service(ctx, params)
        except OverflowError:
            # An integer beyond 64 bits that reached SQL (sqlite3 refuses
            # it) or date arithmetic without passing Params.int: the
            # call's work is rolled back and the caller told, as by Params.
            raise errors.ServiceError(errors.NUMBER_TOO_LARGE,
                                      "A number in the request is too large.") from None
        except errors.ServiceError:
            raise
        except Exception as exc:
            # A request so large or complex that the database refuses the
            # statement it makes (more values than one statement takes, an
            # expression too deep ...): the caller's doing, so a user error;
            # any other database failure stays internal.
            if not self.db.statement_too_large(exc):
                raise
            raise errors.ServiceError(errors.USER_ERROR, "The request names too many values, "
                                      "or is too complex, for the database to answer; "
                                      "split it into smaller requests.") from None


def _text_refused():
    """The answer to a request holding a text the database cannot keep
    (PostgreSQL: the NUL character), whether to store or to look for."""
    return errors.ServiceError(errors.USER_ERROR, "A text in the request holds the NUL "
                               "character (\\u0000), which this database cannot keep; "
                               "leave it out.")


def _prepared(calls):
    """[(operation, params, field filter)] of reading calls [(operation,
    params)], their credential and field keys taken out of copies of their
    params. Errors: ValueError for an operation that writes or checks
    credentials itself."""
    prepared = []
    for operation, params in calls:
        if operation.writes or operation.login == SELF:
            raise ValueError(f"{operation.name} cannot run with others")
        params = dict(params)
        extract_credentials(params, {})
        prepared.append((operation, params, _field_filter(params)))
    return prepared


def _field_filter(params):
    """The include/exclude choice of a call, taken out of its `params`
    together with the other keys that shape the call rather than its work."""
    include, exclude = params.get("include_fields"), params.get("exclude_fields")
    flt = _NO_CHOICE if include is None and exclude is None else FieldFilter(include, exclude)
    if not params.keys().isdisjoint(_CALL_KEYS):
        for key in _CALL_KEYS:
            params.pop(key, None)
    return flt


class _UseDue(Exception):
    """A read call's transaction cannot record its API key's or token's use:
    record it, then run again."""

    def __init__(self, use):
        super().__init__(use)
        self.use = use
