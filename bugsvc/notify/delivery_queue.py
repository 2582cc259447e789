"""The delivery queue as administrators see it (a bugsvc addition; the calls
are services/notification.py's): messages that kept failing are parked
there, and can be sent again. The queue itself is store/outbox.py; the
worker that delivers it is worker.py."""

from .. import dates
from ..catalogue import catalog
from ..errors import PARAM_INVALID, ServiceError
from ..store import outbox
from ..store.db import placeholders


MAX_LIST = 1000


def _message_object(row, logins, webhooks):
    recipient = logins.get(row["user_id"]) if row["user_id"] is not None else row["address"]
    result = {"id": row["id"], "channel": row["channel"], "kind": row["kind"],
              "bug_id": row["bug_id"], "recipient": recipient, "webhook_id": row["webhook_id"],
              "state": row["state"], "attempts": row["attempts"],
              "last_error": row["last_error"],
              "created": dates.from_db(row["created_at"]),
              "done": dates.from_db(row["done_at"])}
    if row["webhook_id"] is not None:
        result["recipient"] = webhooks.get(row["webhook_id"])
    if row["state"] == outbox.PENDING:
        result["next_attempt"] = dates.from_db(row["next_attempt_at"][:19])
    return result


def messages(ctx, states=(), channel=None, limit=100, after=0):
    """The messages of the queue in `states` (none: parked) and `channel`
    (None: both), of ids above `after`, at most `limit` (1 to MAX_LIST):
    {"messages": [{"id", "channel", "kind", "bug_id", "recipient" (a login,
    an address, or the webhook's name), "webhook_id", "state", "attempts",
    "last_error", "created", "done", "next_attempt" (pending only)}],
    "counts": {state: number}}.
    Errors: 53 an unknown state or channel.
    """
    states = list(states) or [outbox.PARKED]
    for state in states:
        if state not in outbox.STATES:
            raise ServiceError(PARAM_INVALID, f"'{state}' is not a state; they are: "
                                              f"{', '.join(outbox.STATES)}.")
    if channel is not None and channel not in (outbox.MAIL, outbox.WEBHOOK):
        raise ServiceError(PARAM_INVALID, "The channel is mail or webhook.")
    limit = min(max(limit or 100, 1), MAX_LIST)
    rows = outbox.messages(ctx.conn, states, limit, channel, after or 0)
    user_ids = sorted({row["user_id"] for row in rows if row["user_id"] is not None})
    logins = catalog.logins_of(ctx.conn, user_ids) if user_ids else {}
    webhook_ids = sorted({row["webhook_id"] for row in rows if row["webhook_id"] is not None})
    webhooks = dict(ctx.conn.execute(
        f"SELECT id, name FROM webhooks WHERE id IN ({placeholders(webhook_ids)})",
        webhook_ids).fetchall()) if webhook_ids else {}
    counts = {state: 0 for state in outbox.STATES}
    counts.update(dict(ctx.conn.execute(
        "SELECT state, COUNT(*) FROM outbox_messages GROUP BY state").fetchall()))
    return {"messages": [_message_object(row, logins, webhooks) for row in rows],
            "counts": counts}


def resend(ctx, message_ids):
    """Queue the parked or dropped messages of `message_ids` as new, due at
    once (each is rendered again for its recipient). Returns the ids queued.
    """
    return outbox.resend(ctx.conn, list(dict.fromkeys(message_ids)), ctx.now)
