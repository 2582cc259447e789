"""Keywords: list, create, update."""

import pytest

from bugsvc.errors import ServiceError
from bugsvc.services import keyword
from catalog_support import ADMIN, audit_rows


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as info:
        services.call(function, params, as_user=as_user)
    return info.value.code


def make(services, name, description="about it", **extra):
    return services.call(keyword.create, {"name": name, "description": description, **extra},
                         as_user=ADMIN)["id"]


def test_create_over_http_and_list(client, services, admin_key):
    resp = client.simulate_post("/rest/keyword", params={"Bugzilla_api_key": admin_key},
                                json={"name": "regression", "description": "Worked before"})
    assert resp.status_code == 201
    first = resp.json["id"]
    second = make(services, "crash", is_active=False)
    listing = client.simulate_get("/rest/keyword")
    assert listing.status_code == 200
    assert listing.json == {"keywords": [
        {"id": second, "name": "crash", "description": "about it", "is_active": False},
        {"id": first, "name": "regression", "description": "Worked before", "is_active": True}]}
    one = client.simulate_get("/rest/keyword/REGRESSION", params={"include_fields": "name"})
    assert one.json == {"keywords": [{"name": "regression"}]}
    assert client.simulate_get("/rest/keyword/nothing").status_code == 404
    assert audit_rows(services, "Keyword") == [(first, None, None, None),
                                               (second, None, None, None)]


def test_empty_list_on_fresh_install(client):
    assert client.simulate_get("/rest/keyword").json == {"keywords": []}


def test_permissions(client, services):
    services.add_user("plain@example.com")
    anonymous = client.simulate_post("/rest/keyword", json={"name": "a", "description": "b"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert client.simulate_put("/rest/keyword/1", json={"name": "b"}).json["code"] == 410
    assert error_code(services, keyword.create, {"name": "a", "description": "b"},
                      as_user="plain@example.com") == 304
    services.add_user("kw@example.com", groups=("editkeywords",))
    kw_id = make(services, "fine")
    assert error_code(services, keyword.update, {"ids": [kw_id], "name": "x"},
                      as_user="plain@example.com") == 304
    services.call(keyword.update, {"ids": [kw_id], "name": "better"}, as_user="kw@example.com")


@pytest.mark.parametrize("params, code", [
    ({"description": "d"}, 50),
    ({"name": "a"}, 50),
    ({"name": " ", "description": "d"}, 32000),
    ({"name": "two words", "description": "d"}, 32000),
    ({"name": "a,b", "description": "d"}, 32000),
    ({"name": "k" * 65, "description": "d"}, 32000),
    ({"name": "TAKEN", "description": "d"}, 32000),
    ({"name": "a", "description": " "}, 32000),
    ({"name": "a", "description": "d", "colour": "red"}, 53),
])
def test_create_errors(services, params, code):
    make(services, "taken")
    assert error_code(services, keyword.create, params) == code
    assert services.query("SELECT COUNT(*) FROM keywords") == [(1,)]


def test_update_by_name_over_http(client, services, admin_key):
    kw_id = make(services, "old")
    resp = client.simulate_put("/rest/keyword/old", params={"Bugzilla_api_key": admin_key},
                               json={"name": "new", "description": "fresh", "is_active": False})
    assert resp.status_code == 200
    assert resp.json == {"keywords": [{"id": kw_id, "changes": {
        "name": {"removed": "old", "added": "new"},
        "description": {"removed": "about it", "added": "fresh"},
        "is_active": {"removed": "1", "added": "0"}}}]}


def test_update_errors(services):
    first, second = make(services, "one"), make(services, "two")
    assert error_code(services, keyword.update, {"name": "x"}) == 50
    assert error_code(services, keyword.update, {"ids": [999], "name": "x"}) == 51
    assert error_code(services, keyword.update, {"names": ["nope"], "name": "x"}) == 51
    assert error_code(services, keyword.update, {"ids": [first, second], "name": "x"}) == 32000
    assert error_code(services, keyword.update, {"ids": [first], "name": "TWO"}) == 32000
    assert error_code(services, keyword.update, {"ids": [first], "colour": "red"}) == -32601
    deactivated = services.call(keyword.update, {"ids": [first, second], "is_active": False},
                                as_user=ADMIN)
    assert [k["changes"] for k in deactivated["keywords"]] == [
        {"is_active": {"removed": "1", "added": "0"}}] * 2
    assert services.query("SELECT name FROM keywords ORDER BY id") == [("one",), ("two",)]
