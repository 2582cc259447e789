"""The bug's `update_token` (bugs.md section 2): stable for one bug, one
caller and one state of the bug; it changes on every update.

It is an HMAC of the bug id, its last change time and the caller's id with a
server secret kept in the params table (never listed by GET /rest/parameters,
which shows only known parameters).
"""

import hashlib
import hmac
import secrets
from datetime import datetime, timezone

SECRET_NAME = "bugsvc.update_token_secret"


def new_secret():
    """A fresh secret for a new installation."""
    return secrets.token_hex(32)


def _secret(conn):
    row = conn.execute("SELECT value FROM params WHERE name = ?", (SECRET_NAME,)).fetchone()
    if row is not None:
        return row[0]
    # Installations made before the secret existed get one on first use.
    conn.execute("INSERT OR IGNORE INTO params (name, value) VALUES (?, ?)",
                 (SECRET_NAME, new_secret()))
    return conn.execute("SELECT value FROM params WHERE name = ?", (SECRET_NAME,)).fetchone()[0]


def update_tokens(conn, user_id, changes):
    """{bug id: token} for `changes` = {bug id: stored last_change_time}."""
    key = _secret(conn).encode()
    tokens = {}
    for bug_id, last_change_time in changes.items():
        moment = datetime.strptime(last_change_time, "%Y-%m-%d %H:%M:%S")
        stamp = int(moment.replace(tzinfo=timezone.utc).timestamp())
        message = f"{bug_id}:{last_change_time}:{user_id}".encode()
        digest = hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
        tokens[bug_id] = f"{stamp}-{digest}"
    return tokens
