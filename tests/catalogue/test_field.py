"""Bug fields: definitions, legal values and custom fields (interface "Bug
fields")."""

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bugsvc.errors import ServiceError
from bugsvc.services import field, instance


STANDARD_MANDATORY = {"short_desc", "product", "version", "component"}
VALUE_FIELDS = {"classification", "rep_platform", "op_sys", "bug_status", "resolution",
                "bug_severity", "priority", "component", "version", "target_milestone",
                "keywords"}


# Helpers ----------------------------------------------------------------------

def write(services, sql, args=()):
    with services.db.transaction(write=True) as conn:
        return conn.execute(sql, args).lastrowid


def admin_id(services):
    return services.query("SELECT id FROM users WHERE login = ?", (ADMIN,))[0][0]


def add_product(services, name, component="Main", version="1.0", milestone="M1"):
    product_id = write(services, "INSERT INTO products (name, classification_id, description)"
                                 " VALUES (?, 1, 'test')", (name,))
    write(services, "INSERT INTO components (product_id, name, description, default_assignee)"
                    " VALUES (?, ?, 'c', ?)", (product_id, component, admin_id(services)))
    write(services, "INSERT INTO versions (product_id, name) VALUES (?, ?)", (product_id, version))
    write(services, "INSERT INTO milestones (product_id, name, sort_key) VALUES (?, ?, 10)",
          (product_id, milestone))
    return product_id


def hide_product(services, product_id):
    group_id = write(services, "INSERT INTO groups (name, description) VALUES ('insiders', 's')")
    write(services, "INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                    " othercontrol) VALUES (?, ?, 1, 3, 3)", (group_id, product_id))


def get_fields(services, params=None, as_user=None):
    return services.call(field.fields, params or {}, as_user=as_user, write=False)["fields"]


def by_name(fields):
    return {f["name"]: f for f in fields}


def one_field(services, name, as_user=None):
    return get_fields(services, {"names": [name]}, as_user=as_user)[0]


def error_code(services, function, params, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user, write=function is not field.fields)
    return caught.value.code


def create(services, as_user=ADMIN, **params):
    values = {"name": "cf_colour", "display_name": "Colour", "type": 2}
    values.update(params)
    return services.call(field.create, values, as_user=as_user)["id"]


def legal(services, field_name, product_id=None, as_user=None):
    params = {"field": field_name}
    if product_id is not None:
        params["product_id"] = product_id
    return services.call(field.legal_values, params, as_user=as_user, write=False)["values"]


def value_names(field_object):
    return [v["name"] for v in field_object["values"]]


@pytest.fixture
def plain(services):
    return services.add_user("plain@example.com")


# Standard fields ------------------------------------------------------------------

def test_field_list_over_http_uses_the_key_fields_and_internal_names(client):
    resp = client.simulate_get("/rest/field/bug")
    assert resp.status_code == 200
    assert list(resp.json) == ["fields"]
    fields = by_name(resp.json["fields"])
    assert {"bug_status", "short_desc", "rep_platform", "bug_severity", "bug_file_loc",
            "status_whiteboard", "dependson", "blocked", "reporter", "creation_ts", "delta_ts",
            "bug_group"} <= set(fields)
    assert "status" not in fields and "summary" not in fields


def test_standard_field_types_and_flags(services):
    fields = by_name(get_fields(services))
    assert {name for name, f in fields.items() if f["type"] == 2} == {
        "classification", "product", "rep_platform", "op_sys", "bug_status", "resolution",
        "bug_severity", "priority", "component"}
    assert {name for name, f in fields.items() if f["type"] == 8} == {"keywords", "tag"}
    assert fields["see_also"]["type"] == 7 and fields["deadline"]["type"] == 5
    assert fields["version"]["type"] == 0 and fields["assigned_to"]["type"] == 0
    assert {name for name, f in fields.items() if f["is_mandatory"]} == STANDARD_MANDATORY
    assert not any(f["is_custom"] or f["is_on_bug_entry"] for f in fields.values())
    summary = fields["short_desc"]
    assert summary == {"id": summary["id"], "type": 0, "is_custom": False, "name": "short_desc",
                       "display_name": "Summary", "is_mandatory": True,
                       "is_on_bug_entry": False, "visibility_field": None,
                       "visibility_values": []}


def test_values_are_present_only_for_select_and_per_product_fields(services):
    fields = by_name(get_fields(services))
    assert {name for name, f in fields.items() if "values" in f} == VALUE_FIELDS
    assert {name for name, f in fields.items() if "value_field" in f} == VALUE_FIELDS
    assert "values" not in fields["product"]
    for name in ("component", "version", "target_milestone"):
        assert fields[name]["value_field"] == "product"
    assert fields["priority"]["value_field"] is None


def test_bug_status_values_start_with_the_new_bug_pseudo_status(services):
    values = one_field(services, "bug_status")["values"]
    assert [v["name"] for v in values] == ["", "UNCONFIRMED", "CONFIRMED", "IN_PROGRESS",
                                           "RESOLVED", "VERIFIED"]
    assert values[0] == {"name": "", "is_open": True, "sort_key": 0, "sortkey": 0,
                         "visibility_values": [], "can_change_to": [
                             {"name": "UNCONFIRMED", "comment_required": False},
                             {"name": "CONFIRMED", "comment_required": False},
                             {"name": "IN_PROGRESS", "comment_required": False}]}
    resolved = values[4]
    assert resolved["is_open"] is False and resolved["sort_key"] == resolved["sortkey"]
    assert [t["name"] for t in resolved["can_change_to"]] == ["UNCONFIRMED", "CONFIRMED",
                                                              "VERIFIED"]
    assert values[1]["is_open"] is True


def test_can_change_to_follows_the_workflow_and_its_comment_rule(services):
    status_id = dict(services.query("SELECT value, id FROM field_values WHERE field_id ="
                                    " (SELECT id FROM fields WHERE name = 'bug_status')"))
    write(services, "UPDATE status_workflow SET require_comment = 1 WHERE old_status_id = ?"
                    " AND new_status_id = ?", (status_id["CONFIRMED"], status_id["RESOLVED"]))
    write(services, "UPDATE field_values SET is_active = 0 WHERE id = ?",
          (status_id["IN_PROGRESS"],))
    confirmed = by_name_values(one_field(services, "bug_status"))["CONFIRMED"]
    assert confirmed["can_change_to"] == [{"name": "RESOLVED", "comment_required": True}]


def by_name_values(field_object):
    return {v["name"]: v for v in field_object["values"]}


def test_resolution_lists_the_empty_value_first_and_plain_select_keys(services):
    values = one_field(services, "resolution")["values"]
    assert values[0]["name"] == ""
    assert [v["name"] for v in values[1:]] == ["FIXED", "INVALID", "WONTFIX", "DUPLICATE",
                                               "WORKSFORME"]
    assert set(values[1]) == {"name", "sort_key", "sortkey", "visibility_values"}


def test_keyword_values_carry_name_and_description_only(services):
    write(services, "INSERT INTO keywords (name, description) VALUES ('regression', 'It broke')")
    assert one_field(services, "keywords")["values"] == [
        {"name": "regression", "description": "It broke"}]


def test_per_product_values_list_each_visible_product(services, plain):
    secret = add_product(services, "Secret", component="Hidden", version="9.9", milestone="Z")
    add_product(services, "Open", component="Main", version="1.0", milestone="M1")
    hide_product(services, secret)
    fields = by_name(get_fields(services, {"names": ["component", "version", "target_milestone"]},
                                as_user=plain))
    components = fields["component"]["values"]
    assert {(v["name"], v["visibility_values"][0]) for v in components} == {
        ("Main", "Open"), ("TestComponent", "TestProduct")}
    main = [v for v in components if v["name"] == "Main"][0]
    assert main == {"name": "Main", "sort_key": 0, "sortkey": 0, "visibility_values": ["Open"],
                    "is_active": True}
    milestones = by_name_values(fields["target_milestone"])
    assert milestones["M1"]["sort_key"] == 10 and "Z" not in milestones
    assert "9.9" not in value_names(fields["version"])
    insider = services.add_user("insider@example.com", groups=("insiders",))
    assert "Hidden" in value_names(one_field(services, "component", as_user=insider))


def test_field_by_name_and_by_id_in_the_path(client, services):
    status = client.simulate_get("/rest/field/bug/bug_status").json["fields"]
    assert [f["name"] for f in status] == ["bug_status"]
    by_id = client.simulate_get(f"/rest/field/bug/{status[0]['id']}").json["fields"]
    assert by_id == status
    both = client.simulate_get("/rest/field/bug/priority", params={"names": ["op_sys", "priority"]})
    assert [f["name"] for f in both.json["fields"]] == ["priority", "op_sys"]


def test_unknown_field_is_51_with_404(client, services):
    resp = client.simulate_get("/rest/field/bug/no_such_field")
    assert (resp.status_code, resp.json["code"]) == (404, 51)
    assert client.simulate_get("/rest/field/bug/99999").json["code"] == 51


def test_include_fields_trims_field_objects(client):
    resp = client.simulate_get("/rest/field/bug/priority", params={"include_fields": "name,type"})
    assert resp.json == {"fields": [{"name": "priority", "type": 2}]}


def test_obsolete_fields_only_by_name(services):
    write(services, "UPDATE fields SET is_obsolete = 1 WHERE name = 'days_elapsed'")
    assert "days_elapsed" not in by_name(get_fields(services))
    assert one_field(services, "days_elapsed")["name"] == "days_elapsed"


# Legal values (deprecated) -----------------------------------------------------------

def test_legal_values_over_http(client, services):
    resp = client.simulate_get("/rest/field/bug/priority/values")
    assert resp.status_code == 200
    assert resp.json == {"values": ["Highest", "High", "Normal", "Low", "Lowest", "---"]}
    product_id = services.query("SELECT id FROM products WHERE name = 'TestProduct'")[0][0]
    per_product = client.simulate_get(f"/rest/field/bug/component/{product_id}/values")
    assert per_product.json == {"values": ["TestComponent"]}


def test_legal_values_accept_bug_object_names_and_skip_inactive_values(services):
    write(services, "UPDATE field_values SET is_active = 0 WHERE value = 'VERIFIED'")
    assert legal(services, "status") == ["UNCONFIRMED", "CONFIRMED", "IN_PROGRESS", "RESOLVED"]
    assert legal(services, "resolution")[0] == ""


def test_legal_values_of_product_fields(services):
    product_id = add_product(services, "Open", component="Main", version="2.0", milestone="M1")
    write(services, "INSERT INTO versions (product_id, name) VALUES (?, '10.0')", (product_id,))
    assert legal(services, "version", product_id) == ["2.0", "10.0"]
    assert legal(services, "target_milestone", str(product_id)) == ["M1"]
    assert legal(services, "component", product_id) == ["Main"]


@pytest.mark.parametrize("params, code, status", [
    ({"field": "component"}, 50, 400),
    ({"field": "component", "product_id": 999}, 106, 401),
    ({"field": "no_such_field"}, 108, 400),
    ({"field": "short_desc"}, 108, 400),
    ({"field": "product"}, 108, 400),
])
def test_legal_values_errors(services, params, code, status):
    with pytest.raises(ServiceError) as caught:
        services.call(field.legal_values, params, write=False)
    assert (caught.value.code, caught.value.status) == (code, status)


def test_legal_values_of_a_hidden_product_are_refused_to_outsiders(services, plain):
    secret = add_product(services, "Secret")
    hide_product(services, secret)
    with pytest.raises(ServiceError) as caught:
        legal(services, "version", secret, as_user=plain)
    assert caught.value.code == 106
    insider = services.add_user("insider@example.com", groups=("insiders",))
    assert legal(services, "version", secret, as_user=insider) == ["1.0"]


# Custom fields: create ---------------------------------------------------------------

@freeze_time("2026-02-03 04:05:06")
def test_create_select_field_over_http_starts_with_the_default_value(client, admin_key, services):
    resp = client.simulate_post("/rest/field/bug", params={"Bugzilla_api_key": admin_key},
                                json={"name": "cf_colour", "display_name": "Colour", "type": 2,
                                      "values": ["red", "green"], "is_on_bug_entry": True})
    assert resp.status_code == 201
    created = one_field(services, "cf_colour")
    assert created["id"] == resp.json["id"]
    assert created["is_custom"] is True and created["is_on_bug_entry"] is True
    assert created["is_mandatory"] is False and created["value_field"] is None
    assert [(v["name"], v["is_active"]) for v in created["values"]] == [
        ("---", True), ("red", True), ("green", True)]
    assert legal(services, "cf_colour") == ["---", "red", "green"]
    audit = services.call(instance.last_audit_time, {"class": ["Bugzilla::Field"]}, write=False)
    assert audit == {"last_audit_time": "2026-02-03T04:05:06Z"}


def test_new_fields_come_last_in_the_list(services):
    create(services, name="cf_notes", type=4, display_name="Notes")
    listed = get_fields(services)
    assert listed[-1]["name"] == "cf_notes"
    assert "values" not in listed[-1] and "value_field" not in listed[-1]
    assert listed[-1]["type"] == 4


def test_create_refuses_anonymous_plain_and_editcomponents_callers(client, services):
    services.add_user("editor@example.com", groups=("editcomponents",))
    body = {"name": "cf_colour", "display_name": "Colour", "type": 2}
    anonymous = client.simulate_post("/rest/field/bug", json=body)
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    for login in ("plain@example.com", "editor@example.com"):
        if login == "plain@example.com":
            services.add_user(login)
        key = services.api_key(login)
        refused = client.simulate_post("/rest/field/bug", params={"Bugzilla_api_key": key},
                                       json=body)
        assert (refused.status_code, refused.json["code"]) == (401, 304)
    assert services.query("SELECT COUNT(*) FROM fields WHERE is_custom = 1")[0][0] == 0


@pytest.mark.parametrize("params, code", [
    ({"name": None}, 50),
    ({"display_name": "  "}, 50),
    ({"type": None}, 50),
    ({"name": "colour"}, 32000),
    ({"name": "cf_col our"}, 32000),
    ({"name": "cf_" + "x" * 62}, 32000),
    ({"name": "cf_colour", "type": 11}, 32000),
    ({"type": 0}, 32000),
    ({"type": "select"}, 52),
    ({"type": 1, "values": ["a"]}, 32000),
    ({"type": 1, "value_field": "priority"}, 32000),
    ({"visibility_field": "no_such_field"}, 51),
    ({"visibility_field": "short_desc"}, 32000),
    ({"visibility_field": "priority", "visibility_values": ["Urgent"]}, 51),
    ({"visibility_values": ["High"]}, 32000),
    ({"values": ["red", "red"]}, 32000),
    ({"values": ["x" * 65]}, 32000),
    ({"values": {"change": ["a"]}}, 53),
    ({"colour": "red"}, 53),
])
def test_create_rejects_invalid_definitions_and_stores_nothing(services, params, code):
    values = {"name": "cf_colour", "display_name": "Colour", "type": 2}
    values.update(params)
    assert error_code(services, field.create, values) == code
    assert services.query("SELECT COUNT(*) FROM fields WHERE is_custom = 1")[0][0] == 0
    assert services.query("SELECT COUNT(*) FROM field_values WHERE value = '---'")[0][0] == 1


def test_create_refuses_a_name_in_use(services):
    create(services)
    assert error_code(services, field.create, {"name": "CF_Colour", "display_name": "C",
                                               "type": 1}) == 32000


def test_visibility_field_and_values(services):
    create(services, name="cf_browser", visibility_field="product",
           visibility_values=["TestProduct"], type=1, display_name="Browser")
    created = one_field(services, "cf_browser")
    assert created["visibility_field"] == "product"
    assert created["visibility_values"] == ["TestProduct"]


def test_value_field_gives_each_value_its_controlling_value(services):
    create(services, name="cf_os_detail", value_field="op_sys",
           values=[{"name": "Ubuntu", "visibility_value": "Linux"}, "Any"])
    created = one_field(services, "cf_os_detail")
    assert created["value_field"] == "op_sys"
    assert by_name_values(created)["Ubuntu"]["visibility_values"] == ["Linux"]
    assert by_name_values(created)["Any"]["visibility_values"] == []


def test_product_controlled_values_are_hidden_with_their_product(services, plain):
    secret = add_product(services, "Secret")
    hide_product(services, secret)
    create(services, name="cf_team", value_field="product",
           values=[{"name": "spies", "visibility_value": "Secret"},
                   {"name": "testers", "visibility_value": "TestProduct"}])
    assert value_names(one_field(services, "cf_team", as_user=plain)) == ["---", "testers"]
    insider = services.add_user("insider@example.com", groups=("insiders",))
    assert value_names(one_field(services, "cf_team", as_user=insider)) == ["---", "spies",
                                                                            "testers"]


# Custom fields: update -----------------------------------------------------------------

def add_bug_value(services, field_id, value):
    owner = admin_id(services)
    product_id, component_id = services.query("SELECT product_id, id FROM components LIMIT 1")[0]
    bug_id = write(services, "INSERT INTO bugs (product_id, component_id, version, summary, status,"
                             " priority, severity, platform, op_sys, assigned_to, reporter,"
                             " creation_time, last_change_time) VALUES (?, ?, 'unspecified', 's',"
                             " 'CONFIRMED', '---', 'normal', 'All', 'All', ?, ?, 'x', 'x')",
                   (product_id, component_id, owner, owner))
    write(services, "INSERT INTO bug_custom_values (bug_id, field_id, value) VALUES (?, ?, ?)",
          (bug_id, field_id, value))


@freeze_time("2026-09-10 11:12:13")
def test_update_over_http_reports_changes(client, admin_key, services):
    field_id = create(services, values=["red"])
    resp = client.simulate_put("/rest/field/bug/cf_colour", params={"Bugzilla_api_key": admin_key},
                               json={"display_name": "Color", "is_mandatory": True,
                                     "values": {"add": ["blue"]}})
    assert resp.status_code == 200
    assert resp.json == {"fields": [{"id": field_id, "changes": {
        "display_name": {"removed": "Colour", "added": "Color"},
        "is_mandatory": {"removed": "0", "added": "1"},
        "values": {"removed": "", "added": "blue"}}}]}
    updated = one_field(services, "cf_colour")
    assert updated["display_name"] == "Color" and updated["is_mandatory"] is True
    assert value_names(updated) == ["---", "red", "blue"]
    audit = services.query("SELECT field, removed, added, at_time FROM audit_log"
                           " WHERE class = 'Bugzilla::Field' AND field = 'display_name'")
    assert audit == [("display_name", "Colour", "Color", "2026-09-10 11:12:13")]


def test_removing_a_value_bugs_still_use_deactivates_it(services):
    field_id = create(services, values=["red", "green", "blue"])
    add_bug_value(services, field_id, "red")
    result = services.call(field.update, {"ids": [field_id],
                                          "values": {"remove": ["red", "green"]}}, as_user=ADMIN)
    assert result["fields"][0]["changes"]["values"] == {"added": "", "removed": "red, green"}
    assert [(v["name"], v["is_active"]) for v in one_field(services, "cf_colour")["values"]] == [
        ("---", True), ("red", False), ("blue", True)]
    assert legal(services, "cf_colour") == ["---", "blue"]
    services.call(field.update, {"ids": [field_id], "values": {"add": ["red"]}}, as_user=ADMIN)
    assert legal(services, "cf_colour") == ["---", "red", "blue"]


@pytest.mark.parametrize("params, code", [
    ({"values": {"remove": ["---"]}}, 32000),
    ({"values": {"remove": ["purple"]}}, 51),
    ({"values": {"add": ["red"]}}, 32000),
    ({"name": "cf_other"}, 32000),
    ({"type": 3}, 32000),
    ({"display_name": ""}, 50),
    ({"visibility_field": "nothing"}, 51),
    ({"value_field": "cf_colour"}, 32000),
    ({"sort_key": -1}, 55),
    ({"shade": "dark"}, 53),
])
def test_update_errors_change_nothing(services, params, code):
    field_id = create(services, values=["red"])
    before = one_field(services, "cf_colour")
    values = {"ids": [field_id]}
    values.update(params)
    assert error_code(services, field.update, values) == code
    assert one_field(services, "cf_colour") == before


def test_update_needs_a_custom_field_and_identifiers(services):
    assert error_code(services, field.update, {"display_name": "x"}) == 50
    assert error_code(services, field.update, {"names": ["priority"], "display_name": "P"}) == 32000
    assert error_code(services, field.update, {"names": ["cf_nothing"], "display_name": "P"}) == 51


def test_update_refuses_anonymous_and_plain_callers_over_http(client, services, plain):
    create(services)
    key = services.api_key("plain@example.com")
    anonymous = client.simulate_put("/rest/field/bug/cf_colour", json={"display_name": "x"})
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    refused = client.simulate_put("/rest/field/bug/cf_colour", params={"Bugzilla_api_key": key},
                                  json={"display_name": "x"})
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    assert one_field(services, "cf_colour")["display_name"] == "Colour"


def test_update_visibility_settings(services):
    field_id = create(services, name="cf_notes", type=1, display_name="Notes")
    result = services.call(field.update, {"ids": [field_id], "visibility_field": "priority",
                                          "visibility_values": ["High", "Highest"]}, as_user=ADMIN)
    assert result["fields"][0]["changes"] == {
        "visibility_field": {"removed": "", "added": "priority"},
        "visibility_values": {"removed": "", "added": "Highest, High"}}
    assert one_field(services, "cf_notes")["visibility_values"] == ["Highest", "High"]
    cleared = services.call(field.update, {"ids": [field_id], "visibility_field": None},
                            as_user=ADMIN)
    assert cleared["fields"][0]["changes"]["visibility_field"] == {"removed": "priority",
                                                                   "added": ""}
    assert one_field(services, "cf_notes")["visibility_values"] == []


def test_a_value_controlling_another_field_cannot_be_removed(services):
    create(services, values=["red"])
    create(services, name="cf_shade", type=1, display_name="Shade",
           visibility_field="cf_colour", visibility_values=["red"])
    assert error_code(services, field.update, {"names": ["cf_colour"],
                                               "values": {"remove": ["red"]}}) == 32000


def test_obsoleting_hides_a_field_from_the_list(services):
    field_id = create(services)
    services.call(field.update, {"ids": [field_id], "is_obsolete": True}, as_user=ADMIN)
    assert "cf_colour" not in by_name(get_fields(services))
