"""Connections to PostgreSQL that run the SQL written for SQLite's sqlite3:
`?` placeholders, whole numbers as bigint (beyond 64 bits: OverflowError,
as sqlite3 raises), booleans and numeric results as SQLite gives them (0/1,
int or float), rows read by position and by column name
(case-insensitively, as sqlite3.Row), and `lastrowid` after an INSERT."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from .. import db
from ..dialect import Params
from ..regexp import current_regexp_budget, outside_regexp_budget
from ..schema import SchemaError
from .sql import array_lists, native_placeholders


try:
    import psycopg
    from psycopg import errors as pg_errors, pq
    from psycopg.adapt import Dumper, Loader, Transformer
    from psycopg.types.numeric import Int8Dumper

    from .prepared import checked, run_bounded_alone, run_prepared
except ImportError:              # the extra is not installed: said when a URL is used
    psycopg = None               # type: ignore[assignment]  # tested by require_driver()

if TYPE_CHECKING:
    from ..regexp import RegexpBudget
    from .dialect import PostgresDialect

_INT8 = (-2 ** 63, 2 ** 63 - 1)
# The most rows a cursor's iteration loads at once (_Cursor.__iter__).
_LOADED_AT_ONCE = 1000
# Whether libpq sends several statements before reading their results
# (libpq 14 and later).
_PIPELINES = psycopg is not None and psycopg.Pipeline.is_supported()
# A transaction's time limit for its statements, in milliseconds (0: none).
_TIME_LIMIT = "SET LOCAL statement_timeout = {}"
# The plans of prepared statements: the one kept for every value, or as
# PostgreSQL chooses (execute_one_plan).
_GENERIC_PLANS = "SET LOCAL plan_cache_mode = force_generic_plan"
_CHOSEN_PLANS = "SET LOCAL plan_cache_mode = auto"
# What sqlite3 says of a whole number beyond 64 bits (OverflowError).
_BEYOND_INT8 = "Python int too large to convert to SQLite INTEGER"


def require_driver() -> None:
    """Errors: SchemaError when psycopg is not installed."""
    if psycopg is None:
        raise SchemaError("PostgreSQL needs the optional packages psycopg and psycopg_pool: "
                          "pip install 'bugsvc[postgres]'")


# Values -----------------------------------------------------------------------------

if psycopg is not None:
    class _BigintDumper(Int8Dumper):
        """Every whole number as bigint, as SQLite's INTEGER (64 bits)."""

        def dump(self, obj: int) -> bytes | bytearray | memoryview | None:
            if not _INT8[0] <= obj <= _INT8[1]:
                raise OverflowError(_BEYOND_INT8)
            return super().dump(obj)

    class _IntArrayDumper(Dumper):
        """An IntArray as PostgreSQL's text for a bigint[] ('{1,2,3}'), the
        text psycopg's generic list dumper makes, made in one step instead
        of one Python call per value (a third of a GET bug's own CPU in its
        bug statement went on its three lists of group ids)."""
        oid = psycopg.postgres.types["int8"].array_oid

        def dump(self, obj: list[int]) -> bytes:
            if min(obj) < _INT8[0] or max(obj) > _INT8[1]:
                raise OverflowError(_BEYOND_INT8)
            return ("{" + ",".join(map(str, obj)) + "}").encode()

    class _BoolDumper(Dumper):
        """True and False as 1 and 0, as sqlite3 stores them."""
        oid = psycopg.postgres.types["int8"].oid

        def dump(self, obj: bool) -> bytes:
            return b"1" if obj else b"0"

    class _BoolLoader(Loader):
        """A boolean result as 1 or 0, as SQLite answers comparisons."""

        def load(self, data: bytes | bytearray | memoryview) -> int:
            return 1 if bytes(data) == b"t" else 0

    class _NumericLoader(Loader):
        """numeric results (sums and averages of integers) as SQLite's:
        int when whole, else float."""

        def load(self, data: bytes | bytearray | memoryview) -> int | float:
            value = Decimal(bytes(data).decode())
            if value == value.to_integral_value():
                return int(value)
            return float(value)


class IntArray(list[int]):
    """An IN list of whole numbers sent as one bigint[] (_as_arrays)."""
    __slots__ = ()


class Row(tuple[Any, ...]):
    """A result row read by position or by column name (case-insensitive),
    as sqlite3.Row."""
    __slots__ = ()
    _index: dict[str, int] = {}
    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if key.__class__ is str:
            index = self._index.get(key)
            if index is None:
                index = self._index.get(key.lower())
                if index is None:
                    raise IndexError("No item with that key")
            return tuple.__getitem__(self, index)
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


@functools.lru_cache(maxsize=4096)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    index = {}
    for position in range(len(names) - 1, -1, -1):    # the first of equal names wins
        index[names[position]] = position
        index[names[position].lower()] = position
    return type("Row", (Row,), {"__slots__": (), "_index": index, "_names": names})


# The row class of each statement's results, by the statement's text and
# its number of columns: their names are read from the first result only,
# not on every query (a bug row has eighty). Forgotten whenever this process
# changes the schema (a table's columns may then be others).
_ROW_CLASSES: dict[tuple[str | None, int], type[Row]] = {}
_ROW_CLASSES_KEPT = 4096


def _result_row_class(cursor: Any) -> type[Row] | None:
    """The row class of the cursor's result (None: no result, or no rows to
    come, as after COPY). The cursor's `statement` (set by PgConnection)
    keeps it for the next results of that statement."""
    result = cursor.pgresult
    if result is None or not result.nfields:
        return None
    key = (getattr(cursor, "statement", None), result.nfields)
    found = _ROW_CLASSES.get(key)
    if found is None:
        # The names straight from the result: cursor.description would
        # build a Column object (with its type's lookup) for each column.
        fname = result.fname
        names = [fname(number) for number in range(result.nfields)]
        if None in names:
            return None
        found = _row_class(tuple(name.decode() for name in names))
        if key[0] is not None:
            if len(_ROW_CLASSES) >= _ROW_CLASSES_KEPT:
                _ROW_CLASSES.clear()
            _ROW_CLASSES[key] = found
    return found


def _row_factory(cursor: Any) -> Callable[[Iterable[Any]], tuple[Any, ...]]:
    return _result_row_class(cursor) or tuple


def _configure(conn: psycopg.Connection[Any]) -> None:
    adapters = conn.adapters
    adapters.register_dumper(int, _BigintDumper)
    adapters.register_dumper(bool, _BoolDumper)
    adapters.register_dumper(IntArray, _IntArrayDumper)
    adapters.register_loader("bool", _BoolLoader)
    adapters.register_loader("numeric", _NumericLoader)
    conn.execute("SET TIME ZONE 'UTC'")
    # A transaction waiting for another's row lock gives up after the
    # busy timeout SQLite's writers wait, instead of hanging.
    conn.execute(f"SET lock_timeout = {int(db.BUSY_TIMEOUT_MS)}")


_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.I)
# A statement that writes nothing: a SELECT (our SQL calls no function that
# writes) or a VALUES list. WITH may lead to a write, so it counts as one.
_READS_ONLY = re.compile(r"\s*(?:SELECT|VALUES)\b", re.I)


@contextmanager
def _engine_errors() -> Iterator[None]:
    """psycopg's errors of a statement's values as sqlite3's: a whole
    number beyond 64 bits, OverflowError; a NUL in a text, db.TextRefused."""
    try:
        yield
    except pg_errors.NumericValueOutOfRange as exc:
        raise OverflowError(str(exc)) from None
    except psycopg.DataError as exc:
        if "NUL" in str(exc):
            raise db.TextRefused(str(exc)) from None
        raise


def _run_simple(raw: Any, sql: str) -> None:
    """Run `sql` (statements taking no values and returning no rows: BEGIN,
    SET LOCAL, COMMIT) as libpq's simple query, without psycopg's cursor:
    a fraction of its CPU. Errors: psycopg's (prepared.checked)."""
    checked(raw, raw.pgconn.exec_(sql.encode()), pq.ExecStatus.COMMAND_OK)


_RETURNING = re.compile(r"\bRETURNING\b", re.I)


def _as_arrays(sql: str, params: Params) -> tuple[str, Params]:
    """`sql` and `params` with each IN list of whole numbers sent as one
    array (sql.array_lists); as given when a list holds anything else (a
    text, a NULL), whose type an array would fix where each value's own
    is inferred."""
    found = array_lists(sql)
    if found is None:
        return sql, params
    text, lists = found
    values = list(params)
    sent: list[Any] = []
    position = 0
    for start, count in lists:
        listed = values[start:start + count]
        for value in listed:
            if value.__class__ is not int:
                return sql, params
        sent.extend(values[position:start])
        sent.append(IntArray(listed))
        position = start + count
    sent.extend(values[position:])
    return text, sent


_SCHEMA_CHANGE = re.compile(r"^\s*(CREATE|ALTER|DROP)\b", re.I)


@functools.lru_cache(maxsize=4096)
def _insert_table(sql: str) -> str | None:
    """The table an INSERT without RETURNING writes to, else None."""
    match = _INSERT.match(sql)
    return match.group(1).lower() if match and not _RETURNING.search(sql) else None


@functools.lru_cache(maxsize=4096)
def _changes_schema(sql: str) -> bool:
    """True for a statement that creates, alters or drops (a table's columns may change)."""
    return _SCHEMA_CHANGE.match(sql) is not None


if psycopg is not None:
    class _Cursor(psycopg.RawCursor[Any]):
        """psycopg's raw cursor (PostgreSQL's own placeholders, `$1`: the
        text is sent as it is, not parsed for psycopg's `%s` again on every
        call; psycopg keeps that parse only for statements up to 4 KiB, and
        a bug's view, with custom fields, is longer) with sqlite3's
        lastrowid: after an INSERT into a table with an id column, the new
        row's id; else None. statement: the SQL text run (PgConnection sets
        it; None for others), under which its results' column names are
        kept."""
        lastrowid: int | None = None
        statement: str | None = None

        def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
            """The rows left: loaded all at once while they are few
            (psycopg's own iteration loads one row a call: half again the
            CPU over a bug list's rows), one at a time beyond _LOADED_AT_ONCE
            (so a long result's rows are not all held as Python objects)."""
            result = self.pgresult
            if result is not None and result.ntuples <= _LOADED_AT_ONCE:
                return iter(self.fetchall())
            return self

        @property
        def description(self) -> list[tuple[Any, ...]] | None:  # type: ignore[override]
            return _description(self)


def _description(cursor: Any) -> list[tuple[Any, ...]] | None:
    """The columns of the cursor's result as sqlite3 gives them: (name,
    None x 6) each, made from the result's names (psycopg's own Column
    objects look up each column's type, which nobody here reads)."""
    result = cursor.pgresult
    if result is None or not result.nfields:
        return None
    found = _result_row_class(cursor)
    if found is None:
        return [((result.fname(number) or b"").decode(), None, None, None, None, None,
                 None) for number in range(result.nfields)]
    return [(name, None, None, None, None, None, None) for name in found._names]


class _ResultRows:
    """The rows of a statement run by libpq's own calls
    (prepared.run_bounded_alone), read as from a cursor: all loaded at
    once (a search's ids). statement: the SQL text run (its results'
    column names are kept under it, as _Cursor's)."""

    lastrowid = None

    def __init__(self, raw: Any, statement: str, result: Any) -> None:
        self.statement = statement
        self.pgresult = result
        loading = Transformer(raw)
        loading.set_pgresult(result)
        self._rows: list[Any] = loading.load_rows(0, result.ntuples,
                                                  _result_row_class(self) or tuple)
        self._next = 0

    @property
    def rowcount(self) -> int:
        return len(self._rows)

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        return _description(self)

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchmany(self, size: int = 1) -> list[Any]:
        rows = self._rows[self._next:self._next + size]
        self._next += len(rows)
        return rows

    def fetchall(self) -> list[Any]:
        rows = self._rows[self._next:]
        self._next = len(self._rows)
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class PgConnection:
    """A psycopg connection running SQL written for SQLite's sqlite3: `?`
    placeholders, execute/executemany returning a cursor, rows by name, and
    `lastrowid` after an INSERT into a table with an id column (the new
    row's id, asked for with RETURNING id)."""

    _trace: Callable[[str], object] | None = None

    def __init__(self, raw: psycopg.Connection[Any], dialect: PostgresDialect) -> None:
        self.raw = raw
        self.dialect = dialect
        # The BEGIN of a transaction not sent yet (see begin()), and whether
        # that transaction only reads (see execute_first()).
        self._pending_begin: str | None = None
        self._pending_read = False
        # True while the statement timeout of a search's statement is set.
        self._bounded = False
        # Statements run that may have written (writes_so_far).
        self._writes = 0
        # Called before the next statement (before_next_statement).
        self._before_next: Callable[[], object] | None = None

    def begin(self, statement: str, read: bool = False) -> None:
        """Begin a transaction with `statement` (a BEGIN), sent just before
        the transaction's first statement: a transaction that runs none
        costs no round trip. (Sending it in one simple query with a first
        statement that takes no values saves a round trip, but that
        statement is then parsed and planned each time instead of
        prepared: in paired runs it saved no CPU of ours and cost the
        server a little more.) read: the transaction only reads
        (execute_first may then run its first statement ahead of it)."""
        self._pending_begin = statement
        self._pending_read = read

    def begun(self, also: str = "") -> bool:
        """Send the pending BEGIN, if any, and `also` (statements taking no
        values, or '') in the same round trip: one simple query. Returns
        True (the transaction has begun on the server)."""
        if self._pending_begin is None:
            if also:
                _run_simple(self.raw, also)
            return True
        statement, self._pending_begin = self._pending_begin, None
        _run_simple(self.raw, f"{statement}; {also}" if also else statement)
        return True

    def limit_next_statement(self, milliseconds: int) -> None:
        """Cancel the transaction's next statement after `milliseconds`
        (the limit stays until unbound() or the transaction's end). A
        BEGIN not sent yet goes in the same round trip: one simple query
        of the two (the limit a whole number, written in it)."""
        self.begun(_TIME_LIMIT.format(int(milliseconds)))

    def execute_first(self, sql: str) -> _Cursor | _ResultRows:
        """Run `sql`, a statement taking no values whose answer any moment's
        snapshot may give, as Connection.execute_first: ahead of a read
        transaction whose BEGIN is not sent yet, on its own (the BEGIN waits
        for the next statement: a read that runs nothing else, a search
        answered from the answers kept, costs no BEGIN and no COMMIT);
        inside the transaction otherwise."""
        cursor = self.execute_ahead(sql, None)
        return cursor if cursor is not None else self.execute(sql)

    def execute_ahead(self, sql: str, params: Params | None) -> _Cursor | _ResultRows | None:
        """Connection.execute_ahead: `sql` on its own while the BEGIN of a
        read transaction is not sent yet (which then waits for the next
        statement, if any); else None. A search's statement (in a
        regexp_budget block that is not bounded yet) gets its time limit in
        the same round trip (_run_bounded_alone), or, where libpq has no
        pipelines, is left to the transaction (None)."""
        if self._before_next is not None:
            # Its checks first: one that reads in the transaction begins it
            # (cache.Generations.confirm_ahead), and then nothing runs ahead.
            self._run_hook()
        if self._pending_begin is None or not self._pending_read:
            return None
        budget = current_regexp_budget()
        if budget is not None and not budget.bounded:
            return self._run_bounded_alone(sql, params, budget) if _PIPELINES else None
        pending, self._pending_begin = self._pending_begin, None
        try:
            return self.execute(sql, params)
        finally:
            self._pending_begin = pending

    def unbound(self) -> None:
        """Lift the time limit set for a search's statement, if one is set."""
        for statement in self._lifting():
            _run_simple(self.raw, statement)

    def _lifting(self) -> list[str]:
        """The statement lifting the time limit set for a search's
        statement, to send now (the limit then counts as lifted); none
        when no limit is set."""
        if not self._bounded:
            return []
        self._bounded = False
        return [_TIME_LIMIT.format(0)]

    def end(self, statement: str) -> None:
        """End the transaction with `statement` (COMMIT or ROLLBACK), unless
        it never began on the server (no statement ran in it)."""
        self._bounded = False
        if self._pending_begin is not None:
            self._pending_begin = None
            return
        if not self.raw.closed:
            _run_simple(self.raw, statement)

    def read_now(self, sql: str) -> tuple[Any, ...]:
        """The first row of `sql`, a SELECT taking no values, run on its own
        (the connection in no transaction), as libpq's prepared statement,
        prepared on the connection the first time: about half the CPU of
        the same statement through psycopg's cursor. Errors: psycopg.Error
        (a statement no longer prepared is prepared again once)."""
        raw = self.raw
        result = run_prepared(raw, sql)
        loading = Transformer(raw)
        loading.set_pgresult(result)
        row: tuple[Any, ...] = loading.load_row(0, tuple)
        return row

    def writes_so_far(self) -> int:
        """Statements run so far other than plain SELECTs, and bulk copies
        (Connection.writes_so_far): counted whether or not they changed a
        row, which only makes a caller look again."""
        return self._writes

    def wrote(self) -> None:
        """Count a write made on `raw` directly (a COPY)."""
        self._writes += 1

    def before_next_statement(self, hook: Callable[[], object] | None) -> None:
        """Connection.before_next_statement."""
        self._before_next = hook

    def _run_hook(self) -> None:
        """Call the hook set by before_next_statement, once."""
        hook, self._before_next = self._before_next, None
        if hook is not None:
            with outside_regexp_budget():     # the statement's limit is its own
                hook()

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Call `callback(sql)` with every statement run (None: stop), as sqlite3 does."""
        self._trace = callback

    def execute(self, sql: str, params: Params | None = None) -> _Cursor:
        return self._execute(sql, params, False)

    def execute_one_plan(self, sql: str, params: Params) -> _Cursor:
        """Connection.execute_one_plan: a statement whose IN lists of ids
        became arrays runs under the generic plan PostgreSQL keeps for it.
        Left to choose, PostgreSQL plans it anew on every run once its first
        runs had short lists (its generic plan assumes longer ones): over a
        millisecond for the bug objects' statement, whose plan (primary key
        lookups) is the same for any list."""
        return self._execute(sql, params, True)

    def _execute(self, sql: str, params: Params | None, one_plan: bool) -> _Cursor:
        if self._before_next is not None:
            self._run_hook()
        if self._trace is not None:
            self._trace(sql)
        cursor = cast(_Cursor, self.raw.cursor())      # the connection's cursor_factory
        cursor.statement = statement = sql
        if not _READS_ONLY.match(sql):
            self._writes += 1
        budget = current_regexp_budget()
        bounded = budget is not None and not budget.bounded
        table = _insert_table(sql)
        with_id = table is not None and self.dialect.has_id_column(self, table)
        if with_id:
            sql += " RETURNING id"
        # Statements sent in the same round trip, before and after this one.
        before: list[str] = []
        after: list[str] = []
        if budget is not None and bounded:
            self._bounded = False                       # the new limit replaces one still set
            self.dialect.bound_regexps(self, budget)    # sends the pending BEGIN with it
        else:
            self.begun()
            before = self._lifting()
        with _engine_errors():
            if params:
                sql, sent = _as_arrays(sql, params)
                if one_plan and sent is not params:
                    before.append(_GENERIC_PLANS)
                    after.append(_CHOSEN_PLANS)
                params = sent
                sql = native_placeholders(sql)
            with self.raw.pipeline() if before and _PIPELINES else nullcontext():
                for text in before:
                    self.raw.execute(text)
                cursor.execute(sql, params or None)
                for text in after:
                    self.raw.execute(text)
        if _changes_schema(statement):
            _ROW_CLASSES.clear()
        if bounded:
            # Only that statement is bounded: the next one of the
            # transaction sends the lifting of the limit ahead of itself in
            # the same round trip (the end of the transaction lifts it
            # anyway).
            self._bounded = True
        if with_id:
            row = cursor.fetchone()
            cursor.lastrowid = row[0] if row is not None else None
        return cursor

    def executemany(self, sql: str, rows: Iterable[Params]) -> _Cursor:
        """Run `sql` once for each of `rows` (one row: as execute, without
        the pipeline psycopg's executemany sets up for several)."""
        if not isinstance(rows, list):
            rows = list(rows)
        if len(rows) == 1:
            return self.execute(sql, rows[0])
        if self._before_next is not None:
            self._run_hook()
        if self._trace is not None:
            self._trace(sql)
        self._writes += 1
        self.begun()
        self.unbound()
        cursor = cast(_Cursor, self.raw.cursor())      # the connection's cursor_factory
        with _engine_errors():
            cursor.executemany(native_placeholders(sql), rows)
        return cursor

    def _run_bounded_alone(self, sql: str, params: Params | None,
                           budget: RegexpBudget) -> _ResultRows:
        """execute_ahead's `sql` (a statement that reads) within `budget`'s
        time limit (dialect.statement_limit), both in one round trip
        (prepared.run_bounded_alone): a BEGIN and a SET LOCAL of the limit
        would cost one of their own, and the COMMIT another."""
        if self._trace is not None:
            self._trace(sql)
        limit = self.dialect.statement_limit(self, budget)
        text, values = sql, list(params or ())
        if values:
            text, sent = _as_arrays(text, values)
            values = list(sent)
        with _engine_errors():
            result = run_bounded_alone(self.raw, native_placeholders(text), values, limit)
        return _ResultRows(self.raw, sql, result)

    def close(self) -> None:
        self.raw.close()
