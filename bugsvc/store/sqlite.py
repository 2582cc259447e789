"""The SQLite engine: one file, one writer at a time.

Reads run on a connection per thread (waitress serves each request on a
worker thread). One transaction per service call: `BEGIN IMMEDIATE` for
writes, so concurrent writers queue on the busy timeout instead of failing,
and a plain `BEGIN` for reads, so a call sees one consistent snapshot (WAL
mode: readers never wait for the writer). Writes are never run again:
SQLite runs one writer at a time, so none meets another.

The write transactions of a process all run on one connection of its own,
passed from writer to writer with their turn (below): a connection drops its
whole page cache when it begins a transaction after another connection
wrote, so with a connection per thread every write read each page it needed
from the operating system again; the writers' connection keeps its pages
from one write to the next (until another process writes).

Writers first queue on a lock of their own: SQLite's busy handler polls
with growing sleeps (1, 2, 5, 10 ... 100 ms), which under load makes some
writers wait far longer than the writes before them took; a lock hands the
write over at once. Threads of one process share a thread lock; the worker
processes of one service (`--workers`) also take turns on an flock of a lock
file their parent made (polled every 0.2 ms; the kernel drops it when a
worker dies). Other processes (the `parameters` command, a second service)
still meet on SQLite's lock and its busy timeout, as does a writer that
waited for the lock file for the whole busy timeout.
"""

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, cast

from . import db
from .dialect import (
    TEXT_INDEXED,
    TRIGRAM,
    Connection,
    Dialect,
    Params,
    TextMatches,
    WorkBudgetExceeded,
    json_pairs,
)
from .regexp import sql_regexp
from .schema import SchemaError, run_script, schema_section, split_script


# SQLite's messages for statements beyond its size limits.
_SIZE_LIMITS = ("too many SQL variables", "Expression tree is too large",
                "parser stack overflow", "too many terms in compound SELECT",
                "string or blob too big", "LIKE or GLOB pattern too complex",
                "too many columns", "at most 64 tables", "too many FROM clause terms",
                "too many arguments on function")


# Page cache of each connection, in KiB (SQLite's default is 2,000): at a
# million bugs the inner pages of the tables and indexes a bug's answer
# reads no longer fit in the default one, and every page it dropped is read
# from the operating system again. Measured with bench.scale (1,000,000
# bugs against 100,000, same run, a loaded host): the 50-bug search cost
# 36% more CPU per request with the default, 23% with 6 MB, none with 8 MB;
# but each thread has its own connection, and with 6 MB a process reached
# 151 MB after the mixed load at 1,000,000 bugs (150 MB is the bound): 4 MB,
# 32 MB at most for 8 threads.
CACHE_KIB = 4096
# WAL pages after which a committing writer copies the log into the
# database file itself (SQLite's automatic checkpoint; its default is 1,000).
# That checkpoint runs inside the commit, so the writer still holds this
# service's write lock while it copies the pages and syncs the file, and
# every other writer waits: on the development machine, 3,000 comment
# transactions in a row averaged 0.70 ms per COMMIT with it (p99 14 ms, the
# longest 244 ms) and 0.15 ms with a checkpoint made between them instead.
# The delivery worker checkpoints after each round (Database.checkpoint),
# outside any transaction; the automatic one is kept for a process without
# a delivery worker, at a size such rounds do not reach.
AUTOCHECKPOINT_PAGES = 4000
# Virtual machine instructions between two calls of a bounded_work
# block's progress handler.
_STEPS_PER_CALL = 1000
# The FTS5 table of each indexed text column (dialect.TEXT_INDEXED).
_FTS_TABLES = {"summary": "bugs_text_fts", "whiteboard": "bugs_text_fts",
               "alias": "bug_aliases_fts", "comment": "comments_fts"}
# The highest id of a comment in the comment text index, which holds every
# comment up to it and none above it (schema.sql's comment text index): its
# table of sizes has one row for each comment indexed.
_COMMENTS_INDEXED_UPTO = "(SELECT COALESCE(MAX(id), 0) FROM comments_fts_docsize)"
# The shortest needle asked for as trigrams NEAR each other (_substring_query):
# a shorter one is a phrase of at most three trigrams anyway.
NEAR_FROM = 6


def _fts_match(column: str, needle: str) -> tuple[str, str] | None:
    """(FTS5 table, MATCH expression) finding the rows whose `column` may
    contain `needle` ignoring case; None when the trigram index cannot
    serve it (too short, or a NUL in it).

    FTS5's trigram tokenizer folds the case of every letter, as lower()
    does for ASCII ones: its matches include every exact one. The FTS5 row
    id is the row's id."""
    if column not in TEXT_INDEXED or len(needle) < TRIGRAM or "\x00" in needle:
        return None
    query = _substring_query(needle)
    table = _FTS_TABLES[column]
    if table == "bugs_text_fts":
        query = f"{column} : {query}"
    return table, query


def _substring_query(needle: str) -> str:
    """An FTS5 query of the trigram index that matches every text holding
    `needle` (at least TRIGRAM characters), and few others.

    A phrase in double quotes (doubled inside) is taken literally: its
    trigrams in a row are the substring. FTS5 reads the list of every
    trigram of a phrase, though, and in a long text of common words each
    list holds most texts (`"machine. Needinfo"`, 15 trigrams: 180 ms at
    5,000,000 comments). A longer needle is asked for as its first, middle
    and last trigrams NEAR each other: any order, no more tokens between
    the first and the last than the needle has between them (one trigram
    starts at each character). That is three lists (38 ms there), and the
    exact comparison the search makes anyway drops the few texts it
    matches without the substring."""
    if len(needle) < NEAR_FROM:
        return _quoted(needle)
    last = len(needle) - TRIGRAM
    picked = " ".join(_quoted(needle[start:start + TRIGRAM])
                      for start in sorted({0, last // 2, last}))
    return f"NEAR({picked}, {last - 1})"


def _quoted(text: str) -> str:
    """`text` as an FTS5 string: taken literally, tokenized as a phrase."""
    return '"' + text.replace('"', '""') + '"'


def _index_rows(table: str) -> str:
    """A query of the rows (column `row_id`) of the FTS5 table `table` that
    its MATCH expression (one `?`) finds."""
    return f"SELECT rowid AS row_id FROM {table} WHERE {table} MATCH ?"


def _bugs_of_index_rows(column: str, rows: str, args: list[Any]) -> tuple[str, list[Any]]:
    """(SQL, args): the ids (column `id`) of the bugs of the text index rows
    of `column` that the query `rows` (column `row_id`) gives.

    The rows come first, each row's own one looked up after it (a CROSS
    JOIN keeps that order): a LIMIT then stops after as many rows, where
    `id IN (rows)` would first read them all (5,001 of a common word's
    comments at a million bugs: 8 ms against 140)."""
    if column == "alias":
        return (f"SELECT ba.bug_id AS id FROM ({rows}) AS matched"
                " CROSS JOIN bug_aliases ba ON ba.id = matched.row_id", args)
    if column == "comment":
        # The bugs of the comments the index does not hold yet are
        # candidates too, their text unread: the search compares only the
        # comments the caller may see, on every candidate.
        return (f"SELECT c.bug_id AS id FROM ({rows}) AS matched"
                " CROSS JOIN comments c ON c.id = matched.row_id"
                " UNION ALL SELECT c.bug_id AS id FROM comments c"
                f" WHERE c.id > {_COMMENTS_INDEXED_UPTO}", args)
    return f"SELECT row_id AS id FROM ({rows}) AS matched", args


class SqliteDialect(Dialect):
    name = "sqlite"
    insertion_order = "rowid"
    candidates_form = "query"
    comment_text_index_trails = True
    keeps_bug_generation = True
    reads_lists_apart = True
    statements_are_round_trips = False

    def contains(self, haystack: str, needle: str) -> str:
        return f"instr({haystack}, {needle}) > 0"

    def regexp(self, expr: str, pattern: str) -> tuple[str, list[Any]]:
        return f"{expr} REGEXP ?", [pattern]

    def text_candidates(self, column: str, needle: str) -> tuple[str, list[Any]] | None:
        match = _fts_match(column, needle)
        if match is None:
            return None
        table, query = match
        return _bugs_of_index_rows(column, _index_rows(table), [query])

    def first_text_matches(self, conn: Connection, column: str, needle: str,
                           most: int) -> TextMatches | None:
        # FTS5 gives its matches one by one in row id order: the LIMIT stops
        # it after one more than `most`, whatever the whole number is. A rare
        # text's rows are passed back as a JSON array, so that the search
        # does not ask the index again. Each comment the index does not hold
        # yet may contain it (text_candidates): counted, and a candidate
        # anyway.
        match = _fts_match(column, needle)
        if match is None:
            return None
        table, query = match
        rows = _index_rows(table)
        if table == "comments_fts":
            rows += (" UNION ALL SELECT NULL AS row_id FROM comments c"
                     f" WHERE c.id > {_COMMENTS_INDEXED_UPTO}")
        counted, listed = conn.execute(
            "SELECT COUNT(*), json_group_array(row_id) FILTER (WHERE row_id IS NOT NULL)"
            f" FROM ({rows} LIMIT ?) AS read", (query, int(most) + 1)).fetchone()
        if counted > most:
            return TextMatches(common=True, candidates=None)
        return TextMatches(common=False, candidates=_bugs_of_index_rows(
            column, "SELECT value AS row_id FROM json_each(?)", [listed]))

    @contextmanager
    def bounded_work(self, conn: Connection, steps: int) -> Iterator[None]:
        # The progress handler runs every _STEPS_PER_CALL virtual machine
        # instructions; a true answer stops the statement as "interrupted".
        calls_left = steps // _STEPS_PER_CALL

        def spend() -> bool:
            nonlocal calls_left
            calls_left -= 1
            return calls_left < 0

        raw = cast(sqlite3.Connection, conn)
        raw.set_progress_handler(spend, _STEPS_PER_CALL)
        try:
            yield
        except sqlite3.OperationalError as exc:
            if calls_left < 0 and "interrupted" in str(exc):
                raise WorkBudgetExceeded() from None
            raise
        finally:
            raw.set_progress_handler(None, 0)

    def among_ids(self, column: str, query: str) -> str:
        return f"{column} IN ({query})"

    def has_text_index(self, conn: Connection) -> bool:
        return self.table_exists(conn, "bugs_text_fts")

    def fill_text_index(self, conn: Connection) -> None:
        conn.execute("INSERT INTO bugs_text_fts (bugs_text_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO bug_aliases_fts (bug_aliases_fts) VALUES ('rebuild')")

    def has_comment_text_index(self, conn: Connection) -> bool:
        return self.table_exists(conn, "comments_fts")

    def fill_comment_text_index(self, conn: Connection) -> None:
        conn.execute("INSERT INTO comments_fts (comments_fts) VALUES ('rebuild')")

    def comment_text_to_index(self, conn: Connection) -> bool:
        return conn.execute(f"SELECT 1 FROM comments WHERE id > {_COMMENTS_INDEXED_UPTO}"
                            " LIMIT 1").fetchone() is not None

    def index_comment_text(self, conn: Connection, most: int) -> int:
        # The comments above the index's highest id, oldest first: after
        # them, the index again holds every comment up to its highest id.
        cursor = conn.execute(
            "INSERT INTO comments_fts (rowid, body) SELECT id, body FROM comments"
            f" WHERE id > {_COMMENTS_INDEXED_UPTO} ORDER BY id LIMIT ?", (int(most),))
        added: int = cursor.rowcount
        return added

    def trail_comment_text_index(self, conn: Connection) -> None:
        if not self.has_comment_text_index(conn):
            return          # made later by its own step, with the triggers of today
        for event in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER IF EXISTS comments_fts_{event}")
        run_script(conn, schema_section("comment text index triggers"))

    def blob_text(self, expr: str) -> str:
        return expr

    def as_text(self, expr: str) -> str:
        return expr             # SQLite's text functions read numbers as text

    def whole_number(self, text: str) -> str:
        return f"CAST({text} AS INTEGER)"

    def json_value(self, text: str) -> str:
        return f"json({text})"

    def json_array(self, items: Sequence[str]) -> str:
        return f"json_array({', '.join(items)})"

    def json_object(self, pairs: Sequence[tuple[str, str]]) -> str:
        return f"json_object({json_pairs(pairs)})"

    def json_list(self, values: Sequence[str], source: str, order: str) -> str:
        named = ", ".join(f"{value} AS j{n}" for n, value in enumerate(values))
        item = "j0" if len(values) == 1 else \
            self.json_array([f"j{n}" for n in range(len(values))])
        # A subquery's ORDER BY holds for the aggregate over it: SQLite
        # never flattens such a subquery.
        return f"(SELECT json_group_array({item}) FROM (SELECT {named} {source} ORDER BY {order}))"

    def numbers_in(self, text: str, alias: str) -> str:
        listed = f"'[' || {text} || ']'"
        return f"json_each(CASE WHEN json_valid({listed}) THEN {listed} ELSE '[]' END) {alias}"

    def skip_locked(self, alias: str) -> str:
        return ""               # a write transaction holds the whole file

    def whole_days_between(self, later: str, earlier: str) -> str:
        return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"

    def script_statements(self, script: str) -> list[str]:
        return split_script(script)

    def install_schema(self, conn: Connection, script: str) -> None:
        run_script(conn, script)

    def schema_version(self, conn: Connection) -> int:
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        return version

    def set_schema_version(self, conn: Connection, version: int) -> None:
        conn.execute(f"PRAGMA user_version = {int(version)}")

    def has_tables(self, conn: Connection) -> bool:
        return bool(conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] > 0)

    def table_exists(self, conn: Connection, table: str) -> bool:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (table,)).fetchone() is not None

    def column_exists(self, conn: Connection, table: str, column: str) -> bool:
        return column in self.columns(conn, table)

    def index_names(self, conn: Connection, table: str) -> list[str]:
        return [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
            " AND sql IS NOT NULL ORDER BY name", (table,))]

    def tables(self, conn: Connection) -> list[str]:
        shadows = {row[0] + suffix for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'")
            for suffix in ("_data", "_idx", "_content", "_docsize", "_config")}
        return [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name") if row[0] not in shadows]

    def columns(self, conn: Connection, table: str) -> list[str]:
        return [row[1] for row in conn.execute(
            "SELECT * FROM pragma_table_info(?) ORDER BY cid", (table,))]

    def stream(self, conn: Connection, sql: str, batch: int) -> Iterator[list[Any]]:
        cursor = conn.execute(sql)
        while True:
            rows = cursor.fetchmany(batch)
            if not rows:
                return
            yield rows

    def bulk_insert(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)})"
                         f" VALUES ({db.placeholders(columns)})", rows)

    def reset_ids(self, conn: Connection, tables: Iterable[str]) -> None:
        pass                # an INTEGER PRIMARY KEY goes on from the highest id itself


DIALECT = SqliteDialect()


class SqliteConnection(sqlite3.Connection):
    """sqlite3's connection, which also says its dialect."""
    dialect = DIALECT

    def writes_so_far(self) -> int:
        """Rows inserted, changed or deleted since the connection opened
        (triggers' included): Connection.writes_so_far."""
        return self.total_changes

    def before_next_statement(self, hook: Callable[[], object] | None) -> None:
        """Connection.before_next_statement: `hook` is called at once (a
        statement costs SQLite no round trip)."""
        if hook is not None:
            hook()

    def execute_first(self, sql: str) -> sqlite3.Cursor:
        """Connection.execute_first: in the transaction, whose BEGIN costs
        SQLite no round trip."""
        return self.execute(sql)

    def execute_ahead(self, sql: str, params: Params) -> None:
        """Connection.execute_ahead: never (SQLite's BEGIN costs no round
        trip)."""
        return None

    def execute_one_plan(self, sql: str, params: Params) -> sqlite3.Cursor:
        """Connection.execute_one_plan: SQLite plans a statement when it is
        prepared, whatever the values."""
        return self.execute(sql, params)


class SqliteDatabase(db.Database[SqliteConnection]):
    """The SQLite file behind the service.

    writers_lock_path: the lock file shared by the worker processes of one
    service (see the module's docstring), or None. pool_size is not used:
    each thread has its own connection.
    """

    name = "SQLite"
    dialect = DIALECT
    is_file = True
    can_backup = True
    writers_take_turns = True

    def __init__(self, location: object, writers_lock_path: str | None = None,
                 pool_size: int | None = None, replicas: Sequence[object] = (),
                 replica_max_lag: float | None = None) -> None:
        if replicas:
            raise SchemaError("read replicas (--db-replica) are PostgreSQL's streaming "
                              "replicas: they need a PostgreSQL database as --db")
        super().__init__(location)
        self.path = self.location
        self._write_lock = threading.RLock()
        self._writers_file = _LockFile(writers_lock_path) if writers_lock_path else None
        self._write_depth = 0
        # The process's connection for write transactions (and the process
        # that made it: a worker process forked after it makes its own).
        self._writer: SqliteConnection | None = None
        self._writer_pid: int | None = None

    def connect(self) -> SqliteConnection:
        """Open and configure a new connection (autocommit mode; we issue BEGIN)."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=db.BUSY_TIMEOUT_MS / 1000, factory=SqliteConnection)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.create_function("regexp", 2, sql_regexp, deterministic=True)
        return conn

    def checkpoint(self) -> None:
        # PASSIVE: copies what no reader still needs, never waits (a
        # checkpoint already running elsewhere makes it return at once).
        self.connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    def in_transaction(self) -> bool:
        """True while this thread is inside a transaction: on its own
        connection, or a write transaction on the writers' connection."""
        conn = getattr(self._local, "conn", None)
        return (conn is not None and conn.in_transaction) or super().in_transaction()

    def transaction(self, write: bool = False, queue: bool = False,
                    locked: bool = False) -> AbstractContextManager[SqliteConnection]:
        """Database.transaction: reads on this thread's connection; write,
        queue and locked transactions on the process's writers' connection
        (see the module's docstring), all as writes: SQLite's writers take
        turns anyway."""
        if not (write or queue or locked):
            return self._transaction_on(self.connection(), db.READ)
        return self._transaction_on(self._writers_connection(),
                                    db.QUEUE if queue else db.WRITE)

    def _writers_connection(self) -> SqliteConnection:
        """The process's connection for write transactions, opened on first
        use. Only a thread holding the writers' turn uses it."""
        with self._write_lock:
            if self._writer is None or self._writer_pid != os.getpid():
                # One a parent process made is left alone: it is the parent's.
                self._writer, self._writer_pid = self.connect(), os.getpid()
            return self._writer

    def close(self) -> None:
        """Close this thread's own connection and the writers' one."""
        super().close()
        with self._write_lock:
            if self._writer is not None and self._writer_pid == os.getpid():
                self._writer.close()
            self._writer = self._writer_pid = None

    @staticmethod
    def statement_too_large(exc: BaseException) -> bool:
        """True when `exc` is SQLite refusing a statement for its size."""
        return (isinstance(exc, (sqlite3.OperationalError, sqlite3.DataError))
                and str(exc).startswith(_SIZE_LIMITS))

    # A transaction: writers (queue transactions too: a write transaction
    # holds the whole file) take their turn, then BEGIN IMMEDIATE; readers
    # BEGIN a snapshot.

    def _writer_turn(self, mode: str) -> AbstractContextManager[object]:
        return nullcontext() if mode == db.READ else self._take_writers_turn()

    def _begin(self, conn: SqliteConnection, mode: str) -> None:
        conn.execute("BEGIN" if mode == db.READ else "BEGIN IMMEDIATE")

    def _commit(self, conn: SqliteConnection) -> None:
        conn.execute("COMMIT")

    def _rollback(self, conn: SqliteConnection) -> None:
        conn.execute("ROLLBACK")

    @contextmanager
    def _take_writers_turn(self) -> Iterator[None]:
        """Wait for this process's and this service's other writers."""
        with self._write_lock:
            shared = self._writers_file if self._write_depth == 0 else None
            self._write_depth += 1
            acquired = shared is not None and shared.acquire(db.BUSY_TIMEOUT_MS / 1000)
            try:
                yield
            finally:
                self._write_depth -= 1
                if shared is not None and acquired:
                    shared.release()

    @contextmanager
    def bulk_transaction(self) -> Iterator[SqliteConnection]:
        """One write transaction for copying whole tables in (convert.py):
        foreign keys are checked at its end, not row by row."""
        conn = self.connection()
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path} is not a usable SQLite database ({exc}).") from None
        with self._transaction_on(conn, db.WRITE):
            conn.execute("PRAGMA defer_foreign_keys = ON")
            yield conn

    @contextmanager
    def _install_transaction(self) -> Iterator[SqliteConnection]:
        # Inside the write lock, so two processes starting on the same file
        # do not both install or migrate it.
        try:
            conn = self.connection()
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path} is not a usable SQLite database ({exc}).") from None
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


class _LockFile:
    """An exclusive flock on a file, taken by polling until a deadline (so a
    stuck holder makes writers fail after the busy timeout, as SQLite would).
    Each process opens the file itself: an inherited descriptor would share
    the lock with its parent."""

    POLL_SECONDS = 0.0002

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self._pid: int | None = None

    def acquire(self, timeout: float) -> bool:
        """True once held; False when unsupported or `timeout` seconds passed."""
        try:
            import fcntl
        except ImportError:                  # Windows: no workers there anyway
            return False
        if self._pid != os.getpid():
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(self.POLL_SECONDS)

    def release(self) -> None:
        import fcntl
        fcntl.flock(self._fd, fcntl.LOCK_UN)
