"""Bug objects for many bugs at once: one query per
related table for the whole id list, never one per bug.

The caller must already be allowed to see every bug it asks for; what is
hidden inside a visible bug (dependencies on bugs the caller cannot see and
Bug ID fields naming them, time tracking for non-timetrackers) is left out
here.
"""

from dataclasses import dataclass, replace

from .. import dates
from ..call import standing
from ..call.fields import Shape
from ..catalogue.field_types import BUG_ID
from ..store import cache
from ..store.db import id_chunks, placeholders, rows_for_ids
from ..store.dialect import json_items
from . import custom_fields, object_cache, visibility
from .status import workflow as status_workflow
from .token import TOKEN_REVISION_COLUMN, token_key, update_tokens


USER_FIELDS = ("assigned_to", "creator", "qa_contact", "cc")
# include/exclude shape of a bug object: `tags` and `duplicates` only when
# asked for, `cf_*` custom.
BUG_SHAPE = Shape(types={"tags": ("extra",), "duplicates": ("extra",)}, custom_prefix="cf_",
                  children={f"{name}_detail": Shape() for name in USER_FIELDS},
                  follows={f"{name}_detail": name for name in USER_FIELDS})
BUG_SHAPES = {"bugs": BUG_SHAPE}


def bug_objects(ctx, bug_ids, with_update_token=False, visible_only=False, alone=False):
    """Bug objects for `bug_ids`, in the given order (unknown ids skipped).

    One query reads the bugs, and what the update tokens and the time
    worked are made from; what is held in other tables comes with each bug
    as a JSON array made by the database (one statement in all), or, for
    several bugs where statements cost no round trip
    (dialect.reads_lists_apart), by one more statement per list over all
    of them. In read transactions the objects of bugs unchanged since the
    process last made them are taken from those it keeps
    (object_cache.py), where nothing in them is the caller's own.
    with_update_token: add `update_token` for logged-in callers (bug get).
    visible_only: skip the bugs the caller may not see too (the same query
    checks; otherwise the caller has checked each id). alone: the call
    reads nothing else for its answer (object_cache.objects).
    """
    order = [int(bug_id) for bug_id in bug_ids]
    ids = list(dict.fromkeys(order))
    if not ids:
        return []
    wanted, custom, timetracker, hide_domains = _shown(ctx)
    if object_cache.applies(ctx, wanted, custom):
        objects = object_cache.objects(
            ctx, ids, (hide_domains, timetracker),
            lambda missing, read=None: _made(ctx, missing, wanted, custom, timetracker,
                                             hide_domains, whole_lists=True, read=read).values(),
            with_tokens=_tokens_wanted(ctx, with_update_token, wanted), visible_only=visible_only,
            alone=alone)
    else:
        # What the objects hold then is not all moved with the bug
        # generation (tags, duplicates, a field choice's own reads).
        standing.spoil()
        objects = _made(ctx, ids, wanted, custom, timetracker, hide_domains, with_update_token,
                        visible_only)
    result, seen = [], set()
    for bug_id in order:
        obj = objects.get(bug_id)
        if obj is not None:
            # A bug named twice is listed twice, as separate objects.
            result.append(dict(obj) if bug_id in seen and isinstance(obj, dict) else obj)
            seen.add(bug_id)
    return result


def _shown(ctx):
    """(the field names of _ASKED wanted, the custom fields shown, whether
    the caller sees the time tracking fields, whether addresses lose their
    domain): what bug objects show `ctx`'s caller, by its field choice. The
    same for the same caller and choice at one catalog generation, so kept
    with the catalogue's copies, by both (_SELECTS_KEPT at most)."""
    if not object_cache.hashable(ctx.caller):
        return _shown_anew(ctx)
    return _kept_in(ctx.cached("bug objects shown", cache.new_table),
                    (ctx.caller, ctx.fields.choice), lambda: _shown_anew(ctx))


def _shown_anew(ctx):
    """_shown's answer, made."""
    wanted = ctx.fields.wanted(_ASKED, BUG_SHAPE)
    custom = [field for field in custom_fields.active_fields(ctx)
              if ctx.fields.wants(field["name"], BUG_SHAPE)]
    timetracker = visibility.is_timetracker(ctx)
    hide_domains = not ctx.caller.is_logged_in and ctx.param_is_on("webservice_email_filter")
    return wanted, custom, timetracker, hide_domains


def _made(ctx, ids, wanted, custom, timetracker, hide_domains, with_update_token=False,
          visible_only=False, whole_lists=False, read=None):
    """{bug id: its object} for `ids` read anew (bug_objects' arguments;
    the bugs missing or, when `visible_only`, hidden left out); with
    `whole_lists`, depends_on and blocks name every bug, seen or not.
    read: an object_cache.ReadWithObjects, given what the same statement
    read besides (where a statement is a round trip: the lists are read
    with the bugs); for one bug, the statement runs ahead of the
    transaction where it may (Connection.execute_ahead)."""
    conn = ctx.conn
    visible_only = visible_only or (read is not None and read.visible_only)
    actual_time = timetracker and "actual_time" in wanted
    tokens_wanted = _tokens_wanted(ctx, with_update_token, wanted)
    apart = len(ids) > 1 and conn.dialect.reads_lists_apart
    select, args, lists = _select(ctx, wanted, bool(custom), actual_time,
                                  tokens_wanted or read is not None, apart, whole_lists,
                                  read.carried if read is not None else None)
    where, where_args = "", []
    if visible_only:
        condition, where_args = visibility.bug_visibility_sql(ctx, "b")
        where = f" AND {condition}"
    bugs = {}
    for chunk in id_chunks(ids):
        sql = f"{select} WHERE b.id IN ({placeholders(chunk)}){where}"
        params = args + chunk + where_args
        cursor = None
        if read is not None and len(ids) == 1:
            cursor = conn.execute_ahead(sql, params)
        if cursor is None:
            cursor = conn.execute_one_plan(sql, params)
        names = [column[0] for column in cursor.description]
        for row in cursor:
            bugs[row[0]] = dict(zip(names, row, strict=True))
            if read is not None:
                read.generations = tuple(row[-read.carried_columns:])
    ids = [bug_id for bug_id in ids if bug_id in bugs]
    if not ids:
        return {}
    if apart:
        for name, (sql, list_args) in lists.items():
            _read_list(conn, bugs, ids, name, sql, list_args)
    else:
        for name in lists:
            for row in bugs.values():
                row[name] = json_items(row[name])
    if read is not None:
        for bug_id in ids:
            row = bugs[bug_id]
            read.stamps[bug_id] = ((row["revision"], row["last_change_time"]) if read.with_time
                                   else (row["revision"],))
            for name in _SEEN_RELATED:
                read.visible.update(row[name] or ())
    statuses = status_workflow(ctx).by_name
    email = _email_without_domain if hide_domains else _email_as_is
    tags = _tags(ctx, ids) if "tags" in wanted else None
    customs = {bug_id: bugs[bug_id]["custom"] or [] for bug_id in ids} if custom else {}
    shown_bugs = _shown_bug_id_values(ctx, custom, customs)
    tokens = {}
    if tokens_wanted:
        tokens = update_tokens(token_key(ctx), ctx.caller.id, {
            bug_id: (bugs[bug_id]["revision"], bugs[bug_id]["last_change_time"])
            for bug_id in ids})
    objects = {}
    for bug_id in ids:
        row = bugs[bug_id]
        get = row.get
        state = statuses.get(row["status"])
        cc = get("cc") or ()
        cc_logins = [email(login) for _, login, _ in cc]
        assigned_login, reporter_login = email(row["assigned_login"]), email(row["reporter_login"])
        obj = {
            "id": bug_id,
            "alias": get("aliases") or [],
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
            "keywords": get("keywords") or [],
            "blocks": get("blocks") or [],
            "depends_on": get("depends_on") or [],
            "cc": cc_logins,
            "cc_detail": [{"id": user[0], "real_name": user[2], "name": login, "email": login}
                          for user, login in zip(cc, cc_logins, strict=True)],
            "assigned_to": assigned_login,
            "assigned_to_detail": {"id": row["assigned_to"], "real_name": row["assigned_name"],
                                   "name": assigned_login, "email": assigned_login},
            "creator": reporter_login,
            "creator_detail": {"id": row["reporter"], "real_name": row["reporter_name"],
                               "name": reporter_login, "email": reporter_login},
        }
        if row["qa_contact"] is not None:
            obj["qa_contact"] = qa_login = email(row["qa_login"])
            obj["qa_contact_detail"] = {"id": row["qa_contact"], "real_name": row["qa_name"],
                                        "name": qa_login, "email": qa_login}
        else:
            obj["qa_contact"] = ""
        obj["groups"] = get("groups") or []
        obj["flags"] = [_flag(flag, email) for flag in get("flags") or ()]
        obj["see_also"] = get("see_also") or []
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
            obj["duplicates"] = row["duplicates"] or []
        if bug_id in tokens:
            obj["update_token"] = tokens[bug_id]
        objects[bug_id] = obj
    return objects


def _tokens_wanted(ctx, with_update_token, wanted):
    """True when the objects get the caller's update tokens (logged-in
    callers, when asked for)."""
    return with_update_token and ctx.caller.is_logged_in and "update_token" in wanted


def _email_as_is(address):
    return address


def _email_without_domain(address):
    """The address without its domain (webservice_email_filter, for
    logged-out callers)."""
    return address.split("@", 1)[0] if address else address


def _read_list(conn, bugs, ids, name, sql, args):
    """Set each of `bugs`' rows' `name` to its list (absent: none) from the
    rows of `sql` (list_sql's) over `ids`: each row the bug's id and the
    item's value, or values (a tuple)."""
    found = {}
    for row in rows_for_ids(conn, sql, ids, args):
        item = row[1] if len(row) == 2 else tuple(row[1:])
        items = found.get(row[0])
        if items is None:
            found[row[0]] = [item]
        else:
            items.append(item)
    for bug_id in ids:
        bugs[bug_id][name] = found.get(bug_id)


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


@dataclass(frozen=True)
class _ListColumn:
    """A bug's list held in other tables, read as `name`: the rows of
    `tables` (FROM and joins) whose `owner` column is the bug's id and for
    which `condition` holds (SQL after AND, or ''; '{visible}' in it is the
    caller's visibility condition on alias `visible`), each item the value
    of `values` (or the list of their values), in the order `order` (a
    total one, so both ways of reading give the same list). as_seen: the
    condition holds even where the other lists name every bug."""
    name: str
    values: tuple
    tables: str
    owner: str
    order: str
    condition: str = ""
    visible: str = ""
    as_seen: bool = False

    @property
    def sight(self):
        """Which visibility condition the list takes ('' none): its alias's,
        as the caller sees the bugs (as_seen) or as the lists are read."""
        return (self.visible, self.as_seen) if self.visible else ""

    def sql(self, dialect, visible):
        """The correlated subquery (its JSON array, bug alias b) reading
        the list, `visible` the visibility condition's SQL."""
        condition = self.condition.format(visible=visible)
        return dialect.json_list(list(self.values), f"FROM {self.tables} WHERE {self.owner}"
                                                    f" = b.id{condition}", self.order)

    def apart(self, visible):
        """The statement reading the list of every bug in an IN list
        ('{ids}'): the bug's id, then the item's values, in the bugs' and
        the items' order."""
        condition = self.condition.format(visible=visible)
        return (f"SELECT {self.owner}, {', '.join(self.values)} FROM {self.tables}"
                f" WHERE {self.owner} IN ({{ids}}){condition}"
                f" ORDER BY {self.owner}, {self.order}")


# Fields held in other tables, in the order the reference lists them, each
# by the field name that wants it (custom fields: "custom"): dependencies
# and duplicates list only the bugs the caller may see.
_LIST_COLUMNS = {
    "alias": _ListColumn("aliases", ("alias",), "bug_aliases", "bug_id", "id"),
    "keywords": _ListColumn("keywords", ("k.name",), "bug_keywords bk JOIN keywords k"
                            " ON k.id = bk.keyword_id", "bk.bug_id", "lower(k.name)"),
    "cc": _ListColumn("cc", ("u.id", "u.login", "u.real_name"), "bug_cc cc JOIN users u"
                      " ON u.id = cc.user_id", "cc.bug_id", "lower(u.login)"),
    "groups": _ListColumn("groups", ("g.name",), "bug_groups bg JOIN groups g"
                          " ON g.id = bg.group_id", "bg.bug_id", "lower(g.name)"),
    "flags": _ListColumn("flags", ("f.id", "f.type_id", "t.name", "f.status", "us.login",
                                   "uq.login", "f.created_at", "f.modified_at"),
                         "flags f JOIN flag_types t ON t.id = f.type_id JOIN users us"
                         " ON us.id = f.setter_id LEFT JOIN users uq ON uq.id = f.requestee_id",
                         "f.bug_id", "t.sort_key, lower(t.name), t.id, f.id",
                         " AND f.attachment_id IS NULL"),
    "see_also": _ListColumn("see_also", ("url",), "bug_see_also", "bug_id", "id"),
    "depends_on": _ListColumn("depends_on", ("d.depends_on",), "dependencies d JOIN bugs b2"
                              " ON b2.id = d.depends_on", "d.blocked", "d.depends_on",
                              " AND {visible}", "b2"),
    "blocks": _ListColumn("blocks", ("d.blocked",), "dependencies d JOIN bugs b2"
                          " ON b2.id = d.blocked", "d.depends_on", "d.blocked",
                          " AND {visible}", "b2"),
    "duplicates": _ListColumn("duplicates", ("d.id",), "bugs d", "d.dupe_of", "d.id",
                              " AND {visible}", "d"),
}
# depends_on and blocks as the caller may see them, even where the object's
# lists are whole (`whole_lists`): read with a kept object's own statement,
# whether the caller may see each bug it names (object_cache.py).
_SEEN_RELATED = {f"seen_{name}": replace(_LIST_COLUMNS[name], name=f"seen_{name}", as_seen=True)
                  for name in ("depends_on", "blocks")}
_CUSTOM_COLUMN = _ListColumn("custom", ("f.name", "v.value"), "bug_custom_values v JOIN fields f"
                             " ON f.id = v.field_id", "v.bug_id", "v.id")
# The hours worked on the bug (time tracking: the comments that have any,
# read from their index).
_ACTUAL_TIME_COLUMN = ("(SELECT SUM(work_time) FROM comments WHERE bug_id = b.id"
                       " AND work_time <> 0) AS actual_time")
# Every field name bug_objects asks the field choice about (custom fields
# apart).
_ASKED = tuple(_LIST_COLUMNS) + ("actual_time", "tags", "update_token")
# The SELECTs made, by choice of fields and caller's visibility condition:
# at most this many are kept, then they are made afresh.
_SELECTS_KEPT = 512
_SELECTS = {}
# _select's answers by caller and choice of fields, kept as _SELECTS are: a
# bug's first reading then makes no visibility condition to find its SELECT.
_CALLERS_SELECTS = {}


def _select(ctx, wanted, with_custom, actual_time, token_revision, apart, whole_lists=False,
            carried=None):
    """(the SELECT without WHERE reading bugs, its arguments, {list name:
    (its statement, arguments)}): the `wanted` related lists (a set of
    field names), the custom field values when `with_custom`, the hours
    worked when `actual_time`, the revision an update token is made of when
    `token_revision`. The lists are JSON arrays in the SELECT (the dict's
    statements are None), or read `apart` by a statement each (bugs' ids
    in '{ids}', then the arguments). Made once for each choice and caller
    (the visibility condition is the caller's; with `whole_lists` there is
    none: the lists name every bug). carried: columns read last besides
    (SQL taking no values: cache.Generations.carried_with_bug), and with
    them, depends_on and blocks as the caller may see them too
    (_SEEN_RELATED). The arguments are new lists, the caller's to extend."""
    dialect = ctx.conn.dialect
    choice = (dialect.name, wanted, with_custom, actual_time, token_revision, apart,
              whole_lists, carried)
    if not object_cache.hashable(ctx.caller):
        return _as_made(_select_for(ctx, *choice))
    return _as_made(_kept_in(_CALLERS_SELECTS, (ctx.caller, choice),
                             lambda: _select_for(ctx, *choice)))


def _kept_in(kept, key, make):
    """kept[key], made by make() and kept when missing (`kept` emptied
    first when it holds _SELECTS_KEPT already)."""
    found = kept.get(key)
    if found is None:
        found = make()
        cache.keep_at_most(kept, key, found, _SELECTS_KEPT)
    return found


def _as_made(found):
    """_select's answer from a kept one (arguments as tuples): new lists."""
    sql, args, lists = found
    return sql, list(args), {name: (statement, list(list_args))
                             for name, statement, list_args in lists}


def _select_for(ctx, dialect_name, wanted, with_custom, actual_time, token_revision, apart,
                whole_lists, carried):
    """_select's answer for the caller of `ctx`, its arguments as tuples:
    (SQL, arguments, ((list name, statement, arguments), ...))."""
    dialect = ctx.conn.dialect
    columns = [_LIST_COLUMNS[name] for name in _LIST_COLUMNS if name in wanted]
    if with_custom:
        columns.append(_CUSTOM_COLUMN)
    if carried is not None:
        columns.extend(_SEEN_RELATED.values())
    conditions = {}
    for column in columns:
        sight = column.sight
        if sight and sight not in conditions:
            conditions[sight] = (("1 = 1", []) if whole_lists and not column.as_seen
                                 else visibility.bug_visibility_sql(ctx, column.visible))
    key = (dialect_name, wanted, with_custom, actual_time, token_revision, apart, carried,
           tuple(condition for condition, _ in conditions.values()))
    sql, used, statements = _kept_in(_SELECTS, key, lambda: _make_select(
        dialect, columns, actual_time, token_revision, apart, conditions, carried))
    args = tuple(arg for sight in used for arg in conditions[sight][1])
    lists = tuple((name, statement, tuple(conditions[sight][1]) if sight else ())
                  for name, statement, sight in statements)
    return sql, args, lists


def _make_select(dialect, columns, actual_time, token_revision, apart, conditions, carried):
    """_select's SQL, the visibility conditions (_ListColumn.sight) whose
    arguments it takes, in order, and [(list name, its statement or None,
    the visibility condition it takes or '')]."""
    select, used, statements = [_BUG_COLUMNS], [], []
    for column in columns:
        visible = conditions[column.sight][0] if column.visible else ""
        if apart:
            statements.append((column.name, column.apart(visible), column.sight))
            continue
        select.append(f"{column.sql(dialect, visible)} AS {column.name}")
        statements.append((column.name, None, ""))
        if column.visible:
            used.append(column.sight)
    if actual_time:
        select.append(_ACTUAL_TIME_COLUMN)
    if token_revision:
        select.append(TOKEN_REVISION_COLUMN)
    if carried is not None:
        select.append(carried)
    return ", ".join(select) + _BUG_TABLES, tuple(used), tuple(statements)


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
        for bug_id, name in rows_for_ids(ctx.conn, "SELECT bt.bug_id, t.name FROM bug_tags bt"
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
