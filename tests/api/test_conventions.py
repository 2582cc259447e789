"""The interface's common conventions end to end over HTTP: negotiation, JSONP,
the HTML page, headers, parameter merging, boolean coercion and the error
answers of the REST layer (interface "Common conventions")."""

import html
import json
import logging

import pytest
from falcon import testing

from accounts import ADMIN
from bugsvc.accounts import membership
from bugsvc.app import create_app
from bugsvc.services import group


def make_group(services, name, description=None):
    return services.call(group.create, {"name": name, "description": description or name},
                         as_user=ADMIN)["id"]


def group_description(services, name):
    return services.query("SELECT description FROM groups WHERE name = ?", (name,))[0][0]


# Content negotiation, JSONP, the HTML page ----------------------------------

def test_json_by_default_with_vary_and_cors_headers(client):
    resp = client.simulate_get("/rest/version")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert resp.headers["Vary"] == "Accept"
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    allowed = [h.strip() for h in resp.headers["Access-Control-Allow-Headers"].split(",")]
    assert {"origin", "content-type", "accept", "x-requested-with"} <= set(allowed)


def test_error_responses_carry_the_same_headers(client):
    resp = client.simulate_get("/rest/no_such_thing")
    assert resp.headers["Vary"] == "Accept"
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"


@pytest.mark.parametrize("accept, expected", [
    ("text/html", "text/html; charset=UTF-8"),
    ("application/json;q=0.5, text/html;q=0.9", "text/html; charset=UTF-8"),
    ("text/html;q=0.4, application/json", "application/json; charset=UTF-8"),
    ("text/html;q=0, application/javascript;q=0.1", "application/javascript"),
    ("text/javascript", "text/javascript"),
    ("application/*, text/*", "application/json; charset=UTF-8"),
    ("*/*", "application/json; charset=UTF-8"),
    ("image/png", "application/json; charset=UTF-8"),
])
def test_accept_header_with_q_values_picks_the_content_type(client, accept, expected):
    resp = client.simulate_get("/rest/version", headers={"Accept": accept})
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == expected


def test_javascript_accept_without_callback_is_plain_json(client):
    resp = client.simulate_get("/rest/version", headers={"Accept": "application/javascript"})
    assert json.loads(resp.text) == {"version": "5.2"}


def test_jsonp_wraps_the_result_in_the_callback(client):
    resp = client.simulate_get("/rest/version", params={"callback": "my.handlers[0]"})
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/javascript"
    assert resp.text.startswith("/**/my.handlers[0](") and resp.text.endswith(")")
    assert json.loads(resp.text[len("/**/my.handlers[0]("):-1]) == {"version": "5.2"}


def test_jsonp_callback_is_trimmed_and_an_empty_one_ignored(client):
    trimmed = client.simulate_get("/rest/version", query_string="callback=%20cb%20")
    assert trimmed.text.startswith("/**/cb(")
    empty = client.simulate_get("/rest/version", query_string="callback=")
    assert empty.json == {"version": "5.2"}


def test_jsonp_errors_are_wrapped_and_keep_their_status(client):
    resp = client.simulate_get("/rest/group", params={"callback": "cb"})
    assert resp.status_code == 401
    assert resp.headers["Content-Type"] == "text/javascript"
    body = json.loads(resp.text[len("/**/cb("):-1])
    assert body["error"] is True and body["code"] == 410
    missing = client.simulate_get("/rest/nowhere", params={"callback": "cb"})
    assert missing.status_code == 404 and missing.text.startswith("/**/cb(")


def test_jsonp_escapes_javascript_line_separators(client, admin_key, services):
    make_group(services, "lines", description="a\u2028b\u2029c")
    resp = client.simulate_get("/rest/group/lines",
                               params={"callback": "cb", "Bugzilla_api_key": admin_key})
    assert "\u2028" not in resp.text and "\u2029" not in resp.text
    body = json.loads(resp.text[len("/**/cb("):-1])
    assert body["groups"][0]["description"] == "a\u2028b\u2029c"


@pytest.mark.parametrize("callback", ["alert(1)", "a b", "x;y", "<script>", "f-g"])
def test_invalid_callback_is_32611_with_400(client, callback):
    resp = client.simulate_get("/rest/version", params={"callback": callback})
    assert resp.status_code == 400
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert resp.json["code"] == 32611 and resp.json["error"] is True
    assert callback not in resp.text


def test_html_page_escapes_data_so_scripts_cannot_run(client, admin_key, services):
    evil = "<script>alert(1)</script>"
    make_group(services, "evil", description=evil)
    resp = client.simulate_get("/rest/group/evil", params={"Bugzilla_api_key": admin_key},
                               headers={"Accept": "text/html"})
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert "<script>" not in resp.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in resp.text
    pre = resp.text.split("<pre>", 1)[1].split("</pre>", 1)[0]
    data = json.loads(html.unescape(pre))
    assert data["groups"][0]["description"] == evil
    # Pretty-printed with sorted keys.
    assert pre.index("description") < pre.index("&quot;id&quot;") < pre.index("&quot;name&quot;")


def test_html_page_for_an_error_keeps_the_status(client):
    resp = client.simulate_get("/rest/group", headers={"Accept": "text/html"})
    assert resp.status_code == 401
    assert resp.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert "&quot;code&quot;: 410" in resp.text


# ETag -------------------------------------------------------------------------

def test_etag_and_if_none_match_answer_304_without_body(client):
    first = client.simulate_get("/rest/version")
    tag = first.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')
    again = client.simulate_get("/rest/version", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    other = client.simulate_get("/rest/version", headers={"If-None-Match": '"stale"'})
    assert other.status_code == 200 and other.json == {"version": "5.2"}


@pytest.mark.parametrize("header", ['"a", {tag}', "{bare}", 'W/{tag}', "*"])
def test_if_none_match_accepts_lists_bare_weak_and_star(client, header):
    tag = client.simulate_get("/rest/version").headers["ETag"]
    value = header.format(tag=tag, bare=tag.strip('"'))
    assert client.simulate_get("/rest/version", headers={"If-None-Match": value}).status_code == 304


def test_etag_depends_on_content_type_and_content(client, admin_key, services):
    json_tag = client.simulate_get("/rest/version").headers["ETag"]
    html_tag = client.simulate_get("/rest/version", headers={"Accept": "text/html"}).headers["ETag"]
    assert json_tag != html_tag
    params = {"Bugzilla_api_key": admin_key}
    before = client.simulate_get("/rest/group/admin", params=params).headers["ETag"]
    services.call(group.update, {"names": ["admin"], "description": "Admins"}, as_user=ADMIN)
    after = client.simulate_get("/rest/group/admin", params=params,
                                headers={"If-None-Match": before})
    assert after.status_code == 200 and after.headers["ETag"] != before


# Routing basics -----------------------------------------------------------------

def test_rest_cgi_is_an_alias(client):
    assert client.simulate_get("/rest.cgi/version").json == {"version": "5.2"}


@pytest.mark.parametrize("method, path", [
    ("GET", "/rest/no_such_resource"), ("DELETE", "/rest/group"), ("PATCH", "/rest/version"),
    ("PUT", "/rest/timezone"), ("GET", "/elsewhere"), ("GET", "/rest/group/1/extra"),
])
def test_unknown_path_or_method_is_404_32614(client, method, path):
    resp = client.simulate_request(method, path)
    assert resp.status_code == 404
    assert resp.json["code"] == 32614 and resp.json["error"] is True


def test_options_answers_allow_with_the_registered_methods(client):
    resp = client.simulate_options("/rest/group")
    assert resp.status_code == 200 and resp.json == {}
    assert sorted(m.strip() for m in resp.headers["Allow"].split(",")) == ["GET", "POST"]
    assert resp.headers["Access-Control-Allow-Methods"] == resp.headers["Allow"]
    one = client.simulate_options("/rest/group/admin")
    assert sorted(m.strip() for m in one.headers["Allow"].split(",")) == ["GET", "PUT"]
    assert client.simulate_options("/rest/nowhere").status_code == 404


def test_head_on_rest_root_is_200_and_on_routes_404(client):
    assert client.simulate_head("/rest/").status_code == 200
    assert client.simulate_head("/rest").status_code == 200
    assert client.simulate_head("/rest/version").status_code == 404
    # XML-RPC is served (bugsvc/rpc), so python-bugzilla's probe finds it.
    assert client.simulate_head("/xmlrpc.cgi").status_code == 200


# Request bodies ------------------------------------------------------------------

@pytest.mark.parametrize("body", ["{bad json", "{\"name\": }", "NaN", "\xff\xfe"])
def test_malformed_json_is_400_32000_and_stores_nothing(client, admin_key, services, body):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body=body.encode("latin-1"),
                                headers={"Content-Type": "application/json"})
    assert resp.status_code == 400 and resp.json["code"] == 32000
    assert services.query("SELECT COUNT(*) FROM groups")[0][0] == 14


def test_malformed_json_message_gives_the_position(client, admin_key):
    body = '{\n  "name": "positioned",\n  "description": "d",,\n}'
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body=body, headers={"Content-Type": "application/json"})
    assert resp.status_code == 400 and resp.json["code"] == 32000
    assert "line 3 column 22 (character 47)" in resp.json["message"]
    assert body[47] == "," and body[46] == ","


def test_a_long_reason_keeps_the_position_too(client):
    resp = client.simulate_post("/jsonrpc.cgi", body='{"method": "Bug.version", "params": [}',
                                headers={"Content-Type": "application/json"})
    assert "line 1 column 38 (character 37)" in resp.json["error"]["message"]


def test_json_object_sent_with_curls_default_form_type_is_read_as_json(client, admin_key,
                                                                       services):
    # `curl -d '{...}'` sends Content-Type: application/x-www-form-urlencoded.
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body=' {"name": "curled", "description": "Sent by curl -d"}',
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert resp.status_code == 201, resp.text
    assert group_description(services, "curled") == "Sent by curl -d"


def test_malformed_json_with_a_form_type_names_the_content_type_header(client, admin_key,
                                                                       services):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body='{"name": "curled", description: "no quotes"}',
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert resp.status_code == 400 and resp.json["code"] == 32000
    message = resp.json["message"]
    assert ("Content-Type: application/json" in message
            and "line 1 column 20 (character 19)" in message)
    assert services.query("SELECT COUNT(*) FROM groups")[0][0] == 14


@pytest.mark.parametrize("body", ["[1, 2]", "\"text\"", "42", "true", "null"])
def test_json_body_that_is_not_an_object_is_400_32000(client, admin_key, body):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key}, body=body,
                                headers={"Content-Type": "application/json"})
    assert resp.status_code == 400 and resp.json["code"] == 32000


def test_body_keys_with_odd_characters_are_dropped(client, admin_key, services):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                json={"name": "keys", "description": "kept",
                                      "is active": True, "is_active;": True})
    assert resp.status_code == 201
    assert services.query("SELECT is_active FROM groups WHERE name = 'keys'") == [(0,)]


def test_json_body_with_charset_and_without_content_type_is_read(client, admin_key, services):
    for name, content_type in (("utf", "application/json; charset=utf-8"), ("none", None)):
        headers = {"Content-Type": content_type} if content_type else {}
        resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                    body=json.dumps({"name": name, "description": "d"}),
                                    headers=headers)
        assert resp.status_code == 201, resp.text


# Parameter merging --------------------------------------------------------------

def test_get_path_ids_are_unioned_with_query_ids(client, admin_key):
    resp = client.simulate_get("/rest/group/1",
                               query_string=f"ids=8&ids=1&Bugzilla_api_key={admin_key}")
    assert [g["id"] for g in resp.json["groups"]] == [1, 8]
    named = client.simulate_get("/rest/group/admin",
                                query_string=f"ids=8&names=canconfirm&Bugzilla_api_key={admin_key}")
    assert [g["name"] for g in named.json["groups"]] == ["admin", "canconfirm", "editbugs"]


def test_repeated_query_keys_become_arrays(client, admin_key):
    resp = client.simulate_get("/rest/group",
                               query_string=f"names=admin&names=editbugs&names=canconfirm"
                                            f"&Bugzilla_api_key={admin_key}")
    assert [g["name"] for g in resp.json["groups"]] == ["admin", "canconfirm", "editbugs"]


def test_non_get_body_replaces_path_values(client, admin_key, services):
    path_id = make_group(services, "path-group")
    body_id = make_group(services, "body-group")
    resp = client.simulate_put(f"/rest/group/{path_id}", params={"Bugzilla_api_key": admin_key},
                               json={"ids": [body_id], "description": "from body"})
    assert [g["id"] for g in resp.json["groups"]] == [body_id]
    assert group_description(services, "body-group") == "from body"
    assert group_description(services, "path-group") == "path-group"


def test_non_get_path_name_and_body_ids_are_different_keys(client, admin_key, services):
    path_id = make_group(services, "path-group")
    body_id = make_group(services, "body-group")
    resp = client.simulate_put("/rest/group/path-group", params={"Bugzilla_api_key": admin_key},
                               json={"ids": [body_id], "description": "both"})
    assert sorted(g["id"] for g in resp.json["groups"]) == [path_id, body_id]


def test_non_get_query_replaces_body_with_its_first_value(client, admin_key, services):
    make_group(services, "merged")
    resp = client.simulate_put("/rest/group/merged",
                               query_string=f"description=first&description=second"
                                            f"&Bugzilla_api_key={admin_key}",
                               json={"description": "body"})
    assert resp.status_code == 200
    assert group_description(services, "merged") == "first"


def test_form_encoded_body_is_read_as_fields(client, admin_key, services):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body="name=formed&description=From+a+form",
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert resp.status_code == 201
    assert group_description(services, "formed") == "From a form"


def test_multipart_form_body_is_read_as_fields(client, admin_key, services):
    body = ("--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nmulti\r\n"
            "--XyZ\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\n"
            "Sent as a form\r\n--XyZ--\r\n")
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key}, body=body,
                                headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
    assert resp.status_code == 201, resp.text
    assert group_description(services, "multi") == "Sent as a form"


def test_malformed_multipart_body_is_400_32000(client, admin_key, services):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                body="not multipart at all",
                                headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
    assert resp.status_code == 400 and resp.json["code"] == 32000
    assert services.query("SELECT COUNT(*) FROM groups")[0][0] == 14


@pytest.mark.parametrize("value, stored", [("0", 0), ("", 0), ("false", 0), ("FALSE", 0),
                                           ("no", 0), ("Off", 0), ("1", 1), ("true", 1),
                                           ("yes", 1), ("anything", 1)])
def test_query_string_booleans_follow_decision_2(client, admin_key, services, value, stored):
    resp = client.simulate_post("/rest/group",
                                query_string=f"is_active={value}&Bugzilla_api_key={admin_key}",
                                json={"name": "flagged", "description": "d",
                                      "is_active": not stored})
    assert resp.status_code == 201
    assert services.query("SELECT is_active FROM groups WHERE name = 'flagged'") == [(stored,)]


@pytest.mark.parametrize("value, stored", [(True, 1), (False, 0), (1, 1), (0, 0)])
def test_json_booleans_and_numbers(client, admin_key, services, value, stored):
    client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                         json={"name": "flagged", "description": "d", "is_active": value})
    assert services.query("SELECT is_active FROM groups WHERE name = 'flagged'") == [(stored,)]


# Credentials ------------------------------------------------------------------------

def test_credentials_in_query_body_and_headers(client, admin_key, services):
    by_query = client.simulate_get("/rest/group/admin", params={"Bugzilla_api_key": admin_key})
    by_header = client.simulate_get("/rest/group/admin", headers={"X-BUGZILLA-API-KEY": admin_key})
    by_bearer = client.simulate_get("/rest/group/admin",
                                    headers={"Authorization": f"Bearer {admin_key}"})
    assert by_query.status_code == by_header.status_code == by_bearer.status_code == 200
    by_body = client.simulate_post("/rest/group", json={"name": "b", "description": "d",
                                                        "api_key": admin_key})
    assert by_body.status_code == 201


def test_wrong_api_key_is_an_error_never_anonymous(client):
    resp = client.simulate_get("/rest/extensions", params={"Bugzilla_api_key": "x" * 40})
    assert resp.status_code == 400 and resp.json["code"] == 306


# Unexpected failures -----------------------------------------------------------------

def test_unexpected_exception_is_minus_32000_logged_without_traceback(config, db, swap_service,
                                                                      caplog):
    def broken(ctx, params):
        raise RuntimeError("secret internal detail")

    swap_service("Bugzilla.version", broken)
    client = testing.TestClient(create_app(config, db=db))
    with caplog.at_level(logging.ERROR, logger="bugsvc"):
        resp = client.simulate_get("/rest/version")
    assert resp.status_code == 400
    assert resp.json["error"] is True and resp.json["code"] == -32000
    assert isinstance(resp.json["message"], str) and "documentation" in resp.json
    assert "secret internal detail" not in resp.text and "Traceback" not in resp.text
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and logged[0].exc_info[0] is RuntimeError


def test_unexpected_exception_rolls_back_the_write(config, db, monkeypatch, services, admin_key):
    original = membership.create_bug_group

    def create_then_fail(*args, **kwargs):
        original(*args, **kwargs)        # the group and its first members are written
        raise RuntimeError("boom")

    monkeypatch.setattr(membership, "create_bug_group", create_then_fail)
    client = testing.TestClient(create_app(config, db=db))
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                json={"name": "half", "description": "d"})
    assert resp.json["code"] == -32000
    assert services.query("SELECT COUNT(*) FROM groups")[0][0] == 14
    assert services.query("SELECT COUNT(*) FROM user_groups WHERE group_id > 14")[0][0] == 0
