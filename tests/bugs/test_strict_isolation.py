"""The parameter strict_isolation: people who may not edit a product's bugs
cannot be put on them (504), and bugs of a product the caller may not edit
cannot be linked as dependencies (32000); with the parameter off both are
allowed."""

import json
import xmlrpc.client

import pytest

from bug_support import (
    ADMIN,
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    add_to_group,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    set_param,
    update_bug,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service
from conftest import world_fixture


OUTSIDER = "outsider@example.com"
DEV = "dev@example.com"


@world_fixture
def world(services):
    """TestProduct editable only by members of 'devs' (the administrator and
    DEV); OUTSIDER can see it but may not edit its bugs."""
    services.add_user(OUTSIDER)
    services.add_user(DEV)
    devs = add_bug_group(services, "devs", members=[DEV])
    control(services, devs, SHOWN, NA, canedit=1)
    set_param(services, "useqacontact", "1")


def strict(services, on=True):
    set_param(services, "strict_isolation", "1" if on else "0")


def error_of(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value


def bug_count(services):
    return services.query("SELECT COUNT(*) FROM bugs")[0][0]


BASE = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Isolated", "op_sys": "Linux", "platform": "PC"}


# People on a new bug ----------------------------------------------------------------------

@pytest.mark.parametrize("role", ["cc", "assigned_to", "qa_contact"])
def test_off_anyone_can_be_put_on_a_new_bug(services, world, role):
    bug = get_bug(services, file_bug(services, **{role: OUTSIDER}))
    assert OUTSIDER in (bug["cc"] + [bug["assigned_to"], bug["qa_contact"]])


@pytest.mark.parametrize("role", ["cc", "assigned_to", "qa_contact"])
def test_on_a_new_bug_refuses_people_who_may_not_edit_the_product(client, admin_key, services,
                                                                  world, role):
    strict(services)
    answer = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                  json=dict(BASE, **{role: OUTSIDER}))
    assert (answer.status_code, answer.json["code"]) == (401, 504)
    assert answer.json["message"] == (f"User '{OUTSIDER}' is not able to edit the 'TestProduct' "
                                      "product and may not be included on a new bug.")
    assert bug_count(services) == 0
    bug = get_bug(services, file_bug(services, **{role: DEV}))
    assert DEV in (bug["cc"] + [bug["assigned_to"], bug["qa_contact"]])


def test_on_a_components_default_cc_counts_too(services, world):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO component_cc (component_id, user_id) SELECT 1, id FROM users"
                     " WHERE login = ?", (OUTSIDER,))
    strict(services)
    assert error_of(services, bug_service.create, BASE).code == 504
    strict(services, on=False)
    assert get_bug(services, file_bug(services))["cc"] == [OUTSIDER]


def test_on_people_on_a_new_bug_must_also_see_the_product(services, world):
    # secret: a Mandatory group OUTSIDER is not in, without canedit
    secret = add_bug_group(services, "secret", members=[DEV])
    control(services, secret, MANDATORY, MANDATORY)
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM group_controls WHERE canedit = 1")
    strict(services)
    error = error_of(services, bug_service.create, dict(BASE, cc=[OUTSIDER, DEV]))
    assert error.code == 504 and OUTSIDER in error.message and DEV not in error.message
    strict(services, on=False)
    assert get_bug(services, file_bug(services, cc=[OUTSIDER]))["cc"] == [OUTSIDER]


# People added by an update ------------------------------------------------------------------

@pytest.mark.parametrize("change", [{"cc": {"add": [OUTSIDER]}}, {"assigned_to": OUTSIDER},
                                    {"qa_contact": OUTSIDER}])
def test_on_an_update_refuses_adding_people_who_may_not_edit(client, admin_key, services, world,
                                                             change):
    bug_id = file_bug(services)
    before = get_bug(services, bug_id)
    strict(services)
    answer = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                                 json=change)
    assert (answer.status_code, answer.json["code"]) == (401, 504)
    assert answer.json["message"] == (f"User '{OUTSIDER}' is not able to edit the 'TestProduct' "
                                      f"product for bug '{bug_id}'.")
    assert get_bug(services, bug_id) == before
    strict(services, on=False)
    update_bug(services, bug_id, **change)
    after = get_bug(services, bug_id)
    assert OUTSIDER in (after["cc"] + [after["assigned_to"], after["qa_contact"]])


def test_on_people_already_on_a_bug_do_not_block_other_changes(services, world):
    bug_id = file_bug(services, cc=[OUTSIDER], assigned_to=OUTSIDER)
    strict(services)
    update_bug(services, bug_id, summary="Still editable", cc={"add": [DEV]},
               comment={"body": "A comment"})
    update_bug(services, bug_id, cc={"remove": [OUTSIDER]})
    bug = get_bug(services, bug_id)
    assert (bug["summary"], bug["cc"], bug["assigned_to"]) == ("Still editable", [DEV], OUTSIDER)


def test_on_over_xmlrpc_adding_to_cc_is_fault_504(client, admin_key, services, world):
    bug_id = file_bug(services)
    strict(services)
    body = xmlrpc.client.dumps(({"Bugzilla_api_key": admin_key, "ids": [bug_id],
                                 "cc": {"add": [OUTSIDER]}},), "Bug.update")
    answer = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(answer.content)
    assert caught.value.faultCode == 504
    assert get_bug(services, bug_id)["cc"] == []


# Dependencies --------------------------------------------------------------------------------

@pytest.fixture
def locked_bug(services, world):
    """A bug of TestProduct after 'lockers' (without the administrator) got a
    canedit control there: the administrator sees it but may not edit it;
    and a product 'Open' the administrator may edit."""
    locked = file_bug(services)
    lockers = add_bug_group(services, "lockers", members=[DEV], with_admin=False)
    control(services, lockers, SHOWN, NA, canedit=1)
    with services.db.transaction(write=True) as conn:
        product_id = conn.execute(
            "INSERT INTO products (name, classification_id, description, is_active,"
            " default_milestone, has_unconfirmed) VALUES ('Open', 1, 'Open', 1, '---', 1)"
        ).lastrowid
        conn.execute("INSERT INTO components (product_id, name, description, default_assignee)"
                     " SELECT ?, 'General', 'General', id FROM users WHERE login = ?",
                     (product_id, ADMIN))
        conn.execute("INSERT INTO versions (product_id, name) VALUES (?, '1.0')", (product_id,))
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (?, '---', 0)",
                     (product_id,))
    return locked


OPEN = {"product": "Open", "component": "General", "version": "1.0"}


def test_off_bugs_of_a_product_one_may_not_edit_can_be_linked(services, locked_bug):
    bug_id = file_bug(services, depends_on=[locked_bug], **OPEN)
    other = file_bug(services, **OPEN)
    update_bug(services, other, blocks={"add": [locked_bug]})
    assert get_bug(services, bug_id)["depends_on"] == [locked_bug]
    assert get_bug(services, other)["blocks"] == [locked_bug]


def test_on_a_new_bug_cannot_depend_on_a_bug_one_may_not_edit(client, admin_key, services,
                                                              locked_bug):
    strict(services)
    answer = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                  json=dict(BASE, depends_on=[locked_bug], **OPEN))
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert answer.json["message"] == ("You tried to change the Depends on field but only a user "
                                      "allowed to edit both related bugs may change that field.")
    assert bug_count(services) == 1
    assert error_of(services, bug_service.create, dict(BASE, blocks=[locked_bug], **OPEN)).code \
        == 32000


def test_on_dependencies_on_such_a_bug_can_be_neither_added_nor_removed(client, services,
                                                                        locked_bug):
    linked = file_bug(services, blocks=[locked_bug], **OPEN)
    other = file_bug(services, **OPEN)
    strict(services)
    for bug_id, change in ((other, {"blocks": {"add": [locked_bug]}}),
                           (other, {"depends_on": {"add": [locked_bug]}}),
                           (linked, {"blocks": {"remove": [locked_bug]}}),
                           (linked, {"blocks": {"set": []}})):
        assert error_of(services, bug_service.update, dict(change, ids=[bug_id])).code == 32000
    assert get_bug(services, linked)["blocks"] == [locked_bug]
    assert get_bug(services, other)["blocks"] == []
    # Bugs one may edit are linked as before; the unchanged link is not checked.
    update_bug(services, linked, depends_on={"add": [other]})
    assert get_bug(services, linked)["depends_on"] == [other]


def test_on_over_jsonrpc_adding_a_dependency_is_fault_32000(client, admin_key, services,
                                                            locked_bug):
    other = file_bug(services, **OPEN)
    strict(services)
    body = {"method": "Bug.update", "id": 1,
            "params": [{"Bugzilla_api_key": admin_key, "ids": [other],
                        "depends_on": {"add": [locked_bug]}}]}
    answer = client.simulate_post("/jsonrpc.cgi", body=json.dumps(body),
                                  headers={"Content-Type": "application/json"})
    assert answer.json["error"]["code"] == 32000
    assert get_bug(services, other)["depends_on"] == []


def test_on_an_account_the_caller_may_not_see_is_not_named(services, world):
    # usevisibilitygroups: the caller (in devs) has no visibility grant on
    # outsiders, whose member OUTSIDER is a default CC of the component; the
    # admin group has one, as on every new group.
    editbugs_only_for_members(services)
    set_param(services, "usevisibilitygroups", "1")
    add_bug_group(services, "outsiders", members=[OUTSIDER], with_admin=False)
    services.add_user("filer@example.com")
    add_to_group(services, "filer@example.com", "devs")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO component_cc (component_id, user_id) SELECT 1, id FROM users"
                     " WHERE login = ?", (OUTSIDER,))
    strict(services)
    error = error_of(services, bug_service.create, BASE, as_user="filer@example.com")
    assert error.code == 504
    assert error.message == ("1 account is not able to edit the 'TestProduct' product and may "
                             "not be included on a new bug.")
    assert OUTSIDER in error_of(services, bug_service.create, BASE).message   # the admin sees it
