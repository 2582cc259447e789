"""The one generic REST resource: match the route, merge the parameters,
resolve the caller, run the service in one transaction, trim fields, render."""

import json
import re
from datetime import datetime, timezone
from urllib.parse import parse_qsl

from .. import errors, fields
from ..auth import extract_credentials
from ..caller import ANONYMOUS
from ..context import Context
from ..errors import ServiceError
from . import render
from .routing import REQUIRED, EXEMPT, SELF

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
            result[key] = existing + [value] if isinstance(existing, list) else [existing, value]
        else:
            result[key] = value
    return result


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _clean_keys(value):
    """Drop, recursively, object keys that do not match ^[\\w.-]+$ (as the reference)."""
    if isinstance(value, dict):
        return {k: _clean_keys(v) for k, v in value.items() if _KEY.match(k)}
    if isinstance(value, list):
        return [_clean_keys(v) for v in value]
    return value


def parse_body(req, limit):
    """The request body as a parameter dict ({} when empty).

    Errors: 32000 for malformed JSON or a body that is not an object.
    """
    length = req.content_length
    data = req.bounded_stream.read(limit + 1) if length is None or length > 0 else b""
    if len(data) > limit:
        raise ServiceError(errors.USER_ERROR, "The request body is too large.")
    if not data.strip():
        return {}
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type in _FORM_TYPES and content_type != "multipart/form-data":
        return parse_query(data.decode("utf-8", errors="replace"))
    try:
        body = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ServiceError(errors.USER_ERROR, f"Could not parse the JSON body: {exc}") from None
    if not isinstance(body, dict):
        raise ServiceError(errors.USER_ERROR, "The JSON body must be an object.")
    return _clean_keys(body)


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
                for item in extra:
                    if item not in merged and str(item) not in {str(v) for v in merged}:
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
        self.db = db
        self.config = config
        self.auth = authenticator
        self.router = router
        self.clock = clock or (lambda: datetime.now(timezone.utc))

    def __call__(self, req, resp, **_):
        path = _REST_PREFIX.sub("", raw_path(req), count=1) or "/"
        method = req.method.upper()
        query = parse_query(req.query_string)
        callback = None
        if "callback" in query:
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
        creds = extract_credentials(params, _upper_headers(req), route.keeps_credentials)
        now = self.clock()
        ip = req.remote_addr or ""
        caller = ANONYMOUS if route.login == SELF else self.auth.resolve(creds, ip, now)
        flt = fields.FieldFilter(params.get("include_fields"), params.get("exclude_fields"))
        with self.db.transaction(write=route.is_write) as conn:
            ctx = Context(conn=conn, caller=caller, now=now, config=self.config, auth=self.auth,
                          remote_ip=ip, fields=flt)
            if not caller.is_logged_in:
                if route.login == REQUIRED or (route.login not in (EXEMPT, SELF)
                                               and ctx.param_is_on("requirelogin")):
                    errors.require_login(ctx)
            result = function(ctx, params)
        fields.apply(result, route.shapes, flt)
        render.respond(req, resp, result, route.status, callback)

    def _options(self, req, resp, allowed, callback):
        render.respond(req, resp, {}, 200, callback)
        methods = ", ".join(allowed)
        resp.set_header("Allow", methods)
        resp.set_header("Access-Control-Allow-Methods", methods)


def _upper_headers(req):
    return {name.upper(): value for name, value in req.headers.items()}
