"""Finding an RPC method's service function and running it through the
shared Runner, for both RPC transports."""

import importlib
import logging
import re
from dataclasses import dataclass

from ...errors import ServiceError, INTERNAL_ERROR, USER_ERROR
from ..rest.routing import Route
from .methods import METHODS

log = logging.getLogger("bugsvc.rpc")

# Codes of the RPC transports (compat.md section 9).
INVALID_VALUE = -32600            # xmlrpc_invalid_value
UNKNOWN_METHOD = -32601           # unknown_method
POST_ONLY = 32610                 # json_rpc_post_only
XMLRPC_ILLEGAL_CONTENT_TYPE = 32612
JSONRPC_ILLEGAL_CONTENT_TYPE = 32613

_PLACEHOLDER = re.compile(r"\{\w*\}")


def route_key(method, template):
    """'VERB /template' with placeholder names dropped: ('GET', '/bug/{id}') -> 'GET /bug/{}'."""
    return f"{method.upper()} {_PLACEHOLDER.sub('{}', template)}"


@dataclass(frozen=True)
class Bound:
    """A method ready to run: its table entry, service function and rule
    (a Route: login, is_write, shapes, keeps_credentials)."""
    method: object
    function: object
    rule: Route


class Dispatcher:
    """Looks methods up in the method table and runs them.

    runner: the shared Runner. routes: the REST route table the methods
    borrow services and rules from. methods: the RPC method table.
    """

    def __init__(self, runner, routes, methods=METHODS):
        self.runner = runner
        self._methods = {method.name: method for method in methods}
        self._routes = {}
        for route in routes:
            self._routes.setdefault(route_key(route.method, route.template), route)

    def lookup(self, name, via_get=False):
        """The Bound method called `name`.

        via_get: the call came by JSON-RPC GET, which may reach read-only
        methods only. Errors: -32601 unknown method, or one whose REST route
        or service function does not exist; 32610 any other method over GET.
        """
        method = self._methods.get(name) if isinstance(name, str) else None
        if method is None:
            raise _unknown(name)
        if via_get and not method.via_get:
            raise ServiceError(POST_ONLY, f"The method '{name}' may only be called with POST "
                                          "(GET reaches only the methods that read).")
        if method.rest is not None:
            verb, template = method.rest.split(" ", 1)
            rule = self._routes.get(route_key(verb, template))
            if rule is None:
                raise _unknown(name)
            service = rule.service
        else:
            service = method.service
            rule = Route("POST", "", service, login=method.login, write=method.write)
        return Bound(method, _service_function(name, service), rule)

    def run(self, bound, params, headers, remote_ip):
        """Run `bound` with `params` (a dict, modified: credentials are
        taken out). Returns the service's result.

        Errors: every ServiceError of the call; any other exception is
        logged with its traceback and becomes -32000 without one.
        """
        try:
            return self.runner.run(bound.function, bound.rule, params, headers, remote_ip)
        except ServiceError:
            raise
        except Exception:
            log.exception("unexpected error in RPC method %s", bound.method.name)
            raise ServiceError(INTERNAL_ERROR, "An internal error occurred; it has been logged.")


def _service_function(name, service):
    """The function for 'module.function' in bugsvc.services. Errors: -32601
    when the module or the function does not exist; -32000 (logged) when the
    module exists but fails to load."""
    module_name, function_name = service.rsplit(".", 1)
    qualified = f"bugsvc.services.{module_name}"
    try:
        module = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name == qualified:
            raise _unknown(name) from None
        log.exception("service module %s fails to load", qualified)
        raise ServiceError(INTERNAL_ERROR, "An internal error occurred; it has been logged.")
    except Exception:
        log.exception("service module %s fails to load", qualified)
        raise ServiceError(INTERNAL_ERROR, "An internal error occurred; it has been logged.")
    function = getattr(module, function_name, None)
    if not callable(function):
        raise _unknown(name)
    return function


def _unknown(name):
    shown = name if isinstance(name, str) else repr(name)
    return ServiceError(UNKNOWN_METHOD, f"The requested method '{shown}' was not found.")


def read_body(req, limit):
    """The request body as bytes. Errors: 32000 when longer than `limit`."""
    length = req.content_length
    data = req.bounded_stream.read(limit + 1) if length is None or length > 0 else b""
    if len(data) > limit:
        raise ServiceError(USER_ERROR, "The request body is too large.")
    return data
