"""A PostgreSQL database behind the service: the pool of connections,
transactions in the isolation each needs, tries of a write that met a
concurrent one, installing the schema under an advisory lock."""

import re
import threading
from contextlib import contextmanager

from .. import db
from ..schema import SchemaError, bring_up_to_date
from .connection import PgConnection, _configure, _Cursor, _row_factory, pg_errors, psycopg, \
    require_driver
from .dialect import _UNICODE_COLLATION, PostgresDialect

# Transactions: see the module's docstring.
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ"
_BEGIN_WRITE = "BEGIN ISOLATION LEVEL SERIALIZABLE"
# Claiming and settling queue rows (the outbox): each statement sees what is
# committed when it starts, and an UPDATE rechecks its WHERE on the row's
# newest version, so two workers never take one row; SERIALIZABLE would
# make them fail against each other instead.
_BEGIN_QUEUE = "BEGIN ISOLATION LEVEL READ COMMITTED"
# A write is run again at least this many times, and for as long as SQLite
# would wait for its lock (db.BUSY_TIMEOUT_MS): under heavy contention a
# serializable transaction can be chosen as the one to cancel many times.
TRIES = 30
PATIENCE = db.BUSY_TIMEOUT_MS / 1000
# SQLSTATEs of a transaction that met a concurrent one: serialization
# failure, deadlock, and a unique key taken by a concurrent insert (which
# SERIALIZABLE reports as such when the transaction did not read that key).
_RETRYABLE = {"40001", "40P01", "23505"}


class PostgresDatabase:
    """A PostgreSQL database behind the service, at a `postgresql://` URL
    (libpq's: user, password, host, port, database name, and parameters such
    as `?sslmode=require`; the PG* environment variables fill in what the
    URL leaves out).

    pool_size: the most connections this process opens (one per request
    thread at work, plus a few).
    """

    engine = "PostgreSQL"

    def __init__(self, url, pool_size=10):
        require_driver()
        self.url = url
        self.location = url
        self.pool_size = max(2, int(pool_size))
        self.dialect = PostgresDialect()
        self._pool = None
        self._pool_lock = threading.Lock()
        self._local = threading.local()

    def __str__(self):
        return display_url(self.url)

    # Connections --------------------------------------------------------------------

    def connect(self):
        """A new connection of its own (not from the pool), in autocommit
        mode (we issue BEGIN). Errors: psycopg.OperationalError when the
        server cannot be reached or refuses us."""
        raw = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                              cursor_factory=_Cursor)
        _configure(raw)
        self._learn_dialect(raw)
        return PgConnection(raw, self.dialect)

    def _learn_dialect(self, raw):
        if getattr(self, "_dialect_known", False):
            return
        has_icu = raw.execute("SELECT 1 FROM pg_collation WHERE collname = %s",
                              (_UNICODE_COLLATION,)).fetchone() is not None
        self.dialect.unicode_regexps = has_icu
        self._dialect_known = True

    def pool(self):
        """This process's pool, opened on first use (so a forked worker opens its own)."""
        with self._pool_lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                def configure(raw):
                    _configure(raw)
                    self._learn_dialect(raw)
                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True,
                    kwargs={"autocommit": True, "row_factory": _row_factory,
                            "cursor_factory": _Cursor},
                    configure=configure, timeout=db.BUSY_TIMEOUT_MS / 1000, name="bugsvc")
            return self._pool

    def connection(self):
        """This thread's own connection (outside the pool), opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.connect()
        return conn

    def close_connection(self):
        """Close this thread's own connection, if any."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self):
        """Close this thread's own connection and the process's pool."""
        self.close_connection()
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def in_transaction(self):
        """True while this thread is inside a transaction of this database."""
        return getattr(self._local, "depth", 0) > 0

    # Transactions -------------------------------------------------------------------

    @contextmanager
    def transaction(self, write=False, queue=False):
        """Yield a connection inside one transaction (see the module's
        docstring for its isolation). Commits when the block ends normally;
        rolls back on any exception. queue: a transaction claiming or
        settling queue rows with conditional UPDATEs and skip_locked, in
        READ COMMITTED (see _BEGIN_QUEUE)."""
        begin = _BEGIN_QUEUE if queue else _BEGIN_WRITE if write else _BEGIN_READ
        pinned = getattr(self._local, "conn", None)
        if pinned is not None and not self.in_transaction():
            with self._transaction_on(pinned, begin) as conn:
                yield conn
            return
        with self.pool().connection() as raw:
            with self._transaction_on(PgConnection(raw, self.dialect), begin) as conn:
                yield conn

    @contextmanager
    def separate_transaction(self, write=False):
        """Yield another connection inside a transaction of its own, beside
        this thread's open one (see SqliteDatabase.separate_transaction): a
        connection of its own, not one of the pool, which threads holding
        theirs could all be waiting for. Closed afterwards."""
        conn = self.connect()
        try:
            with self._transaction_on(conn, _BEGIN_WRITE if write else _BEGIN_READ):
                yield conn
        finally:
            conn.close()

    def attempts(self, write=False, separate=False, queue=False):
        """Tries of one transaction (db.Attempts): run again when it met a
        concurrent one (only transactions that write can)."""
        if separate:
            return db.Attempts(lambda: self.separate_transaction(write), _retryable, TRIES,
                               PATIENCE)
        return db.Attempts(lambda: self.transaction(write, queue), _retryable, TRIES, PATIENCE)

    @staticmethod
    def statement_too_large(exc):
        """True when `exc` is PostgreSQL (or libpq) refusing a statement for its size."""
        if getattr(exc, "sqlstate", None) and exc.sqlstate.startswith("54"):
            return True
        return isinstance(exc, psycopg.Error) and "number of parameters" in str(exc)

    @contextmanager
    def _transaction_on(self, conn, begin):
        conn.raw.execute(begin)
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            try:
                yield conn
            except BaseException:
                if not conn.raw.closed:
                    conn.raw.execute("ROLLBACK")
                raise
            conn.raw.execute("COMMIT")
        finally:
            self._local.depth -= 1

    @contextmanager
    def bulk_transaction(self):
        """One write transaction for copying whole tables in (convert.py),
        holding the lock of installing processes; foreign keys are checked
        at its end, not row by row."""
        conn = self.connect()
        try:
            with self._transaction_on(conn, "BEGIN"):
                conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
                conn.raw.execute("SET CONSTRAINTS ALL DEFERRED")
                yield conn
        finally:
            conn.close()

    # Schema -------------------------------------------------------------------------

    def version(self):
        """The schema version stored in the database (0 for an empty one)."""
        with self.transaction() as conn:
            return self.dialect.schema_version(conn)

    def initialize(self):
        """Create or migrate the schema, as SqliteDatabase.initialize does, in
        one transaction holding a lock that other bugsvc processes starting
        on the same database wait for. Returns True when it was empty.
        Errors: SchemaError for a database that cannot be reached, holds
        other tables, or has a newer schema than this code."""
        try:
            conn = self.connect()
        except psycopg.OperationalError as exc:
            raise SchemaError(f"cannot connect to the PostgreSQL database {self}: "
                              f"{_first_line(exc)}") from None
        try:
            conn.raw.execute("BEGIN")
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
            try:
                created = bring_up_to_date(conn, str(self))
            except pg_errors.InsufficientPrivilege as exc:
                conn.raw.execute("ROLLBACK")
                raise SchemaError(f"the PostgreSQL database {self} refuses to create the "
                                  f"schema: {_first_line(exc)}. Give the account the "
                                  "right to create tables (and the pg_trgm extension) "
                                  "there.") from None
            except BaseException:
                conn.raw.execute("ROLLBACK")
                raise
            conn.raw.execute("COMMIT")
        finally:
            conn.close()
        return created


# An advisory lock's key that bugsvc processes installing or migrating take.
_INSTALL_LOCK = 0x6275677376630001


def _retryable(exc):
    return getattr(exc, "sqlstate", None) in _RETRYABLE


def _first_line(exc):
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def display_url(url):
    """`url` with its password left out, for messages and logs."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
