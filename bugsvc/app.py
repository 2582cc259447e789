"""create_app(config): the falcon application, every way in over one Runner.
No I/O happens at import."""

import logging

import falcon

from . import errors
from .api import limits
from .api.operations import OPERATIONS
from .api.runner import Runner
from .compose import unit_of_work
from .errors import ServiceError
from .store.location import open_database
from .web import health, landing, pages
from .web.hooks import add_hooks
from .web.http import AccessLog, BodyLimit, ClientAddress
from .web.mcp import McpResource
from .web.rest import render
from .web.rest.adapter import RestAdapter
from .web.rest.kept_responses import KeptResponses
from .web.rest.openapi import add_documentation
from .web.rest.routes import ROUTES
from .web.rest.routing import Router
from .web.router import LiteralFirstRouter
from .web.rpc.dispatch import Dispatcher
from .web.rpc.jsonrpc import JsonRpcAdapter
from .web.rpc.xmlrpc import XmlRpcAdapter


log = logging.getLogger("bugsvc")


def _error_handler(req, resp, exc, params):
    """Answer every failure outside the RPC envelopes with the one error
    object: {"error": true, "code", "message", "documentation"}."""
    status = None
    if isinstance(exc, ServiceError):
        code, message, status = exc.code, exc.message, exc.status
    elif isinstance(exc, falcon.HTTPNotFound) or isinstance(exc, falcon.HTTPMethodNotAllowed):
        code, message = (errors.INVALID_RESOURCE,
                         f"A REST API resource was not found for '{req.method} {req.path}'.")
    elif isinstance(exc, falcon.HTTPError):
        code, message = errors.USER_ERROR, exc.title or "The request could not be understood."
    else:
        log.error("unexpected error in %s %s", req.method, req.path, exc_info=exc)
        code, message = errors.INTERNAL_ERROR, "An internal error occurred; it has been logged."
    callback = getattr(req.context, "callback", None)
    render.respond(req, resp, errors.error_body(code, message),
                   status or errors.http_status(code), callback)
    if getattr(exc, "retry_after", None):
        resp.set_header("Retry-After", str(exc.retry_after))


def create_app(config, db=None, clock=None, on_events=None, deliverer=None):
    """Build the falcon App serving bugsvc for `config`.

    db: a Database to use (default: one at config.database, not opened yet).
    clock: a function returning the current aware UTC datetime (tests).
    on_events: called after a call committed outbox events (the delivery
    worker of the process starts at once).
    deliverer: the process's Deliverer, whose threads the health check
    watches (None: delivery runs elsewhere).
    """
    db = db or open_database(config.database, pool_size=config.threads + 2,
                             replicas=config.replicas, replica_max_lag=config.replica_max_lag)
    units = unit_of_work(db, config, clock)
    units.on_events = on_events
    runner = Runner(units)
    if config.rate_limits or config.anonymous_rate_limits:
        runner.limiter = limits.Limiter(db, config.rate_limits, config.anonymous_rate_limits,
                                        runner.clock)
    attachments = pages.AttachmentOriginLater()
    measuring = []
    if config.metrics_allow or config.metrics_token:
        from .web.metrics import Metrics
        measured = Metrics(config, db, runner.clock)
        runner.on_transaction = measured.transaction
        if deliverer is not None:
            deliverer.on_outcome = measured.delivery
        measuring.append(measured)
    # Answers kept by request come last: every other middleware sees them.
    # Not while rate limits count every call.
    keeping = [] if runner.limiter is not None else [KeptResponses(db, runner.clock)]
    app = falcon.App(middleware=[ClientAddress(config.trusted_proxies), AccessLog(), *measuring,
                                 health.Heartbeat(db, deliverer, clock),
                                 BodyLimit(config.max_body_bytes), attachments, *keeping],
                     router=LiteralFirstRouter())
    app.req_options.strip_url_path_trailing_slash = False
    app.resp_options.secure_cookies_by_default = False
    app.add_sink(RestAdapter(runner, Router(ROUTES, OPERATIONS), config.max_body_bytes),
                 prefix=r"^/rest(\.cgi)?(?=/|$)")
    add_documentation(app, ROUTES, OPERATIONS)
    # The web pages; a browser opening / gets the home page.
    attachments.site = pages.register(app, runner, config)
    app.add_route("/README.md", landing.ReadmeResource())
    dispatcher = Dispatcher(runner, OPERATIONS)
    app.add_sink(JsonRpcAdapter(dispatcher, config.max_body_bytes), prefix=r"^/jsonrpc\.cgi$")
    app.add_sink(XmlRpcAdapter(dispatcher, config.max_body_bytes), prefix=r"^/xmlrpc\.cgi$")
    # The MCP endpoint for AI assistants (a bugsvc extension).
    app.add_route("/mcp", McpResource(runner, config.max_body_bytes))
    # Code forges' webhooks (a bugsvc extension).
    add_hooks(app, runner, config.max_body_bytes)
    app.add_error_handler(Exception, _error_handler)
    app.add_error_handler(falcon.HTTPError, _error_handler)
    return app
