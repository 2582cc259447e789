"""One-time tokens mailed to an account's address: to choose a new password
(kind 'password', for an account) and to create an account (kind
'account', for an address). Only a hash of each secret is stored; a token
is good for MAX_AGE after it was made and is used once (using one ends the
other tokens of its kind for that account or address)."""

from datetime import timedelta

from .. import dates
from .auth import new_secret, secret_hash

PASSWORD, ACCOUNT = "password", "account"
# The reference's MAX_TOKEN_AGE (days).
MAX_AGE = timedelta(days=3)
# The reference's ACCOUNT_CHANGE_INTERVAL: one request per account or
# address in this time, so nobody can fill a mailbox with requests.
REQUEST_INTERVAL = timedelta(minutes=10)
SECRET_LENGTH = 32


def issue(conn, kind, now, user_id=None, login=None):
    """Store a new token of `kind` for account `user_id` or address `login`;
    returns its secret (which is not stored)."""
    secret = new_secret(SECRET_LENGTH)
    conn.execute("DELETE FROM account_tokens WHERE created_at < ?",
                 (dates.to_db(now - MAX_AGE),))
    conn.execute("INSERT INTO account_tokens (token_hash, kind, user_id, login, created_at)"
                 " VALUES (?, ?, ?, ?, ?)",
                 (secret_hash(secret), kind, user_id, login, dates.to_db(now)))
    return secret


def find(conn, kind, secret, now):
    """The token row {user_id, login, created_at} of `secret` when it is of
    `kind` and not expired, else None."""
    if not isinstance(secret, str) or not secret:
        return None
    row = conn.execute("SELECT token_hash, kind, user_id, login, created_at FROM account_tokens"
                       " WHERE token_hash = ?", (secret_hash(secret),)).fetchone()
    if row is None or row["kind"] != kind or row["created_at"] < dates.to_db(now - MAX_AGE):
        return None
    return row


def use(conn, row):
    """Spend token `row` (from `find`): it and every other token of its kind
    for the same account or address stop working."""
    if row["user_id"] is not None:
        conn.execute("DELETE FROM account_tokens WHERE kind = ? AND user_id = ?",
                     (row["kind"], row["user_id"]))
    else:
        conn.execute("DELETE FROM account_tokens WHERE kind = ? AND lower(login) = lower(?)",
                     (row["kind"], row["login"]))
    conn.execute("DELETE FROM account_tokens WHERE token_hash = ?", (row["token_hash"],))
