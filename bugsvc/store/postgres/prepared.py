"""Statements bugsvc prepares and runs on a psycopg connection by libpq's
own calls, without psycopg's cursor (which costs several times their CPU):
prepared under names of bugsvc's own, kept per connection, the oldest
deallocated beyond a number kept.

- PreparedNames: the names of the statements prepared on each connection.
- run_prepared: a statement taking no values, waited for by libpq.
- run_bounded_alone: one statement on its own (no transaction open), with
  a time limit, in one round trip: libpq's pipeline of the limit, the
  statement and the limit's end, which PostgreSQL runs as one implicit
  transaction.
- checked: a libpq result's error raised as psycopg's cursor raises it.
"""

from __future__ import annotations

import itertools
import select
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors, pq
from psycopg.adapt import PyFormat, Transformer


# SQLSTATE of a prepared statement the session does not have.
_NO_SUCH_STATEMENT = b"26000"

_ANY_FORMAT = PyFormat.AUTO
# Whether the system has poll() (not on Windows: select() there).
_POLL = hasattr(select, "poll")


class PreparedNames:
    """The statements prepared on each connection by name: {key: name},
    at most `kept` a connection (the least recently used deallocated first).
    prefix: the names' own (bytes). A connection's names go with it."""

    def __init__(self, prefix: str, kept: int) -> None:
        self._prefix = prefix
        self._kept = kept
        self._numbers = itertools.count(1)
        self._names: weakref.WeakKeyDictionary[Any, OrderedDict[Any, bytes]] = \
            weakref.WeakKeyDictionary()

    def name(self, raw: Any, key: Any) -> tuple[bytes, bool, list[bytes]]:
        """(the name of the statement of `key` on connection `raw`, whether
        it is new there (to prepare now), the names to deallocate first to
        keep within the number kept)."""
        names = self._names.setdefault(raw, OrderedDict())
        name = names.get(key)
        if name is not None:
            names.move_to_end(key)
            return name, False, []
        name = f"{self._prefix}_{next(self._numbers)}".encode()
        names[key] = name
        dropped = []
        while len(names) > self._kept:
            dropped.append(names.popitem(last=False)[1])
        return name, True, dropped

    def forget(self, raw: Any, key: Any = None) -> None:
        """Forget the statement of `key` on `raw` (None: all of them: the
        session lost them), to be prepared again when next used."""
        names = self._names.get(raw)
        if names is None:
            return
        if key is None:
            names.clear()
        else:
            names.pop(key, None)


# The statements run_prepared prepared (a few, each taking no values).
_NOW = PreparedNames("bugsvc_now", 64)
# The statements run_bounded_alone prepared: a search's statement has many
# texts (one for each set of criteria), so only the latest are kept.
_ALONE = PreparedNames("bugsvc_alone", 64)


def run_prepared(raw: Any, sql: str) -> pq.abc.PGresult:
    """The result (rows) of `sql`, a statement taking no values, run on
    `raw` as libpq's prepared statement, prepared on the connection the
    first time, libpq waiting for it (which lets go of the interpreter's
    lock). Errors: psycopg's (checked); a statement the session no longer
    has is prepared again once."""
    for attempt in (1, 2):
        name, new, dropped = _NOW.name(raw, sql)
        for old in dropped:
            checked(raw, raw.pgconn.exec_(b"DEALLOCATE " + old), pq.ExecStatus.COMMAND_OK)
        if new:
            try:
                checked(raw, raw.pgconn.prepare(name, sql.encode()), pq.ExecStatus.COMMAND_OK)
            except BaseException:
                _NOW.forget(raw, sql)
                raise
        result = raw.pgconn.exec_prepared(name, [])
        if attempt == 1 and result.error_field(pq.DiagnosticField.SQLSTATE) == _NO_SUCH_STATEMENT:
            _NOW.forget(raw)                        # the session lost them: prepared again
            continue
        checked(raw, result, pq.ExecStatus.TUPLES_OK)
        return result
    raise AssertionError("unreachable")


def run_bounded_alone(raw: Any, sql: str, values: Sequence[Any],
                      milliseconds: int) -> pq.abc.PGresult:
    """The result of `sql` (PostgreSQL's `$n` placeholders, `values`) run
    on its own on `raw` (no transaction open: it sees a snapshot of its
    own), cancelled by PostgreSQL after `milliseconds`: one round trip
    (libpq's pipeline), the statement prepared on the connection. The limit
    is set for the session before it and reset after it (SET LOCAL warns
    outside a transaction block); the three are one implicit transaction,
    so a failed statement undoes the limit too.
    Errors: psycopg's, as its cursor raises them (QueryCanceled past the
    limit; OperationalError when the connection is lost, which is then
    closed, as is one left in the middle of the pipeline)."""
    loading: Any = Transformer(raw)
    dumped = loading.dump_sequence(values, [_ANY_FORMAT] * len(values)) if values else None
    key = (sql, tuple(loading.types or ()))
    for attempt in (1, 2):
        name, new, dropped = _ALONE.name(raw, key)
        try:
            results = _pipeline(raw, name, sql if new else None, dropped, dumped,
                                loading, milliseconds)
        except BaseException:
            _ALONE.forget(raw)
            raw.close()           # a connection left in the middle of a pipeline
            raise
        failed = next((result for result in results
                       if result.status == pq.ExecStatus.FATAL_ERROR), None)
        if failed is None:
            return next(result for result in results
                        if result.status == pq.ExecStatus.TUPLES_OK)
        state = failed.error_field(pq.DiagnosticField.SQLSTATE)
        if new and not _succeeded(results, len(dropped)):     # its PREPARE's result
            _ALONE.forget(raw, key)
        if attempt == 1 and state == _NO_SUCH_STATEMENT:
            _ALONE.forget(raw)                      # the session lost them: prepared again
            continue
        checked(raw, failed, pq.ExecStatus.TUPLES_OK)
    raise AssertionError("unreachable")


def _pipeline(raw: Any, name: bytes, preparing: str | None, dropped: list[bytes],
              dumped: Any, loading: Any, milliseconds: int) -> list[Any]:
    """Send run_bounded_alone's statements as one pipeline and read every
    result (the sync's left out)."""
    pgconn = raw.pgconn
    pgconn.enter_pipeline_mode()
    for old in dropped:
        pgconn.send_query_params(b"DEALLOCATE " + old, None)
    if preparing is not None:
        pgconn.send_prepare(name, preparing.encode(), param_types=loading.types or None)
    pgconn.send_query_params(b"SET statement_timeout = %d" % int(milliseconds), None)
    pgconn.send_query_prepared(name, dumped, param_formats=loading.formats or None)
    pgconn.send_query_params(b"RESET statement_timeout", None)
    pgconn.pipeline_sync()
    _send_all(pgconn)
    results = []
    ended = 0
    while True:
        result = _next_result(pgconn)
        if result is None:
            # One None ends each statement's results; two in a row: the
            # connection is lost.
            ended += 1
            if ended > 1 and pgconn.status == pq.ConnStatus.BAD:
                raise _lost(raw)
            continue
        ended = 0
        if result.status == pq.ExecStatus.PIPELINE_SYNC:
            break
        results.append(result)
    pgconn.exit_pipeline_mode()
    return results


def _send_all(pgconn: Any) -> None:
    """Send what libpq holds still unsent (a connection of psycopg's is
    in libpq's nonblocking mode), waiting for the socket as needed."""
    while pgconn.flush():
        if _wait(pgconn.socket, write=True):
            pgconn.consume_input()


def _next_result(pgconn: Any) -> Any:
    """libpq's next result (None after each statement's), waiting for the
    server in poll() (libpq's own wait in get_result would hold the
    interpreter's lock all the while, stopping every other thread)."""
    while pgconn.is_busy():
        _wait(pgconn.socket)
        pgconn.consume_input()
    return pgconn.get_result()


def _wait(socket: int, write: bool = False) -> bool:
    """Wait until `socket` may be read (with `write`: read or written);
    True when it may be read (or was closed). poll() where the system has
    it, select() elsewhere (Windows)."""
    if _POLL:
        poller = select.poll()
        poller.register(socket, select.POLLIN | (select.POLLOUT if write else 0))
        events = 0
        while not events:
            events = sum(event for _, event in poller.poll())
        return bool(events & (select.POLLIN | select.POLLERR | select.POLLHUP))
    readable, _, _ = select.select([socket], [socket] if write else [], [])
    return bool(readable)


def _succeeded(results: list[Any], position: int) -> bool:
    """True when the result at `position` is there and ran."""
    return len(results) > position and results[position].status == pq.ExecStatus.COMMAND_OK


def checked(raw: Any, result: Any, wanted: Any) -> None:
    """Raise the psycopg error of libpq's `result` on `raw` unless its
    status is `wanted` (psycopg.OperationalError when the connection was
    lost, as psycopg's own execute raises)."""
    if result.status != wanted:
        if raw.pgconn.status == pq.ConnStatus.BAD:
            raise _lost(raw)
        raise pg_errors.error_from_result(result, encoding=raw.info.encoding)


def _lost(raw: Any) -> Exception:
    """psycopg's error for a connection the server or the network ended."""
    return psycopg.OperationalError(
        raw.pgconn.error_message.decode(raw.info.encoding, "replace").strip()
        or "the connection is lost")
