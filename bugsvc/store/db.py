"""The database behind the service: which engine, and transactions that
are tried again. The schema and its versions are schema.py's, the regular
expression function of searches regexp.py's.

Two engines keep the same data with the same SQL: an SQLite file (the
default, sqlite.py) and a PostgreSQL database (postgres/, the optional
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

import itertools
import time

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
        from .postgres.database import PostgresDatabase
        return PostgresDatabase(str(location), **options)
    from .sqlite import SqliteDatabase
    return SqliteDatabase(location, writers_lock_path)


# The name older code and tests use for opening a database.
Database = open_database


class TextRefused(ValueError):
    """A text the engine cannot store (PostgreSQL: one holding the NUL
    character); nothing was written."""


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
