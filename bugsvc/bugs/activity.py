"""Bug history rows: one row per changed field.

`log` is how a call writes history: the row, by the caller, at the call's
time, noted in the call's journal of events (bugs/events.py). `record`
writes a row alone (history that tells nobody, such as a product's group
controls restricting its bugs)."""

from .. import dates
from ..store.dialect import once_per_dialect
from . import events


def record(conn, bug_id, who, when, field, removed, added, attachment_id=None, comment_id=None):
    """Store one history row. removed/added: the strings of the `changes` answer;
    when: an aware datetime."""
    conn.execute(
        "INSERT INTO bug_activity (bug_id, attachment_id, who, changed_at, field, removed, added,"
        " comment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (bug_id, attachment_id, who, dates.to_db(when), field, removed or "", added or "",
         comment_id))


def log(ctx, bug_id, field, removed, added, attachment_id=None, comment_id=None):
    """Store one history row of the call (by its caller, at its time) and
    note it in the call's journal of events."""
    record(ctx.conn, bug_id, ctx.caller.id, ctx.now, field, removed, added, attachment_id,
           comment_id)
    ctx.events.changed(bug_id, field, removed, added, attachment_id, comment_id)


def touch(conn, bug_id, when, journal=None):
    """Set the bug's last_change_time to `when`. journal: the call's Journal
    (bugs/events.py), told the bug's people as the same statement leaves
    them (so that its event need not read them again when nothing is
    written after)."""
    if journal is None or not journal.enabled:
        conn.execute("UPDATE bugs SET last_change_time = ? WHERE id = ?",
                     (dates.to_db(when), bug_id))
        return
    row = conn.execute(_touch_sql(conn.dialect), (dates.to_db(when), bug_id)).fetchone()
    journal.people_seen(bug_id, events.people_of(row), conn.writes_so_far())


@once_per_dialect
def _touch_sql(dialect):
    """touch's statement that also answers the bug's people."""
    return ("UPDATE bugs SET last_change_time = ? WHERE id = ?"
            f" RETURNING {events.people_columns(dialect)}")
