"""Every route answers errors with the one error object:
{"error": true, "code": int, "message": str, "documentation": str}, with
HTTP 400, 401 or 404 matching the code.

The routes are read from the route table, so routes added later are covered
without touching this file."""

import json
import re

import pytest

from bugsvc.api.operation import EXEMPT, SELF
from bugsvc.api.operations import OPERATIONS
from bugsvc.errors import http_status
from bugsvc.web.rest.routes import ROUTES


_PLACEHOLDER = re.compile(r"\{\w+\}")
_ALL_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")


def concrete_path(route):
    return "/rest" + _PLACEHOLDER.sub("1", route.template)


def route_id(route):
    return f"{route.method} {route.template}"


def assert_error_shape(resp, expected_code=None):
    assert resp.status_code in (400, 401, 404), (resp.status_code, resp.text)
    body = resp.json
    assert set(body) == {"error", "code", "message", "documentation"}, body
    assert body["error"] is True
    assert isinstance(body["code"], int) and not isinstance(body["code"], bool)
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["documentation"], str) and body["documentation"].startswith("http")
    assert resp.status_code == http_status(body["code"])
    assert "Traceback" not in resp.text
    if expected_code is not None:
        assert body["code"] == expected_code, body
    return body


def test_the_route_table_is_not_empty():
    assert len(ROUTES) >= 10
    assert all(_PLACEHOLDER.sub("1", r.template).startswith("/") for r in ROUTES)


# Calls exempt from login (version, timezone, parameters) run anonymously
# with a refused key instead (tests/accounts/test_auth.py).
CHECKING_ROUTES = [r for r in ROUTES if OPERATIONS[r.operation].login not in (SELF, EXEMPT)]


@pytest.mark.parametrize("route", CHECKING_ROUTES, ids=route_id)
def test_wrong_api_key_is_an_error_on_every_route(client, route):
    resp = client.simulate_request(route.method, concrete_path(route),
                                   params={"Bugzilla_api_key": "0" * 40},
                                   json={} if route.method != "GET" else None)
    assert_error_shape(resp, expected_code=306)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.method != "GET"], ids=route_id)
def test_malformed_json_is_an_error_on_every_write_route(client, admin_key, route):
    resp = client.simulate_request(route.method, concrete_path(route),
                                   params={"Bugzilla_api_key": admin_key},
                                   body=b'{"unterminated": ',
                                   headers={"Content-Type": "application/json"})
    assert_error_shape(resp, expected_code=32000)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.method != "GET"], ids=route_id)
def test_non_object_json_is_an_error_on_every_write_route(client, admin_key, route):
    resp = client.simulate_request(route.method, concrete_path(route),
                                   params={"Bugzilla_api_key": admin_key}, body=b"[1, 2, 3]",
                                   headers={"Content-Type": "application/json"})
    assert_error_shape(resp, expected_code=32000)


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_invalid_callback_is_an_error_on_every_route(client, route):
    resp = client.simulate_request(route.method, concrete_path(route),
                                   query_string="callback=alert(document.cookie)")
    assert_error_shape(resp, expected_code=32611)


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_unregistered_method_on_every_route_path_is_404(client, route):
    path = concrete_path(route)
    allowed = client.simulate_options(path).headers["Allow"]
    missing = next(m for m in _ALL_METHODS if m not in [a.strip() for a in allowed.split(",")])
    resp = client.simulate_request(missing, path)
    assert_error_shape(resp, expected_code=32614)


@pytest.mark.parametrize("route", CHECKING_ROUTES, ids=route_id)
def test_jsonp_errors_keep_the_shape_on_every_route(client, route):
    resp = client.simulate_request(route.method, concrete_path(route),
                                   params={"callback": "cb", "Bugzilla_api_key": "0" * 40})
    assert resp.headers["Content-Type"] == "text/javascript"
    assert resp.text.startswith("/**/cb(") and resp.text.endswith(")")
    body = json.loads(resp.text[len("/**/cb("):-1])
    assert set(body) == {"error", "code", "message", "documentation"}
    assert resp.status_code == http_status(body["code"])


@pytest.mark.parametrize("path", ["/rest/", "/rest/nothing/here", "/rest/group/1/2/3",
                                  "/unrelated", "/rest.cgi/nothing"])
def test_unknown_paths_answer_the_error_object(client, path):
    assert_error_shape(client.simulate_get(path), expected_code=32614)
