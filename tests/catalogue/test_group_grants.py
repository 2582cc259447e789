"""Bless and visibility grants between groups (Bugzilla's group_group_map
grant types 1 and 2), shown and set on a group's page in editgroups.cgi
beside its inheritance: members of a group with a bless grant on another
add and remove that group's members (over REST and on editusers.cgi, and
nothing else of an account); with usevisibilitygroups on, members of a group
with a visibility grant on another see that group's members. Refused to a
plain user and a visitor."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_bug_group, editbugs_only_for_members, set_param
from page_support import Browser


LEAD, PLAIN, PARTNER = "lead@example.com", "plain@example.com", "partner@example.com"
PASSWORD = "grants-password-1"


@pytest.fixture
def world(services):
    """Groups leads (LEAD), team, partners (PARTNER); PLAIN in none.
    editbugs is an ordinary group, so nobody shares a group by default."""
    for login in (LEAD, PLAIN, PARTNER):
        services.add_user(login, password=PASSWORD, real_name=login.split("@")[0].title())
    editbugs_only_for_members(services)
    ids = {"leads": add_bug_group(services, "leads", members=(LEAD,), with_admin=False),
           "team": add_bug_group(services, "team", with_admin=False),
           "partners": add_bug_group(services, "partners", members=(PARTNER,),
                                     with_admin=False)}
    return ids


def signed_in(app, login, password=PASSWORD):
    browser = Browser(app)
    browser.login(login, password)
    return browser


def grant(app, world, group, bless=(), visible=()):
    """Set `group`'s bless and visibility grants on its page, as an administrator."""
    admin = signed_in(app, ADMIN, ADMIN_PASSWORD)
    admin.get(f"/editgroups.cgi?action=changeform&group={world[group]}")
    return admin.post("/editgroups.cgi", {"action": "inheritance", "group": world[group],
                                          "grants": "1", "bless_groups": list(bless),
                                          "visible_to": list(visible)})


def grants(services):
    """The grants but the admin group's (which sees every group's members)."""
    return services.query("SELECT m.name, g.name, gg.grant_type FROM group_grants gg"
                          " JOIN groups m ON m.id = gg.member_id"
                          " JOIN groups g ON g.id = gg.grantor_id WHERE m.name <> 'admin'"
                          " ORDER BY 1, 2, 3")


def admin_sees(services):
    """Names of the groups the admin group has a visibility grant on."""
    return {row[0] for row in services.query(
        "SELECT g.name FROM group_grants gg JOIN groups m ON m.id = gg.member_id"
        " JOIN groups g ON g.id = gg.grantor_id WHERE m.name = 'admin' AND gg.grant_type = 2")}


def test_the_admin_group_sees_every_other_group_and_each_new_one(app, client, services):
    """As Bugzilla's installation and its group creation: the admin group
    holds a visibility grant on every other group (not on itself), a group
    made on editgroups.cgi or over REST gets one, shown checked on its page."""
    every = {row[0] for row in services.query("SELECT name FROM groups")}
    assert admin_sees(services) == every - {"admin"}
    key = {"X-BUGZILLA-API-KEY": services.api_key(ADMIN)}
    made = client.simulate_post("/rest/group", headers=key, json={
        "name": "newcomers", "description": "New people"})
    assert made.status_code == 201
    assert "newcomers" in admin_sees(services)
    page = signed_in(app, ADMIN, ADMIN_PASSWORD).get(
        f"/editgroups.cgi?action=changeform&group={made.json['id']}").text
    assert 'name="visible_to" value="admin" checked' in page
    assert grants(services) == []


def test_the_grants_are_shown_and_changed_on_the_group_page(app, services, world):
    saved = grant(app, world, "team", bless=["leads"], visible=["leads", "team"])
    assert saved.status_code == 200 and 'role="status"' in saved.text
    assert grants(services) == [("leads", "team", 1), ("leads", "team", 2),
                                ("team", "team", 2)]
    page = saved.text
    assert 'name="bless_groups" value="leads" checked' in page
    assert 'name="visible_to" value="team" checked' in page
    assert 'name="bless_groups" value="partners" checked' not in page
    assert services.query("SELECT field, added FROM audit_log WHERE class = 'Bugzilla::Group'"
                          " AND field IN ('bless_groups', 'visible_to') ORDER BY field") == [
        ("bless_groups", "leads"), ("visible_to", "leads, team")]
    # The inheritance form of before (without the grants) leaves them alone.
    admin = signed_in(app, ADMIN, ADMIN_PASSWORD)
    admin.get(f"/editgroups.cgi?action=changeform&group={world['team']}")
    admin.post("/editgroups.cgi", {"action": "inheritance", "group": world["team"],
                                   "member_groups": ["partners"]})
    assert len(grants(services)) == 3
    grant(app, world, "team")
    assert grants(services) == []


def test_plain_users_and_visitors_cannot_read_or_set_grants(app, services, world):
    path = f"/editgroups.cgi?action=changeform&group={world['team']}"
    plain = signed_in(app, PLAIN)
    refused = plain.get(path)
    assert refused.status_code == 401 and "Sorry" in refused.text
    assert 'name="bless_groups"' not in refused.text
    plain.get("/")
    posted = plain.post("/editgroups.cgi", {"action": "inheritance", "group": world["team"],
                                            "grants": "1", "bless_groups": ["leads"]})
    assert posted.status_code == 401
    visitor = Browser(app).get(path)
    assert visitor.status_code == 401 and "Sign in" in visitor.text
    assert grants(services) == []


def test_a_blesser_changes_that_groups_membership_over_rest(app, client, services, world):
    key = {"X-BUGZILLA-API-KEY": services.api_key(LEAD)}
    body = {"groups": {"add": ["team"]}}
    assert client.simulate_put(f"/rest/user/{PLAIN}", headers=key, json=body).json["code"] == 304
    grant(app, world, "team", bless=["leads"])
    done = client.simulate_put(f"/rest/user/{PLAIN}", headers=key, json=body)
    assert done.status_code == 200, done.text
    other = client.simulate_put(f"/rest/user/{PLAIN}", headers=key,
                                json={"groups": {"add": ["partners"]}})
    assert other.status_code == 401 and other.json["code"] == 304
    renamed = client.simulate_put(f"/rest/user/{PLAIN}", headers=key,
                                  json={"full_name": "Someone else"})
    assert renamed.status_code == 401 and renamed.json["code"] == 304
    plain_key = {"X-BUGZILLA-API-KEY": services.api_key(PLAIN)}
    assert client.simulate_put(f"/rest/user/{LEAD}", headers=plain_key,
                               json=body).json["code"] == 304
    assert client.simulate_put(f"/rest/user/{LEAD}", json=body).json["code"] == 410
    assert services.query("SELECT g.name FROM user_groups ug JOIN users u ON u.id = ug.user_id"
                          " JOIN groups g ON g.id = ug.group_id WHERE u.login = ?",
                          (PLAIN,)) == [("team",)]


def test_a_blesser_changes_that_membership_on_editusers(app, services, world):
    grant(app, world, "team", bless=["leads"])
    plain_id = services.user_id(PLAIN)
    lead = signed_in(app, LEAD)
    page = lead.get(f"/editusers.cgi?action=edit&userid={plain_id}")
    assert page.status_code == 200 and 'value="team"' in page.text
    assert 'name="login"' not in page.text and 'value="partners"' not in page.text
    lead.post("/editusers.cgi", {"action": "update", "userid": plain_id,
                                 "groups_shown": ["team"], "groups": ["team"]})
    in_team = "SELECT COUNT(*) FROM user_groups ug JOIN groups g ON g.id = ug.group_id" \
              " WHERE g.name = 'team' AND ug.user_id = ?"
    assert services.query(in_team, (plain_id,)) == [(1,)]
    assert lead.get("/editusers.cgi?action=add").status_code == 401
    plain = signed_in(app, PLAIN)
    assert plain.get(f"/editusers.cgi?action=edit&userid={plain_id}").status_code == 401
    assert Browser(app).get("/editusers.cgi").status_code == 401


def test_visibility_grants_show_accounts_while_usevisibilitygroups_is_on(app, client, services,
                                                                         world):
    set_param(services, "usevisibilitygroups", "1")
    key = {"X-BUGZILLA-API-KEY": services.api_key(LEAD)}

    def lead_finds(text):
        answer = client.simulate_get("/rest/user", params={"match": text}, headers=key)
        return [user["name"] for user in answer.json["users"]]
    assert lead_finds("partner") == []
    grant(app, world, "partners", visible=["leads"])
    assert lead_finds("partner") == [PARTNER]
    # Only that way round, and never for someone outside the granted group.
    partner_key = {"X-BUGZILLA-API-KEY": services.api_key(PARTNER)}
    answer = client.simulate_get("/rest/user", params={"match": "lead"}, headers=partner_key)
    assert answer.json["users"] == []
    assert lead_finds("plain") == []


def test_editusers_lists_every_account_to_its_members_alone(app, client, services, world):
    """While usevisibilitygroups is on, editusers.cgi shows a member of
    editusers every account, even one in no group that User.get hides from
    it; a blesser finds there only the accounts its groups' grants show."""
    set_param(services, "usevisibilitygroups", "1")
    plain_id = services.query("SELECT id FROM users WHERE login = ?", (PLAIN,))[0][0]
    admin = signed_in(app, ADMIN, ADMIN_PASSWORD)
    assert PLAIN in admin.get("/editusers.cgi", matchstr="example.com").text
    opened = admin.get(f"/editusers.cgi?action=edit&userid={plain_id}")
    assert opened.status_code == 200 and PLAIN in opened.text
    key = {"X-BUGZILLA-API-KEY": services.api_key(ADMIN)}
    found = client.simulate_get("/rest/user", params={"match": "example.com"}, headers=key)
    assert PLAIN not in [user["name"] for user in found.json["users"]]
    assert PARTNER in [user["name"] for user in found.json["users"]]
    grant(app, world, "team", bless=["leads"])
    lead = signed_in(app, LEAD)
    listed = lead.get("/editusers.cgi", matchstr="example.com").text
    assert PLAIN not in listed and PARTNER not in listed
    assert lead.get(f"/editusers.cgi?action=edit&userid={plain_id}").status_code == 401
    grant(app, world, "partners", visible=["leads", "admin"])
    assert PARTNER in lead.get("/editusers.cgi", matchstr="example.com").text
