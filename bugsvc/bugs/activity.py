"""Bug history rows: one row per changed field.

`log` is how a call writes history: the row, by the caller, at the call's
time, noted in the call's journal of events (bugs/events.py). `record`
writes a row alone (history that tells nobody, such as a product's group
controls restricting its bugs)."""

from .. import dates


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


def touch(conn, bug_id, when):
    """Set the bug's last_change_time to `when`."""
    conn.execute("UPDATE bugs SET last_change_time = ? WHERE id = ?", (dates.to_db(when), bug_id))
