"""The OpenAPI 3.1 description of the REST interface, generated from the
route table (paths, verbs, success statuses, path parameters), the
operations they reach (login rules, reading or writing, answer shapes) and
api/docs.py (parameters, answers, error codes), so a new route shows up by
itself; and the falcon resources serving it at GET /rest/openapi.json and a
self-contained documentation page at GET /rest/docs."""

import base64
import hashlib
import inspect
import re
import threading
from importlib import resources

from ... import __version__
from ...api.docs import DOCS, TAGS, Doc
from ...api.operation import EXEMPT, REQUIRED, SELF
from ...api.schemas import SCHEMAS, STR, obj, ref, strs
from ...errors import INVALID_CALLBACK, USER_ERROR, http_status
from . import render


OPENAPI_VERSION = "3.1.0"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_ERROR_STATUSES = ("400", "401", "404")
# Conditions any call can meet: a bad API key (306), token or JSON body
# (32000), JSONP callback (32611); a wrong login/password (300), a disabled
# account (301), no login where one is needed (410).
_COMMON_CODES = (306, USER_ERROR, INVALID_CALLBACK, 300, 301, 410)
_LOGIN_TEXT = {
    REQUIRED: "Login required (410 without credentials).",
    EXEMPT: ("No login needed, even while the parameter requirelogin is on; unless a login "
             "name is given, an API key or token that is refused is ignored (the call runs "
             "anonymously)."),
    SELF: "The call checks the credentials it is given itself.",
}
_OPTIONAL_LOGIN = ("Login optional; credentials show what only some may see. While the "
                   "parameter requirelogin is on, anonymous calls answer 410.")
_FIELD_PARAMS = {
    "include_fields": strs("only these fields (comma-separated or repeated; dotted names "
                           "for subfields; _all, _default, _extra, _custom)"),
    "exclude_fields": strs("leave these fields out (beats include_fields)"),
}
SECURITY_SCHEMES = {
    "api_key": {"type": "apiKey", "in": "query", "name": "Bugzilla_api_key",
                "description": "An API key (also Service_api_key or api_key; in a JSON body "
                               "too)."},
    "api_key_header": {"type": "apiKey", "in": "header", "name": "X-BUGZILLA-API-KEY",
                       "description": "An API key in a header (also X-SERVICE-API-KEY)."},
    "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer "
                                                                  "<API key>."},
    "token": {"type": "apiKey", "in": "query", "name": "Bugzilla_token",
              "description": "A login token from GET /login (deprecated; also "
                             "X-BUGZILLA-TOKEN)."},
}
_SIGNED_IN = [{name: []} for name in SECURITY_SCHEMES]

INTRODUCTION = """\
A bug tracker whose REST interface is compatible with Bugzilla 5.x. Every path \
below starts with /rest (/rest.cgi is an alias).

Parameters: GET calls take query parameters; a parameter given several times \
is an array (ids=1&ids=2). Other calls take a JSON object as body, sent with \
Content-Type: application/json (a JSON object sent with a form's type, as \
curl -d does, is read as JSON too; form fields are read as parameters); \
query parameters override body keys of the same name. \
Booleans: 0, "", false, no, off are false, anything else is true. Parameters \
that a path template fills (ids, names ...) are joined with the same query \
parameter on GET and replaced by the body's on other verbs.

Credentials: an API key (Bugzilla_api_key parameter, X-BUGZILLA-API-KEY \
header or Authorization: Bearer), a login and password \
(Bugzilla_login/Bugzilla_password) or a login token (Bugzilla_token). \
Credentials that are present but wrong are an error, never an anonymous call.

Answers: JSON objects (a scalar result comes as {"result": value}; a few \
calls answer a bare array). Accept: text/html gives the JSON inside an HTML \
page; a callback parameter gives JSONP. include_fields and exclude_fields \
choose the fields of the objects where a call says so. Every error is \
{"error": true, "code", "message", "documentation"} with HTTP 400, 401 or \
404 as the code maps (and 413 for a body over the size limit).
"""


def describe(routes, operations, docs=None):
    """The OpenAPI document (a dict) for `routes` reaching `operations`,
    with `docs` (default api/docs.py DOCS) as the source of parameter and
    answer schemas."""
    docs = DOCS if docs is None else docs
    paths, operation_ids, modules = {}, set(), []
    for route in routes:
        item = paths.setdefault(route.template, {})
        verb = route.method.lower()
        if verb in item:
            continue    # an earlier route with this verb and template wins
        operation = operations[route.operation]
        module = _tag(operation)
        if module not in modules:
            modules.append(module)
        item[verb] = _operation(route, operation, docs.get(operation.name), _tag_name(module),
                                operation_ids)
    paths.update(_documentation_paths())
    order = list(TAGS)
    modules.sort(key=lambda m: order.index(m) if m in order else len(order))
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "bugsvc REST interface", "version": __version__,
                 "description": INTRODUCTION},
        "servers": [{"url": "/rest", "description": "this service"}],
        "tags": [{"name": _tag_name(m), "description": TAGS.get(m, ("", ""))[1]} for m in modules]
        + [{"name": "Documentation", "description": "This description and its page."}],
        "paths": paths,
        "components": {"schemas": SCHEMAS, "securitySchemes": SECURITY_SCHEMES},
    }


def _tag_name(module):
    """The name the documentation shows for a service module's calls."""
    return TAGS[module][0] if module in TAGS else module.replace("_", " ").capitalize()


def missing_docs(operations, docs=None):
    """Names of the operations that have no entry in `docs`, in table order."""
    docs = DOCS if docs is None else docs
    return [operation.name for operation in operations if operation.name not in docs]


def _tag(operation):
    """The description's section of an operation: its service module."""
    return operation.service.__module__.rsplit(".", 1)[-1]


def _operation(route, operation, doc, tag, operation_ids):
    documented = doc is not None
    doc = doc or Doc(summary=_first_line(operation))
    path_keys = _path_keys(route)
    parameters = [_path_parameter(name, path_keys, route) for name in _placeholders(route)]
    described = {
        "tags": [tag],
        "summary": doc.summary,
        "operationId": _operation_id(route, operation_ids),
        "description": _description(operation),
        "parameters": parameters,
        "responses": _responses(route, operation, doc),
        "security": _SIGNED_IN if operation.login == REQUIRED else [{}] + _SIGNED_IN,
    }
    if not documented:
        described["x-undocumented"] = True
    wants_fields = doc.fields or bool(operation.shapes)
    if route.method == "GET":
        params = {k: v for k, v in doc.params.items() if path_keys.get(k) != "scalar"}
        if wants_fields:
            params.update(_FIELD_PARAMS)
        for name, schema in params.items():
            parameters.append(_query_parameter(name, schema, name in doc.required))
    elif doc.params or doc.body_values is not None:
        described["requestBody"] = _request_body(doc, path_keys)
    return described


def _placeholders(route):
    return _PLACEHOLDER.findall(route.template)


def _path_keys(route):
    """{parameter: "list" | "scalar"} that the route's path parts fill."""
    keys = {}
    for filled in _path_samples(route).values():
        for key, value in filled.items():
            keys[key] = "list" if isinstance(value, list) else "scalar"
    return keys


def _path_samples(route):
    """What the path parts give for a number and for a name: {"7": params, "name": params}."""
    if not route.path_params:
        return {}
    parts = _placeholders(route)
    return {sample: route.path_params({part: sample for part in parts})
            for sample in ("7", "name")}


def _filled_by(route, name, sample):
    """The parameters path part `name` goes into when it reads `sample`."""
    parts = _placeholders(route)
    base = route.path_params({part: "a" for part in parts})
    changed = route.path_params({part: sample if part == name else "a" for part in parts})
    return [key for key in changed if changed[key] != base.get(key)]


def _path_parameter(name, path_keys, route):
    if not route.path_params:
        text = "Part of the path."
    else:
        number, word = _filled_by(route, name, "7"), _filled_by(route, name, "zz")
        if number == word:
            text = f"Goes into the parameter {', '.join(word)}."
        else:
            text = f"Digits go into the parameter {', '.join(number)}; other text into " \
                   f"{', '.join(word)}."
        if any(path_keys.get(key) == "list" for key in number + word):
            text += (" It joins the same query parameter's values." if route.method == "GET"
                     else " A body value of the same name replaces it.")
    return {"name": name, "in": "path", "required": True,
            "schema": {"type": "string", "minLength": 1}, "description": text}


def _query_parameter(name, schema, required):
    parameter = {"name": name, "in": "query", "required": required, "schema": schema}
    if _may_be_array(schema):
        parameter.update(style="form", explode=True)
    return parameter


def _may_be_array(schema):
    if schema.get("type") == "array":
        return True
    return any(_may_be_array(s) for s in schema.get("anyOf", ()))


def _request_body(doc, path_keys):
    required = [name for name in doc.required if name not in path_keys]
    body = obj(doc.params, required=required)
    if doc.body_values is not None:
        body["additionalProperties"] = doc.body_values
    return {"required": bool(required), "content": {"application/json": {"schema": body}}}


def _responses(route, operation, doc):
    success = {"description": "Success.", "content": {"application/json": {"schema": doc.answer}}}
    by_status = {}
    for code in (*doc.errors, *_COMMON_CODES):
        by_status.setdefault(str(http_status(code)), []).append(code)
    responses = {str(route.status): success}
    for status in _ERROR_STATUSES:
        if status in by_status:
            codes = ", ".join(str(c) for c in sorted(set(by_status[status]), key=abs))
            responses[status] = {"description": f"Error; codes {codes}.",
                                 "content": {"application/json": {"schema": ref("Error")}}}
    if operation.writes:
        responses["413"] = {"description": "The request body is over the size limit (code "
                                           "32000).",
                            "content": {"application/json": {"schema": ref("Error")}}}
    return responses


def _operation_id(route, taken):
    slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{route.method} {route.template}").strip("_").lower()
    candidate, number = slug, 2
    while candidate in taken:
        candidate, number = f"{slug}_{number}", number + 1
    taken.add(candidate)
    return candidate


def _description(operation):
    login = _LOGIN_TEXT.get(operation.login, _OPTIONAL_LOGIN)
    docstring = inspect.getdoc(operation.service) or ""
    return f"{login}\n\n{docstring}" if docstring else login


def _first_line(operation):
    docstring = inspect.getdoc(operation.service) or operation.name
    return docstring.splitlines()[0]


def _documentation_paths():
    def operation(operation_id, summary, content):
        return {"get": {"tags": ["Documentation"], "summary": summary,
                        "operationId": operation_id, "security": [{}],
                        "description": "No login needed.",
                        "responses": {"200": {"description": "Success.", "content": content}}}}
    return {
        "/openapi.json": operation("get_openapi_json", "This OpenAPI description.",
                                   {"application/json": {"schema": obj()}}),
        "/docs": operation("get_docs", "A page that shows this description.",
                           {"text/html": {"schema": STR}}),
    }


# Serving ---------------------------------------------------------------------

class OpenApiResource:
    """GET /rest/openapi.json: the description, built once on first use."""

    def __init__(self, routes, operations):
        self._routes = list(routes)
        self._operations = operations
        self._description = None
        self._lock = threading.Lock()

    def description(self):
        with self._lock:
            if self._description is None:
                self._description = describe(self._routes, self._operations)
            return self._description

    def on_get(self, req, resp):
        render.respond(req, resp, self.description(), 200)


class DocsPageResource:
    """GET /rest/docs: one HTML page whose inline script fetches
    openapi.json and renders it; nothing is loaded from elsewhere (the
    Content-Security-Policy allows only this page's own script and style)."""

    def __init__(self):
        self.page = resources.files(__package__).joinpath("docs.html").read_bytes()
        self.policy = _content_security_policy(self.page.decode("utf-8"))

    def on_get(self, req, resp):
        resp.content_type = "text/html; charset=UTF-8"
        resp.set_header("Content-Security-Policy", self.policy)
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Referrer-Policy", "no-referrer")
        resp.data = self.page


def _content_security_policy(page):
    def hashes(tag):
        blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.S)
        return " ".join("'sha256-" + _b64_sha256(block) + "'" for block in blocks)
    return (f"default-src 'none'; script-src {hashes('script')}; style-src {hashes('style')}; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'")


def _b64_sha256(text):
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def add_documentation(app, routes, operations):
    """Serve the description and its page on `app` (under /rest and /rest.cgi);
    these falcon routes take precedence over the REST sink."""
    description, page = OpenApiResource(routes, operations), DocsPageResource()
    for prefix in ("/rest", "/rest.cgi"):
        app.add_route(f"{prefix}/openapi.json", description)
        app.add_route(f"{prefix}/docs", page)
