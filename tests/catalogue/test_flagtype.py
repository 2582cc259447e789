"""Flag types: which types apply where, reading them per product/component,
creating and updating them (interface "Flag types")."""

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bugsvc.catalogue import flag_rules
from bugsvc.errors import ServiceError
from bugsvc.services import flagtype, instance


EVERY_VALUE = ["X", "?", "+", "-"]


# Helpers ----------------------------------------------------------------------

def write(services, sql, args=()):
    with services.db.transaction(write=True) as conn:
        return conn.execute(sql, args).lastrowid


def admin_id(services):
    return services.query("SELECT id FROM users WHERE login = ?", (ADMIN,))[0][0]


def add_product(services, name, components=("Alpha", "Beta")):
    """A product with the given components; returns (product id, {component: id})."""
    product_id = write(services, "INSERT INTO products (name, classification_id, description)"
                                 " VALUES (?, 1, 'test')", (name,))
    write(services, "INSERT INTO versions (product_id, name) VALUES (?, 'unspecified')",
          (product_id,))
    ids = {}
    for component in components:
        ids[component] = write(services, "INSERT INTO components (product_id, name, description,"
                                         " default_assignee) VALUES (?, ?, 'c', ?)",
                               (product_id, component, admin_id(services)))
    return product_id, ids


def hide_product(services, product_id, group_name="insiders"):
    """Restrict a product to members of a new group: Mandatory, and needed
    for entry, so non-members may neither search it nor file bugs in it."""
    group_id = write(services, "INSERT INTO groups (name, description) VALUES (?, 'secret')",
                     (group_name,))
    write(services, "INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                    " othercontrol) VALUES (?, ?, 1, 3, 3)", (group_id, product_id))
    return group_id


def create(services, as_user=ADMIN, **params):
    values = {"name": "review", "description": "Code review"}
    values.update(params)
    return services.call(flagtype.create, values, as_user=as_user)["id"]


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def type_count(services):
    return services.query("SELECT COUNT(*) FROM flag_types")[0][0]


def names(flag_types):
    return [t["name"] for t in flag_types]


def get_types(services, product, component=None, as_user=None):
    params = {"product": product}
    if component is not None:
        params["component"] = component
    return services.call(flagtype.get, params, as_user=as_user, write=False)


@pytest.fixture
def widget(services):
    """Product 'Widget' with components Alpha and Beta."""
    return add_product(services, "Widget")


@pytest.fixture
def editor(services):
    return services.add_user("editor@example.com", groups=("editcomponents",))


@pytest.fixture
def plain(services):
    return services.add_user("plain@example.com")


# Create --------------------------------------------------------------------------

@freeze_time("2026-05-06 07:08:09")
def test_create_over_http_answers_201_with_defaults_stored(client, admin_key, services):
    resp = client.simulate_post("/rest/flag_type", params={"Bugzilla_api_key": admin_key},
                                json={"name": "review", "description": "Code review"})
    assert resp.status_code == 201
    type_id = resp.json["id"]
    assert resp.json == {"id": type_id} and isinstance(type_id, int)
    row = services.query("SELECT name, description, cc_list, target_type, is_active,"
                         " is_requestable, is_requesteeble, is_multiplicable, sort_key,"
                         " grant_group_id, request_group_id FROM flag_types WHERE id = ?",
                         (type_id,))
    assert row == [("review", "Code review", "", "b", 1, 1, 1, 1, 1, None, None)]
    assert services.query("SELECT product_id, component_id FROM flag_inclusions"
                          " WHERE type_id = ?", (type_id,)) == [(None, None)]
    assert services.query("SELECT COUNT(*) FROM flag_exclusions")[0][0] == 0
    audit = services.call(instance.last_audit_time, {"class": ["Service::FlagType"]}, write=False)
    assert audit == {"last_audit_time": "2026-05-06T07:08:09Z"}


def test_create_stores_every_given_value(services, widget):
    type_id = create(services, name=" approval ", description=" Approve it ",
                     target_type="attachment", sortkey=7, is_active=False,
                     is_requestable=0, is_specifically_requestable=False,
                     is_multiplicable="0", cc_list=["a@example.com", "b@example.org"],
                     grant_group="editbugs", request_group="canconfirm",
                     inclusions=["Widget"], exclusions=[{"Widget": ["Beta"]}])
    editbugs, canconfirm = (services.query("SELECT id FROM groups WHERE name = ?", (name,))[0][0]
                            for name in ("editbugs", "canconfirm"))
    row = services.query("SELECT name, description, cc_list, target_type, is_active,"
                         " is_requestable, is_requesteeble, is_multiplicable, sort_key,"
                         " grant_group_id, request_group_id FROM flag_types WHERE id = ?",
                         (type_id,))
    assert row == [("approval", "Approve it", "a@example.com, b@example.org", "a", 0, 0, 0, 0, 7,
                    editbugs, canconfirm)]
    product_id, components = widget
    assert services.query("SELECT product_id, component_id FROM flag_inclusions"
                          " WHERE type_id = ?", (type_id,)) == [(product_id, None)]
    assert services.query("SELECT product_id, component_id FROM flag_exclusions"
                          " WHERE type_id = ?", (type_id,)) == [(product_id, components["Beta"])]


def test_create_accepts_an_object_of_products_to_components(services, widget):
    product_id, components = widget
    type_id = create(services, inclusions={"Widget": ["Alpha", "Beta"]})
    assert sorted(services.query("SELECT product_id, component_id FROM flag_inclusions"
                                 " WHERE type_id = ?", (type_id,))) == sorted(
        [(product_id, components["Alpha"]), (product_id, components["Beta"])])


def test_create_refuses_anonymous_and_plain_callers_over_http(client, services, plain):
    key = services.api_key("plain@example.com")
    body = {"name": "review", "description": "Code review"}
    anonymous = client.simulate_post("/rest/flag_type", json=body)
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    refused = client.simulate_post("/rest/flag_type", params={"Bugzilla_api_key": key}, json=body)
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    assert type_count(services) == 0


def test_create_is_allowed_to_editcomponents_members(services, editor):
    assert create(services, as_user=editor) > 0


@pytest.mark.parametrize("params, code", [
    ({"name": ""}, 50),
    ({"description": None}, 50),
    ({"name": "code review"}, 1101),
    ({"name": "a,b"}, 1101),
    ({"name": "x" * 51}, 1101),
    ({"description": "   "}, 1102),
    ({"cc_list": ["a" * 100 + "@example.com", "b" * 100 + "@example.com"]}, 1103),
    ({"cc_list": ["not an address"]}, 501),
    ({"sortkey": 0}, 1104),
    ({"sortkey": 32768}, 1104),
    ({"sortkey": "first"}, 1104),
    ({"grant_group": "no-such-group"}, 51),
    ({"request_group": "no-such-group"}, 51),
    ({"inclusions": ["NoSuchProduct"]}, 106),
    ({"exclusions": [{"Widget": ["NoSuchComponent"]}]}, 51),
    ({"inclusions": [17]}, 53),
    ({"target_type": "bugs"}, -32000),
])
def test_create_rejects_invalid_values_and_stores_nothing(services, widget, params, code):
    values = {"name": "review", "description": "Code review"}
    values.update(params)
    assert error_code(services, flagtype.create, values) == code
    assert type_count(services) == 0
    assert services.query("SELECT COUNT(*) FROM flag_inclusions")[0][0] == 0


def test_sortkey_limits_are_inclusive(services):
    assert create(services, name="low", sortkey=1) != create(services, name="high", sortkey=32767)


# Which types apply where -----------------------------------------------------------

def test_excluded_component_loses_the_type_and_its_sibling_keeps_it(services, widget):
    product_id, components = widget
    create(services, name="review", inclusions=["Widget"], exclusions={"Widget": ["Beta"]})
    assert names(get_types(services, "Widget", "Alpha")["bug"]) == ["review"]
    assert get_types(services, "Widget", "Beta")["bug"] == []
    assert names(get_types(services, "Widget")["bug"]) == ["review"]
    with services.db.transaction() as conn:
        assert names(flag_rules.flag_types_for_component(
            conn, product_id, components["Alpha"])["bug"]) == ["review"]
        assert flag_rules.flag_types_for_component(conn, product_id, components["Beta"]) == {
            "bug": [], "attachment": []}


def test_types_for_all_products_apply_to_every_product(services, widget):
    create(services, name="everywhere")
    create(services, name="widget-only", inclusions=["Widget"])
    assert names(get_types(services, "TestProduct", "TestComponent")["bug"]) == ["everywhere"]
    assert names(get_types(services, "Widget", "Beta")["bug"]) == ["everywhere", "widget-only"]


def test_component_inclusion_limits_the_type_to_that_component(services, widget):
    create(services, name="alpha-only", inclusions=[{"Widget": ["Alpha"]}])
    assert names(get_types(services, "Widget", "Alpha")["bug"]) == ["alpha-only"]
    assert get_types(services, "Widget", "Beta")["bug"] == []
    assert names(get_types(services, "Widget")["bug"]) == ["alpha-only"]


def test_product_level_view_drops_a_type_excluded_everywhere_it_was_included(services, widget):
    create(services, name="gone", inclusions=[{"Widget": ["Alpha"]}],
           exclusions=[{"Widget": ["Alpha"]}])
    create(services, name="product-wide-exclusion", exclusions=["Widget"])
    assert get_types(services, "Widget") == {"bug": [], "attachment": []}
    assert names(get_types(services, "TestProduct")["bug"]) == ["product-wide-exclusion"]


def test_types_are_split_by_target_and_sorted_by_sort_key_then_name(services, widget):
    create(services, name="zeta", sortkey=1)
    create(services, name="alpha", sortkey=5)
    create(services, name="beta", sortkey=1)
    create(services, name="shot", target_type="attachment")
    types = get_types(services, "Widget", "Alpha")
    assert names(types["bug"]) == ["beta", "zeta", "alpha"]
    assert names(types["attachment"]) == ["shot"]
    product_id, components = widget
    with services.db.transaction() as conn:
        ids = flag_rules.applicable_type_ids(conn, product_id, components["Alpha"], "attachment")
        product_types = flag_rules.flag_types_for_component(conn, product_id, components["Alpha"])
    assert ids == [t["id"] for t in types["attachment"]]
    assert names(product_types["bug"]) == ["beta", "zeta", "alpha"]


def test_product_flag_type_object_has_the_component_format(services, widget):
    type_id = create(services, cc_list=["a@example.com"], sortkey=3, grant_group="editbugs",
                     is_active=False)
    editbugs = services.query("SELECT id FROM groups WHERE name = 'editbugs'")[0][0]
    product_id, components = widget
    with services.db.transaction() as conn:
        found = flag_rules.flag_types_for_component(conn, product_id, components["Alpha"])
    assert found == {"bug": [{
        "id": type_id, "name": "review", "description": "Code review", "cc_list": "a@example.com",
        "sort_key": 3, "is_active": False, "is_requestable": True, "is_requesteeble": True,
        "is_multiplicable": True, "grant_group": editbugs, "request_group": None}],
        "attachment": []}


# Get -----------------------------------------------------------------------------------

def test_get_over_http_returns_flag_type_objects(client, services, widget):
    type_id = create(services, is_multiplicable=False)
    resp = client.simulate_get("/rest/flag_type/Widget/Alpha")
    assert resp.status_code == 200
    assert resp.json == {"bug": [{"id": type_id, "name": "review", "description": "Code review",
                                  "type": "bug", "values": EVERY_VALUE, "is_active": True,
                                  "is_requesteeble": True, "is_multiplicable": False}],
                         "attachment": []}


def test_get_names_the_components_a_type_is_limited_to(services, widget):
    create(services, name="only", inclusions=[{"Widget": ["Beta", "Alpha"]}])
    create(services, name="except", inclusions=["Widget"], exclusions=[{"Widget": ["Beta"]}])
    found = {t["name"]: t for t in get_types(services, "Widget")["bug"]}
    assert found["only"]["inclusions"] == ["Alpha", "Beta"] and "exclusions" not in found["only"]
    assert found["except"]["exclusions"] == ["Beta"] and "inclusions" not in found["except"]


def test_get_product_with_a_slash_in_its_name_over_http(client, services):
    add_product(services, "Web/Mobile", components=("UI/UX",))
    create(services)
    resp = client.simulate_get("/rest/flag_type/Web%2FMobile/UI%2FUX")
    assert resp.status_code == 200
    assert names(resp.json["bug"]) == ["review"]


def test_get_unknown_product_is_106_and_unknown_component_51_over_http(client, services, widget):
    missing = client.simulate_get("/rest/flag_type/NoSuchProduct")
    assert (missing.status_code, missing.json["code"]) == (401, 106)
    component = client.simulate_get("/rest/flag_type/Widget/NoSuchComponent")
    assert (component.status_code, component.json["code"]) == (404, 51)


def test_get_hidden_product_only_for_its_group_members(services, widget):
    product_id, _ = widget
    group_id = hide_product(services, product_id)
    group_name = services.query("SELECT name FROM groups WHERE id = ?", (group_id,))[0][0]
    insider = services.add_user("insider@example.com", groups=(group_name,))
    outsider = services.add_user("outsider@example.com")
    create(services)
    assert names(get_types(services, "Widget", as_user=insider)["bug"]) == ["review"]
    for caller in (outsider, None):
        with pytest.raises(ServiceError) as caught:
            get_types(services, "Widget", as_user=caller)
        assert caught.value.code == 106


def test_values_follow_the_callers_grant_and_request_rights(services, widget, plain):
    create(services, name="granted", grant_group="editcomponents")
    create(services, name="unrequestable", is_requestable=False)
    create(services, name="closed", grant_group="editcomponents", request_group="canconfirm")
    as_plain = {t["name"]: t["values"] for t in get_types(services, "Widget", as_user=plain)["bug"]}
    assert as_plain == {"granted": ["X", "?"], "unrequestable": ["X", "+", "-"], "closed": ["X"]}
    as_admin = {t["name"]: t["values"] for t in get_types(services, "Widget", as_user=ADMIN)["bug"]}
    assert as_admin == {"granted": EVERY_VALUE, "unrequestable": ["X", "+", "-"],
                        "closed": EVERY_VALUE}


# Update ----------------------------------------------------------------------------------

@freeze_time("2026-07-08 09:10:11")
def test_update_over_http_reports_changes_with_reference_keys(client, admin_key, services, widget):
    type_id = create(services, sortkey=2)
    editbugs = services.query("SELECT id FROM groups WHERE name = 'editbugs'")[0][0]
    resp = client.simulate_put(f"/rest/flag_type/{type_id}", params={"Bugzilla_api_key": admin_key},
                               json={"description": "Review the code", "sortkey": 9,
                                     "is_active": False, "is_specifically_requestable": False,
                                     "grant_group": "editbugs", "cc_list": ["x@example.com"],
                                     "is_multiplicable": True})
    assert resp.status_code == 200
    assert resp.json == {"flagtypes": [{"id": type_id, "name": "review", "changes": {
        "description": {"removed": "Code review", "added": "Review the code"},
        "sortkey": {"removed": "2", "added": "9"},
        "is_active": {"removed": "1", "added": "0"},
        "is_requesteeble": {"removed": "1", "added": "0"},
        "grant_group_id": {"removed": "", "added": str(editbugs)},
        "cc_list": {"removed": "", "added": "x@example.com"}}}]}
    audit = services.query("SELECT field, removed, added, at_time FROM audit_log"
                           " WHERE class = 'Bugzilla::FlagType' AND field = 'sortkey'")
    assert audit == [("sortkey", "2", "9", "2026-07-08 09:10:11")]


def test_update_by_name_changes_every_type_of_that_name(services, widget):
    first = create(services, name="review")
    second = create(services, name="review", target_type="attachment")
    other = create(services, name="other")
    result = services.call(flagtype.update, {"names": ["review"], "sortkey": 4}, as_user=ADMIN)
    assert sorted(item["id"] for item in result["flagtypes"]) == [first, second]
    assert services.query("SELECT id, sort_key FROM flag_types ORDER BY id") == [
        (first, 4), (second, 4), (other, 1)]


def test_update_renaming_several_types_is_refused(services):
    first = create(services, name="review")
    create(services, name="review", target_type="attachment")
    assert error_code(services, flagtype.update, {"names": ["review"], "name": "audit"}) == 32000
    assert services.call(flagtype.update, {"ids": [first], "name": "audit"},
                         as_user=ADMIN)["flagtypes"][0]["name"] == "audit"
    assert sorted(row[0] for row in services.query("SELECT name FROM flag_types")) == [
        "audit", "review"]


@pytest.mark.parametrize("params, code", [
    ({"sortkey": 9}, 50),
    ({"ids": [999], "sortkey": 9}, 51),
    ({"ids": ["first"], "sortkey": 9}, 52),
    ({"names": ["review"], "target_type": "attachment"}, -32601),
    ({"names": ["review"], "name": "bad name"}, 1101),
    ({"names": ["review"], "description": ""}, 1102),
    ({"names": ["review"], "sortkey": 0}, 1104),
    ({"names": ["review"], "grant_group": "nobody"}, 51),
    ({"names": ["review"], "inclusions": ["NoSuchProduct"]}, 106),
])
def test_update_errors_leave_the_type_unchanged(services, params, code):
    create(services)
    assert error_code(services, flagtype.update, params) == code
    assert services.query("SELECT name, description, sort_key FROM flag_types") == [
        ("review", "Code review", 1)]


def test_update_refuses_anonymous_and_plain_callers_over_http(client, services, plain):
    type_id = create(services)
    key = services.api_key("plain@example.com")
    anonymous = client.simulate_put(f"/rest/flag_type/{type_id}", json={"sortkey": 5})
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    refused = client.simulate_put(f"/rest/flag_type/{type_id}", params={"Bugzilla_api_key": key},
                                  json={"sortkey": 5})
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    assert services.query("SELECT sort_key FROM flag_types") == [(1,)]


def test_update_by_name_in_the_path_and_unknown_names_match_nothing(client, admin_key, services):
    type_id = create(services)
    params = {"Bugzilla_api_key": admin_key}
    resp = client.simulate_put("/rest/flag_type/review", params=params, json={"sortkey": 3})
    assert [item["id"] for item in resp.json["flagtypes"]] == [type_id]
    assert client.simulate_put("/rest/flag_type/nothing", params=params,
                               json={"sortkey": 3}).json == {"flagtypes": []}


def test_update_clusions_report_entries_and_change_where_the_type_applies(services, widget):
    type_id = create(services)
    result = services.call(flagtype.update, {"ids": [type_id], "inclusions": ["Widget"],
                                             "exclusions": [{"Widget": ["Beta"]}]}, as_user=ADMIN)
    assert result["flagtypes"][0]["changes"] == {
        "inclusions": {"removed": "__Any__:__Any__", "added": "Widget:__Any__"},
        "exclusions": {"removed": "", "added": "Widget:Beta"}}
    assert get_types(services, "TestProduct")["bug"] == []
    assert get_types(services, "Widget", "Beta")["bug"] == []
    assert names(get_types(services, "Widget", "Alpha")["bug"]) == ["review"]
    same = services.call(flagtype.update, {"ids": [type_id], "inclusions": ["Widget"]},
                         as_user=ADMIN)
    assert same["flagtypes"][0]["changes"] == {}
    back = services.call(flagtype.update, {"ids": [type_id], "inclusions": ["__Any__"],
                                           "exclusions": []}, as_user=ADMIN)
    assert back["flagtypes"][0]["changes"]["inclusions"] == {"removed": "Widget:__Any__",
                                                             "added": "__Any__:__Any__"}
    assert names(get_types(services, "TestProduct")["bug"]) == ["review"]


# An empty component list: the whole product ------------------------------------------

def _rest_types(client, product, component):
    resp = client.simulate_get(f"/rest/flag_type/{product}/{component}")
    assert resp.status_code == 200, resp.text
    return {t["name"] for t in resp.json["bug"]}


def _component_types(client, product):
    """{component: names of its bug flag types} as Product.get shows them."""
    resp = client.simulate_get(f"/rest/product/{product}",
                               params={"include_fields": "components.name,components.flag_types"})
    assert resp.status_code == 200, resp.text
    return {c["name"]: {t["name"] for t in c["flag_types"]["bug"]}
            for c in resp.json["products"][0]["components"]}


def _jsonrpc(client, method, params, key):
    resp = client.simulate_post("/jsonrpc.cgi", json={
        "method": method, "params": [dict(params, Bugzilla_api_key=key)], "id": 1})
    assert resp.status_code == 200 and resp.json["error"] is None, resp.text
    return resp.json["result"]


def test_create_with_an_empty_component_list_includes_every_component(client, admin_key,
                                                                      services, widget):
    product_id, _ = widget
    resp = client.simulate_post("/rest/flag_type", params={"Bugzilla_api_key": admin_key},
                                json={"name": "qa", "description": "QA", "target_type": "bug",
                                      "inclusions": [{"Widget": []}]})
    assert resp.status_code == 201, resp.text
    type_id = resp.json["id"]
    assert services.query("SELECT product_id, component_id FROM flag_inclusions"
                          " WHERE type_id = ?", (type_id,)) == [(product_id, None)]
    for component in ("Alpha", "Beta"):
        assert _rest_types(client, "Widget", component) == {"qa"}
    assert _component_types(client, "Widget") == {"Alpha": {"qa"}, "Beta": {"qa"}}
    assert _rest_types(client, "TestProduct", "TestComponent") == set()
    # A component added later is covered too: the rule names the product, not its components.
    write(services, "INSERT INTO components (product_id, name, description, default_assignee)"
                    " VALUES (?, 'Gamma', 'c', ?)", (product_id, admin_id(services)))
    assert _rest_types(client, "Widget", "Gamma") == {"qa"}


def test_create_with_an_empty_component_list_excludes_every_component(client, admin_key, widget):
    result = _jsonrpc(client, "FlagType.create",
                      {"name": "qa", "description": "QA", "inclusions": ["__Any__"],
                       "exclusions": {"Widget": []}}, admin_key)
    assert result["id"]
    assert _component_types(client, "Widget") == {"Alpha": set(), "Beta": set()}
    assert _rest_types(client, "TestProduct", "TestComponent") == {"qa"}


def test_update_with_an_empty_component_list_applies_to_every_component(client, admin_key,
                                                                        services, widget):
    type_id = create(services, name="qa", inclusions=[{"Widget": ["Alpha"]}])
    assert _component_types(client, "Widget") == {"Alpha": {"qa"}, "Beta": set()}
    result = _jsonrpc(client, "FlagType.update",
                      {"ids": [type_id], "inclusions": [{"Widget": []}]}, admin_key)
    assert result["flagtypes"][0]["changes"] == {
        "inclusions": {"removed": "Widget:Alpha", "added": "Widget:__Any__"}}
    assert _component_types(client, "Widget") == {"Alpha": {"qa"}, "Beta": {"qa"}}
    resp = client.simulate_put(f"/rest/flag_type/{type_id}", params={"Bugzilla_api_key": admin_key},
                               json={"exclusions": [{"Widget": []}]})
    assert resp.status_code == 200, resp.text
    assert resp.json["flagtypes"][0]["changes"] == {
        "exclusions": {"removed": "", "added": "Widget:__Any__"}}
    assert _component_types(client, "Widget") == {"Alpha": set(), "Beta": set()}


def test_a_flag_of_such_a_type_can_be_set_on_bugs_of_every_component(client, admin_key,
                                                                     services, widget):
    create(services, name="qa", inclusions=[{"Widget": []}])
    write(services, "INSERT INTO milestones (product_id, name) VALUES (?, '---')", (widget[0],))
    for component in ("Alpha", "Beta"):
        resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key}, json={
            "product": "Widget", "component": component, "version": "unspecified",
            "summary": "s", "op_sys": "Linux", "platform": "PC",
            "flags": [{"name": "qa", "status": "+"}]})
        assert resp.status_code == 201, resp.text
        bug = client.simulate_get(f"/rest/bug/{resp.json['id']}",
                                  params={"include_fields": "flags"}).json["bugs"][0]
        assert [(f["name"], f["status"]) for f in bug["flags"]] == [("qa", "+")]


def add_bug_with_flag(services, product_id, component_id, type_id, requestee=None):
    now = "2026-01-01 00:00:00"
    owner = admin_id(services)
    bug_id = write(services, "INSERT INTO bugs (product_id, component_id, version, summary, status,"
                             " priority, severity, platform, op_sys, assigned_to, reporter,"
                             " creation_time, last_change_time) VALUES (?, ?, 'unspecified', 's',"
                             " 'CONFIRMED', '---', 'normal', 'All', 'All', ?, ?, ?, ?)",
                   (product_id, component_id, owner, owner, now, now))
    flag_id = write(services, "INSERT INTO flags (type_id, status, bug_id, setter_id, requestee_id,"
                              " created_at, modified_at) VALUES (?, '?', ?, ?, ?, ?, ?)",
                    (type_id, bug_id, owner, requestee, now, now))
    return flag_id


def test_excluding_a_component_moves_its_flags_to_a_twin_type_or_deletes_them(services, widget):
    product_id, components = widget
    review = create(services, name="review", inclusions=["Widget"])
    twin = create(services, name="review", inclusions=[{"Widget": ["Alpha"]}])
    on_alpha = add_bug_with_flag(services, product_id, components["Alpha"], review)
    on_beta = add_bug_with_flag(services, product_id, components["Beta"], review)
    services.call(flagtype.update, {"ids": [review], "exclusions": [{"Widget": ["Alpha", "Beta"]}]},
                  as_user=ADMIN)
    assert services.query("SELECT id, type_id FROM flags ORDER BY id") == [(on_alpha, twin)]
    assert on_beta not in [row[0] for row in services.query("SELECT id FROM flags")]


def test_a_flag_is_not_moved_to_a_twin_it_cannot_use(services, widget):
    product_id, components = widget
    review = create(services, name="review", inclusions=["Widget"])
    create(services, name="review", inclusions=[{"Widget": ["Alpha"]}], is_multiplicable=False)
    create(services, name="review", inclusions=[{"Widget": ["Alpha"]}], grant_group="canconfirm",
           request_group="canconfirm")
    first = add_bug_with_flag(services, product_id, components["Alpha"], review)
    bug_id = services.query("SELECT bug_id FROM flags WHERE id = ?", (first,))[0][0]
    second = write(services, "INSERT INTO flags (type_id, status, bug_id, setter_id, created_at,"
                             " modified_at) VALUES (?, '+', ?, ?, 'x', 'x')",
                   (review, bug_id, admin_id(services)))
    write(services, "DELETE FROM user_groups WHERE user_id = ? AND group_id ="
                    " (SELECT id FROM groups WHERE name = 'canconfirm')", (admin_id(services),))
    services.call(flagtype.update, {"ids": [review], "exclusions": [{"Widget": ["Alpha"]}]},
                  as_user=ADMIN)
    single = services.query("SELECT id FROM flag_types WHERE is_multiplicable = 0")[0][0]
    assert services.query("SELECT id, type_id FROM flags ORDER BY id") == [(first, single)]
    assert second not in [row[0] for row in services.query("SELECT id FROM flags")]


def test_no_longer_specifically_requestable_drops_requestees(services, widget, plain):
    product_id, components = widget
    type_id = create(services)
    flag_id = add_bug_with_flag(services, product_id, components["Alpha"], type_id, requestee=plain)
    services.call(flagtype.update, {"ids": [type_id], "is_specifically_requestable": False},
                  as_user=ADMIN)
    assert services.query("SELECT id, requestee_id FROM flags") == [(flag_id, None)]
