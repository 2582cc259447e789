"""JSON-RPC (/jsonrpc.cgi) against a real server with plain HTTP requests:
the bug, comment, attachment, product, component and login calls
python-bugzilla makes over its other transports, their errors (answered in
the envelope with HTTP 200), and GET with a JSONP callback."""

import base64
import json
import re
import urllib.parse
import urllib.request

import pytest

from pybugzilla_support import ADMIN, ADMIN_PASSWORD, DEV, PLAIN, PRODUCT, QA, seeded_server


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from seeded_server(tmp_path_factory, "jsonrpc_bugs")


def post(site, method, params=None, key=None, request_id=1):
    """POST one JSON-RPC 1.0 call as the owner of `key`; returns (status, answer)."""
    params = dict(params or {})
    if key:
        params["Bugzilla_api_key"] = key
    body = json.dumps({"method": method, "params": [params], "id": request_id}).encode()
    request = urllib.request.Request(site.url + "/jsonrpc.cgi", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def get(site, **query):
    """GET /jsonrpc.cgi; returns (status, content type, body text)."""
    if "params" in query:
        query["params"] = json.dumps(query["params"])
    url = site.url + "/jsonrpc.cgi?" + urllib.parse.urlencode(query)
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers["Content-Type"], response.read().decode()


def result(site, method, params=None, key=None):
    status, answer = post(site, method, params, key)
    assert status == 200 and answer["error"] is None, answer
    return answer["result"]


def fault(site, method, params=None, key=None):
    """The error code of a call that must fail (always with HTTP 200)."""
    status, answer = post(site, method, params, key)
    assert status == 200 and answer["result"] is None, answer
    return answer["error"]["code"]


def new_bug(site, alias, component="Engine"):
    return result(site, "Bug.create", {
        "product": PRODUCT, "component": component, "version": "1.0", "op_sys": "Linux",
        "platform": "PC", "summary": f"Rattle {alias}", "description": "It rattles.",
        "alias": alias}, site.admin_key)["id"]


def test_create_get_by_alias_and_search_with_include_fields(site):
    status, answer = post(site, "Bug.create", {
        "product": PRODUCT, "component": "Wheels", "version": "2.0", "op_sys": "Linux",
        "platform": "PC", "summary": "Wobbles", "description": "At speed.", "alias": "wobble"},
        site.admin_key, request_id=41)
    assert status == 200 and answer["error"] is None and answer["id"] == 41
    bug_id = answer["result"]["id"]

    bug, = result(site, "Bug.get", {"ids": ["wobble"]})["bugs"]
    assert (bug["id"], bug["alias"], bug["component"], bug["version"], bug["assigned_to"]) == \
        (bug_id, ["wobble"], "Wheels", "2.0", QA)
    found = result(site, "Bug.search", {"product": PRODUCT, "component": "Wheels",
                                        "include_fields": ["id", "summary"]})["bugs"]
    assert {"id": bug_id, "summary": "Wobbles"} in found
    assert all(set(item) == {"id", "summary"} for item in found)
    assert [item["id"] for item in result(site, "Bug.search", {"alias": "wobble"})["bugs"]] == \
        [bug_id]


def test_get_errors_are_101_and_100_in_the_envelope(site):
    assert fault(site, "Bug.get", {"ids": [999999]}) == 101
    assert fault(site, "Bug.get", {"ids": ["no-such-alias"]}) == 100


def test_create_needs_a_login_and_changes_nothing(site):
    before = result(site, "Bug.search", {"product": PRODUCT, "include_fields": ["id"]})["bugs"]
    assert fault(site, "Bug.create", {"product": PRODUCT, "component": "Engine", "version": "1.0",
                                      "op_sys": "Linux", "platform": "PC", "summary": "Anon",
                                      "description": "x"}) == 410
    after = result(site, "Bug.search", {"product": PRODUCT, "include_fields": ["id"]})["bugs"]
    assert after == before


def test_update_status_resolution_cc_keywords_and_flag_with_requestee(site):
    bug_id = new_bug(site, "rattle-update")
    answer = result(site, "Bug.update", {
        "ids": [bug_id], "status": "RESOLVED", "resolution": "FIXED",
        "cc": {"add": [DEV]}, "keywords": {"add": ["regression"]},
        "flags": [{"name": "review", "status": "?", "requestee": DEV}]}, site.admin_key)
    changes = answer["bugs"][0]["changes"]
    assert changes["status"] == {"removed": "CONFIRMED", "added": "RESOLVED"}
    assert changes["resolution"] == {"removed": "", "added": "FIXED"}
    assert changes["cc"]["added"] == DEV and changes["keywords"]["added"] == "regression"
    bug, = result(site, "Bug.get", {"ids": [bug_id]})["bugs"]
    assert [(flag["name"], flag["status"], flag["requestee"]) for flag in bug["flags"]] == \
        [("review", "?", DEV)]
    assert fault(site, "Bug.update", {"ids": [bug_id], "summary": "Defaced"}) == 410
    assert fault(site, "Bug.update", {"ids": [bug_id], "status": "CLOSED"}, site.admin_key) == 51


def test_private_comments_reach_insiders_only(site):
    bug_id = new_bug(site, "rattle-comments")
    private_id = result(site, "Bug.add_comment", {"id": bug_id, "comment": "Insiders only",
                                                  "is_private": True}, site.admin_key)["id"]
    assert isinstance(private_id, int)
    assert fault(site, "Bug.add_comment", {"id": bug_id, "comment": "Sneaky", "is_private": True},
                 site.keys[PLAIN]) == 113
    assert fault(site, "Bug.add_comment", {"id": bug_id, "comment": "Anonymous"}) == 410

    def texts(key):
        comments = result(site, "Bug.comments", {"ids": [bug_id]}, key)["bugs"][str(bug_id)]
        return [comment["text"] for comment in comments["comments"]]

    assert texts(site.admin_key) == ["It rattles.", "Insiders only"]
    assert texts(site.keys[PLAIN]) == texts(None) == ["It rattles."]
    assert fault(site, "Bug.comments", {"comment_ids": [private_id]}, site.keys[PLAIN]) == 110


def test_attachment_add_get_and_update(site):
    bug_id = new_bug(site, "rattle-attach")
    content = b"\x00binary\xffcontent"
    ids = result(site, "Bug.add_attachment", {
        "ids": [bug_id], "data": base64.b64encode(content).decode(), "file_name": "r.bin",
        "summary": "Recording", "content_type": "application/octet-stream"},
        site.admin_key)["ids"]
    attach_id, = ids
    got = result(site, "Bug.attachments", {"attachment_ids": [attach_id]})["attachments"]
    assert base64.b64decode(got[str(attach_id)]["data"]) == content
    assert got[str(attach_id)]["file_name"] == "r.bin"

    answer = result(site, "Bug.update_attachment", {
        "ids": [attach_id], "summary": "Louder recording",
        "flags": [{"name": "approval", "status": "?", "requestee": QA}]}, site.admin_key)
    assert answer["attachments"][0]["changes"]["summary"] == \
        {"removed": "Recording", "added": "Louder recording"}
    listed = result(site, "Bug.attachments", {"ids": [bug_id]})["bugs"][str(bug_id)]
    assert [(item["summary"], [(flag["name"], flag["requestee"]) for flag in item["flags"]])
            for item in listed] == [("Louder recording", [("approval", QA)])]
    assert fault(site, "Bug.update_attachment", {"ids": [attach_id], "summary": "Mine"},
                 None) == 410


def test_products_and_component_create(site):
    products = result(site, "Product.get", {"ids": [site.product_id],
                                            "include_fields": ["name", "components.name"]})
    assert products["products"] == [{"name": PRODUCT,
                                     "components": [{"name": "Engine"}, {"name": "Wheels"}]}]
    component = {"product": PRODUCT, "component": "Axles", "description": "Turning",
                 "initialowner": DEV}
    assert fault(site, "Component.create", component, site.keys[PLAIN]) == 304
    assert isinstance(result(site, "Component.create", component, site.admin_key)["id"], int)


def test_login_with_wrong_password_then_login_and_logout(site):
    assert fault(site, "User.login", {"login": ADMIN, "password": "wrong"}) == 300
    token = result(site, "User.login", {"login": ADMIN, "password": ADMIN_PASSWORD})["token"]
    assert result(site, "User.get", {"ids": [1], "Bugzilla_token": token})["users"][0]["name"] \
        == ADMIN
    assert result(site, "User.logout", {"Bugzilla_token": token}) is None
    assert fault(site, "User.get", {"ids": [1], "Bugzilla_token": token}) == 32000


def test_get_with_a_callback_wraps_results_and_errors(site):
    bug_id = new_bug(site, "rattle-jsonp")
    status, content_type, text = get(site, method="Bug.get", params=[{"ids": [bug_id]}],
                                     callback="show", id=3)
    assert status == 200 and content_type.startswith("text/javascript")
    wrapped = re.fullmatch(r"/\*\*/show\((.*)\)", text, re.DOTALL)
    assert wrapped, text
    answer = json.loads(wrapped.group(1))
    assert answer["id"] == "3" and answer["result"]["bugs"][0]["alias"] == ["rattle-jsonp"]

    _, _, text = get(site, method="Bug.get", params=[{"ids": [999999]}], callback="show")
    wrapped = re.fullmatch(r"/\*\*/show\((.*)\)", text, re.DOTALL)
    assert json.loads(wrapped.group(1))["error"]["code"] == 101
    _, _, text = get(site, method="Bug.create", params=[{"product": PRODUCT}])
    assert json.loads(text)["error"]["code"] == 32610
