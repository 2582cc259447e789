"""Bug objects for many bugs at once: one query per
related table for the whole id list, never one per bug.

The caller must already be allowed to see every bug it asks for; what is
hidden inside a visible bug (dependencies on bugs the caller cannot see and
Bug ID fields naming them, time tracking for non-timetrackers) is left out
here.
"""

import orjson

from .. import dates
from ..call.fields import Shape
from ..catalogue.field_types import BUG_ID
from ..store.db import placeholders
from . import custom_fields, visibility
from .status import workflow as status_workflow
from .token import token_key, update_tokens


USER_FIELDS = ("assigned_to", "creator", "qa_contact", "cc")
# include/exclude shape of a bug object: `tags` and `duplicates` only when
# asked for, `cf_*` custom.
BUG_SHAPE = Shape(types={"tags": ("extra",), "duplicates": ("extra",)}, custom_prefix="cf_",
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


def _list(text):
    """A JSON array made by the dialect's json_list, as a list."""
    return [] if text == "[]" else orjson.loads(text)


def bug_objects(ctx, bug_ids, with_update_token=False, visible_only=False):
    """Bug objects for `bug_ids`, in the given order (unknown ids skipped).

    One query reads the bugs with everything held in other tables (each as
    a JSON array made by the database), and what the update tokens and the
    time worked are made from, so the cost per bug is one row.
    with_update_token: add `update_token` for logged-in callers (bug get).
    visible_only: skip the bugs the caller may not see too (the same query
    checks; otherwise the caller has checked each id).
    """
    order = [int(bug_id) for bug_id in bug_ids]
    ids = list(dict.fromkeys(order))
    if not ids:
        return []
    conn = ctx.conn
    wanted = ctx.fields.wanted(_ASKED, BUG_SHAPE)
    custom = [field for field in custom_fields.active_fields(ctx)
              if ctx.fields.wants(field["name"], BUG_SHAPE)]
    timetracker = visibility.is_timetracker(ctx)
    actual_time = timetracker and "actual_time" in wanted
    tokens_wanted = with_update_token and ctx.caller.is_logged_in and "update_token" in wanted
    select, args = _select(ctx, wanted, bool(custom), actual_time, tokens_wanted)
    where, where_args = "", []
    if visible_only:
        condition, where_args = visibility.bug_visibility_sql(ctx, "b")
        where = f" AND {condition}"
    bugs = {}
    for chunk in _chunks(ids):
        cursor = conn.execute(f"{select} WHERE b.id IN ({placeholders(chunk)}){where}",
                              args + chunk + where_args)
        names = [column[0] for column in cursor.description]
        for row in cursor:
            bugs[row[0]] = dict(zip(names, row, strict=True))
    ids = [bug_id for bug_id in ids if bug_id in bugs]
    if not ids:
        return []
    statuses = status_workflow(ctx).by_name
    hide_domains = not ctx.caller.is_logged_in and ctx.param_is_on("webservice_email_filter")

    def email(address):
        return address.split("@", 1)[0] if hide_domains and address else address

    def detail(user_id, login, real_name):
        login = email(login)
        return {"id": user_id, "real_name": real_name, "name": login, "email": login}

    tags = _tags(ctx, ids) if "tags" in wanted else None
    customs = {bug_id: _list(bugs[bug_id]["custom"]) for bug_id in ids} if custom else {}
    shown_bugs = _shown_bug_id_values(ctx, custom, customs)
    tokens = {}
    if tokens_wanted:
        tokens = update_tokens(token_key(ctx), ctx.caller.id, {
            bug_id: (bugs[bug_id]["last_change_time"], bugs[bug_id]["activity_count"],
                     bugs[bug_id]["comment_count"]) for bug_id in ids})
    objects = {}
    for bug_id in ids:
        row = bugs[bug_id]
        get = row.get
        state = statuses.get(row["status"])
        obj = {
            "id": bug_id,
            "alias": _list(get("aliases", "[]")),
            "summary": row["summary"],
            "status": row["status"],
            "resolution": row["resolution"],
            "is_open": bool(state["is_open"]) if state is not None else True,
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
            "keywords": _list(get("keywords", "[]")),
            "blocks": _list(get("blocks", "[]")),
            "depends_on": _list(get("depends_on", "[]")),
        }
        cc = _list(get("cc", "[]"))
        obj["cc"] = [email(login) for _, login, _ in cc]
        obj["cc_detail"] = [detail(*user) for user in cc]
        obj["assigned_to"] = email(row["assigned_login"])
        obj["assigned_to_detail"] = detail(row["assigned_to"], row["assigned_login"],
                                           row["assigned_name"])
        obj["creator"] = email(row["reporter_login"])
        obj["creator_detail"] = detail(row["reporter"], row["reporter_login"],
                                       row["reporter_name"])
        if row["qa_contact"] is not None:
            obj["qa_contact"] = email(row["qa_login"])
            obj["qa_contact_detail"] = detail(row["qa_contact"], row["qa_login"], row["qa_name"])
        else:
            obj["qa_contact"] = ""
        obj["groups"] = _list(get("groups", "[]"))
        obj["flags"] = [_flag(flag, email) for flag in _list(get("flags", "[]"))]
        obj["see_also"] = _list(get("see_also", "[]"))
        obj["creation_time"] = dates.from_db(row["creation_time"])
        obj["last_change_time"] = dates.from_db(row["last_change_time"])
        obj["is_cc_accessible"] = bool(row["is_cc_accessible"])
        obj["is_creator_accessible"] = bool(row["is_creator_accessible"])
        if timetracker:
            obj["estimated_time"] = float(row["estimated_time"] or 0)
            obj["remaining_time"] = float(row["remaining_time"] or 0)
            obj["actual_time"] = float(row["actual_time"] or 0) if actual_time else 0.0
            obj["deadline"] = row["deadline"]
        if custom:
            stored = {}
            for name, value in customs[bug_id]:
                stored.setdefault(name, []).append(value)
            for field in custom:
                value = custom_fields.display(field, stored.get(field["name"], []))
                if field["type"] == BUG_ID and value not in shown_bugs:
                    value = None
                obj[field["name"]] = value
        if tags is not None:
            obj["tags"] = tags.get(bug_id, [])
        if "duplicates" in row:
            obj["duplicates"] = _list(row["duplicates"])
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


_BUG_COLUMNS = (
    "SELECT b.id, b.summary, b.status, b.resolution, b.is_confirmed, b.dupe_of, b.version,"
    " b.target_milestone, b.platform, b.op_sys, b.priority, b.severity, b.url, b.whiteboard,"
    " b.assigned_to, b.reporter, b.qa_contact, b.creation_time, b.last_change_time, b.deadline,"
    " b.estimated_time, b.remaining_time, b.is_cc_accessible, b.is_creator_accessible,"
    " p.name AS product, c.name AS component, cl.name AS classification,"
    " ua.login AS assigned_login, ua.real_name AS assigned_name,"
    " ur.login AS reporter_login, ur.real_name AS reporter_name,"
    " uq.login AS qa_login, uq.real_name AS qa_name")
_BUG_TABLES = (
    " FROM bugs b JOIN products p ON p.id = b.product_id"
    " JOIN components c ON c.id = b.component_id"
    " JOIN classifications cl ON cl.id = p.classification_id"
    " JOIN users ua ON ua.id = b.assigned_to JOIN users ur ON ur.id = b.reporter"
    " LEFT JOIN users uq ON uq.id = b.qa_contact")

# Fields held in other tables: (field names that want it, the JSON list's
# values, source, order, column name). Each is a JSON array, in the order
# the reference lists them.
_LIST_COLUMNS = (
    (("alias",), ["alias"], "FROM bug_aliases WHERE bug_id = b.id", "id", "aliases"),
    (("keywords",), ["k.name"], "FROM bug_keywords bk JOIN keywords k ON k.id = bk.keyword_id"
                                " WHERE bk.bug_id = b.id", "lower(k.name)", "keywords"),
    (("cc",), ["u.id", "u.login", "u.real_name"], "FROM bug_cc cc JOIN users u"
                                                  " ON u.id = cc.user_id WHERE cc.bug_id = b.id",
     "lower(u.login)", "cc"),
    (("groups",), ["g.name"], "FROM bug_groups bg JOIN groups g ON g.id = bg.group_id"
                              " WHERE bg.bug_id = b.id", "lower(g.name)", "groups"),
    (("flags",), ["f.id", "f.type_id", "t.name", "f.status", "us.login", "uq.login",
                  "f.created_at", "f.modified_at"],
     "FROM flags f JOIN flag_types t ON t.id = f.type_id JOIN users us ON us.id = f.setter_id"
     " LEFT JOIN users uq ON uq.id = f.requestee_id WHERE f.bug_id = b.id"
     " AND f.attachment_id IS NULL", "t.sort_key, lower(t.name), t.id, f.id", "flags"),
    (("see_also",), ["url"], "FROM bug_see_also WHERE bug_id = b.id", "id", "see_also"),
)
# Dependencies list only the bugs the caller may see ({visible} is the
# condition on alias b2).
_DEPENDENCY_COLUMNS = (
    ("depends_on", ["d.depends_on"], "FROM dependencies d JOIN bugs b2 ON b2.id = d.depends_on"
                                     " WHERE d.blocked = b.id AND {visible}", "d.depends_on"),
    ("blocks", ["d.blocked"], "FROM dependencies d JOIN bugs b2 ON b2.id = d.blocked"
                              " WHERE d.depends_on = b.id AND {visible}", "d.blocked"),
)
# The visible bugs marked duplicates of the bug ({visible}: the condition on
# alias d).
_DUPLICATES_COLUMN = (["d.id"], "FROM bugs d WHERE d.dupe_of = b.id AND {visible}", "d.id")
_CUSTOM_COLUMN = (["f.name", "v.value"], "FROM bug_custom_values v JOIN fields f"
                                         " ON f.id = v.field_id WHERE v.bug_id = b.id", "v.id")
# The hours worked on the bug (time tracking), and what its update token is
# made of besides its last change time: how many history rows and comments
# it has.
_ACTUAL_TIME_COLUMN = "(SELECT SUM(work_time) FROM comments WHERE bug_id = b.id) AS actual_time"
_TOKEN_COUNT_COLUMNS = ("(SELECT COUNT(*) FROM bug_activity WHERE bug_id = b.id) AS activity_count,"
                        " (SELECT COUNT(*) FROM comments WHERE bug_id = b.id) AS comment_count")
# Every field name bug_objects asks the field choice about (custom fields
# apart), and those whose lists only name the bugs the caller may see.
_ASKED = tuple(name for names, *_ in _LIST_COLUMNS for name in names) + tuple(
    name for name, *_ in _DEPENDENCY_COLUMNS) + ("duplicates", "actual_time", "tags",
                                                 "update_token")
_VISIBLE_LISTS = frozenset(("depends_on", "blocks", "duplicates"))
# The SELECTs made, by choice of fields and caller's visibility condition:
# at most this many are kept, then they are made afresh.
_SELECTS_KEPT = 512
_SELECTS = {}


def _select(ctx, wanted, with_custom, actual_time, token_counts):
    """The SELECT (without WHERE) reading bugs with the `wanted` related
    lists (a set of field names), the custom field values when
    `with_custom`, the hours worked when `actual_time`, the counts an
    update token is made of when `token_counts`; and its arguments. Made
    once for each choice and caller (its visibility condition is the
    caller's)."""
    dialect = ctx.conn.dialect
    conditions = {}
    if wanted & _VISIBLE_LISTS:
        for alias in ("b2", "d"):
            conditions[alias] = visibility.bug_visibility_sql(ctx, alias)
    key = (dialect.name, wanted, with_custom, actual_time, token_counts,
           conditions.get("b2", ("",))[0])
    found = _SELECTS.get(key)
    if found is None:
        found = _make_select(dialect, wanted, with_custom, actual_time, token_counts,
                             conditions)
        if len(_SELECTS) >= _SELECTS_KEPT:
            _SELECTS.clear()
        _SELECTS[key] = found
    sql, conditions_used = found
    args = []
    for alias in conditions_used:
        args += conditions[alias][1]
    return sql, args


def _make_select(dialect, wanted, with_custom, actual_time, token_counts, conditions):
    """_select's SQL and the aliases whose visibility conditions' arguments
    it takes, in order."""
    columns, used = [_BUG_COLUMNS], []
    for names, values, source, order, name in _LIST_COLUMNS:
        if any(wanted_name in wanted for wanted_name in names):
            columns.append(f"{dialect.json_list(values, source, order)} AS {name}")
    for name, values, source, order in _DEPENDENCY_COLUMNS:
        if name in wanted:
            source = source.format(visible=conditions["b2"][0])
            columns.append(f"{dialect.json_list(values, source, order)} AS {name}")
            used.append("b2")
    if "duplicates" in wanted:
        values, source, order = _DUPLICATES_COLUMN
        source = source.format(visible=conditions["d"][0])
        columns.append(f"{dialect.json_list(values, source, order)} AS duplicates")
        used.append("d")
    if with_custom:
        columns.append(f"{dialect.json_list(*_CUSTOM_COLUMN)} AS custom")
    if actual_time:
        columns.append(_ACTUAL_TIME_COLUMN)
    if token_counts:
        columns.append(_TOKEN_COUNT_COLUMNS)
    return ", ".join(columns) + _BUG_TABLES, tuple(used)


def _shown_bug_id_values(ctx, custom, customs):
    """The bug ids named by the Bug ID fields among `custom` that the caller
    may see: like depends_on, such a field names a bug only to those who may
    see it (None for the others)."""
    names = {field["name"] for field in custom if field["type"] == BUG_ID}
    if not names:
        return set()
    named = {int(value) for values in customs.values() for name, value in values
             if name in names and str(value).isdigit()}
    return visibility.visible_bug_ids(ctx, named)


def _tags(ctx, ids):
    """{bug id: [the caller's tag names]} (none for logged-out callers)."""
    tags = {}
    if ctx.caller.is_logged_in:
        for bug_id, name in _rows(ctx.conn, "SELECT bt.bug_id, t.name FROM bug_tags bt"
                                            " JOIN personal_tags t ON t.id = bt.tag_id"
                                            " WHERE bt.bug_id IN ({ids}) AND t.user_id = ?"
                                            " ORDER BY lower(t.name)", ids, (ctx.caller.id,)):
            tags.setdefault(bug_id, []).append(name)
    return tags


def _flag(flag, email):
    flag_id, type_id, name, status, setter, requestee, created_at, modified_at = flag
    obj = {"id": flag_id, "name": name, "type_id": type_id,
           "creation_date": dates.from_db(created_at),
           "modification_date": dates.from_db(modified_at),
           "status": status, "setter": email(setter)}
    if requestee is not None:
        obj["requestee"] = email(requestee)
    return obj
