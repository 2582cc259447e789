"""The unit of work: one transaction on the Database and the Context made for
it, the one composition point of every piece of work in bugsvc. The Runner
runs each operation in one; the delivery worker, the importer's
verification and the operator's commands use one directly.

A unit opens a read or a write transaction, loads the caller in it, makes
the Context (the caller, the time, the Config, the process's catalog cache,
a journal of events), runs the work, and before the commit writes the
journal's outbox events in the same transaction: a change and the news of
it are committed together or rolled back together. After a commit that
wrote events it calls `on_events` (a delivery worker of the process starts
at once).

What the domain lends the kernel is given when a unit of work is made
(bugsvc/compose.py puts it together), so the kernel imports none of it:
load_caller(conn, user_id) -> the Caller (the anonymous one for None);
load_parameters(conn) -> {name: value} of the instance parameters;
new_journal(enabled) -> an empty journal of events, whose
write(conn, changer_id, now) stores them and answers how many.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..store import cache
from ..store.db import Database, Unserved
from ..store.dialect import Connection
from .context import Caller, Context, Journal
from .fields import FieldFilter


T = TypeVar("T")

LOCAL = "127.0.0.1"


class UnitOfWork:
    """Makes transactions with their Context, for one Database.

    db: the Database. config: the instance Config. auth: the Authenticator
    (Context.auth). load_caller, load_parameters, new_journal: what the
    domain lends (see the module's docstring). clock: returns the current
    aware UTC datetime (tests). catalog: the process's copies of the
    catalogue (store/cache.py), shared by its units. on_events: called
    (without arguments) after a unit committed outbox events.
    """

    def __init__(self, db: Database[Any], config: Any, auth: Any, *,
                 load_caller: Callable[[Connection, int | None], Caller],
                 load_parameters: Callable[[Connection], dict[str, str]],
                 new_journal: Callable[[bool], Journal],
                 clock: Callable[[], datetime] | None = None) -> None:
        self.db = db
        self.config = config
        self.auth = auth
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.catalog = cache.CatalogCache()
        self.on_events: Callable[[], object] | None = None
        self._load_caller = load_caller
        # The catalog and credential generations this process last read
        # (calls assume them where a statement is a round trip:
        # cache.Generations).
        self._generations_seen: tuple[int, int] | None = None
        self._load_parameters = load_parameters
        self._new_journal = new_journal

    @contextmanager
    def context(self, user_id: int | None = None, write: bool = False, remote_ip: str = LOCAL,
                now: datetime | None = None, fields: FieldFilter | None = None,
                events: bool = True) -> Iterator[Context]:
        """A Context in one transaction of its own, tried once: committed
        when the block ends, rolled back when it raises (the operator's
        commands, the delivery worker's reading, imports, tests).
        user_id: the caller's account (None: anonymous). fields: a
        FieldFilter (default: every field). events: False for writes that
        must tell nobody (no outbox event is written for them)."""
        written = 0
        with self.db.transaction(write=write) as conn:
            ctx = self.new_context(conn, self._load_caller(conn, user_id), now or self.clock(),
                                   remote_ip, fields, write, catalog=False, events=events)
            yield ctx
            if write:
                written = _write_events(ctx)
        if written:
            self._events_written()

    def run(self, work: Callable[[Context], T], write: bool = False,
            caller: int | None | Callable[[Connection, cache.Generations], Caller] = None,
            now: datetime | None = None, remote_ip: str = LOCAL,
            fields: FieldFilter | None = None, events: bool = True, catalog: bool = True,
            replica: bool = False, anonymous: bool = False, locked: bool = False) -> T:
        """work(ctx) in one transaction, run again from the start (in a new
        transaction, with a new Context) when it met a concurrent one it
        cannot be ordered with (Database.attempts); committed when it
        returns, rolled back when it raises.

        caller: an account id, None (anonymous), or a function(conn,
        generations) giving the Caller, called first in each try (the
        Runner checks credentials so; generations: the transaction's
        cache.Generations, which the Context's copies then use too; where a
        statement is a round trip, the first try takes those this process
        read last and its first statement checks them: a try that finds
        them moved is run again, reading them).
        now: the time of the work (default: the clock, read once the
        transaction is open and the caller known: writes waiting for one
        another are then stamped in the order they are stored). catalog:
        False keeps no copies of the catalogue (work whose transaction must
        not read before its first write). replica: a read that a replica of
        the database may serve (when it has replicas: see _on_replica);
        anonymous: the caller reads nothing to be known (no credentials).
        locked: a write whose work holds a lock row (Database.transaction).
        Returns work's result.
        """
        if replica and not write and self.db.has_replicas:
            try:
                return self._on_replica(work, caller, now, remote_ip, fields, events, catalog,
                                        anonymous)
            except Unserved:
                pass                    # the primary serves it, as without replicas
        written = 0
        for attempt in self.db.attempts(write=write, locked=locked):
            with attempt as conn:
                # Kept and assumed only where reading them is a round trip.
                round_trips = catalog and conn.dialect.statements_are_round_trips
                assumed = self._generations_seen if round_trips and attempt.number == 1 else None
                seen = cache.Generations(conn, assumed,
                                         self._saw_generations if round_trips else None,
                                         bug=not write or conn.dialect.bug_generation_in_writes)
                try:
                    who = (caller(conn, seen) if callable(caller)
                           else self._load_caller(conn, caller))
                    ctx = self.new_context(conn, who, now or self.clock(), remote_ip, fields,
                                           write, catalog=catalog, events=events,
                                           generation=seen.catalog if catalog else None,
                                           writes_before=seen.writes_before if catalog
                                           else None)
                    ctx.generations = seen
                    result = work(ctx)
                    written = 0
                    if write:
                        # The work's events, in its own transaction: committed
                        # with the change or rolled back with it.
                        written = _write_events(ctx)
                except BaseException as failure:
                    _settle_failed(self.db, seen, failure)
                    raise
                # Assumed generations are checked before an answer leaves
                # (GenerationsMoved: the call is tried again).
                seen.settle()
        if write:
            self.db.wrote()
        if write and self.db.has_replicas and who.id is not None:
            self.db.note_write(who.id)
        if written:
            self._events_written()
        return result

    def _saw_generations(self, catalog: int, credential: int) -> None:
        """Keep the generations a transaction read, for the next calls."""
        self._generations_seen = (catalog, credential)

    def _on_replica(self, work: Callable[[Context], T],
                    caller: int | None | Callable[[Connection, cache.Generations], Caller],
                    now: datetime | None,
                    remote_ip: str, fields: FieldFilter | None, events: bool, catalog: bool,
                    anonymous: bool) -> T:
        """work(ctx) in a read transaction on a replica. The caller is known
        first in a short read on the primary (credentials are checked
        where they are changed: a revoked key is refused at once), with
        where the primary stood after its last write, which the replica
        must have replayed (read-your-writes). An anonymous caller needs
        no such read. Errors: Unserved (the primary is to serve it)."""
        who: Caller | None = None
        after = None
        if not anonymous:
            for attempt in self.db.attempts():
                with attempt as conn:
                    who = (caller(conn, cache.Generations(conn)) if callable(caller)
                           else self._load_caller(conn, caller))
                    after = (self.db.caller_position(conn, who.id) if who.id is not None
                             else None)
        with self.db.replica_transaction(after) as conn:
            if who is None:
                who = (caller(conn, cache.Generations(conn)) if callable(caller)
                       else self._load_caller(conn, caller))
            ctx = self.new_context(conn, who, now or self.clock(), remote_ip, fields, False,
                                   catalog=catalog, events=events)
            result = work(ctx)
        return result

    def new_context(self, conn: Connection, caller: Caller, now: datetime,
                    remote_ip: str = LOCAL, fields: FieldFilter | None = None,
                    writes: bool = False, catalog: bool = True, generation: int | None = None,
                    events: bool = True, writes_before: int | None = None) -> Context:
        """The one place a Context is made, on `conn`, a transaction the
        caller opened and ends. catalog: use the process's copies of the
        catalogue at the transaction's generation (`generation`, when the
        transaction read it already; `writes_before`: the connection's
        writes_so_far when it did, None when unknown). events: False for a
        journal that notes nothing. The journal's events are the caller's to write
        (ctx.events.write) before the commit."""
        checked_at: int | None
        if catalog and generation is None:
            checked_at = conn.writes_so_far()
            generation = cache.generation(conn)
        else:
            checked_at = writes_before
        return Context(conn=conn, caller=caller, now=now, config=self.config, auth=self.auth,
                       remote_ip=remote_ip, fields=fields or FieldFilter(), catalog=self.catalog,
                       catalog_generation=generation if catalog else None, writes=writes,
                       events=self._new_journal(events),
                       load_parameters=self._load_parameters, catalog_checked_at=checked_at)

    def _events_written(self) -> None:
        if self.on_events is not None:
            self.on_events()


def _settle_failed(db: Database[Any], seen: cache.Generations, failure: BaseException) -> None:
    """Check the generations a call that failed with `failure` assumed,
    before its error leaves: GenerationsMoved (the call is tried again) when
    they were not its transaction's. A failure that has the call tried
    again anyway needs no check (the next try reads them). When the failure
    ended the transaction they are read in one of their own, which began
    later: the generations only grow, so the same values there were the
    call's too."""
    if not seen.unconfirmed:
        return
    if db.met_concurrent(failure):
        seen.forget()
        return
    try:
        seen.settle()
    except cache.GenerationsMoved:
        raise
    except Exception:                  # noqa: BLE001 - read them apart instead
        with db.separate_transaction() as conn:
            later = cache.Generations(conn)
            seen.confirm(later.catalog, later.credential)


def _write_events(ctx: Context) -> int:
    """Store the events of `ctx`'s journal in its transaction (every Context
    a unit makes has a journal); returns how many."""
    if ctx.events is None:
        return 0
    return ctx.events.write(ctx.conn, ctx.caller.id, ctx.now)
