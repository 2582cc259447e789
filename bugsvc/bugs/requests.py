"""The flags requested of the caller (the reference's "My Requests"), read
from the flags by their requestee, on the bugs the caller may see and, on
attachments, only where the caller may see the attachment."""

from .. import dates
from . import visibility


REQUEST_LIMIT = 100


def requests_of_caller(ctx, limit=REQUEST_LIMIT):
    """[{"id", "name", "type_id", "status", "bug_id", "attachment_id",
    "setter", "requestee", "creation_date", "modification_date"}] of the
    flags with status ? requested of the caller, newest first, at most
    `limit`."""
    if not ctx.caller.is_logged_in:
        return []
    visible, args = visibility.bug_visibility_sql(ctx, "b")    # the caller's few requests
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


QUEUE_LIMIT = 1000
# "+-": granted or denied (the reference's "fulfilled").
QUEUE_STATUSES = ("?", "+", "-", "+-")
# A requestee given as NOBODY finds the flags asked of nobody in particular.
NOBODY = "-"


def request_queue(ctx, requester=None, requestee=None, either=False, product=None,
                  component=None, type_name=None, status="?", limit=QUEUE_LIMIT):
    """The flags of the reference's request queue (request.cgi), on the bugs
    the caller may see and, on attachments, only where the caller may see
    the attachment: [{"id", "name", "type_id", "status", "bug_id",
    "bug_summary", "product", "component", "attachment_id",
    "attachment_summary", "requester", "requestee", "creation_date",
    "modification_date"}], by product, component, bug and flag, at most
    `limit`. requester / requestee: logins (exact, any case) the flags
    were set by / asked of (requestee NOBODY: asked of nobody in
    particular); either: a flag of one or the other. product, component,
    type_name: names. status: "?", "+", "-", "+-" (granted or denied) or
    None for any."""
    visible, args = visibility.bug_visibility_sql(ctx, "b", scan=True)
    where, where_args = [visible], list(args)
    if not visibility.is_insider(ctx):
        where.append("NOT EXISTS (SELECT 1 FROM attachments pa WHERE pa.id = f.attachment_id"
                     " AND pa.is_private <> 0)")
    people = []
    if requester:
        people.append(("lower(us.login) = lower(?)", requester))
    if requestee == NOBODY:
        people.append(("f.requestee_id IS NULL", None))
    elif requestee:
        people.append(("lower(ur.login) = lower(?)", requestee))
    if people:
        joiner = " OR " if either else " AND "
        where.append("(" + joiner.join(sql for sql, _ in people) + ")")
        where_args += [value for _, value in people if value is not None]
    if status == "+-":
        where.append("f.status IN ('+', '-')")
        status = None
    for sql, value in (("p.name = ?", product), ("c.name = ?", component),
                       ("t.name = ?", type_name), ("f.status = ?", status)):
        if value:
            where.append(sql)
            where_args.append(value)
    rows = ctx.conn.execute(
        "SELECT f.id, f.type_id, t.name, f.status, f.bug_id, b.summary, p.name AS product,"
        " c.name AS component, f.attachment_id, a.summary AS attachment_summary,"
        " us.login AS requester, ur.login AS requestee, f.created_at, f.modified_at"
        " FROM flags f JOIN flag_types t ON t.id = f.type_id"
        " JOIN users us ON us.id = f.setter_id LEFT JOIN users ur ON ur.id = f.requestee_id"
        " JOIN bugs b ON b.id = f.bug_id JOIN products p ON p.id = b.product_id"
        " JOIN components c ON c.id = b.component_id"
        " LEFT JOIN attachments a ON a.id = f.attachment_id"
        f" WHERE {' AND '.join(where)}"
        " ORDER BY p.name, c.name, f.bug_id, f.id LIMIT ?",
        where_args + [limit]).fetchall()
    return [{"id": row["id"], "name": row["name"], "type_id": row["type_id"],
             "status": row["status"], "bug_id": row["bug_id"], "bug_summary": row["summary"],
             "product": row["product"], "component": row["component"],
             "attachment_id": row["attachment_id"],
             "attachment_summary": row["attachment_summary"],
             "requester": row["requester"], "requestee": row["requestee"] or "",
             "creation_date": dates.from_db(row["created_at"]),
             "modification_date": dates.from_db(row["modified_at"])} for row in rows]


def queued_type_names(ctx):
    """The names of the flag types some flag has (the reference's request
    queue offers those, an inactive type with flags included), by name."""
    return [row[0] for row in ctx.conn.execute(
        "SELECT DISTINCT t.name FROM flag_types t WHERE EXISTS (SELECT 1 FROM flags f"
        " WHERE f.type_id = t.id) ORDER BY t.name")]
