"""Running one service call, the same way for every transport (REST,
JSON-RPC, XML-RPC): take the credentials out of the parameters, resolve the
caller, open the call's transaction, enforce the login rule, run the service,
apply include_fields/exclude_fields."""

import sqlite3
from datetime import datetime, timezone

from . import cache, errors, fields
from .auth import CredentialsRefused, extract_credentials
from .caller import ANONYMOUS
from .context import Context
from .rest.routing import REQUIRED, EXEMPT, SELF


# SQLite's messages for statements beyond its size limits.
_SQL_SIZE_LIMITS = ("too many SQL variables", "Expression tree is too large",
                    "parser stack overflow", "too many terms in compound SELECT",
                    "string or blob too big", "LIKE or GLOB pattern too complex", "too many columns",
                    "at most 64 tables", "too many FROM clause terms",
                    "too many arguments on function")


class Runner:
    """Runs service functions for the transports.

    db: the Database. config: the instance Config. authenticator: the
    Authenticator. clock: returns the current aware UTC datetime (tests).
    """

    def __init__(self, db, config, authenticator, clock=None):
        self.db = db
        self.config = config
        self.auth = authenticator
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.catalog = cache.CatalogCache()

    def run(self, function, rule, params, headers, remote_ip):
        """Run `function(ctx, params)` as the caller the credentials name.

        rule: what the call needs, with the attributes of a Route: login
        (OPTIONAL/REQUIRED/EXEMPT/SELF), is_write, shapes, keeps_credentials,
        anonymous_when_key_refused.
        params: the merged parameters (credential keys are removed from it).
        headers: upper-case header names to values.
        Returns the service's result, trimmed by include/exclude fields.
        Errors: every ServiceError of authentication (300, 301, 306, 32000
        an invalid token or a throttled attempt),
        410 when the rule needs a login, those of the service, 54 for a
        number too large for SQL (or a date) that the service let through,
        and 32000 for a request beyond SQLite's statement size limits.
        """
        creds = extract_credentials(params, headers, rule.keeps_credentials)
        forgiving = rule.anonymous_when_key_refused and creds.login is None
        now = self.clock()
        # API keys and tokens are checked inside the call's own transaction
        # (one transaction per call). Passwords are checked before it, as
        # login does, since each outcome is stored at once.
        in_call = rule.login != SELF and bool(creds.api_key
                                              or (creds.token and creds.login is None))
        if rule.login == SELF or in_call:
            caller = ANONYMOUS
        else:
            caller = self.auth.resolve_password(creds, remote_ip, now)
        flt = fields.FieldFilter(params.get("include_fields"), params.get("exclude_fields"))
        call = (function, rule, params, caller, creds if in_call else None, remote_ip, now, flt,
                forgiving)
        try:
            try:
                result = self._run_in_transaction(*call)
            except _UseDue as due:
                # A read call's key or token whose use is to be recorded (once
                # a minute): recorded first, so the call sees it, then the call.
                self.auth.record_use(due.use, remote_ip, now)
                result = self._run_in_transaction(*call, use_recorded=True)
        except CredentialsRefused as refused:
            self.auth.record_failure(refused.subject, now)
            raise
        fields.apply(result, rule.shapes, flt)
        return result

    def _run_in_transaction(self, function, rule, params, caller, creds, remote_ip, now, flt,
                            forgiving, use_recorded=False):
        """The call's result, in its transaction; `creds` (when not None)
        are checked in it first (when `forgiving`, a key or token that is
        refused leaves the call anonymous, and is not counted). Errors: as
        `run`, and _UseDue when a read call's API key or token use is to be
        recorded first."""
        with self.db.transaction(write=rule.is_write) as conn:
            if creds is not None:
                try:
                    caller, use = self.auth.identify(conn, creds, remote_ip, now,
                                                     may_write=rule.is_write)
                except errors.ServiceError:
                    if not forgiving:
                        raise
                    caller, use = ANONYMOUS, None
                if use is not None and not use_recorded:
                    raise _UseDue(use)
            # The call's time is read once its transaction holds the write
            # lock (as the reference reads it inside its transaction): writes
            # waiting for one another are then stamped in the order they are
            # stored, so history and last_change_time never run backwards.
            # Login checks the password on a connection of its own, which
            # records the outcome; this transaction must not have read
            # anything before (its snapshot would then be too old to write
            # the token), so that call keeps no copies.
            ctx = Context(conn=conn, caller=caller, now=self.clock(), config=self.config,
                          auth=self.auth, remote_ip=remote_ip, fields=flt, catalog=self.catalog,
                          catalog_generation=None if rule.login == SELF else cache.generation(conn),
                          writes=rule.is_write)
            if not caller.is_logged_in:
                if rule.login == REQUIRED or (rule.login not in (EXEMPT, SELF)
                                              and ctx.param_is_on("requirelogin")):
                    errors.require_login(ctx)
            try:
                result = function(ctx, params)
            except OverflowError:
                # An integer beyond 64 bits that reached SQL (sqlite3 refuses
                # it) or date arithmetic without passing Params.int: the
                # call's work is rolled back and the caller told, as by Params.
                raise errors.ServiceError(errors.NUMBER_TOO_LARGE,
                                          "A number in the request is too large.") from None
            except (sqlite3.OperationalError, sqlite3.DataError) as exc:
                # A request so large or complex that SQLite refuses the
                # statement it makes (more values than one statement takes,
                # an expression too deep ...): the caller's doing, so a user
                # error; any other database failure stays internal.
                if not str(exc).startswith(_SQL_SIZE_LIMITS):
                    raise
                raise errors.ServiceError(errors.USER_ERROR, "The request names too many values, "
                                          "or is too complex, for the database to answer; "
                                          "split it into smaller requests.") from None
        return result


class _UseDue(Exception):
    """A read call's transaction cannot record its API key's or token's use:
    record it, then run again."""

    def __init__(self, use):
        super().__init__(use)
        self.use = use
