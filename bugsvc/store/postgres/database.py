"""A PostgreSQL database behind the service: the pool of connections,
transactions in the isolation each needs, tries of a write that met a
concurrent one, installing the schema under an advisory lock."""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .. import db
from ..schema import SchemaError
from .connection import (
    PgConnection,
    _configure,
    _Cursor,
    _row_factory,
    pg_errors,
    psycopg,
    require_driver,
)
from .dialect import _UNICODE_COLLATION, PostgresDialect


if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from .replica import Replicas

log = logging.getLogger("bugsvc.store")

# The primary's WAL insert position as a whole number (bytes).
_INSERTED = "pg_current_wal_insert_lsn() - '0/0'::pg_lsn"

# How each kind of transaction begins (see the package's docstring): reads
# in one snapshot, writes serializable. Claiming and settling queue rows
# (the outbox): each statement sees what is committed when it starts, and an
# UPDATE rechecks its WHERE on the row's newest version, so two workers
# never take one row; SERIALIZABLE would make them fail against each other
# instead. A bulk copy holds the install lock instead.
_BULK = "bulk"
_BEGINS = {db.READ: "BEGIN ISOLATION LEVEL REPEATABLE READ",
           db.WRITE: "BEGIN ISOLATION LEVEL SERIALIZABLE",
           db.QUEUE: "BEGIN ISOLATION LEVEL READ COMMITTED",
           db.LOCKED: "BEGIN ISOLATION LEVEL REPEATABLE READ",
           _BULK: "BEGIN"}
# Connections each process keeps for read_now alone (the check of the
# answers kept by request, web/rest/kept_responses.py), besides its pool.
READ_NOW_CONNECTIONS = 2
# Seconds between the folds of the bug writes a serving process makes after
# its write calls (Database.wrote), besides the delivery worker's.
FOLD_SECONDS = 2.0
# Seconds between the VACUUMs of bug_writes a process runs after its folds
# (PostgresDatabase.fold_bug_writes).
BUG_WRITES_VACUUM_SECONDS = 2.0
# The bug writes noted (schema.sql's bug writes) deleted and counted into
# bug_generation's value in one statement; no row locked when there are none.
_FOLD_BUG_WRITES = ("WITH folded AS (DELETE FROM bug_writes RETURNING 1),"
                    " counted AS (SELECT count(*) AS n FROM folded)"
                    " UPDATE bug_generation SET value = value + counted.n FROM counted"
                    " WHERE id = 1 AND counted.n > 0")
# SQLSTATEs of a transaction that met a concurrent one: serialization
# failure, deadlock, and a unique key taken by a concurrent insert (which
# SERIALIZABLE reports as such when the transaction did not read that key).
_RETRYABLE = {"40001", "40P01", "23505"}


class PostgresDatabase(db.Database[PgConnection]):
    """A PostgreSQL database behind the service, at a `postgresql://` URL
    (libpq's: user, password, host, port, database name, and parameters such
    as `?sslmode=require`; the PG* environment variables fill in what the
    URL leaves out).

    pool_size: the most connections this process opens (one per request
    thread at work, plus a few; default 10), and as many to each replica.
    Its writers need no lock file (writers_lock_path is not used):
    PostgreSQL runs many at once. replicas: URLs of streaming replicas that
    reads may come from (replica.py), at most replica_max_lag seconds
    behind the primary (default 5).
    """

    name = "PostgreSQL"
    backup_advice = ("which PostgreSQL's own tools back up while the server runs: pg_dump "
                     "--format=custom --file=bugsvc.dump '<the same URL>' (pg_restore puts it "
                     "back; see docs/postgresql.md, Backups)")
    # A write is run again at least this many times, and for as long as
    # SQLite would wait for its lock (db.BUSY_TIMEOUT_MS): under heavy
    # contention a serializable transaction can be chosen as the one to
    # cancel many times.
    TRIES = 30
    PATIENCE = db.BUSY_TIMEOUT_MS / 1000

    dialect: PostgresDialect

    def __init__(self, location: object, writers_lock_path: str | None = None,
                 pool_size: int | None = None, replicas: Sequence[str] = (),
                 replica_max_lag: float | None = None) -> None:
        require_driver()
        super().__init__(location)
        self.url = self.location
        self.pool_size = max(2, int(pool_size if pool_size is not None else 10))
        self.dialect = PostgresDialect()
        self._dialect_known = False
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._pool_lock = threading.Lock()
        self._now = _ReadNowConnections(self.connect, READ_NOW_CONNECTIONS)
        self._folded_at = float("-inf")
        self._vacuumed_at = float("-inf")
        self._replicas: Replicas | None = None
        if replicas:
            from .replica import Replicas
            self._replicas = Replicas(
                [str(url) for url in replicas],
                db.REPLICA_MAX_LAG if replica_max_lag is None else replica_max_lag,
                self.pool_size, self.dialect, display_url)
            self.has_replicas = True

    @classmethod
    def shown(cls, location: object) -> str:
        return display_url(str(location))

    # Connections --------------------------------------------------------------------

    def connect(self) -> PgConnection:
        """A new connection of its own (not from the pool), in autocommit
        mode (we issue BEGIN). Errors: psycopg.OperationalError when the
        server cannot be reached or refuses us."""
        raw = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                              cursor_factory=_Cursor)
        _configure(raw)
        self._learn_dialect(raw)
        return PgConnection(raw, self.dialect)

    def _learn_dialect(self, raw: psycopg.Connection[Any]) -> None:
        if self._dialect_known:
            return
        has_icu = raw.execute("SELECT 1 FROM pg_collation WHERE collname = $1",
                              (_UNICODE_COLLATION,)).fetchone() is not None
        self.dialect.unicode_regexps = has_icu
        self._dialect_known = True

    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        """This process's pool, opened on first use (so a forked worker opens its own)."""
        with self._pool_lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                def configure(raw: psycopg.Connection[Any]) -> None:
                    _configure(raw)
                    self._learn_dialect(raw)
                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True,
                    kwargs={"autocommit": True, "row_factory": _row_factory,
                            "cursor_factory": _Cursor},
                    configure=configure, timeout=db.BUSY_TIMEOUT_MS / 1000, name="bugsvc")
            return self._pool

    def close(self) -> None:
        """Close this thread's own connection and the process's pools."""
        self.close_connection()
        self._now.close()
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        if self._replicas is not None:
            self._replicas.close()

    # Read replicas (replica.py) ------------------------------------------------------

    @contextmanager
    def replica_transaction(self, after: int | None) -> Iterator[PgConnection]:
        """A connection in a read transaction on a replica that has replayed
        the caller's last write (`after`, from caller_position) and is not
        too far behind. Errors: Unserved when none may serve the read or
        the one serving it failed (the caller reads from the primary)."""
        if self._replicas is None:
            raise db.Unserved("this database has no replicas")
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            with self._replicas.transaction(after) as conn:
                yield conn
        finally:
            self._local.depth -= 1

    def caller_position(self, conn: PgConnection, user_id: int) -> int | None:
        """The primary's WAL position after account `user_id`'s last write
        (None: none kept), read in the primary's transaction `conn`."""
        row = conn.execute("SELECT lsn FROM replica_waits WHERE user_id = ?",
                           (user_id,)).fetchone()
        return None if row is None else int(row[0])

    def note_write(self, user_id: int) -> None:
        """Keep the primary's WAL position after account `user_id`'s write
        that just committed, for read-your-writes (the insert position: at
        or past the end of that commit's record)."""
        if self._replicas is None:
            return
        from psycopg_pool import PoolTimeout
        try:
            with self.pool().connection() as raw:
                raw.execute(
                    "INSERT INTO replica_waits (user_id, lsn) VALUES ($1, " + _INSERTED + ")"
                    " ON CONFLICT (user_id) DO UPDATE"
                    " SET lsn = GREATEST(replica_waits.lsn, EXCLUDED.lsn)", (user_id,))
        except (psycopg.Error, PoolTimeout) as exc:
            # The write is committed: its caller gets its answer. Its next
            # reads may come from a replica that lacks it, which is said.
            log.warning("could not keep where account %s's write left the primary (%s); its "
                        "next reads may miss it on a replica", user_id, _first_line(exc))

    # Transactions (see the package's docstring for their isolation) ------------------

    @contextmanager
    def _transaction_connection(self) -> Iterator[PgConnection]:
        # This thread's own connection when it has one and is not inside a
        # transaction on it; else one of the pool, for this transaction.
        pinned = getattr(self._local, "conn", None)
        if pinned is not None and not self.in_transaction():
            yield pinned
            return
        with self.pool().connection() as raw:
            yield PgConnection(raw, self.dialect)

    def read_now(self, sql: str) -> tuple[Any, ...]:
        """Database.read_now: outside any transaction, as libpq's prepared
        statement (PgConnection.read_now), on this thread's own connection
        when it has one, else on one the process keeps for these reads
        (_ReadNowConnections: no pool's checkout), else one of the pool
        (also when the kept one turns out closed: a server that restarted
        ended its session)."""
        if getattr(self._local, "conn", None) is None:
            conn = self._now.take()
            if conn is not None:
                try:
                    row = conn.read_now(sql)
                except BaseException:
                    self._now.discard(conn)
                    if not conn.raw.closed:
                        raise
                else:
                    self._now.give_back(conn)
                    return row
        with self._transaction_connection() as pooled:
            return pooled.read_now(sql)

    def checkpoint(self) -> None:
        """Database.checkpoint: fold_bug_writes()."""
        self.fold_bug_writes()

    def wrote(self) -> None:
        """Database.wrote: fold_bug_writes() when this process last did
        more than FOLD_SECONDS ago; a failure is logged (the next write
        or delivery round folds them)."""
        now = time.monotonic()
        if now - self._folded_at < FOLD_SECONDS:
            return
        self._folded_at = now
        try:
            self.fold_bug_writes()
        except Exception:                      # noqa: BLE001 - the call's write stands
            log.warning("folding the bug writes failed", exc_info=True)

    def fold_bug_writes(self) -> None:
        """Fold the transactions noted in bug_writes into bug_generation's
        value, so the bug generation's count reads few rows (schema.sql's
        bug writes). One statement in a READ COMMITTED transaction: a
        concurrent fold's rows are skipped once it commits, and its value
        is added to. Then the table is vacuumed now and then
        (_vacuum_bug_writes)."""
        with self.transaction(queue=True) as conn:
            conn.execute(_FOLD_BUG_WRITES)
        self._vacuum_bug_writes()

    def _vacuum_bug_writes(self) -> None:
        """VACUUM bug_writes, when this process last did more than
        BUG_WRITES_VACUUM_SECONDS ago. Every read's check counts the rows
        of bug_writes (the bug generation), reading every page the table
        has; the folds delete its rows, and autovacuum (once a minute at
        most) leaves their pages there meanwhile: after 10 s of comments a
        count read 60 pages (0.46 ms of PostgreSQL's CPU on every request)
        where, vacuumed, the table has none (0.005 ms). SKIP_LOCKED: one
        another process runs does as well. Errors: psycopg's."""
        now = time.monotonic()
        if now - self._vacuumed_at < BUG_WRITES_VACUUM_SECONDS:
            return
        self._vacuumed_at = now
        with self.pool().connection() as raw:
            raw.execute("VACUUM (SKIP_LOCKED) bug_writes")

    def _begin(self, conn: PgConnection, mode: str) -> None:
        conn.begin(_BEGINS[mode], read=mode == db.READ)

    def _commit(self, conn: PgConnection) -> None:
        conn.end("COMMIT")

    def _rollback(self, conn: PgConnection) -> None:
        conn.end("ROLLBACK")

    def _retryable(self, exc: BaseException) -> bool:
        return getattr(exc, "sqlstate", None) in _RETRYABLE

    @staticmethod
    def statement_too_large(exc: BaseException) -> bool:
        """True when `exc` is PostgreSQL (or libpq) refusing a statement for its size."""
        state = getattr(exc, "sqlstate", None)
        if state and state.startswith("54"):
            return True
        return isinstance(exc, psycopg.Error) and "number of parameters" in str(exc)

    @contextmanager
    def bulk_transaction(self) -> Iterator[PgConnection]:
        """One write transaction for copying whole tables in (convert.py),
        holding the lock of installing processes; foreign keys are checked
        at its end, not row by row."""
        conn = self.connect()
        try:
            with self._transaction_on(conn, _BULK):
                conn.begun()
                conn.raw.execute("SELECT pg_advisory_xact_lock($1)", (_INSTALL_LOCK,))
                conn.raw.execute("SET CONSTRAINTS ALL DEFERRED")
                yield conn
        finally:
            conn.close()

    # Schema -------------------------------------------------------------------------

    @contextmanager
    def _install_transaction(self) -> Iterator[PgConnection]:
        # A connection of its own, in a transaction holding the advisory
        # lock that other bugsvc processes starting on the database wait for.
        try:
            conn = self.connect()
        except psycopg.OperationalError as exc:
            raise SchemaError(f"cannot connect to the PostgreSQL database {self}: "
                              f"{_first_line(exc)}") from None
        try:
            conn.raw.execute("BEGIN")
            conn.raw.execute("SELECT pg_advisory_xact_lock($1)", (_INSTALL_LOCK,))
            try:
                yield conn
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


# An advisory lock's key that bugsvc processes installing or migrating take.
_INSTALL_LOCK = 0x6275677376630001


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def display_url(url: str) -> str:
    """`url` with its password left out, for messages and logs."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


class _ReadNowConnections:
    """Up to `most` connections of this process for single statements run
    outside any transaction (read_now), lent by a list's pop and append:
    a fraction of the pool's checkout, which a statement of a few
    microseconds on the server would otherwise cost more than. connect():
    a new connection. A connection that met an error is closed, not lent
    again; a forked process opens its own."""

    def __init__(self, connect: Any, most: int) -> None:
        self._connect = connect
        self._most = most
        self._idle: list[PgConnection] = []
        self._opened = 0
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def take(self) -> PgConnection | None:
        """An idle connection, or a new one while fewer than `most` are
        open; None when all are lent. Errors: connect()'s."""
        if self._pid != os.getpid():
            with self._lock:          # the parent's: left alone, as the pool's are
                self._idle, self._opened, self._pid = [], 0, os.getpid()
        try:
            return self._idle.pop()
        except IndexError:
            pass
        with self._lock:
            if self._opened >= self._most:
                return None
            self._opened += 1
        try:
            return self._connect()
        except BaseException:
            with self._lock:
                self._opened -= 1
            raise

    def give_back(self, conn: PgConnection) -> None:
        """Lend `conn` (of take()) again."""
        self._idle.append(conn)

    def discard(self, conn: PgConnection) -> None:
        """Close `conn` (of take()), which met an error."""
        with self._lock:
            self._opened -= 1
        conn.close()

    def close(self) -> None:
        """Close the idle connections (Database.close). One lent at that
        moment is lent again once given back, as a pool opened anew is."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._opened -= len(idle)
        for conn in idle:
            conn.close()
