"""The administration pages: each area's forms do what its operations do,
for the members of its group, and refuse everyone else without changing
anything."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from conftest import world_fixture
from page_support import PASSWORDS, PLAIN, Browser, World


@world_fixture
def world(services):
    return World(services)


@pytest.fixture
def admin(app, world):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


@pytest.fixture
def plain(app, world):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    return browser


def test_a_product_with_components_versions_and_milestones(admin, services):
    admin.get("/editproducts.cgi?action=add")
    page = admin.post("/editproducts.cgi", {"action": "new", "name": "Router",
                                            "description": "Home routers", "version": "1.0"})
    assert page.status_code == 200 and "Product Router" in page.text
    admin.get("/editcomponents.cgi?product=Router&action=add")
    admin.post("/editcomponents.cgi", {"action": "new", "product": "Router", "name": "WiFi",
                                       "description": "Wireless", "default_assignee": PLAIN})
    admin.post("/editversions.cgi", {"action": "new", "product": "Router", "name": "2.0"})
    admin.post("/editmilestones.cgi", {"action": "new", "product": "Router", "name": "R2",
                                       "sort_key": "20"})
    page = admin.get("/editproducts.cgi?product=Router")
    assert "WiFi" in page.text and 'value="2.0"' in page.text and 'value="R2"' in page.text
    assert services.query("SELECT c.name, u.login FROM components c JOIN users u"
                          " ON u.id = c.default_assignee JOIN products p ON p.id = c.product_id"
                          " WHERE p.name = 'Router'") == [("WiFi", PLAIN)]
    version_id = services.query("SELECT id FROM versions WHERE name = '2.0'")[0][0]
    admin.post("/editversions.cgi", {"action": "update", "product": "Router",
                                     "id": version_id, "name": "2.0.1", "sort_key": "5"})
    assert services.query("SELECT name, sort_key, is_active FROM versions WHERE id = ?",
                          (version_id,)) == [("2.0.1", 5, 0)]


def test_a_refused_product_change_says_why_and_stores_nothing(admin, services):
    admin.get("/editproducts.cgi?action=add")
    before = services.table("products")
    page = admin.post("/editproducts.cgi", {"action": "new", "name": "TestProduct",
                                            "description": "again", "version": "1"})
    assert page.status_code == 400 and "702" in page.text
    assert services.table("products") == before


def test_users_are_created_put_in_groups_and_disabled(admin, services):
    admin.get("/editusers.cgi?action=add")
    page = admin.post("/editusers.cgi", {"action": "new", "login": "new@example.com",
                                         "name": "New Person", "password": "new password 1"})
    assert "User new@example.com" in page.text
    user_id = services.query("SELECT id FROM users WHERE login = 'new@example.com'")[0][0]
    fields = {"action": "update", "userid": user_id, "login": "new@example.com",
              "name": "New Person", "disabledtext": "Left the company",
              "groups_shown": ["staff", "secret"], "groups": ["staff"]}
    admin.post("/editusers.cgi", fields)
    assert services.query("SELECT disabled_text FROM users WHERE id = ?", (user_id,)) == [
        ("Left the company",)]
    assert services.query("SELECT g.name FROM user_groups ug JOIN groups g"
                          " ON g.id = ug.group_id WHERE ug.user_id = ? AND ug.grant_type = 0",
                          (user_id,)) == [("staff",)]
    found = admin.get("/editusers.cgi?matchstr=new@")
    assert "new@example.com" in found.text and "no (disabled)" in found.text


def test_groups_are_created_and_changed(admin, services):
    admin.get("/editgroups.cgi?action=add")
    page = admin.post("/editgroups.cgi", {"action": "new", "name": "testers",
                                          "desc": "The testers", "isactive": "1"})
    assert "Group testers" in page.text
    group_id = services.query("SELECT id FROM groups WHERE name = 'testers'")[0][0]
    # As Bugzilla's: the admin group is a member of the new group and may
    # bless it; the administrator is a member through it (derived), only.
    form = admin.get(f"/editgroups.cgi?action=changeform&group={group_id}").text
    assert 'name="member_groups" value="admin" checked' in form
    assert 'name="bless_groups" value="admin" checked' in form
    assert services.query("SELECT ug.is_bless, ug.grant_type FROM user_groups ug JOIN users u"
                          " ON u.id = ug.user_id WHERE u.login = ? AND ug.group_id = ?",
                          (ADMIN, group_id)) == [(0, 1)]
    admin.post("/editgroups.cgi", {"action": "update", "group": group_id, "name": "qa",
                                   "desc": "Quality", "regexp": "@example\\.com$"})
    assert services.query("SELECT name, description, user_regexp, is_active FROM groups"
                          " WHERE id = ?", (group_id,)) == [
        ("qa", "Quality", "@example\\.com$", 0)]


def test_keywords_are_created_and_changed(admin, services):
    admin.get("/editkeywords.cgi")
    admin.post("/editkeywords.cgi", {"action": "new", "name": "regression",
                                     "description": "It used to work"})
    keyword_id = services.query("SELECT id FROM keywords WHERE name = 'regression'")[0][0]
    admin.get(f"/editkeywords.cgi?action=edit&id={keyword_id}")
    admin.post("/editkeywords.cgi", {"action": "update", "id": keyword_id, "name": "regression",
                                     "description": "Worked before"})
    assert services.query("SELECT description, is_active FROM keywords") == [
        ("Worked before", 0)]


@pytest.mark.parametrize("path, fields", [
    ("/editproducts.cgi", {"action": "new", "name": "X", "description": "x", "version": "1"}),
    ("/editcomponents.cgi", {"action": "new", "product": "TestProduct", "name": "X",
                             "description": "x", "default_assignee": PLAIN}),
    ("/editversions.cgi", {"action": "new", "product": "TestProduct", "name": "9"}),
    ("/editusers.cgi", {"action": "new", "login": "x@example.com"}),
    ("/editgroups.cgi", {"action": "new", "name": "x", "desc": "x"}),
    ("/editparams.cgi", {"param-requirelogin": "1"}),
    ("/editkeywords.cgi", {"action": "new", "name": "x", "description": "x"}),
])
def test_others_are_refused_and_nothing_changes(plain, services, path, fields):
    tables = ("products", "components", "versions", "users", "groups", "params", "keywords")
    before = {table: services.table(table) for table in tables}
    plain.get("/")
    result = plain.post(path, fields)
    assert result.status_code == 401 and "Sorry" in result.text
    assert {table: services.table(table) for table in tables} == before


def test_code_forge_repositories_are_registered_changed_and_removed(admin, services):
    page = admin.get("/editforges.cgi")
    assert "No repository is registered." in page.text
    admin.post("/editforges.cgi", {"action": "new", "forge": "gitlab",
                                   "repository": "group/project", "secret": "s3cret-token",
                                   "branches": "main, release"})
    rows = services.query("SELECT id, forge, repository, secret, branches, hash_references"
                          " FROM forge_repositories")
    assert [row[1:] for row in rows] == [("gitlab", "group/project", "s3cret-token",
                                         "main,release", 0)]
    page = admin.get("/editforges.cgi")
    assert "group/project" in page.text and "s3cret-token" not in page.text
    repository_id = rows[0][0]
    admin.post("/editforges.cgi", {"action": "update", "id": repository_id, "secret": "",
                                   "branches": "trunk", "hash_references": "1",
                                   "bot_account": PLAIN})
    assert services.query("SELECT secret, branches, hash_references FROM forge_repositories"
                          ) == [("s3cret-token", "trunk", 1)]
    admin.post("/editforges.cgi", {"action": "delete", "id": repository_id})
    assert services.query("SELECT COUNT(*) FROM forge_repositories") == [(0,)]


def test_others_may_not_register_code_forges(plain, services):
    plain.get("/")
    for action in ("new", "delete"):
        result = plain.post("/editforges.cgi", {"action": action, "forge": "github", "id": 1,
                                                "repository": "o/r", "secret": "12345678"})
        assert result.status_code == 401 and "Sorry" in result.text
    assert plain.get("/editforges.cgi").status_code == 401
    assert services.query("SELECT COUNT(*) FROM forge_repositories") == [(0,)]


def test_refusals_come_back_on_the_form_as_typed(admin, services):
    """Products, components, groups and keywords: the form again, with what
    was typed and the reason (role="alert"), nothing stored."""
    before = [services.table(table)
              for table in ("products", "components", "groups", "keywords")]
    admin.get("/editproducts.cgi?action=add")
    page = admin.post("/editproducts.cgi", {"action": "new", "name": "testproduct",
                                            "description": "Typed text", "version": "7"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="testproduct"' in page.text and "Typed text" in page.text
    assert 'value="7"' in page.text
    admin.get("/editproducts.cgi?product=TestProduct")
    page = admin.post("/editproducts.cgi", {"action": "update", "product": "TestProduct",
                                            "name": "", "description": "Kept words"})
    assert page.status_code == 400 and 'role="alert"' in page.text and "Kept words" in page.text
    assert 'name="product" value="TestProduct"' in page.text
    admin.get("/editcomponents.cgi?product=TestProduct&action=add")
    page = admin.post("/editcomponents.cgi", {"action": "new", "product": "TestProduct",
                                              "name": "TestComponent",
                                              "description": "Again", "default_assignee": ADMIN})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="TestComponent"' in page.text and "Again" in page.text
    admin.get("/editgroups.cgi?action=add")
    page = admin.post("/editgroups.cgi", {"action": "new", "name": "admin", "desc": "Mine",
                                          "regexp": "@example\\.com$"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="Mine"' in page.text and 'value="@example\\.com$"' in page.text
    admin.get("/editkeywords.cgi")
    admin.post("/editkeywords.cgi", {"action": "new", "name": "taken", "description": "x"})
    page = admin.post("/editkeywords.cgi", {"action": "new", "name": "taken",
                                            "description": "Second words"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert "Second words" in page.text
    after = [services.table(table)
             for table in ("products", "components", "groups")]
    assert after == before[:3]
    assert len(services.table("keywords")) == len(before[3]) + 1


def test_a_refused_account_comes_back_on_the_form_as_typed(admin, services):
    before = services.query("SELECT login, real_name FROM users ORDER BY id")
    admin.get("/editusers.cgi?action=add")
    page = admin.post("/editusers.cgi", {"action": "new", "login": "not-an-address",
                                         "name": "Typed Name", "password": "long password 1"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="not-an-address"' in page.text and 'value="Typed Name"' in page.text
    assert "long password 1" not in page.text
    admin_id = services.query("SELECT id FROM users WHERE login = ?", (ADMIN,))[0][0]
    admin.get(f"/editusers.cgi?action=edit&userid={admin_id}")
    page = admin.post("/editusers.cgi", {"action": "update", "userid": str(admin_id),
                                         "login": "broken", "name": "Other Name",
                                         "disabledtext": ""})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="broken"' in page.text and 'value="Other Name"' in page.text
    assert services.query("SELECT login, real_name FROM users ORDER BY id") == before
