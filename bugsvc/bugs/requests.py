"""The flags requested of the caller (the reference's "My Requests"), read
from the flags by their requestee, on the bugs the caller may see and, on
attachments, only where the caller may see the attachment."""

from . import visibility
from .. import dates

REQUEST_LIMIT = 100


def requests_of_caller(ctx, limit=REQUEST_LIMIT):
    """[{"id", "name", "type_id", "status", "bug_id", "attachment_id",
    "setter", "requestee", "creation_date", "modification_date"}] of the
    flags with status ? requested of the caller, newest first, at most
    `limit`."""
    if not ctx.caller.is_logged_in:
        return []
    visible, args = visibility.bug_visibility_sql(ctx, "b")
    private = "" if visibility.is_insider(ctx) else (
        " AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = f.attachment_id"
        " AND a.is_private <> 0)")
    rows = ctx.conn.execute(
        "SELECT f.id, f.type_id, t.name, f.status, f.bug_id, f.attachment_id,"
        " us.login AS setter, f.created_at, f.modified_at FROM flags f"
        " JOIN flag_types t ON t.id = f.type_id JOIN users us ON us.id = f.setter_id"
        " JOIN bugs b ON b.id = f.bug_id"
        f" WHERE f.requestee_id = ? AND f.status = '?' AND {visible}{private}"
        " ORDER BY f.modified_at DESC, f.id DESC LIMIT ?",
        [ctx.caller.id] + args + [limit]).fetchall()
    return [{"id": row["id"], "name": row["name"], "type_id": row["type_id"],
             "status": row["status"], "bug_id": row["bug_id"],
             "attachment_id": row["attachment_id"], "setter": row["setter"],
             "requestee": ctx.caller.login,
             "creation_date": dates.from_db(row["created_at"]),
             "modification_date": dates.from_db(row["modified_at"])} for row in rows]
