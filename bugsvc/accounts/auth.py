"""Passwords, API keys, login tokens, throttling of failed sign-ins, and
resolving who a call runs as.

Passwords are hashed with scrypt and a per-user salt; the work factors are
stored with the hash, and a hash made with lower factors than the instance's
is replaced at the account's next successful sign-in. API keys and tokens are
high-entropy secrets stored only as SHA-256 digests, so a copy of the database
does not hand them out. Comparisons are constant-time.

Throttling: failed sign-ins are counted per subject. A wrong password counts
against the login name it was given for (an account; a name no account has
is treated the same way, so answers never tell which names are accounts); an
API key or login token that is not valid counts against the client's
address. The first FREE_FAILURES failures of a subject cost nothing; after
that its next attempt waits 1 second after the last failure, twice as long
with each further failure, at most 30 minutes. An attempt made while its
subject waits is answered with the throttled error (32000) without being
checked or counted. A complete sign-in (the right password and, for an
account with a second factor, its right code) clears its login name's
count, so wrong codes are throttled as wrong passwords are; a
subject idle for a day is forgotten; administrators clear counts by hand.
Valid API keys and tokens always work, whatever their address's count: a
guessed key or token is refused on its own and a guessed password only
delays that one account's password sign-ins.
"""

import base64
import hashlib
import hmac
import math
import os
import re
import secrets
import string
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from urllib.parse import unquote

from .. import dates
from ..catalogue import settings
from ..errors import (
    ACCOUNT_DISABLED,
    API_KEY_NOT_VALID,
    INVALID_LOGIN_OR_PASSWORD,
    SECOND_FACTOR_INVALID,
    USER_ERROR,
    ServiceError,
)
from ..store import cache
from . import second_factor, sudo
from .caller import ANONYMOUS, load_caller


_ALNUM = string.ascii_letters + string.digits
API_KEY_LENGTH = 40
TOKEN_SECRET_LENGTH = 10
_TOKEN_FORM = re.compile(r"^(\d+)-([A-Za-z0-9]+)$")
TOKEN_MAX_AGE_PARAM = "login_token_max_age"


# Passwords -------------------------------------------------------------------

@dataclass(frozen=True)
class ScryptCost:
    """scrypt work factors: n=2**17, r=8, p=1 by default (OWASP's figure for
    scrypt); tests lower them to stay fast."""
    n: int = 2**17
    r: int = 8
    p: int = 1

    def covers(self, other):
        """True when no factor of `other` is higher than this one's."""
        return other.n <= self.n and other.r <= self.r and other.p <= self.p


# One scrypt evaluation holds 128 * r * n bytes (128 MiB at the default
# factors): at most this many run at once in a process, so a burst of
# sign-ins waits its turn instead of taking all the memory there is.
_SCRYPT_SLOTS = threading.BoundedSemaphore(max(1, min(4, os.cpu_count() or 1)))


def _scrypt(password, salt, cost, dklen):
    maxmem = 128 * cost.r * (cost.n + cost.p + 2) + 2**20
    with _SCRYPT_SLOTS:
        return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=cost.n, r=cost.r, p=cost.p,
                              maxmem=maxmem, dklen=dklen)


def hash_password(password, cost=ScryptCost()):
    """Return 'scrypt$n$r$p$salt$digest' (base64 parts) for `password`."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, cost, 32)
    return "$".join(["scrypt", str(cost.n), str(cost.r), str(cost.p),
                     base64.b64encode(salt).decode(), base64.b64encode(digest).decode()])


def hash_cost(stored):
    """The ScryptCost a stored hash was made with; None when it is not one of ours."""
    try:
        scheme, n, r, p, _, _ = stored.split("$")
        return ScryptCost(int(n), int(r), int(p)) if scheme == "scrypt" else None
    except (AttributeError, ValueError):
        return None


def verify_password(password, stored):
    """True when `password` matches the stored hash (constant-time)."""
    if not stored or password is None:
        return False
    cost = hash_cost(stored)
    if cost is None:
        return False
    try:
        salt, digest = stored.split("$")[4:]
        expected = base64.b64decode(digest)
        actual = _scrypt(password, base64.b64decode(salt), cost, len(expected))
    except (ValueError, TypeError, MemoryError, OverflowError):
        return False
    return hmac.compare_digest(actual, expected)


# Throttling ------------------------------------------------------------------

FREE_FAILURES = 5
FIRST_DELAY_SECONDS = 1
MAX_DELAY_SECONDS = 30 * 60
FORGET_AFTER = timedelta(days=1)
# Logins have at most 127 characters: a longer name is no account's, and
# keeping more of it would only let a guesser fill the table faster.
_SUBJECT_NAME_LENGTH = 128


def throttle_delay(failures):
    """Seconds a subject with `failures` counted failures waits after the
    last one: none for the first FREE_FAILURES, then 1, doubling with each
    further failure, at most MAX_DELAY_SECONDS."""
    if failures < FREE_FAILURES:
        return 0
    return min(FIRST_DELAY_SECONDS * 2 ** min(failures - FREE_FAILURES, 31), MAX_DELAY_SECONDS)


def login_subject(login_name):
    """The throttling subject of wrong passwords given for `login_name`."""
    return "login:" + (login_name or "").lower()[:_SUBJECT_NAME_LENGTH]


def address_subject(ip_address):
    """The throttling subject of API keys and tokens refused from `ip_address`."""
    return "address:" + (ip_address or "")


def throttle_state(conn, subject, now):
    """(seconds `subject` still waits, 0 when an attempt may be checked now;
    its counted failures)."""
    row = conn.execute("SELECT failures, last_failure FROM login_throttle WHERE subject = ?",
                       (subject,)).fetchone()
    if row is None:
        return 0, 0
    last = datetime.strptime(row["last_failure"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    if now - last >= FORGET_AFTER:
        return 0, 0
    remaining = throttle_delay(row["failures"]) - (now - last).total_seconds()
    return max(0, math.ceil(remaining)), row["failures"]


def count_failure(conn, subject, failures, now):
    """Store `failures` + 1 failures for `subject`, the last one now, and
    forget the subjects idle for FORGET_AFTER (inside a write transaction
    that read `failures` with throttle_state)."""
    conn.execute("INSERT INTO login_throttle (subject, failures, last_failure) VALUES (?, ?, ?)"
                 " ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures,"
                 " last_failure = excluded.last_failure", (subject, failures + 1, dates.to_db(now)))
    conn.execute("DELETE FROM login_throttle WHERE last_failure <= ?",
                 (dates.to_db(now - FORGET_AFTER),))


def reset_failed_logins(conn, login_name):
    """Clear the failures counted against `login_name` (an administrator's
    reset). Returns how many there were."""
    return _clear(conn, login_subject(login_name))


def reset_address_failures(conn, ip_address):
    """Clear the failures counted against the address `ip_address`.
    Returns how many there were."""
    return _clear(conn, address_subject(ip_address))


def _clear(conn, subject):
    rows = conn.execute("DELETE FROM login_throttle WHERE subject = ? RETURNING failures",
                        (subject,)).fetchall()
    return rows[0][0] if rows else 0


def throttled_error(seconds, what):
    """The answer to an attempt made while its subject waits (the reference's
    code for a locked account)."""
    unit = "second" if seconds == 1 else "seconds"
    return ServiceError(USER_ERROR, f"Too many failed sign-in attempts {what}: the next one is "
                                    f"checked in {seconds} {unit}.")


# Secrets ---------------------------------------------------------------------

def new_secret(length):
    """A random alphanumeric string of `length` characters."""
    return "".join(secrets.choice(_ALNUM) for _ in range(length))


def secret_hash(secret):
    """The stored form of an API key or token secret: SHA-256 hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_api_key(conn, user_id, description, now):
    """Store a new API key for `user_id`. Returns (key id, the secret)."""
    key = new_secret(API_KEY_LENGTH)
    cur = conn.execute(
        "INSERT INTO api_keys (user_id, key_hash, description, revoked, created_at)"
        " VALUES (?, ?, ?, 0, ?) RETURNING id",
        (user_id, secret_hash(key), description, dates.to_db(now)))
    return cur.fetchone()[0], key


def token_max_age(conn):
    """How long a login token stays valid after its last use (the parameter
    login_token_max_age, in days)."""
    row = conn.execute("SELECT value FROM params WHERE name = ?", (TOKEN_MAX_AGE_PARAM,)).fetchone()
    text = row[0] if row is not None else settings.DEFINITIONS[TOKEN_MAX_AGE_PARAM][0]
    return timedelta(days=int(text) if str(text).isdigit() and int(text) > 0 else 30)


def create_token(conn, user_id, ip_address, now):
    """Store a login token for `user_id` (bound to `ip_address` when given),
    and delete the tokens that expired (unused for token_max_age)."""
    secret = new_secret(TOKEN_SECRET_LENGTH)
    token = f"{user_id}-{secret}"
    stamp = dates.to_db(now)
    conn.execute("DELETE FROM login_tokens WHERE last_used < ?",
                 (dates.to_db(now - token_max_age(conn)),))
    conn.execute("INSERT INTO login_tokens (token_hash, user_id, ip_address, created_at, last_used)"
                 " VALUES (?, ?, ?, ?, ?)", (secret_hash(token), user_id, ip_address, stamp, stamp))
    return token


def delete_token(conn, token):
    """Invalidate `token`; does nothing when it is not in use."""
    conn.execute("DELETE FROM login_tokens WHERE token_hash = ?", (secret_hash(token),))


def delete_user_tokens(conn, user_id):
    """Invalidate every login token of account `user_id` (its sessions end)."""
    conn.execute("DELETE FROM login_tokens WHERE user_id = ?", (user_id,))


# Credentials -----------------------------------------------------------------

_API_KEY_PARAMS = ("Bugzilla_api_key", "Service_api_key", "api_key")
_LOGIN_PARAMS = ("Bugzilla_login", "Service_login")
_PASSWORD_PARAMS = ("Bugzilla_password", "Service_password")
_TOKEN_PARAMS = ("Bugzilla_token", "Service_token", "token")
_RESTRICT_PARAMS = ("Bugzilla_restrictlogin", "Service_restrictlogin", "restrict_login")
# The second factor's code given with a login and password (bugsvc's own:
# Bugzilla 5.2 has no second factor).
_TOTP_PARAMS = ("Bugzilla_totp", "Service_totp", "totp")
# Credential keys never reach a service, except these plain names, which are
# also the parameters of login, logout and valid_login.
_METHOD_NAMES = ("login", "password", "token", "restrict_login", "totp")
_HEADERS = {
    "api_key": ("X-BUGZILLA-API-KEY", "X-SERVICE-API-KEY"),
    "login": ("X-BUGZILLA-LOGIN", "X-SERVICE-LOGIN"),
    "password": ("X-BUGZILLA-PASSWORD", "X-SERVICE-PASSWORD"),
    "token": ("X-BUGZILLA-TOKEN", "X-SERVICE-TOKEN"),
    "totp": ("X-BUGZILLA-TOTP", "X-SERVICE-TOTP"),
}


_ALL_PARAM_NAMES = frozenset(_API_KEY_PARAMS + _LOGIN_PARAMS + _PASSWORD_PARAMS + _TOKEN_PARAMS
                             + _RESTRICT_PARAMS + _TOTP_PARAMS + _METHOD_NAMES)
_ALL_HEADERS = frozenset(name for names in _HEADERS.values() for name in names) | {"AUTHORIZATION"}
# Every parameter a call's credentials may come in.
CREDENTIAL_PARAMS = _ALL_PARAM_NAMES
# Every header a call's credentials may come in (upper-case names): what the
# ways in hand the Runner (web/http.py, credential_headers).
CREDENTIAL_HEADERS = tuple(sorted(_ALL_HEADERS))


@dataclass
class Credentials:
    """What a call presented to prove who it is (any of them may be None)."""
    api_key: str | None = None
    login: str | None = None
    password: str | None = None
    token: str | None = None
    restrict: object = None
    totp: str | None = None
    # Set by the web pages for their session token (never by a parameter or
    # header): only a page session acts as the account its sudo names.
    page_session: bool = False

    @property
    def present(self):
        return bool(self.api_key or self.token) or self.login is not None


def _first(params, names):
    for name in names:
        value = params.get(name)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None and value != "":
            return value if isinstance(value, str) else str(value)
    return None


def _given_empty(params, names):
    """True when one of `names` is given with an empty value."""
    return any(params.get(name) in ("", [""]) for name in names)


def extract_credentials(params, headers, keep_method_params=False):
    """Take the credentials out of `params` (removing them) and `headers`.

    params: the merged call parameters (modified in place).
    headers: mapping of upper-case header names to values.
    keep_method_params: leave login/password/token in params for the calls
    whose own parameters they are.
    Returns Credentials. Parameters win over headers.
    """
    if params.keys().isdisjoint(_ALL_PARAM_NAMES):
        if headers.keys().isdisjoint(_ALL_HEADERS):
            return Credentials()          # most calls: nothing to take out
        if not keep_method_params:
            # An API client's call: the credentials are in headers alone.
            creds = Credentials()
            _take_headers(creds, headers)
            return creds
    creds = Credentials(api_key=_first(params, _API_KEY_PARAMS),
                        login=_first(params, _LOGIN_PARAMS),
                        password=_first(params, _PASSWORD_PARAMS),
                        token=_first(params, _TOKEN_PARAMS),
                        totp=_first(params, _TOTP_PARAMS))
    if creds.login is None and "login" in params and "password" in params:
        creds.login = _first(params, ("login",))
        creds.password = _first(params, ("password",))
    for name in _RESTRICT_PARAMS:
        if name in params:
            creds.restrict = params[name]
            break
    _take_headers(creds, headers)
    # An empty login given with a password is a sign-in that fails (300),
    # never an anonymous call.
    pair = "login" in params and "password" in params
    if creds.login is None and (_given_empty(params, _LOGIN_PARAMS)
                                or (pair and _given_empty(params, ("login",)))):
        if pair or creds.password is not None or any(params.get(name) is not None
                                                     for name in _PASSWORD_PARAMS):
            creds.login = ""
    if keep_method_params:
        # login, logout and valid_login read these under their plain names,
        # whichever parameter or header carried them.
        for name, value in (("login", creds.login), ("password", creds.password),
                            ("token", creds.token), ("restrict_login", creds.restrict),
                            ("totp", creds.totp)):
            if value is not None and params.get(name) is None:
                params[name] = value
    for name in (_API_KEY_PARAMS + _LOGIN_PARAMS + _PASSWORD_PARAMS + _TOKEN_PARAMS
                 + _RESTRICT_PARAMS + _TOTP_PARAMS):
        if name in _METHOD_NAMES and keep_method_params:
            continue
        params.pop(name, None)
    if pair and not keep_method_params:
        params.pop("login", None)
        params.pop("password", None)
    return creds


def _take_headers(creds, headers):
    """Fill in, from `headers`, the credentials `creds` does not hold yet
    (parameters win over headers): X-BUGZILLA-* (or X-SERVICE-*) headers,
    then an API key as `Authorization: Bearer KEY`."""
    for kind, header_names in _HEADERS.items():
        if getattr(creds, kind) is None:
            for header in header_names:
                value = headers.get(header)
                if value:
                    setattr(creds, kind, unquote(value))
                    break
    if creds.api_key is None:
        authorization = headers.get("AUTHORIZATION") or ""
        if authorization[:7].lower() == "bearer " and authorization[7:].strip():
            creds.api_key = authorization[7:].strip()


# Resolving the caller ----------------------------------------------------------

class CredentialsRefused(ServiceError):
    """An API key or token refused in a way that counts against its
    throttling subject; whoever catches it records it
    (Authenticator.record_failure) once the transaction it was found in is
    over.

    subject: the throttling subject the failure counts against.
    """

    def __init__(self, code, message, subject):
        super().__init__(code, message)
        self.subject = subject


@dataclass(frozen=True)
class SecretUse:
    """An API key or login token whose use is due to be recorded (at most
    once a minute, so reads do not all become writes).

    kind: "api_key" (ident: the key's id) or "token" (ident: its hash).
    """
    kind: str
    ident: object


@dataclass(frozen=True)
class KnownKey:
    """A valid API key resolved earlier: its id, the Caller it signs in as
    and its last use as stored when it was read ('YYYY-MM-DD HH:MM:SS' or None)."""
    key_id: int
    caller: object
    last_used: str | None


class ApiKeyCache:
    """The API keys a serving process resolved, by the SHA-256 digest of
    the secret (never the secret), each good at the credential generation it
    was read at (store/cache.py): a request reads that one counter in its own
    transaction and uses what is kept at it, so a key revoked or an account
    disabled, renamed or changed in its groups by any process is refused or
    seen as it now is on the next request. Keys that are not valid are never
    kept (each is checked, refused and throttled as before). At most
    MAX_KEYS are kept; past that the copies start afresh.

    The minute each key's use was last recorded by this process is kept
    beside it, so that a use is recorded at most once a minute as before
    (a use recorded in a call that was then rolled back is recorded again
    a minute later at the latest).
    """

    MAX_KEYS = 10000

    def __init__(self):
        # (generation, {digest: KnownKey}, {key id: last use recorded}),
        # replaced as a whole, so a reader never pairs one generation with
        # another's keys.
        self._kept = (None, {}, {})
        self._lock = threading.Lock()

    def get(self, generation, digest):
        """The KnownKey of `digest` kept at `generation`, or None."""
        kept_at, keys, _ = self._kept
        return keys.get(digest) if generation == kept_at else None

    def put(self, generation, digest, known):
        """Keep `known` for `digest`, read at `generation` (another
        generation than the kept one's replaces every copy)."""
        with self._lock:
            kept_at, keys, recorded = self._kept
            if generation != kept_at or len(keys) >= self.MAX_KEYS:
                keys, recorded = {}, {}
            keys[digest] = known
            self._kept = (generation, keys, recorded)

    def last_use(self, known):
        """`known`'s last use: the one this process recorded since it was
        read, else the stored one."""
        recorded = self._kept[2].get(known.key_id)
        return known.last_used if recorded is None else recorded

    def recorded(self, key_id, stamp):
        """Note that the use of key `key_id` at `stamp` (stored form) was recorded."""
        self._kept[2][key_id] = stamp


class Authenticator:
    """Turns presented credentials into a Caller, throttling failures.

    cost: the scrypt factors of new password hashes; stored hashes below
    them are replaced at the next successful sign-in. API keys resolved are
    kept per process (ApiKeyCache).
    """

    def __init__(self, db, cost=ScryptCost()):
        self.db = db
        self.cost = cost
        self._throwaway = None
        self.api_keys = ApiKeyCache()

    def hash_password(self, password):
        """The stored form of a new password, at this instance's scrypt cost."""
        return hash_password(password, self.cost)

    def _throwaway_hash(self):
        if self._throwaway is None:
            self._throwaway = hash_password(new_secret(16), self.cost)
        return self._throwaway

    @contextmanager
    def _session(self, write=False):
        """A transaction for the authenticator's own reads and writes.

        Credentials are normally checked before a call's transaction opens,
        on the thread's connection. Login and valid_login check theirs from
        inside their call, whose route opens a deferred transaction that has
        written nothing; a connection of our own then commits the failure
        count even though the call answers an error and rolls its own work
        back.
        """
        busy = self.db.in_transaction()
        with (self.db.separate_transaction if busy else self.db.transaction)(write) as conn:
            yield conn

    def _sessions(self, write=False):
        """Tries of a `_session` (Database.attempts): writes that meet a
        concurrent one are run again."""
        return self.db.attempts(write, separate=self.db.in_transaction())

    def resolve_password(self, creds, ip_address, now):
        """The Caller for the login and password in `creds`, checked in
        transactions of their own (each outcome is stored at once); ANONYMOUS
        when no credentials were presented. API keys and tokens are checked
        by `identify`, inside the call's transaction.

        Errors: 300 wrong login or password; 301 disabled account; 330, 331,
        332 the second factor (see complete_sign_in); 32000 the login name's
        attempts are throttled (see check_password).
        """
        if not creds.present:
            return ANONYMOUS
        user_id = self.check_password(creds.login, creds.password, ip_address, now, creds.totp)
        with self._session() as conn:
            caller = load_caller(conn, user_id)
        if caller is None:
            raise ServiceError(USER_ERROR, "The login token or cookie you provided is not valid.")
        return caller

    def check_password(self, login, password, ip_address, now, code=None):
        """Sign in with a login, a password and, for an account with a
        second factor, its `code` (check_first_factor, then
        complete_sign_in); return the account id.

        Errors: those of check_first_factor and of complete_sign_in.
        """
        user_id, subject = self.check_first_factor(login, password, ip_address, now)
        self.complete_sign_in(user_id, subject, code, now)
        return user_id

    def check_first_factor(self, login, password, ip_address, now):
        """Check a login and password with the checkers user_verify_class
        names, in order (_verify); return (the account id, the throttling
        subject of its sign-ins). A sign-in is not complete until
        complete_sign_in says so. An account the directory (LDAP) accepts is
        created at its first sign-in, without a password, and its login and
        real name follow the directory's.

        The attempt is counted as a failure of its login name before the
        password is checked, in the same write transaction as the throttle
        check, so concurrent guesses cannot all pass that check; the count
        is cleared once the whole sign-in succeeds (complete_sign_in), so a
        guesser who knows the password is throttled on the second factor as
        on passwords. A right password replaces a hash made with lower
        factors than this instance's. Usable before a call's transaction
        and from inside login's (see _session).
        Errors: 300 wrong login or password (also for an account without a
        password, or an empty login); 301 disabled (after the right
        password; its count cleared); 32000 the login name waits after too
        many failures (the password is not checked); -32000 a directory that
        cannot be used or cannot tell; 500 / 501 a directory's e-mail address
        that is taken or not acceptable here.
        """
        login = login or ""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                row = conn.execute("SELECT id, login, password_hash, disabled_text FROM users"
                                   " WHERE lower(login) = lower(?)", (login,)).fetchone()
                subject = login_subject(row["login"] if row is not None else login)
                wait, failures = throttle_state(conn, subject, now)
                if wait:
                    raise throttled_error(wait, "for this login name")
                count_failure(conn, subject, failures, now)
                params = settings.load(conn)
        verifier, found = self._verify(params, login, password, row)
        upgraded = stored = None
        if verifier == "DB":
            stored = row["password_hash"]
            stored_cost = hash_cost(stored)
            if not stored_cost.covers(self.cost):
                upgraded = hash_password(password, ScryptCost(max(stored_cost.n, self.cost.n),
                                                              max(stored_cost.r, self.cost.r),
                                                              max(stored_cost.p, self.cost.p)))
        if upgraded is not None or verifier == "LDAP":
            for attempt in self._sessions(write=True):
                with attempt as conn:
                    if upgraded is not None:
                        # Unless the password changed meanwhile.
                        conn.execute("UPDATE users SET password_hash = ? WHERE id = ?"
                                     " AND password_hash = ?", (upgraded, row["id"], stored))
                    if verifier == "LDAP":
                        from .external import SignInChange, account_for, existing_login
                        login_name = existing_login(conn, found.emails, found.login)
                        user_id = account_for(SignInChange(conn, now, values=params), "LDAP",
                                              found.uid, login_name, found.real_name)
                        row = conn.execute("SELECT id, disabled_text FROM users WHERE id = ?",
                                           (user_id,)).fetchone()
        if row["disabled_text"]:
            self.clear_failures(subject)
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        return row["id"], subject

    def complete_sign_in(self, user_id, subject, code, now, counted=True, pending=None):
        """What every sign-in calls once its first factor (a password, or
        whatever else proved who signs in) was right: the second factor.
        An account with one needs `code`, its authenticator app's current
        code or an unused recovery code (second_factor.check_code); a member
        of the group mfa_group without one cannot sign in this way until it
        enrols (the pages enrol it). The throttling count of `subject` is
        cleared when the sign-in is complete.

        counted: the attempt was counted against `subject` already (by
        check_first_factor in the same request); otherwise it is counted
        here first, after the throttle check. pending: the secret of the
        page sign-in this completes, which ends with it.
        Errors: 330 no code given (after the right password only); 331 a
        code that is wrong or used already (counted); 332 the account must
        enrol a second factor first; 32000 `subject` waits (not counted
        again; only when not `counted`).
        """
        if not counted:
            self._count_attempt(subject, now)
        refusal = None
        for attempt in self._sessions(write=True):
            with attempt as conn:
                refusal = second_factor.sign_in_refusal(conn, user_id, code, now)
                if refusal is None:
                    _clear(conn, subject)
                    if pending is not None:
                        second_factor.end_pending(conn, pending)
        if refusal is not None:
            raise refusal

    def second_factor_due(self, user_id):
        """What account `user_id`'s sign-in on the pages needs after its
        password: "code" (it has a second factor), "enrol" (a member of
        mfa_group without one) or None (second_factor.due, in a session of
        its own)."""
        with self._session() as conn:
            return second_factor.due(conn, user_id)

    def waiting_sign_in(self, pending, ip_address, now, enrol):
        """The page sign-in waiting under secret `pending` for a code (or,
        when `enrol`, for an enrolment) from `ip_address` (second_factor.
        find_pending's row). Errors: 32000 when there is none."""
        with self._session() as conn:
            row = second_factor.find_pending(conn, pending, ip_address, now)
        if row is None or bool(row["enrol"]) != enrol:
            raise ServiceError(USER_ERROR, "This sign-in has expired or was completed already; "
                                           "sign in again.")
        return row

    def begin_enrolment(self, user_id, now):
        """The secret of account `user_id`'s enrolment (second_factor.
        begin_enrolment), in a transaction of its own.
        Errors: 32000 when the account has a second factor already."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                secret = second_factor.begin_enrolment(conn, user_id, now)
        if secret is None:
            raise ServiceError(USER_ERROR, "This account has a second factor already.")
        return secret

    def confirm_enrolment(self, user_id, code, now, pending=None):
        """Confirm account `user_id`'s enrolment with `code`, in a
        transaction of its own; the page sign-in `pending` (when given)
        ends with it. Returns the recovery codes.
        Errors: 331 a code that is not the app's current one."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                codes = second_factor.confirm_enrolment(conn, user_id, code, now)
                if codes is not None and pending is not None:
                    second_factor.end_pending(conn, pending)
        if codes is None:
            raise ServiceError(SECOND_FACTOR_INVALID, "That code is not the one your "
                                                      "authenticator app shows now; try again.")
        return codes

    def _count_attempt(self, subject, now):
        """Count an attempt against `subject` before checking it.
        Errors: 32000 while `subject` waits (not counted)."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                wait, failures = throttle_state(conn, subject, now)
                if wait:
                    raise throttled_error(wait, "for this login name")
                count_failure(conn, subject, failures, now)

    def clear_failures(self, subject):
        """Clear the failures counted against `subject` (in a transaction of
        its own)."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                _clear(conn, subject)

    def _verify(self, params, login, password, row):
        """Try the password checkers user_verify_class names, in order, until
        one accepts `password` for `login` (the reference's stack of
        verifiers). row: the account whose login is `login`, or None.

        Returns ("DB", None) or ("LDAP", the directory's Person).
        Errors: 300 none accepts; the last checker's own error when it could
        not tell (an LDAP search that failed); -32000 a directory that cannot
        be used (checkers after it are not tried, as in the reference).
        """
        from . import directory
        undecided = None
        for verifier in settings.verify_classes(params["user_verify_class"]) or ["DB"]:
            undecided = None
            if verifier == "DB":
                stored = row["password_hash"] if row is not None else None
                # Without a stored hash, check against a throwaway one: the
                # answer takes as long, so timing does not tell which logins
                # exist.
                if (verify_password(password or "", stored or self._throwaway_hash())
                        and stored):
                    return "DB", None
            elif verifier == "LDAP" and directory.available():
                try:
                    return "LDAP", directory.check(params, login, password)
                except directory.NotInDirectory:
                    pass
                except directory.DirectoryLookupFailed as error:
                    undecided = error
        if undecided is not None:
            raise undecided
        raise ServiceError(INVALID_LOGIN_OR_PASSWORD,
                           "The username or password you entered is not valid.")

    def check_current_password(self, conn, login, password, now):
        """Check the current password of account `login` inside a call's own
        write transaction `conn` (a password change). A wrong one raises
        CredentialsRefused, which the Runner counts against the login once
        the call's work is rolled back; a right one clears the count.

        Errors: 300 wrong password (counted); 32000 the login name waits
        after too many failures (not checked, not counted).
        """
        subject = login_subject(login)
        wait, _ = throttle_state(conn, subject, now)
        if wait:
            raise throttled_error(wait, "for this login name")
        row = conn.execute("SELECT password_hash FROM users WHERE lower(login) = lower(?)",
                           (login,)).fetchone()
        stored = row["password_hash"] if row is not None else None
        if not verify_password(password or "", stored or self._throwaway_hash()) or not stored:
            raise CredentialsRefused(INVALID_LOGIN_OR_PASSWORD,
                                     "The current password you entered is not valid.", subject)
        _clear(conn, subject)

    def check_current_code(self, conn, user_id, login, code, now):
        """Check a current code of account `user_id`'s second factor inside
        a call's own write transaction `conn` (disabling it), as
        check_current_password checks a password: a wrong one raises
        CredentialsRefused (counted against the login once the call is
        rolled back); a right one is used up and clears the count.

        Errors: 331 wrong, expired or used code (counted); 32000 the login
        name waits after too many failures (not checked, not counted).
        """
        subject = login_subject(login)
        wait, _ = throttle_state(conn, subject, now)
        if wait:
            raise throttled_error(wait, "for this login name")
        if not second_factor.check_code(conn, user_id, code, now):
            raise CredentialsRefused(SECOND_FACTOR_INVALID, "The code of the second factor is "
                                     "wrong, expired or used already.", subject)
        _clear(conn, subject)

    def identify(self, conn, creds, ip_address, now, may_write=False, generations=None):
        """The Caller for an API key or login token, read on `conn` (a call's
        own transaction: nothing is written unless `may_write`; generations:
        its cache.Generations, when the caller has them).

        Returns (caller, SecretUse due to be recorded with record_use, or
        None; always None when may_write, as it was recorded).
        Errors: CredentialsRefused (306 unknown or revoked key; 32000 a token
        that is unknown, logged out, expired, malformed or bound to another
        address), which the caller records with record_failure once its
        transaction is over; ServiceError 301 disabled account, 32000 a key
        or token that is not valid while its address waits (not counted).
        """
        acting = caller = None
        if creds.api_key:
            caller, use = self._check_api_key(conn, creds.api_key, ip_address, now,
                                              generations)
        else:
            user_id, use, acting = self._check_token(conn, creds.token, ip_address, now)
        if use is not None and may_write:
            self._record_use(conn, use, ip_address, now)
            use = None
        if caller is None:
            caller = load_caller(conn, user_id)
        if caller is None:
            raise ServiceError(USER_ERROR, "The login token or cookie you provided is not valid.")
        if creds.page_session and acting is not None:
            caller = sudo.acting_caller(conn, caller, acting, now) or caller
        return caller, use

    def token_owner(self, conn, token, ip_address, now):
        """The id of the account login token `token` signs in as, read on
        `conn`; None when it signs in as nobody (unknown, logged out,
        expired, malformed, bound to another address, or the account is
        disabled). A token that is not valid counts against the address.
        Errors: 32000 a token that is not valid while the address waits."""
        row = self.token_session(conn, token, ip_address, now)
        return None if row is None else row["user_id"]

    def token_session(self, conn, token, ip_address, now):
        """The stored session of login token `token`, read on `conn`:
        {"token_hash", "user_id", "sudo_target_id", "sudo_started", ...};
        None as token_owner says (a token that is not valid counts against
        the address). Errors: as token_owner."""
        row = self._token_row(conn, token, ip_address, now)
        if row is None:
            subject = address_subject(ip_address)
            wait, _ = throttle_state(conn, subject, now)
            if wait:
                raise throttled_error(wait, "from your address")
            self.record_failure(subject, now)
            return None
        return None if row["disabled_text"] else row

    def record_failure(self, subject, now):
        """Count a failure against `subject` (in a transaction of its own)."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                _, failures = throttle_state(conn, subject, now)
                count_failure(conn, subject, failures, now)

    def record_use(self, use, ip_address, now):
        """Record the use of an API key or token (in a transaction of its own)."""
        for attempt in self._sessions(write=True):
            with attempt as conn:
                self._record_use(conn, use, ip_address, now)

    def _record_use(self, conn, use, ip_address, now):
        if use.kind == "api_key":
            stamp = dates.to_db(now)
            conn.execute("UPDATE api_keys SET last_used = ?, last_used_ip = ? WHERE id = ?",
                         (stamp, ip_address, use.ident))
            self.api_keys.recorded(use.ident, stamp)
        else:
            conn.execute("UPDATE login_tokens SET last_used = ? WHERE token_hash = ?",
                         (dates.to_db(now), use.ident))

    @staticmethod
    def _refuse(conn, ip_address, now, code, message):
        """Raise the refusal of an API key or token that is not valid: a
        CredentialsRefused counted against the address, or, while the
        address waits, the throttled error (not counted)."""
        subject = address_subject(ip_address)
        wait, _ = throttle_state(conn, subject, now)
        if wait:
            raise throttled_error(wait, "from your address")
        raise CredentialsRefused(code, message, subject)

    @staticmethod
    def _due(last_used, now):
        """True when a use at `now` is to be recorded: the stored one is of
        another minute."""
        return last_used is None or last_used[:16] != dates.minute_to_db(now)

    def _check_api_key(self, conn, key, ip_address, now, generations=None):
        """(the Caller of API key `key`, or None when its account is gone;
        SecretUse when its use is due to be recorded). A key this process
        resolved at the credential generation `conn` sees (`generations`'s,
        when given) is not read again (ApiKeyCache); the generation is read
        before the key, so a key kept is never older than that generation."""
        digest = secret_hash(key)
        generation = (generations.credential if generations is not None
                      else cache.credential_generation(conn))
        known = self.api_keys.get(generation, digest)
        if known is None:
            known = self._read_api_key(conn, digest, ip_address, now)
            if known.caller is not None:
                self.api_keys.put(generation, digest, known)
        last_used = self.api_keys.last_use(known)
        use = SecretUse("api_key", known.key_id) if self._due(last_used, now) else None
        return known.caller, use

    def _read_api_key(self, conn, digest, ip_address, now):
        """The KnownKey of the API key whose SHA-256 is `digest`, read on `conn`.
        Errors: as identify's for a key."""
        row = conn.execute("SELECT k.id, k.user_id, k.key_hash, k.revoked, k.last_used,"
                           " u.disabled_text FROM api_keys k JOIN users u ON u.id = k.user_id"
                           " WHERE k.key_hash = ?", (digest,)).fetchone()
        if row is None or not hmac.compare_digest(row["key_hash"], digest):
            self._refuse(conn, ip_address, now, API_KEY_NOT_VALID,
                         "The API key you specified is invalid.")
        if row["revoked"]:
            self._refuse(conn, ip_address, now, API_KEY_NOT_VALID,
                         "The API key you specified has been revoked.")
        if row["disabled_text"]:
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        return KnownKey(row["id"], load_caller(conn, row["user_id"]), row["last_used"])

    def _check_token(self, conn, token, ip_address, now):
        """(account id, SecretUse when its use is due to be recorded, the
        token's sudo: (account id acted as, since when) or None)."""
        row = self._token_row(conn, token, ip_address, now)
        if row is None:
            self._refuse(conn, ip_address, now, USER_ERROR, "The login token or cookie you "
                         "provided is not valid or has expired; please log in again.")
        if row["disabled_text"]:
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        use = SecretUse("token", row["token_hash"]) if self._due(row["last_used"], now) else None
        acting = None
        if row["sudo_target_id"] is not None:
            acting = (row["sudo_target_id"], row["sudo_started"])
        return row["user_id"], use, acting

    @staticmethod
    def _token_row(conn, token, ip_address, now):
        """The stored row of a token that is valid now from `ip_address`
        (token_hash, user_id, last_used, disabled_text); None otherwise.

        A malformed token is refused like an unknown one (a credential that
        is present but wrong is an error, never an anonymous call), where the
        reference would call anonymously. A token unused for token_max_age
        has expired. A token of a member of mfa_group without a second
        factor (one made before the account joined the group, or before the
        parameter named it) is not valid either: its owner signs in again,
        which sets one up first.
        """
        match = _TOKEN_FORM.match(token or "")
        if not match:
            return None
        row = conn.execute("SELECT t.token_hash, t.user_id, t.ip_address, t.last_used,"
                           " t.sudo_target_id, t.sudo_started,"
                           " u.disabled_text FROM login_tokens t JOIN users u ON u.id = t.user_id"
                           " WHERE t.token_hash = ?", (secret_hash(token),)).fetchone()
        if (row is None or str(row["user_id"]) != match.group(1)
                or (row["ip_address"] and row["ip_address"] != ip_address)
                or row["last_used"] < dates.to_db(now - token_max_age(conn))
                or second_factor.must_enrol(conn, row["user_id"], second_factor.mfa_group(conn))):
            return None
        return row


def throttled_subjects(conn, now):
    """{"login": n, "address": n}: how many login names and client addresses
    have more failed sign-ins than FREE_FAILURES counted in the last day
    (their next attempts wait), for metrics."""
    found = {"login": 0, "address": 0}
    since = dates.to_db(now - FORGET_AFTER)
    for subject, in conn.execute("SELECT subject FROM login_throttle WHERE failures > ?"
                                 " AND last_failure > ?", (FREE_FAILURES, since)):
        kind = subject.split(":", 1)[0]
        if kind in found:
            found[kind] += 1
    return found
