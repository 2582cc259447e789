"""What differs between the engines, behind one interface: every SQL
spelling that is not shared by SQLite and PostgreSQL is a method here, and
code outside bugsvc/store/ reaches it as `conn.dialect`.

Everything else is written once, in the SQL both engines run: `?`
placeholders, `INSERT ... RETURNING id` for new ids, `ON CONFLICT ... DO
NOTHING / DO UPDATE` for upserts, `lower(x)` on both sides for
case-insensitive comparisons (both fold ASCII letters only: PostgreSQL's
text columns use the "C" collation), `lower(x) LIKE lower(?) ESCAPE '\\'`
for patterns, `<> 0` for flags stored as integers (PostgreSQL has no
truthy integers), an alias for every subquery in FROM.

The connection the dialect's SQL runs on is here too, as types (Connection,
Cursor, Row: protocols that sqlite.py's SqliteConnection and
postgres/connection.py's PgConnection keep): a connection says its dialect,
a dialect runs SQL on a connection.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeAlias

import orjson


# The values of a statement's `?` placeholders, in order (psycopg and
# sqlite3 also take a mapping for named ones, which bugsvc does not write).
Params: TypeAlias = Sequence[Any] | Mapping[str, Any]


class Row(Protocol):
    """A result row: by position (`row[0]`) or by column name (`row["id"]`)."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """What execute() answers: the statement's rows, read once, and the id
    of the row an INSERT made (None for other statements)."""

    @property
    def lastrowid(self) -> int | None: ...

    @property
    def rowcount(self) -> int: ...

    # The rows are Any: sqlite3's typeshed says so, and what each column holds
    # is the query's to say.
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A connection of one engine, running SQL written with `?` placeholders."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, params: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Params], /) -> Cursor: ...

    def execute_first(self, sql: str, /) -> Cursor:
        """Run `sql`, a statement taking no values whose answer any moment's
        snapshot may give (the generations, store/cache.py), as the first of
        a read transaction: where the engine's BEGIN costs a round trip, the
        statement may run on its own before the transaction begins."""
        ...

    def execute_ahead(self, sql: str, params: Params, /) -> Cursor | None:
        """Run `sql`, a statement that reads, on its own ahead of a read
        transaction whose BEGIN is not sent yet, where the engine's BEGIN
        costs a round trip: its answer is then of a snapshot of its own,
        which a call may use alone but not with anything the transaction
        reads later, unless the transaction first finds the generations it
        carried unmoved (cache.Generations.confirm_ahead). Within a
        regexp_budget block, the budget's time limit holds for it. None
        (nothing run) where the engine's BEGIN costs nothing, or when the
        transaction is no read whose BEGIN is still to be sent: run it with
        execute instead."""
        ...

    def execute_one_plan(self, sql: str, params: Params, /) -> Cursor:
        """Run `sql` as execute does: a statement whose best plan is the
        same whatever its values (rows read by their ids), which the engine
        may then plan once for all of them."""
        ...

    def set_trace_callback(self, callback: Callable[[str], object] | None, /) -> None: ...

    def before_next_statement(self, hook: Callable[[], object] | None, /) -> None:
        """Call `hook()` once, just before the next statement runs (None:
        forget the hook set). Where a statement costs no round trip the
        engine may call it at once."""
        ...

    def writes_so_far(self) -> int:
        """A count that grows with every statement that may have written
        (rows changed, on SQLite) since the connection was opened: equal
        counts mean nothing was written in between."""
        ...

    def close(self) -> None: ...


# The columns the bug text index holds: the bugs' summary and whiteboard,
# the aliases' alias.
TEXT_INDEXED = ("summary", "whiteboard", "alias", "comment")
# Trigram indexes find no text shorter than a trigram.
TRIGRAM = 3


@dataclass(frozen=True)
class TextMatches:
    """What Dialect.first_text_matches found: `common` when the index has
    more rows for the text than the bound (`candidates` is None then);
    otherwise `candidates`, (SQL, args) in the dialect's candidates_form, of
    the bugs of its rows."""
    common: bool
    candidates: tuple[str, list[Any]] | None


class WorkBudgetExceeded(Exception):
    """A statement in a `bounded_work` block went over its budget and stopped."""


class Dialect:
    """The interface; sqlite.py and postgres/dialect.py implement it."""

    name: ClassVar[str]         # "sqlite" or "postgresql"
    # An ORDER BY term giving rows in the order they were stored (migrations only).
    insertion_order: ClassVar[str]
    # True when the engine has a bug generation: a value that every change
    # to what a bug search answers moves, read in a transaction by the SQL
    # expression bug_generation_sql, so that a serving process may keep
    # search answers (bugs/answer_cache.py). SQLite's is a counter moved in
    # each bug write's own transaction (schema.sql's bug generation section:
    # its writers take turns anyway). PostgreSQL's counts the committed
    # transactions that made such changes, each noted in a row of its own
    # (schema.sql's bug writes: a counter row would queue its concurrent
    # writers on the row's lock).
    keeps_bug_generation: ClassVar[bool] = False
    # True when a write transaction may read the bug generation. False on
    # PostgreSQL: its SERIALIZABLE writes that read bug_writes and note
    # themselves in it would fail against each other (each missed the
    # other's row), and writes keep no answers anyway.
    bug_generation_in_writes: ClassVar[bool] = True
    bug_generation_sql: ClassVar[str] = "(SELECT value FROM bug_generation WHERE id = 1)"
    # True when a statement costs no round trip (SQLite runs in the
    # process): many bugs' related lists are then read by one statement per
    # list over all of them (bugs/view.py), which the engine answers faster
    # than a subquery per bug and list; False where each statement is a
    # round trip to a server (PostgreSQL: the subqueries stay in the bugs'
    # one statement).
    reads_lists_apart: ClassVar[bool] = False
    # True when each statement is a round trip to a server (PostgreSQL): a
    # call then takes the generations as this process last saw them and
    # checks them with its first statement (store/cache.py, Generations),
    # a round trip fewer where that statement carries them.
    statements_are_round_trips: ClassVar[bool] = True
    # True when one statement may write several tables (a WITH of
    # data-modifying statements: PostgreSQL), so that writes that go
    # together need one round trip; SQLite's statements write one table.
    writes_several_tables: ClassVar[bool] = False
    # What ends a correlated subquery that is to be looked up for each row of
    # its statement (an index probe), never run once over its whole table
    # into a hash (the visibility subqueries: bugs/visibility.py). SQLite
    # always looks them up per row; PostgreSQL's planner would hash all of
    # bug_groups and all of the caller's CC rows for every statement that
    # checks a few bugs, a cost that grows with the whole table.
    per_row_subquery_end: ClassVar[str] = ""

    # Text ------------------------------------------------------------------------

    def contains(self, haystack: str, needle: str) -> str:
        """SQL true when the text `needle` occurs in `haystack` (both SQL
        expressions), comparing characters exactly."""
        raise NotImplementedError

    def regexp(self, expr: str, pattern: str) -> tuple[str, list[Any]]:
        """(SQL, args): true when the checked search pattern `pattern`
        matches the text `expr` anywhere, ignoring case, within the time
        budget of regexp.regexp_budget."""
        raise NotImplementedError

    # How a search gives the candidates of substring conditions
    # (bugs/search_sql.py): "query", queries of their ids (column `id`),
    # tested with one IN over their UNION ALL (SQLite looks the bugs up by
    # id); or "condition", conditions over bug alias b, joined by OR and AND
    # (PostgreSQL estimates how many bugs each selects and picks its plan,
    # bitmaps of its indexes or the bugs in id order until the LIMIT).
    candidates_form: ClassVar[str]
    # True when the comment text index trails the comments, caught up by
    # index_comment_text (SQLite); False when the engine keeps it with each
    # write (PostgreSQL's pg_trgm index).
    comment_text_index_trails: ClassVar[bool] = False
    # True when a search that goes over all its candidates (a count, a list
    # in another order than the bugs' ids, a report) tests a word common in
    # comments (first_text_matches) with the condition the index serves
    # (comments_holding), in an EXISTS whose plan the engine chooses (every
    # holding comment read once into a hash, or each of a few bugs' comments
    # looked up), and takes no candidates for it (bugs/search_sql.py,
    # Compiler._comments_by_index). PostgreSQL: its candidates of a common
    # word are an array of hundreds of thousands of ids, which each bug its
    # bitmap gives is compared with one by one. SQLite reads a bug's
    # comments through an index, and its candidates are looked up by id.
    tests_common_comment_words_by_index: ClassVar[bool] = False

    def text_candidates(self, column: str, needle: str) -> tuple[str, list[Any]] | None:
        """(SQL, args), in the form of candidates_form, of the bugs whose
        `column` (one of TEXT_INDEXED; for "alias", one of whose aliases;
        for "comment", one of whose comments, private ones too) may contain
        the text `needle` ignoring case,
        found through the engine's trigram index (schema.sql's bug text
        index): every bug for which `contains(lower(column), lower(needle))`
        holds is among them, and a few others may be, so the exact comparison
        is still made. None when the index cannot serve `needle` (fewer
        characters than a trigram has): the caller compares every bug."""
        raise NotImplementedError

    def array_candidates(self, column: str, needle: str) -> tuple[str, list[Any]] | None:
        """(SQL, args) of a query of the bug ids that text_candidates of
        `column` and `needle` holds as an array (among_ids), where the
        engine gives them so for a column whose rows may be many for a
        common text: an array is compared one id at a time with every bug
        that a lossy index beside it in an OR brings, so the caller reads it
        only while it is short (bugs/search_sql.py). None where the
        candidates are no such array."""
        return None

    def comments_holding(self, needle: str) -> tuple[str, list[Any]] | None:
        """(SQL, args) of a condition over comment alias c, served by the
        comment text index, that holds exactly where
        `contains(lower(c.body), lower(needle))` does (for
        tests_common_comment_words_by_index); None when the index cannot serve
        `needle`."""
        return None

    def first_text_matches(self, conn: Connection, column: str, needle: str,
                           most: int) -> TextMatches | None:
        """Whether the trigram index has more than `most` rows of `column`
        that may contain `needle` (as in text_candidates): a common text,
        told cheaply. SQLite reads the rows, one more than `most` at most,
        and gives a rare text's candidates from those it read (the index is
        not asked again); PostgreSQL asks its planner's estimate, for
        comments only. None when the engine does not tell for `column`
        (PostgreSQL: a bug's own texts, whose candidates the index gives
        cheaply however many) or text_candidates has none."""
        return None

    def bounded_work(self, conn: Connection, steps: int) -> AbstractContextManager[None]:
        """A block whose statements stop after about `steps` units of the
        engine's work (leaving it as WorkBudgetExceeded; the transaction
        goes on), so a caller can try a plan that is quick on most data and
        take another one when it is not. Engines that cannot count their
        work run the statements to the end."""
        return nullcontext()

    def among_ids(self, column: str, query: str) -> str:
        """SQL true when `column` is among the ids `query` gives, a condition
        an OR of such conditions can find through indexes."""
        raise NotImplementedError

    def has_text_index(self, conn: Connection) -> bool:
        """True when the database has the bug text index."""
        raise NotImplementedError

    def fill_text_index(self, conn: Connection) -> None:
        """Index the bugs already stored, right after the bug text index was
        made (a migration)."""
        raise NotImplementedError

    def has_comment_text_index(self, conn: Connection) -> bool:
        """True when the database has the comment text index."""
        raise NotImplementedError

    def fill_comment_text_index(self, conn: Connection) -> None:
        """Index the comments already stored, right after the comment text
        index was made (a migration)."""
        raise NotImplementedError

    def comment_text_to_index(self, conn: Connection) -> bool:
        """True when comments wait to be added to the comment text index
        (only where the engine's index trails the comments)."""
        return False

    def index_comment_text(self, conn: Connection, most: int) -> int:
        """Add to the comment text index up to `most` of the comments it
        does not hold yet, in the caller's write transaction, for an engine
        whose index trails the comments (schema.sql's comment text index);
        returns how many were added (0 where the engine keeps its index
        with each write itself)."""
        return 0

    def trail_comment_text_index(self, conn: Connection) -> None:
        """Let the comment text index trail the comments, where the engine
        does so (a migration); nothing where it keeps the index with each
        write."""

    def blob_text(self, expr: str) -> str:
        """The bytes `expr` as text that `contains` and lower() can search
        (attachment contents)."""
        raise NotImplementedError

    def as_text(self, expr: str) -> str:
        """The value `expr` as text (a number as its decimal digits)."""
        raise NotImplementedError

    def whole_number(self, text: str) -> str:
        """The whole number the text `text` starts with (0 when none), as
        SQLite's CAST(text AS INTEGER) reads it."""
        raise NotImplementedError

    # JSON lists ------------------------------------------------------------------

    def json_list(self, values: Sequence[str], source: str, order: str) -> str:
        """A scalar subquery: the JSON array (as text; '[]' when there are
        no rows) of the rows of `source` ("FROM ... WHERE ..."), in the order
        `order` (an ORDER BY list), each the value of `values[0]` or, with
        several expressions, the array of their values."""
        raise NotImplementedError

    def json_value(self, text: str) -> str:
        """The JSON value whose text is the SQL expression `text`, as
        json_object and json_array take their values."""
        raise NotImplementedError

    def json_array(self, items: Sequence[str]) -> str:
        """The JSON array of the values of the SQL expressions `items`
        (numbers, text, NULL, or JSON values)."""
        raise NotImplementedError

    def json_object(self, pairs: Sequence[tuple[str, str]]) -> str:
        """The JSON object of `pairs`: (name, SQL expression of its value,
        as json_array's items), in that order; as_text() of it is its text.
        The names are written into the SQL: the caller's own, never input."""
        raise NotImplementedError

    def numbers_in(self, text: str, alias: str) -> str:
        """A FROM item `alias` with one column `value`: the whole numbers
        listed in the text `text` (an SQL expression; numbers joined by
        commas and spaces, as bug id fields' history is)."""
        raise NotImplementedError

    # Queues (store/outbox.py) ---------------------------------------------------

    def skip_locked(self, alias: str) -> str:
        """The clause ending a SELECT that takes the rows it reads (of the
        table named `alias` in its FROM) for the current transaction,
        passing over rows another transaction holds: several workers
        claiming queue rows at once each get their own without waiting. ''
        where one writer at a time holds the whole database."""
        raise NotImplementedError

    # Dates -----------------------------------------------------------------------

    def whole_days_between(self, later: str, earlier: str) -> str:
        """SQL for the whole days (rounded toward zero) from the stored time
        `earlier` to `later` (both 'YYYY-MM-DD HH:MM:SS' text expressions)."""
        raise NotImplementedError

    # Schema ----------------------------------------------------------------------

    def script_statements(self, script: str) -> list[str]:
        """The statements of `script` (schema.sql's SQL) as this engine runs them."""
        raise NotImplementedError

    def install_schema(self, conn: Connection, script: str) -> None:
        """Create the schema of `script` (schema.sql) in an empty database."""
        raise NotImplementedError

    def schema_version(self, conn: Connection) -> int:
        """The stored schema version (0 for an empty database)."""
        raise NotImplementedError

    def set_schema_version(self, conn: Connection, version: int) -> None:
        raise NotImplementedError

    def has_tables(self, conn: Connection) -> bool:
        """True when the database holds any table."""
        raise NotImplementedError

    def table_exists(self, conn: Connection, table: str) -> bool:
        raise NotImplementedError

    def column_exists(self, conn: Connection, table: str, column: str) -> bool:
        raise NotImplementedError

    def index_names(self, conn: Connection, table: str) -> list[str]:
        """The names of the indexes of `table` that DROP INDEX can drop."""
        raise NotImplementedError

    def tables(self, conn: Connection) -> list[str]:
        """The names of the database's own tables (not the engine's, nor
        full-text indexes' shadow tables)."""
        raise NotImplementedError

    def columns(self, conn: Connection, table: str) -> list[str]:
        """The column names of `table`, in order."""
        raise NotImplementedError

    # Copying whole tables (convert.py) ---------------------------------------------

    def stream(self, conn: Connection, sql: str, batch: int) -> Iterator[list[Any]]:
        """The rows of query `sql`, in lists of at most `batch`, without
        holding them all in memory."""
        raise NotImplementedError

    def bulk_insert(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        """Insert `rows` (tuples in the order of `columns`) into `table`."""
        raise NotImplementedError

    def reset_ids(self, conn: Connection, tables: Iterable[str]) -> None:
        """Make the next id of each of `tables` follow its highest one."""
        raise NotImplementedError


def json_items(text: str) -> list[Any]:
    """The items of a JSON array made by Dialect.json_list ('[]' for none)."""
    return [] if text == "[]" else orjson.loads(text)


def json_pairs(pairs: Sequence[tuple[str, str]]) -> str:
    """The arguments of an SQL function building a JSON object of `pairs`
    (Dialect.json_object): each name as a string literal, then its value.
    Errors: ValueError for a name that is not a plain word."""
    for name, _ in pairs:
        if not name.replace("_", "").isalnum() or not name.isascii():
            raise ValueError(f"not a plain JSON key: {name!r}")
    return ", ".join(f"'{name}', {value}" for name, value in pairs)


def once_per_dialect(make: Callable[[Dialect], str]) -> Callable[[Dialect], str]:
    """`make(dialect)` (a statement's text in that dialect), made the first
    time each dialect asks and kept: the decorator of the statements that
    are written once for every engine from Dialect's spellings."""
    made: dict[str, str] = {}

    @functools.wraps(make)
    def get(dialect: Dialect) -> str:
        text = made.get(dialect.name)
        if text is None:
            text = made[dialect.name] = make(dialect)
        return text
    return get
