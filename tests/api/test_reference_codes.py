"""Error codes that the reference's own web-service test suite expects:

- an object id is checked as a whole number of 0 or more before it is
  looked up, so a negative id is 52 ("must be numeric") like "abc", while 0
  or an unknown positive id is the call's not-found answer (Bug.fields with
  ids [-1] is 52, with [0] 51); the same rule holds for comment ids,
  attachment ids and flag type ids;
- Bug.add_comment with an empty id is 100 ("You must enter a valid bug
  number!"); only a missing id is 50.

Each is checked over REST, JSON-RPC and XML-RPC, and nothing is stored."""

import base64
import xmlrpc.client

import pytest

from accounts import ADMIN
from bugsvc.services import attachment, bug as bug_service, comment, flagtype


def rest(client, method, path, key=None, query=None, body=None):
    params = dict(query or {}, **({"Bugzilla_api_key": key} if key else {}))
    resp = client.simulate_request(method, path, params=params, json=body)
    if not isinstance(resp.json, dict):
        return resp.status_code, None, resp.json
    return resp.status_code, resp.json.get("code"), resp.json.get("message")


def jsonrpc(client, method, params, key=None):
    resp = client.simulate_post("/jsonrpc.cgi", json={
        "method": method, "params": [dict(params, **({"Bugzilla_api_key": key} if key else {}))],
        "id": 1})
    assert resp.status_code == 200
    error = resp.json["error"]
    return (error["code"], error["message"]) if error else (None, resp.json["result"])


def xmlrpc_call(client, method, params, key=None):
    body = xmlrpc.client.dumps((dict(params, **({"Bugzilla_api_key": key} if key else {})),),
                               method, allow_none=True)
    resp = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    assert resp.status_code == 200
    try:
        return None, xmlrpc.client.loads(resp.content)[0][0]
    except xmlrpc.client.Fault as fault:
        return fault.faultCode, fault.faultString


def stored(services):
    return [services.table(table)
            for table in ("bugs", "comments", "comment_tags", "attachments", "flag_types")]


@pytest.fixture
def world(services, admin_key):
    """A bug with a comment and an attachment, a flag type, tagging on."""
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE params SET value = 'editbugs' WHERE name = 'comment_taggers_group'")
    bug_id = services.call(bug_service.create, {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "A bug", "op_sys": "Linux", "platform": "PC", "description": "d"},
        as_user=ADMIN)["id"]
    services.call(attachment.create, {
        "ids": [bug_id], "data": base64.b64encode(b"x").decode(), "file_name": "a.txt",
        "summary": "s", "content_type": "text/plain"}, as_user=ADMIN)
    services.call(flagtype.create, {"name": "review", "description": "r"}, as_user=ADMIN)
    return {"bug": bug_id, "key": admin_key}


# Bug.fields ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, code", [(-1, 52), ("-1", 52), ("abc", 52), (1.5, 52),
                                         (0, 51), (99999, 51)])
def test_bug_fields_checks_an_id_as_a_number_before_looking_it_up(client, value, code):
    status, got, _ = rest(client, "GET", "/rest/field/bug", query={"ids": str(value)})
    assert (status, got) == ({52: 400, 51: 404}[code], code)
    assert jsonrpc(client, "Bug.fields", {"ids": [value]})[0] == code
    assert xmlrpc_call(client, "Bug.fields", {"ids": [value]})[0] == code


def test_bug_fields_by_a_good_id_still_answers(client):
    status_id = jsonrpc(client, "Bug.fields", {"names": ["bug_status"]})[1]["fields"][0]["id"]
    code, result = jsonrpc(client, "Bug.fields", {"ids": [status_id]})
    assert code is None and result["fields"][0]["name"] == "bug_status"


# The same rule for other ids --------------------------------------------------------------

def test_negative_comment_and_attachment_ids_are_52(client, services, world):
    key = world["key"]
    before = stored(services)
    assert rest(client, "GET", "/rest/bug/comment/-1", key)[:2] == (400, 52)
    assert jsonrpc(client, "Bug.comments", {"comment_ids": [-1]}, key)[0] == 52
    assert xmlrpc_call(client, "Bug.comments", {"comment_ids": [-1]}, key)[0] == 52
    assert rest(client, "GET", "/rest/bug/attachment/-1", key)[:2] == (400, 52)
    assert jsonrpc(client, "Bug.attachments", {"attachment_ids": [-1]}, key)[0] == 52
    assert rest(client, "PUT", "/rest/bug/attachment/-1", key, body={"summary": "x"})[:2] == (
        400, 52)
    assert xmlrpc_call(client, "Bug.update_attachment", {"ids": [-1], "summary": "x"},
                       key)[0] == 52
    assert rest(client, "POST", f"/rest/bug/{world['bug']}/attachment", key, body={
        "data": base64.b64encode(b"y").decode(), "file_name": "b.txt", "summary": "s",
        "content_type": "text/plain", "obsoletes": [-1]})[:2] == (400, 52)
    assert rest(client, "PUT", "/rest/bug/comment/-1/tags", key, body={"add": ["spam"]})[:2] == (
        400, 52)
    assert jsonrpc(client, "FlagType.update", {"ids": [-1], "sortkey": 5}, key)[0] == 52
    assert stored(services) == before


def test_zero_and_unknown_ids_keep_their_not_found_answers(client, services, world):
    key = world["key"]
    for value in (0, 99999):
        assert rest(client, "GET", f"/rest/bug/comment/{value}", key)[:2] == (400, 111)
        assert jsonrpc(client, "FlagType.update", {"ids": [value], "sortkey": 5}, key)[0] == 51
        assert rest(client, "PUT", f"/rest/bug/comment/{value}/tags", key,
                    body={"add": ["spam"]}) == (200, None, [])


# Bug.add_comment with an empty id -----------------------------------------------------------

@pytest.mark.parametrize("empty", ["", " "])
def test_add_comment_with_an_empty_id_is_100(client, services, world, empty):
    key = world["key"]
    before = stored(services)
    message = "You must enter a valid bug number!"
    assert jsonrpc(client, "Bug.add_comment", {"id": empty, "comment": "hi"}, key) == (100,
                                                                                       message)
    assert xmlrpc_call(client, "Bug.add_comment", {"id": empty, "comment": "hi"}, key) == (
        100, message)
    assert rest(client, "POST", "/rest/bug/%20/comment", key, body={"comment": "hi"}) == (
        400, 100, message)
    assert stored(services) == before


def test_add_comment_without_an_id_is_50(client, services, world):
    key = world["key"]
    before = stored(services)
    assert jsonrpc(client, "Bug.add_comment", {"comment": "hi"}, key)[0] == 50
    assert jsonrpc(client, "Bug.add_comment", {"id": None, "comment": "hi"}, key)[0] == 50
    assert xmlrpc_call(client, "Bug.add_comment", {"id": None, "comment": "hi"}, key)[0] == 50
    # No bug in the path: no such resource, as in the reference's route table.
    assert rest(client, "POST", "/rest/bug//comment", key, body={"comment": "hi"})[:2] == (
        404, 32614)
    assert stored(services) == before


def test_add_comment_on_a_real_bug_still_works(services, world):
    new_id = services.call(comment.add, {"id": str(world["bug"]), "comment": "hi"},
                           as_user=ADMIN)["id"]
    assert services.query("SELECT body FROM comments WHERE id = ?", (new_id,)) == [("hi",)]
