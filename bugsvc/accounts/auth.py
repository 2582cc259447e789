"""Passwords, API keys, login tokens, and resolving who a call runs as.

Passwords are hashed with scrypt and a per-user salt; the parameters are
stored with the hash so they can be raised later. API keys and tokens are
high-entropy secrets stored only as SHA-256 digests, so a copy of the database
does not hand them out. Comparisons are constant-time.
"""

import base64
import hashlib
import hmac
import re
import secrets
import string
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import unquote

from .. import dates
from .caller import ANONYMOUS, load_caller
from ..errors import (ServiceError, API_KEY_NOT_VALID, ACCOUNT_DISABLED,
                     INVALID_LOGIN_OR_PASSWORD, USER_ERROR)

_ALNUM = string.ascii_letters + string.digits
API_KEY_LENGTH = 40
TOKEN_SECRET_LENGTH = 10
LOCKOUT_FAILURES = 5
LOCKOUT_WINDOW = timedelta(minutes=30)
_TOKEN_FORM = re.compile(r"^(\d+)-([A-Za-z0-9]+)$")


# Passwords -------------------------------------------------------------------

@dataclass(frozen=True)
class ScryptCost:
    """scrypt work factors; tests lower n to stay fast."""
    n: int = 2**14
    r: int = 8
    p: int = 1


def hash_password(password, cost=ScryptCost()):
    """Return 'scrypt$n$r$p$salt$digest' (base64 parts) for `password`."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=cost.n, r=cost.r, p=cost.p,
                            maxmem=2**26, dklen=32)
    return "$".join(["scrypt", str(cost.n), str(cost.r), str(cost.p),
                     base64.b64encode(salt).decode(), base64.b64encode(digest).decode()])


def verify_password(password, stored):
    """True when `password` matches the stored hash (constant-time)."""
    if not stored or password is None:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n),
                                r=int(r), p=int(p), maxmem=2**26, dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


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
        " VALUES (?, ?, ?, 0, ?)", (user_id, secret_hash(key), description, dates.to_db(now)))
    return cur.lastrowid, key


def create_token(conn, user_id, ip_address, now):
    """Store a login token for `user_id` (bound to `ip_address` when given)."""
    secret = new_secret(TOKEN_SECRET_LENGTH)
    token = f"{user_id}-{secret}"
    stamp = dates.to_db(now)
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
# Credential keys never reach a service, except these plain names, which are
# also the parameters of login, logout and valid_login.
_METHOD_NAMES = ("login", "password", "token", "restrict_login")
_HEADERS = {
    "api_key": ("X-BUGZILLA-API-KEY", "X-SERVICE-API-KEY"),
    "login": ("X-BUGZILLA-LOGIN", "X-SERVICE-LOGIN"),
    "password": ("X-BUGZILLA-PASSWORD", "X-SERVICE-PASSWORD"),
    "token": ("X-BUGZILLA-TOKEN", "X-SERVICE-TOKEN"),
}


_ALL_PARAM_NAMES = frozenset(_API_KEY_PARAMS + _LOGIN_PARAMS + _PASSWORD_PARAMS + _TOKEN_PARAMS
                             + _RESTRICT_PARAMS + _METHOD_NAMES)
_ALL_HEADERS = frozenset(name for names in _HEADERS.values() for name in names) | {"AUTHORIZATION"}


@dataclass
class Credentials:
    """What a call presented to prove who it is (any of them may be None)."""
    api_key: str | None = None
    login: str | None = None
    password: str | None = None
    token: str | None = None
    restrict: object = None

    @property
    def present(self):
        return bool(self.api_key or self.login or self.token)


def _first(params, names):
    for name in names:
        value = params.get(name)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None and value != "":
            return value if isinstance(value, str) else str(value)
    return None


def extract_credentials(params, headers, keep_method_params=False):
    """Take the credentials out of `params` (removing them) and `headers`.

    params: the merged call parameters (modified in place).
    headers: mapping of upper-case header names to values.
    keep_method_params: leave login/password/token in params for the calls
    whose own parameters they are.
    Returns Credentials. Parameters win over headers (compat.md decision 4).
    """
    if params.keys().isdisjoint(_ALL_PARAM_NAMES) and headers.keys().isdisjoint(_ALL_HEADERS):
        return Credentials()          # most calls: nothing to take out
    creds = Credentials(api_key=_first(params, _API_KEY_PARAMS),
                        login=_first(params, _LOGIN_PARAMS),
                        password=_first(params, _PASSWORD_PARAMS),
                        token=_first(params, _TOKEN_PARAMS))
    if creds.login is None and "login" in params and "password" in params:
        creds.login = _first(params, ("login",))
        creds.password = _first(params, ("password",))
    for name in _RESTRICT_PARAMS:
        if name in params:
            creds.restrict = params[name]
            break
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
    pair = "login" in params and "password" in params
    if keep_method_params:
        # login, logout and valid_login read these under their plain names,
        # whichever parameter or header carried them.
        for name, value in (("login", creds.login), ("password", creds.password),
                            ("token", creds.token), ("restrict_login", creds.restrict)):
            if value is not None and params.get(name) is None:
                params[name] = value
    for name in _API_KEY_PARAMS + _LOGIN_PARAMS + _PASSWORD_PARAMS + _TOKEN_PARAMS + _RESTRICT_PARAMS:
        if name in _METHOD_NAMES and keep_method_params:
            continue
        params.pop(name, None)
    if pair and not keep_method_params:
        params.pop("login", None)
        params.pop("password", None)
    return creds


# Resolving the caller ----------------------------------------------------------

class CredentialsRefused(ServiceError):
    """A credential refused in a way that counts toward the address's
    lockout; whoever catches it records it (Authenticator.record_failure)
    once the transaction it was found in is over.

    user_id: the account the credential belonged to, when known.
    """

    def __init__(self, code, message, user_id=None):
        super().__init__(code, message)
        self.user_id = user_id


class Authenticator:
    """Turns presented credentials into a Caller, throttling failures."""

    def __init__(self, db, cost=ScryptCost()):
        self.db = db
        self.cost = cost
        self._throwaway = None

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
        on the thread's connection. Login checks the password from inside its
        call, whose route opens a deferred transaction that has touched
        nothing yet; a connection of our own then commits the failure log even
        though the call answers an error and rolls its own work back.
        """
        conn = self.db.connection()
        if not conn.in_transaction:
            with self.db.transaction(write=write) as conn:
                yield conn
            return
        own = self.db.connect()
        try:
            own.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield own
            except BaseException:
                own.execute("ROLLBACK")
                raise
            own.execute("COMMIT")
        finally:
            own.close()

    def resolve_password(self, creds, ip_address, now):
        """The Caller for the login and password in `creds`, checked in
        transactions of their own (each outcome is stored at once); ANONYMOUS
        when no credentials were presented. API keys and tokens are checked
        by `identify`, inside the call's transaction.

        Errors: 300 wrong login or password; 301 disabled account; 32000 an
        address locked after 5 failures in 30 minutes.
        """
        if not creds.present:
            return ANONYMOUS
        user_id = self.check_password(creds.login, creds.password, ip_address, now)
        with self._session() as conn:
            caller = load_caller(conn, user_id)
        if caller is None:
            raise ServiceError(USER_ERROR, "The login token or cookie you provided is not valid.")
        return caller

    def identify(self, conn, creds, ip_address, now, may_write=False):
        """The Caller for an API key or login token, read on `conn` (a call's
        own transaction: nothing is written unless `may_write`).

        Returns (caller, key id whose last use is due to be recorded with
        touch_key, or None; always None when may_write, as it was recorded).
        Errors: CredentialsRefused (306 unknown or revoked key), which the
        caller records with record_failure once its transaction is over;
        ServiceError 301 disabled account, 32000 invalid token or locked
        address.
        """
        if creds.api_key:
            user_id, key_to_touch = self._check_api_key(conn, creds.api_key, ip_address, now)
            if key_to_touch is not None and may_write:
                self._record_use(conn, key_to_touch, ip_address, now)
                key_to_touch = None
        else:
            user_id, key_to_touch = self._check_token(conn, creds.token, ip_address), None
        caller = load_caller(conn, user_id)
        if caller is None:
            raise ServiceError(USER_ERROR, "The login token or cookie you provided is not valid.")
        return caller, key_to_touch

    def record_failure(self, refused, ip_address, now):
        """Store a refused credential against the address (its lockout)."""
        with self._session(write=True) as conn:
            conn.execute("INSERT INTO login_failures (ip_address, user_id, failed_at) VALUES (?, ?, ?)",
                         (ip_address, refused.user_id, dates.to_db(now)))

    def touch_key(self, key_id, ip_address, now):
        """Record the use of API key `key_id` (in a transaction of its own)."""
        with self._session(write=True) as conn:
            self._record_use(conn, key_id, ip_address, now)

    @staticmethod
    def _record_use(conn, key_id, ip_address, now):
        conn.execute("UPDATE api_keys SET last_used = ?, last_used_ip = ? WHERE id = ?",
                     (dates.to_db(now), ip_address, key_id))

    def _locked(self, conn, ip_address, now):
        since = dates.to_db(now - LOCKOUT_WINDOW)
        failures = conn.execute("SELECT COUNT(*) FROM login_failures WHERE ip_address = ?"
                                " AND failed_at > ?", (ip_address, since)).fetchone()[0]
        return failures >= LOCKOUT_FAILURES

    def _fail(self, ip_address, user_id, now, code, message):
        """Record a refused password at once and raise its error (a plain
        ServiceError: nobody is to record it again)."""
        self.record_failure(CredentialsRefused(code, message, user_id=user_id), ip_address, now)
        raise ServiceError(code, message)

    @staticmethod
    def _locked_error():
        return ServiceError(USER_ERROR, "Too many failed attempts to sign in from your address: it "
                                        "is locked out for 30 minutes.")

    def check_password(self, login, password, ip_address, now):
        """Check a login and password; return the account id.

        Usable before a call's transaction and from inside login's (see
        _session). Errors: 300 wrong login or password (also for an account
        without a password); 301 disabled; 32000 locked out.
        """
        with self._session() as conn:
            if self._locked(conn, ip_address, now):
                raise self._locked_error()
            row = conn.execute("SELECT id, password_hash, disabled_text FROM users"
                               " WHERE lower(login) = lower(?)", (login,)).fetchone()
        stored = row["password_hash"] if row is not None else None
        # Without a stored hash, check against a throwaway one: the answer
        # takes as long, so timing does not tell which logins exist.
        if not verify_password(password or "", stored or self._throwaway_hash()) or not stored:
            self._fail(ip_address, row["id"] if row else None, now, INVALID_LOGIN_OR_PASSWORD,
                       "The username or password you entered is not valid.")
        if row["disabled_text"]:
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        with self._session(write=True) as conn:
            conn.execute("DELETE FROM login_failures WHERE ip_address = ? AND user_id = ?",
                         (ip_address, row["id"]))
        return row["id"]

    def _check_api_key(self, conn, key, ip_address, now):
        """(account id, key id when its last use is due to be recorded)."""
        if self._locked(conn, ip_address, now):
            raise self._locked_error()
        row = conn.execute("SELECT k.id, k.user_id, k.key_hash, k.revoked, k.last_used,"
                           " u.disabled_text FROM api_keys k JOIN users u ON u.id = k.user_id"
                           " WHERE k.key_hash = ?", (secret_hash(key),)).fetchone()
        if row is None or not hmac.compare_digest(row["key_hash"], secret_hash(key)):
            raise CredentialsRefused(API_KEY_NOT_VALID, "The API key you specified is invalid.")
        if row["revoked"]:
            raise CredentialsRefused(API_KEY_NOT_VALID, "The API key you specified has been revoked.",
                                     user_id=row["user_id"])
        if row["disabled_text"]:
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        # Record use at most once a minute, so reads do not all become writes.
        stamp = dates.to_db(now)
        due = row["last_used"] is None or row["last_used"][:16] != stamp[:16]
        return row["user_id"], row["id"] if due else None

    def _check_token(self, conn, token, ip_address):
        # A malformed token is refused like an unknown one (compat.md
        # decision 4), where the reference would call anonymously.
        match = _TOKEN_FORM.match(token)
        row = conn.execute("SELECT t.user_id, t.ip_address, u.disabled_text FROM login_tokens t"
                           " JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?",
                           (secret_hash(token),)).fetchone() if match else None
        if (row is None or str(row["user_id"]) != match.group(1)
                or (row["ip_address"] and row["ip_address"] != ip_address)):
            raise ServiceError(USER_ERROR, "The login token or cookie you provided is not valid; "
                                           "please log in again.")
        if row["disabled_text"]:
            raise ServiceError(ACCOUNT_DISABLED,
                               "Your account has been disabled: " + row["disabled_text"])
        return row["user_id"]
