"""Components: create, update and delete."""

import pytest

from bugsvc.errors import ServiceError
from bugsvc.services import component, product
from catalog_support import ADMIN, add_bug, add_product, audit_rows, set_param


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as info:
        services.call(function, params, as_user=as_user)
    return info.value.code


def components_of(services, product_id=1):
    (found,) = services.call(product.get, {"ids": [product_id]}, as_user=ADMIN,
                             write=False)["products"]
    return {c["name"]: c for c in found["components"]}


def cc_logins(services, component_id):
    return [row[0] for row in services.query(
        "SELECT u.login FROM component_cc cc JOIN users u ON u.id = cc.user_id"
        " WHERE cc.component_id = ? ORDER BY u.login", (component_id,))]


@pytest.fixture
def people(services):
    for login in ("dev@example.com", "qa@example.com", "watcher@example.com"):
        services.add_user(login)
    services.add_user("plain@example.com")


NEW = {"product": "TestProduct", "name": "Backend", "description": "Server side",
       "default_assignee": "dev@example.com"}


# Create --------------------------------------------------------------------------------

def test_create_over_http_and_read_back(client, services, admin_key, people):
    resp = client.simulate_post("/rest/component", params={"Bugzilla_api_key": admin_key},
                                json={**NEW, "default_cc": ["watcher@example.com",
                                                            "qa@example.com"]})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    made = components_of(services)["Backend"]
    assert made == {"id": new_id, "name": "Backend", "description": "Server side",
                    "default_assigned_to": "dev@example.com", "default_qa_contact": "",
                    "sort_key": 0, "is_active": True, "flag_types": {"bug": [], "attachment": []}}
    assert cc_logins(services, new_id) == ["qa@example.com", "watcher@example.com"]
    assert audit_rows(services, "Component") == [(new_id, None, None, None)]


def test_create_permissions(client, services, people):
    anonymous = client.simulate_post("/rest/component", json=NEW)
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, component.create, NEW, as_user="plain@example.com") == 304
    assert services.query("SELECT COUNT(*) FROM components") == [(1,)]


@pytest.mark.parametrize("changes, code", [
    ({"colour": "red"}, 53),
    ({"product": None}, 50),
    ({"product": "Nope"}, 106),
    ({"product": 2**70}, 106),
    ({"product": True}, 106),
    ({"name": " "}, 32000),
    ({"name": None}, 32000),
    ({"name": "c" * 65}, 105),
    ({"name": "testcomponent"}, 1200),
    ({"description": ""}, 32000),
    ({"default_assignee": ""}, 32000),
    ({"default_assignee": "ghost@example.com"}, 51),
    ({"default_cc": ["dev@example.com", "ghost@example.com"]}, 504),
])
def test_create_errors(services, people, changes, code):
    body = {k: v for k, v in {**NEW, **changes}.items() if v is not None}
    assert error_code(services, component.create, body) == code
    assert services.query("SELECT COUNT(*) FROM components") == [(1,)]
    assert services.query("SELECT COUNT(*) FROM component_cc") == [(0,)]


def test_qa_contact_only_with_useqacontact(services, people):
    services.call(component.create, {**NEW, "default_qa_contact": "qa@example.com"},
                  as_user=ADMIN)
    assert components_of(services)["Backend"]["default_qa_contact"] == ""
    set_param(services, "useqacontact", "1")
    assert error_code(services, component.create, {
        **NEW, "name": "Other", "default_qa_contact": "ghost@example.com"}) == 51
    services.call(component.create, {**NEW, "name": "Frontend",
                                     "default_qa_contact": "qa@example.com"}, as_user=ADMIN)
    assert components_of(services)["Frontend"]["default_qa_contact"] == "qa@example.com"


def test_create_accepts_python_bugzilla_names(services, people):
    set_param(services, "useqacontact", "1")
    new = services.call(component.create, {
        "product": "TestProduct", "name": "Docs", "description": "Manuals",
        "initialowner": "dev@example.com", "initialqacontact": "qa@example.com",
        "initialcclist": "watcher@example.com, plain@example.com", "is_active": False},
        as_user=ADMIN)
    made = components_of(services)["Docs"]
    assert made["default_assigned_to"] == "dev@example.com"
    assert made["default_qa_contact"] == "qa@example.com"
    assert made["is_active"] is False
    assert cc_logins(services, new["id"]) == ["plain@example.com", "watcher@example.com"]


# Update --------------------------------------------------------------------------------

def test_update_by_id_over_http(client, services, admin_key, people):
    resp = client.simulate_put("/rest/component/1", params={"Bugzilla_api_key": admin_key},
                               json={"name": "Core", "default_assignee": "dev@example.com",
                                     "default_cc": ["watcher@example.com"], "is_open": False})
    assert resp.status_code == 200
    assert resp.json == {"components": [{"id": 1, "changes": {
        "name": {"removed": "TestComponent", "added": "Core"},
        "default_assignee": {"removed": ADMIN, "added": "dev@example.com"},
        "default_cc": {"removed": "", "added": "watcher@example.com"},
        "is_open": {"removed": "1", "added": "0"}}}]}
    made = components_of(services)["Core"]
    assert made["is_active"] is False and made["default_assigned_to"] == "dev@example.com"
    assert {row[1] for row in audit_rows(services, "Component")} == {
        "name", "default_assignee", "default_cc", "is_open"}


def test_update_python_bugzilla_format(client, services, admin_key, people):
    """editcomponent: PUT /rest/component/{product}/{component}, fields under `updates`."""
    resp = client.simulate_put(
        "/rest/component/TestProduct/TestComponent", params={"Bugzilla_api_key": admin_key},
        json={"names": [{"product": "TestProduct", "component": "TestComponent"}],
              "updates": {"description": "Rewritten", "initialowner": "dev@example.com",
                          "is_active": False}})
    assert resp.status_code == 200
    changes = resp.json["components"][0]["changes"]
    assert set(changes) == {"description", "default_assignee", "is_open"}
    assert changes["is_open"] == {"removed": "1", "added": "0"}


def test_update_default_cc_reports_removed_and_added(services, people):
    services.call(component.update, {"ids": [1], "default_cc": [
        "watcher@example.com", "qa@example.com"]}, as_user=ADMIN)
    result = services.call(component.update, {"ids": [1], "default_cc": [
        "plain@example.com", "qa@example.com"]}, as_user=ADMIN)
    assert result["components"][0]["changes"] == {"default_cc": {
        "removed": "watcher@example.com", "added": "plain@example.com"}}
    assert cc_logins(services, 1) == ["plain@example.com", "qa@example.com"]


def test_update_qa_contact_clears_with_empty_string(services, people):
    set_param(services, "useqacontact", "1")
    services.call(component.update, {"ids": [1], "default_qa_contact": "qa@example.com"},
                  as_user=ADMIN)
    result = services.call(component.update, {"ids": [1], "default_qa_contact": ""},
                           as_user=ADMIN)
    assert result["components"][0]["changes"] == {"default_qa_contact": {
        "removed": "qa@example.com", "added": ""}}


def test_update_same_name_in_different_products(services, people):
    other = add_product(services, "Other", components=("General", "Extra"))
    result = services.call(component.update, {
        "ids": [1, other["components"]["Extra"]], "name": "Shared"}, as_user=ADMIN)
    assert [c["changes"]["name"]["added"] for c in result["components"]] == ["Shared", "Shared"]


def test_update_permissions(client, services, people):
    anonymous = client.simulate_put("/rest/component/1", json={"description": "x"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, component.update, {"ids": [1], "description": "x"},
                      as_user="plain@example.com") == 304


@pytest.mark.parametrize("params, code", [
    ({"description": "x"}, 50),
    ({"ids": [999], "description": "x"}, 51),
    ({"names": [{"product": "TestProduct", "component": "Nope"}], "description": "x"}, 51),
    ({"names": [{"product": "Nope", "component": "TestComponent"}], "description": "x"}, 106),
    ({"names": ["TestComponent"], "description": "x"}, 53),
    ({"ids": [1], "colour": "red"}, -32601),
    ({"ids": [1], "updates": {"colour": "red"}}, -32601),
    ({"ids": [1], "name": "second"}, 1200),
    ({"ids": [1], "name": ""}, 32000),
    ({"ids": [1], "default_assignee": "ghost@example.com"}, 51),
    ({"ids": [1], "default_cc": ["ghost@example.com"]}, 504),
])
def test_update_errors(services, people, params, code):
    services.call(component.create, {**NEW, "name": "Second"}, as_user=ADMIN)
    assert error_code(services, component.update, params) == code
    assert services.query("SELECT name, description FROM components WHERE id = 1")[0][0] == \
        "TestComponent"


def test_renaming_two_components_of_one_product_is_refused(services, people):
    second = services.call(component.create, {**NEW, "name": "Second"}, as_user=ADMIN)
    assert error_code(services, component.update, {"ids": [1, second["id"]],
                                                   "name": "Same"}) == 1212


# Delete --------------------------------------------------------------------------------

def test_delete_removes_cc_and_flag_rows(client, services, admin_key, people):
    new = services.call(component.create, {**NEW, "default_cc": ["qa@example.com"]},
                        as_user=ADMIN)
    with services.db.transaction(write=True) as conn:
        type_id = conn.execute("INSERT INTO flag_types (name, description) VALUES"
                               " ('review', 'r')").lastrowid
        conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                     " VALUES (?, 1, ?)", (type_id, new["id"]))
        conn.execute("INSERT INTO flag_exclusions (type_id, product_id, component_id)"
                     " VALUES (?, 1, ?)", (type_id, new["id"]))
    resp = client.simulate_delete("/rest/component/TestProduct/Backend",
                                  params={"Bugzilla_api_key": admin_key})
    assert resp.status_code == 200
    assert resp.json == {"components": [{"id": new["id"]}]}
    for table in ("components", "component_cc", "flag_inclusions", "flag_exclusions"):
        column = "id" if table == "components" else "component_id"
        assert services.query(f"SELECT COUNT(*) FROM {table} WHERE {column} = ?",
                              (new["id"],)) == [(0,)]
    assert audit_rows(services, "Component")[-1] == (new["id"], None, "__remove__", None)


def test_delete_refuses_component_with_bugs_and_last_component(client, services, admin_key,
                                                               people):
    second = services.call(component.create, NEW, as_user=ADMIN)
    add_bug(services, 1, second["id"])
    resp = client.simulate_delete(f"/rest/component/{second['id']}",
                                  params={"Bugzilla_api_key": admin_key})
    assert resp.status_code == 400 and resp.json["code"] == 1202
    assert error_code(services, component.delete, {"ids": [second["id"]]}) == 1202
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM bugs")
    assert error_code(services, component.delete, {"ids": [1, second["id"]]}) == 1201
    assert services.query("SELECT COUNT(*) FROM components") == [(2,)]


def test_delete_permissions(client, services, people):
    anonymous = client.simulate_delete("/rest/component/1")
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, component.delete, {"ids": [1]},
                      as_user="plain@example.com") == 304
    assert error_code(services, component.delete, {}) == 50
    assert error_code(services, component.delete, {"ids": [42]}) == 51
