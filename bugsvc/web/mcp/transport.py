"""MCP's Streamable HTTP transport at /mcp (see the package): one JSON-RPC
2.0 message per POST, each request answered with one JSON body; GET (a
stream of server-initiated messages) and DELETE (ending a session) answer
405, as the transport allows a server without either.

HTTP status: 200 for every answer, a JSON-RPC error included, except a
body that is no JSON-RPC message (400), a protocol version or routing
header this server does not speak or that disagrees with the body (400),
credentials refused or needed (401), a rate limit reached (429, with
Retry-After), an Origin of another site (403) and an installation whose
`mcp_enabled` is off (404). Notifications and responses get 202 and no body.
"""

import logging
import time
from urllib.parse import urlsplit

from ... import __version__
from ...accounts.auth import CredentialsRefused
from ...api import json_input
from ...api.limits import RateLimited
from ...errors import (
    ACCOUNT_DISABLED,
    API_KEY_NOT_VALID,
    INVALID_LOGIN_OR_PASSWORD,
    LOGIN_REQUIRED,
    ServiceError,
)
from ..http import headers_named, json_bytes, read_body, wsgi_header_keys
from .bound import bounded
from .tools import TOOLS, TOOLS_BY_NAME, ToolCall


log = logging.getLogger("bugsvc.web.mcp")

# The protocol versions spoken, oldest first: those reached by the
# `initialize` handshake, and those of the per-request envelope.
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
VERSIONS = HANDSHAKE_VERSIONS + MODERN_VERSIONS
# Before any header names one, the transport's rule is to assume this one.
ASSUMED_VERSION = "2025-03-26"

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"

# JSON-RPC and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Only an API key signs an MCP caller in: these headers reach the Runner.
_CREDENTIAL_KEYS = wsgi_header_keys(("X-BUGZILLA-API-KEY", "X-SERVICE-API-KEY",
                                     "AUTHORIZATION"))
# Service errors that are about the caller's credentials: answered as
# JSON-RPC errors with HTTP 401, not as a tool's failure.
_CREDENTIAL_CODES = (INVALID_LOGIN_OR_PASSWORD, ACCOUNT_DISABLED, API_KEY_NOT_VALID,
                     LOGIN_REQUIRED)

INSTRUCTIONS = (
    "A bug tracker compatible with Bugzilla. Find bugs with search_bugs, read one with "
    "get_bug, learn the products, components and field values with list_products and "
    "list_fields. You see exactly what the API key's account may see.")


class _Refusal(Exception):
    """A request answered with a JSON-RPC error (and an HTTP status)."""

    def __init__(self, code, message, status=200, data=None, headers=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data
        self.headers = headers or {}


class McpResource:
    """Falcon resource serving /mcp. runner: the shared Runner;
    max_body_bytes: the request body limit."""

    def __init__(self, runner, max_body_bytes):
        self.runner = runner
        self.max_body_bytes = max_body_bytes

    def on_get(self, req, resp):
        self._not_offered(req, resp)

    def on_delete(self, req, resp):
        self._not_offered(req, resp)

    def _not_offered(self, req, resp):
        if self._enabled_or_refuse(req, resp):
            resp.status = 405
            resp.set_header("Allow", "POST")
            resp.data = b""

    def _enabled_or_refuse(self, req, resp):
        """True when the endpoint is on; otherwise `resp` says it is off."""
        if self.runner.parameters().get("mcp_enabled") == "1":
            return True
        _answer_error(resp, None, _Refusal(SERVER_ERROR, "The MCP endpoint is turned off on "
                                           "this installation (parameter mcp_enabled).", 404))
        return False

    def on_post(self, req, resp):
        if not self._enabled_or_refuse(req, resp):
            return
        started = time.perf_counter()
        message, request_id, note = None, None, None
        call = ToolCall(self.runner, headers_named(req, _CREDENTIAL_KEYS),
                        req.context.client_address)
        try:
            _check_origin(req, self.runner.parameters().get("urlbase", ""))
            message = _read_message(req, self.max_body_bytes)
            if "method" not in message or "id" not in message:
                # A notification or a response: nothing to answer.
                resp.status = 202
                resp.data = b""
                return
            request_id = message["id"]
            req.context.operation = f"mcp {message['method']}"
            result, note = self._answer(req, message, call)
            resp.status = 200
            resp.content_type = "application/json"
            resp.data = json_bytes({"jsonrpc": "2.0", "id": request_id, "result": result})
            outcome = note or "ok"
        except _Refusal as refusal:
            _answer_error(resp, request_id, refusal)
            outcome = f"error {refusal.code}"
        except Exception:
            log.exception("unexpected error in MCP %s", (message or {}).get("method"))
            _answer_error(resp, request_id, _Refusal(INTERNAL_ERROR, "An internal error "
                                                     "occurred; it has been logged.", 500))
            outcome = f"error {INTERNAL_ERROR}"
        if message is not None and "id" in message and "method" in message:
            tool = (message.get("params") or {}).get("name") \
                if message["method"] == "tools/call" else None
            log.info("%s MCP %s%s -> %s %s %.1fms", call.remote_ip, message["method"],
                     f" {tool}" if isinstance(tool, str) else "",
                     ",".join(call.operations) or "-", outcome,
                     (time.perf_counter() - started) * 1000)

    def _answer(self, req, message, call):
        """(result, log note) of one request. Errors: _Refusal."""
        method = message["method"]
        params = message.get("params") or {}
        if not isinstance(method, str) or not isinstance(params, dict):
            raise _Refusal(INVALID_REQUEST, "A request needs a method (a string) and params "
                                            "(an object).", 400)
        version = _version(req, method, params)
        modern = version in MODERN_VERSIONS
        if method == "initialize":
            return _initialize(params), None
        if method == "server/discover":
            return _discover(version), None
        if method == "ping":
            return _complete({}, modern), None
        if method == "tools/list":
            tools = [tool.listing() for tool in self._tools_for(call)]
            result = {"tools": tools}
            if modern:
                result.update(ttlMs=0, cacheScope="private")
            return _complete(result, modern), None
        if method == "tools/call":
            return self._call_tool(params, call, modern)
        raise _Refusal(METHOD_NOT_FOUND, f"This server has no method '{method}'; it offers "
                                         "tools only (tools/list, tools/call).")

    def _tools_for(self, call):
        """The tools offered to the caller: those that write only to a
        signed-in caller, and only when mcp_allow_write is on."""
        writes = self._may_write(call)
        return [tool for tool in TOOLS if writes or not tool.writes]

    def _may_write(self, call):
        """True when the tools that write are offered to the caller (its key,
        when it gives one, is checked either way). Errors: as _signed_in."""
        signed_in = self._signed_in(call)
        return signed_in and self.runner.parameters().get("mcp_allow_write") == "1"

    def _signed_in(self, call):
        """True when the request names an account (its key is checked, and
        the check counted by the rate limits). Errors: _Refusal 401 for a
        key that is refused."""
        if not call.headers:
            return False
        try:
            call.run("User.whoami", {})
        except ServiceError as exc:
            raise _caller_refusal(exc) from None
        return True

    def _call_tool(self, params, call, modern):
        name = params.get("name")
        arguments = params.get("arguments") or {}
        tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
        if tool is not None and tool.writes and not self._may_write(call):
            tool = None
        if tool is None:
            raise _Refusal(INVALID_PARAMS, f"Unknown tool: {name!r}. Ask tools/list for the "
                                           "tools offered to this caller.")
        if not isinstance(arguments, dict):
            raise _Refusal(INVALID_PARAMS, "The arguments of a tool call must be an object.")
        try:
            answer = tool.run(call, arguments)
        except ServiceError as exc:
            if isinstance(exc, (RateLimited, CredentialsRefused)) or exc.code in _CREDENTIAL_CODES:
                raise _caller_refusal(exc) from None
            text = f"Error {exc.code}: {exc.message}"
            return _complete({"content": [{"type": "text", "text": text}], "isError": True},
                             modern), f"tool error {exc.code}"
        answer, cut = bounded(answer)
        if cut:
            answer["truncated"] = ("This answer was cut to stay small: long texts are "
                                   "shortened and long lists end early; ask for less "
                                   "(a smaller limit, a later offset) to see the rest.")
        result = {"content": [{"type": "text", "text": json_bytes(answer).decode("utf-8")}],
                  "structuredContent": answer, "isError": False}
        return _complete(result, modern), None


# Reading a request ------------------------------------------------------------------

def _check_origin(req, urlbase):
    """Refuse a browser's request from another site (DNS rebinding): an
    Origin header, when sent, must name this server (its Host, or urlbase).
    Errors: _Refusal 403."""
    origin = req.get_header("Origin")
    if not origin:
        return
    netloc = urlsplit(origin).netloc.lower()
    allowed = {(req.get_header("Host") or "").lower(), urlsplit(urlbase).netloc.lower()}
    if not netloc or netloc not in allowed:
        raise _Refusal(INVALID_REQUEST, f"Requests from the origin {origin} are not "
                                        "accepted here.", 403)


def _read_message(req, limit):
    """The one JSON-RPC message of the body. Errors: _Refusal 400 (or 413
    for a body over `limit`)."""
    try:
        data = read_body(req, limit)
    except ServiceError as exc:
        raise _Refusal(INVALID_REQUEST, exc.message, exc.status) from None
    try:
        message = json_input.decode(data)
    except json_input.JsonInputError as exc:
        raise _Refusal(PARSE_ERROR, f"Could not parse the body as JSON: {exc}.", 400) from None
    if isinstance(message, list):
        raise _Refusal(INVALID_REQUEST, "Send one JSON-RPC message per request "
                                        "(batches are not accepted).", 400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise _Refusal(INVALID_REQUEST, "The body must be a JSON-RPC 2.0 message.", 400)
    if "id" in message and "method" in message and (
            isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        raise _Refusal(INVALID_REQUEST, "A request's id must be a string or a number.", 400)
    return message


def _version(req, method, params):
    """The protocol version a request is made in: its envelope's (2026-07-28
    on), else the MCP-Protocol-Version header, else the assumed one.
    Errors: _Refusal 400 for a version not spoken here (unless it is
    `initialize`, which negotiates) or an Mcp-Method header that names
    another method than the body."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    header = req.get_header("MCP-Protocol-Version")
    version = meta.get(PROTOCOL_VERSION_META) or header or ASSUMED_VERSION
    named = req.get_header("Mcp-Method")
    if named is not None and named != method:
        raise _Refusal(HEADER_MISMATCH, f"The Mcp-Method header ({named}) does not match "
                                        f"the request's method ({method}).", 400)
    if method != "initialize" and (version not in VERSIONS
                                   or (header and header not in VERSIONS)):
        raise _Refusal(UNSUPPORTED_PROTOCOL_VERSION,
                       f"Protocol version {version if version not in VERSIONS else header} is "
                       f"not supported; this server speaks {', '.join(VERSIONS)}.", 400,
                       {"supported": list(VERSIONS),
                        "requested": str(version if version not in VERSIONS else header)})
    return version


# Answers ----------------------------------------------------------------------------

def _server_info():
    return {"name": "bugsvc", "title": "bugsvc (Bugzilla-compatible bug tracker)",
            "version": __version__}


def _capabilities():
    return {"tools": {"listChanged": False}}


def _initialize(params):
    requested = params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {"protocolVersion": version, "capabilities": _capabilities(),
            "serverInfo": _server_info(), "instructions": INSTRUCTIONS}


def _discover(version):
    if version not in MODERN_VERSIONS:
        raise _Refusal(UNSUPPORTED_PROTOCOL_VERSION,
                       f"server/discover is part of {', '.join(MODERN_VERSIONS)}, not of "
                       f"{version}.", 400, {"supported": list(VERSIONS), "requested": version})
    return {"supportedVersions": list(VERSIONS), "capabilities": _capabilities(),
            "instructions": INSTRUCTIONS, "resultType": "complete", "ttlMs": 0,
            "cacheScope": "private", "_meta": {SERVER_INFO_META: _server_info()}}


def _complete(result, modern):
    """`result` as the request's era wants it (2026-07-28: resultType)."""
    if modern:
        result["resultType"] = "complete"
    return result


def _caller_refusal(exc):
    """The _Refusal for a ServiceError about the caller: 429 past a rate
    limit (with Retry-After), 401 for credentials refused or needed."""
    data = {"bugzilla_code": exc.code}
    if isinstance(exc, RateLimited):
        return _Refusal(SERVER_ERROR, exc.message, 429, dict(data, retry_after=exc.retry_after),
                        {"Retry-After": str(exc.retry_after)})
    return _Refusal(SERVER_ERROR, exc.message, 401, data,
                    {"WWW-Authenticate": 'Bearer realm="bugsvc"'})


def _answer_error(resp, request_id, refusal):
    error = {"code": refusal.code, "message": refusal.message}
    if refusal.data is not None:
        error["data"] = refusal.data
    resp.status = refusal.status
    resp.content_type = "application/json"
    resp.data = json_bytes({"jsonrpc": "2.0", "id": request_id, "error": error})
    for name, value in refusal.headers.items():
        resp.set_header(name, value)
