"""An operation of the interface: one named call ("Bug.get") with its service
function and the rules every way in applies to it. REST routes, RPC method
names, the OpenAPI description and web pages all point at operations; none of
them holds a rule of its own."""

from dataclasses import dataclass, field
from typing import Callable


# Login rules of an operation.
OPTIONAL = "optional"    # anonymous callers allowed (unless requirelogin is on)
REQUIRED = "required"    # 410 when not logged in
EXEMPT = "exempt"        # anonymous allowed even when requirelogin is on
SELF = "self"            # the service checks the credentials itself (login)


@dataclass(frozen=True)
class Operation:
    """One call of the interface.

    name: 'Class.method', as RPC clients call it and the docs name it.
    service: the function `service(ctx, params) -> result`.
    login: one of OPTIONAL, REQUIRED, EXEMPT, SELF.
    writes: runs in a write transaction.
    read_only: may be reached by a request that carries no body (JSON-RPC
    over GET): the reference's READ_ONLY list. Default: not `writes`.
    shapes: {path in the answer: fields.Shape} that include_fields and
    exclude_fields trim.
    keeps_credentials: login, password and token stay in the parameters
    (they are the call's own parameters).
    file_params / file_answer: parameter and answer keys that carry file
    content (base64 text in the services; XML-RPC sends them as <base64>).
    not_while_acting: refused (32000) while a member of bz_sudoers acts as
    the caller (accounts/sudo.py): what would outlast the acting or lock
    the account's owner out (its credentials, its second factor, its
    address).
    from_replica: a read that a read replica of the database may serve
    (searches, bug lists, reports: what is heavy to read and may be a
    moment old, though never older than the caller's own last write).
    """
    name: str
    service: Callable
    login: str = OPTIONAL
    writes: bool = False
    read_only: bool | None = None
    shapes: dict = field(default_factory=dict)
    keeps_credentials: bool = False
    file_params: tuple = ()
    file_answer: tuple = ()
    not_while_acting: bool = False
    from_replica: bool = False

    @property
    def anonymous_when_key_refused(self):
        """True for calls exempt from login (version, timezone, parameters):
        an API key or token that is refused does not fail them, they run as
        an anonymous caller (as the reference, which reads no credential for
        them unless a login name is given; a valid key still counts, so a
        tweakparams member sees every parameter). Clients send whatever key
        their configuration holds with their first call, GET /version."""
        return self.login == EXEMPT

    @property
    def reachable_by_get(self):
        """True when a body-less request (JSON-RPC GET) may call it."""
        return not self.writes if self.read_only is None else self.read_only


class Operations:
    """The table: operations by name, in the order they were declared.

    Errors: ValueError at construction when two operations share a name.
    """

    def __init__(self, operations):
        self._by_name = {}
        for operation in operations:
            if operation.name in self._by_name:
                raise ValueError(f"two operations are named {operation.name}")
            self._by_name[operation.name] = operation

    def get(self, name):
        """The operation called `name`, or None."""
        return self._by_name.get(name) if isinstance(name, str) else None

    def __getitem__(self, name):
        return self._by_name[name]

    def __iter__(self):
        return iter(self._by_name.values())

    def __len__(self):
        return len(self._by_name)
