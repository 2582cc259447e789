"""The audit log (Bugzilla's audit_log): every admin change, whatever the
way in (pages, REST, RPC, the command line), is written here inside the
change's transaction. GET /rest/last_audit_time reads its latest time,
GET /rest/audit_log and the audit log page read its entries."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from .. import dates
from .dialect import Connection


class _Changer(Protocol):
    @property
    def id(self) -> int | None: ...


class Changing(Protocol):
    """What the audit log reads of the call making a change (call/context.py's
    Context, above the store): its connection, who is calling, and when."""

    @property
    def conn(self) -> Connection: ...

    @property
    def caller(self) -> _Changer: ...

    @property
    def now(self) -> datetime: ...


CLASS_PREFIX = "Bugzilla::"

# The table and column that name an object of each audited class; the name
# is kept with each entry, so an entry still reads after a rename or a
# deletion. Param entries are named by their field (the parameter).
NAME_COLUMNS = {
    "Classification": ("classifications", "name"),
    "Component": ("components", "name"),
    "Field": ("fields", "name"),
    "FlagType": ("flag_types", "name"),
    "ForgeRepository": ("forge_repositories", "repository"),
    "Group": ("groups", "name"),
    "Keyword": ("keywords", "name"),
    "Milestone": ("milestones", "name"),
    "Product": ("products", "name"),
    "User": ("users", "login"),
    "Version": ("versions", "name"),
    "Webhook": ("webhooks", "name"),
}

# At most this many entries in one reading (a page of the audit log page).
MAX_ENTRIES = 1000


def object_name(conn: Connection, class_name: str, object_id: int,
                field: str | None = None) -> str:
    """The current name of object `object_id` of `class_name` (without
    prefix): "" when the class has no name or the object is gone."""
    if class_name == "Param":
        return field or ""
    table = NAME_COLUMNS.get(class_name)
    if table is None:
        return ""
    row = conn.execute(f"SELECT {table[1]} FROM {table[0]} WHERE id = ?",
                       (object_id,)).fetchone()
    return row[0] if row is not None else ""


def record(ctx: Changing, class_name: str, object_id: int, field: str | None = None,
           removed: object = None, added: object = None, name: str | None = None) -> None:
    """Log one admin change, made by ctx.caller (None: the command line).

    class_name: the object's class without prefix ('Product', 'Group', 'User' ...).
    object_id: the changed object's id. field/removed/added: what changed;
    all None for a creation. name: the object's name, when it is already
    gone from its table (a deletion); looked up otherwise.
    """
    if name is None:
        name = object_name(ctx.conn, class_name, object_id, field)
    ctx.conn.execute(
        "INSERT INTO audit_log (user_id, class, object_id, field, removed, added, at_time,"
        " object_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (ctx.caller.id, CLASS_PREFIX + class_name, object_id, field,
         None if removed is None else str(removed), None if added is None else str(added),
         dates.to_db(ctx.now), name))


def record_changes(ctx: Changing, class_name: str, object_id: int,
                   changes: dict[str, dict[str, str]]) -> None:
    """Log every entry of an update's `changes` answer ({field: {added, removed}})."""
    for field_name, change in changes.items():
        record(ctx, class_name, object_id, field_name, change["removed"], change["added"])


def classes(conn: Connection) -> list[str]:
    """The class names (with prefix) the log holds, sorted."""
    return [row[0] for row in conn.execute("SELECT DISTINCT class FROM audit_log ORDER BY class")]


def entries(conn: Connection, words: Sequence[str] = (), who: str | None = None,
            class_names: Sequence[str] = (), since: datetime | None = None,
            until: datetime | None = None, limit: int = 100,
            offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The log's entries, newest first, as dicts: id, user (login, None for
    the command line), class, object_id, object_name, field, removed, added,
    at_time (a datetime).

    words: each must occur (any case) in the object's name. who: a login
    (any case); the empty string means the command line. class_names: with
    prefix; any of them. since/until: datetimes, both ends included.
    limit: at most MAX_ENTRIES. Returns (entries, total matching).
    """
    where: list[str] = []
    args: list[Any] = []
    for word in words:
        where.append("lower(a.object_name) LIKE ? ESCAPE '\\'")
        args.append("%" + _like_escaped(word.lower()) + "%")
    if who == "":
        where.append("a.user_id IS NULL")
    elif who is not None:
        where.append("lower(u.login) = lower(?)")
        args.append(who)
    if class_names:
        where.append("a.class IN (" + ", ".join("?" for _ in class_names) + ")")
        args.extend(class_names)
    if since is not None:
        where.append("a.at_time >= ?")
        args.append(dates.to_db(since))
    if until is not None:
        where.append("a.at_time <= ?")
        args.append(dates.to_db(until))
    condition = (" WHERE " + " AND ".join(where)) if where else ""
    source = " FROM audit_log a LEFT JOIN users u ON u.id = a.user_id" + condition
    total = conn.execute("SELECT COUNT(*)" + source, args).fetchone()[0]
    rows = conn.execute(
        "SELECT a.id, u.login, a.class, a.object_id, a.object_name, a.field, a.removed,"
        " a.added, a.at_time" + source + " ORDER BY a.at_time DESC, a.id DESC LIMIT ? OFFSET ?",
        args + [min(limit, MAX_ENTRIES), offset]).fetchall()
    found = [{"id": row[0], "user": row[1], "class": row[2], "object_id": row[3],
              "object_name": row[4], "field": row[5], "removed": row[6], "added": row[7],
              "at_time": dates.from_db(row[8])} for row in rows]
    return found, total


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def name_old_entries(conn: Connection) -> None:
    """Schema version 10: entries written before the log kept names get the
    current name of their object (those of deleted objects stay unnamed)."""
    if not conn.dialect.column_exists(conn, "audit_log", "object_name"):
        conn.execute("ALTER TABLE audit_log ADD COLUMN object_name TEXT NOT NULL DEFAULT ''")
    conn.execute("UPDATE audit_log SET object_name = field"
                 " WHERE class = ? AND object_name = ''", (CLASS_PREFIX + "Param",))
    for class_name, (table, column) in NAME_COLUMNS.items():
        if not conn.dialect.table_exists(conn, table):
            continue            # made by a later version (forge_repositories: 12)
        conn.execute(f"UPDATE audit_log SET object_name = COALESCE((SELECT t.{column} FROM"
                     f" {table} t WHERE t.id = audit_log.object_id), '')"
                     " WHERE class = ? AND object_name = ''", (CLASS_PREFIX + class_name,))
