"""The status workflow (editworkflow.cgi, Workflow.get/update) and the values
of select fields (editvalues.cgi, FieldValue.*), for the members of admin:
a workflow made here is what every way of changing a bug obeys (REST, RPC,
the bug page, the change of several bugs), a move it does not allow is
refused with Bugzilla's error (123) and one that needs a comment is refused
without it (32000); statuses and the values of Bugzilla's own selects are
added, renamed, moved, deactivated and deleted by Bugzilla's rules."""

import xmlrpc.client

import pytest
from test_pages_bug import form_fields, submit

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import file_bug, get_bug, set_param, update_bug
from bugsvc.errors import ServiceError
from bugsvc.services import field_value, workflow
from page_support import Browser, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"
REOPEN_NEEDS_A_COMMENT = [
    {"from": None, "to": "CONFIRMED"},
    {"from": "CONFIRMED", "to": "IN_PROGRESS"},
    {"from": "CONFIRMED", "to": "RESOLVED"},
    {"from": "IN_PROGRESS", "to": "RESOLVED"},
    {"from": "RESOLVED", "to": "CONFIRMED", "comment_required": True},
]


def code_of(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def moves(services):
    return services.call(workflow.get, {}, as_user=ADMIN, write=False)["transitions"]


def values_of(services, field):
    return {v["name"]: v for v in services.call(field_value.get, {"field": field},
                                                as_user=ADMIN, write=False)["values"]}


@pytest.fixture
def admin(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


# The workflow over the operations ------------------------------------------------------

def test_a_replaced_workflow_is_read_back_with_the_duplicate_status_kept(services):
    answer = services.call(workflow.update, {"transitions": REOPEN_NEEDS_A_COMMENT},
                           as_user=ADMIN)
    assert answer["transitions"]["RESOLVED"]["comment_required_to"] == {"removed": "",
                                                                        "added": "CONFIRMED"}
    found = {(m["from"], m["to"]): m["comment_required"] for m in moves(services)}
    # Every status may still move to duplicate_or_move_bug_status (RESOLVED).
    assert found == {(None, "CONFIRMED"): False, ("CONFIRMED", "IN_PROGRESS"): False,
                     ("CONFIRMED", "RESOLVED"): False, ("IN_PROGRESS", "RESOLVED"): False,
                     ("RESOLVED", "CONFIRMED"): True, ("UNCONFIRMED", "RESOLVED"): False,
                     ("VERIFIED", "RESOLVED"): False}
    entries = services.query("SELECT class, object_name, field, removed, added FROM audit_log"
                             " WHERE object_name = 'RESOLVED'")
    assert ("Bugzilla::Status", "RESOLVED", "can_change_to", "UNCONFIRMED, VERIFIED",
            "") in entries


def test_bad_workflows_are_refused_and_nothing_changes(services):
    before = moves(services)
    for transitions, code in [
            ([{"from": "CONFIRMED", "to": "CONFIRMED"}], 32000),
            ([{"from": None, "to": "RESOLVED"}], 32000),
            ([{"from": "CONFIRMED", "to": "NOPE"}], 51),
            ([{"from": "CONFIRMED"}], 50),
            (["CONFIRMED"], 53),
            ([{"from": "CONFIRMED", "to": "RESOLVED", "extra": 1}], 53)]:
        assert code_of(services, workflow.update, {"transitions": transitions}) == code
    assert code_of(services, workflow.update, {}) == 50
    assert moves(services) == before


def test_only_admins_read_or_change_the_workflow(services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    assert code_of(services, workflow.update, {"transitions": []}, as_user=PLAIN) == 304
    assert code_of(services, workflow.update, {"transitions": []}, as_user=None) == 410
    assert code_of(services, workflow.get, {}, as_user=PLAIN) == 304
    assert code_of(services, field_value.create, {"field": "priority", "value": "P1"},
                   as_user=PLAIN) == 304
    assert code_of(services, field_value.delete, {"field": "priority", "value": "Low"},
                   as_user=None) == 410


def test_every_way_of_changing_a_bug_obeys_the_workflow(admin, client, services, admin_key):
    services.call(workflow.update, {"transitions": REOPEN_NEEDS_A_COMMENT}, as_user=ADMIN)
    bug_id = file_bug(services)
    assert get_bug(services, bug_id)["status"] == "CONFIRMED"
    # A move the workflow no longer has: Bugzilla's 123.
    refused = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                                  json={"status": "UNCONFIRMED"})
    assert (refused.status_code, refused.json["code"]) == (400, 123)
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")
    # Reopening needs a comment over REST ...
    refused = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                                  json={"status": "CONFIRMED"})
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    assert "comment" in refused.json["message"]
    # ... over XML-RPC ...
    body = xmlrpc.client.dumps(({"Bugzilla_api_key": admin_key, "ids": [bug_id],
                                 "status": "CONFIRMED"},), "Bug.update", allow_none=True)
    answer = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(answer.text)
    assert fault.value.faultCode == 32000
    # ... on the bug's page ...
    page = admin.get(f"/show_bug.cgi?id={bug_id}")
    refused = submit(admin, "/process_bug.cgi", form_fields(page.text), bug_status="CONFIRMED")
    assert refused.status_code == 400 and "comment" in text_of(refused.text)
    # ... and changing several bugs at once.
    admin.get("/buglist.cgi?bug_status=RESOLVED&tweak=1")
    result = admin.post("/process_bug.cgi", {f"id_{bug_id}": "1",
                                             "dontchange": "--do_not_change--",
                                             "bug_status": "CONFIRMED"})
    assert "0 bugs changed, 1 refused." in text_of(result.text)
    assert get_bug(services, bug_id)["status"] == "RESOLVED"
    # With a comment it reopens.
    reopened = client.simulate_put(f"/rest/bug/{bug_id}",
                                   params={"Bugzilla_api_key": admin_key},
                                   json={"status": "CONFIRMED",
                                         "comment": {"body": "It came back."}})
    assert reopened.status_code == 200, reopened.json
    assert get_bug(services, bug_id)["status"] == "CONFIRMED"


# Field values over the operations --------------------------------------------------------

def test_a_value_is_added_renamed_moved_deactivated_and_deleted(services):
    value_id = services.call(field_value.create, {"field": "priority", "value": "P1",
                                                  "sort_key": 5}, as_user=ADMIN)["id"]
    assert values_of(services, "priority")["P1"]["sort_key"] == 5
    bug_id = file_bug(services, priority="P1")
    answer = services.call(field_value.update, {"field": "priority", "value": "p1",
                                                "name": "Urgent", "sort_key": 1,
                                                "is_active": False}, as_user=ADMIN)
    assert answer == {"id": value_id, "changes": {
        "name": {"removed": "P1", "added": "Urgent"}, "sort_key": {"removed": "5", "added": "1"},
        "is_active": {"removed": "1", "added": "0"}}}
    # The bug keeps its value under the new name; new bugs may not take it.
    assert get_bug(services, bug_id)["priority"] == "Urgent"
    with pytest.raises(ServiceError) as caught:
        file_bug(services, priority="Urgent")
    assert caught.value.code == 32000
    # Deleted only once no bug has it.
    assert code_of(services, field_value.delete, {"field": "priority", "value": "Urgent"}) == 32000
    update_bug(services, bug_id, priority="Low")
    services.call(field_value.delete, {"field": "priority", "value": "Urgent"}, as_user=ADMIN)
    assert "Urgent" not in values_of(services, "priority")
    assert services.query("SELECT field, removed, added FROM audit_log"
                          " WHERE class = 'Bugzilla::Field::Choice::priority' ORDER BY id") == [
        (None, None, None), ("name", "P1", "Urgent"), ("sort_key", "5", "1"),
        ("is_active", "1", "0"), ("value", "Urgent", "")]


def test_the_default_value_and_the_values_the_code_relies_on_stay(services):
    set_param(services, "defaultpriority", "Normal")
    before = services.query("SELECT * FROM field_values ORDER BY id")
    for function, params in [
            (field_value.delete, {"field": "priority", "value": "Normal"}),
            (field_value.update, {"field": "priority", "value": "Normal", "is_active": False}),
            (field_value.delete, {"field": "resolution", "value": "FIXED"}),
            (field_value.update, {"field": "resolution", "value": "DUPLICATE", "name": "DUP"}),
            (field_value.delete, {"field": "bug_status", "value": "UNCONFIRMED"}),
            (field_value.update, {"field": "status", "value": "RESOLVED", "is_active": False}),
            (field_value.delete, {"field": "priority", "value": "---"}),
            (field_value.create, {"field": "priority", "value": "high"}),
            (field_value.create, {"field": "bug_status", "value": "duplicate"}),
            (field_value.create, {"field": "priority", "value": "x" * 65}),
            (field_value.create, {"field": "priority", "value": "P9", "sort_key": 40000}),
            (field_value.create, {"field": "priority", "value": "P9", "is_open": True}),
            (field_value.create, {"field": "product", "value": "P9"})]:
        assert code_of(services, function, params) == 32000, params
    assert code_of(services, field_value.create, {"field": "priority", "value": " "}) == 50
    assert code_of(services, field_value.create, {"field": "nope", "value": "x"}) == 51
    assert code_of(services, field_value.update, {"field": "priority", "value": "nope"}) == 51
    assert code_of(services, field_value.create, {"field": "priority", "value": "P9",
                                                  "colour": 1}) == 53
    assert services.query("SELECT * FROM field_values ORDER BY id") == before
    # Renaming the default renames the parameter too.
    services.call(field_value.update, {"field": "priority", "value": "Normal",
                                       "name": "Medium"}, as_user=ADMIN)
    assert services.query("SELECT value FROM params WHERE name = 'defaultpriority'") == [
        ("Medium",)]


def test_a_new_closed_status_joins_the_workflow_and_leaves_it_when_deleted(services):
    services.call(field_value.create, {"field": "bug_status", "value": "SHIPPED",
                                       "is_open": False}, as_user=ADMIN)
    assert values_of(services, "bug_status")["SHIPPED"]["is_open"] is False
    current = [{"from": m["from"], "to": m["to"]} for m in moves(services)]
    services.call(workflow.update, {"transitions": current + [
        {"from": "RESOLVED", "to": "SHIPPED"}]}, as_user=ADMIN)
    bug_id = file_bug(services)
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")
    update_bug(services, bug_id, status="SHIPPED")
    assert get_bug(services, bug_id)["is_open"] is False
    assert code_of(services, field_value.delete, {"field": "bug_status",
                                                  "value": "SHIPPED"}) == 32000
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")
    services.call(field_value.delete, {"field": "bug_status", "value": "SHIPPED"}, as_user=ADMIN)
    assert all("SHIPPED" not in (m["from"], m["to"]) for m in moves(services))


# The pages ----------------------------------------------------------------------------

def test_the_workflow_matrix_is_changed_in_the_page(admin, services):
    page = admin.get("/editworkflow.cgi")
    assert page.status_code == 200
    assert 'aria-label="From RESOLVED to CONFIRMED"' in page.text
    assert 'aria-label="From bug creation to RESOLVED"' not in page.text   # closed: never
    statuses = [v for v in ("UNCONFIRMED", "CONFIRMED", "IN_PROGRESS", "RESOLVED", "VERIFIED")]
    position = {name: number for number, name in enumerate(statuses, 1)}
    position[None] = 0
    chosen = [f"{position[m['from']]}_{position[m['to']]}" for m in REOPEN_NEEDS_A_COMMENT]
    admin.post("/editworkflow.cgi", {"action": "update", "status": statuses, "move": chosen})
    page = admin.get("/editworkflow.cgi?action=edit_comment")
    assert 'aria-label="A comment is required from RESOLVED to CONFIRMED"' in page.text
    admin.post("/editworkflow.cgi", {"action": "update_comment", "status": statuses,
                                     "comment": [f"{position['RESOLVED']}_"
                                                 f"{position['CONFIRMED']}"]})
    found = {(m["from"], m["to"]): m["comment_required"] for m in moves(services)}
    assert found[("RESOLVED", "CONFIRMED")] is True and (None, "UNCONFIRMED") not in found


def test_a_refused_workflow_comes_back_on_the_form(admin, services):
    admin.get("/editworkflow.cgi")
    before = moves(services)
    page = admin.post("/editworkflow.cgi", {"action": "update", "status": ["CONFIRMED"],
                                            "move": ["1_1"]})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert "cannot move to itself" in text_of(page.text)
    assert moves(services) == before


def test_values_of_bugzillas_own_fields_are_edited_in_the_page(admin, services):
    page = admin.get("/editvalues.cgi")
    for name in ("priority", "bug_severity", "op_sys", "rep_platform", "resolution",
                 "bug_status"):
        assert f"/editvalues.cgi?field={name}" in page.text
    assert "field=product" not in page.text
    admin.get("/editvalues.cgi?field=bug_status&action=add")
    admin.post("/editvalues.cgi", {"field": "bug_status", "action": "new", "value": "SHIPPED",
                                   "sort_key": "600", "is_open": "0"})
    assert values_of(services, "bug_status")["SHIPPED"]["is_open"] is False
    page = admin.get("/editvalues.cgi?field=bug_status&action=edit&value=SHIPPED")
    admin.post("/editvalues.cgi", {"field": "bug_status", "action": "update",
                                   "value": "SHIPPED", "name": "RELEASED", "sort_key": "",
                                   "is_active": "1"})
    assert "RELEASED" in values_of(services, "bug_status")
    # Deactivated: the box left unticked.
    admin.get("/editvalues.cgi?field=bug_status&action=edit&value=RELEASED")
    admin.post("/editvalues.cgi", {"field": "bug_status", "action": "update",
                                   "value": "RELEASED", "name": "RELEASED", "sort_key": ""})
    assert values_of(services, "bug_status")["RELEASED"]["is_active"] is False
    page = admin.get("/editvalues.cgi?field=bug_status")
    assert 'aria-label="Delete RELEASED"' in page.text
    assert 'aria-label="Delete UNCONFIRMED"' not in page.text
    admin.post("/editvalues.cgi", {"field": "bug_status", "action": "delete",
                                   "value": "RELEASED"})
    assert "RELEASED" not in values_of(services, "bug_status")


def test_refused_values_come_back_on_the_form_as_typed(admin, services):
    file_bug(services, priority="Low")
    before = services.query("SELECT * FROM field_values ORDER BY id")
    admin.get("/editvalues.cgi?field=priority&action=add")
    page = admin.post("/editvalues.cgi", {"field": "priority", "action": "new",
                                          "value": "High", "sort_key": "7"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="High"' in page.text and 'value="7"' in page.text
    admin.get("/editvalues.cgi?field=resolution&action=edit&value=FIXED")
    page = admin.post("/editvalues.cgi", {"field": "resolution", "action": "update",
                                          "value": "FIXED", "name": "DONE", "sort_key": "",
                                          "is_active": "1"})
    assert page.status_code == 400 and 'value="DONE"' in page.text
    admin.get("/editvalues.cgi?field=priority")
    page = admin.post("/editvalues.cgi", {"field": "priority", "action": "delete",
                                          "value": "Low"})
    assert page.status_code == 400 and "1 bug has it" in text_of(page.text)
    assert services.query("SELECT * FROM field_values ORDER BY id") == before


@pytest.mark.parametrize("path", ["/editworkflow.cgi", "/editworkflow.cgi?action=edit_comment",
                                  "/editvalues.cgi", "/editvalues.cgi?field=priority",
                                  "/editvalues.cgi?field=priority&action=add",
                                  "/editvalues.cgi?field=priority&action=edit&value=Low"])
def test_plain_users_and_visitors_are_refused(app, admin, services, path):
    visitor = Browser(app)
    page = visitor.get(path)
    assert page.status_code == 401 and "Sign in" in page.text and "Lowest" not in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get(path)
    assert page.status_code == 401 and "Sorry" in page.text and "Lowest" not in page.text


def test_posts_need_admin_and_the_form_token(app, admin, services):
    before = moves(services), services.query("SELECT * FROM field_values ORDER BY id")
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    plain.get("/")
    assert plain.post("/editworkflow.cgi", {"action": "update", "status": ["CONFIRMED"],
                                            "move": []}).status_code == 401
    assert plain.post("/editvalues.cgi", {"field": "priority", "action": "delete",
                                          "value": "Low"}).status_code == 401
    admin.get("/editworkflow.cgi")
    assert admin.post("/editworkflow.cgi", {"action": "update", "move": []},
                      token=False).status_code == 403
    assert admin.post("/editvalues.cgi", {"field": "priority", "action": "delete",
                                          "value": "Lowest"}, token=False).status_code == 403
    assert (moves(services), services.query("SELECT * FROM field_values ORDER BY id")) == before
