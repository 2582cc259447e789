"""Process-wide copies of rarely changing data: the parameters, the custom
fields, which statuses are open, product names.

Every change to the tables they come from moves a counter (the catalog
generation, kept by triggers in schema.sql, whoever writes: a call, the
`parameters` command, another worker process). A call reads the counter
once, in its own transaction, and uses the copies made at that generation;
at a new generation they are read again. A call that changed the catalog
itself reads what its transaction sees and keeps nothing, so nothing that is
later rolled back is ever kept (Context.cached).
"""

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .dialect import Connection


T = TypeVar("T")


def generation(conn: Connection) -> int:
    """The catalog generation the connection's transaction sees."""
    return conn.execute("SELECT value FROM catalog_generation WHERE id = 1").fetchone()[0]


def credential_generation(conn: Connection) -> int:
    """The credential generation the connection's transaction sees: moved
    by every change deciding who an API key signs in as (schema.sql's
    credential generation section; accounts/auth.py keeps what it resolved
    at one generation)."""
    return conn.execute("SELECT value FROM credential_generation WHERE id = 1").fetchone()[0]


class Generations:
    """The generations one transaction sees, all read by one statement the
    first time one is asked for: the catalog and credential generations (a
    keyed call needs both: the credential one to resolve its key, the
    catalog one for its copies) and, where the engine keeps it, the bug
    generation (with the other two it decides whether a kept search answer
    is still the answer: bugs/answer_cache.py). conn: the connection,
    inside that transaction."""

    __slots__ = ("_conn", "_values", "_writes")

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._values: tuple[int, int, int | str | None] | None = None
        self._writes = 0

    def _read(self) -> tuple[int, int, int | str | None]:
        if self._values is None:
            sql = ("SELECT (SELECT value FROM catalog_generation WHERE id = 1),"
                   " (SELECT value FROM credential_generation WHERE id = 1)")
            dialect = self._conn.dialect
            with_bugs = dialect.keeps_bug_generation
            if with_bugs:
                sql += ", " + dialect.bug_generation_sql
            self._writes = self._conn.writes_so_far()
            row = self._conn.execute_first(sql).fetchone()
            self._values = (row[0], row[1], row[2] if with_bugs else None)
        return self._values

    @property
    def writes_before(self) -> int:
        """The connection's writes_so_far when the generations were read
        (read now if they were not yet)."""
        self._read()
        return self._writes

    @property
    def catalog(self) -> int:
        """generation(conn)'s value."""
        return self._read()[0]

    @property
    def credential(self) -> int:
        """credential_generation(conn)'s value."""
        return self._read()[1]

    @property
    def bug(self) -> int | str | None:
        """The bug generation (None where the engine keeps none; a value to
        compare for equality only: Dialect.bug_generation_sql)."""
        return self._read()[2]


class CatalogCache:
    """The copies of one process, for the newest generation seen."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._values: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, at: int, name: str, load: Callable[[], T]) -> T:
        """The copy called `name` made at generation `at`; `load()` makes it
        when there is none (and it is kept, replacing older generations')."""
        if self._generation == at:
            value = self._values.get(name, _MISSING)
            if value is not _MISSING:
                return value
        value = load()
        with self._lock:
            if self._generation != at:
                self._generation, self._values = at, {}
            self._values[name] = value
        return value


_MISSING = object()
