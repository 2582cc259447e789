"""Flag types for a product's own administrators (Bugzilla 5.2's
editflagtypes.cgi, User::check_can_admin_flagtype, FlagType::set_clusions
and WebService FlagType): members of a group whose group controls give
editcomponents on a product list the types that apply to it, change the
inclusions and exclusions of their products of any such type, everything
of a type that includes only their products, create types for their
products alone and delete only types wholly theirs. A plain user and a
visitor are refused; a member of editcomponents does all of it everywhere.
Over REST and XML-RPC alike."""

import xmlrpc.client

import pytest

from catalog_support import PRODUCT_ADMIN, product_admin_world


PLAIN = "plain@example.com"
EDITOR = "editor@example.com"


@pytest.fixture
def types(services, client, admin_key):
    services.add_user(PLAIN)
    services.add_user(EDITOR, groups=("editcomponents",))
    return product_admin_world(services, client, admin_key)


@pytest.fixture
def key(services, types):
    return {"X-BUGZILLA-API-KEY": services.api_key(PRODUCT_ADMIN)}


def stored(services, type_id):
    """(description, is_active, sorted "Product:Component" inclusions, exclusions)."""
    description, active = services.query("SELECT description, is_active FROM flag_types"
                                          " WHERE id = ?", (type_id,))[0]

    def rules(table):
        return sorted(f"{product or '__Any__'}:{component or '__Any__'}"
                      for product, component in services.query(
                          f"SELECT p.name, c.name FROM {table} r"
                          " LEFT JOIN products p ON p.id = r.product_id"
                          " LEFT JOIN components c ON c.id = r.component_id"
                          " WHERE r.type_id = ?", (type_id,)))
    return description, active, rules("flag_inclusions"), rules("flag_exclusions")


def everything(services):
    return services.query("SELECT * FROM flag_types ORDER BY id"), services.query(
        "SELECT * FROM flag_inclusions ORDER BY type_id, product_id, component_id")


def test_the_list_holds_the_types_of_ones_products_with_their_rules_there(client, key):
    listed = client.simulate_get("/rest/flag_type", headers=key).json
    found = {t["name"]: t for t in listed["flagtypes"]}
    assert sorted(found) == ["everywhere", "mine", "shared"]
    assert found["mine"]["inclusions"] == ["TestProduct:__Any__"]
    assert found["shared"]["inclusions"] == ["TestProduct:__Any__"]     # not Other
    assert found["everywhere"]["inclusions"] == []                      # not __Any__
    assert {name: t["fully_editable"] for name, t in found.items()} == {
        "mine": True, "shared": False, "everywhere": False}
    assert listed["products"] == ["TestProduct"]
    assert "Team" in listed["groups"] and "admin" not in listed["groups"]


def test_a_type_wholly_theirs_is_changed_entirely(client, services, types, key):
    changed = client.simulate_put(f"/rest/flag_type/{types['mine']}", headers=key, json={
        "description": "Ours", "is_active": False,
        "inclusions": [{"TestProduct": ["TestComponent"]}]})
    assert changed.status_code == 200, changed.text
    assert stored(services, types["mine"]) == ("Ours", 0, ["TestProduct:TestComponent"], [])


def test_a_shared_type_changes_only_in_their_products(client, services, types, key):
    before = everything(services)
    for body in ({"description": "Hijacked"}, {"is_active": False},
                 {"description": "x", "inclusions": ["TestProduct"]}):
        refused = client.simulate_put(f"/rest/flag_type/{types['shared']}", headers=key,
                                      json=body)
        assert (refused.status_code, refused.json["code"]) == (400, 1105)
        assert "also applies to products you do not administer" in refused.json["message"]
    for inclusions in (["Other"], ["__Any__"], [{"Other": ["General"]}]):
        refused = client.simulate_put(f"/rest/flag_type/{types['shared']}", headers=key,
                                      json={"inclusions": inclusions})
        assert (refused.status_code, refused.json["code"]) == (401, 106)
    assert everything(services) == before
    changed = client.simulate_put(f"/rest/flag_type/{types['shared']}", headers=key, json={
        "inclusions": [{"TestProduct": ["TestComponent"]}], "exclusions": []})
    assert changed.status_code == 200, changed.text
    # Other's inclusion stays: it is not theirs to drop.
    assert stored(services, types["shared"])[2] == ["Other:__Any__", "TestProduct:TestComponent"]
    # A type for every product: they may exclude their own product from it.
    changed = client.simulate_put(f"/rest/flag_type/{types['everywhere']}", headers=key,
                                  json={"exclusions": [{"TestProduct": ["TestComponent"]}]})
    assert changed.status_code == 200, changed.text
    assert stored(services, types["everywhere"])[2:] == (
        ["__Any__:__Any__"], ["TestProduct:TestComponent"])


def test_types_of_other_products_are_not_theirs(client, services, types, key):
    before = everything(services)
    for name in ("elsewhere", "kept_out"):
        refused = client.simulate_put(f"/rest/flag_type/{types[name]}", headers=key,
                                      json={"inclusions": ["TestProduct"]})
        assert (refused.status_code, refused.json["code"]) == (400, 1105)
        assert "not available for the products you can administer" in refused.json["message"]
        refused = client.simulate_delete(f"/rest/flag_type/{types[name]}", headers=key)
        assert refused.json["code"] == 1105
    assert client.simulate_put("/rest/flag_type/99999", headers=key,
                               json={"inclusions": []}).json["code"] == 51
    assert everything(services) == before


def test_they_create_types_for_their_products_alone(client, services, key):
    before = everything(services)
    for inclusions in (None, ["__Any__"], ["Other"], ["TestProduct", "Other"]):
        body = {"name": "qa", "description": "QA"}
        if inclusions is not None:
            body["inclusions"] = inclusions
        refused = client.simulate_post("/rest/flag_type", headers=key, json=body)
        assert (refused.status_code, refused.json["code"]) == (401, 106)
    refused = client.simulate_post("/rest/flag_type", headers=key, json={
        "name": "qa", "description": "QA", "inclusions": ["TestProduct"],
        "exclusions": ["Other"]})
    assert refused.json["code"] == 106
    assert everything(services) == before
    made = client.simulate_post("/rest/flag_type", headers=key, json={
        "name": "qa", "description": "QA", "inclusions": [{"TestProduct": ["TestComponent"]}],
        "grant_group": "Team"})
    assert made.status_code == 201, made.text
    assert stored(services, made.json["id"]) == ("QA", 1, ["TestProduct:TestComponent"], [])


def test_they_delete_only_types_wholly_theirs(client, services, types, key):
    refused = client.simulate_delete(f"/rest/flag_type/{types['shared']}", headers=key)
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    assert "also applies to products you do not administer" in refused.json["message"]
    assert stored(services, types["shared"])[0] == "The shared type"
    deleted = client.simulate_delete(f"/rest/flag_type/{types['mine']}", headers=key)
    assert deleted.json == {"flagtypes": [{"id": types["mine"], "name": "mine", "flags": 0}]}


def test_plain_users_and_visitors_are_refused_everything(client, services, types):
    before = everything(services)
    plain = {"X-BUGZILLA-API-KEY": services.api_key(PLAIN)}
    for headers, code in ((plain, 304), ({}, 410)):
        assert client.simulate_get("/rest/flag_type", headers=headers).json["code"] == code
        assert client.simulate_post("/rest/flag_type", headers=headers, json={
            "name": "qa", "description": "QA", "inclusions": ["TestProduct"]}).json["code"] == code
        assert client.simulate_put(f"/rest/flag_type/{types['mine']}", headers=headers,
                                   json={"description": "x"}).json["code"] == code
        assert client.simulate_delete(f"/rest/flag_type/{types['mine']}",
                                      headers=headers).json["code"] == code
    assert everything(services) == before


def test_a_member_of_editcomponents_administers_every_type(client, services, types):
    key = {"X-BUGZILLA-API-KEY": services.api_key(EDITOR)}
    listed = client.simulate_get("/rest/flag_type", headers=key).json
    assert sorted(t["name"] for t in listed["flagtypes"]) == sorted(types)
    assert all(t["fully_editable"] for t in listed["flagtypes"]) and listed["products"] is None
    shared = next(t for t in listed["flagtypes"] if t["name"] == "shared")
    assert shared["inclusions"] == ["Other:__Any__", "TestProduct:__Any__"]
    changed = client.simulate_put(f"/rest/flag_type/{types['elsewhere']}", headers=key,
                                  json={"description": "Changed", "inclusions": ["__Any__"]})
    assert changed.status_code == 200, changed.text
    assert stored(services, types["elsewhere"])[:3] == ("Changed", 1, ["__Any__:__Any__"])
    assert client.simulate_delete(f"/rest/flag_type/{types['shared']}",
                                  headers=key).status_code == 200


def rpc(client, method, params):
    body = xmlrpc.client.dumps((params,), method)
    return client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})


def test_the_same_rules_over_xmlrpc(client, services, types):
    api_key = services.api_key(PRODUCT_ADMIN)
    answer = rpc(client, "FlagType.update", {"Bugzilla_api_key": api_key, "ids": [types["shared"]],
                                             "description": "Hijacked"})
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(answer.content)
    assert fault.value.faultCode == 1105
    answer = rpc(client, "FlagType.create", {"Bugzilla_api_key": api_key, "name": "qa",
                                             "description": "QA"})
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(answer.content)
    assert fault.value.faultCode == 106
    answer = rpc(client, "FlagType.update", {"Bugzilla_api_key": api_key, "ids": [types["shared"]],
                                             "inclusions": [{"TestProduct": ["TestComponent"]}]})
    [result] = xmlrpc.client.loads(answer.content)[0][0]["flagtypes"]
    assert result["changes"]["inclusions"] == {"removed": "TestProduct:__Any__",
                                               "added": "TestProduct:TestComponent"}
    answer = rpc(client, "FlagType.create", {"Bugzilla_api_key": api_key, "name": "qa",
                                             "description": "QA", "inclusions": ["TestProduct"]})
    assert xmlrpc.client.loads(answer.content)[0][0]["id"] > 0
