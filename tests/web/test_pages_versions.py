"""Versions and milestones on their own pages (editversions.cgi,
editmilestones.cgi?product=X), for members of editcomponents: listed, added,
changed, deleted while no bug has them (never the default milestone or a
product's last one), a refusal shown on the page as typed; the delete calls
over REST (Version.delete, Milestone.delete); a product deleted after the
question (editproducts.cgi?action=del) only while it has no bug."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import file_bug
from page_support import Browser, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


@pytest.fixture
def admin(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


def rows(services, table):
    return services.query(f"SELECT id, name, sort_key, is_active FROM {table}"
                          " WHERE product_id = 1 ORDER BY id")


@pytest.mark.parametrize("path,table", [("/editversions.cgi", "versions"),
                                        ("/editmilestones.cgi", "milestones")])
def test_values_are_added_changed_and_deleted_on_their_page(admin, services, path, table):
    page = admin.get(f"{path}?product=TestProduct")
    assert page.status_code == 200 and 'id="new-name"' in page.text
    admin.post(path, {"action": "new", "product": "TestProduct", "name": "2.0",
                      "sort_key": "20"})
    new_id = rows(services, table)[-1][0]
    admin.get(f"{path}?product=TestProduct")
    admin.post(path, {"action": "update", "product": "TestProduct", "id": str(new_id),
                      "name": "2.1", "sort_key": "30", "is_active": "1"})
    assert rows(services, table)[-1] == (new_id, "2.1", 30, 1)
    page = admin.get(f"{path}?product=TestProduct")
    assert 'aria-label="Delete 2.1"' in page.text
    admin.post(path, {"action": "delete", "product": "TestProduct", "id": str(new_id)})
    assert all(row[0] != new_id for row in rows(services, table))
    assert services.query("SELECT field, removed FROM audit_log WHERE object_name = '2.1'"
                          " ORDER BY id DESC LIMIT 1") == [("name", "2.1")]


def test_refusals_come_back_on_the_page_as_typed(admin, services):
    file_bug(services)
    before = rows(services, "versions"), rows(services, "milestones")
    admin.get("/editversions.cgi?product=TestProduct")
    page = admin.post("/editversions.cgi", {"action": "new", "product": "TestProduct",
                                            "name": "UNSPECIFIED", "sort_key": "4"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="UNSPECIFIED"' in page.text and 'value="4"' in page.text
    version_id = before[0][0][0]
    page = admin.post("/editversions.cgi", {"action": "delete", "product": "TestProduct",
                                            "id": str(version_id)})
    assert page.status_code == 400 and "1 bug has it" in text_of(page.text)
    milestone_id = before[1][0][0]
    admin.get("/editmilestones.cgi?product=TestProduct")
    page = admin.post("/editmilestones.cgi", {"action": "delete", "product": "TestProduct",
                                              "id": str(milestone_id)})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert (rows(services, "versions"), rows(services, "milestones")) == before


def test_plain_users_visitors_and_forged_posts_are_refused(app, admin, services):
    before = rows(services, "versions")
    visitor = Browser(app)
    page = visitor.get("/editversions.cgi?product=TestProduct")
    assert page.status_code == 401 and "Sign in" in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get("/editmilestones.cgi?product=TestProduct")
    assert page.status_code == 401 and "Sorry" in page.text
    plain.get("/")
    assert plain.post("/editversions.cgi", {"action": "delete", "product": "TestProduct",
                                            "id": str(before[0][0])}).status_code == 401
    admin.get("/editversions.cgi?product=TestProduct")
    assert admin.post("/editversions.cgi", {"action": "new", "product": "TestProduct",
                                            "name": "9"}, token=False).status_code == 403
    assert rows(services, "versions") == before


def test_delete_over_rest(client, services, admin_key, plain_key):
    created = client.simulate_post("/rest/version", params={"Bugzilla_api_key": admin_key},
                                   json={"product": "TestProduct", "name": "spare"})
    version_id = created.json["id"]
    refused = client.simulate_delete(f"/rest/version/{version_id}",
                                     params={"Bugzilla_api_key": plain_key})
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    answer = client.simulate_delete(f"/rest/version/{version_id}",
                                    params={"Bugzilla_api_key": admin_key})
    assert answer.json == {"versions": [{"id": version_id}]}
    last = rows(services, "versions")[0][0]
    refused = client.simulate_delete(f"/rest/version/{last}",
                                     params={"Bugzilla_api_key": admin_key})
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    assert "last" in refused.json["message"]
    missing = client.simulate_delete("/rest/milestone/9999",
                                     params={"Bugzilla_api_key": admin_key})
    assert (missing.status_code, missing.json["code"]) == (404, 51)


# Products ---------------------------------------------------------------------------

def test_a_product_without_bugs_is_deleted_after_the_question(admin, services):
    admin.get("/editproducts.cgi?action=add")
    admin.post("/editproducts.cgi", {"action": "new", "name": "Spare", "description": "Spare",
                                     "version": "1.0"})
    admin.get("/editcomponents.cgi?product=Spare&action=add")
    admin.post("/editcomponents.cgi", {"action": "new", "product": "Spare", "name": "Bits",
                                       "description": "Bits", "default_assignee": ADMIN})
    page = admin.get("/editproducts.cgi?action=del&product=Spare")
    assert page.status_code == 200 and "1 component" in text_of(page.text)
    admin.post("/editproducts.cgi", {"action": "delete", "product": "Spare"})
    assert services.query("SELECT COUNT(*) FROM products WHERE name = 'Spare'") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM components WHERE name = 'Bits'") == [(0,)]
    assert services.query("SELECT added FROM audit_log WHERE class = 'Bugzilla::Product'"
                          " AND object_name = 'Spare' ORDER BY id DESC LIMIT 1") == [(None,)]


def test_a_product_with_bugs_stays_and_the_refusal_is_on_the_page(app, admin, services,
                                                                  client, admin_key):
    file_bug(services)
    admin.get("/editproducts.cgi?action=del&product=TestProduct")
    page = admin.post("/editproducts.cgi", {"action": "delete", "product": "TestProduct"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert "has 1 bug" in text_of(page.text)
    refused = client.simulate_delete("/rest/product/TestProduct",
                                     params={"Bugzilla_api_key": admin_key})
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    assert plain.get("/editproducts.cgi?action=del&product=TestProduct").status_code == 401
    plain.get("/")
    assert plain.post("/editproducts.cgi", {"action": "delete",
                                            "product": "TestProduct"}).status_code == 401
    assert Browser(app).get("/editproducts.cgi?action=del&product=TestProduct"
                            ).status_code == 401
    admin.get("/editproducts.cgi?action=del&product=TestProduct")
    assert admin.post("/editproducts.cgi", {"action": "delete", "product": "TestProduct"},
                      token=False).status_code == 403
    assert services.query("SELECT COUNT(*) FROM products WHERE name = 'TestProduct'") == [(1,)]
