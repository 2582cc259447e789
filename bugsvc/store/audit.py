"""The audit log behind GET /rest/last_audit_time: every admin change writes here."""

from datetime import datetime
from typing import Protocol

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


def record(ctx: Changing, class_name: str, object_id: int, field: str | None = None,
           removed: object = None, added: object = None) -> None:
    """Log one admin change.

    class_name: the object's class without prefix ('Product', 'Group', 'User' ...).
    object_id: the changed object's id. field/removed/added: what changed;
    all None for a creation.
    """
    ctx.conn.execute(
        "INSERT INTO audit_log (user_id, class, object_id, field, removed, added, at_time)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (ctx.caller.id, CLASS_PREFIX + class_name, object_id, field,
         None if removed is None else str(removed), None if added is None else str(added),
         dates.to_db(ctx.now)))


def record_changes(ctx: Changing, class_name: str, object_id: int,
                   changes: dict[str, dict[str, str]]) -> None:
    """Log every entry of an update's `changes` answer ({field: {added, removed}})."""
    for field_name, change in changes.items():
        record(ctx, class_name, object_id, field_name, change["removed"], change["added"])
