"""include_fields / exclude_fields: the reference's rules in the order it
applies them (the steps below: type switches, then named fields with exclude
over include, then _all, then _default/_custom/_extra, then subfields), as unit
tests of bugsvc.call.fields, and through HTTP on groups."""

import pytest

from accounts import ADMIN
from bugsvc.call.fields import FieldFilter, Shape, apply, filter_object
from bugsvc.services import group


DEFAULT, CUSTOM, EXTRA = ("default",), ("default", "custom"), ("extra",)


def kept(flt, names_and_types, prefix=None):
    """The names `flt` wants out of [(name, types)]."""
    shape = Shape(types=dict(names_and_types))
    return [name for name, _ in names_and_types if flt.wants(name, shape, prefix)]


FIELDS = [("id", DEFAULT), ("summary", DEFAULT), ("cf_colour", CUSTOM), ("tags", EXTRA)]


# Input forms -------------------------------------------------------------------

@pytest.mark.parametrize("include", ["id,summary", "id summary", "id+summary", " id , summary ",
                                     ["id", "summary"], ["id,summary"], ["id", "summary,"]])
def test_names_are_split_on_commas_whitespace_and_plus_also_inside_arrays(include):
    assert kept(FieldFilter(include), FIELDS) == ["id", "summary"]


def test_names_are_case_sensitive_and_non_strings_ignored():
    assert kept(FieldFilter("ID,Summary"), FIELDS) == []
    assert kept(FieldFilter([1, None, {"a": 1}, "id"]), FIELDS) == ["id"]


def test_no_choice_means_default_fields_and_an_inactive_filter():
    flt = FieldFilter()
    assert kept(flt, FIELDS) == ["id", "summary", "cf_colour"]
    assert not flt.active
    assert not FieldFilter("", []).active


# Step 1 and 2: type switches; defaults only when include names nothing -------------

def test_underscore_names_are_type_switches_not_field_names():
    flt = FieldFilter("_extra,id")
    assert "_extra" not in flt.include and "extra" in flt.include_types
    assert kept(flt, FIELDS + [("_extra", DEFAULT)]) == ["id", "tags"]


def test_include_with_only_a_type_switch_does_not_switch_on_defaults():
    # As the reference's filter_wants: the default type is switched on only
    # when include_fields is empty before the `_x` entries are taken out.
    assert kept(FieldFilter("_extra"), FIELDS) == ["tags"]
    assert kept(FieldFilter("_custom"), FIELDS) == ["cf_colour"]
    assert kept(FieldFilter("_default,_extra"), FIELDS) == ["id", "summary", "cf_colour", "tags"]


def test_empty_include_with_exclude_keeps_defaults():
    assert kept(FieldFilter(None, "summary"), FIELDS) == ["id", "cf_colour"]


# Step 3 and 4: explicit names; exclude beats include ---------------------------------

def test_include_keeps_only_named_fields_even_without_id():
    assert kept(FieldFilter("summary"), FIELDS) == ["summary"]


def test_include_names_an_extra_field():
    assert kept(FieldFilter("tags"), FIELDS) == ["tags"]


def test_exclude_beats_include():
    assert kept(FieldFilter("id,summary", "summary"), FIELDS) == ["id"]
    assert kept(FieldFilter("_all", "id"), FIELDS) == ["summary", "cf_colour", "tags"]


def test_explicit_include_beats_type_exclusions():
    assert kept(FieldFilter("summary", "_all"), FIELDS) == ["summary"]
    assert kept(FieldFilter("summary,cf_colour", "_default"), FIELDS) == ["summary", "cf_colour"]


def test_unknown_names_are_ignored():
    assert kept(FieldFilter("id,no_such_field", "also_unknown"), FIELDS) == ["id"]
    assert kept(FieldFilter("no_such_field"), FIELDS) == []


# Step 5: _all ------------------------------------------------------------------------

def test_all_in_include_keeps_every_field_including_extra():
    assert kept(FieldFilter("_all"), FIELDS) == ["id", "summary", "cf_colour", "tags"]


def test_all_in_exclude_drops_every_field_not_named():
    assert kept(FieldFilter(None, "_all"), FIELDS) == []
    assert kept(FieldFilter("_all", "_all"), FIELDS) == []


# Step 6: _default, _custom, _extra --------------------------------------------------

def test_excluding_custom_drops_custom_fields_only():
    assert kept(FieldFilter(None, "_custom"), FIELDS) == ["id", "summary"]


def test_excluding_default_drops_default_fields():
    assert kept(FieldFilter(None, "_default"), FIELDS) == []
    assert kept(FieldFilter("_extra", "_default"), FIELDS) == ["tags"]


def test_an_excluded_type_beats_an_included_type():
    assert kept(FieldFilter("_default", "_custom"), FIELDS) == ["id", "summary"]


def test_named_field_plus_extra_type():
    assert kept(FieldFilter("id,_extra"), FIELDS) == ["id", "tags"]


# Step 7 and 8: subfields -----------------------------------------------------------

def test_top_level_field_is_kept_when_a_subfield_is_named():
    flt = FieldFilter("components.name")
    assert flt.wants("components") and not flt.wants("versions")
    assert flt.wants("name", prefix="components") and not flt.wants("id", prefix="components")


def test_subfields_follow_their_named_parent_unless_excluded():
    flt = FieldFilter("components", "components.description")
    assert flt.wants("id", prefix="components") and flt.wants("name", prefix="components")
    assert not flt.wants("description", prefix="components")


def test_subfields_without_a_choice_follow_defaults():
    assert FieldFilter().wants("name", prefix="components")
    assert not FieldFilter("id").wants("name", prefix="components")


def test_a_prefix_is_not_a_substring_match():
    assert not FieldFilter("components_extra").wants("components")
    assert not FieldFilter("comp.name").wants("components")


# Objects: filter_object and apply ---------------------------------------------------

PRODUCT_SHAPE = Shape(children={"components": Shape()})


def product():
    return {"id": 1, "name": "P", "description": "d",
            "components": [{"id": 10, "name": "C1", "flag_types": {"bug": [], "attachment": []}},
                           {"id": 11, "name": "C2", "flag_types": {"bug": [], "attachment": []}}]}


def test_subfield_include_returns_only_that_subfield():
    result = {"products": [product()]}
    apply(result, {"products": PRODUCT_SHAPE}, FieldFilter("components.name"))
    assert result == {"products": [{"components": [{"name": "C1"}, {"name": "C2"}]}]}


def test_a_subfield_holding_objects_is_returned_whole():
    result = {"products": [product()]}
    apply(result, {"products": PRODUCT_SHAPE}, FieldFilter("id,components.flag_types"))
    flag_types = {"bug": [], "attachment": []}
    assert result == {"products": [{"id": 1, "components": [{"flag_types": flag_types},
                                                            {"flag_types": flag_types}]}]}


def test_deeper_names_do_not_reach_below_a_subfield():
    # Step 7: a subfield is kept when its prefix is named, never by a longer name.
    result = {"products": [product()]}
    apply(result, {"products": PRODUCT_SHAPE}, FieldFilter("components.flag_types.bug"))
    assert result == {"products": [{"components": [{}, {}]}]}


def test_exclude_a_subfield_keeps_the_rest():
    result = {"products": [product()]}
    apply(result, {"products": PRODUCT_SHAPE}, FieldFilter(None, "components.flag_types,name"))
    assert result["products"][0] == {"id": 1, "description": "d",
                                     "components": [{"id": 10, "name": "C1"},
                                                    {"id": 11, "name": "C2"}]}


def test_shape_types_custom_prefix_and_follows():
    shape = Shape(types={"tags": EXTRA}, custom_prefix="cf_",
                  follows={"assigned_to_detail": "assigned_to"},
                  children={"assigned_to_detail": Shape()})
    bug = {"id": 1, "tags": ["t"], "cf_colour": "red", "assigned_to": "a@x",
           "assigned_to_detail": {"id": 5, "name": "a@x"}}
    plain = dict(bug, assigned_to_detail=dict(bug["assigned_to_detail"]))
    filter_object(plain, shape, FieldFilter())
    assert set(plain) == {"id", "cf_colour", "assigned_to", "assigned_to_detail"}
    no_custom = dict(bug)
    filter_object(no_custom, shape, FieldFilter(None, "_custom"))
    assert "cf_colour" not in no_custom and "id" in no_custom
    detail_by_base = dict(bug, assigned_to_detail=dict(bug["assigned_to_detail"]))
    filter_object(detail_by_base, shape, FieldFilter("assigned_to.id"))
    assert detail_by_base == {"assigned_to": "a@x", "assigned_to_detail": {"id": 5}}
    detail_name = dict(bug)
    filter_object(detail_name, shape, FieldFilter("assigned_to_detail"))
    assert detail_name == {}


def test_apply_walks_star_paths_and_leaves_other_parts_alone():
    result = {"bugs": {"7": {"comments": [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]}},
              "comments": {"3": {"id": 3, "text": "c"}}, "other": {"id": 9, "text": "x"}}
    apply(result, {"bugs.*.comments": Shape(), "comments.*": Shape()}, FieldFilter("id"))
    assert result == {"bugs": {"7": {"comments": [{"id": 1}, {"id": 2}]}},
                      "comments": {"3": {"id": 3}}, "other": {"id": 9, "text": "x"}}


def test_apply_without_a_choice_or_on_non_objects_changes_nothing():
    result = {"products": [product()]}
    assert apply(result, {"products": PRODUCT_SHAPE}, FieldFilter()) == {"products": [product()]}
    assert apply(True, {"*": Shape()}, FieldFilter("id")) is True


def test_apply_walks_an_answer_that_is_a_list_of_objects():
    assert apply([{"id": 1, "x": 2}], {"*": Shape()}, FieldFilter("id")) == [{"id": 1}]


# Through HTTP on groups ------------------------------------------------------------------

@pytest.fixture
def get_groups(client, admin_key):
    def call(query):
        resp = client.simulate_get("/rest/group",
                                   query_string=f"names=admin&names=editbugs&{query}"
                                                f"&Bugzilla_api_key={admin_key}")
        assert resp.status_code == 200, resp.text
        return resp.json["groups"]
    return call


def test_http_include_fields_string_and_repeated_keys(get_groups):
    assert get_groups("include_fields=name") == [{"name": "admin"}, {"name": "editbugs"}]
    assert get_groups("include_fields=id&include_fields=name") == [
        {"id": 1, "name": "admin"}, {"id": 8, "name": "editbugs"}]
    assert get_groups("include_fields=id,name,bogus")[0] == {"id": 1, "name": "admin"}


def test_http_exclude_fields_and_exclude_beats_include(get_groups):
    assert set(get_groups("exclude_fields=description,user_regexp")[0]) == {
        "id", "name", "is_active", "is_bug_group"}
    assert get_groups("include_fields=id,name&exclude_fields=name") == [{"id": 1}, {"id": 8}]


def test_http_membership_subfields(get_groups):
    only_logins = get_groups("membership=1&include_fields=name,membership.name")
    assert only_logins[0] == {"name": "admin", "membership": [{"name": ADMIN}]}
    no_ids = get_groups("membership=1&exclude_fields=membership.id,membership.email")
    assert "id" in no_ids[0] and "id" not in no_ids[0]["membership"][0]
    assert "email" not in no_ids[0]["membership"][0] and "real_name" in no_ids[0]["membership"][0]
    whole = get_groups("membership=1&include_fields=membership")
    assert set(whole[0]) == {"membership"}
    assert set(whole[0]["membership"][0]) == {"id", "real_name", "name", "email", "can_login",
                                              "email_enabled", "login_denied_text"}


def test_http_type_switches(get_groups):
    assert get_groups("exclude_fields=_default") == [{}, {}]
    assert set(get_groups("include_fields=_all")[0]) == {
        "id", "name", "description", "is_active", "is_bug_group", "user_regexp"}


def test_http_include_and_exclude_on_users(client, admin_key):
    def users(query):
        resp = client.simulate_get("/rest/user", query_string=f"names={ADMIN}&{query}"
                                                              f"&Bugzilla_api_key={admin_key}")
        assert resp.status_code == 200, resp.text
        return resp.json["users"]
    assert users("include_fields=id,name") == [{"id": 1, "name": ADMIN}]
    assert users("include_fields=name&include_fields=real_name") == [
        {"name": ADMIN, "real_name": "Administrator"}]
    full = users("")[0]
    trimmed = users("exclude_fields=groups,email")[0]
    assert "groups" in full and "email" in full
    assert set(trimmed) == set(full) - {"groups", "email"}
    assert users("include_fields=id,email&exclude_fields=email") == [{"id": 1}]


def test_filtering_never_widens_what_the_caller_may_see(client, services):
    services.call(group.create, {"name": "blessed", "description": "d"}, as_user=ADMIN)
    services.add_user("blesser@example.com", bless=("blessed",))
    key = services.api_key("blesser@example.com")
    resp = client.simulate_get("/rest/group", query_string=f"include_fields=_all,user_regexp"
                                                           f"&Bugzilla_api_key={key}")
    assert resp.json == {"groups": [{"id": 15, "name": "blessed", "description": "d"}]}
