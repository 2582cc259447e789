"""JSON-RPC at /jsonrpc.cgi: the reference's JSON-RPC 1.0 and 1.1 envelopes,
and 2.0 ones; POST with a JSON body, or GET with `method`, `params` (JSON)
and an optional JSONP `callback` for methods that only read.

Errors are answered in the envelope with HTTP 200, as the reference does;
their codes are the REST ones.
"""

import logging
import re

from ...api import json_input
from ...errors import (
    INTERNAL_ERROR,
    INVALID_CALLBACK,
    JSONRPC_ILLEGAL_CONTENT_TYPE,
    POST_ONLY,
    USER_ERROR,
    ServiceError,
)
from ..http import (
    JSONP_TYPE,
    credential_headers,
    json_bytes,
    jsonp,
    not_modified,
    parse_query,
    read_body,
    valid_callback,
)


log = logging.getLogger("bugsvc.rpc")

# The reference's rule: application/json or application/json-rpc, any parameters.
_CONTENT_TYPE = re.compile(r"^application/json(?:-rpc)?(?:;.*)?$", re.IGNORECASE | re.DOTALL)
JSON_TYPE = "application/json; charset=UTF-8"


class Envelope:
    """The protocol version and id of one request, and the shape of its answer.

    version: "1.0" (no version given), "1.1" (a `version` member) or "2.0"
    (`"jsonrpc": "2.0"`). A 1.0 request without id and a 2.0 request
    without an id member are notifications: they get an empty answer.
    """

    def __init__(self, version="1.0", request_id=None, notification=False):
        self.version = version
        self.id = request_id
        self.notification = notification

    @classmethod
    def of(cls, request):
        """The envelope of a decoded request object."""
        if request.get("jsonrpc") == "2.0":
            return cls("2.0", request.get("id"), "id" not in request)
        if request.get("version"):
            return cls("1.1", request.get("id"))
        return cls("1.0", request.get("id"), request.get("id") is None)

    def success(self, result):
        """The answer object for `result` (None for a notification)."""
        if self.notification:
            return None
        if self.version == "2.0":
            return {"jsonrpc": "2.0", "result": result, "id": self.id}
        if self.version == "1.1":
            return {"version": "1.1", "result": result, "id": self.id}
        return {"result": result, "error": None, "id": self.id}

    def failure(self, code, message):
        """The answer object for an error (None for a notification)."""
        if self.notification:
            return None
        error = {"code": code, "message": message}
        if self.version == "2.0":
            return {"jsonrpc": "2.0", "error": error, "id": self.id}
        if self.version == "1.1":
            return {"version": "1.1", "error": {"name": "JSONRPCError", **error}, "id": self.id}
        return {"result": None, "error": error, "id": self.id}


class _Call:
    """What one HTTP request asks for, filled in as it is read."""

    def __init__(self):
        self.envelope = Envelope()
        self.callback = None
        self.method = None
        self.params = {}


def params_object(value):
    """The named parameters of a call: `{...}`, `[{...}]` (the first item),
    or nothing. Errors: 32000 for anything else."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        if not value:
            return {}
        if isinstance(value[0], dict):
            return dict(value[0])
    raise ServiceError(USER_ERROR, "The params of a call must be an object, or an array whose "
                                   "first item is an object.")


def _decode(text, what):
    try:
        return json_input.decode(text)
    except json_input.JsonInputError as exc:
        raise ServiceError(USER_ERROR, f"Could not parse the {what} as JSON: {exc}.") from None


class JsonRpcAdapter:
    """Falcon sink serving /jsonrpc.cgi through the RPC Dispatcher."""

    def __init__(self, dispatcher, max_body_bytes):
        self.dispatcher = dispatcher
        self.max_body_bytes = max_body_bytes

    def __call__(self, req, resp, **_):
        call = _Call()
        try:
            if req.method == "POST":
                self._read_post(req, call)
            elif req.method == "GET":
                self._read_get(req, call)
            else:
                raise ServiceError(POST_ONLY, "JSON-RPC calls are made with POST, or with GET "
                                              "for methods that only read.")
            operation = self.dispatcher.lookup(call.method, via_get=req.method == "GET")
            req.context.operation = operation.name
            result = self.dispatcher.run(operation, call.params, credential_headers(req),
                                         req.context.client_address)
            payload = call.envelope.success(result)
            data, content_type = self._encode(payload, call.callback)
        except ServiceError as exc:
            data, content_type = self._encode(call.envelope.failure(exc.code, exc.message),
                                              call.callback)
        except Exception:
            log.exception("unexpected error in JSON-RPC %s %s", req.method, call.method)
            failure = call.envelope.failure(INTERNAL_ERROR,
                                            "An internal error occurred; it has been logged.")
            data, content_type = self._encode(failure, call.callback)
        resp.status = 200
        if req.method == "GET" and data and not_modified(req, resp, data, content_type):
            return
        resp.content_type = content_type
        resp.data = data

    def _read_post(self, req, call):
        data = read_body(req, self.max_body_bytes)
        if not data.strip():
            raise ServiceError(USER_ERROR, "The request holds no JSON-RPC call.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ServiceError(USER_ERROR, "The JSON-RPC request is not valid UTF-8.") from None
        request = _decode(text, "JSON-RPC request")
        if not isinstance(request, dict):
            raise ServiceError(USER_ERROR, "A JSON-RPC request is one object (batches are not "
                                           "supported).")
        call.envelope = Envelope.of(request)
        if not _CONTENT_TYPE.match(req.content_type or ""):
            raise ServiceError(JSONRPC_ILLEGAL_CONTENT_TYPE,
                               f"When using JSON-RPC over POST, you cannot use "
                               f"'{req.content_type or ''}' as your content type; use "
                               "'application/json'.")
        method = request.get("method")
        if not isinstance(method, str) or not method:
            raise ServiceError(USER_ERROR, "The JSON-RPC request names no method.")
        call.method = method
        call.params = params_object(request.get("params"))

    def _read_get(self, req, call):
        query = {key: value[0] if isinstance(value, list) else value
                 for key, value in parse_query(req.query_string).items()}
        version = query.get("version")
        if query.get("jsonrpc") == "2.0" or version == "2.0":
            call.envelope = Envelope("2.0", query.get("id"))
        else:
            call.envelope = Envelope("1.1" if version else "1.0", query.get("id"))
        if "callback" in query:
            callback = valid_callback(query["callback"])
            if callback is None:
                raise ServiceError(INVALID_CALLBACK, "The callback name you specified is invalid.")
            call.callback = callback
        if not query.get("method"):
            raise ServiceError(USER_ERROR, "When calling JSON-RPC over GET, you must name the "
                                           "method in the 'method' parameter.")
        call.method = query["method"]
        if "params" in query:
            call.params = params_object(_decode(query["params"], "'params' parameter"))

    @staticmethod
    def _encode(payload, callback):
        """(body bytes, content type) of an answer object (None: empty body)."""
        if payload is None:
            return b"", JSON_TYPE
        if callback:
            return jsonp(callback, json_bytes(payload)), JSONP_TYPE
        return json_bytes(payload), JSON_TYPE
