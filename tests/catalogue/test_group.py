"""Groups: create, update and get (interface "Groups")."""

from datetime import datetime, timezone

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import NA, SHOWN, control, file_bug
from bugsvc.accounts.caller import load_caller
from bugsvc.accounts.membership import GRANT_DERIVED as DERIVED
from bugsvc.errors import ServiceError
from bugsvc.services import group, instance
from page_support import Browser


SYSTEM_GROUP_COUNT = 14


def group_row(services, name):
    rows = services.query("SELECT id, name, description, is_bug_group, user_regexp, is_active,"
                          " icon_url FROM groups WHERE lower(name) = lower(?)", (name,))
    return rows[0] if rows else None


def group_count(services):
    return services.query("SELECT COUNT(*) FROM groups")[0][0]


def member_ids(services, group_id, grant_type=None):
    sql = "SELECT user_id FROM user_groups WHERE group_id = ? AND is_bless = 0"
    args = [group_id]
    if grant_type is not None:
        sql += " AND grant_type = ?"
        args.append(grant_type)
    return {row[0] for row in services.query(sql, args)}


def rows_in_group(services, login, group_id):
    """(is_bless, grant_type) of each row putting `login` in the group."""
    return services.query("SELECT ug.is_bless, ug.grant_type FROM user_groups ug"
                          " JOIN users u ON u.id = ug.user_id WHERE lower(u.login) = lower(?)"
                          " AND ug.group_id = ? ORDER BY 1, 2", (login, group_id))


def load(services, user_id):
    """The Caller of account `user_id`, as a call would resolve it."""
    with services.db.transaction() as conn:
        return load_caller(conn, user_id)


def error_code(services, function, params, as_user):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def make_group(services, name="secret", **values):
    params = {"name": name, "description": f"{name} people"}
    params.update(values)
    return services.call(group.create, params, as_user=ADMIN)["id"]


@pytest.fixture
def creator(services):
    """A member of creategroups who is nothing else."""
    return services.add_user("creator@example.com", groups=("creategroups",))


# Create ----------------------------------------------------------------------

def test_create_over_http_answers_201_and_stores_a_bug_group(client, admin_key, services):
    resp = client.simulate_post("/rest/group", params={"Bugzilla_api_key": admin_key},
                                json={"name": "qa-team", "description": "QA team",
                                      "icon_url": "http://example.com/qa.png"})
    assert resp.status_code == 201
    assert isinstance(resp.json["id"], int)
    assert group_row(services, "qa-team") == (resp.json["id"], "qa-team", "QA team", 1, "", 0,
                                              "http://example.com/qa.png")


def test_create_is_active_omitted_means_false_and_given_true_is_stored(services):
    make_group(services, "inactive")
    make_group(services, "active", is_active=True)
    assert group_row(services, "inactive")[5] == 0
    assert group_row(services, "active")[5] == 1


def test_create_trims_name_and_description(services):
    make_group(services, "  spaced  ", description="  desc  ")
    assert group_row(services, "spaced")[1:3] == ("spaced", "desc")


@pytest.mark.parametrize("params, code", [
    ({"name": "", "description": "d"}, 800),
    ({"name": "   ", "description": "d"}, 800),
    ({"description": "d"}, 800),
    ({"name": "admin", "description": "d"}, 801),
    ({"name": "EditBugs", "description": "d"}, 801),
    ({"name": "a,b", "description": "d"}, 804),
    ({"name": "12345", "description": "d"}, 804),
    ({"name": "tab\there", "description": "d"}, 804),
    ({"name": "x" * 256, "description": "d"}, 804),
    ({"name": "fine"}, 802),
    ({"name": "fine", "description": "  "}, 802),
    ({"name": "fine", "description": "d", "user_regexp": "(unclosed"}, 803),
    ({"name": ["a", "b"], "description": "d"}, 53),
])
def test_create_rejects_bad_values_and_stores_nothing(services, params, code):
    before = group_count(services)
    assert error_code(services, group.create, params, ADMIN) == code
    assert group_count(services) == before


def test_create_name_exists_in_any_case_for_custom_groups(services):
    make_group(services, "Secret")
    assert error_code(services, group.create, {"name": "SECRET", "description": "d"}, ADMIN) == 801


def test_create_applies_user_regexp_at_once(services):
    alice = services.add_user("alice@corp.example")
    bob = services.add_user("BOB@CORP.EXAMPLE")
    carol = services.add_user("carol@other.example")
    group_id = make_group(services, "corp", user_regexp=r"@corp\.example$")
    regexp_members = member_ids(services, group_id, grant_type=2)
    assert alice in regexp_members and bob in regexp_members
    assert carol not in regexp_members


def test_create_makes_the_admin_group_a_member_blesser_and_viewer_and_nobody_direct(
        services, creator):
    """As Bugzilla's Group->create: the admin group becomes a member of the
    new group, with bless and visibility grants on it; the administrator is
    a member through admin (derived), with no direct row and no bless row of
    its own, and blesses it through admin's grant."""
    group_id = make_group(services, "fresh")
    answer = services.call(group.inheritance, {"ids": [group_id]}, as_user=ADMIN, write=False)
    assert answer["groups"][0] == {"id": group_id, "name": "fresh", "member_groups": ["admin"],
                                   "member_of": [], "bless_groups": ["admin"],
                                   "visible_to": ["admin"]}
    admin_id = services.user_id(ADMIN)
    assert rows_in_group(services, ADMIN, group_id) == [(0, DERIVED)]
    assert group_id in load(services, admin_id).bless_group_ids
    other = services.call(group.create, {"name": "by-creator", "description": "d"}, as_user=creator)
    assert creator not in member_ids(services, other["id"])
    assert member_ids(services, other["id"]) == {admin_id}


def test_create_is_audited_for_last_audit_time(services):
    moment = datetime(2026, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    group_id = services.call(group.create, {"name": "audited", "description": "d"},
                             as_user=ADMIN, now=moment)["id"]
    answer = services.call(instance.last_audit_time, {"class": ["Bugzilla::Group"]}, write=False)
    assert answer == {"last_audit_time": "2026-05-06T07:08:09Z"}
    assert services.query("SELECT class, object_id FROM audit_log WHERE class = 'Bugzilla::Group'"
                          ) == [("Bugzilla::Group", group_id)]


def test_create_permissions(services, creator):
    plain = services.add_user("plain@example.com")
    editusers = services.add_user("eu@example.com", groups=("editusers",))
    params = {"name": "nope", "description": "d"}
    assert error_code(services, group.create, params, None) == 410
    assert error_code(services, group.create, params, plain) == 304
    assert error_code(services, group.create, params, editusers) == 304
    assert group_row(services, "nope") is None
    assert services.call(group.create, params, as_user=creator)["id"] > SYSTEM_GROUP_COUNT


def test_create_over_http_as_anonymous_and_plain_user(client, services):
    services.add_user("plain@example.com")
    key = services.api_key("plain@example.com")
    body = {"name": "nope", "description": "d"}
    anonymous = client.simulate_post("/rest/group", json=body)
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    plain = client.simulate_post("/rest/group", params={"Bugzilla_api_key": key}, json=body)
    assert (plain.status_code, plain.json["code"]) == (401, 304)
    assert group_row(services, "nope") is None


# Admins: members through the admin group ----------------------------------------
#
# Bugzilla makes the admin group a member of every group it creates: the
# members of admin are members of the group (and may bless it) for as long
# as they are admins, whenever they became admins.

FORMER, LATER, PLAIN = "former@example.com", "later@example.com", "plain@example.com"
PASSWORD = "admins-password-1"


def rest_key(services, login):
    return {"X-BUGZILLA-API-KEY": services.api_key(login)}


def set_admin(client, services, login, member):
    """Add `login` to admin (or take it out) over REST, as the administrator."""
    change = {"add" if member else "remove": ["admin"]}
    answer = client.simulate_put(f"/rest/user/{login}", headers=rest_key(services, ADMIN),
                                 json={"groups": change})
    assert answer.status_code == 200, answer.text


def private_bug(services, name):
    """A group `name` made by the administrator and a bug restricted to it;
    returns (group id, bug id)."""
    group_id = make_group(services, name, is_active=True)
    control(services, group_id, SHOWN, NA)
    return group_id, file_bug(services, summary=f"Hole known to {name}", groups=[name])


def bug_answer(client, services, login, bug_id):
    """(status, error code or None) of GET /rest/bug/{bug_id} as `login` (None: anonymous)."""
    headers = rest_key(services, login) if login else {}
    answer = client.simulate_get(f"/rest/bug/{bug_id}", headers=headers)
    return answer.status_code, answer.json.get("code")


def bug_page(app, login, bug_id):
    """(status, shows the summary) of show_bug.cgi as `login` (None: anonymous)."""
    browser = Browser(app)
    if login:
        browser.login(login, ADMIN_PASSWORD if login == ADMIN else PASSWORD)
    page = browser.get(f"/show_bug.cgi?id={bug_id}")
    return page.status_code, "Hole known to" in page.text


def test_an_account_taken_out_of_admin_loses_the_groups_made_while_it_was_admin(
        app, client, services):
    services.add_user(FORMER, password=PASSWORD)
    set_admin(client, services, FORMER, True)
    group_id, bug_id = private_bug(services, "hotfixes")
    assert rows_in_group(services, FORMER, group_id) == [(0, DERIVED)]
    assert bug_answer(client, services, FORMER, bug_id) == (200, None)
    assert bug_page(app, FORMER, bug_id) == (200, True)
    set_admin(client, services, FORMER, False)
    # No membership and no bless right is left behind.
    assert rows_in_group(services, FORMER, group_id) == []
    assert group_id not in load(services, services.user_id(FORMER)).bless_group_ids
    assert bug_answer(client, services, FORMER, bug_id) == (401, 102)
    assert bug_page(app, FORMER, bug_id) == (401, False)
    # The administrator, still an admin, keeps it.
    assert bug_answer(client, services, ADMIN, bug_id) == (200, None)
    assert bug_page(app, ADMIN, bug_id) == (200, True)


def test_an_account_made_admin_later_is_a_member_of_the_groups_made_before_and_blesses_them(
        app, client, services):
    services.add_user(LATER, password=PASSWORD)
    services.add_user(PLAIN)
    group_id, bug_id = private_bug(services, "hotfixes")
    grant = {"groups": {"add": ["hotfixes"]}}
    refused = client.simulate_put(f"/rest/user/{PLAIN}", headers=rest_key(services, LATER),
                                  json=grant)
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    assert bug_answer(client, services, LATER, bug_id) == (401, 102)
    set_admin(client, services, LATER, True)
    assert rows_in_group(services, LATER, group_id) == [(0, DERIVED)]
    assert bug_answer(client, services, LATER, bug_id) == (200, None)
    assert bug_page(app, LATER, bug_id) == (200, True)
    # LATER is in admin alone (not editusers): the bless right is admin's grant.
    done = client.simulate_put(f"/rest/user/{PLAIN}", headers=rest_key(services, LATER),
                               json=grant)
    assert done.status_code == 200, done.text
    assert rows_in_group(services, PLAIN, group_id) == [(0, 0)]


def test_get_membership_lists_the_admins_through_the_admin_group(client, services):
    """Bugzilla's Group.get lists the members of the groups that are members
    of the group too: every admin, and nobody once out of admin."""
    services.add_user(FORMER)
    services.add_user(LATER)
    set_admin(client, services, FORMER, True)
    group_id = make_group(services, "hotfixes")
    set_admin(client, services, LATER, True)

    def listed():
        answer = client.simulate_get("/rest/group/hotfixes", headers=rest_key(services, ADMIN),
                                     params={"membership": "1"})
        assert answer.status_code == 200, answer.text
        return [member["name"] for member in answer.json["groups"][0]["membership"]]

    assert listed() == [ADMIN, FORMER, LATER]
    set_admin(client, services, FORMER, False)
    assert listed() == [ADMIN, LATER]
    # User.get shows the group among LATER's, as Bugzilla's (derived ones included).
    answer = client.simulate_get(f"/rest/user/{LATER}", headers=rest_key(services, ADMIN))
    assert "hotfixes" in [g["name"] for g in answer.json["users"][0]["groups"]]
    assert rows_in_group(services, ADMIN, group_id) == [(0, DERIVED)]


def test_a_plain_user_and_a_visitor_gain_nothing_from_the_admin_grant(app, client, services):
    services.add_user(PLAIN, password=PASSWORD)
    group_id, bug_id = private_bug(services, "hotfixes")
    assert rows_in_group(services, PLAIN, group_id) == []
    assert group_id not in load(services, services.user_id(PLAIN)).bless_group_ids
    for login in (PLAIN, None):
        assert bug_answer(client, services, login, bug_id) == (401, 102)
        assert bug_page(app, login, bug_id) == (401, False)
    plain = client.simulate_get("/rest/group/hotfixes", headers=rest_key(services, PLAIN),
                                params={"membership": "1"})
    assert (plain.status_code, plain.json["code"]) == (400, 805)
    anonymous = client.simulate_get("/rest/group/hotfixes", params={"membership": "1"})
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    blessed = client.simulate_put(f"/rest/user/{PLAIN}", headers=rest_key(services, PLAIN),
                                  json={"groups": {"add": ["hotfixes"]}})
    assert (blessed.status_code, blessed.json["code"]) == (401, 304)
    assert rows_in_group(services, PLAIN, group_id) == []


# Update ----------------------------------------------------------------------

def test_update_changes_values_and_answers_changes(services):
    group_id = make_group(services, "team", user_regexp="", icon_url="")
    answer = services.call(group.update, {"ids": [group_id], "description": "The team",
                                          "is_active": True, "icon_url": "http://i/x.png"},
                           as_user=ADMIN)
    assert answer == {"groups": [{"id": group_id, "changes": {
        "description": {"added": "The team", "removed": "team people"},
        "is_active": {"added": "1", "removed": "0"},
        "icon_url": {"added": "http://i/x.png", "removed": ""}}}]}
    assert group_row(services, "team")[2:] == ("The team", 1, "", 1, "http://i/x.png")
    answer = services.call(group.update, {"names": ["TEAM"], "is_active": "0"}, as_user=ADMIN)
    assert answer["groups"][0]["changes"] == {"is_active": {"added": "0", "removed": "1"}}


def test_update_with_same_values_reports_no_changes_and_audits_nothing(services):
    group_id = make_group(services, "same")
    before = services.query("SELECT COUNT(*) FROM audit_log")[0][0]
    answer = services.call(group.update, {"ids": [group_id], "name": "same",
                                          "description": "same people", "is_active": False},
                           as_user=ADMIN)
    assert answer == {"groups": [{"id": group_id, "changes": {}}]}
    assert services.query("SELECT COUNT(*) FROM audit_log")[0][0] == before


def test_update_is_audited_per_field(services):
    group_id = make_group(services, "aud")
    services.call(group.update, {"ids": [group_id], "description": "new"}, as_user=ADMIN)
    assert services.query("SELECT field, removed, added FROM audit_log WHERE class ="
                          " 'Bugzilla::Group' AND field IS NOT NULL") == [
        ("description", "aud people", "new")]


def test_update_reapplies_user_regexp(services):
    alice = services.add_user("alice@corp.example")
    bob = services.add_user("bob@other.example")
    direct = services.add_user("direct@else.example")
    group_id = make_group(services, "corp", user_regexp="@corp")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, 0)", (direct, group_id))
    answer = services.call(group.update, {"ids": [group_id], "user_regexp": "@other"},
                           as_user=ADMIN)
    assert answer["groups"][0]["changes"] == {
        "user_regexp": {"added": "@other", "removed": "@corp"}}
    regexp_members = member_ids(services, group_id, grant_type=2)
    assert bob in regexp_members and alice not in regexp_members
    assert direct in member_ids(services, group_id)
    services.call(group.update, {"ids": [group_id], "user_regexp": ""}, as_user=ADMIN)
    assert member_ids(services, group_id, grant_type=2) == set()


def test_update_several_groups_by_ids_and_names(services):
    first = make_group(services, "one")
    second = make_group(services, "two")
    answer = services.call(group.update, {"ids": [first], "names": ["two", "ONE"],
                                          "description": "shared"}, as_user=ADMIN)
    assert sorted(item["id"] for item in answer["groups"]) == [first, second]
    assert group_row(services, "one")[2] == group_row(services, "two")[2] == "shared"


def test_update_name_of_several_groups_is_refused(services):
    first = make_group(services, "one")
    second = make_group(services, "two")
    code = error_code(services, group.update, {"ids": [first, second], "name": "both",
                                               "description": "changed"}, ADMIN)
    assert code == 801
    assert group_row(services, "one")[2] == "one people"
    assert group_row(services, "both") is None


def test_update_rename(services):
    group_id = make_group(services, "old")
    answer = services.call(group.update, {"ids": [group_id], "name": " new "}, as_user=ADMIN)
    assert answer["groups"][0]["changes"] == {"name": {"added": "new", "removed": "old"}}
    assert group_row(services, "new")[0] == group_id
    services.call(group.update, {"ids": [group_id], "name": "NEW"}, as_user=ADMIN)
    assert group_row(services, "new")[1] == "NEW"


@pytest.mark.parametrize("name, code", [("admin", 801), ("Other", 801), ("", 800), ("1,2", 804),
                                        ("777", 804)])
def test_update_rename_rejects_bad_names(services, name, code):
    group_id = make_group(services, "mine")
    make_group(services, "other")
    assert error_code(services, group.update, {"ids": [group_id], "name": name,
                                               "description": "changed"}, ADMIN) == code
    assert group_row(services, "mine")[2] == "mine people"


def test_update_system_group_keeps_its_name_but_takes_a_description(services):
    assert error_code(services, group.update, {"names": ["editbugs"], "name": "editors"},
                      ADMIN) == 32000
    assert group_row(services, "editbugs") is not None
    answer = services.call(group.update, {"names": ["editbugs"], "name": "editbugs",
                                          "description": "Edit every bug"}, as_user=ADMIN)
    assert answer["groups"][0]["changes"] == {
        "description": {"added": "Edit every bug", "removed": "Can edit all bug fields"}}


def test_update_rename_moves_group_parameters(services):
    group_id = make_group(services, "insiders")
    services.call(instance.update_parameters, {"insidergroup": "insiders"}, as_user=ADMIN)
    services.call(group.update, {"ids": [group_id], "name": "trusted"}, as_user=ADMIN)
    values = services.call(instance.parameters, as_user=ADMIN, write=False)["parameters"]
    assert values["insidergroup"] == "trusted"
    assert values["timetrackinggroup"] == "editbugs"


@pytest.mark.parametrize("params, code", [
    ({"description": "x"}, 50),
    ({"ids": [999], "description": "x"}, 51),
    ({"names": ["no-such-group"], "description": "x"}, 51),
    ({"ids": [15], "description": ""}, 802),
    ({"ids": [15], "user_regexp": "["}, 803),
])
def test_update_errors_change_nothing(services, params, code):
    assert make_group(services, "target", is_active=False) == 15
    before = services.query("SELECT * FROM groups ORDER BY id")
    params = dict(params, is_active=True)
    assert error_code(services, group.update, params, ADMIN) == code
    assert services.query("SELECT * FROM groups ORDER BY id") == before


def test_update_with_one_unknown_group_changes_none(services):
    first = make_group(services, "first")
    code = error_code(services, group.update, {"ids": [first, 9999], "is_active": True}, ADMIN)
    assert code == 51
    assert group_row(services, "first")[5] == 0


def test_update_activation_restricts_bugs_of_mandatory_products(services):
    group_id = make_group(services, "mandatory")
    with services.db.transaction(write=True) as conn:
        product = conn.execute("SELECT id FROM products WHERE name = 'TestProduct'").fetchone()[0]
        component = conn.execute("SELECT id FROM components WHERE product_id = ?",
                                 (product,)).fetchone()[0]
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, 3, 3, 0)", (group_id, product))
        conn.execute(
            "INSERT INTO bugs (product_id, component_id, version, summary, status, priority,"
            " severity, platform, op_sys, assigned_to, reporter, creation_time, last_change_time)"
            " VALUES (?, ?, 'unspecified', 's', 'CONFIRMED', '---', 'normal', 'All', 'All', 1, 1,"
            " '2026-01-01 00:00:00', '2026-01-01 00:00:00')", (product, component))
    services.call(group.update, {"ids": [group_id], "is_active": True}, as_user=ADMIN)
    assert services.query("SELECT group_id FROM bug_groups") == [(group_id,)]


def test_update_permissions(services, creator):
    group_id = make_group(services, "guarded")
    plain = services.add_user("plain@example.com")
    blesser = services.add_user("blesser@example.com", bless=("guarded",))
    params = {"ids": [group_id], "description": "hacked"}
    assert error_code(services, group.update, params, None) == 410
    assert error_code(services, group.update, params, plain) == 304
    assert error_code(services, group.update, params, blesser) == 304
    assert group_row(services, "guarded")[2] == "guarded people"
    services.call(group.update, params, as_user=creator)
    assert group_row(services, "guarded")[2] == "hacked"


def test_update_over_http_by_path_name_answers_integer_ids(client, admin_key, services):
    group_id = make_group(services, "web")
    resp = client.simulate_put("/rest/group/web", params={"Bugzilla_api_key": admin_key},
                               json={"is_active": 1})
    assert resp.status_code == 200
    assert resp.json == {"groups": [{"id": group_id,
                                     "changes": {"is_active": {"added": "1", "removed": "0"}}}]}
    by_id = client.simulate_put(f"/rest/group/{group_id}", params={"Bugzilla_api_key": admin_key},
                                json={"description": "by id"})
    assert by_id.json["groups"][0]["changes"]["description"]["added"] == "by id"


def test_update_over_http_as_anonymous_and_plain_user(client, services):
    make_group(services, "web")
    services.add_user("plain@example.com")
    key = services.api_key("plain@example.com")
    anonymous = client.simulate_put("/rest/group/web", json={"description": "x"})
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    plain = client.simulate_put("/rest/group/web", params={"Bugzilla_api_key": key},
                                json={"description": "x"})
    assert (plain.status_code, plain.json["code"]) == (401, 304)
    assert group_row(services, "web")[2] == "web people"


# Get -------------------------------------------------------------------------

def test_get_as_creategroups_member_lists_every_group_with_full_fields(services, creator):
    make_group(services, "custom", user_regexp="@x", is_active=True)
    groups = services.call(group.get, {}, as_user=creator, write=False)["groups"]
    assert len(groups) == SYSTEM_GROUP_COUNT + 1
    # System groups first, then bug groups, each by name.
    assert groups[0]["name"] == "admin" and groups[-1]["name"] == "custom"
    assert groups[-1] == {"id": 15, "name": "custom", "description": "custom people",
                          "is_active": True, "is_bug_group": True, "user_regexp": "@x"}
    editbugs = next(g for g in groups if g["name"] == "editbugs")
    assert editbugs["is_bug_group"] is False and editbugs["user_regexp"] == ".*"


def test_get_as_editusers_member_lists_every_group_without_admin_fields(services):
    editor = services.add_user("eu@example.com", groups=("editusers",))
    groups = services.call(group.get, {}, as_user=editor, write=False)["groups"]
    assert len(groups) == SYSTEM_GROUP_COUNT
    assert all(set(g) == {"id", "name", "description"} for g in groups)


def test_get_as_blesser_sees_only_blessed_groups(services):
    make_group(services, "visible")
    make_group(services, "hidden")
    blesser = services.add_user("blesser@example.com", bless=("visible",))
    groups = services.call(group.get, {}, as_user=blesser, write=False)["groups"]
    assert groups == [{"id": 15, "name": "visible", "description": "visible people"}]
    with_members = services.call(group.get, {"names": ["visible"], "membership": True},
                                 as_user=blesser, write=False)["groups"]
    assert [m["name"] for m in with_members[0]["membership"]] == [ADMIN]


@pytest.mark.parametrize("params", [{"names": ["hidden"]}, {"ids": [16]},
                                    {"names": ["visible", "hidden"]}, {"names": ["absent"]},
                                    {"ids": [999]}])
def test_get_as_blesser_naming_other_or_unknown_groups_is_805(services, params):
    make_group(services, "visible")
    make_group(services, "hidden")
    blesser = services.add_user("blesser@example.com", bless=("visible",))
    assert error_code(services, group.get, params, blesser) == 805


def test_get_as_plain_user_is_805_and_anonymous_410(services):
    plain = services.add_user("plain@example.com")
    assert error_code(services, group.get, {}, plain) == 805
    assert error_code(services, group.get, {"names": ["admin"]}, plain) == 805
    assert error_code(services, group.get, {}, None) == 410


def test_get_unknown_id_or_name_is_51_for_admins(services):
    assert error_code(services, group.get, {"ids": [999]}, ADMIN) == 51
    assert error_code(services, group.get, {"names": ["nope"]}, ADMIN) == 51


def test_get_by_ids_and_names_returns_each_group_once(services):
    answer = services.call(group.get, {"ids": [8, 1], "names": ["EDITBUGS", "admin"]},
                           as_user=ADMIN, write=False)
    assert [g["name"] for g in answer["groups"]] == ["admin", "editbugs"]


def test_get_membership_lists_direct_and_regexp_members_as_user_objects(services):
    regexp_member = services.add_user("rex@corp.example", real_name="Rex")
    direct = services.add_user("dina@else.example", real_name="Dina",
                               disabled_text="Gone fishing")
    blesser_only = services.add_user("bless@else.example")
    group_id = make_group(services, "corp", user_regexp="@corp")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, 0)", (direct, group_id))
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 1, 0)", (blesser_only, group_id))
        conn.execute("UPDATE users SET email_enabled = 0 WHERE id = ?", (direct,))
    answer = services.call(group.get, {"ids": [group_id], "membership": 1}, as_user=ADMIN,
                           write=False)
    members = answer["groups"][0]["membership"]
    assert [m["name"] for m in members] == [ADMIN, "dina@else.example", "rex@corp.example"]
    assert members[1] == {"id": direct, "real_name": "Dina", "name": "dina@else.example",
                          "email": "dina@else.example", "can_login": False,
                          "email_enabled": False, "login_denied_text": "Gone fishing"}
    assert members[2] == {"id": regexp_member, "real_name": "Rex", "name": "rex@corp.example",
                          "email": "rex@corp.example", "can_login": True,
                          "email_enabled": True, "login_denied_text": ""}


def test_get_membership_email_carries_the_email_suffix(services):
    services.call(instance.update_parameters, {"emailsuffix": ".example.net"}, as_user=ADMIN)
    answer = services.call(group.get, {"names": ["admin"], "membership": True}, as_user=ADMIN,
                           write=False)
    member = answer["groups"][0]["membership"][0]
    assert (member["name"], member["email"]) == (ADMIN, ADMIN + ".example.net")


@pytest.mark.parametrize("value, wanted", [("1", True), ("true", True), ("yes", True),
                                           ("0", False), ("", False), ("false", False),
                                           ("False", False), ("off", False), ("no", False)])
def test_get_membership_flag_follows_boolean_decision(client, admin_key, value, wanted):
    resp = client.simulate_get("/rest/group/admin",
                               query_string=f"membership={value}&Bugzilla_api_key={admin_key}")
    assert resp.status_code == 200
    assert ("membership" in resp.json["groups"][0]) is wanted


def test_get_over_http_by_path_id_and_name(client, admin_key, services):
    group_id = make_group(services, "pathed")
    params = {"Bugzilla_api_key": admin_key}
    by_name = client.simulate_get("/rest/group/pathed", params=params)
    by_id = client.simulate_get(f"/rest/group/{group_id}", params=params)
    assert by_name.status_code == by_id.status_code == 200
    assert by_name.json == by_id.json
    assert [g["id"] for g in by_name.json["groups"]] == [group_id]


def test_get_over_http_errors_and_statuses(client, admin_key, services):
    services.add_user("plain@example.com")
    plain_key = services.api_key("plain@example.com")
    anonymous = client.simulate_get("/rest/group")
    assert (anonymous.status_code, anonymous.json["code"]) == (401, 410)
    plain = client.simulate_get("/rest/group", params={"Bugzilla_api_key": plain_key})
    assert (plain.status_code, plain.json["code"]) == (400, 805)
    unknown = client.simulate_get("/rest/group/999", params={"Bugzilla_api_key": admin_key})
    assert (unknown.status_code, unknown.json["code"]) == (404, 51)
