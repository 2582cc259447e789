"""The context every service function and every piece of domain work receives.

A Context is made in one place, the unit of work (unit_of_work.py), which
gives it what the domain lends the kernel: how the instance parameters are
read (`load_parameters`) and the journal that collects the call's outbox
events (`events`). This module imports nothing of the domain.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable

from ..store import cache
from .fields import FieldFilter


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
    """
    conn: object
    caller: object
    now: datetime
    config: object = None
    auth: object = None
    remote_ip: str = ""
    fields: FieldFilter = field(default_factory=FieldFilter)
    catalog: cache.CatalogCache | None = None
    catalog_generation: int | None = None
    writes: bool = True
    # Facts found out in this call's snapshot that other calls in the same
    # snapshot may reuse (Runner.run_many): None when the call runs alone.
    memo: dict | None = None
    events: object = None
    load_parameters: Callable | None = None
    credentials: object = None
    _params: dict | None = None

    def cached(self, name, load):
        """`load(conn)`, or the process's copy of it made at this call's
        catalog generation (see store/cache.py). The value is shared: never
        change it."""
        if self.catalog is None or self.catalog_generation is None:
            return load(self.conn)
        if self.writes and cache.generation(self.conn) != self.catalog_generation:
            return load(self.conn)      # this call changed the catalog: keep nothing
        return self.catalog.get(self.catalog_generation, name, lambda: load(self.conn))

    def param(self, name):
        """The current value (a string) of instance parameter `name`."""
        if self._params is None:
            self._params = self.cached("params", self.load_parameters)
        return self._params[name]

    def param_is_on(self, name):
        """True when parameter `name` is set to a true value ("1", "on")."""
        return self.param(name) not in ("", "0", "off")

    def forget_params(self):
        """Drop the cached parameters after they were changed."""
        self._params = None
