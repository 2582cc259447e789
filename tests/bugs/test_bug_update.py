"""PUT /rest/bug/{id_or_alias}: every parameter, the status/resolution/duplicate
rules, field permissions and the `changes` answer."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bug_support import (
    ADMIN,
    DEFAULT,
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    add_custom_field,
    add_keyword,
    add_to_group,
    comments_of,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    history_of,
    set_param,
    update_bug,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service


JAN = datetime(2026, 1, 1, tzinfo=timezone.utc)


def update_error(services, bug_id, as_user=ADMIN, **params):
    params.setdefault("ids", [bug_id])
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.update, params, as_user=as_user)
    return caught.value.code


def snapshot(services):
    """Everything stored about bugs, to prove a failed update changed nothing."""
    tables = ("bugs", "bug_aliases", "bug_cc", "bug_keywords", "dependencies", "bug_groups",
              "bug_see_also", "bug_custom_values", "comments", "bug_activity", "flags")
    return {table: services.table(table) for table in tables}


# Through HTTP ---------------------------------------------------------------------------

@freeze_time("2026-04-05 06:07:08")
def test_update_over_http(client, services, admin_key):
    bug_id = file_bug(services, now=JAN, alias="abc")
    resp = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                               json={"summary": "New summary", "priority": "High"})
    assert resp.status_code == 200
    assert resp.json == {"bugs": [{
        "id": bug_id, "alias": ["abc"], "last_change_time": "2026-04-05T06:07:08Z",
        "changes": {"summary": {"removed": "Something is broken", "added": "New summary"},
                    "priority": {"removed": "---", "added": "High"}}}]}


def test_update_without_login_is_410(client, services):
    bug_id = file_bug(services)
    resp = client.simulate_put(f"/rest/bug/{bug_id}", json={"summary": "x"})
    assert (resp.status_code, resp.json["code"]) == (401, 410)


def test_body_ids_replace_the_path_value(client, services, admin_key):
    first, second, third = (file_bug(services) for _ in range(3))
    resp = client.simulate_put(f"/rest/bug/{first}", params={"Bugzilla_api_key": admin_key},
                               json={"ids": [second, third], "whiteboard": "w"})
    assert [b["id"] for b in resp.json["bugs"]] == [second, third]
    assert get_bug(services, first)["whiteboard"] == ""


def test_no_change_keeps_last_change_time(services):
    bug_id = file_bug(services, now=JAN)
    result = update_bug(services, bug_id, summary="Something is broken", unknown_key="ignored")
    assert result["changes"] == {}
    assert result["last_change_time"] == "2026-01-01T00:00:00Z"


def test_unknown_bug_is_101_and_bad_alias_100(services):
    assert update_error(services, 999, summary="x") == 101
    assert update_error(services, "nope", summary="x") == 100


def test_canedit_group_is_109(services):
    group = add_bug_group(services, "editors")
    bug_id = file_bug(services)
    control(services, group, SHOWN, SHOWN, canedit=1)
    services.add_user("plain@example.com")
    assert update_error(services, bug_id, as_user="plain@example.com", summary="x") == 109
    assert update_bug(services, bug_id, summary="x")["changes"]


# Plain fields --------------------------------------------------------------------------

def test_scalar_fields_changes_and_history(services):
    add_keyword(services, "kw")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO versions (product_id, name) VALUES (1, '2.0')")
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M1', 10)")
    bug_id = file_bug(services, now=JAN)
    changes = update_bug(services, bug_id, platform="All", op_sys="Windows", severity="major",
                         url="http://example.com", whiteboard="wb", version="2.0",
                         target_milestone="M1", deadline="2026-12-24", estimated_time=3,
                         remaining_time=2.5, is_cc_accessible=False,
                         is_creator_accessible=0)["changes"]
    assert changes == {
        "platform": {"removed": "PC", "added": "All"},
        "op_sys": {"removed": "Linux", "added": "Windows"},
        "severity": {"removed": "enhancement", "added": "major"},
        "url": {"removed": "", "added": "http://example.com"},
        "whiteboard": {"removed": "", "added": "wb"},
        "version": {"removed": "unspecified", "added": "2.0"},
        "target_milestone": {"removed": "---", "added": "M1"},
        "deadline": {"removed": "", "added": "2026-12-24"},
        "estimated_time": {"removed": "0.00", "added": "3.00"},
        "remaining_time": {"removed": "0.00", "added": "2.50"},
        "is_cc_accessible": {"removed": "1", "added": "0"},
        "is_creator_accessible": {"removed": "1", "added": "0"},
    }
    (entry,) = history_of(services, bug_id)
    assert {c["field_name"]: (c["removed"], c["added"]) for c in entry["changes"]} == \
        {name: (c["removed"], c["added"]) for name, c in changes.items()}


@pytest.mark.parametrize("params, code", [
    ({"summary": ""}, 107),
    ({"summary": "y" * 256}, 104),
    ({"platform": "Amiga"}, 51),
    ({"version": "7"}, 51),
    ({"target_milestone": "M9"}, 51),
    ({"component": "Nope"}, 51),
    ({"deadline": "tomorrow"}, 56),
    ({"estimated_time": "x"}, 52),
    ({"assigned_to": ""}, 50),
    ({"assigned_to": "ghost@example.com"}, 51),
    ({"qa_contact": "ghost@example.com"}, 51),
    ({"cc": {"add": ["ghost@example.com"]}}, 51),
    ({"keywords": {"add": ["nosuch"]}}, 51),
    ({"product": "NoSuchProduct"}, 106),
    ({"status": "NOSUCH"}, 51),
    ({"resolution": "FIXED"}, 122),
    ({"resolution": ""}, 122),
    ({"status": "RESOLVED"}, 121),
    ({"status": "RESOLVED", "resolution": "DUPLICATE"}, 119),
    ({"status": "RESOLVED", "resolution": "NOSUCH"}, 51),
    ({"dupe_of": 999}, 101),
    ({"dupe_of": ""}, 50),
    ({"depends_on": {"add": [999]}}, 101),
    ({"blocks": {"add": ["nope"]}}, 100),
    ({"see_also": {"add": ["gopher://x"]}}, 112),
    ({"groups": {"add": ["nosuch"]}}, 120),
    ({"groups": {"remove": ["admin"]}}, 120),
    ({"comment_is_private": {"999": True}}, 117),
    ({"flags": [{"name": "nosuch", "status": "+"}]}, 51),
    ({"alias": "1234"}, 103),
])
def test_update_errors_change_nothing(services, params, code):
    bug_id = file_bug(services, now=JAN)
    before = snapshot(services)
    params = {"comment": {"body": "a comment"}, "summary": "changed", **params}
    assert update_error(services, bug_id, **params) == code
    assert snapshot(services) == before


def test_assignee_qa_contact_and_resets(services):
    set_param(services, "useqacontact", "1")
    dev = services.add_user("dev@example.com")
    services.add_user("qa@example.com")
    bug_id = file_bug(services)
    changes = update_bug(services, bug_id, assigned_to="dev@example.com",
                         qa_contact="qa@example.com")["changes"]
    assert changes["assigned_to"] == {"removed": ADMIN, "added": "dev@example.com"}
    assert changes["qa_contact"] == {"removed": "", "added": "qa@example.com"}
    assert update_bug(services, bug_id, qa_contact="")["changes"]["qa_contact"] == \
        {"removed": "qa@example.com", "added": ""}
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO components (product_id, name, description, default_assignee)"
                     " VALUES (1, 'Other', 'other', ?)", (dev,))
    bug_id = file_bug(services)
    changes = update_bug(services, bug_id, component="Other", reset_assigned_to=True)["changes"]
    assert changes["component"] == {"removed": "TestComponent", "added": "Other"}
    assert changes["assigned_to"] == {"removed": ADMIN, "added": "dev@example.com"}


def test_component_change_adds_its_default_cc(services):
    friend = services.add_user("friend@example.com")
    with services.db.transaction(write=True) as conn:
        component = conn.execute("INSERT INTO components (product_id, name, description,"
                                 " default_assignee) VALUES (1, 'Other', 'o', 1)").lastrowid
        conn.execute("INSERT INTO component_cc (component_id, user_id) VALUES (?, ?)",
                     (component, friend))
    bug_id = file_bug(services)
    changes = update_bug(services, bug_id, component="Other")["changes"]
    assert changes["cc"] == {"removed": "", "added": "friend@example.com"}


def test_product_move(services):
    dev = services.add_user("dev@example.com")
    with services.db.transaction(write=True) as conn:
        product = conn.execute("INSERT INTO products (name, classification_id, description,"
                               " default_milestone) VALUES ('Other', 1, 'o', 'rel')").lastrowid
        conn.execute("INSERT INTO components (product_id, name, description, default_assignee)"
                     " VALUES (?, 'Parts', 'p', ?)", (product, dev))
        conn.execute("INSERT INTO versions (product_id, name) VALUES (?, '5.0')", (product,))
        conn.execute("INSERT INTO milestones (product_id, name) VALUES (?, 'rel')", (product,))
    old_only = add_bug_group(services, "oldonly")
    new_mandatory = add_bug_group(services, "newmandatory")
    control(services, old_only, SHOWN, NA)
    control(services, new_mandatory, MANDATORY, MANDATORY, product="Other")
    bug_id = file_bug(services, groups=["oldonly"])
    assert update_error(services, bug_id, product="Other") == 51   # component not in Other
    changes = update_bug(services, bug_id, product="Other", component="Parts",
                         version="5.0")["changes"]
    assert changes["product"] == {"removed": "TestProduct", "added": "Other"}
    assert changes["component"] == {"removed": "TestComponent", "added": "Parts"}
    assert changes["version"] == {"removed": "unspecified", "added": "5.0"}
    assert changes["target_milestone"] == {"removed": "---", "added": "rel"}
    assert changes["groups"] == {"removed": "oldonly", "added": "newmandatory"}


# Status, resolution, duplicates ----------------------------------------------------------

def test_resolving_and_reopening(services):
    bug_id = file_bug(services, estimated_time=5)
    changes = update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")["changes"]
    assert changes["status"] == {"removed": "CONFIRMED", "added": "RESOLVED"}
    assert changes["resolution"] == {"removed": "", "added": "FIXED"}
    assert changes["remaining_time"] == {"removed": "5.00", "added": "0.00"}
    assert update_bug(services, bug_id, resolution="WONTFIX")["changes"] == \
        {"resolution": {"removed": "FIXED", "added": "WONTFIX"}}
    assert update_error(services, bug_id, resolution="") == 121
    assert update_error(services, bug_id, status="IN_PROGRESS") == 123
    changes = update_bug(services, bug_id, status="CONFIRMED", resolution="FIXED")["changes"]
    assert changes == {"status": {"removed": "RESOLVED", "added": "CONFIRMED"},
                       "resolution": {"removed": "WONTFIX", "added": ""}}


def test_status_transitions_follow_the_workflow(services):
    bug_id = file_bug(services, status="UNCONFIRMED")
    assert get_bug(services, bug_id)["is_confirmed"] is False
    changes = update_bug(services, bug_id, status="IN_PROGRESS")["changes"]
    assert changes["is_confirmed"] == {"removed": "0", "added": "1"}
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")
    update_bug(services, bug_id, status="VERIFIED")
    assert get_bug(services, bug_id)["resolution"] == "FIXED"
    assert update_error(services, bug_id, status="RESOLVED") == 123
    changes = update_bug(services, bug_id, status="UNCONFIRMED")["changes"]
    assert changes["is_confirmed"] == {"removed": "1", "added": "0"}


def test_unconfirmed_not_allowed_without_product_support(services):
    bug_id = file_bug(services)
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE products SET has_unconfirmed = 0")
    assert update_error(services, bug_id, status="UNCONFIRMED") == 123


@freeze_time("2026-06-07 08:09:10")
def test_marking_a_duplicate(services):
    services.add_user("reporter@example.com")
    original = file_bug(services)
    dupe = file_bug(services, as_user="reporter@example.com")
    changes = update_bug(services, dupe, dupe_of=original, comment={"body": "same thing"})
    assert changes["changes"] == {
        "status": {"removed": "CONFIRMED", "added": "RESOLVED"},
        "resolution": {"removed": "", "added": "DUPLICATE"},
        "dupe_of": {"removed": "", "added": str(original)}}
    assert get_bug(services, dupe)["dupe_of"] == original
    assert comments_of(services, dupe)[-1] == (1, ADMIN, "same thing", 0, 2, str(original))
    assert comments_of(services, original)[-1] == (1, ADMIN, "", 0, 3, str(dupe))
    target = get_bug(services, original)
    assert target["cc"] == ["reporter@example.com"]
    assert target["last_change_time"] == "2026-06-07T08:09:10Z"
    assert history_of(services, original)[-1]["changes"] == [
        {"field_name": "cc", "removed": "", "added": "reporter@example.com"}]
    fields = [c["field_name"] for c in history_of(services, dupe)[-1]["changes"]]
    assert "dupe_of" not in fields and "resolution" in fields
    # leaving DUPLICATE clears dupe_of
    changes = update_bug(services, dupe, resolution="FIXED")["changes"]
    assert changes["dupe_of"] == {"removed": str(original), "added": ""}


def test_duplicate_without_comment_gets_an_empty_marker_comment(services):
    original = file_bug(services)
    dupe = file_bug(services)
    update_bug(services, dupe, status="RESOLVED", resolution="DUPLICATE", dupe_of=original)
    assert comments_of(services, dupe)[-1] == (1, ADMIN, "", 0, 2, str(original))
    assert get_bug(services, original)["cc"] == []   # same reporter: not added


def test_duplicate_rules(services):
    first = file_bug(services)
    second = file_bug(services)
    third = file_bug(services)
    assert update_error(services, first, dupe_of=first) == 118
    update_bug(services, second, dupe_of=first)
    assert update_error(services, first, dupe_of=second) == 118
    assert update_error(services, third, ids=[third, first], dupe_of=second) == 32000
    update_bug(services, third, status="RESOLVED", resolution="FIXED")
    update_bug(services, third, status="VERIFIED")
    assert update_error(services, third, dupe_of=first) == 123
    set_param(services, "commentonduplicate", "1")
    fourth = file_bug(services)
    assert update_error(services, fourth, dupe_of=first) == 32000
    assert update_bug(services, fourth, dupe_of=first, comment={"comment": "dupe"})["changes"]


def test_open_status_ignores_resolution_and_dupe_of(services):
    first = file_bug(services)
    bug_id = file_bug(services)
    changes = update_bug(services, bug_id, status="IN_PROGRESS", resolution="FIXED",
                         dupe_of=first)["changes"]
    assert changes == {"status": {"removed": "CONFIRMED", "added": "IN_PROGRESS"}}


def test_resolution_parameters(services):
    set_param(services, "commentonchange_resolution", "1")
    bug_id = file_bug(services)
    assert update_error(services, bug_id, status="RESOLVED", resolution="FIXED") == 32000
    update_bug(services, bug_id, status="RESOLVED", resolution="FIXED", comment={"body": "ok"})
    set_param(services, "commentonchange_resolution", "0")
    set_param(services, "noresolveonopenblockers", "1")
    blocker = file_bug(services)
    blocked = file_bug(services, depends_on=[blocker])
    assert update_error(services, blocked, status="RESOLVED", resolution="FIXED") == 32000
    assert update_bug(services, blocked, status="RESOLVED", resolution="WONTFIX")["changes"]


def test_milestone_required_on_accept(services):
    set_param(services, "usetargetmilestone", "1")
    set_param(services, "musthavemilestoneonaccept", "1")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M1', 10)")
    bug_id = file_bug(services)
    assert update_error(services, bug_id, status="IN_PROGRESS") == 32000
    assert update_bug(services, bug_id, status="IN_PROGRESS", target_milestone="M1")["changes"]


def test_comment_required_by_the_workflow(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE status_workflow SET require_comment = 1")
    bug_id = file_bug(services)
    assert update_error(services, bug_id, status="IN_PROGRESS") == 32000
    assert update_bug(services, bug_id, status="IN_PROGRESS", comment={"body": "go"})["changes"]


# Field permissions ------------------------------------------------------------------------

@pytest.fixture
def roles(services):
    """A bug reported by `reporter`, assigned to `assignee`; `stranger` has no
    relation to it; nobody but the admin is in editbugs."""
    editbugs_only_for_members(services)
    for login in ("reporter", "assignee", "stranger"):
        services.add_user(f"{login}@example.com")
    bug_id = file_bug(services, as_user="reporter@example.com")
    update_bug(services, bug_id, assigned_to="assignee@example.com")
    return bug_id


def test_reporter_rights(services, roles):
    reporter = "reporter@example.com"
    assert update_bug(services, roles, as_user=reporter, summary="mine")["changes"]
    assert update_error(services, roles, as_user=reporter, assigned_to=ADMIN) == 115
    assert update_error(services, roles, as_user=reporter, status="CONFIRMED") == 123
    set_param(services, "letsubmitterchoosepriority", "0")
    assert update_error(services, roles, as_user=reporter, priority="High") == 115
    assert update_bug(services, roles, as_user=reporter, status="RESOLVED",
                      resolution="INVALID")["changes"]


def test_assignee_rights(services, roles):
    assignee = "assignee@example.com"
    assert update_error(services, roles, as_user=assignee, status="CONFIRMED") == 123
    changes = update_bug(services, roles, as_user=assignee, priority="High", status="RESOLVED",
                         resolution="FIXED", assigned_to=ADMIN)["changes"]
    assert set(changes) == {"priority", "status", "resolution", "assigned_to"}


def test_stranger_rights(services, roles):
    stranger = "stranger@example.com"
    assert update_error(services, roles, as_user=stranger, summary="theirs") == 115
    changes = update_bug(services, roles, as_user=stranger, comment={"body": "me too"},
                         cc={"add": [stranger]})["changes"]
    assert changes == {"cc": {"removed": "", "added": stranger}}
    assert update_error(services, roles, as_user=stranger,
                        cc={"remove": ["reporter@example.com"]}) == 32000
    update_bug(services, roles, cc={"add": ["reporter@example.com"]})
    assert update_bug(services, roles, as_user=stranger,
                      cc={"remove": [stranger]})["changes"]["cc"]["removed"] == stranger


def test_canconfirm_confirms(services, roles):
    services.add_user("confirmer@example.com", groups=("canconfirm",))
    update_bug(services, roles, as_user="assignee@example.com", status="UNCONFIRMED")
    assert update_error(services, roles, as_user="reporter@example.com",
                        status="CONFIRMED") == 123
    changes = update_bug(services, roles, as_user="confirmer@example.com",
                         status="CONFIRMED")["changes"]
    assert changes["is_confirmed"] == {"removed": "0", "added": "1"}


def test_time_fields_need_timetracking(services, roles):
    assignee = "assignee@example.com"
    for params in ({"estimated_time": 1}, {"remaining_time": 1}, {"deadline": "2026-01-01"},
                   {"work_time": 1, "comment": {"body": "x"}}):
        assert update_error(services, roles, as_user=assignee, **params) == 115
    add_to_group(services, assignee, "editbugs")
    assert update_bug(services, roles, as_user=assignee, estimated_time=1)["changes"]


def test_work_time_lowers_remaining_time(services):
    bug_id = file_bug(services, estimated_time=3)
    changes = update_bug(services, bug_id, work_time=1.25, comment={"body": "x"})["changes"]
    assert changes == {"remaining_time": {"removed": "3.00", "added": "1.75"}}
    changes = update_bug(services, bug_id, work_time=5)["changes"]
    assert changes == {"remaining_time": {"removed": "1.75", "added": "0.00"}}
    changes = update_bug(services, bug_id, work_time=1, remaining_time=4)["changes"]
    assert changes == {"remaining_time": {"removed": "0.00", "added": "4.00"}}
    fields = [c["field_name"] for e in history_of(services, bug_id) for c in e["changes"]]
    assert fields.count("work_time") == 3
    assert comments_of(services, bug_id)[2][2] == ""


# Aliases -----------------------------------------------------------------------------------

def test_alias_add_remove_set(services):
    bug_id = file_bug(services, alias=["a1"])
    assert update_bug(services, bug_id, alias={"add": ["a2"], "remove": ["a1"]})["changes"] == \
        {"alias": {"removed": "a1", "added": "a2"}}
    assert update_bug(services, bug_id, alias="a3")["alias"] == ["a3"]
    assert update_bug(services, bug_id, alias=["a4", "a5"])["alias"] == ["a4", "a5"]
    result = update_bug(services, bug_id, alias={"set": ["a6"], "add": ["ignored"]})
    assert result["alias"] == ["a6"]
    assert update_bug(services, bug_id, alias={"set": []})["alias"] == []


def test_alias_rules(services):
    first = file_bug(services, alias="taken")
    second = file_bug(services)
    assert update_error(services, second, alias={"add": ["Taken"]}) == 103
    assert update_error(services, second, ids=[first, second], alias={"add": ["x"]}) == 103
    assert update_bug(services, first, alias={"set": ["TAKEN"]})["alias"] == ["TAKEN"]


# Dependencies --------------------------------------------------------------------------------

@freeze_time("2026-03-03 03:03:03")
def test_dependencies_add_remove_set(services):
    a, b, c = (file_bug(services, now=JAN) for _ in range(3))
    bug_id = file_bug(services, now=JAN)
    changes = update_bug(services, bug_id, depends_on={"add": [a, b]}, blocks={"add": [c]})
    assert changes["changes"] == {"depends_on": {"removed": "", "added": f"{a}, {b}"},
                                  "blocks": {"removed": "", "added": str(c)}}
    assert get_bug(services, a)["blocks"] == [bug_id]
    assert get_bug(services, c)["depends_on"] == [bug_id]
    assert get_bug(services, c)["last_change_time"] == "2026-03-03T03:03:03Z"
    assert history_of(services, c)[-1]["changes"] == [
        {"field_name": "depends_on", "removed": "", "added": str(bug_id)}]
    changes = update_bug(services, bug_id, depends_on={"remove": [a]})["changes"]
    assert changes == {"depends_on": {"removed": str(a), "added": ""}}
    changes = update_bug(services, bug_id, depends_on={"set": [a], "add": [c]})["changes"]
    assert changes == {"depends_on": {"removed": str(b), "added": str(a)}}
    assert update_error(services, bug_id, depends_on={"add": [c]}) == 116
    assert update_error(services, bug_id, blocks={"add": [bug_id]}) == 116


def test_transitive_dependency_loop(services):
    a = file_bug(services)
    b = file_bug(services, depends_on=[a])
    c = file_bug(services, depends_on=[b])
    assert update_error(services, a, depends_on={"add": [c]}) == 116


# Keywords, cc, groups, see also -------------------------------------------------------------

def test_keywords_add_remove_set_in_that_order(services):
    for name in ("one", "two", "three"):
        add_keyword(services, name)
    bug_id = file_bug(services, keywords=["one"])
    changes = update_bug(services, bug_id, keywords={"add": ["two"], "remove": ["one"]})
    assert changes["changes"] == {"keywords": {"removed": "one", "added": "two"}}
    changes = update_bug(services, bug_id, keywords={"set": ["three"], "add": ["one"]})
    assert changes["changes"] == {"keywords": {"removed": "two", "added": "three"}}
    assert get_bug(services, bug_id)["keywords"] == ["three"]


def test_groups_add_and_remove(services):
    shown = add_bug_group(services, "shown")
    mandatory = add_bug_group(services, "mandatory")
    control(services, shown, SHOWN, NA)
    bug_id = file_bug(services)
    control(services, mandatory, MANDATORY, MANDATORY)
    assert update_bug(services, bug_id, groups={"add": ["shown"]})["changes"] == \
        {"groups": {"removed": "", "added": "shown"}}
    assert update_bug(services, bug_id, groups={"remove": ["shown"]})["changes"] == \
        {"groups": {"removed": "shown", "added": ""}}
    update_bug(services, bug_id, groups={"add": ["mandatory"]})
    assert update_error(services, bug_id, groups={"remove": ["mandatory"]}) == 120
    assert update_error(services, bug_id, groups={"remove": ["shown"]}) == 120


def test_non_member_cannot_add_member_only_group(services):
    group = add_bug_group(services, "members")
    control(services, group, DEFAULT, NA)
    services.add_user("plain@example.com")
    bug_id = file_bug(services, groups=[])
    assert update_error(services, bug_id, as_user="plain@example.com",
                        groups={"add": ["members"]}) == 120


def test_see_also_add_remove_with_mirror(services):
    other = file_bug(services)
    bug_id = file_bug(services)
    local = f"show_bug.cgi?id={other}"
    changes = update_bug(services, bug_id, see_also={"add": [str(other),
                                                             "https://launchpad.net/p/+bug/1"]})
    assert changes["changes"] == {"see_also": {"removed": "",
                                               "added": f"{local}, https://launchpad.net/p/+bug/1"}}
    assert get_bug(services, other)["see_also"] == [f"show_bug.cgi?id={bug_id}"]
    assert history_of(services, other)[-1]["changes"] == [
        {"field_name": "see_also", "removed": "", "added": f"show_bug.cgi?id={bug_id}"}]
    changes = update_bug(services, bug_id, see_also={"remove": [local, "http://absent/x"]})
    assert changes["changes"] == {"see_also": {"removed": local, "added": ""}}
    assert get_bug(services, other)["see_also"] == []


def test_see_also_uses_urlbase(services):
    set_param(services, "urlbase", "https://bugs.example.com/")
    other = file_bug(services)
    bug_id = file_bug(services, see_also=[f"https://bugs.example.com/show_bug.cgi?id={other}"])
    assert get_bug(services, bug_id)["see_also"] == \
        [f"https://bugs.example.com/show_bug.cgi?id={other}"]
    assert update_error(services, bug_id, see_also={"add": [str(bug_id)]}) == 32000


# Comments ------------------------------------------------------------------------------------

def test_private_comments_and_privacy_changes(services):
    bug_id = file_bug(services, description="public")
    assert update_error(services, bug_id, comment={"body": "x", "is_private": True}) == 113
    add_bug_group(services, "insiders")
    set_param(services, "insidergroup", "insiders")
    update_bug(services, bug_id, comment={"body": "secret", "is_private": True})
    comment_id = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0",
                                (bug_id,))[0][0]
    result = update_bug(services, bug_id, comment_is_private={str(comment_id): True})
    assert result["changes"] == {}
    assert [c[3] for c in comments_of(services, bug_id)] == [1, 1]
    assert history_of(services, bug_id)[-1]["changes"] == [
        {"field_name": "longdescs.isprivate", "removed": "0", "added": "1",
         "comment_id": comment_id}]
    services.add_user("plain@example.com")
    # To a non-insider a private comment answers like one not on the bug.
    assert update_error(services, bug_id, as_user="plain@example.com",
                        comment_is_private={str(comment_id): False}) == 117
    other = file_bug(services)
    assert update_error(services, other, comment_is_private={str(comment_id): False}) == 117


def test_comment_only_update_touches_the_bug(services):
    bug_id = file_bug(services, now=JAN)
    with freeze_time("2026-02-02"):
        result = update_bug(services, bug_id, comment={"body": "hello"})
    assert result["changes"] == {} and result["last_change_time"] == "2026-02-02T00:00:00Z"


# Custom fields -------------------------------------------------------------------------------

def test_custom_fields_update(services):
    add_custom_field(services, "cf_color", 2, ["red", "green"])
    add_custom_field(services, "cf_tags", 3, ["a", "b", "c"])
    add_custom_field(services, "cf_must", 1, is_mandatory=True)
    bug_id = file_bug(services, cf_must="x", cf_tags=["a"])
    changes = update_bug(services, bug_id, cf_color="red", cf_tags=["b", "c"])["changes"]
    assert changes == {"cf_color": {"removed": "---", "added": "red"},
                       "cf_tags": {"removed": "a", "added": "b, c"}}
    assert update_error(services, bug_id, cf_must="") == 32000
    assert update_error(services, bug_id, cf_color="blue") == 51


# Several bugs ------------------------------------------------------------------------------------

def test_several_bugs_in_one_update(services):
    first = file_bug(services)
    second = file_bug(services, whiteboard="w")
    result = services.call(bug_service.update, {"ids": [first, second], "whiteboard": "w"},
                           as_user=ADMIN)["bugs"]
    assert [r["id"] for r in result] == [first, second]
    assert result[0]["changes"] == {"whiteboard": {"removed": "", "added": "w"}}
    assert result[1]["changes"] == {}


def test_failure_on_second_bug_rolls_back_the_first(services):
    first = file_bug(services)
    editbugs_only_for_members(services)
    services.add_user("plain@example.com")
    second = file_bug(services, as_user="plain@example.com")
    group = add_bug_group(services, "editors")
    control(services, group, SHOWN, SHOWN, canedit=0)
    before = snapshot(services)
    assert update_error(services, first, ids=[first, second, 999], whiteboard="w") == 101
    assert snapshot(services) == before


# JSON-RPC-only calls: update_see_also, update_tags ---------------------------------------

def test_update_see_also(services):
    bug_id = file_bug(services, see_also=["https://github.com/o/r/issues/1"])
    result = services.call(bug_service.update_see_also,
                           {"ids": [bug_id], "add": ["https://github.com/o/r/pull/2"],
                            "remove": ["https://github.com/o/r/issues/1"]}, as_user=ADMIN)
    assert result == {"changes": {str(bug_id): {"see_also": {
        "removed": ["https://github.com/o/r/issues/1"],
        "added": ["https://github.com/o/r/pull/2"]}}}}
    result = services.call(bug_service.update_see_also, {"ids": [bug_id], "add": []},
                           as_user=ADMIN)
    assert result == {"changes": {str(bug_id): {"see_also": {"removed": [], "added": []}}}}
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.update_see_also, {"ids": [bug_id]}, as_user=ADMIN)
    assert caught.value.code == 50


def test_update_tags_are_personal(services):
    services.add_user("other@example.com")
    bug_id = file_bug(services)
    result = services.call(bug_service.update_tags,
                           {"ids": [bug_id], "tags": {"add": ["Later", "mine"]}}, as_user=ADMIN)
    assert result == {"changes": {str(bug_id): {"tags": {"removed": [],
                                                         "added": ["Later", "mine"]}}}}
    result = services.call(bug_service.update_tags,
                           {"ids": [bug_id], "tags": {"remove": ["later"]}}, as_user=ADMIN)
    assert result["changes"][str(bug_id)]["tags"] == {"removed": ["Later"], "added": []}
    mine = services.call(bug_service.get, {"ids": [bug_id], "include_fields": "tags"},
                         as_user=ADMIN)["bugs"][0]
    assert mine["tags"] == ["mine"]
    other = services.call(bug_service.get, {"ids": [bug_id], "include_fields": "_extra"},
                          as_user="other@example.com")["bugs"][0]
    assert other["tags"] == []
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.update_tags, {"ids": [bug_id]}, as_user=ADMIN)
    assert caught.value.code == 50


def test_closing_zeroes_remaining_time_silently_for_non_timetrackers(services, roles):
    update_bug(services, roles, remaining_time=4)
    changes = update_bug(services, roles, as_user="reporter@example.com", status="RESOLVED",
                         resolution="FIXED")["changes"]
    assert set(changes) == {"status", "resolution"}
    assert get_bug(services, roles)["remaining_time"] == 0.0


def test_internal_names_on_update(services):
    first = file_bug(services)
    bug_id = file_bug(services)
    changes = update_bug(services, bug_id, bug_status="IN_PROGRESS", dependson={"add": [first]},
                         status_whiteboard="wb")["changes"]
    assert set(changes) == {"status", "depends_on", "whiteboard"}


# Refused values of fixed lists name the legal ones ---------------------------------

def update_message(client, admin_key, bug_id, **body):
    resp = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                               json=body)
    assert resp.status_code in (400, 404), resp.text
    return resp.json["message"]


@pytest.mark.parametrize("body, legal", [
    ({"priority": "P1"}, "Legal values: Highest, High, Normal, Low, Lowest, ---."),
    ({"status": "CLOSED"},
     "Legal values: UNCONFIRMED, CONFIRMED, IN_PROGRESS, RESOLVED, VERIFIED."),
    ({"status": "VERIFIED", "resolution": "FIXED"}, "Allowed: CONFIRMED, IN_PROGRESS, RESOLVED."),
    ({"status": "RESOLVED"}, "Legal values: FIXED, INVALID, WONTFIX, DUPLICATE, WORKSFORME."),
    ({"status": "RESOLVED", "resolution": "DONE"},
     "Legal values: FIXED, INVALID, WONTFIX, DUPLICATE, WORKSFORME."),
])
def test_refused_fixed_list_values_name_the_legal_ones(client, admin_key, services, body, legal):
    bug_id = file_bug(services)
    before = snapshot(services)
    assert update_message(client, admin_key, bug_id, **body).endswith(legal)
    assert snapshot(services) == before
