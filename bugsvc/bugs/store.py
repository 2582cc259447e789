"""Writing a bug record: the row of a new bug, and the difference between an
old and a new record, which is also the update's `changes` answer and the
bug's history."""

from .. import dates
from ..call.changes import note
from ..store.db import placeholders
from . import activity, custom_fields, flags as bug_flags
from .record import COLUMNS


# Column -> API name in `changes` and history.
_API_NAMES = {"product_id": "product", "component_id": "component"}
# Columns that are not written to history (the reference logs none of them).
_NOT_LOGGED = ("dupe_of", "creation_time", "last_change_time", "reporter")


def insert(ctx, record):
    """Store a new bug's row and related rows (no history); returns its id."""
    conn = ctx.conn
    columns = [name for name in COLUMNS]
    row = [_column_value(record, name) for name in columns]
    bug_id = conn.execute(f"INSERT INTO bugs ({', '.join(columns)}) VALUES"
                          f" ({placeholders(columns)}) RETURNING id", row).fetchone()[0]
    record.id = bug_id
    for alias in record.aliases:
        conn.execute("INSERT INTO bug_aliases (alias, bug_id) VALUES (?, ?)", (alias, bug_id))
    conn.executemany("INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
                     [(bug_id, uid) for uid in record.cc])
    conn.executemany("INSERT INTO bug_keywords (bug_id, keyword_id) VALUES (?, ?)",
                     [(bug_id, kid) for kid in record.keywords])
    conn.executemany("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                     [(bug_id, gid) for gid in record.groups])
    conn.executemany("INSERT INTO dependencies (blocked, depends_on) VALUES (?, ?)",
                     [(bug_id, other) for other in record.depends_on]
                     + [(other, bug_id) for other in record.blocks])
    conn.executemany("INSERT INTO bug_see_also (bug_id, url) VALUES (?, ?)",
                     [(bug_id, url) for url in record.see_also])
    _write_custom(ctx, bug_id, record.custom, {})
    return bug_id


def _column_value(record, name):
    value = getattr(record, name)
    if isinstance(value, bool):
        return int(value)
    return value


def save(ctx, old, new, when):
    """Write what differs between records `old` and `new` of one bug, record
    it in the bug's history at `when` (aware datetime) and return the
    `changes` answer ({API name: {"added", "removed"}}). The caller sets
    last_change_time."""
    conn = ctx.conn
    changes = {}
    names = _Names(conn)
    columns = [name for name in COLUMNS if name not in ("creation_time", "last_change_time")
               and getattr(old, name) != getattr(new, name)]
    if columns:
        conn.execute(f"UPDATE bugs SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                     [_column_value(new, c) for c in columns] + [new.id])
    for column in columns:
        note(changes, _API_NAMES.get(column, column), *names.column_texts(column, old, new))
    _sync(conn, "bug_aliases", "alias", new.id, old.aliases, new.aliases,
          changes, "alias", lambda values: values)
    _sync(conn, "bug_cc", "user_id", new.id, old.cc, new.cc, changes, "cc", names.logins)
    _sync(conn, "bug_keywords", "keyword_id", new.id, old.keywords, new.keywords, changes,
          "keywords", names.keywords)
    _sync(conn, "bug_groups", "group_id", new.id, old.groups, new.groups, changes, "groups",
          names.groups)
    _sync_dependencies(conn, new.id, old, new, changes)
    _sync(conn, "bug_see_also", "url", new.id, old.see_also, new.see_also, changes, "see_also",
          lambda values: values)
    _save_custom(ctx, old, new, changes)
    _save_flags(ctx, old, new, when, changes)
    for field, change in changes.items():
        if field not in _NOT_LOGGED:
            activity.log(ctx, new.id, field, change["removed"], change["added"])
    if "groups" in changes:
        ctx.events.restricted(new.id, not old.groups, not new.groups)
    return changes


class _Names:
    """Names of the ids a change shows: products, components, users, ..."""

    def __init__(self, conn):
        self.conn = conn

    def _lookup(self, table, column, ids):
        ids = [i for i in ids if i is not None]
        if not ids:
            return {}
        return dict(self.conn.execute(f"SELECT id, {column} FROM {table} WHERE id IN"
                                      f" ({placeholders(ids)})", ids).fetchall())

    def column_texts(self, column, old, new):
        before, after = getattr(old, column), getattr(new, column)
        if column == "product_id":
            found = self._lookup("products", "name", [before, after])
            return found.get(before), found.get(after)
        if column == "component_id":
            found = self._lookup("components", "name", [before, after])
            return found.get(before), found.get(after)
        if column in ("assigned_to", "qa_contact"):
            found = self._lookup("users", "login", [before, after])
            return found.get(before), found.get(after)
        if column in ("estimated_time", "remaining_time"):
            return f"{before or 0:.2f}", f"{after or 0:.2f}"
        return before, after

    def logins(self, ids):
        found = self._lookup("users", "login", ids)
        return sorted((found[i] for i in ids), key=str.lower)

    def keywords(self, ids):
        found = self._lookup("keywords", "name", ids)
        return sorted((found[i] for i in ids), key=str.lower)

    def groups(self, ids):
        found = self._lookup("groups", "name", ids)
        return sorted((found[i] for i in ids), key=str.lower)


def diff(old, new):
    """(removed, added): items of `old` not in `new` and the reverse, in
    their list order (each occurrence counted)."""
    remaining = list(new)
    removed = []
    for item in old:
        if item in remaining:
            remaining.remove(item)
        else:
            removed.append(item)
    return removed, remaining


def _sync(conn, table, column, bug_id, old, new, changes, field, texts):
    removed, added = diff(old, new)
    for value in removed:
        conn.execute(f"DELETE FROM {table} WHERE bug_id = ? AND {column} = ?", (bug_id, value))
    for value in added:
        conn.execute(f"INSERT INTO {table} (bug_id, {column}) VALUES (?, ?)", (bug_id, value))
    if removed or added:
        changes[field] = {"removed": ", ".join(texts(removed)), "added": ", ".join(texts(added))}


def _sync_dependencies(conn, bug_id, old, new, changes):
    for field, mine, other in (("depends_on", "blocked", "depends_on"),
                               ("blocks", "depends_on", "blocked")):
        removed, added = diff(getattr(old, field), getattr(new, field))
        for other_id in removed:
            conn.execute(f"DELETE FROM dependencies WHERE {mine} = ? AND {other} = ?",
                         (bug_id, other_id))
        for other_id in added:
            conn.execute(f"INSERT INTO dependencies ({mine}, {other}) VALUES (?, ?)",
                         (bug_id, other_id))
        if removed or added:
            changes[field] = {"removed": ", ".join(map(str, sorted(removed))),
                              "added": ", ".join(map(str, sorted(added)))}


def dependency_effects(old, new):
    """[(other bug id, field on the other bug, removed, added)] that a change of
    `old`'s dependencies into `new`'s causes on the other bugs."""
    effects = []
    for field, other_field in (("depends_on", "blocks"), ("blocks", "depends_on")):
        removed, added = diff(getattr(old, field), getattr(new, field))
        effects += [(other, other_field, str(new.id), "") for other in removed]
        effects += [(other, other_field, "", str(new.id)) for other in added]
    return effects


def _write_custom(ctx, bug_id, custom, fields_by_name):
    fields = fields_by_name or {f["name"]: f for f in custom_fields.active_fields(ctx)}
    for name, stored in custom.items():
        field = fields.get(name)
        if field is None:
            continue
        ctx.conn.execute("DELETE FROM bug_custom_values WHERE bug_id = ? AND field_id = ?",
                         (bug_id, field["id"]))
        ctx.conn.executemany("INSERT INTO bug_custom_values (bug_id, field_id, value)"
                             " VALUES (?, ?, ?)", [(bug_id, field["id"], v) for v in stored])


def _save_custom(ctx, old, new, changes):
    fields = {f["name"]: f for f in custom_fields.active_fields(ctx)}
    changed = {name: stored for name, stored in new.custom.items()
               if name in fields and stored != old.custom.get(name, [])}
    if not changed:
        return
    _write_custom(ctx, new.id, changed, fields)
    for name, stored in changed.items():
        field = fields[name]
        before = old.custom.get(name, [])
        if field["type"] == custom_fields.MULTI_SELECT:
            removed, added = diff(before, stored)
            if removed or added:
                changes[name] = {"removed": ", ".join(removed), "added": ", ".join(added)}
        else:
            note(changes, name, custom_fields.change_text(field, before),
                 custom_fields.change_text(field, stored))


def _save_flags(ctx, old, new, when, changes):
    conn = ctx.conn
    stamp = dates.to_db(when)
    kept = {flag["id"] for flag in new.flags if flag["id"] is not None}
    for flag in old.flags:
        if flag["id"] not in kept:
            conn.execute("DELETE FROM flags WHERE id = ?", (flag["id"],))
    previous = {flag["id"]: flag for flag in old.flags}
    for flag in new.flags:
        if flag["id"] is None:
            flag["created_at"] = flag["modified_at"] = stamp
            flag["id"] = conn.execute(
                "INSERT INTO flags (type_id, status, bug_id, attachment_id, setter_id,"
                " requestee_id, created_at, modified_at) VALUES (?, ?, ?, NULL, ?, ?, ?, ?)"
                " RETURNING id",
                (flag["type_id"], flag["status"], new.id, flag["setter_id"], flag["requestee_id"],
                 stamp, stamp)).fetchone()[0]
            continue
        before = previous[flag["id"]]
        if any(before[key] != flag[key]
               for key in ("type_id", "status", "setter_id", "requestee_id")):
            flag["modified_at"] = stamp
            conn.execute("UPDATE flags SET type_id = ?, status = ?, setter_id = ?,"
                         " requestee_id = ?, modified_at = ? WHERE id = ?",
                         (flag["type_id"], flag["status"], flag["setter_id"],
                          flag["requestee_id"], stamp, flag["id"]))
        elif flag["modified_at"] is None:
            flag["modified_at"] = before["modified_at"]
    ctx.events.flagged(new.id, None, old.flags, new.flags)
    removed, added = diff(bug_flags.summaries(conn, old.flags),
                          bug_flags.summaries(conn, new.flags))
    if removed or added:
        changes["flagtypes.name"] = {"removed": ", ".join(removed), "added": ", ".join(added)}
