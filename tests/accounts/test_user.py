"""Create, update and get accounts (interface "Users and login")."""

import xmlrpc.client

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bug_support import editbugs_only_for_members, grant_visibility
from bugsvc.accounts.membership import grant_admin_visibility
from bugsvc.errors import ServiceError
from bugsvc.services import group as group_service, user


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def execute(services, sql, args=()):
    with services.db.transaction(write=True) as conn:
        return conn.execute(sql, args).lastrowid


def set_param(services, name, value):
    execute(services, "UPDATE params SET value = ? WHERE name = ?", (value, name))


def group_id(services, name):
    return services.query("SELECT id FROM groups WHERE name = ?", (name,))[0][0]


def add_group(services, name, regexp=""):
    """A new bug group; the admin group sees its members, as for every new group."""
    with services.db.transaction(write=True) as conn:
        group = conn.execute("INSERT INTO groups (name, description, is_bug_group, user_regexp,"
                             " is_active) VALUES (?, ?, 1, ?, 1)",
                             (name, f"{name} people", regexp)).lastrowid
        grant_admin_visibility(conn, [group])
    return group


def direct_groups(services, user_id, is_bless=0):
    return {row[0] for row in services.query(
        "SELECT g.name FROM user_groups ug JOIN groups g ON g.id = ug.group_id"
        " WHERE ug.user_id = ? AND ug.is_bless = ? AND ug.grant_type = 0", (user_id, is_bless))}


def all_groups(services, user_id):
    return {row[0] for row in services.query(
        "SELECT g.name FROM user_groups ug JOIN groups g ON g.id = ug.group_id"
        " WHERE ug.user_id = ? AND ug.is_bless = 0", (user_id,))}


def user_row(services, user_id):
    return services.query("SELECT login, real_name, disabled_text, email_enabled, password_hash"
                          " FROM users WHERE id = ?", (user_id,))[0]


def user_count(services):
    return services.query("SELECT COUNT(*) FROM users")[0][0]


def can_log_in(client, login_name, password):
    return client.simulate_get("/rest/login", params={"login": login_name,
                                                      "password": password}).status_code == 200


def audit_rows(services, object_id):
    return services.query("SELECT class, field, removed, added FROM audit_log WHERE object_id = ?"
                          " AND class = 'Bugzilla::User' ORDER BY id", (object_id,))


@pytest.fixture
def plain(services):
    return services.add_user("plain@example.com", password="plain-secret", real_name="Plain Person")


@pytest.fixture
def bob(services):
    return services.add_user("bob@example.com", password="bob-secret", real_name="Bob Builder")


# Create ----------------------------------------------------------------------

def test_create_over_http_answers_201_and_the_account_can_log_in(client, admin_key, services):
    resp = client.simulate_post("/rest/user", params={"Bugzilla_api_key": admin_key},
                                json={"email": "new@example.com", "full_name": "New Person",
                                      "password": "  new-secret  "})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    login_name, real_name, disabled, email_enabled, password_hash = user_row(services, new_id)
    assert (login_name, real_name, disabled, email_enabled) == ("new@example.com", "New Person",
                                                                "", 1)
    assert "new-secret" not in password_hash
    assert can_log_in(client, "new@example.com", "new-secret")   # stripped
    assert not can_log_in(client, "new@example.com", "  new-secret  ")


def test_create_joins_the_groups_whose_regexp_matches(services):
    add_group(services, "example-staff", r"@example\.com$")
    new_id = services.call(user.create, {"email": "joe@example.com"}, as_user=ADMIN)["id"]
    # editbugs by its regexp '.*', and bz_canusewhines through editbugs (a
    # member group of it, as Bugzilla's installation makes it).
    assert all_groups(services, new_id) == {"editbugs", "bz_canusewhines", "example-staff"}
    assert direct_groups(services, new_id) == set()


def test_create_accepts_python_bugzillas_name_for_the_real_name(services):
    new_id = services.call(user.create, {"email": "n@example.com", "name": "Named"},
                           as_user=ADMIN)["id"]
    assert user_row(services, new_id)[1] == "Named"
    both = services.call(user.create, {"email": "m@example.com", "name": "Named",
                                       "full_name": "Full"}, as_user=ADMIN)["id"]
    assert user_row(services, both)[1] == "Full"


@pytest.mark.parametrize("password", [None, "", "   "])
def test_create_without_password_gives_an_account_that_cannot_log_in(client, services, password):
    params = {"email": "nopw@example.com"}
    if password is not None:
        params["password"] = password
    new_id = services.call(user.create, params, as_user=ADMIN)["id"]
    assert user_row(services, new_id)[4] is None
    assert not can_log_in(client, "nopw@example.com", "")


@freeze_time("2026-02-03 04:05:06")
def test_create_is_audited(services):
    new_id = services.call(user.create, {"email": "aud@example.com", "password": "aud-secret"},
                           as_user=ADMIN)["id"]
    assert audit_rows(services, new_id) == [("Bugzilla::User", None, None, None)]
    assert services.query("SELECT MAX(at_time) FROM audit_log")[0][0] == "2026-02-03 04:05:06"


@pytest.mark.parametrize("params, code", [
    ({}, 50),
    ({"email": "   "}, 50),
    ({"email": "no-at-sign"}, 501),
    ({"email": "two words@example.com"}, 501),
    ({"email": "jos\u00e9@example.com"}, 501),
    ({"email": "x" * 120 + "@example.com"}, 501),
    ({"email": "ADMIN@example.COM"}, 500),
    ({"email": "short@example.com", "password": "five5"}, 502),
])
def test_create_refuses_bad_input_and_stores_nothing(services, params, code):
    before = user_count(services)
    assert error_code(services, user.create, params, ADMIN) == code
    assert user_count(services) == before


def test_create_follows_the_emailregexp_parameter(services):
    set_param(services, "emailregexp", r"@example\.com$")
    assert error_code(services, user.create, {"email": "x@elsewhere.org"}, ADMIN) == 501
    assert services.call(user.create, {"email": "x@example.com"}, as_user=ADMIN)["id"]


@pytest.mark.parametrize("complexity, weak, strong", [
    ("mixed_letters", "alllowercase", "MixedCase"),
    ("letters_numbers", "MixedCase", "MixedCase9"),
    ("letters_numbers_specialchars", "letters99", "letters99!"),
])
def test_create_follows_password_complexity(services, complexity, weak, strong):
    set_param(services, "password_complexity", complexity)
    assert error_code(services, user.create, {"email": "w@example.com", "password": weak},
                      ADMIN) == 305
    assert services.call(user.create, {"email": "w@example.com", "password": strong},
                         as_user=ADMIN)["id"]


def test_create_needs_editusers(client, services, plain):
    assert error_code(services, user.create, {"email": "x@example.com"}, plain) == 304
    key = services.api_key("plain@example.com")
    resp = client.simulate_post("/rest/user", params={"Bugzilla_api_key": key},
                                json={"email": "x@example.com"})
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    assert not services.query("SELECT id FROM users WHERE login = 'x@example.com'")


def test_create_while_logged_out_is_304_on_every_transport(client, services):
    # 304, not 410: the reference's own web-service tests expect it.
    assert error_code(services, user.create, {"email": "x@example.com"}) == 304
    resp = client.simulate_post("/rest/user", json={"email": "x@example.com"})
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    resp = client.simulate_post("/jsonrpc.cgi", json={"method": "User.create", "id": 1,
                                                      "params": [{"email": "x@example.com"}]})
    assert resp.json["error"]["code"] == 304
    body = xmlrpc.client.dumps(({"email": "x@example.com"},), "User.create")
    resp = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(resp.content)
    assert fault.value.faultCode == 304
    assert not services.query("SELECT id FROM users WHERE login = 'x@example.com'")


def test_create_while_logged_out_is_410_when_requirelogin_is_on(client, services):
    services.call(lambda ctx, params: ctx.conn.execute(
        "UPDATE params SET value = '1' WHERE name = 'requirelogin'"))
    resp = client.simulate_post("/rest/user", json={"email": "x@example.com"})
    assert (resp.status_code, resp.json["code"]) == (401, 410)


# Update: fields ----------------------------------------------------------------

def test_update_changes_fields_and_answers_changes_with_api_names(services, bob):
    result = services.call(user.update, {"ids": [bob], "full_name": " Robert ",
                                         "email_enabled": False,
                                         "login_denied_text": "On leave"}, as_user=ADMIN)
    assert result == {"users": [{"id": bob, "changes": {
        "full_name": {"removed": "Bob Builder", "added": "Robert"},
        "email_enabled": {"removed": "1", "added": "0"},
        "login_denied_text": {"removed": "", "added": "On leave"}}}]}
    assert user_row(services, bob)[1:4] == ("Robert", "On leave", 0)
    assert {(field, removed, added) for _, field, removed, added in audit_rows(services, bob)} == {
        ("full_name", "Bob Builder", "Robert"), ("email_enabled", "1", "0"),
        ("login_denied_text", "", "On leave")}


def test_update_without_a_real_change_answers_empty_changes(services, bob):
    result = services.call(user.update, {"names": ["bob@example.com"],
                                         "full_name": "Bob Builder"}, as_user=ADMIN)
    assert result == {"users": [{"id": bob, "changes": {}}]}
    assert audit_rows(services, bob) == []


def test_disabling_an_account_ends_its_sessions(client, services, bob):
    token = client.simulate_get("/rest/login", params={"login": "bob@example.com",
                                                       "password": "bob-secret"}).json["token"]
    services.call(user.update, {"ids": [bob], "login_denied_text": "Bye"}, as_user=ADMIN)
    assert services.query("SELECT COUNT(*) FROM login_tokens WHERE user_id = ?", (bob,))[0][0] == 0
    resp = client.simulate_get("/rest/user", params={"ids": bob, "Bugzilla_token": token})
    assert resp.json["code"] == 32000


def test_password_change_works_ends_sessions_and_never_shows(client, services, bob):
    token = client.simulate_get("/rest/login", params={"login": "bob@example.com",
                                                       "password": "bob-secret"}).json["token"]
    old_hash = user_row(services, bob)[4]
    result = services.call(user.update, {"ids": [bob], "password": " brand-new "}, as_user=ADMIN)
    assert result == {"users": [{"id": bob, "changes": {}}]}
    new_hash = user_row(services, bob)[4]
    assert new_hash != old_hash and "brand-new" not in new_hash
    assert can_log_in(client, "bob@example.com", "brand-new")
    assert not can_log_in(client, "bob@example.com", "bob-secret")
    assert client.simulate_get("/rest/user", params={"ids": bob, "Bugzilla_token": token}
                               ).json["code"] == 32000
    assert audit_rows(services, bob) == [("Bugzilla::User", "password", None, None)]
    everything = str(services.query("SELECT * FROM audit_log"))
    assert new_hash not in everything and old_hash not in everything


@pytest.mark.parametrize("password, code", [("short", 502), ("", 502), ("   ", 502)])
def test_update_refuses_a_bad_password(services, bob, password, code):
    before = user_row(services, bob)
    assert error_code(services, user.update, {"ids": [bob], "password": password,
                                              "full_name": "Changed"}, ADMIN) == code
    assert user_row(services, bob) == before


def test_email_change_renames_the_login_and_rederives_regexp_groups(client, services, bob):
    add_group(services, "partners", r"@partner\.org$")
    add_group(services, "example-staff", r"@example\.com$")
    services.call(user.update, {"ids": [bob], "full_name": "Bob"}, as_user=ADMIN)
    execute(services, "DELETE FROM user_groups WHERE user_id = ?", (bob,))
    execute(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                      " SELECT ?, id, 0, 2 FROM groups WHERE name IN ('editbugs', 'example-staff')",
            (bob,))
    result = services.call(user.update, {"ids": [bob], "email": "bob@partner.org"}, as_user=ADMIN)
    assert result["users"][0]["changes"] == {
        "email": {"removed": "bob@example.com", "added": "bob@partner.org"}}
    assert all_groups(services, bob) == {"editbugs", "bz_canusewhines", "partners"}
    assert can_log_in(client, "bob@partner.org", "bob-secret")


def test_email_change_of_case_only_is_allowed(services, bob):
    services.call(user.update, {"ids": [bob], "email": "Bob@Example.com"}, as_user=ADMIN)
    assert user_row(services, bob)[0] == "Bob@Example.com"


@pytest.mark.parametrize("email, code", [("admin@EXAMPLE.com", 500), ("not an address", 501)])
def test_email_change_refuses_taken_or_invalid_addresses(services, bob, email, code):
    assert error_code(services, user.update, {"ids": [bob], "email": email}, ADMIN) == code
    assert user_row(services, bob)[0] == "bob@example.com"


def test_email_change_of_several_accounts_is_an_error(services, bob, plain):
    assert error_code(services, user.update, {"ids": [bob, plain], "email": "same@example.com",
                                              "full_name": "X"}, ADMIN) == 500
    assert user_row(services, bob)[:2] == ("bob@example.com", "Bob Builder")
    assert user_row(services, plain)[:2] == ("plain@example.com", "Plain Person")


def test_update_of_several_accounts_by_path_ids_and_names(client, admin_key, services, bob, plain):
    resp = client.simulate_put(f"/rest/user/{bob}", params={"Bugzilla_api_key": admin_key},
                               json={"names": ["plain@example.com"], "full_name": "Same"})
    assert resp.status_code == 200
    assert [u["id"] for u in resp.json["users"]] == [bob, plain]
    assert user_row(services, bob)[1] == user_row(services, plain)[1] == "Same"


def test_python_bugzilla_style_update_by_login_in_path(client, admin_key, services, bob):
    resp = client.simulate_put("/rest/user/bob@example.com", params={"Bugzilla_api_key": admin_key},
                               json={"names": ["bob@example.com"], "email_enabled": 0})
    assert resp.json == {"users": [{"id": bob, "changes": {
        "email_enabled": {"added": "0", "removed": "1"}}}]}


@pytest.mark.parametrize("params, code", [
    ({"full_name": "X"}, 50),
    ({"ids": [9999], "full_name": "X"}, 51),
    ({"names": ["nobody@example.com"], "full_name": "X"}, 51),
])
def test_update_needs_existing_accounts(services, bob, params, code):
    assert error_code(services, user.update, params, ADMIN) == code


def test_update_with_one_unknown_account_changes_nothing(services, bob):
    assert error_code(services, user.update, {"ids": [bob, 9999], "full_name": "X"}, ADMIN) == 51
    assert user_row(services, bob)[1] == "Bob Builder"


def test_update_needs_editusers(client, services, bob, plain):
    assert error_code(services, user.update, {"ids": [bob], "full_name": "X"}, plain) == 304
    resp = client.simulate_put(f"/rest/user/{bob}", json={"full_name": "X"})
    assert (resp.status_code, resp.json["code"]) == (401, 410)
    assert user_row(services, bob)[1] == "Bob Builder"


# Update: groups ----------------------------------------------------------------

@pytest.fixture
def teams(services):
    return {name: add_group(services, name) for name in ("red", "green", "blue")}


def test_groups_add_and_remove_report_names(services, bob, teams):
    result = services.call(user.update, {"ids": [bob], "groups": {"add": ["red", teams["green"]]}},
                           as_user=ADMIN)
    assert result["users"][0]["changes"] == {"groups": {"removed": "", "added": "green, red"}}
    result = services.call(user.update, {"ids": [bob], "groups": {"remove": ["RED"],
                                                                  "add": ["blue"]}}, as_user=ADMIN)
    assert result["users"][0]["changes"] == {"groups": {"removed": "red", "added": "blue"}}
    assert direct_groups(services, bob) == {"green", "blue"}
    assert ("groups", "red", "blue") in [row[1:] for row in audit_rows(services, bob)]


def test_set_wins_over_add_and_remove(services, bob, teams):
    services.call(user.update, {"ids": [bob], "groups": {"add": ["red"]}}, as_user=ADMIN)
    services.call(user.update, {"ids": [bob], "groups": {
        "set": ["green"], "add": ["blue"], "remove": ["green"]}}, as_user=ADMIN)
    assert direct_groups(services, bob) == {"green"}


def test_a_group_both_added_and_removed_is_added(services, bob, teams):
    services.call(user.update, {"ids": [bob], "groups": {"add": ["red"], "remove": ["red"]}},
                  as_user=ADMIN)
    assert direct_groups(services, bob) == {"red"}


def test_group_changes_leave_regexp_memberships(services, bob, teams):
    result = services.call(user.update,
                           {"ids": [bob], "groups": {"set": [], "remove": ["editbugs"]}},
                           as_user=ADMIN)
    assert result["users"][0]["changes"] == {}
    assert "editbugs" in all_groups(services, bob)


def make_blesser(services):
    """An account that may bless red and green and is in no admin group."""
    return services.add_user("blesser@example.com", bless=("red", "green"))


@pytest.fixture
def blesser(services, teams):
    return make_blesser(services)


def test_a_blesser_may_change_the_groups_it_may_bless(services, bob, blesser):
    result = services.call(user.update, {"names": ["bob@example.com"], "groups": {"add": ["red"]}},
                           as_user=blesser)
    assert result["users"][0]["changes"] == {"groups": {"removed": "", "added": "red"}}


def test_naming_a_group_without_bless_right_is_304_and_changes_nothing(services, bob, blesser):
    assert error_code(services, user.update, {"ids": [bob], "groups": {"add": ["red", "blue"]}},
                      blesser) == 304
    assert error_code(services, user.update, {"ids": [bob], "groups": {"set": ["no-such-group"]}},
                      blesser) == 304
    assert direct_groups(services, bob) == set()


def test_set_keeps_the_groups_the_caller_may_not_bless(services, bob, blesser):
    services.call(user.update, {"ids": [bob], "groups": {"add": ["red", "blue"]}}, as_user=ADMIN)
    result = services.call(user.update, {"ids": [bob], "groups": {"set": ["green"]}},
                           as_user=blesser)
    assert result["users"][0]["changes"] == {"groups": {"removed": "red", "added": "green"}}
    assert direct_groups(services, bob) == {"blue", "green"}


def test_a_blesser_may_change_nothing_else(services, bob, blesser):
    for params in ({"full_name": "X"}, {"bless_groups": {"add": ["red"]}},
                   {"password": "another-secret"}):
        assert error_code(services, user.update, {"ids": [bob], **params}, blesser) == 304
    assert user_row(services, bob)[1] == "Bob Builder"
    assert direct_groups(services, bob, is_bless=1) == set()


def test_bless_groups_give_the_right_to_bless(services, bob, plain, teams):
    result = services.call(user.update, {"ids": [bob], "bless_groups": {"add": ["blue"]}},
                           as_user=ADMIN)
    assert result["users"][0]["changes"] == {"bless_groups": {"removed": "", "added": "blue"}}
    assert direct_groups(services, bob, is_bless=1) == {"blue"}
    services.call(user.update, {"ids": [plain], "groups": {"add": ["blue"]}}, as_user=bob)
    assert direct_groups(services, plain) == {"blue"}


@pytest.mark.parametrize("groups", ["red", {"add": "red"}, {"set": {"red": 1}}])
def test_malformed_groups_object_is_53(services, bob, teams, groups):
    assert error_code(services, user.update, {"ids": [bob], "groups": groups}, ADMIN) == 53


# Get -------------------------------------------------------------------------

def test_get_logged_out_by_name_shows_id_name_and_real_name_only(client, bob):
    resp = client.simulate_get("/rest/user", params={"names": "bob@example.com"})
    assert resp.json == {"users": [{"id": bob, "name": "bob@example.com",
                                    "real_name": "Bob Builder"}]}
    assert client.simulate_get("/rest/user/bob@example.com").json == resp.json


@pytest.mark.parametrize("params", [{"ids": 1}, {"match": "bob"}, {"ids": 1, "names": ADMIN}])
def test_get_logged_out_by_id_or_match_is_505(client, bob, params):
    resp = client.simulate_get("/rest/user", params=params)
    assert (resp.status_code, resp.json["code"]) == (401, 505)


def test_python_bugzilla_login_probe(client, admin_key):
    assert client.simulate_get("/rest/user", params={"ids": 1}).json["code"] == 505
    resp = client.simulate_get("/rest/user", params={"ids": 1, "Bugzilla_api_key": admin_key})
    assert resp.status_code == 200 and resp.json["users"][0]["name"] == ADMIN


def test_get_by_path_id(client, admin_key, bob):
    resp = client.simulate_get(f"/rest/user/{bob}", params={"Bugzilla_api_key": admin_key})
    assert [u["id"] for u in resp.json["users"]] == [bob]


def test_get_without_selection_is_50(services, plain):
    assert error_code(services, user.get, {}, plain) == 50


@pytest.mark.parametrize("params", [{"ids": [9999]}, {"names": ["nobody@example.com"]}])
def test_get_unknown_account_is_51(client, admin_key, params):
    resp = client.simulate_get("/rest/user", params={**params, "Bugzilla_api_key": admin_key})
    assert (resp.status_code, resp.json["code"]) == (404, 51)


def test_plain_user_sees_basic_fields_and_only_blessable_groups(services, plain, bob, teams):
    services.call(user.update, {"ids": [bob], "groups": {"add": ["red"]}}, as_user=ADMIN)
    found = services.call(user.get, {"ids": [bob]}, as_user=plain)["users"][0]
    assert found == {"id": bob, "real_name": "Bob Builder", "name": "bob@example.com",
                     "email": "bob@example.com", "can_login": True, "groups": []}


def test_blesser_sees_the_groups_it_may_bless(services, bob, blesser):
    services.call(user.update, {"ids": [bob], "groups": {"add": ["red", "blue"]}}, as_user=ADMIN)
    found = services.call(user.get, {"ids": [bob]}, as_user=blesser)["users"][0]
    assert [g["name"] for g in found["groups"]] == ["red"]


def test_own_account_shows_all_groups_and_saved_searches(services, plain, teams):
    services.call(user.update, {"ids": [plain], "groups": {"add": ["red"]}}, as_user=ADMIN)
    execute(services, "INSERT INTO saved_searches (user_id, name, query) VALUES (?, 'Mine',"
                      " 'product=TestProduct')", (plain,))
    execute(services, "INSERT INTO saved_reports (user_id, name, query) VALUES (?, 'Chart',"
                      " 'x_axis_field=priority')", (plain,))
    found = services.call(user.get, {"names": ["plain@example.com"]}, as_user=plain)["users"][0]
    assert [g["name"] for g in found["groups"]] == ["bz_canusewhines", "editbugs", "red"]
    assert found["groups"][2] == {"id": teams["red"], "name": "red", "description": "red people"}
    assert [s["name"] for s in found["saved_searches"]] == ["Mine"]
    assert found["saved_searches"][0]["query"] == "product=TestProduct"
    assert [s["name"] for s in found["saved_reports"]] == ["Chart"]
    assert "email_enabled" not in found and "login_denied_text" not in found


def test_editusers_sees_details_but_not_others_saved_searches(services, plain):
    execute(services, "INSERT INTO saved_searches (user_id, name, query) VALUES (?, 'Mine', 'a=b')",
            (plain,))
    execute(services, "UPDATE users SET disabled_text = 'Gone', email_enabled = 0 WHERE id = ?",
            (plain,))
    found = services.call(user.get, {"ids": [plain]}, as_user=ADMIN)["users"][0]
    assert found["email_enabled"] is False and found["login_denied_text"] == "Gone"
    assert found["can_login"] is False
    assert [g["name"] for g in found["groups"]] == ["bz_canusewhines", "editbugs"]
    assert "saved_searches" not in found and "saved_reports" not in found


def test_get_include_fields_over_http(client, admin_key, bob):
    resp = client.simulate_get("/rest/user", params={"ids": bob, "include_fields": "name,groups",
                                                     "Bugzilla_api_key": admin_key})
    assert resp.json["users"][0].keys() == {"name", "groups"}


def test_logged_out_e_mail_filter(client, services, bob):
    set_param(services, "webservice_email_filter", "1")
    resp = client.simulate_get("/rest/user", params={"names": "bob@example.com"})
    assert resp.json["users"][0]["name"] == "bob"


def test_email_carries_the_emailsuffix(services, plain):
    set_param(services, "emailsuffix", "@mail.example.com")
    found = services.call(user.get, {"ids": [plain]}, as_user=plain)["users"][0]
    assert (found["name"], found["email"]) == ("plain@example.com",
                                               "plain@example.com@mail.example.com")


# Get: match ----------------------------------------------------------------------

@pytest.fixture
def crowd(services):
    return {
        "ann": services.add_user("ann@example.com", real_name="Ann Smith"),
        "annette": services.add_user("annette@example.com", real_name="Annette Jones"),
        "joe": services.add_user("joe@other.org", real_name="Joe Annandale"),
        "old": services.add_user("oldann@example.com", real_name="Old", disabled_text="Left"),
    }


def matched(services, as_user, **params):
    return [u["name"] for u in services.call(user.get, params, as_user=as_user)["users"]]


def test_match_finds_logins_and_real_names_containing_the_text(services, plain, crowd):
    assert matched(services, plain, match=["ANN"]) == [
        "ann@example.com", "annette@example.com", "joe@other.org"]


def test_match_on_an_exact_login_returns_that_account_alone(services, plain, crowd):
    assert matched(services, plain, match=["ann@example.com"]) == ["ann@example.com"]
    assert matched(services, plain, match=["oldann@example.com"]) == ["oldann@example.com"]


def test_match_leaves_out_disabled_accounts_unless_asked(services, plain, crowd):
    assert "oldann@example.com" in matched(services, plain, match=["ann"], include_disabled=True)
    assert "oldann@example.com" not in matched(services, plain, match=["ann"])


def test_match_wildcard(services, plain, crowd):
    assert matched(services, plain, match=["ann*"]) == ["ann@example.com", "annette@example.com"]
    assert matched(services, plain, match=["*@other.org"]) == ["joe@other.org"]


def test_match_treats_like_characters_literally(services, plain, crowd):
    assert matched(services, plain, match=["%"]) == []
    assert matched(services, plain, match=["a_n"]) == []


def test_match_limit_is_per_string_and_capped_by_maxusermatches(services, plain, crowd):
    assert matched(services, plain, match=["ann", "plain"], limit=1) == [
        "ann@example.com", "plain@example.com"]
    set_param(services, "maxusermatches", "2")
    assert len(matched(services, plain, match=["ann"])) == 2
    assert len(matched(services, plain, match=["ann"], limit=5)) == 2
    set_param(services, "maxusermatches", "0")
    assert len(matched(services, plain, match=["ann"])) == 3


def test_match_negative_limit_is_52(services, plain, crowd):
    assert error_code(services, user.get, {"match": ["ann"], "limit": -1}, plain) == 52


def test_match_and_names_are_returned_once(services, plain, crowd):
    assert matched(services, plain, names=["ann@example.com"], match=["ann", "Smith"]) == [
        "ann@example.com", "annette@example.com", "joe@other.org"]


# Get: group filter -----------------------------------------------------------------

def test_groups_filter_keeps_members_of_any_listed_group(services, plain, crowd, teams):
    for who, team in (("ann", "red"), ("joe", "green")):
        execute(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                          " VALUES (?, ?, 0, 0)", (crowd[who], teams[team]))
    assert matched(services, ADMIN, match=["ann"], groups=["red", "green"]) == [
        "ann@example.com", "joe@other.org"]
    assert matched(services, ADMIN, match=["ann"], group_ids=[teams["green"]]) == ["joe@other.org"]


def test_groups_filter_needs_the_callers_own_groups(services, plain, crowd, teams):
    assert error_code(services, user.get, {"match": ["ann"], "groups": ["red"]}, plain) == 804
    assert error_code(services, user.get, {"match": ["ann"], "group_ids": [teams["red"]]},
                      plain) == 804
    assert error_code(services, user.get, {"match": ["ann"], "groups": ["no-such"]}, plain) == 804
    # An unknown group id answers like a group the caller may not use.
    assert error_code(services, user.get, {"match": ["ann"], "group_ids": [9999]}, plain) == 804
    assert matched(services, plain, match=["ann"], groups=["editbugs"]) == [
        "ann@example.com", "annette@example.com", "joe@other.org"]


def test_groups_filter_works_for_a_blesser(services, crowd, blesser, teams):
    execute(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                      " VALUES (?, ?, 0, 0)", (crowd["ann"], teams["red"]))
    assert matched(services, blesser, match=["ann"], groups=["red"]) == ["ann@example.com"]


def test_an_unknown_group_id_is_51_to_who_sees_every_group(services, crowd, teams):
    assert error_code(services, user.get, {"match": ["ann"], "group_ids": [9999]}, ADMIN) == 51
    assert error_code(services, user.get, {"match": ["ann"], "groups": ["no-such"]},
                      ADMIN) == 804
    assert matched(services, ADMIN, match=["  "]) == []


# Visibility ------------------------------------------------------------------------

@pytest.fixture
def isolated(services, plain, bob, teams):
    """usevisibilitygroups on, editbugs granted to nobody by regexp; plain
    and carol are members of red, whose members see red's members (the
    grant an administrator sets on editgroups.cgi); bob is in no group."""
    set_param(services, "usevisibilitygroups", "1")
    editbugs_only_for_members(services)
    carol = services.add_user("carol@example.com", real_name="Carol")
    for member in (plain, carol):
        execute(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                          " VALUES (?, ?, 0, 0)", (member, teams["red"]))
    grant_visibility(services, "red", "red")
    return carol


def join(services, user_id, group):
    execute(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                      " VALUES (?, (SELECT id FROM groups WHERE name = ?), 0, 0)",
            (user_id, group))


def test_visibility_off_everyone_sees_everyone(services, plain, bob):
    assert matched(services, plain, ids=[bob]) == ["bob@example.com"]


def test_visibility_on_hides_accounts_outside_the_granted_groups(services, plain, bob, isolated):
    assert error_code(services, user.get, {"ids": [bob]}, plain) == 304
    assert error_code(services, user.get, {"names": ["bob@example.com"]}, plain) == 304
    assert matched(services, plain, match=["example.com"]) == [
        "carol@example.com", "plain@example.com"]
    assert matched(services, plain, match=["bob@example.com"]) == []
    assert matched(services, plain, ids=[isolated, plain]) == ["carol@example.com",
                                                               "plain@example.com"]


def test_visibility_on_a_shared_group_without_a_grant_shows_nobody(services, plain, bob, teams,
                                                                     isolated):
    """Sharing green, with no grant on it, shows nobody; not even one's own
    account is visible without a grant on a group one is in."""
    dave = services.add_user("dave@example.com", real_name="Dave")
    for member in (dave, bob):
        join(services, member, "green")
    assert error_code(services, user.get, {"ids": [bob]}, dave) == 304
    assert error_code(services, user.get, {"ids": [dave]}, dave) == 304
    assert matched(services, dave, match=["example.com"]) == []
    assert matched(services, bob, match=["*"]) == []


def test_visibility_on_a_grant_shows_one_way_and_through_inheritance(services, plain, bob, teams,
                                                                     isolated):
    """Members of green see red's members once green has a grant on red;
    red's members do not see green's. Members of blue, whose members are
    members of red, are seen as red's."""
    dave = services.add_user("dave@example.com", real_name="Dave")
    join(services, dave, "green")
    assert matched(services, dave, match=["example.com"]) == []
    grant_visibility(services, "green", "red")
    assert matched(services, dave, match=["example.com"]) == ["carol@example.com",
                                                              "plain@example.com"]
    assert error_code(services, user.get, {"ids": [dave]}, plain) == 304
    join(services, bob, "blue")
    assert error_code(services, user.get, {"ids": [bob]}, dave) == 304
    services.call(group_service.update_inheritance, {"id": teams["red"],
                                                     "member_groups": ["blue"]}, as_user=ADMIN)
    assert matched(services, dave, ids=[bob]) == ["bob@example.com"]
    assert matched(services, plain, ids=[bob]) == ["bob@example.com"]


def test_visibility_on_the_administrator_sees_the_members_of_every_group(services, plain, bob,
                                                                         isolated):
    """The admin group holds a grant on every other group (a fresh
    installation's and each new group's), so the administrator sees every
    member of a group, but in User.get not an account in no group at all;
    editusers.cgi's list shows it every account."""
    assert matched(services, ADMIN, match=["example.com"]) == [
        "admin@example.com", "carol@example.com", "plain@example.com"]
    assert error_code(services, user.get, {"ids": [bob]}, ADMIN) == 304
    listed = services.call(user.find_to_edit, {"match": ["example.com"]}, as_user=ADMIN)
    assert "bob@example.com" in [u["name"] for u in listed["users"]]
    assert [u["name"] for u in services.call(user.find_to_edit, {"ids": [bob]},
                                             as_user=ADMIN)["users"]] == ["bob@example.com"]
    join(services, bob, "canconfirm")
    assert matched(services, ADMIN, ids=[bob]) == ["bob@example.com"]


def test_visibility_on_editusers_alone_sees_only_on_editusers_page(services, plain, bob,
                                                                   isolated):
    """A member of editusers (outside admin) sees nobody in User.get without
    a grant of its own, and every account in editusers.cgi's list; a plain
    member of red lists only what User.get shows it."""
    keeper = services.add_user("keeper@example.com", real_name="Keeper")
    join(services, keeper, "editusers")
    assert matched(services, keeper, match=["example.com"]) == []
    assert error_code(services, user.get, {"ids": [plain]}, keeper) == 304
    listed = services.call(user.find_to_edit, {"match": ["example.com"]}, as_user=keeper)
    assert {"bob@example.com", "plain@example.com", "keeper@example.com"} <= {
        u["name"] for u in listed["users"]}
    listed = services.call(user.find_to_edit, {"match": ["example.com"]}, as_user=plain)
    assert [u["name"] for u in listed["users"]] == ["carol@example.com", "plain@example.com"]
    assert error_code(services, user.find_to_edit, {"ids": [bob]}, plain) == 304


def test_visibility_on_logged_out_sees_nobody_by_name(client, services, bob, isolated):
    resp = client.simulate_get("/rest/user", params={"names": "bob@example.com"})
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    resp = client.simulate_get("/rest/user", params={"names": "plain@example.com"})
    assert (resp.status_code, resp.json["code"]) == (401, 304)


def test_visibility_on_over_rest_and_rpc(client, services, plain, bob, isolated):
    key = {"X-BUGZILLA-API-KEY": services.api_key("plain@example.com")}
    resp = client.simulate_get("/rest/user", params={"match": "example.com"}, headers=key)
    assert [u["name"] for u in resp.json["users"]] == ["carol@example.com", "plain@example.com"]
    resp = client.simulate_get(f"/rest/user/{bob}", headers=key)
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    body = xmlrpc.client.dumps(({"ids": [bob], "Bugzilla_api_key": services.api_key(
        "plain@example.com")},), "User.get")
    resp = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(resp.content)
    assert fault.value.faultCode == 304
    body = xmlrpc.client.dumps(({"ids": [isolated], "Bugzilla_api_key": services.api_key(
        "plain@example.com")},), "User.get")
    resp = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    assert [u["name"] for u in xmlrpc.client.loads(resp.content)[0][0]["users"]] == [
        "carol@example.com"]


def test_visibility_on_a_blesser_cannot_edit_invisible_accounts(services, bob, isolated, teams):
    blesser_id = make_blesser(services)
    assert error_code(services, user.update, {"ids": [bob], "groups": {"add": ["red"]}},
                      blesser_id) == 304
    assert direct_groups(services, bob) == set()
