"""Versions and milestones: create and update."""

import pytest

from bugsvc.errors import ServiceError
from bugsvc.services import milestone, product, version
from catalog_support import (
    ADMIN,
    MANDATORY,
    add_bug,
    add_bug_group,
    add_product,
    audit_rows,
    control,
)


KINDS = [(version, "versions", "/rest/version"), (milestone, "milestones", "/rest/milestone")]


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as info:
        services.call(function, params, as_user=as_user)
    return info.value.code


def listed(services, key, product_id=1):
    (found,) = services.call(product.get, {"ids": [product_id]}, as_user=ADMIN,
                             write=False)["products"]
    return found[key]


@pytest.mark.parametrize("module, key, path", KINDS)
def test_create_over_http_and_read_back(client, services, admin_key, module, key, path):
    resp = client.simulate_post(path, params={"Bugzilla_api_key": admin_key}, json={
        "product": "TestProduct", "name": "2.0", "sort_key": 5, "is_active": False})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    assert {"id": new_id, "name": "2.0", "sort_key": 5, "is_active": False} in listed(services,
                                                                                      key)
    assert audit_rows(services, module.__name__.rsplit(".", 1)[1].capitalize())[-1] == (
        new_id, None, None, None)


@pytest.mark.parametrize("module, key, path", KINDS)
def test_permissions(client, services, module, key, path):
    services.add_user("plain@example.com")
    anonymous = client.simulate_post(path, json={"product": "TestProduct", "name": "2.0"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    anonymous = client.simulate_put(f"{path}/1", json={"name": "2.0"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, module.create, {"product": "TestProduct", "name": "2.0"},
                      as_user="plain@example.com") == 304
    assert error_code(services, module.update, {"ids": [1], "name": "2.0"},
                      as_user="plain@example.com") == 304
    assert len(listed(services, key)) == 1


@pytest.mark.parametrize("module, key, path", KINDS)
@pytest.mark.parametrize("params, code", [
    ({"name": "2.0"}, 50),
    ({"product": "TestProduct"}, 50),
    ({"product": "Nope", "name": "2.0"}, 106),
    ({"product": "TestProduct", "name": "  "}, 32000),
    ({"product": "TestProduct", "name": "v" * 65}, 32000),
    ({"product": "TestProduct", "name": "2.0", "sort_key": "high"}, 52),
    ({"product": "TestProduct", "name": "2.0", "sort_key": 40000}, 54),
    ({"product": "TestProduct", "name": "2.0", "sort_key": -40000}, 55),
    ({"product": "TestProduct", "name": "2.0", "colour": "red"}, 53),
])
def test_create_errors(services, module, key, path, params, code):
    assert error_code(services, module.create, params) == code
    assert len(listed(services, key)) == 1


def test_create_refuses_existing_name_in_product_only(services):
    assert error_code(services, version.create, {"product": 1, "name": "UNSPECIFIED"}) == 32000
    assert error_code(services, milestone.create, {"product": 1, "name": "---"}) == 32000
    other = add_product(services, "Other", versions=("1.0",))
    services.call(version.create, {"product": other["id"], "name": "unspecified"}, as_user=ADMIN)
    assert [v["name"] for v in listed(services, "versions", other["id"])] == ["1.0",
                                                                              "unspecified"]


def test_update_version_renames_on_bugs(client, services, admin_key):
    bug_id = add_bug(services, 1, 1, version="unspecified")
    resp = client.simulate_put("/rest/version/1", params={"Bugzilla_api_key": admin_key},
                               json={"name": "1.0", "sort_key": 3, "is_active": False})
    assert resp.status_code == 200
    assert resp.json == {"versions": [{"id": 1, "changes": {
        "name": {"removed": "unspecified", "added": "1.0"},
        "sort_key": {"removed": "0", "added": "3"},
        "is_active": {"removed": "1", "added": "0"}}}]}
    assert services.query("SELECT version FROM bugs WHERE id = ?", (bug_id,)) == [("1.0",)]
    assert {row[1] for row in audit_rows(services, "Version")} == {"name", "sort_key",
                                                                   "is_active"}


def test_update_milestone_renames_on_bugs_and_default(services):
    add_product(services, "Other", milestones=("---",))
    bug_id = add_bug(services, 1, 1, milestone="---")
    result = services.call(milestone.update, {"ids": [1], "name": "Future"}, as_user=ADMIN)
    assert result == {"milestones": [{"id": 1, "changes": {
        "name": {"removed": "---", "added": "Future"}}}]}
    assert services.query("SELECT target_milestone FROM bugs WHERE id = ?", (bug_id,)) == [
        ("Future",)]
    assert services.query("SELECT name, default_milestone FROM products ORDER BY id") == [
        ("TestProduct", "Future"), ("Other", "---")]


def test_default_milestone_cannot_be_deactivated(services):
    second = services.call(milestone.create, {"product": 1, "name": "M2"}, as_user=ADMIN)
    assert error_code(services, milestone.update, {"ids": [1], "is_active": False}) == 32000
    done = services.call(milestone.update, {"ids": [second["id"]], "is_active": False},
                         as_user=ADMIN)
    assert done["milestones"][0]["changes"] == {"is_active": {"removed": "1", "added": "0"}}


@pytest.mark.parametrize("module, key, path", KINDS)
def test_update_errors(services, module, key, path):
    second = services.call(module.create, {"product": 1, "name": "Two"}, as_user=ADMIN)
    assert error_code(services, module.update, {"name": "x"}) == 50
    assert error_code(services, module.update, {"ids": [999], "name": "x"}) == 51
    assert error_code(services, module.update, {"ids": [1], "name": "two"}) == 32000
    assert error_code(services, module.update, {"ids": [1], "name": ""}) == 32000
    assert error_code(services, module.update, {"ids": [1, second["id"]], "name": "x"}) == 32000
    assert error_code(services, module.update, {"ids": [1], "sort_key": 99999}) == 54
    assert error_code(services, module.update, {"ids": [1], "colour": "red"}) == -32601
    assert [v["name"] for v in listed(services, key)] in (["Two", "unspecified"],
                                                          ["---", "Two"])


@pytest.mark.parametrize("module, key, path", KINDS)
def test_values_of_hidden_product_are_not_editable_by_non_members(services, module, key, path):
    services.add_user("editor@example.com", groups=("editcomponents",))
    group_id = add_bug_group(services, "Insiders")
    hidden = add_product(services, "Hidden", versions=("1.0",), milestones=("---",))
    control(services, hidden["id"], group_id, MANDATORY, MANDATORY)
    (value_id,) = services.query(f"SELECT id FROM {key} WHERE product_id = ?", (hidden["id"],))[0]
    # A value of a hidden product answers like a missing one.
    assert error_code(services, module.update, {"ids": [value_id], "name": "x"},
                      as_user="editor@example.com") == 51
    assert error_code(services, module.create, {"product": hidden["id"], "name": "x"},
                      as_user="editor@example.com") == 106
    services.call(module.update, {"ids": [value_id], "sort_key": 7}, as_user=ADMIN)
