"""Rights a product's group controls give on that product alone (Bugzilla's
per-product editcomponents, editbugs and canconfirm): set over REST and on
editproducts.cgi?action=editgroupcontrols; members of such a group administer
that product's components, versions, milestones and controls, edit every
field of its bugs and confirm them, and nothing elsewhere. A plain user and
a visitor keep their usual refusals, over REST and on the pages."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import editbugs_only_for_members, file_bug, get_bug
from catalog_support import add_bug_group, add_product
from page_support import Browser


MEMBER, MEMBER_PASSWORD = "team@example.com", "team-password-1"
PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


def key_header(key):
    return {"X-BUGZILLA-API-KEY": key}


@pytest.fixture
def world(services, client, admin_key):
    """TestProduct, whose controls give group Team all three rights;
    Other, which gives none; a member of Team and a plain account, with
    keys. editbugs is an ordinary group here (not every account's)."""
    editbugs_only_for_members(services)
    services.add_user(MEMBER, password=MEMBER_PASSWORD)
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    add_bug_group(services, "Team", members=(MEMBER,))
    add_product(services, "Other")
    resp = client.simulate_put("/rest/product/TestProduct", headers=key_header(admin_key), json={
        "group_controls": {"Team": {"membercontrol": "Shown", "othercontrol": "NA",
                                    "editcomponents": True, "editbugs": True,
                                    "canconfirm": True}}})
    assert resp.status_code == 200, resp.text
    assert resp.json["products"][0]["changes"]["group_controls.Team"]["added"] == (
        "membercontrol: Shown, othercontrol: NA, entry: 0, canedit: 0, editcomponents: 1,"
        " editbugs: 1, canconfirm: 1")
    return {"member": services.api_key(MEMBER), "plain": services.api_key(PLAIN),
            "admin": admin_key}


def components(services, product):
    return [row[0] for row in services.query(
        "SELECT c.name FROM components c JOIN products p ON p.id = c.product_id"
        " WHERE p.name = ? ORDER BY c.name", (product,))]


def test_the_controls_read_back_over_rest_for_their_holders_only(client, world):
    asked = {"names": "TestProduct", "include_fields": "group_controls"}
    for who in ("admin", "member"):
        found = client.simulate_get("/rest/product", params=asked,
                                    headers=key_header(world[who])).json["products"][0]
        assert found["group_controls"]["Team"] == {
            "membercontrol": "Shown", "othercontrol": "NA", "entry": False, "canedit": False,
            "editcomponents": True, "editbugs": True, "canconfirm": True}
    plain = client.simulate_get("/rest/product", params=asked,
                                headers=key_header(world["plain"])).json["products"][0]
    assert "group_controls" not in plain
    assert "group_controls" not in client.simulate_get("/rest/product",
                                                       params=asked).json["products"][0]
    rights = client.simulate_get("/rest/whoami", headers=key_header(world["member"])).json
    assert rights["product_rights"] == {"editcomponents": ["TestProduct"],
                                        "editbugs": ["TestProduct"],
                                        "canconfirm": ["TestProduct"]}


def test_a_member_administers_that_product_and_no_other(client, services, world):
    member = key_header(world["member"])
    made = client.simulate_post("/rest/component", headers=member, json={
        "product": "TestProduct", "name": "Docs", "description": "The manual",
        "default_assignee": ADMIN})
    assert made.status_code == 201, made.text
    version = client.simulate_post("/rest/version", headers=member,
                                   json={"product": "TestProduct", "name": "2.0"})
    assert version.status_code == 201, version.text
    # Its own product's controls too (editproducts.cgi lets it; see deviations).
    changed = client.simulate_put("/rest/product/TestProduct", headers=member, json={
        "description": "Kept by the team"})
    assert changed.status_code == 200, changed.text
    refused = client.simulate_post("/rest/component", headers=member, json={
        "product": "Other", "name": "Docs", "description": "The manual",
        "default_assignee": ADMIN})
    assert refused.status_code == 400 and refused.json["code"] == 32000
    assert "not allowed to edit properties of product 'Other'" in refused.json["message"]
    other_version = services.query("SELECT v.id FROM versions v JOIN products p"
                                   " ON p.id = v.product_id WHERE p.name = 'Other'")[0][0]
    renamed = client.simulate_put(f"/rest/version/{other_version}", headers=member,
                                  json={"name": "9.9"})
    assert renamed.status_code == 400 and renamed.json["code"] == 32000
    assert client.simulate_post("/rest/product", headers=member, json={
        "name": "Mine", "description": "d", "version": "1"}).json["code"] == 304
    assert components(services, "TestProduct") == ["Docs", "TestComponent"]
    assert components(services, "Other") == ["General"]
    assert services.query("SELECT name FROM versions WHERE name IN ('2.0', '9.9')") == [("2.0",)]


def test_plain_users_and_visitors_administer_nothing(client, services, world):
    body = {"product": "TestProduct", "name": "Docs", "description": "The manual",
            "default_assignee": ADMIN}
    plain = client.simulate_post("/rest/component", headers=key_header(world["plain"]),
                                 json=body)
    assert plain.status_code == 401 and plain.json["code"] == 304
    visitor = client.simulate_post("/rest/component", json=body)
    assert visitor.status_code == 401 and visitor.json["code"] == 410
    controls = {"group_controls": {"Team": {"editbugs": False}}}
    assert client.simulate_put("/rest/product/TestProduct", headers=key_header(world["plain"]),
                               json=controls).json["code"] == 304
    assert client.simulate_put("/rest/product/TestProduct", json=controls).json["code"] == 410
    assert components(services, "TestProduct") == ["TestComponent"]
    assert services.query("SELECT editbugs FROM group_controls") == [(1,)]


def test_editbugs_on_the_product_edits_every_field_of_its_bugs_only(client, services, world):
    ours = file_bug(services, as_user=ADMIN)
    theirs = file_bug(services, as_user=ADMIN, product="Other", component="General",
                      version="1.0")
    change = {"priority": "Highest", "assigned_to": MEMBER}
    done = client.simulate_put(f"/rest/bug/{ours}", headers=key_header(world["member"]),
                               json=change)
    assert done.status_code == 200, done.text
    assert get_bug(services, ours)["priority"] == "Highest"
    for bug_id, who in ((theirs, "member"), (ours, "plain")):
        refused = client.simulate_put(f"/rest/bug/{bug_id}", headers=key_header(world[who]),
                                      json={"priority": "Lowest"})
        assert refused.status_code == 401 and refused.json["code"] == 115, (bug_id, who)
    assert client.simulate_put(f"/rest/bug/{ours}", json={"priority": "Lowest"}).json["code"] == 410
    assert get_bug(services, theirs)["priority"] != "Highest"
    assert get_bug(services, ours)["priority"] == "Highest"


def test_canconfirm_on_the_product_files_and_confirms_its_bugs_only(client, services, world):
    bug = {"component": "TestComponent", "version": "unspecified", "summary": "Crash",
           "op_sys": "Linux", "platform": "PC"}
    mine = client.simulate_post("/rest/bug", headers=key_header(world["member"]),
                                json=dict(bug, product="TestProduct"))
    assert get_bug(services, mine.json["id"])["status"] == "CONFIRMED"
    elsewhere = client.simulate_post("/rest/bug", headers=key_header(world["member"]), json=dict(
        bug, product="Other", component="General", version="1.0"))
    assert get_bug(services, elsewhere.json["id"])["status"] == "UNCONFIRMED"
    plain = client.simulate_post("/rest/bug", headers=key_header(world["plain"]),
                                 json=dict(bug, product="TestProduct"))
    assert get_bug(services, plain.json["id"])["status"] == "UNCONFIRMED"
    confirmed = client.simulate_put(f"/rest/bug/{plain.json['id']}",
                                    headers=key_header(world["member"]),
                                    json={"status": "CONFIRMED"})
    assert confirmed.status_code == 200, confirmed.text
    refused = client.simulate_put(f"/rest/bug/{elsewhere.json['id']}",
                                  headers=key_header(world["member"]),
                                  json={"status": "CONFIRMED"})
    # A status the caller may not move to is not among the bug's transitions.
    assert refused.json["code"] == 123
    assert get_bug(services, elsewhere.json["id"])["status"] == "UNCONFIRMED"


# The pages ----------------------------------------------------------------------------

@pytest.fixture
def pages(app, world):
    def signed_in(login, password):
        browser = Browser(app)
        browser.login(login, password)
        return browser
    return {"member": signed_in(MEMBER, MEMBER_PASSWORD), "plain": signed_in(PLAIN,
                                                                            PLAIN_PASSWORD),
            "admin": signed_in(ADMIN, ADMIN_PASSWORD), "visitor": Browser(app)}


def test_the_group_controls_page_sets_the_three_rights(pages, services):
    page = "/editproducts.cgi?action=editgroupcontrols&product=TestProduct"
    admin = pages["admin"]
    form = admin.get(page)
    assert 'aria-label="Team members edit components" checked' in form.text
    admin.post("/editproducts.cgi", {"action": "updategroupcontrols", "product": "TestProduct",
                                     "group": ["Team"], "membercontrol_Team": "Shown",
                                     "othercontrol_Team": "NA", "canconfirm_Team": "1"})
    assert services.query("SELECT editcomponents, editbugs, canconfirm FROM group_controls") \
        == [(0, 0, 1)]


def test_a_member_uses_the_product_pages_of_its_product_only(pages, services):
    member = pages["member"]
    listing = member.get("/editproducts.cgi")
    assert listing.status_code == 200 and "TestProduct" in listing.text
    assert "Other" not in listing.text
    assert "/editproducts.cgi" in member.get("/admin.cgi").text
    assert member.get("/editcomponents.cgi?product=TestProduct&action=add").status_code == 200
    member.post("/editcomponents.cgi", {"action": "new", "product": "TestProduct",
                                        "name": "Docs", "description": "The manual",
                                        "default_assignee": ADMIN})
    assert components(services, "TestProduct") == ["Docs", "TestComponent"]
    assert member.get("/editproducts.cgi?action=editgroupcontrols&product=TestProduct"
                      ).status_code == 200
    for path in ("/editcomponents.cgi?product=Other&action=add",
                 "/editversions.cgi?product=Other",
                 "/editproducts.cgi?action=editgroupcontrols&product=Other"):
        refused = member.get(path)
        assert refused.status_code == 400, path
        assert "not allowed to edit properties of product" in refused.text


def test_plain_users_and_visitors_are_refused_the_product_pages(pages):
    for path in ("/editproducts.cgi", "/editcomponents.cgi?product=TestProduct&action=add",
                 "/editproducts.cgi?action=editgroupcontrols&product=TestProduct"):
        plain = pages["plain"].get(path)
        assert plain.status_code == 401 and "Sorry" in plain.text, path
        visitor = pages["visitor"].get(path)
        assert visitor.status_code == 401 and "Sign in" in visitor.text, path
