"""Classifications: get, create and update."""

import pytest

from bugsvc.errors import ServiceError
from bugsvc.services import classification, product
from catalog_support import (
    ADMIN,
    MANDATORY,
    add_bug_group,
    add_product,
    audit_rows,
    control,
    set_param,
)


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as info:
        services.call(function, params, as_user=as_user)
    return info.value.code


@pytest.fixture
def plain(services):
    services.add_user("plain@example.com")
    return "plain@example.com"


def test_get_is_gated_by_useclassification(client, services, admin_key, plain):
    resp = client.simulate_get("/rest/classification/1")
    assert resp.status_code == 400 and resp.json["code"] == 900
    assert error_code(services, classification.get, {"ids": [1]}, as_user=plain) == 900
    admin_view = client.simulate_get("/rest/classification/Unclassified",
                                     params={"Bugzilla_api_key": admin_key})
    assert admin_view.status_code == 200
    (found,) = admin_view.json["classifications"]
    assert found == {"id": 1, "name": "Unclassified",
                     "description": "Not assigned to any classification", "sort_key": 0,
                     "products": [{"id": 1, "name": "TestProduct",
                                   "description": found["products"][0]["description"]}]}
    set_param(services, "useclassification", "1")
    assert client.simulate_get("/rest/classification/1").json == admin_view.json


def test_get_rules(client, services):
    set_param(services, "useclassification", "1")
    assert client.simulate_get("/rest/classification").status_code == 404
    missing = client.simulate_get("/rest/classification/Nope")
    assert missing.status_code == 404 and missing.json["code"] == 51
    assert client.simulate_get("/rest/classification/99").json["code"] == 51
    assert error_code(services, classification.get, {}, as_user=None) == 50
    both = client.simulate_get("/rest/classification/1", params={"names": "unclassified"})
    assert [c["id"] for c in both.json["classifications"]] == [1]
    subfield = client.simulate_get("/rest/classification/1",
                                   params={"include_fields": "products.name"})
    assert subfield.json == {"classifications": [{"products": [{"name": "TestProduct"}]}]}


def test_visibility_of_classifications_and_products(services, plain):
    set_param(services, "useclassification", "1")
    services.add_user("insider@example.com")
    hardware = services.call(classification.create, {"name": "Hardware"}, as_user=ADMIN)["id"]
    group_id = add_bug_group(services, "Insiders", members=["insider@example.com"])
    hidden = add_product(services, "Secret")
    control(services, hidden["id"], group_id, MANDATORY, MANDATORY)
    services.call(product.update, {"ids": [hidden["id"]], "classification": "Hardware"},
                  as_user=ADMIN)
    for who in (None, plain):
        result = services.call(classification.get, {"ids": [1, hardware]}, as_user=who,
                               write=False)
        assert [c["name"] for c in result["classifications"]] == ["Unclassified"]
    member = services.call(classification.get, {"ids": [hardware]},
                           as_user="insider@example.com", write=False)
    assert [p["name"] for p in member["classifications"][0]["products"]] == ["Secret"]
    services.add_user("classifier@example.com", groups=("editclassifications",))
    editor = services.call(classification.get, {"ids": [hardware]},
                           as_user="classifier@example.com", write=False)
    assert [p["name"] for p in editor["classifications"][0]["products"]] == ["Secret"]
    empty = services.call(classification.create, {"name": "Empty"}, as_user=ADMIN)["id"]
    assert services.call(classification.get, {"ids": [empty]}, as_user=plain,
                         write=False) == {"classifications": []}


def test_create_and_update_over_http(client, services, admin_key):
    resp = client.simulate_post("/rest/classification", params={"Bugzilla_api_key": admin_key},
                                json={"name": "Software", "description": "Programs",
                                      "sort_key": 10})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    resp = client.simulate_put("/rest/classification/Software",
                               params={"Bugzilla_api_key": admin_key},
                               json={"name": "Apps", "sort_key": 20, "description": "Programs"})
    assert resp.json == {"classifications": [{"id": new_id, "changes": {
        "name": {"removed": "Software", "added": "Apps"},
        "sort_key": {"removed": "10", "added": "20"}}}]}
    assert services.query("SELECT name, description, sort_key FROM classifications WHERE id = ?",
                          (new_id,)) == [("Apps", "Programs", 20)]
    assert [row[1] for row in audit_rows(services, "Classification")] == [None, "name",
                                                                          "sort_key"]


def test_permissions(client, services, plain):
    anonymous = client.simulate_post("/rest/classification", json={"name": "X"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert client.simulate_put("/rest/classification/1", json={"name": "X"}).json["code"] == 410
    assert error_code(services, classification.create, {"name": "X"}, as_user=plain) == 304
    assert error_code(services, classification.update, {"ids": [1], "name": "X"},
                      as_user=plain) == 304
    assert services.query("SELECT COUNT(*) FROM classifications") == [(1,)]


@pytest.mark.parametrize("params, code", [
    ({}, 50), ({"name": ""}, 32000), ({"name": "c" * 65}, 32000),
    ({"name": "UNCLASSIFIED"}, 32000), ({"name": "X", "sort_key": -1}, 55),
    ({"name": "X", "sort_key": 32768}, 54), ({"name": "X", "colour": "red"}, 53),
])
def test_create_errors(services, params, code):
    assert error_code(services, classification.create, params) == code
    assert services.query("SELECT COUNT(*) FROM classifications") == [(1,)]


def test_update_errors(services):
    other = services.call(classification.create, {"name": "Other"}, as_user=ADMIN)["id"]
    assert error_code(services, classification.update, {"name": "X"}) == 50
    assert error_code(services, classification.update, {"ids": [99], "name": "X"}) == 51
    assert error_code(services, classification.update, {"ids": [1, other], "name": "X"}) == 32000
    assert error_code(services, classification.update, {"ids": [1], "name": "other"}) == 32000
    assert error_code(services, classification.update, {"ids": [1], "colour": "red"}) == -32601
    assert services.query("SELECT name FROM classifications ORDER BY id") == [
        ("Unclassified",), ("Other",)]
