"""Bug objects (bugs.md section 2) for many bugs at once: one query per
related table for the whole id list, never one per bug.

The caller must already be allowed to see every bug it asks for; what is
hidden inside a visible bug (dependencies on bugs the caller cannot see, time
tracking for non-timetrackers) is left out here.
"""

from .. import access, dates
from ..db import placeholders
from ..email import visible_email
from ..fields import Shape
from . import custom_fields
from .token import update_tokens

USER_FIELDS = ("assigned_to", "creator", "qa_contact", "cc")
# include/exclude shape of a bug object (compat.md section 7).
BUG_SHAPE = Shape(types={"tags": ("extra",)}, custom_prefix="cf_",
                  children={f"{name}_detail": Shape() for name in USER_FIELDS},
                  follows={f"{name}_detail": name for name in USER_FIELDS})
BUG_SHAPES = {"bugs": BUG_SHAPE}
_CHUNK = 500


def _chunks(ids):
    for start in range(0, len(ids), _CHUNK):
        yield ids[start:start + _CHUNK]


def _rows(conn, sql, ids, extra_args=()):
    """Rows of `sql` (with one '{ids}' IN list) for every chunk of `ids`."""
    for chunk in _chunks(ids):
        yield from conn.execute(sql.format(ids=placeholders(chunk)), list(chunk) + list(extra_args))


def _dict_rows(conn, sql, ids):
    """Like _rows, as plain dicts (much faster to read than sqlite3.Row by name)."""
    for chunk in _chunks(ids):
        cursor = conn.execute(sql.format(ids=placeholders(chunk)), list(chunk))
        names = [column[0] for column in cursor.description]
        for row in cursor:
            yield dict(zip(names, row))


def bug_objects(ctx, bug_ids, with_update_token=False):
    """Bug objects for `bug_ids`, in the given order (unknown ids skipped).

    with_update_token: add `update_token` for logged-in callers (bug get).
    """
    order = [int(bug_id) for bug_id in bug_ids]
    ids = list(dict.fromkeys(order))
    if not ids:
        return []
    conn, wants = ctx.conn, ctx.fields.wants
    bugs = {row["id"]: row for row in _dict_rows(conn, _BUG_SQL, ids)}
    ids = [bug_id for bug_id in ids if bug_id in bugs]
    if not ids:
        return []
    statuses = dict(conn.execute(
        "SELECT v.value, v.is_open FROM field_values v JOIN fields f ON f.id = v.field_id"
        " WHERE f.name = 'bug_status'").fetchall())
    related = _related(ctx, ids, wants)
    user_ids = set(related["user_ids"])
    for row in bugs.values():
        user_ids.update(uid for uid in (row["assigned_to"], row["reporter"], row["qa_contact"])
                        if uid is not None)
    users = _users(conn, user_ids)
    timetracker = access.is_timetracker(ctx)
    fields = custom_fields.active_fields(conn)
    tokens = {}
    if with_update_token and ctx.caller.is_logged_in and wants("update_token"):
        tokens = update_tokens(conn, ctx.caller.id, _token_states(conn, bugs, ids))
    objects = {}
    for bug_id in ids:
        row = bugs[bug_id]
        obj = {
            "id": bug_id,
            "alias": related["aliases"].get(bug_id, []),
            "summary": row["summary"],
            "status": row["status"],
            "resolution": row["resolution"],
            "is_open": bool(statuses.get(row["status"], 1)),
            "is_confirmed": bool(row["is_confirmed"]),
            "dupe_of": row["dupe_of"],
            "product": row["product"],
            "component": row["component"],
            "classification": row["classification"],
            "version": row["version"],
            "target_milestone": row["target_milestone"],
            "platform": row["platform"],
            "op_sys": row["op_sys"],
            "priority": row["priority"],
            "severity": row["severity"],
            "url": row["url"],
            "whiteboard": row["whiteboard"],
            "keywords": related["keywords"].get(bug_id, []),
            "blocks": related["blocks"].get(bug_id, []),
            "depends_on": related["depends_on"].get(bug_id, []),
        }
        cc_ids = related["cc"].get(bug_id, [])
        obj["cc"] = [_login(ctx, users, uid) for uid in cc_ids]
        obj["cc_detail"] = [_detail(ctx, users, uid) for uid in cc_ids]
        obj["assigned_to"] = _login(ctx, users, row["assigned_to"])
        obj["assigned_to_detail"] = _detail(ctx, users, row["assigned_to"])
        obj["creator"] = _login(ctx, users, row["reporter"])
        obj["creator_detail"] = _detail(ctx, users, row["reporter"])
        if row["qa_contact"] is not None:
            obj["qa_contact"] = _login(ctx, users, row["qa_contact"])
            obj["qa_contact_detail"] = _detail(ctx, users, row["qa_contact"])
        else:
            obj["qa_contact"] = ""
        obj["groups"] = related["groups"].get(bug_id, [])
        obj["flags"] = [_flag(ctx, users, flag) for flag in related["flags"].get(bug_id, [])]
        obj["see_also"] = related["see_also"].get(bug_id, [])
        obj["creation_time"] = dates.from_db(row["creation_time"])
        obj["last_change_time"] = dates.from_db(row["last_change_time"])
        obj["is_cc_accessible"] = bool(row["is_cc_accessible"])
        obj["is_creator_accessible"] = bool(row["is_creator_accessible"])
        if timetracker:
            obj["estimated_time"] = float(row["estimated_time"] or 0)
            obj["remaining_time"] = float(row["remaining_time"] or 0)
            obj["actual_time"] = float(related["actual_time"].get(bug_id, 0))
            obj["deadline"] = row["deadline"]
        for field in fields:
            if wants(field["name"], ("default", "custom")):
                stored = related["custom"].get(bug_id, {}).get(field["name"], [])
                obj[field["name"]] = custom_fields.display(field, stored)
        if "tags" in related:
            obj["tags"] = related["tags"].get(bug_id, [])
        if bug_id in tokens:
            obj["update_token"] = tokens[bug_id]
        objects[bug_id] = obj
    result, seen = [], set()
    for bug_id in order:
        if bug_id in objects:
            # A bug named twice is listed twice, as separate objects.
            result.append(dict(objects[bug_id]) if bug_id in seen else objects[bug_id])
            seen.add(bug_id)
    return result


_BUG_SQL = (
    "SELECT b.id, b.summary, b.status, b.resolution, b.is_confirmed, b.dupe_of, b.version,"
    " b.target_milestone, b.platform, b.op_sys, b.priority, b.severity, b.url, b.whiteboard,"
    " b.assigned_to, b.reporter, b.qa_contact, b.creation_time, b.last_change_time, b.deadline,"
    " b.estimated_time, b.remaining_time, b.is_cc_accessible, b.is_creator_accessible,"
    " p.name AS product, c.name AS component, cl.name AS classification"
    " FROM bugs b JOIN products p ON p.id = b.product_id"
    " JOIN components c ON c.id = b.component_id"
    " JOIN classifications cl ON cl.id = p.classification_id"
    " WHERE b.id IN ({ids})")


def _related(ctx, ids, wants):
    """Everything held in other tables, each as {bug id: ...}."""
    conn = ctx.conn
    result = {"aliases": {}, "keywords": {}, "blocks": {}, "depends_on": {}, "cc": {},
              "groups": {}, "flags": {}, "see_also": {}, "custom": {}, "actual_time": {},
              "user_ids": set()}
    if wants("alias"):
        for bug_id, alias in _rows(conn, "SELECT bug_id, alias FROM bug_aliases"
                                         " WHERE bug_id IN ({ids}) ORDER BY rowid", ids):
            result["aliases"].setdefault(bug_id, []).append(alias)
    if wants("keywords"):
        for bug_id, name in _rows(conn, "SELECT bk.bug_id, k.name FROM bug_keywords bk"
                                        " JOIN keywords k ON k.id = bk.keyword_id"
                                        " WHERE bk.bug_id IN ({ids}) ORDER BY lower(k.name)", ids):
            result["keywords"].setdefault(bug_id, []).append(name)
    if wants("blocks") or wants("depends_on"):
        pairs = [tuple(row) for column in ("blocked", "depends_on")
                 for row in _rows(conn, "SELECT blocked, depends_on FROM dependencies"
                                        f" WHERE {column} IN ({{ids}})", ids)]
        wanted = set(ids)
        visible = set()
        for chunk in _chunks(sorted({bug for pair in pairs for bug in pair})):
            visible |= access.visible_bug_ids(ctx, chunk)
        for blocked, depends_on in sorted(set(tuple(pair) for pair in pairs)):
            if blocked in wanted and depends_on in visible:
                result["depends_on"].setdefault(blocked, []).append(depends_on)
            if depends_on in wanted and blocked in visible:
                result["blocks"].setdefault(depends_on, []).append(blocked)
        for mapping in (result["depends_on"], result["blocks"]):
            for bug_id in mapping:
                mapping[bug_id].sort()
    if wants("cc"):
        for bug_id, user_id in _rows(conn, "SELECT cc.bug_id, cc.user_id FROM bug_cc cc"
                                           " JOIN users u ON u.id = cc.user_id"
                                           " WHERE cc.bug_id IN ({ids}) ORDER BY lower(u.login)",
                                     ids):
            result["cc"].setdefault(bug_id, []).append(user_id)
            result["user_ids"].add(user_id)
    if wants("groups"):
        for bug_id, name in _rows(conn, "SELECT bg.bug_id, g.name FROM bug_groups bg"
                                        " JOIN groups g ON g.id = bg.group_id"
                                        " WHERE bg.bug_id IN ({ids}) ORDER BY lower(g.name)", ids):
            result["groups"].setdefault(bug_id, []).append(name)
    if wants("flags"):
        for row in _rows(conn, "SELECT f.id, f.bug_id, f.type_id, t.name, f.status, f.setter_id,"
                               " f.requestee_id, f.created_at, f.modified_at FROM flags f"
                               " JOIN flag_types t ON t.id = f.type_id"
                               " WHERE f.bug_id IN ({ids}) AND f.attachment_id IS NULL"
                               " ORDER BY t.sort_key, lower(t.name), t.id, f.id", ids):
            result["flags"].setdefault(row["bug_id"], []).append(dict(row))
            result["user_ids"].update(uid for uid in (row["setter_id"], row["requestee_id"])
                                      if uid is not None)
    if wants("see_also"):
        for bug_id, url in _rows(conn, "SELECT bug_id, url FROM bug_see_also"
                                       " WHERE bug_id IN ({ids}) ORDER BY id", ids):
            result["see_also"].setdefault(bug_id, []).append(url)
    for bug_id, name, value in _rows(conn, "SELECT v.bug_id, f.name, v.value"
                                           " FROM bug_custom_values v JOIN fields f"
                                           " ON f.id = v.field_id WHERE v.bug_id IN ({ids})"
                                           " ORDER BY v.rowid", ids):
        result["custom"].setdefault(bug_id, {}).setdefault(name, []).append(value)
    if access.is_timetracker(ctx) and wants("actual_time"):
        for bug_id, total in _rows(conn, "SELECT bug_id, SUM(work_time) FROM comments"
                                         " WHERE bug_id IN ({ids}) GROUP BY bug_id", ids):
            result["actual_time"][bug_id] = total or 0
    if wants("tags", ("extra",)):
        result["tags"] = {}
        if ctx.caller.is_logged_in:
            for bug_id, name in _rows(conn, "SELECT bt.bug_id, t.name FROM bug_tags bt"
                                            " JOIN personal_tags t ON t.id = bt.tag_id"
                                            " WHERE bt.bug_id IN ({ids}) AND t.user_id = ?"
                                            " ORDER BY lower(t.name)", ids, (ctx.caller.id,)):
                result["tags"].setdefault(bug_id, []).append(name)
    return result


def _token_states(conn, bugs, ids):
    """{bug id: (last_change_time, history rows, comments)} for update tokens."""
    counts = {}
    for table in ("bug_activity", "comments"):
        counts[table] = dict(_rows(conn, f"SELECT bug_id, COUNT(*) FROM {table}"
                                         " WHERE bug_id IN ({ids}) GROUP BY bug_id", ids))
    return {bug_id: (bugs[bug_id]["last_change_time"], counts["bug_activity"].get(bug_id, 0),
                     counts["comments"].get(bug_id, 0)) for bug_id in ids}


def _users(conn, user_ids):
    user_ids = sorted(user_ids)
    return {row["id"]: row for row in _dict_rows(conn, "SELECT id, login, real_name FROM users"
                                                       " WHERE id IN ({ids})", user_ids)}


def _login(ctx, users, user_id):
    return visible_email(ctx, users[user_id]["login"])


def _detail(ctx, users, user_id):
    """The User detail object: {id, real_name, name, email}."""
    login = visible_email(ctx, users[user_id]["login"])
    return {"id": user_id, "real_name": users[user_id]["real_name"], "name": login,
            "email": login}


def _flag(ctx, users, flag):
    obj = {"id": flag["id"], "name": flag["name"], "type_id": flag["type_id"],
           "creation_date": dates.from_db(flag["created_at"]),
           "modification_date": dates.from_db(flag["modified_at"]),
           "status": flag["status"], "setter": _login(ctx, users, flag["setter_id"])}
    if flag["requestee_id"] is not None:
        obj["requestee"] = _login(ctx, users, flag["requestee_id"])
    return obj
