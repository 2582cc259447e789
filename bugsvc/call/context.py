"""The context every service function and every piece of domain work receives.

A Context is made in one place, the unit of work (unit_of_work.py), which
gives it what the domain lends the kernel: how the instance parameters are
read (`load_parameters`) and the journal that collects the call's outbox
events (`events`). This module imports nothing of the domain.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from ..store import cache
from ..store.dialect import Connection
from .fields import FieldFilter


T = TypeVar("T")


class Caller(Protocol):
    """Who is calling, as far as the kernel reads it (the domain's
    accounts/caller.py Caller has much more): the account's id, None for
    an anonymous caller."""

    @property
    def id(self) -> int | None: ...


class Journal(Protocol):
    """The journal of a call's outbox events, as far as the kernel uses it
    (the domain's bugs/events.py Journal)."""

    def write(self, conn: Connection, changer_id: int | None, now: datetime) -> int:
        """Store the events noted on `conn`; returns how many."""
        ...


@dataclass
class Context:
    """One call's world.

    conn: the connection, inside the call's transaction.
    caller: who is calling (accounts/caller.py's Caller). now: the call's
    time (aware, UTC). config: the instance Config. auth: the Authenticator
    (for login). remote_ip: the caller's address. fields: the
    include/exclude filter. memo: facts shared by the calls of one snapshot
    (see below). events: the journal of the bugs the call changes
    (bugs/events.py's Journal: the outbox events written at the end of the
    call, in its transaction). load_parameters: reads {name: value} of every
    instance parameter on a connection (catalogue/settings.py's load).
    credentials: what the call presented (accounts.auth.Credentials), for
    the operations that check it themselves (login rule SELF); None for
    the others, whose caller the Runner resolved.

    config, auth and credentials are typed Any: their classes live above
    the kernel (bugsvc/config.py, accounts/auth.py), which it does not import.
    """
    conn: Connection
    caller: Caller
    now: datetime
    config: Any = None
    auth: Any = None
    remote_ip: str = ""
    fields: FieldFilter = field(default_factory=FieldFilter)
    catalog: cache.CatalogCache | None = None
    catalog_generation: int | None = None
    # The generations the call's transaction first saw (read once, by one
    # statement, or assumed and checked by its first: store/cache.py; a
    # write call reads the catalog generation again after it wrote, to know
    # whether it changed the catalogue).
    generations: cache.Generations | None = None
    writes: bool = True
    # Facts found out in this call's snapshot that other calls in the same
    # snapshot may reuse (Runner.run_many): None when the call runs alone.
    memo: dict[Any, Any] | None = None
    events: Journal | None = None
    load_parameters: Callable[[Connection], dict[str, str]] | None = None
    credentials: Any = None
    _params: dict[str, str] | None = None
    # For a write: the transaction's count of writes (Connection.writes_so_far)
    # when its catalog generation was last seen unchanged (the generation
    # moves with a write only, so until the next write it is not read
    # again), and whether this transaction has changed it.
    catalog_checked_at: int | None = None
    _catalog_changed: bool = False

    def cached(self, name: str, load: Callable[[Connection], T]) -> T:
        """`load(conn)`, or the process's copy of it made at this call's
        catalog generation (see store/cache.py). The value is shared: never
        change it."""
        if self.catalog is None or self.catalog_generation is None:
            return load(self.conn)
        if self.writes and self._changed_catalog():
            return load(self.conn)      # this call changed the catalog: keep nothing
        return self.catalog.get(self.catalog_generation, name, lambda: load(self.conn))

    def _changed_catalog(self) -> bool:
        """True when this call's transaction has moved the catalog
        generation since the call read it; read again only when the
        transaction wrote since it was last seen unchanged."""
        if self._catalog_changed:
            return True
        written = self.conn.writes_so_far()
        if written == self.catalog_checked_at:
            return False
        if cache.generation(self.conn) != self.catalog_generation:
            self._catalog_changed = True        # a counter: it never comes back
            return True
        self.catalog_checked_at = written
        return False

    def param(self, name: str) -> str:
        """The current value (a string) of instance parameter `name`.
        Errors: TypeError for a Context made without load_parameters."""
        if self._params is None:
            if self.load_parameters is None:
                raise TypeError("this Context reads no instance parameters")
            self._params = self.cached("params", self.load_parameters)
        return self._params[name]

    def param_is_on(self, name: str) -> bool:
        """True when parameter `name` is set to a true value ("1", "on")."""
        return self.param(name) not in ("", "0", "off")

    def forget_params(self) -> None:
        """Drop the cached parameters after they were changed."""
        self._params = None
