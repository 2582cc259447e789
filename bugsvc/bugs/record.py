"""A bug's stored state as one object: loaded from its tables, changed in
memory by create and update (with every check on the way), then written back
by `store.save`, which derives the `changes` answer and the history from the
difference between the old and the new record."""

import copy
from dataclasses import dataclass, field

from ..store.dialect import json_items, once_per_dialect


# The bugs columns a record carries, in table order (id excluded).
COLUMNS = ("product_id", "component_id", "version", "target_milestone", "summary", "status",
           "resolution", "is_confirmed", "priority", "severity", "platform", "op_sys",
           "assigned_to", "qa_contact", "reporter", "url", "whiteboard", "dupe_of",
           "creation_time", "last_change_time", "deadline", "estimated_time", "remaining_time",
           "is_cc_accessible", "is_creator_accessible")
_BOOLEAN_COLUMNS = ("is_confirmed", "is_cc_accessible", "is_creator_accessible")


@dataclass
class BugRecord:
    """One bug. Users are ids; times are stored text ('YYYY-MM-DD HH:MM:SS').

    aliases: names in the order they were added. cc, keywords, groups: ids.
    depends_on / blocks: bug ids. see_also: URLs. custom: custom field name
    -> list of stored strings ([] = unset). flags: bug-level flag dicts
    {id (None while new), type_id, status, setter_id, requestee_id,
    created_at, modified_at}.
    """
    id: int | None = None
    product_id: int = 0
    component_id: int = 0
    version: str = ""
    target_milestone: str = "---"
    summary: str = ""
    status: str = ""
    resolution: str = ""
    is_confirmed: bool = True
    priority: str = ""
    severity: str = ""
    platform: str = ""
    op_sys: str = ""
    assigned_to: int = 0
    qa_contact: int | None = None
    reporter: int = 0
    url: str = ""
    whiteboard: str = ""
    dupe_of: int | None = None
    creation_time: str = ""
    last_change_time: str = ""
    deadline: str | None = None
    estimated_time: float = 0.0
    remaining_time: float = 0.0
    is_cc_accessible: bool = True
    is_creator_accessible: bool = True
    aliases: list = field(default_factory=list)
    cc: list = field(default_factory=list)
    keywords: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    depends_on: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    see_also: list = field(default_factory=list)
    custom: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)

    def copy(self):
        return copy.deepcopy(self)


def load(conn, bug_id):
    """The record of bug `bug_id` (which must exist), read by one statement:
    its row, and each of its lists as a JSON array made by the database."""
    row = conn.execute(_load_sql(conn.dialect), (bug_id,)).fetchone()
    values = {name: row[name] for name in COLUMNS}
    for name in _BOOLEAN_COLUMNS:
        values[name] = bool(values[name])
    values["estimated_time"] = float(values["estimated_time"] or 0)
    values["remaining_time"] = float(values["remaining_time"] or 0)
    record = BugRecord(id=bug_id, **values)
    for name, _, _, _ in _LISTS:
        setattr(record, name, json_items(row[name]))
    for name, value in json_items(row["custom"]):
        record.custom.setdefault(name, []).append(value)
    record.flags = [dict(zip(_FLAG_KEYS, flag, strict=True))
                    for flag in json_items(row["flags"])]
    return record


# A record's lists: (attribute, the values of each item, where they are
# read (the bug's alias is b), their order).
_LISTS = (
    ("aliases", ("alias",), "FROM bug_aliases WHERE bug_id = b.id", "id"),
    ("cc", ("user_id",), "FROM bug_cc WHERE bug_id = b.id", "user_id"),
    ("keywords", ("keyword_id",), "FROM bug_keywords WHERE bug_id = b.id", "keyword_id"),
    ("groups", ("group_id",), "FROM bug_groups WHERE bug_id = b.id", "group_id"),
    ("depends_on", ("depends_on",), "FROM dependencies WHERE blocked = b.id", "depends_on"),
    ("blocks", ("blocked",), "FROM dependencies WHERE depends_on = b.id", "blocked"),
    ("see_also", ("url",), "FROM bug_see_also WHERE bug_id = b.id", "id"),
)
_FLAG_KEYS = ("id", "type_id", "status", "setter_id", "requestee_id", "created_at",
              "modified_at")


@once_per_dialect
def _load_sql(dialect):
    """load's statement in `dialect`."""
    lists = [f"{dialect.json_list(list(values), source, order)} AS {name}"
             for name, values, source, order in _LISTS]
    lists.append(dialect.json_list(
        ["f.name", "v.value"], "FROM bug_custom_values v JOIN fields f ON f.id = v.field_id"
        " WHERE v.bug_id = b.id", "f.name, v.id") + " AS custom")
    lists.append(dialect.json_list(
        list(_FLAG_KEYS), "FROM flags WHERE bug_id = b.id AND attachment_id IS NULL", "id")
        + " AS flags")
    columns = ", ".join(f"b.{name}" for name in COLUMNS)
    return f"SELECT {columns}, {', '.join(lists)} FROM bugs b WHERE b.id = ?"
