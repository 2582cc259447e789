"""The field parameters use_see_also, usestatuswhiteboard and
letsubmitterchoosemilestone change nothing over the API, as in the
reference (whose API never reads them): they only hide fields on the web
pages."""

import json

import pytest

from bug_support import file_bug, get_bug, set_param
from bugsvc.catalogue import settings
from rpc_support import xmlrpc_call


BASE = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "A summary", "op_sys": "Linux", "platform": "PC"}
LINK = "https://github.com/o/r/issues/7"


def rest_create(client, key, **fields):
    return client.simulate_post("/rest/bug", params={"Bugzilla_api_key": key},
                                json=dict(BASE, **fields))


def rest_update(client, key, bug_id, **fields):
    return client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": key},
                               json=fields)


def bug_count(services):
    return services.query("SELECT COUNT(*) FROM bugs")[0][0]


def jsonrpc_call(client, method, params):
    body = {"method": method, "id": 1, "params": [params]}
    answer = client.simulate_post("/jsonrpc.cgi", body=json.dumps(body),
                                  headers={"Content-Type": "application/json"}).json
    return answer["result"], (answer["error"] or {}).get("code")


# The API takes the status whiteboard and See Also whatever
# usestatuswhiteboard and use_see_also say, as the reference's does: the
# parameters only hide the fields on the web pages (tests/web/test_pages_bug.py).

@pytest.mark.parametrize("use_see_also", ["1", "0"])
def test_see_also_is_taken_over_rest_whatever_use_see_also_says(client, admin_key, services,
                                                                use_see_also):
    set_param(services, "use_see_also", use_see_also)
    answer = rest_create(client, admin_key, see_also=[LINK])
    assert answer.status_code == 201
    bug_id = answer.json["id"]
    assert rest_update(client, admin_key, bug_id,
                       see_also={"add": ["https://github.com/o/r/pull/8"]}).status_code == 200
    assert get_bug(services, bug_id)["see_also"] == [LINK, "https://github.com/o/r/pull/8"]
    assert rest_update(client, admin_key, bug_id, see_also={"remove": [LINK]}).status_code == 200
    assert get_bug(services, bug_id)["see_also"] == ["https://github.com/o/r/pull/8"]


@pytest.mark.parametrize("use_see_also", ["1", "0"])
def test_see_also_is_taken_over_xmlrpc_whatever_use_see_also_says(client, admin_key, services,
                                                                  use_see_also):
    bug_id = file_bug(services, see_also=[LINK])
    set_param(services, "use_see_also", use_see_also)
    call = {"Bugzilla_api_key": admin_key, "ids": [bug_id]}
    result, fault = xmlrpc_call(client, "Bug.update_see_also",
                                dict(call, add=["https://github.com/o/r/pull/8"]))
    assert fault is None
    assert result["changes"][str(bug_id)]["see_also"]["added"] == ["https://github.com/o/r/pull/8"]
    result, fault = xmlrpc_call(client, "Bug.update_see_also", dict(call, remove=[LINK]))
    assert fault is None and result["changes"][str(bug_id)]["see_also"]["removed"] == [LINK]
    result, fault = xmlrpc_call(client, "Bug.create", dict(BASE, Bugzilla_api_key=admin_key,
                                                           see_also=[LINK]))
    assert fault is None and get_bug(services, result["id"])["see_also"] == [LINK]


def test_a_default_installation_has_the_whiteboard_off_and_see_also_on():
    assert (settings.defaults()["usestatuswhiteboard"],
            settings.defaults()["use_see_also"]) == ("0", "1")


@pytest.mark.parametrize("usestatuswhiteboard", ["0", "1"])
def test_the_whiteboard_is_taken_over_rest_whatever_usestatuswhiteboard_says(
        client, admin_key, services, usestatuswhiteboard):
    set_param(services, "usestatuswhiteboard", usestatuswhiteboard)
    answer = rest_create(client, admin_key, whiteboard="[triage]")
    assert answer.status_code == 201
    bug_id = answer.json["id"]
    assert get_bug(services, bug_id)["whiteboard"] == "[triage]"
    answer = rest_update(client, admin_key, bug_id, whiteboard="[fixed-soon]")
    assert answer.status_code == 200
    assert answer.json["bugs"][0]["changes"]["whiteboard"] == {"removed": "[triage]",
                                                               "added": "[fixed-soon]"}
    shown = client.simulate_get(f"/rest/bug/{bug_id}", params={
        "Bugzilla_api_key": admin_key, "include_fields": "whiteboard"}).json
    assert shown == {"bugs": [{"whiteboard": "[fixed-soon]"}], "faults": []}
    assert rest_update(client, admin_key, bug_id, whiteboard="").status_code == 200
    assert get_bug(services, bug_id)["whiteboard"] == ""


@pytest.mark.parametrize("usestatuswhiteboard", ["0", "1"])
def test_the_whiteboard_is_taken_over_jsonrpc_whatever_usestatuswhiteboard_says(
        client, admin_key, services, usestatuswhiteboard):
    set_param(services, "usestatuswhiteboard", usestatuswhiteboard)
    result, code = jsonrpc_call(client, "Bug.create", dict(BASE, Bugzilla_api_key=admin_key,
                                                           whiteboard="[rpc]"))
    assert code is None
    bug_id = result["id"]
    call = {"Bugzilla_api_key": admin_key, "ids": [bug_id], "whiteboard": "[rpc again]"}
    result, code = jsonrpc_call(client, "Bug.update", call)
    assert code is None and result["bugs"][0]["changes"]["whiteboard"]["added"] == "[rpc again]"
    result, code = jsonrpc_call(client, "Bug.get", {"Bugzilla_api_key": admin_key,
                                                    "ids": [bug_id]})
    assert result["bugs"][0]["whiteboard"] == "[rpc again]"


# letsubmitterchoosemilestone ---------------------------------------------------------------------

@pytest.fixture
def milestones(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M2', 20)")


@pytest.mark.parametrize("choose", ["1", "0"])
def test_the_milestone_asked_for_is_taken_over_rest_whatever_letsubmitterchoosemilestone_says(
        client, admin_key, services, milestones, choose):
    # The reference's API never reads the parameter: it only hides the field
    # on the new-bug page (tests/web/test_pages_bug.py).
    set_param(services, "letsubmitterchoosemilestone", choose)
    answer = rest_create(client, admin_key, target_milestone="M2")
    assert answer.status_code == 201
    assert get_bug(services, answer.json["id"])["target_milestone"] == "M2"
    answer = rest_create(client, admin_key)
    assert get_bug(services, answer.json["id"])["target_milestone"] == "---"


@pytest.mark.parametrize("choose", ["1", "0"])
def test_the_milestone_asked_for_is_taken_over_xmlrpc_whatever_letsubmitterchoosemilestone_says(
        client, admin_key, services, milestones, choose):
    set_param(services, "letsubmitterchoosemilestone", choose)
    result, fault = xmlrpc_call(client, "Bug.create", dict(BASE, Bugzilla_api_key=admin_key,
                                                           target_milestone="M2"))
    assert fault is None and get_bug(services, result["id"])["target_milestone"] == "M2"
