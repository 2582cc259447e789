"""The bug's `update_token`: stable for one bug, one
caller and one state of the bug; it changes on every update.

It is an HMAC of the bug id, its last change time, how many history rows and
comments it has (so two updates within one second still differ) and the
caller's id, with a server secret kept in the server_secrets table.
"""

import hashlib
import hmac
from datetime import datetime, timezone

from ..store import server_secrets


def update_tokens(conn, user_id, states):
    """{bug id: token} for `states` = {bug id: (stored last_change_time,
    number of history rows, number of comments)}."""
    key = server_secrets.secret(conn, server_secrets.UPDATE_TOKEN).encode()
    tokens = {}
    for bug_id, (last_change_time, changes, comments) in states.items():
        moment = datetime.fromisoformat(last_change_time).replace(tzinfo=timezone.utc)
        stamp = int(moment.timestamp())
        message = f"{bug_id}:{last_change_time}:{changes}:{comments}:{user_id}".encode()
        digest = hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
        tokens[bug_id] = f"{stamp}-{digest}"
    return tokens
