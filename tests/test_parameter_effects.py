"""What the field parameters change, on and off, through the interface:
use_see_also, usestatuswhiteboard, letsubmitterchoosemilestone."""

import json

import pytest

from bug_support import file_bug, get_bug, set_param, update_bug
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


# use_see_also ----------------------------------------------------------------------------

def test_use_see_also_on_links_can_be_added(client, admin_key, services):
    answer = rest_create(client, admin_key, see_also=[LINK])
    assert answer.status_code == 201
    bug_id = answer.json["id"]
    assert rest_update(client, admin_key, bug_id,
                       see_also={"add": ["https://github.com/o/r/pull/8"]}).status_code == 200
    assert get_bug(services, bug_id)["see_also"] == [LINK, "https://github.com/o/r/pull/8"]


def test_use_see_also_off_refuses_new_links(client, admin_key, services):
    bug_id = file_bug(services)
    set_param(services, "use_see_also", "0")
    answer = rest_create(client, admin_key, see_also=[LINK])
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert "use_see_also" in answer.json["message"]
    assert bug_count(services) == 1
    answer = rest_update(client, admin_key, bug_id, see_also={"add": [LINK]})
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert get_bug(services, bug_id)["see_also"] == []


def test_use_see_also_off_keeps_existing_links_shown_and_removable(client, admin_key, services):
    bug_id = file_bug(services, see_also=[LINK, "https://github.com/o/r/issues/9"])
    set_param(services, "use_see_also", "0")
    assert get_bug(services, bug_id)["see_also"] == [LINK, "https://github.com/o/r/issues/9"]
    answer = rest_update(client, admin_key, bug_id, see_also={"remove": [LINK]})
    assert answer.status_code == 200
    assert get_bug(services, bug_id)["see_also"] == ["https://github.com/o/r/issues/9"]


def test_use_see_also_over_xmlrpc_update_see_also(client, admin_key, services):
    bug_id = file_bug(services, see_also=[LINK])
    call = {"Bugzilla_api_key": admin_key, "ids": [bug_id]}
    set_param(services, "use_see_also", "0")
    assert xmlrpc_call(client, "Bug.update_see_also",
                       dict(call, add=["https://github.com/o/r/pull/8"])) == (None, 32000)
    result, fault = xmlrpc_call(client, "Bug.update_see_also", dict(call, remove=[LINK]))
    assert fault is None and result["changes"][str(bug_id)]["see_also"]["removed"] == [LINK]
    set_param(services, "use_see_also", "1")
    result, fault = xmlrpc_call(client, "Bug.update_see_also", dict(call, add=[LINK]))
    assert fault is None and result["changes"][str(bug_id)]["see_also"]["added"] == [LINK]


# usestatuswhiteboard ---------------------------------------------------------------------------

def test_usestatuswhiteboard_off_refuses_a_whiteboard(client, admin_key, services):
    bug_id = file_bug(services)
    answer = rest_create(client, admin_key, whiteboard="[triage]")
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert "usestatuswhiteboard" in answer.json["message"]
    assert bug_count(services) == 1
    answer = rest_update(client, admin_key, bug_id, whiteboard="[triage]")
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert get_bug(services, bug_id)["whiteboard"] == ""
    # An empty whiteboard is no value: filing and clearing work.
    assert rest_create(client, admin_key, whiteboard="").status_code == 201
    assert rest_update(client, admin_key, bug_id, whiteboard="").status_code == 200


def test_usestatuswhiteboard_on_takes_a_whiteboard(client, admin_key, services):
    set_param(services, "usestatuswhiteboard", "1")
    answer = rest_create(client, admin_key, whiteboard="[triage]")
    assert answer.status_code == 201
    bug_id = answer.json["id"]
    assert rest_update(client, admin_key, bug_id, whiteboard="[fixed-soon]").status_code == 200
    assert get_bug(services, bug_id)["whiteboard"] == "[fixed-soon]"


def test_usestatuswhiteboard_off_keeps_an_existing_whiteboard_shown_and_clearable(services):
    set_param(services, "usestatuswhiteboard", "1")
    bug_id = file_bug(services, whiteboard="[old]")
    set_param(services, "usestatuswhiteboard", "0")
    assert get_bug(services, bug_id)["whiteboard"] == "[old]"
    update_bug(services, bug_id, summary="Other change", whiteboard="[old]")
    update_bug(services, bug_id, whiteboard="")
    assert get_bug(services, bug_id)["whiteboard"] == ""


def test_usestatuswhiteboard_over_jsonrpc(client, admin_key, services):
    bug_id = file_bug(services)
    call = {"Bugzilla_api_key": admin_key, "ids": [bug_id], "whiteboard": "[rpc]"}
    assert jsonrpc_call(client, "Bug.update", call)[1] == 32000
    set_param(services, "usestatuswhiteboard", "1")
    result, code = jsonrpc_call(client, "Bug.update", call)
    assert code is None and result["bugs"][0]["changes"]["whiteboard"]["added"] == "[rpc]"


# letsubmitterchoosemilestone ---------------------------------------------------------------------

@pytest.fixture
def milestones(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M2', 20)")


def test_letsubmitterchoosemilestone_on_the_submitter_chooses(client, admin_key, services,
                                                              milestones):
    answer = rest_create(client, admin_key, target_milestone="M2")
    assert get_bug(services, answer.json["id"])["target_milestone"] == "M2"


def test_letsubmitterchoosemilestone_off_new_bugs_get_the_default(client, admin_key, services,
                                                                  milestones):
    set_param(services, "letsubmitterchoosemilestone", "0")
    answer = rest_create(client, admin_key, target_milestone="M2")
    assert answer.status_code == 201
    bug_id = answer.json["id"]
    assert get_bug(services, bug_id)["target_milestone"] == "---"
    # It rules filing only: the milestone can be changed afterwards.
    update_bug(services, bug_id, target_milestone="M2")
    assert get_bug(services, bug_id)["target_milestone"] == "M2"


def test_letsubmitterchoosemilestone_over_xmlrpc(client, admin_key, services, milestones):
    call = dict(BASE, Bugzilla_api_key=admin_key, target_milestone="M2")
    set_param(services, "letsubmitterchoosemilestone", "0")
    result, fault = xmlrpc_call(client, "Bug.create", call)
    assert fault is None and get_bug(services, result["id"])["target_milestone"] == "---"
    set_param(services, "letsubmitterchoosemilestone", "1")
    result, fault = xmlrpc_call(client, "Bug.create", call)
    assert fault is None and get_bug(services, result["id"])["target_milestone"] == "M2"
