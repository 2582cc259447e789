"""JSON-RPC at /jsonrpc.cgi: envelopes, POST and GET, JSONP, credentials,
faults with the REST codes, and the same rules as REST (it runs the same
service functions through the same runner)."""

import json
import logging

import pytest
from freezegun import freeze_time

from accounts import ADMIN, ADMIN_PASSWORD
from bugsvc.api.operation import REQUIRED, Operation, Operations
from bugsvc.api.operations import OPERATIONS
from bugsvc.api.runner import Runner
from bugsvc.compose import unit_of_work
from bugsvc.errors import ServiceError
from bugsvc.services import instance
from bugsvc.web.http import redacted
from bugsvc.web.rpc.dispatch import Dispatcher
from bugsvc.web.rpc.jsonrpc import params_object
from catalog_support import set_param


def rpc(client, method, params=None, request_id=1, headers=None, **envelope):
    """POST one JSON-RPC call; returns the falcon result."""
    body = {"method": method, "id": request_id, **envelope}
    if params is not None:
        body["params"] = params
    return client.simulate_post("/jsonrpc.cgi", body=json.dumps(body),
                                headers={"Content-Type": "application/json", **(headers or {})})


def rpc_get(client, **query):
    if "params" in query and not isinstance(query["params"], str):
        query["params"] = json.dumps(query["params"])
    return client.simulate_get("/jsonrpc.cgi", params=query)


# Envelopes -----------------------------------------------------------------------

def test_version_1_0_answer_has_result_null_error_and_the_id(client):
    resp = rpc(client, "Bugzilla.version", [{}], request_id=7)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert resp.json == {"result": {"version": "5.2"}, "error": None, "id": 7}


def test_version_1_1_answer_and_error_carry_version_and_name(client):
    ok = rpc(client, "Bugzilla.timezone", {}, request_id="a", version="1.1").json
    assert ok == {"version": "1.1", "result": {"timezone": "+0000"}, "id": "a"}
    failed = rpc(client, "Group.get", {}, request_id="b", version="1.1").json
    assert failed["version"] == "1.1" and failed["id"] == "b" and "result" not in failed
    assert failed["error"]["code"] == 410 and failed["error"]["name"] == "JSONRPCError"


def test_version_2_0_answers_success_and_error_objects(client):
    ok = rpc(client, "Bugzilla.version", {}, request_id=3, jsonrpc="2.0").json
    assert ok == {"jsonrpc": "2.0", "result": {"version": "5.2"}, "id": 3}
    failed = rpc(client, "No.such", {}, request_id=4, jsonrpc="2.0").json
    assert failed["jsonrpc"] == "2.0" and failed["id"] == 4 and "result" not in failed
    assert failed["error"]["code"] == -32601


def test_notification_without_id_runs_the_call_and_answers_nothing(client, admin_key, services):
    body = {"jsonrpc": "2.0", "method": "Group.create",
            "params": {"name": "quiet", "description": "Quiet people",
                       "Bugzilla_api_key": admin_key}}
    resp = client.simulate_post("/jsonrpc.cgi", json=body)
    assert resp.status_code == 200 and resp.content == b""
    assert "quiet" in services.group_names()
    old_style = client.simulate_post("/jsonrpc.cgi", json={"method": "Bugzilla.version",
                                                           "params": [{}], "id": None})
    assert old_style.status_code == 200 and old_style.content == b""


def test_params_as_object_array_or_absent_mean_the_same(client, admin_key):
    as_array = rpc(client, "Group.get", [{"names": ["admin"], "Bugzilla_api_key": admin_key}]).json
    as_object = rpc(client, "Group.get", {"names": ["admin"], "Bugzilla_api_key": admin_key}).json
    assert as_array == as_object
    assert [g["name"] for g in as_object["result"]["groups"]] == ["admin"]
    assert rpc(client, "Bugzilla.version").json["result"] == {"version": "5.2"}
    assert rpc(client, "Bugzilla.version", []).json["result"] == {"version": "5.2"}


@pytest.mark.parametrize("params", [[1], "text", 5, [["a"]]])
def test_params_that_hold_no_object_are_32000(client, params):
    error = rpc(client, "Bugzilla.version", params).json["error"]
    assert error["code"] == 32000


def test_params_object_takes_the_first_object_of_an_array():
    assert params_object([{"a": 1}, {"b": 2}]) == {"a": 1}
    assert params_object(None) == {} and params_object([]) == {}
    with pytest.raises(ServiceError) as caught:
        params_object([2, {"a": 1}])
    assert caught.value.code == 32000


# Faults -------------------------------------------------------------------------

def test_errors_answer_http_200_with_the_rest_code(client):
    rest = client.simulate_get("/rest/group")
    resp = rpc(client, "Group.get", {})
    assert rest.status_code == 401 and resp.status_code == 200
    assert resp.json["error"]["code"] == rest.json["code"] == 410
    assert resp.json["result"] is None and resp.json["id"] == 1


def test_unknown_method_is_32601(client):
    for name in ("Bug.nothing", "Nothing.get", "update_parameters", "version"):
        assert rpc(client, name, {}).json["error"]["code"] == -32601


def test_method_without_a_name_is_32000(client):
    resp = client.simulate_post("/jsonrpc.cgi", json={"params": [{}], "id": 9})
    assert resp.json["error"]["code"] == 32000 and resp.json["id"] == 9


@pytest.mark.parametrize("body", ["{bad", "[1, 2]", "NaN", "\"text\"", ""])
def test_unreadable_or_batch_bodies_are_32000(client, body):
    resp = client.simulate_post("/jsonrpc.cgi", body=body,
                                headers={"Content-Type": "application/json"})
    assert resp.status_code == 200
    assert resp.json["error"]["code"] == 32000 and resp.json["id"] is None


def test_unexpected_exception_is_logged_and_answered_32000_minus(client, swap_service, caplog):
    def broken(ctx, params):
        raise RuntimeError("secret internals")
    swap_service("Bugzilla.version", broken)
    with caplog.at_level(logging.ERROR, logger="bugsvc.web.rpc"):
        resp = rpc(client, "Bugzilla.version", {})
    assert resp.json["error"]["code"] == -32000
    assert "secret internals" not in resp.text
    assert "secret internals" in caplog.text


def test_other_http_verbs_are_32610(client):
    resp = client.simulate_put("/jsonrpc.cgi", json={"method": "Bugzilla.version", "id": 1})
    assert resp.status_code == 200 and resp.json["error"]["code"] == 32610


# Content type (a cross-site form cannot post application/json) -------------------

@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", ""])
def test_post_without_json_content_type_is_32613_and_changes_nothing(client, admin_key,
                                                                     services, content_type):
    body = json.dumps({"method": "Group.create", "id": 1,
                       "params": {"name": "csrf", "description": "Forged",
                                  "Bugzilla_api_key": admin_key}})
    resp = client.simulate_post("/jsonrpc.cgi", body=body, headers={"Content-Type": content_type})
    assert resp.status_code == 200 and resp.json["error"]["code"] == 32613
    assert "csrf" not in services.group_names()


@pytest.mark.parametrize("content_type", ["application/json; charset=UTF-8",
                                          "application/json-rpc", "APPLICATION/JSON"])
def test_json_content_types_with_parameters_are_accepted(client, content_type):
    body = json.dumps({"method": "Bugzilla.version", "id": 1})
    resp = client.simulate_post("/jsonrpc.cgi", body=body, headers={"Content-Type": content_type})
    assert resp.json["result"] == {"version": "5.2"}


# GET and JSONP -------------------------------------------------------------------

@freeze_time("2026-03-04 05:06:07")
def test_get_calls_a_reading_method_with_json_params(client, admin_key):
    resp = rpc_get(client, method="Bugzilla.time", id="5")
    assert resp.json["result"]["db_time"] == "2026-03-04T05:06:07Z" and resp.json["id"] == "5"
    groups = rpc_get(client, method="Group.get",
                     params=[{"names": ["admin"], "Bugzilla_api_key": admin_key}]).json
    assert [g["name"] for g in groups["result"]["groups"]] == ["admin"]
    assert groups["id"] is None and groups["error"] is None


def test_get_with_version_answers_in_that_envelope(client):
    assert rpc_get(client, method="Bugzilla.version", version="1.1").json == {
        "version": "1.1", "result": {"version": "5.2"}, "id": None}
    assert rpc_get(client, method="Bugzilla.version", jsonrpc="2.0", id="z").json == {
        "jsonrpc": "2.0", "result": {"version": "5.2"}, "id": "z"}


def test_get_may_not_call_a_changing_method(client, admin_key, services):
    resp = rpc_get(client, method="Group.create",
                   params={"name": "viaget", "description": "d", "Bugzilla_api_key": admin_key})
    assert resp.status_code == 200 and resp.json["error"]["code"] == 32610
    assert "viaget" not in services.group_names()
    login = rpc_get(client, method="User.login",
                    params={"login": ADMIN, "password": ADMIN_PASSWORD})
    assert login.json["error"]["code"] == 32610
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]


def test_get_without_method_or_with_bad_params_is_32000(client):
    assert rpc_get(client).json["error"]["code"] == 32000
    bad = rpc_get(client, method="Bugzilla.version", params="[{oops")
    assert bad.json["error"]["code"] == 32000


def test_get_with_callback_answers_jsonp_for_results_and_errors(client):
    resp = rpc_get(client, method="Bugzilla.version", callback="handle.it[0]")
    assert resp.headers["Content-Type"] == "text/javascript; charset=UTF-8"
    assert resp.text.startswith("/**/handle.it[0](") and resp.text.endswith(")")
    inner = json.loads(resp.text[len("/**/handle.it[0]("):-1])
    assert inner["result"] == {"version": "5.2"}
    failed = rpc_get(client, method="Group.get", callback="cb")
    assert failed.text.startswith("/**/cb(") and '"code":410' in failed.text


@pytest.mark.parametrize("callback", ["alert(1)", "a b", "", "<script>"])
def test_invalid_callback_is_32611_in_plain_json(client, callback):
    resp = rpc_get(client, method="Bugzilla.version", callback=callback)
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert resp.json["error"]["code"] == 32611


def test_get_answers_etag_and_304_when_unchanged(client):
    first = rpc_get(client, method="Bugzilla.version")
    tag = first.headers["ETag"]
    again = client.simulate_get("/jsonrpc.cgi", params={"method": "Bugzilla.version"},
                                headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""


def test_params_in_the_query_string_never_reach_the_access_log():
    logged = redacted('method=User.get&params=[{"Bugzilla_api_key":"k"}]&id=1')
    assert "Bugzilla_api_key" not in logged and "params=[hidden]" in logged


# Credentials and permissions --------------------------------------------------------

def test_group_create_needs_login_and_creategroups(client, admin_key, plain_key, services):
    params = {"name": "builders", "description": "Build people"}
    assert rpc(client, "Group.create", dict(params)).json["error"]["code"] == 410
    denied = rpc(client, "Group.create", {**params, "Bugzilla_api_key": plain_key}).json
    assert denied["error"]["code"] == 304
    assert "builders" not in services.group_names()
    created = rpc(client, "Group.create", {**params, "Bugzilla_api_key": admin_key}).json
    assert isinstance(created["result"]["id"], int)
    assert "builders" in services.group_names()


def test_credentials_in_headers_are_read(client, admin_key):
    resp = rpc(client, "Group.get", {"names": ["admin"]}, headers={"X-BUGZILLA-API-KEY": admin_key})
    assert resp.json["result"]["groups"][0]["name"] == "admin"
    bearer = rpc(client, "Group.get", {"names": ["admin"]},
                 headers={"Authorization": f"Bearer {admin_key}"})
    assert bearer.json["error"] is None


def test_wrong_credentials_are_errors_not_anonymous_calls(client, plain_key):
    bad_key = rpc(client, "Bugzilla.extensions", {"Bugzilla_api_key": "x" * 40}).json
    assert bad_key["error"]["code"] == 306
    bad_password = rpc(client, "Bugzilla.version",
                       {"Bugzilla_login": "plain@example.com", "Bugzilla_password": "nope"}).json
    assert bad_password["error"]["code"] == 300
    good = rpc(client, "Group.get", {"Bugzilla_login": "plain@example.com",
                                     "Bugzilla_password": "plain-password-1"}).json
    assert good["error"]["code"] == 805       # logged in, but may see no group


def test_login_token_then_logout(client, services):
    login = rpc(client, "User.login", {"login": ADMIN, "password": ADMIN_PASSWORD}).json["result"]
    token = login["token"]
    assert token.startswith(f"{login['id']}-")
    mine = rpc(client, "Group.get", {"names": ["admin"], "Bugzilla_token": token}).json
    assert mine["result"]["groups"][0]["name"] == "admin"
    assert rpc(client, "User.logout", {"Bugzilla_token": token}).json["result"] is None
    after = rpc(client, "Group.get", {"names": ["admin"], "Bugzilla_token": token}).json
    assert after["error"]["code"] == 32000


def test_login_with_wrong_password_is_300(client):
    resp = rpc(client, "User.login", {"login": ADMIN, "password": "wrong"})
    assert resp.status_code == 200 and resp.json["error"]["code"] == 300


def test_include_fields_trim_results_as_over_rest(client, admin_key):
    result = rpc(client, "Group.get", {"names": ["admin"], "include_fields": ["name"],
                                       "Bugzilla_api_key": admin_key}).json["result"]
    assert result == {"groups": [{"name": "admin"}]}


def test_requirelogin_keeps_exempt_methods_open(client, services):
    set_param(services, "requirelogin", "1")
    assert rpc(client, "Bugzilla.version", {}).json["result"] == {"version": "5.2"}
    assert rpc(client, "Bugzilla.time", {}).json["error"]["code"] == 410


# The method table ----------------------------------------------------------------------

def test_only_operations_that_read_are_reachable_by_get():
    for operation in OPERATIONS:
        if operation.reachable_by_get:
            assert not operation.writes, operation.name
    # Login and token checks would put secrets into URLs.
    for name in ("User.login", "User.logout", "User.valid_login"):
        assert not OPERATIONS[name].reachable_by_get


def test_methods_are_the_operations_of_the_same_name(services, config):
    dispatcher = Dispatcher(Runner(unit_of_work(services.db, config)), OPERATIONS)
    group_get = dispatcher.lookup("Group.get", via_get=True)
    assert group_get.service.__module__ == "bugsvc.services.group"
    assert group_get.login == REQUIRED and not group_get.writes
    assert dispatcher.lookup("Group.create").writes


def test_an_unknown_name_is_an_unknown_method(services, config):
    table = Operations([Operation("Test.read", instance.version)])
    dispatcher = Dispatcher(Runner(unit_of_work(services.db, config)), table)
    for name in ("Test.module", "Bug.get", "", None, 7):
        with pytest.raises(ServiceError) as caught:
            dispatcher.lookup(name)
        assert caught.value.code == -32601
    found = dispatcher.lookup("Test.read", via_get=True)
    assert dispatcher.run(found, {}, {}, "127.0.0.1") == {"version": "5.2"}
