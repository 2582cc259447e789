"""The one generic REST resource: match the route, merge the parameters,
resolve the caller, run the service in one transaction, trim fields, render."""

import io
import re
from urllib.parse import parse_qsl

import falcon
from falcon.media.multipart import MultipartFormHandler

from .. import errors, json_input
from ..client_address import client_address
from ..errors import ServiceError, RequestTooLarge
from ..runner import Runner
from . import render

_REST_PREFIX = re.compile(r"^/rest(?:\.cgi)?")
_KEY = re.compile(r"^[\w.-]+$")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def raw_path(req):
    """The request path still percent-encoded (so %2F inside a name survives)."""
    uri = req.env.get("REQUEST_URI") or req.env.get("RAW_URI")
    if uri:
        path = uri.split("?", 1)[0]
        if "://" in path:
            path = "/" + path.split("://", 1)[1].split("/", 1)[-1]
        return path
    return req.path


def parse_query(query_string):
    """{key: value} from a query string; a repeated key gives a list."""
    result = {}
    for key, value in parse_qsl(query_string or "", keep_blank_values=True, errors="replace"):
        if key in result:
            existing = result[key]
            if isinstance(existing, list):
                existing.append(value)      # in place: a key repeated n times costs n, not n²
            else:
                result[key] = [existing, value]
        else:
            result[key] = value
    return result


def _clean_keys(value):
    """Drop, recursively, object keys that do not match ^[\\w.-]+$ (as the reference)."""
    if isinstance(value, dict):
        return {k: _clean_keys(v) for k, v in value.items() if _KEY.match(k)}
    if isinstance(value, list):
        return [_clean_keys(v) for v in value]
    return value


def parse_body(req, limit):
    """The request body as a parameter dict ({} when empty).

    Errors: 32000 (HTTP 413) for a body over `limit` bytes, refused before
    it is read; 32000 for JSON that json_input.decode refuses (malformed, not
    UTF-8, NaN, duplicate keys, too deep ...) or a body that is not an object.
    """
    length = req.content_length
    if length is not None and length > limit:
        raise RequestTooLarge(limit)
    data = req.bounded_stream.read(limit + 1) if length is None or length > 0 else b""
    if len(data) > limit:
        raise RequestTooLarge(limit)
    if not data.strip():
        return {}
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        return parse_multipart(data, req.content_type)
    if content_type in _FORM_TYPES:
        return parse_query(data.decode("utf-8", errors="replace"))
    try:
        body = json_input.decode(data)
    except json_input.JsonInputError as exc:
        raise ServiceError(errors.USER_ERROR, f"Could not parse the JSON body: {exc}.") from None
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
                fields_[part.name] = (existing if isinstance(existing, list) else [existing]) + [value]
    except (falcon.MediaMalformedError, falcon.HTTPError, ValueError) as exc:
        raise ServiceError(errors.USER_ERROR, f"Could not parse the form body: {exc}") from None
    return fields_


def merge_params(method, path_params, query, body):
    """Merge path, body and query parameters (compat.md section 2).

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
    """Falcon sink serving /rest and /rest.cgi from the route table."""

    def __init__(self, db, config, authenticator, router, clock=None):
        self.config = config
        self.router = router
        self.runner = Runner(db, config, authenticator, clock)

    def __call__(self, req, resp, **_):
        path = _REST_PREFIX.sub("", raw_path(req), count=1) or "/"
        method = req.method.upper()
        query = parse_query(req.query_string)
        callback = None
        if query.get("callback", "") != "":    # an empty callback is no callback (as the reference)
            callback = render.valid_callback(query["callback"])
            if callback is None:
                raise ServiceError(errors.INVALID_CALLBACK, "The callback name you specified is invalid.")
            req.context.callback = callback
        route, function, path_params, allowed = self.router.match(method, path)
        if route is None:
            if method == "OPTIONS" and allowed:
                return self._options(req, resp, allowed, callback)
            if method == "HEAD" and path == "/":
                return render.respond(req, resp, {}, 200)
            raise ServiceError(errors.INVALID_RESOURCE,
                               f"A REST API resource was not found for '{method} {path}'.")
        body = {} if method == "GET" else parse_body(req, self.config.max_body_bytes)
        params = merge_params(method, path_params, query, body)
        params.pop("callback", None)
        result = self.runner.run(function, route, params, upper_headers(req),
                                 request_address(req, self.config))
        render.respond(req, resp, result, route.status, callback)

    def _options(self, req, resp, allowed, callback):
        render.respond(req, resp, {}, 200, callback)
        methods = ", ".join(allowed)
        resp.set_header("Allow", methods)
        resp.set_header("Access-Control-Allow-Methods", methods)


def request_address(req, config):
    """The client's address (bugsvc/client_address.py: the socket peer, or
    what a trusted proxy forwarded)."""
    return client_address(req.remote_addr, req.get_header("X-Forwarded-For"),
                          config.trusted_proxies)


def upper_headers(req):
    """The request's headers keyed by upper-case name (as extract_credentials
    reads them), straight from the WSGI environment."""
    return {key[5:].replace("_", "-"): value for key, value in req.env.items()
            if key.startswith("HTTP_")}
