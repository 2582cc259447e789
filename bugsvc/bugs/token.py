"""The bug's `update_token`: stable for one bug, one
caller and one state of the bug; it changes on every update.

It is an HMAC of the bug id, its last change time, its revision (schema.sql's
bug revisions, moved by every change to the bug, so two updates within one
second still differ) and the caller's id, with a server secret kept in the
server_secrets table.
"""

import hashlib
import hmac
from datetime import datetime, timezone

from ..store import server_secrets


# What an update token is made of besides the bug's last change time, as a
# column of a query over bugs b: its revision (0 while it has none).
TOKEN_REVISION_COLUMN = ("COALESCE((SELECT revision FROM bug_revisions WHERE bug_id = b.id), 0)"
                         " AS revision")


def token_key(ctx):
    """The HMAC key of update tokens, as `ctx`'s call sees it. A secret never
    changes once stored, so the process keeps the one it read (with the
    catalogue's copies, store/cache.py); one this call had to make
    (a database installed without it) is kept only once it is read back."""
    stored = ctx.cached("update token secret", _stored_secret)
    if stored is None:
        stored = server_secrets.secret(ctx.conn, server_secrets.UPDATE_TOKEN)
    return stored.encode()


def _stored_secret(conn):
    row = conn.execute("SELECT value FROM server_secrets WHERE name = ?",
                       (server_secrets.UPDATE_TOKEN,)).fetchone()
    return None if row is None else row[0]


def update_tokens(key, user_id, states):
    """{bug id: token} for `states` = {bug id: (revision, stored
    last_change_time)}, with the HMAC key `key` (token_key's)."""
    tokens = {}
    for bug_id, (revision, last_change_time) in states.items():
        moment = datetime.fromisoformat(last_change_time).replace(tzinfo=timezone.utc)
        stamp = int(moment.timestamp())
        message = f"{bug_id}:{last_change_time}:{revision}:{user_id}".encode()
        digest = hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
        tokens[bug_id] = f"{stamp}-{digest}"
    return tokens


def current_token(conn, user_id, bug_id):
    """The update_token bug `bug_id` has now for account `user_id`."""
    state = conn.execute(f"SELECT {TOKEN_REVISION_COLUMN}, b.last_change_time FROM bugs b"
                         " WHERE b.id = ?", (bug_id,)).fetchone()
    key = server_secrets.secret(conn, server_secrets.UPDATE_TOKEN).encode()
    return update_tokens(key, user_id, {bug_id: tuple(state)})[bug_id]


def is_current(conn, user_id, bug_id, token):
    """True when `token` is the update_token bug `bug_id` has now for `user_id`:
    nothing changed on the bug since the caller read it."""
    return hmac.compare_digest(str(token), current_token(conn, user_id, bug_id))
