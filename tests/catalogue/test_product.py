"""Products: id lists, get (with subfields and group controls), create,
update, and visibility by group controls."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bugsvc.accounts.membership import GRANT_DERIVED
from bugsvc.errors import ServiceError
from bugsvc.services import classification, component, product, version
from catalog_support import (
    ADMIN,
    DEFAULT,
    MANDATORY,
    NA,
    SHOWN,
    add_bug,
    add_bug_group,
    add_product,
    audit_rows,
    control,
    set_param,
)


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as info:
        services.call(function, params, as_user=as_user)
    return info.value.code


def names(result):
    return [p["name"] for p in result["products"]]


@pytest.fixture
def plain(services):
    services.add_user("plain@example.com", password="plain-password")
    return "plain@example.com"


@pytest.fixture
def editor(services):
    services.add_user("editor@example.com", groups=("editcomponents",))
    return "editor@example.com"


# The id lists ------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/rest/product_selectable", "/rest/product_enterable",
                                  "/rest/product_accessible"])
def test_id_lists_are_integers_for_anonymous(client, path):
    resp = client.simulate_get(path)
    assert resp.status_code == 200
    assert resp.json == {"ids": [1]}


def test_enterable_needs_active_component_and_version(services):
    add_product(services, "NoComponents", components=())
    add_product(services, "OnlyInactiveVersion")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE versions SET is_active = 0 WHERE product_id ="
                     " (SELECT id FROM products WHERE name = 'OnlyInactiveVersion')")
    closed = add_product(services, "Closed", is_active=False)
    enterable = services.call(product.enterable, write=False)["ids"]
    selectable = services.call(product.selectable, write=False)["ids"]
    assert enterable == [1]
    assert closed["id"] in selectable and len(selectable) == 4
    accessible = services.call(product.accessible, write=False)["ids"]
    assert accessible == selectable   # sorted by name: Closed, NoComponents, Only..., Test...


# Get ---------------------------------------------------------------------------------

def test_get_needs_ids_names_or_type(client):
    resp = client.simulate_get("/rest/product")
    assert resp.status_code == 400 and resp.json["code"] == 50


def test_get_rejects_unknown_type(client):
    resp = client.simulate_get("/rest/product", params={"type": "everything"})
    assert resp.status_code == 400 and resp.json["code"] == 32000


def test_get_one_product_full_object(client):
    resp = client.simulate_get("/rest/product/1")
    assert resp.status_code == 200
    (found,) = resp.json["products"]
    assert found == {
        "id": 1, "name": "TestProduct", "description": found["description"], "is_active": True,
        "default_milestone": "---", "has_unconfirmed": True, "classification": "Unclassified",
        "components": [{
            "id": 1, "name": "TestComponent", "description": found["components"][0]["description"],
            "default_assigned_to": ADMIN, "default_qa_contact": "", "sort_key": 0,
            "is_active": True, "flag_types": {"bug": [], "attachment": []}}],
        "versions": [{"id": 1, "name": "unspecified", "sort_key": 0, "is_active": True}],
        "milestones": [{"id": 1, "name": "---", "sort_key": 0, "is_active": True}],
    }
    assert "group_controls" not in found


def test_python_bugzilla_get_path_returns_the_ids(client):
    resp = client.simulate_get("/rest/product/get", params={"ids": "1"})
    assert resp.status_code == 200
    assert [p["id"] for p in resp.json["products"]] == [1]


def test_get_by_name_is_case_insensitive(client):
    resp = client.simulate_get("/rest/product/testproduct")
    assert [p["name"] for p in resp.json["products"]] == ["TestProduct"]


def test_get_unions_ids_and_names_and_skips_unknown(services):
    other = add_product(services, "Other")
    result = services.call(product.get, {"ids": [1, 999], "names": ["other", "Nope"]},
                           write=False)
    assert names(result) == ["TestProduct", "Other"]
    assert services.call(product.get, {"ids": [999]}, write=False) == {"products": []}
    assert other["id"] == result["products"][1]["id"]


def test_get_by_type_union(services):
    add_product(services, "Empty", components=())
    assert names(services.call(product.get, {"type": "enterable"}, write=False)) == [
        "TestProduct"]
    both = services.call(product.get, {"type": ["enterable", "selectable"]}, write=False)
    assert names(both) == ["Empty", "TestProduct"]
    picked = services.call(product.get, {"type": "enterable", "names": ["Empty"]}, write=False)
    assert picked == {"products": []}


def test_subfield_include_gives_only_component_names(client):
    resp = client.simulate_get("/rest/product/1", params={"include_fields": "components.name"})
    assert resp.json == {"products": [{"components": [{"name": "TestComponent"}]}]}


def test_exclude_versions_and_component_flag_types(client):
    resp = client.simulate_get("/rest/product/1", params={
        "exclude_fields": ["versions", "components.flag_types"]})
    (found,) = resp.json["products"]
    assert "versions" not in found and "milestones" in found
    assert "flag_types" not in found["components"][0]


def test_versions_sorted_by_sort_key_then_version_order(services):
    add_product(services, "Versioned", versions=("1.10", "1.9", "2.0", "1.9.1"))
    (found,) = services.call(product.get, {"names": ["Versioned"]}, write=False)["products"]
    assert [v["name"] for v in found["versions"]] == ["1.9", "1.9.1", "1.10", "2.0"]


def test_email_filter_hides_assignee_domain_from_anonymous(services):
    set_param(services, "webservice_email_filter", "1")
    (anonymous,) = services.call(product.get, {"ids": [1]}, write=False)["products"]
    assert anonymous["components"][0]["default_assigned_to"] == "admin"
    (logged_in,) = services.call(product.get, {"ids": [1]}, as_user=ADMIN,
                                 write=False)["products"]
    assert logged_in["components"][0]["default_assigned_to"] == ADMIN


def test_group_controls_only_for_editcomponents_who_ask(client, services, admin_key, plain):
    group_id = add_bug_group(services, "Secret")
    control(services, 1, group_id, SHOWN, NA, entry=1)
    plain_key = services.api_key(plain)
    asked = {"include_fields": "_all"}
    admin_view = client.simulate_get("/rest/product/1", params={
        **asked, "Bugzilla_api_key": admin_key}).json["products"][0]
    assert admin_view["group_controls"] == {"Secret": {
        "membercontrol": "Shown", "othercontrol": "NA", "entry": True, "canedit": False,
        "editcomponents": False, "editbugs": False, "canconfirm": False}}
    by_name = client.simulate_get("/rest/product/1", params={
        "include_fields": "group_controls", "Bugzilla_api_key": admin_key}).json
    assert by_name == {"products": [{"group_controls": admin_view["group_controls"]}]}
    default_view = client.simulate_get("/rest/product/1", params={
        "Bugzilla_api_key": admin_key}).json["products"][0]
    assert "group_controls" not in default_view
    plain_view = client.simulate_get("/rest/product/1", params={
        **asked, "Bugzilla_api_key": plain_key}).json["products"][0]
    assert "group_controls" not in plain_view


# Visibility by group controls ---------------------------------------------------------

@pytest.fixture
def hidden(services):
    """Product 'Hidden' in classification 1, Mandatory for group 'Insiders'
    and needing it for entry (member: insider@example.com, and the admin)."""
    services.add_user("insider@example.com")
    group_id = add_bug_group(services, "Insiders", members=["insider@example.com"])
    made = add_product(services, "Hidden")
    control(services, made["id"], group_id, MANDATORY, MANDATORY, entry=1)
    return made


@pytest.mark.parametrize("who, sees", [(None, False), ("plain@example.com", False),
                                       ("insider@example.com", True), (ADMIN, True)])
def test_hidden_product_never_shows_to_non_members(services, plain, hidden, who, sees):
    product_id = hidden["id"]
    for function in (product.selectable, product.enterable, product.accessible):
        assert (product_id in services.call(function, as_user=who, write=False)["ids"]) == sees
    for params in ({"ids": [product_id]}, {"names": ["hidden"]}, {"type": "accessible"},
                   {"type": ["selectable", "enterable"]}):
        found = services.call(product.get, params, as_user=who, write=False)
        assert ("Hidden" in names(found)) == sees
    set_param(services, "useclassification", "1")
    listed = services.call(classification.get, {"ids": [1]}, as_user=who, write=False)
    assert ("Hidden" in [p["name"] for p in listed["classifications"][0]["products"]]) == sees


def test_hidden_product_cannot_be_administered_by_non_member_editor(services, hidden, editor):
    assert error_code(services, product.update, {"ids": [hidden["id"]], "description": "x"},
                      as_user=editor) == 106
    assert error_code(services, product.update, {"names": ["Hidden"], "description": "x"},
                      as_user=editor) == 106
    assert error_code(services, component.create, {
        "product": "Hidden", "name": "New", "description": "d",
        "default_assignee": ADMIN}, as_user=editor) == 106
    assert error_code(services, version.create, {"product": "Hidden", "name": "2.0"},
                      as_user=editor) == 106
    assert services.query("SELECT description FROM products WHERE name = 'Hidden'") == [
        ("Hidden description",)]


def test_hidden_product_over_http(client, services, hidden, plain):
    plain_key = services.api_key(plain)
    for key in (None, plain_key):
        params = {"Bugzilla_api_key": key} if key else {}
        assert client.simulate_get(f"/rest/product/{hidden['id']}", params=params).json == {
            "products": []}
        assert hidden["id"] not in client.simulate_get("/rest/product_accessible",
                                                       params=params).json["ids"]


# Enterable without being selectable ---------------------------------------------------

REPORTER, OTHER, MEMBER = "reporter@example.com", "other@example.com", "member@example.com"


@pytest.fixture
def security(services):
    """Product 'Security': Mandatory for group 'sec' (member: MEMBER and the
    admin) with no entry group, so anyone may file a bug there that only the
    group (and its reporter) may then see."""
    for login in (REPORTER, OTHER, MEMBER):
        services.add_user(login)
    group_id = add_bug_group(services, "sec", members=[MEMBER])
    made = add_product(services, "Security")
    control(services, made["id"], group_id, MANDATORY, MANDATORY)
    return {"id": made["id"], "group": group_id,
            "keys": {login: services.api_key(login) for login in (REPORTER, OTHER, MEMBER)}}


def _ids(client, path, key):
    resp = client.simulate_get(path, params={"Bugzilla_api_key": key} if key else {})
    assert resp.status_code == 200, resp.text
    return resp.json["ids"]


def _jsonrpc(client, method, params, key=None):
    resp = client.simulate_post("/jsonrpc.cgi", json={
        "method": method, "params": [dict(params, **({"Bugzilla_api_key": key} if key else {}))],
        "id": 1})
    assert resp.status_code == 200, resp.text
    return resp.json


@pytest.mark.parametrize("who", [None, REPORTER, MEMBER])
def test_a_product_anyone_may_enter_but_only_a_group_search_is_enterable(client, security, who):
    key = security["keys"].get(who)
    product_id = security["id"]
    assert product_id in _ids(client, "/rest/product_enterable", key)
    assert product_id in _ids(client, "/rest/product_accessible", key)
    assert (product_id in _ids(client, "/rest/product_selectable", key)) == (who == MEMBER)
    for params in ({"ids": product_id}, {"names": "security"}, {"type": "enterable"},
                   {"type": "accessible"}):
        resp = client.simulate_get("/rest/product", params=dict(
            params, **({"Bugzilla_api_key": key} if key else {})))
        found = [p for p in resp.json["products"] if p["id"] == product_id]
        assert [p["name"] for p in found] == ["Security"], params
        assert [c["name"] for c in found[0]["components"]] == ["General"]
    selectable = client.simulate_get("/rest/product", params=dict(
        {"type": "selectable"}, **({"Bugzilla_api_key": key} if key else {}))).json["products"]
    assert ("Security" in [p["name"] for p in selectable]) == (who == MEMBER)
    answer = _jsonrpc(client, "Product.get_enterable_products", {}, key)
    assert product_id in answer["result"]["ids"]
    answer = _jsonrpc(client, "Product.get", {"names": ["Security"]}, key)
    assert [p["name"] for p in answer["result"]["products"]] == ["Security"]


def _new_bug(**extra):
    return dict({"product": "Security", "component": "General", "version": "1.0",
                 "summary": "Remote code execution", "description": "Details of the hole.",
                 "op_sys": "Linux", "platform": "PC"}, **extra)


@pytest.mark.parametrize("transport", ["rest", "jsonrpc"])
def test_a_bug_filed_there_gets_the_group_and_its_reporter_keeps_access(client, services,
                                                                        security, transport):
    keys = security["keys"]
    if transport == "rest":
        resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": keys[REPORTER]},
                                    json=_new_bug())
        assert resp.status_code == 201, resp.text
        bug_id = resp.json["id"]
    else:
        answer = _jsonrpc(client, "Bug.create", _new_bug(), keys[REPORTER])
        assert answer["error"] is None, answer
        bug_id = answer["result"]["id"]
    assert services.query("SELECT group_id FROM bug_groups WHERE bug_id = ?", (bug_id,)) == [
        (security["group"],)]
    for who, sees in ((REPORTER, True), (MEMBER, True), (OTHER, False), (None, False)):
        key = keys.get(who)
        resp = client.simulate_get(f"/rest/bug/{bug_id}",
                                   params={"Bugzilla_api_key": key} if key else {})
        if sees:
            assert resp.status_code == 200 and resp.json["bugs"][0]["groups"] == ["sec"], who
        else:
            assert (resp.status_code, resp.json["code"]) == (401, 102), who
            assert "Remote code execution" not in resp.text
        answer = _jsonrpc(client, "Bug.comments", {"ids": [bug_id]}, key)
        assert (answer["error"] is None) == sees, who
    # The reporter may not take the group away: it is Mandatory.
    resp = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": keys[REPORTER]},
                               json={"groups": {"remove": ["sec"]}})
    assert resp.status_code in (400, 401) and resp.json["code"] == 120
    assert services.query("SELECT group_id FROM bug_groups WHERE bug_id = ?", (bug_id,)) == [
        (security["group"],)]


def test_a_bug_moved_there_gets_the_group(client, services, security):
    keys = security["keys"]
    resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": keys[OTHER]}, json={
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Wrong place", "op_sys": "Linux", "platform": "PC"})
    bug_id = resp.json["id"]
    resp = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": keys[OTHER]},
                               json={"product": "Security", "component": "General",
                                     "version": "1.0", "target_milestone": "---"})
    assert resp.status_code == 200, resp.text
    assert services.query("SELECT group_id FROM bug_groups WHERE bug_id = ?", (bug_id,)) == [
        (security["group"],)]


def test_an_entry_group_still_keeps_non_members_out(client, services, security):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE group_controls SET entry = 1 WHERE product_id = ?",
                     (security["id"],))
    keys = security["keys"]
    for who in (None, REPORTER):
        key = keys.get(who)
        assert security["id"] not in _ids(client, "/rest/product_enterable", key)
        assert security["id"] not in _ids(client, "/rest/product_accessible", key)
    before = services.query("SELECT COUNT(*) FROM bugs")
    resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": keys[REPORTER]},
                                json=_new_bug())
    assert (resp.status_code, resp.json["code"]) == (401, 106)
    assert services.query("SELECT COUNT(*) FROM bugs") == before
    assert security["id"] in _ids(client, "/rest/product_enterable", keys[MEMBER])
    # Mandatory and entry together: invisible to non-members in every product call.
    for who, sees in ((None, False), (REPORTER, False), (MEMBER, True)):
        key = keys.get(who)
        for params in ({"ids": security["id"]}, {"names": "Security"}, {"type": "enterable"},
                       {"type": "accessible"}, {"type": "selectable"}):
            resp = client.simulate_get("/rest/product", params=dict(
                params, **({"Bugzilla_api_key": key} if key else {})))
            names = [p["name"] for p in resp.json["products"]]
            assert ("Security" in names) == sees, (who, params)
        answer = _jsonrpc(client, "Product.get", {"names": ["Security"]}, key)
        assert bool(answer["result"]["products"]) == sees, who


# Create ------------------------------------------------------------------------------

def test_create_over_http_and_read_back(client, admin_key):
    resp = client.simulate_post("/rest/product", params={"Bugzilla_api_key": admin_key}, json={
        "name": "Widget", "description": "Makes widgets", "version": "1.0",
        "has_unconfirmed": False, "is_open": True})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    assert isinstance(new_id, int)
    (found,) = client.simulate_get(f"/rest/product/{new_id}").json["products"]
    assert found["name"] == "Widget" and found["has_unconfirmed"] is False
    assert found["components"] == []
    assert [v["name"] for v in found["versions"]] == ["1.0"]
    assert [m["name"] for m in found["milestones"]] == ["---"]
    assert found["default_milestone"] == "---"
    enterable = client.simulate_get("/rest/product_enterable",
                                    params={"Bugzilla_api_key": admin_key}).json["ids"]
    assert new_id not in enterable       # no component yet


def test_create_requires_login_and_editcomponents(client, services, plain):
    body = {"name": "Widget", "description": "d", "version": "1"}
    anonymous = client.simulate_post("/rest/product", json=body)
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, product.create, body, as_user=plain) == 304
    assert services.query("SELECT COUNT(*) FROM products") == [(1,)]


@pytest.mark.parametrize("changes, code", [
    ({"name": "  "}, 700), ({"name": "x" * 65}, 701), ({"name": "testPRODUCT"}, 702),
    ({"description": ""}, 703), ({"version": " "}, 704), ({"version": "v" * 65}, 32000),
])
def test_create_validation(services, changes, code):
    body = {"name": "Widget", "description": "d", "version": "1.0", **changes}
    assert error_code(services, product.create, body, as_user=ADMIN) == code
    assert services.query("SELECT COUNT(*) FROM products") == [(1,)]
    assert services.query("SELECT COUNT(*) FROM versions") == [(1,)]


def test_create_default_milestone_only_with_usetargetmilestone(services):
    first = services.call(product.create, {"name": "A", "description": "d", "version": "1",
                                           "default_milestone": "M1"}, as_user=ADMIN)
    assert services.query("SELECT default_milestone FROM products WHERE id = ?",
                          (first["id"],)) == [("---",)]
    set_param(services, "usetargetmilestone", "1")
    second = services.call(product.create, {"name": "B", "description": "d", "version": "1",
                                            "default_milestone": "M1"}, as_user=ADMIN)
    assert services.query("SELECT default_milestone FROM products WHERE id = ?",
                          (second["id"],)) == [("M1",)]
    assert services.query("SELECT name FROM milestones WHERE product_id = ?",
                          (second["id"],)) == [("M1",)]


def test_create_classification_only_when_enabled(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO classifications (id, name) VALUES (2, 'Hardware')")
    body = {"description": "d", "version": "1", "classification": "Hardware"}
    off = services.call(product.create, {**body, "name": "A"}, as_user=ADMIN)
    set_param(services, "useclassification", "1")
    on = services.call(product.create, {**body, "name": "B"}, as_user=ADMIN)
    assert services.query("SELECT name, classification_id FROM products WHERE id IN (?, ?)"
                          " ORDER BY id", (off["id"], on["id"])) == [("A", 1), ("B", 2)]
    assert error_code(services, product.create, {**body, "name": "C",
                                                 "classification": "Nope"}, as_user=ADMIN) == 51


def test_create_with_makeproductgroups(services):
    set_param(services, "makeproductgroups", "1")
    add_bug_group(services, "Gadget", with_admins=False)
    new = services.call(product.create, {"name": "Gadget", "description": "d", "version": "1"},
                        as_user=ADMIN)
    (group,) = services.query("SELECT id, name, is_bug_group FROM groups WHERE name = 'Gadget_'")
    assert group[2] == 1
    assert services.query("SELECT membercontrol, othercontrol FROM group_controls"
                          " WHERE product_id = ?", (new["id"],)) == [(DEFAULT, NA)]
    # As every new group: the admin group is its member, may bless it and
    # sees its members; the administrator is a member through admin only.
    assert services.query("SELECT g.name FROM group_group_map m JOIN groups g"
                          " ON g.id = m.member_id WHERE m.grantor_id = ?", (group[0],)
                          ) == [("admin",)]
    assert services.query("SELECT g.name, m.grant_type FROM group_grants m JOIN groups g"
                          " ON g.id = m.member_id WHERE m.grantor_id = ? ORDER BY 2",
                          (group[0],)) == [("admin", 1), ("admin", 2)]
    assert services.query("SELECT ug.is_bless, ug.grant_type FROM user_groups ug"
                          " JOIN users u ON u.id = ug.user_id WHERE ug.group_id = ?"
                          " AND u.login = ?", (group[0], ADMIN)) == [(0, GRANT_DERIVED)]


@freeze_time("2026-05-06 07:08:09")
def test_create_is_audited(client, services):
    services.call(product.create, {"name": "W", "description": "d", "version": "1"},
                  as_user=ADMIN, now=datetime.now(timezone.utc))
    assert audit_rows(services, "Product")[0][1:] == (None, None, None)
    resp = client.simulate_get("/rest/last_audit_time", params={"class": "Bugzilla::Product"})
    assert resp.json == {"last_audit_time": "2026-05-06T07:08:09Z"}


# Update ------------------------------------------------------------------------------

def test_update_over_http_reports_changes(client, admin_key, services):
    resp = client.simulate_put("/rest/product/TestProduct", params={"Bugzilla_api_key": admin_key},
                               json={"name": "Renamed", "description": "New text",
                                     "is_open": False, "has_unconfirmed": True})
    assert resp.status_code == 200
    (answer,) = resp.json["products"]
    assert answer["id"] == 1
    assert answer["changes"]["name"] == {"removed": "TestProduct", "added": "Renamed"}
    assert answer["changes"]["is_open"] == {"removed": "1", "added": "0"}
    assert answer["changes"]["description"]["added"] == "New text"
    assert "has_unconfirmed" not in answer["changes"]
    (found,) = services.call(product.get, {"ids": [1]}, write=False)["products"]
    assert found["name"] == "Renamed" and found["is_active"] is False
    assert {row[1] for row in audit_rows(services, "Product")} == {"name", "description",
                                                                   "is_open"}


def test_update_permissions(client, services, plain):
    anonymous = client.simulate_put("/rest/product/1", json={"description": "x"})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    assert error_code(services, product.update, {"ids": [1], "description": "x"},
                      as_user=plain) == 304


@pytest.mark.parametrize("params, code", [
    ({"description": "x"}, 50),
    ({"ids": [999], "description": "x"}, 106),
    ({"names": ["Nope"], "description": "x"}, 106),
    ({"ids": [1], "name": ""}, 700),
    ({"ids": [1], "name": "n" * 65}, 701),
    ({"ids": [1], "description": "  "}, 703),
    ({"ids": [1], "colour": "red"}, -32601),
])
def test_update_errors(services, params, code):
    assert error_code(services, product.update, params, as_user=ADMIN) == code
    assert services.query("SELECT name, description FROM products WHERE id = 1")[0][0] == \
        "TestProduct"


def test_update_name_of_several_products_is_refused(services):
    other = add_product(services, "Other")
    assert error_code(services, product.update, {"ids": [1, other["id"]], "name": "Same"},
                      as_user=ADMIN) == 702
    assert error_code(services, product.update, {"ids": [1], "name": "other"},
                      as_user=ADMIN) == 702
    same = services.call(product.update, {"ids": [1], "names": ["TestProduct"],
                                          "name": "testproduct"}, as_user=ADMIN)
    assert same["products"][0]["changes"]["name"]["added"] == "testproduct"


def test_update_default_milestone(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M2', 10)")
    ignored = services.call(product.update, {"ids": [1], "default_milestone": "Nope"},
                            as_user=ADMIN)
    assert ignored["products"][0]["changes"] == {}
    set_param(services, "usetargetmilestone", "1")
    assert error_code(services, product.update, {"ids": [1], "default_milestone": "Nope"},
                      as_user=ADMIN) == 705
    done = services.call(product.update, {"ids": [1], "default_milestone": "m2"}, as_user=ADMIN)
    assert done["products"][0]["changes"] == {
        "default_milestone": {"removed": "---", "added": "M2"}}


def test_update_classification(services):
    set_param(services, "useclassification", "1")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO classifications (id, name) VALUES (2, 'Hardware')")
    result = services.call(product.update, {"ids": [1], "classification": "Hardware"},
                           as_user=ADMIN)
    assert result["products"][0]["changes"] == {
        "classification": {"removed": "Unclassified", "added": "Hardware"}}
    (found,) = services.call(product.get, {"ids": [1]}, write=False)["products"]
    assert found["classification"] == "Hardware"


# Group controls -----------------------------------------------------------------------

def stored_controls(services, product_id=1):
    return services.query("SELECT g.name, gc.membercontrol, gc.othercontrol, gc.entry,"
                          " gc.canedit FROM group_controls gc JOIN groups g ON g.id = gc.group_id"
                          " WHERE gc.product_id = ? ORDER BY g.name", (product_id,))


def test_group_controls_set_change_and_remove(services):
    add_bug_group(services, "Staff")
    add_bug_group(services, "Partners")
    first = services.call(product.update, {"ids": [1], "group_controls": {
        "Staff": {"membercontrol": "Default", "othercontrol": "NA", "entry": True},
        "partners": {"membercontrol": "Shown", "othercontrol": "Shown", "canedit": True}}},
        as_user=ADMIN)
    assert stored_controls(services) == [("Partners", SHOWN, SHOWN, 0, 1),
                                         ("Staff", DEFAULT, NA, 1, 0)]
    assert first["products"][0]["changes"]["group_controls.Staff"] == {
        "removed": "", "added": "membercontrol: Default, othercontrol: NA, entry: 1, canedit: 0,"
                   " editcomponents: 0, editbugs: 0, canconfirm: 0"}
    second = services.call(product.update, {"ids": [1], "group_controls": {
        "Staff": {"othercontrol": "Default"}, "Partners": None}}, as_user=ADMIN)
    assert stored_controls(services) == [("Staff", DEFAULT, DEFAULT, 1, 0)]
    assert second["products"][0]["changes"]["group_controls.Partners"]["added"] == ""
    unchanged = services.call(product.update, {"ids": [1], "group_controls": {
        "Staff": {"membercontrol": "Default"}}}, as_user=ADMIN)
    assert unchanged["products"][0]["changes"] == {}
    assert services.call(product.get, {"ids": [1], "include_fields": "group_controls"},
                         as_user=ADMIN)["products"][0][
        "group_controls"] == {"Staff": {"membercontrol": "Default", "othercontrol": "Default",
                                        "entry": True, "canedit": False, "editcomponents": False,
                                        "editbugs": False, "canconfirm": False}}


@pytest.mark.parametrize("controls, code", [
    ({"Nobody": {"membercontrol": "Shown"}}, 51),
    ({"admin": {"membercontrol": "Shown", "othercontrol": "Shown"}}, 32000),
    ({"Staff": {"membercontrol": "NA", "othercontrol": "Shown"}}, 32000),
    ({"Staff": {"membercontrol": "Default", "othercontrol": "Shown"}}, 32000),
    ({"Staff": {"membercontrol": "Mandatory", "othercontrol": "Default"}}, 32000),
    ({"Staff": {"membercontrol": "Sometimes", "othercontrol": "NA"}}, 32000),
    ({"Staff": {"colour": "red"}}, 32000),
    ({"Staff": "Mandatory"}, 32000),
    (["Staff"], 32000),
])
def test_group_controls_errors(services, controls, code):
    add_bug_group(services, "Staff")
    assert error_code(services, product.update, {"ids": [1], "group_controls": controls},
                      as_user=ADMIN) == code
    assert stored_controls(services) == []


def test_mandatory_restricts_bugs_and_na_lifts(services):
    group_id = add_bug_group(services, "Staff")
    bug_id = add_bug(services, 1, 1)
    services.call(product.update, {"ids": [1], "group_controls": {
        "Staff": {"membercontrol": "Mandatory", "othercontrol": "Mandatory"}}}, as_user=ADMIN)
    assert services.query("SELECT bug_id, group_id FROM bug_groups") == [(bug_id, group_id)]
    assert services.query("SELECT field, removed, added FROM bug_activity") == [
        ("groups", "", "Staff")]
    services.call(product.update, {"ids": [1], "group_controls": {"Staff": None}}, as_user=ADMIN)
    assert services.query("SELECT COUNT(*) FROM bug_groups") == [(0,)]
    assert services.query("SELECT field, removed, added FROM bug_activity ORDER BY id")[-1] == (
        "groups", "Staff", "")
