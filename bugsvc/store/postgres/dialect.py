"""The PostgreSQL dialect: the engine's spellings of what SQLite writes
otherwise (dialect.py's interface), the schema's introspection and version
table, regular expressions bounded in time, and copying whole tables in
(COPY) and out (a server-side cursor)."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..dialect import (
    TEXT_INDEXED,
    TRIGRAM,
    Connection,
    Dialect,
    TextMatches,
    WorkBudgetExceeded,
    json_pairs,
)
from ..regexp import RegexpBudget, current_work_limit, work_time_limit
from ..schema import run_script
from .sql import translate_script


if TYPE_CHECKING:
    import psycopg


class OnPsycopg(Protocol):
    """A connection of this engine (connection.py's PgConnection, which
    imports this module): its psycopg connection is `raw`, on which its
    transaction's BEGIN is sent by `begun()` (before the first statement);
    `wrote()` counts a write made on `raw` itself; `limit_next_statement()`
    bounds the time of its next statement, `unbound()` lifts that limit."""

    raw: psycopg.Connection[Any]

    def begun(self, also: str = "") -> bool: ...

    def limit_next_statement(self, milliseconds: int) -> None: ...

    def unbound(self) -> None: ...

    def wrote(self) -> None: ...


def _pg(conn: Connection) -> OnPsycopg:
    """`conn` as what it is wherever this dialect is used: a PgConnection."""
    return cast(OnPsycopg, conn)


SCHEMA_VERSION_TABLE = "bugsvc_schema_version"
# The collation whose regular expressions fold case and know character
# classes beyond ASCII (PostgreSQL built with ICU), as the `regex` engine does.
_UNICODE_COLLATION = "und-x-icu"
# Seconds a process keeps PostgreSQL's estimate of the rows a search's
# regular expressions may meet (bound_regexps).
ROW_ESTIMATE_SECONDS = 30.0
# Letters and digits in a row that pg_trgm makes a trigram of.
_TRIGRAM_RUN = re.compile(r"[^\W_]{%d}" % TRIGRAM)
# SQLite's virtual machine instructions a millisecond, about, here: what
# bounded_work's steps are worth in PostgreSQL's time.
STEPS_PER_MILLISECOND = 10_000
# The savepoint of a bounded_work block.
_BOUNDED_WORK = "bounded_work"
# The bugs with an alias the trigram index may find a pattern in.
_ALIASES_HOLDING = "SELECT bug_id FROM bug_aliases WHERE alias ILIKE ?"
# The search patterns of the statements this thread is putting together (the
# time budget's error names the first of them).
_patterns = threading.local()


def _indexed_pattern(column: str, needle: str) -> str | None:
    """The ILIKE pattern of the rows whose `column` (one of TEXT_INDEXED)
    holds `needle`, ASCII letters in any case; None when pg_trgm's index
    cannot serve it.

    ILIKE on text in the "C" collation folds ASCII letters, as lower() does,
    and pg_trgm's GIN index serves it. pg_trgm makes trigrams of letters and
    digits only: a needle without a run of three of them would read the
    whole index, slower than comparing every bug."""
    if column not in TEXT_INDEXED or "\x00" in needle or not _TRIGRAM_RUN.search(needle):
        return None
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class PostgresDialect(Dialect):
    name = "postgresql"
    insertion_order = "ctid"
    candidates_form = "condition"
    # The bug generation: how many committed transactions changed what it
    # watches (schema.sql's bug writes), as text. On a replica, whose
    # replay may make transactions visible in another order than the
    # primary did, the snapshot stands for it (never equal to a count).
    keeps_bug_generation = True
    bug_generation_in_writes = False
    bug_generation_sql = ("CASE WHEN pg_is_in_recovery() THEN pg_current_snapshot()::text"
                          " ELSE ((SELECT count(*) FROM bug_writes)"
                          " + (SELECT value FROM bug_generation WHERE id = 1))::text END")
    # OFFSET 0 keeps the planner from turning the subquery into a hash.
    per_row_subquery_end = " OFFSET 0"
    writes_several_tables = True
    tests_common_comment_words_by_index = True

    def __init__(self, unicode_regexps: bool = True) -> None:
        self.unicode_regexps = unicode_regexps
        self._id_columns: dict[str, bool] = {}
        self._row_estimate: tuple[float, float] | None = None     # (when, rows)

    def has_id_column(self, conn: OnPsycopg, table: str) -> bool:
        """True when `table` has an id column (an INSERT into it gives lastrowid)."""
        known = self._id_columns.get(table)
        if known is None:
            known = self._id_columns[table] = conn.raw.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = $1 AND column_name = 'id'", (table,)).fetchone() is not None
        return known

    def contains(self, haystack: str, needle: str) -> str:
        return f"strpos({haystack}, {needle}) > 0"

    def regexp(self, expr: str, pattern: str) -> tuple[str, list[Any]]:
        _patterns.pending = getattr(_patterns, "pending", [])[-20:] + [pattern]
        operand = f'({expr} COLLATE "{_UNICODE_COLLATION}")' if self.unicode_regexps else expr
        return f"{operand} ~* ?", [are_pattern(pattern)]

    def bound_regexps(self, conn: OnPsycopg, budget: RegexpBudget) -> None:
        """Limit the time of the statement of `budget`'s block (a search)
        to statement_limit's."""
        conn.limit_next_statement(self.statement_limit(conn, budget))

    def statement_limit(self, conn: OnPsycopg, budget: RegexpBudget) -> int:
        """The time limit, in milliseconds, of the statement of `budget`'s
        block (a search), which the caller sets for it: what SQLite's budget
        allows for matching every summary and comment once with a regular
        expression. PostgreSQL cancels a statement that goes over, whatever
        takes the time (SQLite refuses searches too large to plan in the
        first place); the time of a work_time_limit block (bounded_work)
        where that is less. The budget counts as bounded from then on."""
        budget.bounded = True
        budget.patterns = getattr(_patterns, "pending", [])
        _patterns.pending = []
        rows = self._rows_to_match(conn)
        limit = int(1000 * (budget.seconds + budget.per_value * float(rows))) + 1
        work_limit = current_work_limit()
        if work_limit is not None and work_limit < limit:
            budget.work_limited = True
            return work_limit
        return limit

    def _rows_to_match(self, conn: OnPsycopg) -> float:
        """PostgreSQL's estimate of how many bugs and comments there are,
        asked again after ROW_ESTIMATE_SECONDS (an estimate that the
        server itself moves only when it analyzes the tables: not worth a
        round trip on every search)."""
        now = time.monotonic()
        known = self._row_estimate
        if known is not None and now - known[0] < ROW_ESTIMATE_SECONDS:
            return known[1]
        found = conn.raw.execute(
            "SELECT COALESCE(SUM(GREATEST(reltuples, 0)), 0) FROM pg_class"
            " WHERE relname IN ('bugs', 'comments') AND relnamespace ="
            " (SELECT oid FROM pg_namespace WHERE nspname = current_schema())").fetchone()
        rows = float(found[0]) if found is not None else 0.0    # an aggregate: one row
        self._row_estimate = (now, rows)
        return rows

    def text_candidates(self, column: str, needle: str) -> tuple[str, list[Any]] | None:
        pattern = _indexed_pattern(column, needle)
        if pattern is None:
            return None
        if column == "alias":
            return self.among_ids("b.id", _ALIASES_HOLDING), [pattern]
        if column == "comment":
            return (self.among_ids("b.id", "SELECT bug_id FROM comments WHERE body ILIKE ?"),
                    [pattern])
        return f"b.{column} ILIKE ?", [pattern]

    def array_candidates(self, column: str, needle: str) -> tuple[str, list[Any]] | None:
        # Aliases: a bug has any number, and one text may be in most of
        # them (a common prefix). Comments' arrays are only made for a word
        # the planner expects in few (first_text_matches, and the search's
        # common comment words tested by the index instead).
        pattern = _indexed_pattern(column, needle) if column == "alias" else None
        return None if pattern is None else (_ALIASES_HOLDING, [pattern])

    def comments_holding(self, needle: str) -> tuple[str, list[Any]] | None:
        # ILIKE in the "C" collation is that comparison (_indexed_pattern).
        pattern = _indexed_pattern("comment", needle)
        return None if pattern is None else ("c.body ILIKE ?", [pattern])

    def first_text_matches(self, conn: Connection, column: str, needle: str,
                           most: int) -> TextMatches | None:
        # Only comments: a bug's own texts (summary, whiteboard, aliases)
        # are short and one or a few a bug, and their candidates come from
        # the index faster than comparing bugs in id order finds the first
        # ones, where each bug's comments are read. A common word's comments
        # are hundreds of thousands. Reading the index's first rows would
        # cost what reading them all does: a bitmap scan of pg_trgm's index
        # reads every row list of the needle's trigrams before it gives a
        # row (for a common word at 100,000 bugs, 25 ms; then its bugs' ids,
        # 300 ms). The planner's estimate of the rows costs a round trip: it
        # tries the pattern on the column's statistics, where a common text
        # shows (a rare one gets a small default).
        pattern = _indexed_pattern(column, needle) if column == "comment" else None
        if pattern is None:
            return None
        plan = _pg(conn).raw.execute("EXPLAIN (FORMAT JSON) SELECT 1 FROM comments"
                                     " WHERE body ILIKE $1", (pattern,)).fetchone()
        estimate = plan[0][0]["Plan"]["Plan Rows"] if plan is not None else 0
        if estimate > most:
            return TextMatches(common=True, candidates=None)
        return TextMatches(common=False, candidates=self.text_candidates(column, needle))

    @contextmanager
    def bounded_work(self, conn: Connection, steps: int) -> Iterator[None]:
        # PostgreSQL cannot count its work: the block's statements get the
        # time SQLite takes for `steps` (work_time_limit). A statement
        # cancelled by it leaves the transaction failed, so the block is a
        # savepoint, rolled back to on the way out; that also undoes the
        # statement's time limit, back to none (any limit still set is
        # lifted before the savepoint).
        pg = _pg(conn)
        pg.unbound()
        pg.begun(f"SAVEPOINT {_BOUNDED_WORK}")
        with work_time_limit(max(1, steps // STEPS_PER_MILLISECOND)):
            try:
                yield
            except WorkBudgetExceeded:
                pg.begun(f"ROLLBACK TO SAVEPOINT {_BOUNDED_WORK}")
                raise

    def among_ids(self, column: str, query: str) -> str:
        # An array made once (an InitPlan): an index scan can use it inside
        # an OR, which `IN (query)` there cannot.
        return f"{column} = ANY (ARRAY({query}))"

    def has_text_index(self, conn: Connection) -> bool:
        return "bugs_text_trgm_idx" in self.index_names(conn, "bugs")

    def fill_text_index(self, conn: Connection) -> None:
        pass                # CREATE INDEX indexed the bugs already stored

    def has_comment_text_index(self, conn: Connection) -> bool:
        return "comments_body_trgm_idx" in self.index_names(conn, "comments")

    def fill_comment_text_index(self, conn: Connection) -> None:
        pass                # CREATE INDEX indexed the comments already stored

    def blob_text(self, expr: str) -> str:
        # Every byte a character, as SQLite reads a blob as text.
        return f"convert_from({expr}, 'LATIN1')"

    def as_text(self, expr: str) -> str:
        return f"CAST({expr} AS TEXT)"

    def whole_number(self, text: str) -> str:
        leading = r"'^\s*[+-]?[0-9]{1,18}'"
        return (f"(CASE WHEN {text} ~ {leading} THEN CAST(substring({text} FROM {leading})"
                " AS BIGINT) ELSE 0 END)")

    def json_value(self, text: str) -> str:
        return f"CAST({text} AS json)"

    def json_array(self, items: Sequence[str]) -> str:
        return f"json_build_array({', '.join(items)})"

    def json_object(self, pairs: Sequence[tuple[str, str]]) -> str:
        return f"json_build_object({json_pairs(pairs)})"

    def json_list(self, values: Sequence[str], source: str, order: str) -> str:
        item = values[0] if len(values) == 1 else self.json_array(values)
        return f"(SELECT COALESCE(json_agg({item} ORDER BY {order})::text, '[]') {source})"

    def numbers_in(self, text: str, alias: str) -> str:
        return (f"(SELECT CAST(nv AS BIGINT) AS value FROM regexp_split_to_table({text},"
                f" '[^0-9]+') AS ns(nv) WHERE nv <> '' AND length(nv) <= 18) {alias}")

    def skip_locked(self, alias: str) -> str:
        return f" FOR UPDATE OF {alias} SKIP LOCKED"

    def whole_days_between(self, later: str, earlier: str) -> str:
        return (f"CAST(trunc(extract(epoch FROM CAST({later} AS timestamp)"
                f" - CAST({earlier} AS timestamp)) / 86400) AS BIGINT)")

    def stream(self, conn: Connection, sql: str, batch: int) -> Iterator[list[Any]]:
        _pg(conn).begun()
        with _pg(conn).raw.cursor(name="bugsvc_stream") as cursor:
            cursor.itersize = batch
            cursor.execute(sql)
            while True:
                rows = cursor.fetchmany(batch)
                if not rows:
                    return
                yield rows

    def bulk_insert(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        _pg(conn).begun()
        _pg(conn).wrote()
        with _pg(conn).raw.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def reset_ids(self, conn: Connection, tables: Iterable[str]) -> None:
        for table in tables:
            if self.has_id_column(_pg(conn), table):
                conn.execute(f"SELECT setval(pg_get_serial_sequence(?, 'id'),"
                             f" COALESCE(MAX(id), 0) + 1, false) FROM {table}", (table,))

    def script_statements(self, script: str) -> list[str]:
        return translate_script(script)

    def install_schema(self, conn: Connection, script: str) -> None:
        conn.execute(f"CREATE TABLE {SCHEMA_VERSION_TABLE} (version BIGINT NOT NULL)")
        conn.execute(f"INSERT INTO {SCHEMA_VERSION_TABLE} (version) VALUES (0)")
        run_script(conn, script)

    def schema_version(self, conn: Connection) -> int:
        if not self.table_exists(conn, SCHEMA_VERSION_TABLE):
            return 0
        row = conn.execute(f"SELECT version FROM {SCHEMA_VERSION_TABLE}").fetchone()
        return 0 if row is None else row[0]

    def set_schema_version(self, conn: Connection, version: int) -> None:
        conn.execute(f"UPDATE {SCHEMA_VERSION_TABLE} SET version = ?", (int(version),))

    def has_tables(self, conn: Connection) -> bool:
        return conn.execute("SELECT COUNT(*) FROM pg_tables"
                            " WHERE schemaname = current_schema()").fetchone()[0] > 0

    def table_exists(self, conn: Connection, table: str) -> bool:
        return conn.execute("SELECT 1 FROM pg_tables WHERE schemaname = current_schema()"
                            " AND tablename = ?", (table,)).fetchone() is not None

    def column_exists(self, conn: Connection, table: str, column: str) -> bool:
        return column in self.columns(conn, table)

    def index_names(self, conn: Connection, table: str) -> list[str]:
        return [row[0] for row in conn.execute(
            "SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = current_schema()"
            " AND i.tablename = ? AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
            " WHERE c.conname = i.indexname) ORDER BY i.indexname", (table,))]

    def tables(self, conn: Connection) -> list[str]:
        return [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND tablename <> ? ORDER BY tablename", (SCHEMA_VERSION_TABLE,))]

    def columns(self, conn: Connection, table: str) -> list[str]:
        return [row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ?"
            " ORDER BY ordinal_position", (table,))]


# Python's `regex` syntax that PostgreSQL's regular expressions spell otherwise.
_ARE_ESCAPES = {"b": r"\y", "B": r"\Y"}
_ARE_CLASSES = {"L": "alpha", "Lu": "upper", "Ll": "lower", "N": "digit", "Nd": "digit",
                "P": "punct", "Z": "space", "Zs": "space"}
_PROPERTY = re.compile(r"\\([pP])\{(\w+)\}")


@functools.lru_cache(maxsize=256)
def are_pattern(pattern: str) -> str:
    """A search pattern, written in the `regex` engine's syntax (as on
    SQLite), as PostgreSQL's regular expressions spell it: \\b and \\B word
    boundaries become \\y and \\Y, \\p{L}-style classes POSIX classes. What
    PostgreSQL has no spelling for is refused by it as not valid."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            property_match = _PROPERTY.match(pattern, i)
            if property_match and property_match.group(2) in _ARE_CLASSES:
                negated = property_match.group(1) == "P"
                posix = f"[:{_ARE_CLASSES[property_match.group(2)]}:]"
                if in_class:
                    out.append(posix)            # negation inside a class: left unsupported
                else:
                    out.append(f"[^{posix}]" if negated else f"[{posix}]")
                i = property_match.end()
                continue
            escaped = pattern[i + 1]
            out.append(_ARE_ESCAPES.get(escaped, c + escaped) if not in_class else c + escaped)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        if c == "[" and in_class and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end > 0:
                out.append(pattern[i:end + 2])
                i = end + 2
                continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)
