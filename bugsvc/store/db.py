"""Connections, transactions and the schema's version.

One connection per thread (waitress serves each request on a worker thread;
a connection is never shared between threads). One transaction per service
call: `BEGIN IMMEDIATE` for writes, so concurrent writers queue on the busy
timeout instead of failing, and a plain `BEGIN` for reads, so a call sees one
consistent snapshot (WAL mode: readers never wait for the writer). Services
never commit.

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

import functools
import os
import sqlite3
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import regex

_PACKAGE = Path(__file__).resolve().parent.parent
# Installed wheels carry the schema inside the package; a checkout has it at the top.
SCHEMA_PATHS = (_PACKAGE / "schema.sql", _PACKAGE.parent / "schema.sql")

# Version written by schema.sql, which always describes the newest schema.
# A schema change after a release bumps this number, edits schema.sql (for new
# installations) and adds MIGRATIONS[new number]: SQL text, or a function
# taking the connection, that moves an existing file's data forward.
SCHEMA_VERSION = 5


def schema_section(name):
    """The statements of schema.sql between '-- BEGIN name' and '-- END name'
    (a migration that adds a part of the schema runs the very same text)."""
    text = schema_sql()
    start = text.index(f"-- BEGIN {name}\n")
    return text[start:text.index(f"-- END {name}\n", start)]


def _login_throttle(conn):
    """Version 3: failed sign-ins are counted per subject (bugsvc/auth.py)
    instead of logged per address. The failures logged so far are carried
    over, those of an account to its login name and the others to their
    address, before the old log is dropped."""
    def exists(table):
        return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (table,)).fetchone() is not None

    if not exists("login_throttle"):      # a step run twice leaves it as it is
        run_script(conn, schema_section("login throttle"))
    if not exists("login_failures"):
        return
    conn.execute("INSERT INTO login_throttle (subject, failures, last_failure)"
                 " SELECT 'login:' || lower(u.login), COUNT(*), MAX(f.failed_at)"
                 " FROM login_failures f JOIN users u ON u.id = f.user_id GROUP BY lower(u.login)")
    conn.execute("INSERT INTO login_throttle (subject, failures, last_failure)"
                 " SELECT 'address:' || f.ip_address, COUNT(*), MAX(f.failed_at)"
                 " FROM login_failures f LEFT JOIN users u ON u.id = f.user_id WHERE u.id IS NULL"
                 " GROUP BY f.ip_address")
    conn.execute("DROP TABLE login_failures")


def _import_state(conn):
    """Version 4: where an import from a Bugzilla stands
    (bugsvc/importer/state.py). A step run twice leaves the tables as they are."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'import_state'"
                    ).fetchone() is None:
        run_script(conn, schema_section("import state"))


def _notifications(conn):
    """Version 5: mail preferences, user watching, the outbox of
    notifications, webhooks and the one-time tokens mailed to accounts."""
    present = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                           " AND name = 'outbox_events'").fetchone()
    if present is None:                   # a step run twice leaves it as it is
        run_script(conn, schema_section("notifications"))


MIGRATIONS = {
    # 2: the catalog generation counter and its triggers (bugsvc/cache.py).
    2: lambda conn: run_script(conn, schema_section("catalog generation")),
    3: _login_throttle,
    4: _import_state,
    5: _notifications,
}

BUSY_TIMEOUT_MS = 30000


def schema_sql():
    """Return the text of schema.sql."""
    for path in SCHEMA_PATHS:
        if path.exists():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError("schema.sql not found next to the bugsvc package")


class Database:
    """The SQLite file behind the service.

    writers_lock_path: the lock file shared by the worker processes of one
    service (see the module's docstring), or None.
    """

    def __init__(self, path, writers_lock_path=None):
        self.path = str(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._writers_file = _LockFile(writers_lock_path) if writers_lock_path else None
        self._write_depth = 0

    def connect(self):
        """Open and configure a new connection (autocommit mode; we issue BEGIN)."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.create_function("regexp", 2, sql_regexp, deterministic=True)
        return conn

    def connection(self):
        """This thread's connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.connect()
            self._local.conn = conn
        return conn

    def close(self):
        """Close this thread's connection, if any."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self, write=False):
        """Yield this thread's connection inside one transaction.

        Commits when the block ends normally; rolls back on any exception.
        """
        with self._transaction_on(self.connection(), write) as conn:
            yield conn

    @contextmanager
    def separate_transaction(self, write=False):
        """Yield a connection of its own inside one transaction, beside this
        thread's open one: for what must be stored whatever becomes of the
        transaction already open (a failed sign-in counted by a call that
        then fails). Writers still take their turn. Commits when the block
        ends normally; rolls back on any exception; the connection is closed.
        """
        conn = self.connect()
        try:
            with self._transaction_on(conn, write):
                yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction_on(self, conn, write):
        with self._writer_turn() if write else nullcontext():
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def _writer_turn(self):
        """Wait for this process's and this service's other writers."""
        with self._write_lock:
            shared = self._writers_file if self._write_depth == 0 else None
            self._write_depth += 1
            acquired = shared is not None and shared.acquire(BUSY_TIMEOUT_MS / 1000)
            try:
                yield
            finally:
                self._write_depth -= 1
                if acquired:
                    shared.release()

    def version(self):
        """The schema version stored in the file (0 for an empty file)."""
        return self.connection().execute("PRAGMA user_version").fetchone()[0]

    def initialize(self):
        """Create or migrate the schema. Returns True when the file was empty.

        An empty (or missing) file gets schema.sql and SCHEMA_VERSION; an
        older version is moved forward by MIGRATIONS, step by step, all in one
        transaction: either every step is stored or none is. Data is never
        dropped. Errors: SchemaError for a file that is not an SQLite
        database, holds other tables, or has a newer schema than this code.
        """
        try:
            conn = self.connection()
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path} is not a usable SQLite database ({exc}).") from None
        try:
            created = self._bring_up_to_date(conn)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return created

    def _bring_up_to_date(self, conn):
        # Read the version inside the write lock, so two processes starting
        # on the same file do not both install or migrate it.
        current = self.version()
        if current == 0:
            if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
                raise SchemaError(f"{self.path} holds tables but no bugsvc schema version; it is "
                                  "not a bugsvc database. Choose another file with --db.")
            run_script(conn, schema_sql())
            conn.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
            return True
        if current > SCHEMA_VERSION:
            raise SchemaError(f"{self.path} has schema version {current}, newer than this bugsvc "
                              f"understands ({SCHEMA_VERSION}). Upgrade bugsvc to use it; "
                              "the file was not changed.")
        for version in range(current + 1, SCHEMA_VERSION + 1):
            step = MIGRATIONS.get(version)
            if step is None:
                raise SchemaError(f"No migration to schema version {version}; the file was not "
                                  "changed.")
            if callable(step):
                step(conn)
            else:
                run_script(conn, step)
            conn.execute(f"PRAGMA user_version = {int(version)}")
        return False


class _LockFile:
    """An exclusive flock on a file, taken by polling until a deadline (so a
    stuck holder makes writers fail after the busy timeout, as SQLite would).
    Each process opens the file itself: an inherited descriptor would share
    the lock with its parent."""

    POLL_SECONDS = 0.0002

    def __init__(self, path):
        self.path = path
        self._fd = None
        self._pid = None

    def acquire(self, timeout):
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

    def release(self):
        import fcntl
        fcntl.flock(self._fd, fcntl.LOCK_UN)


class SchemaError(Exception):
    """The database file cannot be used by this version of bugsvc."""


def split_script(script):
    """The SQL statements of `script`, each complete (sqlite3.complete_statement)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def run_script(conn, script):
    """Execute every statement of `script` inside the caller's transaction
    (sqlite3's executescript would commit it first)."""
    for statement in split_script(script):
        conn.execute(statement)


# Regular expressions of searches run on the `regex` engine: the syntax of
# Python's `re` (lookarounds and backreferences included, as MySQL 8 and
# PostgreSQL have them) plus POSIX classes such as [[:alpha:]], and, unlike
# `re`, a time limit for each match and matching without the interpreter lock,
# so a pattern that backtracks exponentially cannot hold a serving thread, nor
# every other request with it.
_REGEXP_FLAGS = regex.IGNORECASE | regex.VERSION0
# What a statement may spend matching regular expressions: this much ...
REGEXP_SECONDS = 0.5
# ... plus this much per value matched (a few times what an ordinary pattern
# takes on an ordinary summary or comment), so a search scanning many rows
# with a plain pattern is never cut short, while a pattern slow on every row
# or very slow on one row is stopped after about REGEXP_SECONDS. No single
# match runs longer than REGEXP_SECONDS.
REGEXP_SECONDS_PER_VALUE = 10e-6
_regexp_state = threading.local()
_clock = time.perf_counter


class RegexpTooSlow(Exception):
    """A statement spent its time budget matching regular expressions.

    SQLite reports an exception raised inside its call of REGEXP only as
    sqlite3.OperationalError; `regexp_budget` tells the two apart.
    pattern: the pattern being matched when the budget ran out.
    """

    def __init__(self, pattern):
        super().__init__(f"matching {pattern!r} took too long")
        self.pattern = pattern


class _RegexpBudget:
    """The matching time left to the statements of one `regexp_budget` block."""

    def __init__(self, seconds, per_value):
        self.seconds = seconds
        self.per_value = per_value
        self.spent = 0.0
        self.values = 0
        self.exceeded = None        # the pattern that ran out of time

    def match(self, compiled, text):
        """True when `compiled` matches `text`. Raises RegexpTooSlow."""
        self.values += 1
        left = self.seconds + self.values * self.per_value - self.spent
        if left <= 0:
            self.exceeded = compiled.pattern
            raise RegexpTooSlow(compiled.pattern)
        start = _clock()
        try:
            return compiled.search(text, timeout=min(left, self.seconds),
                                   concurrent=True) is not None
        except TimeoutError:
            self.exceeded = compiled.pattern
            raise RegexpTooSlow(compiled.pattern) from None
        finally:
            self.spent += _clock() - start


@contextmanager
def regexp_budget(seconds=None, per_value=None):
    """Bound the time REGEXP spends in the statements this thread runs
    within the block (all of them together): `seconds` (default
    REGEXP_SECONDS) plus `per_value` (default REGEXP_SECONDS_PER_VALUE) for
    each value matched. A statement that goes over stops with
    sqlite3.OperationalError, which leaves the block as RegexpTooSlow.
    Outside such a block each match has REGEXP_SECONDS on its own."""
    previous = getattr(_regexp_state, "budget", None)
    budget = _regexp_state.budget = _RegexpBudget(
        REGEXP_SECONDS if seconds is None else seconds,
        REGEXP_SECONDS_PER_VALUE if per_value is None else per_value)
    try:
        yield budget
    except sqlite3.OperationalError:
        if budget.exceeded is None:
            raise
        raise RegexpTooSlow(budget.exceeded) from None
    finally:
        _regexp_state.budget = previous


@functools.lru_cache(maxsize=256)
def _compiled(pattern):
    return regex.compile(pattern, _REGEXP_FLAGS)


def compile_regexp(pattern):
    """The compiled form of `pattern` as REGEXP runs it. Errors: regex.error
    (and RecursionError, OverflowError for extreme nesting or counts)."""
    return _compiled(pattern)


def sql_regexp(pattern, value):
    """SQL `value REGEXP pattern` (search operators regexp/notregexp/anywords):
    a case-insensitive search, as MySQL's REGEXP, within the time budget of
    `regexp_budget`. Patterns are checked by the caller; NULL matches
    nothing. Raises RegexpTooSlow when the budget is spent."""
    if pattern is None or value is None:
        return None
    try:
        compiled = _compiled(pattern)
    except regex.error:
        return 0
    budget = getattr(_regexp_state, "budget", None) or _RegexpBudget(REGEXP_SECONDS, 0.0)
    return 1 if budget.match(compiled, value if isinstance(value, str) else str(value)) else 0


def ids_written(conn, table):
    """Tell the store that rows of `table` were inserted with ids chosen by
    the writer (an import keeps the source's bug, comment and attachment
    ids), so the next row inserted without an id gets one above them.
    SQLite's INTEGER PRIMARY KEY always takes the highest id + 1, so nothing
    is to be done here; a store with sequences moves the table's sequence."""
    return None


def placeholders(values):
    """'?, ?, ?' for an IN list of `values` (at least one)."""
    return ", ".join("?" for _ in values)
