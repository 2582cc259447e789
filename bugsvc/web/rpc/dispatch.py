"""Finding an RPC method (an operation of the same name) and running it
through the shared Runner, for both RPC transports."""

import logging

from ...errors import INTERNAL_ERROR, POST_ONLY, UNKNOWN_METHOD, ServiceError


log = logging.getLogger("bugsvc.rpc")


class Dispatcher:
    """Looks methods up in the table of operations and runs them.

    runner: the shared Runner. operations: the Operations; each is an RPC
    method under its own name ("Bug.get").
    """

    def __init__(self, runner, operations):
        self.runner = runner
        self.operations = operations

    def lookup(self, name, via_get=False):
        """The operation called `name`.

        via_get: the call came by JSON-RPC GET, which may reach only the
        operations that read. Errors: -32601 unknown method; 32610 a method
        that writes, called over GET.
        """
        operation = self.operations.get(name)
        if operation is None:
            shown = name if isinstance(name, str) else repr(name)
            raise ServiceError(UNKNOWN_METHOD, f"The requested method '{shown}' was not found.")
        if via_get and not operation.reachable_by_get:
            raise ServiceError(POST_ONLY, f"The method '{name}' may only be called with POST "
                                          "(GET reaches only the methods that read).")
        return operation

    def run(self, operation, params, headers, remote_ip):
        """Run `operation` with `params` (a dict, modified: credentials are
        taken out). Returns the service's result.

        Errors: every ServiceError of the call; any other exception is
        logged with its traceback and becomes -32000 without one.
        """
        try:
            return self.runner.run(operation, params, headers, remote_ip)
        except ServiceError:
            raise
        except Exception:
            log.exception("unexpected error in RPC method %s", operation.name)
            raise ServiceError(INTERNAL_ERROR,
                               "An internal error occurred; it has been logged.") from None
