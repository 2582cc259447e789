"""The database behind the service: one contract, the Database base class,
that each engine keeps (sqlite.py: an SQLite file, the default;
postgres/: a PostgreSQL database, the optional extra `bugsvc[postgres]`).

A Database gives this thread's connection and new ones of their own,
transactions (read, write, and queue: claiming leased rows), tries of a
transaction run again from the start when it met a concurrent one it cannot
be ordered with (`attempts`, which every caller of a whole call uses), the
schema's version and its installation or migration (schema.py). Its
connections run SQL with `?` placeholders, give rows readable by position
and by column name, and carry `conn.dialect`: the one place where the
engines' spellings differ (dialect.py).

What differs between engines outside SQL is said by capabilities, never by
asking which engine it is: `is_file` (the database is a file of this host),
`can_backup` (`bugsvc backup` copies it), `writers_take_turns` (the worker
processes of one service take turns writing, on a lock file). Which engine a
--db value names is decided once, in location.py.

One transaction per service call: services never commit.
"""

import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import TracebackType
from typing import Any, ClassVar, Generic, TypeVar

from .cache import GenerationsMoved
from .dialect import Connection, Dialect
from .schema import bring_up_to_date


# A connection of one engine: the Connection protocol (dialect.py) for
# code that takes any engine's, the engine's own class inside it.
C = TypeVar("C", bound=Connection)

BUSY_TIMEOUT_MS = 30000
# Seconds a read replica may be behind its primary and still serve reads (default).
REPLICA_MAX_LAG = 5.0

# What a transaction is for: reading (one snapshot), writing, claiming and
# settling queue rows (store/outbox.py), or writing what only the holder of
# a lock row writes (the outbox's expansion), which engines with many
# writers at once run otherwise than other writes.
READ, WRITE, QUEUE, LOCKED = "read", "write", "queue", "locked"


class Unserved(Exception):
    """No read replica may serve a read (none is up, none has replayed far
    enough), or the one serving it failed: the primary is to serve it."""


class TextRefused(ValueError):
    """A text the engine cannot store (PostgreSQL: one holding the NUL
    character); nothing was written."""


class Database(Generic[C]):
    """The contract both engines keep, and what they share: this thread's
    connection, transactions with their commit and rollback, tries of a
    transaction, installing the schema.

    location: the database's location as given (an SQLite file's path or a
    PostgreSQL URL: location.py). writers_lock_path: the lock file the
    worker processes of one service take turns writing on (engines whose
    writers take turns). pool_size: the most connections this process opens
    (engines that pool them). replicas: locations of read replicas that
    reads may come from (engines with `has_replicas`; the others refuse
    them with SchemaError), and replica_max_lag: how many seconds behind
    the primary one may be.

    An engine says what it is by its capabilities and implements connect(),
    the hooks of a transaction (_begin, _commit, _rollback, and optionally
    _writer_turn and _transaction_connection), _install_transaction(),
    bulk_transaction() and statement_too_large().
    """

    name: ClassVar[str]         # the engine's name, as messages say it
    dialect: Dialect
    # Capabilities (see the module's docstring).
    is_file = False
    can_backup = False
    writers_take_turns = False
    # Reads may come from replicas (replica_transaction): set when some are given.
    has_replicas = False
    # What `bugsvc backup` says of a database it cannot copy.
    backup_advice = ""
    # A write that met a concurrent one is run again at least this many
    # times, and for this many seconds from the first try.
    TRIES = 1
    PATIENCE = 0.0

    def __init__(self, location: object, writers_lock_path: str | None = None,
                 pool_size: int | None = None, replicas: Sequence[object] = (),
                 replica_max_lag: float | None = None) -> None:
        self.location = str(location)
        self._local = threading.local()

    @classmethod
    def shown(cls, location: object) -> str:
        """`location` as messages and logs show it (no password)."""
        return str(location)

    def __str__(self) -> str:
        return self.shown(self.location)

    # Connections -------------------------------------------------------------------

    def connect(self) -> C:
        """A new connection of its own, in autocommit mode (transactions are
        begun explicitly), the caller's to close."""
        raise NotImplementedError

    def connection(self) -> C:
        """This thread's own connection, opened on first use (a connection
        is never shared between threads)."""
        conn: C | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.connect()
        return conn

    def close_connection(self) -> None:
        """Close this thread's own connection, if any (a thread that ends
        closes its own; the process's stay open)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def checkpoint(self) -> None:
        """Move what the engine's log holds into the database's own file
        where the engine leaves that to its writers (an SQLite file in WAL
        mode), on this thread's connection, outside a transaction, without
        waiting for other connections; PostgreSQL folds the bug writes it
        noted (schema.sql's bug writes). The delivery worker calls it after
        each round."""

    def wrote(self) -> None:
        """A write call committed (UnitOfWork calls it after each): on
        PostgreSQL, the bug writes noted are folded now and then (at most
        once every few seconds a process: schema.sql's bug writes), so
        their count stays short where no delivery worker runs; nothing for
        other engines. Never raises: the call's write stands."""

    def close(self) -> None:
        """Close this thread's own connection and whatever else the engine
        holds for the process."""
        self.close_connection()

    def in_transaction(self) -> bool:
        """True while this thread is inside a transaction of this database."""
        return getattr(self._local, "depth", 0) > 0

    # Transactions ------------------------------------------------------------------

    def transaction(self, write: bool = False, queue: bool = False,
                    locked: bool = False) -> AbstractContextManager[C]:
        """A context manager giving a connection inside one transaction (this
        thread's own, or one the engine lends). Commits when the block ends
        normally; rolls back on any exception. queue: a write transaction
        that claims or settles queue rows (store/outbox.py). locked: a write
        transaction whose work holds a lock row, so that no concurrent
        transaction writes what it writes; it reads one snapshot, without
        the checks that order concurrent writers (PostgreSQL's serializable
        ones would cancel it for reads that merely overlap theirs)."""
        return self._lent_transaction(QUEUE if queue else LOCKED if locked
                                      else WRITE if write else READ)

    def read_now(self, sql: str) -> tuple[Any, ...]:
        """The first row of `sql`, a SELECT taking no values whose answer any
        moment's snapshot may give, read on its own: one statement, as a
        read transaction of its own (an engine may send it its cheapest
        way). Errors: the engine's, when the database does not answer."""
        with self.transaction() as conn:
            return tuple(conn.execute_first(sql).fetchone())

    @contextmanager
    def _lent_transaction(self, mode: str) -> Iterator[C]:
        with self._transaction_connection() as conn:
            with self._transaction_on(conn, mode):
                yield conn

    @contextmanager
    def separate_transaction(self, write: bool = False) -> Iterator[C]:
        """Yield a connection of its own inside one transaction, beside this
        thread's open one: for what must be stored whatever becomes of the
        transaction already open (a failed sign-in counted by a call that
        then fails). A connection of its own, not one a pool lends, which
        threads holding theirs could all be waiting for. Writers still take
        their turn. Commits when the block ends normally; rolls back on any
        exception; the connection is closed.
        """
        conn = self.connect()
        try:
            with self._transaction_on(conn, WRITE if write else READ):
                yield conn
        finally:
            conn.close()

    def attempts(self, write: bool = False, separate: bool = False,
                 queue: bool = False, locked: bool = False) -> "Attempts[C]":
        """Tries of one transaction (see Attempts): run again from the start
        when it met a concurrent one it cannot be ordered with (only engines
        with many writers at once meet one)."""
        if separate:
            return Attempts(lambda: self.separate_transaction(write), self._retryable,
                            self.TRIES, self.PATIENCE)
        return Attempts(lambda: self.transaction(write, queue, locked), self._retryable,
                        self.TRIES, self.PATIENCE)

    # Read replicas (engines with has_replicas) ------------------------------------

    def replica_transaction(self, after: int | None) -> AbstractContextManager[C]:
        """A context manager giving a connection in a read transaction on a
        replica that has replayed position `after` (caller_position's; None:
        any) and is not too far behind the primary. Errors: Unserved when
        none may serve the read or the one serving it failed, before or
        while the block runs (the caller then reads from the primary)."""
        raise Unserved("this database has no replicas")

    def caller_position(self, conn: C, user_id: int) -> int | None:
        """Where the primary stood after account `user_id`'s last write, read
        in `conn`'s transaction on the primary (None: nothing to wait for)."""
        return None

    def note_write(self, user_id: int) -> None:
        """Keep where the primary stands after account `user_id`'s write that
        just committed, for its next reads (read-your-writes)."""

    @staticmethod
    def statement_too_large(exc: BaseException) -> bool:
        """True when `exc` is the engine refusing a statement for its size
        (more values than one statement takes, an expression too deep ...)."""
        raise NotImplementedError

    def met_concurrent(self, exc: BaseException) -> bool:
        """True when `exc` says a transaction met a concurrent one (attempts
        then runs it again)."""
        return self._retryable(exc)

    def _retryable(self, exc: BaseException) -> bool:
        """True when `exc` says the transaction met a concurrent one."""
        return False

    def _transaction_connection(self) -> AbstractContextManager[C]:
        """A context manager giving the connection of a transaction."""
        return nullcontext(self.connection())

    def _writer_turn(self, mode: str) -> AbstractContextManager[object]:
        """A context manager held around a transaction of `mode` (engines
        whose writers take turns wait for theirs)."""
        return nullcontext()

    def _begin(self, conn: C, mode: str) -> None:
        raise NotImplementedError

    def _commit(self, conn: C) -> None:
        raise NotImplementedError

    def _rollback(self, conn: C) -> None:
        raise NotImplementedError

    def _transaction_on(self, conn: C, mode: str) -> "TransactionOn[C]":
        """A context manager giving `conn` inside one transaction of `mode`,
        begun once the engine's writers' turn is taken (TransactionOn)."""
        return TransactionOn(self, conn, mode)

    @contextmanager
    def bulk_transaction(self) -> Iterator[C]:
        """One write transaction for copying whole tables in (convert.py):
        foreign keys are checked at its end, not row by row."""
        raise NotImplementedError

    # Schema ------------------------------------------------------------------------

    def version(self) -> int:
        """The schema version stored in the database (0 for an empty one)."""
        with self.transaction() as conn:
            return self.dialect.schema_version(conn)

    def initialize(self) -> bool:
        """Create or migrate the schema. Returns True when the database was
        empty.

        An empty database gets schema.sql and SCHEMA_VERSION; an older
        version is moved forward by the migrations, step by step, all in one
        transaction holding a lock that other bugsvc processes starting on
        the same database wait for: either every step is stored or none is.
        Data is never dropped. Errors: SchemaError for a database that
        cannot be used (not one of the engine's, unreachable, refusing to
        create tables), holds other tables, or has a newer schema than this
        code.
        """
        with self._install_transaction() as conn:
            created = bring_up_to_date(conn, str(self))
        return created

    def _install_transaction(self) -> AbstractContextManager[C]:
        """A context manager giving a connection inside the transaction that
        installs or migrates the schema, holding the engine's lock against
        other processes doing the same."""
        raise NotImplementedError


class TransactionOn(Generic[C]):
    """`with TransactionOn(database, conn, mode) as conn:`: the block runs in
    one transaction of `mode` on `conn`, begun once `database`'s writers'
    turn for that mode is taken and committed when the block ends normally,
    rolled back on any exception (which goes on); the turn is given back
    either way. A class rather than a generator: one runs around every call,
    and a generator's context manager costs it about a microsecond and a
    half more."""

    __slots__ = ("_database", "_conn", "_mode", "_turn")

    def __init__(self, database: "Database[C]", conn: C, mode: str) -> None:
        self._database = database
        self._conn = conn
        self._mode = mode
        self._turn: AbstractContextManager[object] | None = None

    def __enter__(self) -> C:
        database = self._database
        turn = self._turn = database._writer_turn(self._mode)
        turn.__enter__()
        try:
            database._begin(self._conn, self._mode)
        except BaseException:
            turn.__exit__(*sys.exc_info())
            raise
        local = database._local
        local.depth = getattr(local, "depth", 0) + 1
        return self._conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        database, turn = self._database, self._turn
        assert turn is not None, "__exit__ without __enter__"
        self._turn = None
        try:
            try:
                if kind is None:
                    database._commit(self._conn)
                else:
                    database._rollback(self._conn)
            finally:
                database._local.depth -= 1
        except BaseException:
            turn.__exit__(*sys.exc_info())
            raise
        turn.__exit__(kind, exc, tb)


class Attempts(Generic[C]):
    """`for attempt in db.attempts(write): with attempt as conn: ...`: the
    block runs in one transaction, and again from the start (in a new
    transaction) when the engine says it met a concurrent transaction it
    cannot be ordered with (a serialization failure or a deadlock), with a
    short random pause before each new try, for at least `tries` tries and
    for as long as `patience` seconds from the first (a busy database keeps
    a write waiting as long as SQLite's busy timeout would); and again at
    once, whatever `tries`, when it ran on generations it assumed that had
    moved (cache.GenerationsMoved: the next try reads them). The block must
    not `return` from inside the `with` (its commit could still fail):
    keep its result in a variable. What escapes the block otherwise
    (ServiceError included) rolls it back and leaves the loop."""

    def __init__(self, open_transaction: Callable[[], AbstractContextManager[C]],
                 retryable: Callable[[BaseException], bool], tries: int,
                 patience: float = 0.0) -> None:
        self._open = open_transaction
        self._retryable = retryable
        self._tries = tries
        self._give_up_at = time.monotonic() + patience
        self._done = False
        self._manager: AbstractContextManager[C] | None = None
        self._pause = True
        self.number = 0

    def __iter__(self) -> "Iterator[Attempts[C]]":
        for self.number in itertools.count(1):
            yield self
            if self._done:
                return
            if self._pause:
                time.sleep(_backoff(self.number))

    def _may_try_again(self, exc: BaseException) -> bool:
        # A try on generations that had moved is run again at once: no
        # other transaction is in its way (the next try reads them; only a
        # first one assumes them).
        self._pause = not isinstance(exc, GenerationsMoved)
        if not self._pause:
            return True
        return self._retryable(exc) and (self.number < self._tries
                                         or time.monotonic() < self._give_up_at)

    def __enter__(self) -> C:
        self._manager = self._open()
        return self._manager.__enter__()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        manager, self._manager = self._manager, None
        assert manager is not None, "__exit__ without __enter__"
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


def _backoff(number: int) -> float:
    """Seconds to wait before try `number` + 1: random, growing, at most 0.2 s."""
    import random
    return random.uniform(0, min(0.2, 0.002 * 2 ** number))


def ids_written(conn: Connection, table: str) -> None:
    """Tell the store that rows of `table` were inserted with ids chosen by
    the writer (an import keeps the source's bug, comment and attachment
    ids), so the next row inserted without an id gets one above them.
    SQLite's INTEGER PRIMARY KEY always takes the highest id + 1; PostgreSQL
    moves the table's id sequence past the highest id."""
    conn.dialect.reset_ids(conn, [table])


# Values in one IN list of a statement made for a list of ids of any length.
IN_LIST_CHUNK = 500


def id_chunks(ids: Sequence[object]) -> Iterator[Sequence[object]]:
    """`ids` in slices of at most IN_LIST_CHUNK, each one statement's IN list."""
    for start in range(0, len(ids), IN_LIST_CHUNK):
        yield ids[start:start + IN_LIST_CHUNK]


def rows_for_ids(conn: Connection, sql: str, ids: Sequence[object],
                 args: Sequence[object] = ()) -> Iterator[Sequence[object]]:
    """The rows of `sql` (with one '{ids}' IN list, followed by the values
    `args`) run over every chunk of `ids` (id_chunks)."""
    for chunk in id_chunks(ids):
        yield from conn.execute(sql.format(ids=placeholders(chunk)), [*chunk, *args])


def placeholders(values: Iterable[object]) -> str:
    """'?, ?, ?' for an IN list of `values` (at least one)."""
    try:
        count = len(values)  # type: ignore[arg-type]
    except TypeError:                       # an iterator: counted as it goes
        count = sum(1 for _ in values)
    return ", ".join("?" * count)          # one "?" per character, joined
