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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .dialect import Connection, Dialect


T = TypeVar("T")


# The catalog and credential generations, as two columns of a SELECT.
_GENERATIONS = ("(SELECT value FROM catalog_generation WHERE id = 1),"
                " (SELECT value FROM credential_generation WHERE id = 1)")


def generation(conn: Connection) -> int:
    """The catalog generation the connection's transaction sees."""
    return conn.execute("SELECT value FROM catalog_generation WHERE id = 1").fetchone()[0]


def credential_generation(conn: Connection) -> int:
    """The credential generation the connection's transaction sees: moved
    by every change deciding who an API key signs in as (schema.sql's
    credential generation section; accounts/auth.py keeps what it resolved
    at one generation)."""
    return conn.execute("SELECT value FROM credential_generation WHERE id = 1").fetchone()[0]


def generations_now(db: Any) -> tuple[int, int, int | str]:
    """(catalog, credential, bug) generations the database stands at, read
    by one statement on its own (Database.read_now), where the engine keeps
    a bug generation (both do: Dialect.keeps_bug_generation)."""
    catalog, credential, bug = db.read_now(_generations_sql(db.dialect))
    return catalog, credential, bug


def _generations_sql(dialect: Dialect, bug: bool = True) -> str:
    """The statement reading the catalog and credential generations and,
    where the engine keeps one and `bug`, the bug generation."""
    sql = f"SELECT {_GENERATIONS}"
    if bug and dialect.keeps_bug_generation:
        sql += ", " + dialect.bug_generation_sql
    return sql


class GenerationsMoved(Exception):
    """The generations a call assumed were not those its transaction sees:
    the call is run again from the start (Database.attempts tries it
    again), reading them first."""


class Generations:
    """The generations one transaction sees, all read by one statement the
    first time one is asked for: the catalog and credential generations (a
    keyed call needs both: the credential one to resolve its key, the
    catalog one for its copies) and, where the engine keeps it, the bug
    generation (with the other two it decides whether a kept search answer
    is still the answer: bugs/answer_cache.py). conn: the connection,
    inside that transaction.

    assumed: (catalog, credential) generations to take as the
    transaction's without reading them (those this process read last),
    where a statement is a round trip: a call then runs on them and they
    are checked by the first statement it runs (read with it when that
    statement carries them: carried(), else read on their own just before
    it; a search's statement may run first: checked_later()), or at its
    end (settle()) when it ran none. When they turn out otherwise,
    GenerationsMoved is raised before anything read under them is kept or
    answered. The bug generation is never assumed (it moves with every
    write). on_read: called with (catalog, credential) each time they are
    read or carried.
    bug: False where the transaction must not read the bug generation (a
    write, where the dialect's bug_generation_in_writes is False): it is
    then never read, nor carried (a NULL column stands for it), and `bug`
    gives None.
    """

    __slots__ = ("_conn", "_values", "_writes", "_assumed", "_on_read", "_with_bug")

    def __init__(self, conn: Connection,
                 assumed: tuple[int, int] | None = None,
                 on_read: Callable[[int, int], object] | None = None,
                 bug: bool = True) -> None:
        self._conn = conn
        self._with_bug = bug and conn.dialect.keeps_bug_generation
        self._values: tuple[int, int, int | str | None] | None = None
        self._writes = 0
        self._assumed = assumed
        self._on_read = on_read
        if assumed is not None:
            self._writes = conn.writes_so_far()
            conn.before_next_statement(self.settle)

    def _read(self) -> tuple[int, int, int | str | None]:
        if self._values is None:
            with_bug = self._with_bug
            if self._assumed is None:
                self._writes = self._conn.writes_so_far()
            row = self._conn.execute_first(
                _generations_sql(self._conn.dialect, with_bug)).fetchone()
            self._values = (row[0], row[1], row[2] if with_bug else None)
            self._check(row[0], row[1])
        return self._values

    @property
    def unconfirmed(self) -> bool:
        """True while the generations are assumed and not yet checked."""
        return self._assumed is not None and self._values is None

    def carried(self) -> str | None:
        """While unconfirmed: the SQL of two columns giving the catalog and
        credential generations, for the statement about to run to carry
        them (its caller hands them to confirm() before using its answer,
        and they are no longer read before that statement); else None."""
        if not self.unconfirmed:
            return None
        self._conn.before_next_statement(None)
        return _GENERATIONS

    def carried_with_bug(self, always: bool = False) -> str | None:
        """carried(), with a third column giving the bug generation where
        the engine keeps one (all three handed to confirm()): a search's
        statement, after which its bugs' stamps may be taken as read at
        that generation (bugs/object_cache.py); else None. always: the
        three columns even when the generations were checked already."""
        carried = self.carried()
        if carried is None and always:
            carried = _GENERATIONS
        dialect = self._conn.dialect
        if carried is None or not dialect.keeps_bug_generation:
            return carried
        if not self._with_bug:
            return f"{carried}, NULL"       # the columns as always, the bug generation unread
        return f"{carried}, (SELECT {dialect.bug_generation_sql})"

    @contextmanager
    def checked_later(self) -> Iterator[None]:
        """While unconfirmed, the block's statements run before the check
        (their answers are used only once a later statement of the same
        transaction, or its end, found the generations as assumed): a
        search's statement, whose revisions' statement then carries them."""
        if not self.unconfirmed:
            yield
            return
        self._conn.before_next_statement(None)
        try:
            yield
        finally:
            if self.unconfirmed:
                self._conn.before_next_statement(self.settle)

    def confirm(self, catalog: int, credential: int, bug: int | str | None = None) -> None:
        """Check the assumed generations against those a statement carried
        (see carried(); `bug`: the bug generation, when carried_with_bug()
        carried it). Errors: GenerationsMoved when they differ."""
        self._values = (catalog, credential, bug)
        self._check(catalog, credential)

    def confirm_ahead(self, catalog: int, credential: int, bug: int | str | None) -> None:
        """confirm() the generations carried by a statement run ahead of
        the transaction (Connection.execute_ahead: a snapshot of its own),
        whose answer the call uses with whatever the transaction reads
        later: before the transaction's first statement they are read again
        in it, so that both snapshots are known to hold the same bugs,
        catalogue and credentials. Errors: GenerationsMoved when they
        differ, raised then (the call runs again, reading them first)."""
        self.confirm(catalog, credential, bug)
        carried = self._values

        def read_again() -> None:
            row = self._conn.execute(
                _generations_sql(self._conn.dialect, self._with_bug)).fetchone()
            if (row[0], row[1], row[2] if self._with_bug else None) != carried:
                raise GenerationsMoved()

        self._conn.before_next_statement(read_again)

    def forget_bug(self) -> None:
        """Forget the bug generation carried (by a statement run ahead of
        the transaction, on a snapshot of its own): asked for again, it is
        read in the transaction."""
        if self._values is not None:
            self._values = (self._values[0], self._values[1], None)

    def settle_later(self) -> None:
        """Check the assumed generations before the next statement, as
        before carried() was asked (its statement did not run)."""
        if self.unconfirmed:
            self._conn.before_next_statement(self.settle)

    def forget(self) -> None:
        """Check nothing before the connection's next statement (a try that
        is run again anyway, whose next try reads them)."""
        if self.unconfirmed:
            self._conn.before_next_statement(None)

    def settle(self) -> None:
        """Check the assumed generations, reading them, unless that was done.
        Errors: GenerationsMoved when they were not the transaction's."""
        if self.unconfirmed:
            self._conn.before_next_statement(None)
            self._read()

    def _check(self, catalog: int, credential: int) -> None:
        if self._on_read is not None:
            self._on_read(catalog, credential)
        if self._assumed is not None and self._assumed != (catalog, credential):
            raise GenerationsMoved()

    @property
    def writes_before(self) -> int:
        """The connection's writes_so_far when the generations were read
        (read now if they were not yet), or assumed."""
        if self._assumed is None:
            self._read()
        return self._writes

    @property
    def catalog(self) -> int:
        """generation(conn)'s value (the assumed one while unconfirmed)."""
        return self._assumed[0] if self._assumed is not None else self._read()[0]

    @property
    def credential(self) -> int:
        """credential_generation(conn)'s value (the assumed one while
        unconfirmed)."""
        return self._assumed[1] if self._assumed is not None else self._read()[1]

    def at_hand(self) -> tuple[int, int, int | str] | None:
        """(catalog, credential, bug) generations when all three were read
        or carried already (reading nothing), else None."""
        values = self._values
        if values is None or values[2] is None:
            return None
        return values[0], values[1], values[2]

    @property
    def bug_at_hand(self) -> bool:
        """True when the bug generation was read or carried already: `bug`
        then runs no statement."""
        return self._values is not None and self._values[2] is not None

    @property
    def bug(self) -> int | str | None:
        """The bug generation (None where the engine keeps none; a value to
        compare for equality only: Dialect.bug_generation_sql), read with
        the other two (which are then checked, when assumed)."""
        if not self._with_bug:
            return None
        if self._values is not None and self._values[2] is None:
            self._values = None             # a statement carried the other two only
        if self._values is None:
            self._conn.before_next_statement(None)
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


def new_table(conn: Connection) -> dict[Any, Any]:
    """An empty table of copies made by key, to keep with the catalogue's
    copies (Context.cached's loader; `conn` unused)."""
    return {}


def keep_at_most(kept: dict[Any, Any], key: object, value: object, most: int) -> None:
    """kept[key] = value, `kept` emptied first when it holds `most` already:
    a bound without bookkeeping, for copies cheap to make again."""
    if len(kept) >= most:
        kept.clear()
    kept[key] = value
