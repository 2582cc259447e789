"""The one generic REST resource: match the route, merge the parameters,
run the route's operation through the Runner, render the answer."""

import io
import re

import falcon
from falcon.media.multipart import MultipartFormHandler

from ... import errors
from ...api import json_input
from ...call.encoding import fragments_welcome
from ...errors import ServiceError
from .. import landing
from ..http import credential_headers, parse_query, raw_path, read_body, valid_callback
from . import render


_REST_PREFIX = re.compile(r"^/rest(?:\.cgi)?")
_KEY = re.compile(r"^[\w.-]+$")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _clean_keys(value):
    """Drop, recursively, object keys that do not match ^[\\w.-]+$ (as the reference)."""
    if isinstance(value, dict):
        return {k: _clean_keys(v) for k, v in value.items() if _KEY.match(k)}
    if isinstance(value, list):
        return [_clean_keys(v) for v in value]
    return value


def parse_body(req, limit):
    """The request body as a parameter dict ({} when empty).

    A body is JSON unless its Content-Type is a form's; a form body that
    opens with "{" is JSON too (see below).
    Errors: 32000 (HTTP 413) for a body over `limit` bytes, refused before
    it is read; 32000 for JSON that json_input.decode refuses (malformed, not
    UTF-8, NaN, duplicate keys, too deep ...; the message gives the line and
    column) or a body that is not an object.
    """
    data = read_body(req, limit)
    if not data.strip():
        return {}
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        return parse_multipart(data, req.content_type)
    sent_as = ""
    if content_type in _FORM_TYPES:
        if data.lstrip()[:1] != b"{":
            return parse_query(data.decode("utf-8", errors="replace"))
        # A form body that opens with "{" is a JSON object sent with a form's
        # Content-Type (what `curl -d` does by default). Read as form fields
        # its first field would have an unusable name (field names match
        # ^[\w.-]+$), so no client means it as a form: it is read as the JSON
        # it is, and when it is not valid JSON the message names the header.
        sent_as = (f" (sent with Content-Type: {content_type}; "
                   "send Content-Type: application/json)")
    try:
        body = json_input.decode(data)
    except json_input.JsonInputError as exc:
        raise ServiceError(errors.USER_ERROR,
                           f"Could not parse the JSON body{sent_as}: {exc}.") from None
    if not isinstance(body, dict):
        raise ServiceError(errors.USER_ERROR, "The JSON body must be an object.")
    return _clean_keys(body)


def parse_multipart(data, content_type):
    """The fields of a multipart/form-data body ({name: text}; a repeated name
    gives a list), as the reference reads such a body as form fields.

    Errors: 32000 for a body that is not valid multipart data.
    """
    fields_ = {}
    try:
        for part in MultipartFormHandler().deserialize(io.BytesIO(data), content_type, len(data)):
            if not _KEY.match(part.name or ""):
                continue
            value = part.data.decode("utf-8", errors="replace")
            existing = fields_.get(part.name)
            if existing is None:
                fields_[part.name] = value
            else:
                fields_[part.name] = (existing if isinstance(existing, list)
                                      else [existing]) + [value]
    except (falcon.MediaMalformedError, falcon.HTTPError, ValueError) as exc:
        raise ServiceError(errors.USER_ERROR, f"Could not parse the form body: {exc}") from None
    return fields_


def merge_params(method, path_params, query, body):
    """Merge path, body and query parameters as Bugzilla's REST layer does.

    GET: list path values are joined with the same query key (path first,
    duplicates dropped); scalar path values replace it. Other verbs: path,
    then body keys, then query keys (first value of a repeated key).
    """
    if method == "GET":
        params = dict(query)
        for key, value in path_params.items():
            if isinstance(value, list) and key in query:
                extra = query[key] if isinstance(query[key], list) else [query[key]]
                merged = list(value)
                seen = {str(v) for v in merged}
                for item in extra:
                    if str(item) not in seen:
                        seen.add(str(item))
                        merged.append(item)
                params[key] = merged
            else:
                params[key] = value
        return params
    params = dict(path_params)
    params.update(body)
    for key, value in query.items():
        params[key] = value[0] if isinstance(value, list) else value
    return params


class RestAdapter:
    """Falcon sink serving /rest and /rest.cgi from the route table.

    runner: the shared Runner. router: the Router over the route table.
    max_body_bytes: the request body limit.
    """

    def __init__(self, runner, router, max_body_bytes):
        self.runner = runner
        self.router = router
        self.max_body_bytes = max_body_bytes

    def __call__(self, req, resp, **_):
        path = _REST_PREFIX.sub("", raw_path(req), count=1) or "/"
        method = req.method.upper()
        query = parse_query(req.query_string)
        callback = None
        if query.get("callback", "") != "":    # an empty callback is no callback (as the reference)
            callback = valid_callback(query["callback"])
            if callback is None:
                raise ServiceError(errors.INVALID_CALLBACK,
                                   "The callback name you specified is invalid.")
            req.context.callback = callback
        route, operation, path_params, allowed = self.router.match(method, path)
        if route is None:
            if method == "OPTIONS" and allowed:
                return self._options(req, resp, allowed, callback)
            if method == "HEAD" and path == "/":
                return render.respond(req, resp, {}, 200)
            if method == "GET" and path == "/" and landing.wants_page(req):
                return landing.answer(resp)
            raise ServiceError(errors.INVALID_RESOURCE,
                               f"A REST API resource was not found for '{method} {path}'.")
        req.context.operation = operation.name
        body = {} if method == "GET" else parse_body(req, self.max_body_bytes)
        params = merge_params(method, path_params, query, body)
        params.pop("callback", None)
        # A JSON answer (JSONP too) is written out by orjson as it is:
        # kept answers may come as their JSON text (call/encoding.py).
        media = render.negotiate(req.get_header("Accept"))
        with fragments_welcome(media != render.HTML):
            result = self.runner.run(operation, params, credential_headers(req),
                                     req.context.client_address)
        render.respond(req, resp, result, route.status, callback, media)

    def _options(self, req, resp, allowed, callback):
        render.respond(req, resp, {}, 200, callback)
        methods = ", ".join(allowed)
        resp.set_header("Allow", methods)
        resp.set_header("Access-Control-Allow-Methods", methods)
