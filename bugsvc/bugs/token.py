"""The bug's `update_token`: stable for one bug, one
caller and one state of the bug; it changes on every update.

It is an HMAC of the bug id, its last change time, how many history rows and
comments it has (so two updates within one second still differ) and the
caller's id, with a server secret kept in the server_secrets table.
"""

import hashlib
import hmac
import secrets
from datetime import datetime, timezone

SECRET_NAME = "update_token"


def new_secret():
    """A fresh secret for a new installation."""
    return secrets.token_hex(32)


def _secret(conn):
    row = conn.execute("SELECT value FROM server_secrets WHERE name = ?",
                       (SECRET_NAME,)).fetchone()
    if row is not None:
        return row[0]
    # A database installed without the secret gets one on first use.
    conn.execute("INSERT OR IGNORE INTO server_secrets (name, value) VALUES (?, ?)",
                 (SECRET_NAME, new_secret()))
    return conn.execute("SELECT value FROM server_secrets WHERE name = ?",
                        (SECRET_NAME,)).fetchone()[0]


def update_tokens(conn, user_id, states):
    """{bug id: token} for `states` = {bug id: (stored last_change_time,
    number of history rows, number of comments)}."""
    key = _secret(conn).encode()
    tokens = {}
    for bug_id, (last_change_time, changes, comments) in states.items():
        moment = datetime.fromisoformat(last_change_time).replace(tzinfo=timezone.utc)
        stamp = int(moment.timestamp())
        message = f"{bug_id}:{last_change_time}:{changes}:{comments}:{user_id}".encode()
        digest = hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
        tokens[bug_id] = f"{stamp}-{digest}"
    return tokens
