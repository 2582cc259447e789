"""The outbox's queue: events waiting for their messages to be made, and
messages waiting to be sent, taken by delivery workers with a lease.

Several workers (threads of several server processes on several hosts,
`bugsvc deliver`) share the queue. A worker takes a message by setting its
lease (owner and time limit) with an UPDATE that names the message's state
and lease as they were read, so of two workers reading the same row only
one takes it; a lease that ran out (its worker died) is taken again. On
PostgreSQL leases are taken and settled in queue transactions
(Database.transaction(queue=True): READ COMMITTED, where that UPDATE
rechecks its condition on the row's newest version), and the rows read are
taken with the dialect's skip_locked, so workers claiming at once each get
other rows instead of waiting for or failing against each other; on SQLite
one writer at a time does all of it. Events are turned into messages by one
worker at a time: it holds the 'expand' lock row for the transaction (a
worker that finds it held expands nothing this time), so messages are made
in event order, and the calls of one webhook about one bug stay in that
order.

Times of leases and attempts keep fractions of a second (retries in tests
and teaching set-ups come sooner than a second); they are compared as text
in one format.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

import orjson

from .. import dates
from .db import placeholders
from .dialect import Connection, Row


PENDING, SENT, DROPPED, PARKED = "pending", "sent", "dropped", "parked"
STATES = (PENDING, SENT, DROPPED, PARKED)
MAIL, WEBHOOK = "mail", "webhook"
_MESSAGE_COLUMNS = ("id, event_id, bug_id, channel, kind, user_id, address, webhook_id, data,"
                    " state, attempts, next_attempt_at, lease_owner, lease_until, last_error,"
                    " created_at, done_at")


def stamp(moment: datetime) -> str:
    """The stored form of a lease or attempt time (microseconds kept)."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def add_message(conn: Connection, channel: str, kind: str, now: datetime,
                event_id: int | None = None, bug_id: int | None = None,
                user_id: int | None = None, address: str | None = None,
                webhook_id: int | None = None, data: dict[str, Any] | None = None) -> int:
    """Queue a message, due at once. Returns its id."""
    return conn.execute(
        "INSERT INTO outbox_messages (event_id, bug_id, channel, kind, user_id, address,"
        " webhook_id, data, state, attempts, next_attempt_at, last_error, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '', ?) RETURNING id",
        (event_id, bug_id, channel, kind, user_id, address, webhook_id,
         orjson.dumps(data or {}).decode(), PENDING, stamp(now), dates.to_db(now))).fetchone()[0]


def message_data(row: Row) -> Any:
    """The data of a message row, as a dict."""
    return orjson.loads(row["data"])


# Events --------------------------------------------------------------------------

def hold_expansion(conn: Connection, owner: str) -> bool:
    """Take the 'expand' lock for the current (write) transaction: until it
    ends, no other worker expands events. Returns False, at once, when
    another worker holds it (PostgreSQL's row lock; on SQLite the write
    transaction already holds the whole database). Call it first in the
    transaction: what it reads then is all committed before the lock."""
    held = conn.execute("SELECT name FROM outbox_locks o WHERE name = 'expand'"
                        + conn.dialect.skip_locked("o")).fetchone()
    if held is None:
        return False
    conn.execute("UPDATE outbox_locks SET owner = ? WHERE name = 'expand'", (owner,))
    return True


def events_to_expand(conn: Connection, limit: int) -> list[Row]:
    """The oldest events whose messages are not made yet."""
    return conn.execute("SELECT id, bug_id, changer_id, created_at, data FROM outbox_events"
                        " WHERE expanded_at IS NULL ORDER BY id LIMIT ?", (limit,)).fetchall()


def mark_expanded(conn: Connection, event_ids: Sequence[int], now: datetime) -> None:
    """Mark the events of `event_ids` expanded (one statement for a batch)."""
    if event_ids:
        conn.execute(f"UPDATE outbox_events SET expanded_at = ? WHERE id IN"
                     f" ({placeholders(event_ids)})", [dates.to_db(now), *event_ids])


def event(conn: Connection, event_id: int) -> Row | None:
    """The event row `event_id` (None when purged)."""
    return conn.execute("SELECT id, bug_id, changer_id, created_at, data FROM outbox_events"
                        " WHERE id = ?", (event_id,)).fetchone()


# Leases --------------------------------------------------------------------------

def _free(now: datetime) -> tuple[str, list[Any]]:
    return "(lease_until IS NULL OR lease_until < ?)", [stamp(now)]


def _take(conn: Connection, rows: Iterable[Row], owner: str, now: datetime,
          until: datetime) -> list[Row]:
    """Lease each of `rows` still free; returns those taken."""
    taken = []
    for row in rows:
        free, args = _free(now)
        cur = conn.execute(f"UPDATE outbox_messages SET lease_owner = ?, lease_until = ?"
                           f" WHERE id = ? AND state = ? AND {free}",
                           [owner, stamp(until), row["id"], PENDING] + args)
        if cur.rowcount == 1:
            taken.append(row)
    return taken


def lease_mail(conn: Connection, owner: str, now: datetime, until: datetime,
               limit: int) -> list[Row]:
    """Lease up to `limit` mail messages that are due, oldest first."""
    free, args = _free(now)
    rows = conn.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM outbox_messages m WHERE state = ? AND channel = ?"
        f" AND next_attempt_at <= ? AND {free} ORDER BY id LIMIT ?"
        + conn.dialect.skip_locked("m"),
        [PENDING, MAIL, stamp(now)] + args + [limit]).fetchall()
    return _take(conn, rows, owner, now, until)


def lease_webhook(conn: Connection, owner: str, now: datetime, until: datetime,
                  limit: int) -> list[Row]:
    """Lease up to `limit` webhook calls that are due, each of another
    webhook: a call is due only when no earlier call of its webhook about
    the same bug is still waiting (pending or parked), and no call of its
    webhook is leased by a worker (one call at a time per receiver, so a
    slow receiver holds up one worker thread, not all); the webhook must
    be enabled. A webhook's row is locked while its call is taken, and its
    calls leased meanwhile read again, so two workers taking calls at once
    never take two of one webhook."""
    free, args = _free(now)
    moment = stamp(now)
    rows = conn.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM outbox_messages m WHERE m.state = ? AND m.channel = ?"
        f" AND m.next_attempt_at <= ? AND {free.replace('lease_until', 'm.lease_until')}"
        " AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = m.webhook_id AND w.enabled = 1)"
        " AND NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.webhook_id = m.webhook_id"
        " AND o.id < m.id AND o.bug_id = m.bug_id AND o.state IN (?, ?))"
        " AND NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.webhook_id = m.webhook_id"
        " AND o.state = ? AND o.lease_until >= ?)"
        " ORDER BY m.id LIMIT ?" + conn.dialect.skip_locked("m"),
        [PENDING, WEBHOOK, moment] + args + [PENDING, PARKED, PENDING, moment, limit * 4]
    ).fetchall()
    chosen: list[Row] = []
    webhooks: set[int] = set()
    for row in rows:
        if row["webhook_id"] in webhooks or len(chosen) >= limit:
            continue
        webhooks.add(row["webhook_id"])
        if conn.execute("SELECT id FROM webhooks w WHERE id = ?" + conn.dialect.skip_locked("w"),
                        (row["webhook_id"],)).fetchone() is None:
            continue                # another worker is taking one of its calls
        if conn.execute("SELECT 1 FROM outbox_messages WHERE webhook_id = ? AND state = ?"
                        " AND lease_until >= ? LIMIT 1",
                        (row["webhook_id"], PENDING, moment)).fetchone() is None:
            chosen.append(row)
    return _take(conn, chosen, owner, now, until)


def _settle(conn: Connection, message_id: int, owner: str, sets: str,
            args: Sequence[Any]) -> bool:
    """Apply `sets` to a leased message if `owner` still holds its lease;
    returns True when it did (a worker whose lease ran out and was taken
    over changes nothing)."""
    cur = conn.execute(f"UPDATE outbox_messages SET {sets}, lease_owner = NULL,"
                       " lease_until = NULL WHERE id = ? AND lease_owner = ?",
                       list(args) + [message_id, owner])
    return cur.rowcount == 1


def finish(conn: Connection, message_id: int, owner: str, state: str, now: datetime,
           error: str = "") -> bool:
    """A leased message is done: SENT, DROPPED (with why) or PARKED (with
    the last error). Returns False when the lease was lost."""
    return _settle(conn, message_id, owner,
                   "state = ?, done_at = ?, last_error = ?, attempts = attempts + ?",
                   (state, dates.to_db(now), error[:1000], 0 if state == DROPPED else 1))


def retry_at(conn: Connection, message_id: int, owner: str, when: datetime,
             error: str) -> bool:
    """A leased message failed and is tried again at `when`."""
    return _settle(conn, message_id, owner,
                   "attempts = attempts + 1, next_attempt_at = ?, last_error = ?",
                   (stamp(when), error[:1000]))


def give_back(conn: Connection, message_id: int, owner: str) -> bool:
    """Release a lease without an attempt (the message was not tried)."""
    return _settle(conn, message_id, owner, "state = state", ())


# Administration ------------------------------------------------------------------

def messages(conn: Connection, states: Sequence[str], limit: int, channel: str | None = None,
             after_id: int = 0) -> list[Row]:
    """Message rows in `states`, oldest first (id > after_id)."""
    sql = (f"SELECT {_MESSAGE_COLUMNS} FROM outbox_messages WHERE state IN"
           f" ({placeholders(states)}) AND id > ?")
    args: list[Any] = list(states) + [after_id]
    if channel is not None:
        sql += " AND channel = ?"
        args.append(channel)
    return conn.execute(sql + " ORDER BY id LIMIT ?", args + [limit]).fetchall()


def resend(conn: Connection, message_ids: Iterable[int], now: datetime) -> list[int]:
    """Queue parked (or dropped) messages again, due at once, with their
    attempts counted afresh. Returns the ids queued."""
    queued = []
    for message_id in message_ids:
        cur = conn.execute("UPDATE outbox_messages SET state = ?, attempts = 0,"
                           " next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,"
                           " done_at = NULL WHERE id = ? AND state IN (?, ?)",
                           (PENDING, stamp(now), message_id, PARKED, DROPPED))
        if cur.rowcount == 1:
            queued.append(message_id)
    return queued


def resend_webhook(conn: Connection, webhook_id: int, now: datetime) -> int:
    """Queue the parked calls of webhook `webhook_id` again (it was enabled
    again). Returns how many."""
    ids = [row[0] for row in conn.execute(
        "SELECT id FROM outbox_messages WHERE webhook_id = ? AND state = ? ORDER BY id",
        (webhook_id, PARKED))]
    return len(resend(conn, ids, now))


def purge(conn: Connection, before: datetime) -> tuple[int, int]:
    """Forget messages done before `before` (sent or dropped) and events all
    of whose messages are gone. Returns (messages, events) deleted."""
    cutoff = dates.to_db(before)
    messages_deleted = conn.execute(
        "DELETE FROM outbox_messages WHERE state IN (?, ?) AND done_at < ?",
        (SENT, DROPPED, cutoff)).rowcount
    events_deleted = conn.execute(
        "DELETE FROM outbox_events WHERE expanded_at < ? AND NOT EXISTS"
        " (SELECT 1 FROM outbox_messages m WHERE m.event_id = outbox_events.id)",
        (cutoff,)).rowcount
    return messages_deleted, events_deleted


# Health --------------------------------------------------------------------------

def backlog(conn: Connection, now: datetime) -> dict[str, int | float]:
    """How far the queue is behind at `now` (for health checks and metrics):
    {"pending": messages to send, "parked": messages given up on, "due":
    pending messages whose time has come, "oldest_due_seconds": how long the
    longest-waiting of those has been due (0 when none), "unexpanded":
    events whose messages are not made yet, "oldest_unexpanded_seconds"}."""
    counts = dict.fromkeys((PENDING, PARKED), 0)
    for state, count in conn.execute("SELECT state, COUNT(*) FROM outbox_messages"
                                     " WHERE state IN (?, ?) GROUP BY state", (PENDING, PARKED)):
        counts[state] = count
    due, oldest = conn.execute("SELECT COUNT(*), MIN(next_attempt_at) FROM outbox_messages"
                               " WHERE state = ? AND next_attempt_at <= ?",
                               (PENDING, stamp(now))).fetchone()
    events, first_event = conn.execute("SELECT COUNT(*), MIN(created_at) FROM outbox_events"
                                       " WHERE expanded_at IS NULL").fetchone()
    return {"pending": counts[PENDING], "parked": counts[PARKED], "due": due,
            "oldest_due_seconds": _age(now, oldest), "unexpanded": events,
            "oldest_unexpanded_seconds": _age(now, first_event)}


def _age(now: datetime, stored: object) -> float:
    """Seconds from a stored time to `now` (0 for none)."""
    if not stored:
        return 0.0
    moment = datetime.strptime(str(stored)[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    return max(0.0, (now - moment).total_seconds())
