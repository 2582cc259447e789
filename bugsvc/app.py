"""create_app(config): the falcon application. No I/O happens at import."""

import logging
import time
from urllib.parse import unquote_plus

import falcon

from . import errors, landing
from .auth import Authenticator
from .db import Database
from .errors import ServiceError, RequestTooLarge
from .rest import render
from .rest.adapter import RestAdapter
from .rest.routes import ROUTES
from .rest.openapi import add_documentation
from .rest.routing import Router
from .rpc.dispatch import Dispatcher
from .rpc.jsonrpc import JsonRpcAdapter
from .rpc.xmlrpc import XmlRpcAdapter

log = logging.getLogger("bugsvc")
access_log = logging.getLogger("bugsvc.access")

# Query keys whose values never reach the log: every spelling of an API key,
# password or token (Bugzilla_/Service_ prefixed or plain, any case, even
# percent-encoded).
_SECRET_KEY_ENDINGS = ("api_key", "password", "token")


def _error_handler(req, resp, exc, params):
    """Answer every failure with the one error object (compat.md section 9)."""
    status = None
    if isinstance(exc, ServiceError):
        code, message, status = exc.code, exc.message, exc.status
    elif isinstance(exc, falcon.HTTPNotFound) or isinstance(exc, falcon.HTTPMethodNotAllowed):
        code, message = errors.INVALID_RESOURCE, f"A REST API resource was not found for '{req.method} {req.path}'."
    elif isinstance(exc, falcon.HTTPError):
        code, message = errors.USER_ERROR, exc.title or "The request could not be understood."
    else:
        log.error("unexpected error in %s %s", req.method, req.path, exc_info=exc)
        code, message = errors.INTERNAL_ERROR, "An internal error occurred; it has been logged."
    callback = getattr(req.context, "callback", None)
    render.respond(req, resp, errors.error_body(code, message),
                   status or errors.http_status(code), callback)


def _redacted(query_string):
    """The query string with the values of credential parameters hidden."""
    if not query_string:
        return ""
    parts = []
    for part in query_string.split("&"):
        key = part.split("=", 1)[0]
        name = unquote_plus(key).strip().lower()
        # JSON-RPC over GET carries its credentials inside the JSON `params`.
        secret = name.endswith(_SECRET_KEY_ENDINGS) or name == "params"
        parts.append(key + "=[hidden]" if secret else part)
    return "?" + "&".join(parts)


class AccessLog:
    """Falcon middleware: one line per request, secrets hidden."""

    def process_request(self, req, resp):
        req.context.started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        elapsed = (time.perf_counter() - getattr(req.context, "started", time.perf_counter())) * 1000
        status = resp.status if isinstance(resp.status, int) else str(resp.status).split()[0]
        size = len(resp.data) if resp.data is not None else 0
        access_log.info('%s "%s %s%s" %s %d %.1fms', req.remote_addr, req.method, req.path,
                        _redacted(req.query_string), status, size, elapsed)


class BodyLimit:
    """Falcon middleware: a request whose Content-Length is over the limit is
    refused (413) before anything reads its body. A body without a length is
    capped where it is read (the adapters); waitress enforces the same limit
    itself, before the request reaches the application (server_errors.py)."""

    def __init__(self, limit):
        self.limit = limit

    def process_request(self, req, resp):
        length = req.content_length      # a malformed header: 400, code 32000
        if length is not None and length > self.limit:
            raise RequestTooLarge(self.limit)


def create_app(config, db=None, clock=None):
    """Build the falcon App serving bugsvc for `config`.

    db: a Database to use (default: one on config.db_path, not opened yet).
    clock: a function returning the current aware UTC datetime (tests).
    """
    db = db or Database(config.db_path)
    app = falcon.App(middleware=[AccessLog(), BodyLimit(config.max_body_bytes)])
    app.req_options.strip_url_path_trailing_slash = False
    app.resp_options.secure_cookies_by_default = False
    authenticator = Authenticator(db, config.password_cost)
    adapter = RestAdapter(db, config, authenticator, Router(ROUTES), clock)
    app.add_sink(adapter, prefix=r"^/rest(\.cgi)?(?=/|$)")
    add_documentation(app, ROUTES)
    app.add_route("/", landing.RootResource())
    app.add_route("/README.md", landing.ReadmeResource())
    dispatcher = Dispatcher(adapter.runner, ROUTES)
    app.add_sink(JsonRpcAdapter(dispatcher, config), prefix=r"^/jsonrpc\.cgi$")
    app.add_sink(XmlRpcAdapter(dispatcher, config), prefix=r"^/xmlrpc\.cgi$")
    app.add_error_handler(Exception, _error_handler)
    app.add_error_handler(falcon.HTTPError, _error_handler)
    return app
