"""The OpenAPI description (GET /rest/openapi.json) and its page (GET
/rest/docs): generated from the route table, so every route is described;
valid OpenAPI 3.1; answers of real calls match the schemas it states."""

import base64
import hashlib
import json
import re

import jsonschema_rs
import pytest
import schemathesis

from bugsvc.api.docs import DOCS
from bugsvc.api.operation import REQUIRED, Operation, Operations
from bugsvc.api.operations import OPERATIONS
from bugsvc.api.schemas import SCHEMAS
from bugsvc.errors import http_status
from bugsvc.services import instance
from bugsvc.web.rest.openapi import describe, missing_docs
from bugsvc.web.rest.routes import ROUTES
from bugsvc.web.rest.routing import Route, id_list


_PLACEHOLDER = re.compile(r"\{(\w+)\}")
DESCRIPTION = describe(ROUTES, OPERATIONS)


def first_routes():
    """The routes that answer: the first of each verb and template."""
    seen, routes = set(), []
    for route in ROUTES:
        if (route.method, route.template) not in seen:
            seen.add((route.method, route.template))
            routes.append(route)
    return routes


def route_id(route):
    return f"{route.method} {route.template}"


def answer_validator(operation, status):
    schema = operation["responses"][status]["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": {"schemas": SCHEMAS}},
                                              validate_formats=True)


def assert_matches(operation, status, body):
    errors = [e.message for e in answer_validator(operation, str(status)).iter_errors(body)]
    assert not errors, (errors, body)


# The description and the route table ----------------------------------------

def test_every_operation_has_a_documentation_entry():
    assert missing_docs(OPERATIONS) == []


def test_every_documentation_entry_names_an_operation():
    for name in DOCS:
        assert OPERATIONS.get(name) is not None, f"{name} is documented but is no operation"


# Written for API users -----------------------------------------------------------

# Pointers that a reader outside the project cannot follow: the project's own
# notes (Markdown files, their sections and decisions), issue numbers, paths
# that leave the repository.
OUTSIDE_POINTER = re.compile(r"\b[\w-]+\.md\b|\bsections? \d|\u00a7|\bissues? \d|\bdecisions? \d|"
                             r"\.\./|\bshared[/]")


def test_the_description_has_no_internal_names():
    text = json.dumps(DESCRIPTION)
    modules = {operation.service.__module__.rsplit(".", 1)[1] for operation in OPERATIONS}
    # Every "word.word" that stands alone (not inside a path or a longer name), found once.
    dotted = set(re.findall(r"(?<![\w/.])\w+\.\w+", text))
    for operation in OPERATIONS:
        service = f"{operation.service.__module__.rsplit('.', 1)[1]}.{operation.service.__name__}"
        assert service not in dotted, service
    tags = {tag["name"] for tag in DESCRIPTION["tags"]}
    assert not tags & modules
    operation_tags = {operation["tags"][0] for item in DESCRIPTION["paths"].values()
                      for operation in item.values()}
    assert operation_tags <= tags
    assert "Service " not in text and "ctx" not in text


def test_the_description_and_its_page_point_at_nothing_outside():
    from importlib import resources
    page = resources.files("bugsvc.web.rest").joinpath("docs.html").read_text(encoding="utf-8")
    for text in (json.dumps(DESCRIPTION), page):
        assert OUTSIDE_POINTER.findall(text) == []


# Every error code the interface knows, to tell codes from other numbers in prose.
KNOWN_CODES = ({*range(50, 59), *range(100, 135), *range(300, 308), -303, 410, *range(500, 506),
                *range(600, 607), *range(700, 707), *range(800, 806), 900, 1000,
                *range(1101, 1106), *range(1200, 1203), *range(1210, 1214), 1300, 32000,
                -32000, -32600, -32601, *range(32610, 32615)})


@pytest.mark.parametrize("service", sorted(DOCS))
def test_error_codes_a_service_docstring_lists_are_documented(service):
    docstring = OPERATIONS[service].service.__doc__ or ""
    errors_part = docstring.split("Errors", 1)[1] if "Errors" in docstring else ""
    numbers = {int(n) for n in re.findall(r"(?<![\w.])(-?\d+)(?![\w.])", errors_part)}
    undocumented = sorted((numbers & KNOWN_CODES) - set(DOCS[service].errors)
                          - {306, 32000, 32611, 300, 301, 410})
    assert not undocumented, f"add {undocumented} to the errors of {service} in api/docs.py"


def test_the_description_is_valid_openapi_3_1():
    assert DESCRIPTION["openapi"].startswith("3.1")
    schemathesis.openapi.from_dict(DESCRIPTION).validate()


@pytest.mark.parametrize("route", first_routes(), ids=route_id)
def test_every_route_is_described_with_its_status_and_path_parameters(route):
    operation = DESCRIPTION["paths"][route.template][route.method.lower()]
    assert str(route.status) in operation["responses"]
    path_parameters = [p["name"] for p in operation["parameters"] if p["in"] == "path"]
    assert path_parameters == _PLACEHOLDER.findall(route.template)
    assert "x-undocumented" not in operation
    assert operation["summary"] == DOCS[route.operation].summary


@pytest.mark.parametrize("route", first_routes(), ids=route_id)
def test_errors_are_documented_with_the_error_object_and_their_statuses(route):
    responses = DESCRIPTION["paths"][route.template][route.method.lower()]["responses"]
    # Credentials can be wrong on every call: 306 (400) and 300 (401).
    assert {"400", "401"} <= set(responses)
    for code in DOCS[route.operation].errors:
        status = str(http_status(code))
        assert status in responses, (code, status)
        assert re.search(rf"(?<![\d-]){code}(?!\d)", responses[status]["description"])
    for status in ("400", "401", "404", "413"):
        if status in responses:
            assert responses[status]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"}


@pytest.mark.parametrize("route", first_routes(), ids=route_id)
def test_security_says_which_calls_need_a_login(route):
    security = DESCRIPTION["paths"][route.template][route.method.lower()]["security"]
    assert ({} in security) == (OPERATIONS[route.operation].login != REQUIRED)
    assert {"api_key": []} in security and {"bearer": []} in security


def test_a_new_route_appears_without_touching_the_description_code():
    operations = Operations([Operation("Bugzilla.version", instance.version),
                             Operation("Widget.create", instance.version, login=REQUIRED,
                                       writes=True)])
    routes = [Route("GET", "/widget/{widget}", "Bugzilla.version", path_params=id_list("widget"),
                    status=200),
              Route("POST", "/widget", "Widget.create", status=201)]
    description = describe(routes, operations)
    get = description["paths"]["/widget/{widget}"]["get"]
    assert [p["name"] for p in get["parameters"] if p["in"] == "path"] == ["widget"]
    assert "ids" in get["parameters"][0]["description"]
    post = description["paths"]["/widget"]["post"]
    assert "201" in post["responses"] and {} not in post["security"]
    assert missing_docs(operations) == ["Widget.create"]


def test_a_route_without_an_entry_is_flagged_but_still_described():
    routes = [Route("GET", "/widget", "Bugzilla.version")]
    description = describe(routes, OPERATIONS, docs={})
    operation = description["paths"]["/widget"]["get"]
    assert operation["x-undocumented"] is True
    assert operation["summary"].startswith("Returns")    # the service's docstring
    assert missing_docs(OPERATIONS, docs={})[0] == "Bugzilla.version"


def test_every_reference_resolves_and_every_schema_is_valid_json_schema():
    text = json.dumps(DESCRIPTION)
    for name in set(re.findall(r'"#/components/schemas/(\w+)"', text)):
        assert name in SCHEMAS, name
    for item in DESCRIPTION["paths"].values():
        for operation in item.values():
            for status in operation["responses"]:
                for content in operation["responses"][status]["content"].values():
                    jsonschema_rs.Draft202012Validator(
                        {**content["schema"], "components": {"schemas": SCHEMAS}})
            for parameter in operation.get("parameters", []):
                jsonschema_rs.Draft202012Validator(parameter["schema"])


def test_get_parameters_are_query_parameters_and_writes_take_a_json_body():
    product_get = DESCRIPTION["paths"]["/product"]["get"]
    query = {p["name"]: p for p in product_get["parameters"] if p["in"] == "query"}
    assert {"type", "ids", "names", "include_fields", "exclude_fields"} <= set(query)
    assert query["ids"]["explode"] is True and query["ids"]["style"] == "form"
    create = DESCRIPTION["paths"]["/product"]["post"]["requestBody"]
    body = create["content"]["application/json"]["schema"]
    assert body["required"] == ["name", "description", "version"] and create["required"]
    # A scalar filled by the path is not repeated as a query parameter.
    flag_types = DESCRIPTION["paths"]["/flag_type/{product}"]["get"]["parameters"]
    assert [p["name"] for p in flag_types if p["name"] == "product"] == ["product"]


# Served over HTTP ----------------------------------------------------------

def test_the_description_is_served_as_json_to_everyone(client, admin_key, services):
    services.add_user("plain@example.com")
    plain_key = services.api_key("plain@example.com")
    answers = [client.simulate_get("/rest/openapi.json", headers=headers) for headers in
               ({}, {"X-BUGZILLA-API-KEY": plain_key}, {"X-BUGZILLA-API-KEY": admin_key})]
    for resp in answers:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("application/json")
        assert resp.headers["access-control-allow-origin"] == "*"
        assert resp.json == json.loads(json.dumps(DESCRIPTION))
    assert client.simulate_get("/rest.cgi/openapi.json").json == answers[0].json


def test_the_description_stays_public_while_requirelogin_is_on(client, admin_key):
    resp = client.simulate_put("/rest/parameters", json={"requirelogin": "1"},
                               params={"Bugzilla_api_key": admin_key})
    assert resp.status_code == 200, resp.text
    assert client.simulate_get("/rest/product_accessible").status_code == 401
    assert client.simulate_get("/rest/openapi.json").status_code == 200
    assert client.simulate_get("/rest/docs").status_code == 200


def test_the_description_has_an_etag(client):
    first = client.simulate_get("/rest/openapi.json")
    again = client.simulate_get("/rest/openapi.json",
                                headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_other_verbs_on_the_documentation_are_the_unknown_resource_error(client, method):
    for path in ("/rest/openapi.json", "/rest/docs"):
        resp = client.simulate_request(method, path)
        assert resp.status_code == 404
        assert resp.json["code"] == 32614 and resp.json["error"] is True


def test_the_documentation_page_is_self_contained(client):
    resp = client.simulate_get("/rest/docs")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/html")
    page = resp.text
    assert 'fetch("openapi.json"' in page
    # Nothing is fetched from elsewhere: no external URL, no src or href attribute
    # pointing off the page, and a policy that allows only this page's script.
    assert not re.search(r"https?://|//[a-z0-9]", page.split("<script>")[0])
    assert not re.search(r"\b(src|href)\s*=\s*\"(https?:)?//", page)
    policy = resp.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    script = re.search(r"<script>(.*?)</script>", page, flags=re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    assert "innerHTML" not in script    # text is inserted as text, never as markup


# Real answers match the described schemas --------------------------------------

@pytest.mark.parametrize("path, params", [
    ("/rest/product", {"type": "accessible", "include_fields": "_all"}),
    ("/rest/group", {"membership": "1"}),
    ("/rest/user", {"names": "admin@example.com"}),
    ("/rest/field/bug", {}),
    ("/rest/field/bug/component/1/values", {}),
    ("/rest/flag_type/TestProduct", {}),
    ("/rest/classification/1", {}),
    ("/rest/keyword", {}),
    ("/rest/api_key", {}),
    ("/rest/parameters", {}),
    ("/rest/time", {}),
    ("/rest/last_audit_time", {}),
])
def test_answers_of_reads_match_the_description(client, admin_key, path, params):
    resp = client.simulate_get(path, params={**params, "Bugzilla_api_key": admin_key})
    assert resp.status_code == 200, resp.text
    template = _template_for(path)
    assert_matches(DESCRIPTION["paths"][template]["get"], 200, resp.json)


def test_answers_of_writes_and_errors_match_the_description(client, admin_key):
    key = {"Bugzilla_api_key": admin_key}
    resp = client.simulate_post("/rest/keyword", params=key,
                                json={"name": "shiny", "description": "new"})
    assert_matches(DESCRIPTION["paths"]["/keyword"]["post"], 201, resp.json)
    resp = client.simulate_put("/rest/keyword/shiny", params=key, json={"is_active": False})
    assert_matches(DESCRIPTION["paths"]["/keyword/{keyword}"]["put"], 200, resp.json)
    assert resp.json["keywords"][0]["changes"]["is_active"] == {"added": "0", "removed": "1"}
    resp = client.simulate_get("/rest/keyword/nosuch", params=key)
    assert resp.status_code == 404
    assert_matches(DESCRIPTION["paths"]["/keyword/{keyword}"]["get"], 404, resp.json)


def test_answers_of_bug_calls_match_the_description(client, admin_key):
    key = {"Bugzilla_api_key": admin_key}
    paths = DESCRIPTION["paths"]

    def check(method, path, template, status, body=None, params=None):
        resp = client.simulate_request(method, path, params={**key, **(params or {})},
                                       json=body)
        assert resp.status_code == status, resp.text
        assert_matches(paths[template][method.lower()], status, resp.json)
        return resp.json

    bug = check("POST", "/rest/bug", "/bug", 201, {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "described", "op_sys": "All", "platform": "All", "description": "words",
        "alias": ["described"], "cc": ["admin@example.com"]})
    path = f"/rest/bug/{bug['id']}"
    check("PUT", path, "/bug/{bug}", 200, {"summary": "still described", "status": "IN_PROGRESS",
                                           "comment": {"body": "moving"}})
    check("GET", path, "/bug/{bug}", 200)
    check("GET", "/rest/bug", "/bug", 200, params={"id": str(bug["id"])})
    check("GET", path + "/history", "/bug/{bug}/history", 200)
    check("GET", path + "/comment", "/bug/{bug}/comment", 200)
    check("POST", path + "/attachment", "/bug/{bug}/attachment", 201,
          {"data": "aGVsbG8=", "file_name": "a.txt", "summary": "a file",
           "content_type": "text/plain"})
    check("GET", path + "/attachment", "/bug/{bug}/attachment", 200)
    check("POST", f"/rest/bug_user_last_visit/{bug['id']}", "/bug_user_last_visit/{bug}", 200)
    check("GET", "/rest/bug/999999", "/bug/{bug}", 404)


def test_a_wrong_answer_would_be_caught():
    operation = DESCRIPTION["paths"]["/version"]["get"]
    assert not answer_validator(operation, "200").is_valid({"version": 5.2})
    assert not answer_validator(operation, "400").is_valid({"error": True, "code": "50"})


def _template_for(path):
    path = path[len("/rest"):]
    for template in DESCRIPTION["paths"]:
        pattern = "^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path) and (template == path or "{" in template):
            return template
    raise AssertionError(path)
