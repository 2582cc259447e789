"""The database behind the service: which engine, the schema and its
versions, transactions that are tried again, and the regular expression
function of searches.

Two engines keep the same data with the same SQL: an SQLite file (the
default, sqlite.py) and a PostgreSQL database (postgres.py, the optional
extra `bugsvc[postgres]`). `open_database(location)` picks one: a
`postgresql://` (or `postgres://`) URL names a PostgreSQL database,
anything else an SQLite file. Both give a Database with the same methods
(transaction, separate_transaction, attempts, connection, close, version,
initialize) whose connections run SQL with `?` placeholders, give rows
readable by position and by column name, and carry `conn.dialect`: the one
place where the engines' spellings differ (dialect.py).

One transaction per service call: services never commit. A write
transaction that meets another process's concurrent write (PostgreSQL's
serialization failures and deadlocks) is run again from the start by
`Database.attempts`, which every caller of a whole call uses.
"""

import functools
import itertools
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import regex

_PACKAGE = Path(__file__).resolve().parent.parent
# Installed wheels carry the schema inside the package; a checkout has it at the top.
SCHEMA_PATHS = (_PACKAGE / "schema.sql", _PACKAGE.parent / "schema.sql")

# Version written by schema.sql, which always describes the newest schema.
# A schema change after a release bumps this number, edits schema.sql (for new
# installations) and adds MIGRATIONS[new number]: SQL text (as schema.sql
# writes it; PostgreSQL runs its translation), or a function taking the
# connection, that moves an existing database's data forward.
SCHEMA_VERSION = 8

BUSY_TIMEOUT_MS = 30000
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def is_postgresql(location):
    """True when `location` (--db) names a PostgreSQL database."""
    return str(location).lower().startswith(POSTGRESQL_SCHEMES)


def open_database(location, writers_lock_path=None, **options):
    """The Database at `location`: a PostgreSQL URL or an SQLite file's path.
    Nothing is opened until first use. writers_lock_path: the lock file the
    worker processes of one SQLite service share (ignored for PostgreSQL).
    options: the engine's own (PostgreSQL: pool_size)."""
    if is_postgresql(location):
        from .postgres import PostgresDatabase
        return PostgresDatabase(str(location), **options)
    from .sqlite import SqliteDatabase
    return SqliteDatabase(location, writers_lock_path)


# The name older code and tests use for opening a database.
Database = open_database


def schema_sql():
    """Return the text of schema.sql."""
    for path in SCHEMA_PATHS:
        if path.exists():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError("schema.sql not found next to the bugsvc package")


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
    dialect = conn.dialect
    if not dialect.table_exists(conn, "login_throttle"):   # a step run twice leaves it
        run_script(conn, schema_section("login throttle"))
    if not dialect.table_exists(conn, "login_failures"):
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
    if not conn.dialect.table_exists(conn, "import_state"):
        run_script(conn, schema_section("import state"))


def _notifications(conn):
    """Version 5: mail preferences, user watching, the outbox of
    notifications, webhooks and the one-time tokens mailed to accounts."""
    if not conn.dialect.table_exists(conn, "outbox_events"):   # a step run twice leaves it
        run_script(conn, schema_section("notifications"))


def _ordered_lists(conn):
    """Version 6: aliases and custom field values keep their order in an id
    column of their own (they were read in SQLite's hidden row order, which
    no other engine has). The rows are copied in that order, so every list
    reads as before."""
    dialect = conn.dialect
    for table, columns in (("bug_aliases", "alias, bug_id"),
                           ("bug_custom_values", "bug_id, field_id, value")):
        if dialect.column_exists(conn, table, "id"):
            continue
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_before_ids")
        # The old table's indexes keep their names: drop them before the
        # new table's are made.
        for index in dialect.index_names(conn, f"{table}_before_ids"):
            conn.execute(f"DROP INDEX {index}")
        run_script(conn, schema_section(table))
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns}"
                     f" FROM {table}_before_ids ORDER BY {dialect.insertion_order}")
        conn.execute(f"DROP TABLE {table}_before_ids")


def _bug_text_index(conn):
    """Version 6: the trigram index of summaries and whiteboards that
    substring searches find their candidates with, built over the bugs
    already stored. A step run twice leaves the index as it is."""
    dialect = conn.dialect
    if dialect.has_text_index(conn):
        return
    run_script(conn, schema_section("bug text index"))
    dialect.fill_text_index(conn)


def _request_counts(conn):
    """Version 8: calls counted per subject for rate limits and the
    throttling of account requests (bugsvc/api/limits.py). A step run twice
    leaves the table as it is."""
    if not conn.dialect.table_exists(conn, "request_counts"):
        run_script(conn, schema_section("request counts"))


MIGRATIONS = {
    # 2: the catalog generation counter and its triggers (bugsvc/cache.py).
    2: lambda conn: run_script(conn, schema_section("catalog generation")),
    3: _login_throttle,
    4: _import_state,
    5: _notifications,
    6: _ordered_lists,
    7: _bug_text_index,
    8: _request_counts,
}


class SchemaError(Exception):
    """The database cannot be used by this version of bugsvc."""


class TextRefused(ValueError):
    """A text the engine cannot store (PostgreSQL: one holding the NUL
    character); nothing was written."""


def bring_up_to_date(conn, label):
    """Install or migrate the schema on `conn`, inside the caller's
    transaction (which holds the engine's lock against other processes doing
    the same). Returns True when the database was empty. `label` names the
    database in messages. Errors: SchemaError for a database holding other
    tables, a newer schema than this code, or a missing migration step."""
    dialect = conn.dialect
    current = dialect.schema_version(conn)
    if current == 0:
        if dialect.has_tables(conn):
            raise SchemaError(f"{label} holds tables but no bugsvc schema version; it is "
                              "not a bugsvc database. Choose another one with --db.")
        dialect.install_schema(conn, schema_sql())
        dialect.set_schema_version(conn, SCHEMA_VERSION)
        return True
    if current > SCHEMA_VERSION:
        raise SchemaError(f"{label} has schema version {current}, newer than this bugsvc "
                          f"understands ({SCHEMA_VERSION}). Upgrade bugsvc to use it; "
                          "the database was not changed.")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        step = MIGRATIONS.get(version)
        if step is None:
            raise SchemaError(f"No migration to schema version {version}; the database was not "
                              "changed.")
        if callable(step):
            step(conn)
        else:
            run_script(conn, step)
        dialect.set_schema_version(conn, version)
    return False


def split_script(script):
    """The SQL statements of `script` (written as schema.sql is), each
    complete (sqlite3.complete_statement)."""
    import sqlite3
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
    """Execute every statement of `script` (written as schema.sql is) inside
    the caller's transaction, in the connection's dialect (sqlite3's
    executescript would commit first)."""
    for statement in conn.dialect.script_statements(script):
        conn.execute(statement)


class Attempts:
    """`for attempt in db.attempts(write): with attempt as conn: ...`: the
    block runs in one transaction, and again from the start (in a new
    transaction) when the engine says it met a concurrent transaction it
    cannot be ordered with (a serialization failure or a deadlock), with a
    short random pause before each new try, for at least `tries` tries and
    for as long as `patience` seconds from the first (a busy database keeps
    a write waiting as long as SQLite's busy timeout would). The block must
    not `return` from inside the `with` (its commit could still fail):
    keep its result in a variable. What escapes the block otherwise
    (ServiceError included) rolls it back and leaves the loop."""

    def __init__(self, open_transaction, retryable, tries, patience=0.0):
        self._open = open_transaction
        self._retryable = retryable
        self._tries = tries
        self._give_up_at = time.monotonic() + patience
        self._done = False
        self._manager = None
        self.number = 0

    def __iter__(self):
        for self.number in itertools.count(1):
            yield self
            if self._done:
                return
            time.sleep(_backoff(self.number))

    def _may_try_again(self, exc):
        return self._retryable(exc) and (self.number < self._tries
                                         or time.monotonic() < self._give_up_at)

    def __enter__(self):
        self._manager = self._open()
        return self._manager.__enter__()

    def __exit__(self, kind, exc, tb):
        manager, self._manager = self._manager, None
        try:
            if manager.__exit__(kind, exc, tb):
                self._done = True
                return True
        except Exception as failure:     # noqa: BLE001 - a failed commit or rollback
            if self._may_try_again(failure):
                return True
            raise
        if exc is None:
            self._done = True
            return False
        return self._may_try_again(exc)


def _backoff(number):
    """Seconds to wait before try `number` + 1: random, growing, at most 0.2 s."""
    import random
    return random.uniform(0, min(0.2, 0.002 * 2 ** number))


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
    sqlite3.OperationalError, PostgreSQL its cancelled statement as
    QueryCanceled; `regexp_budget` tells those apart from other failures.
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
        self.patterns = []          # patterns of statements the engine itself bounds

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


class StatementTooSlow(Exception):
    """A statement in a `regexp_budget` block went over the block's time
    (PostgreSQL bounds the whole statement, whatever takes the time)."""


class RegexpInvalid(Exception):
    """The engine refused a search pattern as not valid in its syntax.
    pattern: the pattern (the first of the statement's, when it had several)."""

    def __init__(self, pattern):
        super().__init__(f"{pattern!r} is not a valid regular expression here")
        self.pattern = pattern


def current_regexp_budget():
    """The budget of the `regexp_budget` block this thread is in, or None."""
    return getattr(_regexp_state, "budget", None)


@contextmanager
def regexp_budget(seconds=None, per_value=None):
    """Bound the time REGEXP spends in the statements this thread runs
    within the block (all of them together): `seconds` (default
    REGEXP_SECONDS) plus `per_value` (default REGEXP_SECONDS_PER_VALUE) for
    each value matched. A statement that goes over stops, and leaves the
    block as RegexpTooSlow; a pattern the engine refuses leaves it as
    RegexpInvalid. Outside such a block each match has REGEXP_SECONDS on
    its own."""
    previous = getattr(_regexp_state, "budget", None)
    budget = _regexp_state.budget = _RegexpBudget(
        REGEXP_SECONDS if seconds is None else seconds,
        REGEXP_SECONDS_PER_VALUE if per_value is None else per_value)
    try:
        yield budget
    except RegexpTooSlow:
        raise
    except Exception as exc:
        if budget.exceeded is not None:
            raise RegexpTooSlow(budget.exceeded) from None
        state = getattr(exc, "sqlstate", None)
        if state == _CANCELLED and getattr(budget, "bounded", False):
            if budget.patterns:
                raise RegexpTooSlow(budget.patterns[0]) from None
            raise StatementTooSlow() from None
        if budget.patterns and state == _INVALID_REGEXP:
            raise RegexpInvalid(budget.patterns[0]) from None
        raise
    finally:
        _regexp_state.budget = previous


# SQLSTATEs of a statement cancelled by its time limit, and of a pattern
# the engine's own regular expressions refuse.
_CANCELLED = "57014"
_INVALID_REGEXP = "2201B"


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
    SQLite's INTEGER PRIMARY KEY always takes the highest id + 1; PostgreSQL
    moves the table's id sequence past the highest id."""
    conn.dialect.reset_ids(conn, [table])


def placeholders(values):
    """'?, ?, ?' for an IN list of `values` (at least one)."""
    return ", ".join("?" for _ in values)
