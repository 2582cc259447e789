"""One-time tokens mailed to an account's address: to choose a new password
(kind 'password', for an account), to create an account (kind 'account',
for an address), and to change an account's e-mail address (the
reference's kinds 'emailnew', mailed to the new address to confirm the
change, and 'emailold', mailed to the current one to cancel it; their
`login` is the address they were mailed to). Only a hash of each secret is
stored; a token is good for MAX_AGE after it was made and is used once
(using one ends the other tokens of its kind for that account or address).

An address change asked for and not yet confirmed or cancelled is a row of
kind 'email_request' (its `login` the new address), made when it is asked
for, whose secret is mailed to nobody: its mails' links are made when the
mails are sent, and a mail whose request was cancelled meanwhile carries
none."""

from datetime import timedelta

from .. import dates
from .auth import new_secret, secret_hash


PASSWORD, ACCOUNT = "password", "account"
EMAIL_NEW, EMAIL_OLD, EMAIL_REQUEST = "emailnew", "emailold", "email_request"
EMAIL_KINDS = (EMAIL_NEW, EMAIL_OLD, EMAIL_REQUEST)
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
    """The token row {token_hash, kind, user_id, login, created_at} of
    `secret` when it is of `kind` (or of one of a tuple of kinds) and not
    expired, else None."""
    if not isinstance(secret, str) or not secret:
        return None
    row = conn.execute("SELECT token_hash, kind, user_id, login, created_at FROM account_tokens"
                       " WHERE token_hash = ?", (secret_hash(secret),)).fetchone()
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if row is None or row["kind"] not in kinds or row["created_at"] < dates.to_db(now - MAX_AGE):
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


def pending(conn, user_id, kinds, now, login=None):
    """True when account `user_id` has a token of one of `kinds` that has
    not expired (and, when given, whose address is `login`, in any case)."""
    marks = ", ".join("?" for _ in kinds)
    sql = (f"SELECT 1 FROM account_tokens WHERE user_id = ? AND kind IN ({marks})"
           " AND created_at >= ?")
    args = [user_id, *kinds, dates.to_db(now - MAX_AGE)]
    if login is not None:
        sql += " AND lower(login) = lower(?)"
        args.append(login)
    return conn.execute(sql + " LIMIT 1", args).fetchone() is not None


def end(conn, user_id, kinds):
    """Every token of `kinds` of account `user_id` stops working."""
    marks = ", ".join("?" for _ in kinds)
    conn.execute(f"DELETE FROM account_tokens WHERE user_id = ? AND kind IN ({marks})",
                 (user_id, *kinds))
