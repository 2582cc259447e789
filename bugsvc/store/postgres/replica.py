"""Reading from PostgreSQL streaming replicas (`--db-replica`): which
replica may serve a read, and what it must have replayed first.

A read that may go to a replica (searches, bug lists, reports, anonymous
pages: the Runner decides) is served by one only when that replica

- answers (one that fails is left alone for DOWN_SECONDS, and the read is
  served by the primary),
- is in time: it has a WAL receiver (it follows its primary) and has either
  replayed all it received or replayed a commit made at most `max_lag`
  seconds ago (by the primary's clock against the replica's: keep them in
  step, as NTP does), as it said when last asked (at most CHECK_SECONDS
  ago), and
- has replayed the caller's own last write (read-your-writes): after a
  signed-in caller's write commits, the primary's WAL insert position is
  kept for that account in the table replica_waits, on the primary, where
  every process of every host finds it when the caller's next request
  comes; the replica must have replayed up to it.

Otherwise the read is served by the primary, as without replicas. A
replica's replay position is read before its transaction begins, so the
snapshot the transaction then takes holds at least that much; since it
only grows, the last one read is enough for any write older than it.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from psycopg_pool import ConnectionPool, PoolTimeout

from ..db import Unserved
from .connection import PgConnection, _configure, _Cursor, _row_factory, psycopg


if TYPE_CHECKING:
    from .dialect import PostgresDialect

log = logging.getLogger("bugsvc.store")

# Seconds a replica that failed is not asked again.
DOWN_SECONDS = 5.0
# Seconds a process relies on what it last read of a replica's state
# (its replay position only grows: enough for a write it has seen).
CHECK_SECONDS = 0.2
# Seconds a request waits for a replica's connection before the primary serves it.
CONNECT_SECONDS = 2.0

# A replica's replay position (bytes; NULL on a server that is no replica)
# and whether it is in time (see Replica.check).
STATE = ("SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn,"
         " EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL)"
         " AND (pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()"
         " OR now() - pg_last_xact_replay_timestamp() <= make_interval(secs => $1))")
BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
# SQLSTATEs that send a read to the primary: the replica cancelled a query
# holding up its replay, or the read wanted to write (a replica cannot).
_FOR_THE_PRIMARY = {"40001", "40P01", "25006"}


class Replica:
    """One streaming replica at `url`, with its own pool of at most
    `pool_size` connections (opened on first use), what this process last
    saw of it: its replay position, and until when it is left alone."""

    def __init__(self, url: str, pool_size: int, dialect: PostgresDialect, shown: str) -> None:
        self.url = url
        self.shown = shown
        self.pool_size = pool_size
        self.dialect = dialect
        self.replayed = -1
        self.in_time = False
        self.checked = float("-inf")
        self.down_until = 0.0
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._lock = threading.Lock()

    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True,
                    kwargs={"autocommit": True, "row_factory": _row_factory,
                            "cursor_factory": _Cursor},
                    configure=_configure, timeout=CONNECT_SECONDS, name="bugsvc-replica")
            return self._pool

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def check(self, raw: psycopg.Connection[Any], max_lag: float, now: float) -> None:
        """Read the replica's replay position and whether it is in time:
        following its primary (a WAL receiver runs), and either having replayed all it
        received or having replayed a commit made at most `max_lag` seconds
        ago (a server that is no replica is never in time)."""
        row = raw.execute(STATE, (max_lag,)).fetchone()
        self.replayed = -1 if row is None or row[0] is None else int(row[0])
        self.in_time = bool(row is not None and row[0] is not None and row[1])
        self.checked = now

    def is_up(self, now: float) -> bool:
        return now >= self.down_until

    def failed(self, exc: BaseException, now: float) -> None:
        """Leave the replica alone for DOWN_SECONDS after `exc`."""
        if self.is_up(now):
            log.warning("read replica %s failed (%s); the primary serves its reads for %.0f s",
                        self.shown, str(exc).strip().splitlines()[0] if str(exc).strip()
                        else type(exc).__name__, DOWN_SECONDS)
        self.down_until = now + DOWN_SECONDS


class Replicas:
    """The replicas of one primary.

    urls: the replicas' URLs. max_lag: seconds a replica may be behind.
    pool_size: the most connections this process opens to each. shown(url):
    a URL as messages show it (no password).
    """

    def __init__(self, urls: Sequence[str], max_lag: float, pool_size: int,
                 dialect: PostgresDialect, shown: Callable[[str], str]) -> None:
        self.replicas = [Replica(url, pool_size, dialect, shown(url)) for url in urls]
        self.max_lag = max(0.0, float(max_lag))
        self.dialect = dialect
        self._turns = itertools.count()

    def close(self) -> None:
        for replica in self.replicas:
            replica.close()

    @contextmanager
    def transaction(self, after: int | None) -> Iterator[PgConnection]:
        """A connection inside a read-only REPEATABLE READ transaction on a
        replica that has replayed position `after` (the caller's last write;
        None: none) and is within max_lag. Commits when the block ends (rolls
        back when it raises). Errors: Unserved when no replica may serve
        (before the block runs) or the replica failed while it ran
        (psycopg.OperationalError: the read is to be served by the primary)."""
        now = time.monotonic()
        up = [replica for replica in self.replicas if replica.is_up(now)]
        if not up:
            raise Unserved("no replica is up")
        start = next(self._turns)
        for replica in (up[(start + i) % len(up)] for i in range(len(up))):
            try:
                with replica.pool().connection() as raw:
                    if now - replica.checked >= CHECK_SECONDS or replica.replayed < (after or 0):
                        replica.check(raw, self.max_lag, now)
                    if not replica.in_time or replica.replayed < (after or 0):
                        continue
                    conn = PgConnection(raw, self.dialect)
                    conn.begin(BEGIN)
                    try:
                        yield conn
                    except BaseException:
                        conn.end("ROLLBACK")
                        raise
                    conn.end("COMMIT")
                    return
            except (psycopg.OperationalError, PoolTimeout) as exc:
                replica.failed(exc, time.monotonic())
                raise Unserved(str(exc)) from None
            except psycopg.Error as exc:
                if getattr(exc, "sqlstate", None) not in _FOR_THE_PRIMARY:
                    raise
                raise Unserved(str(exc)) from None
        raise Unserved("no replica has replayed far enough")
