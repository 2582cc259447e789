"""The classifications page (editclassifications.cgi): for members of
editclassifications while useclassification is on, as Bugzilla's; add,
change, reclassify products, delete one that holds none (never
Unclassified); a refusal comes back on the form as typed; others are
refused; Classification.delete over REST."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from page_support import Browser, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


@pytest.fixture
def admin(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    set_param(services, "useclassification", "1")
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


def classifications(services):
    return services.query("SELECT name, description, sort_key FROM classifications ORDER BY id")


def classification_of(services, product):
    return services.query("SELECT c.name FROM products p JOIN classifications c"
                          " ON c.id = p.classification_id WHERE p.name = ?", (product,))[0][0]


def test_a_classification_is_added_changed_filled_emptied_and_deleted(admin, services):
    assert "Unclassified" in admin.get("/editclassifications.cgi").text
    admin.get("/editclassifications.cgi?action=add")
    admin.post("/editclassifications.cgi", {"action": "new", "name": "Hardware",
                                            "description": "Boxes", "sort_key": "5"})
    admin.get("/editclassifications.cgi?action=edit&classification=Hardware")
    admin.post("/editclassifications.cgi", {"action": "update", "classification": "Hardware",
                                            "name": "Devices", "description": "Things",
                                            "sort_key": "7"})
    assert classifications(services)[-1] == ("Devices", "Things", 7)
    page = admin.get("/editclassifications.cgi?action=reclassify&classification=Devices")
    assert "TestProduct (now in Unclassified)" in page.text
    admin.post("/editclassifications.cgi", {"action": "reclassify",
                                            "classification": "Devices",
                                            "prodlist": ["TestProduct"]})
    assert classification_of(services, "TestProduct") == "Devices"
    # Holding a product: no delete button, and a forged delete is refused on the list.
    page = admin.get("/editclassifications.cgi")
    assert 'aria-label="Delete Devices"' not in page.text
    page = admin.post("/editclassifications.cgi", {"action": "delete",
                                                   "classification": "Devices"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert "holds 1 product" in text_of(page.text)
    admin.get("/editclassifications.cgi?action=reclassify&classification=Devices")
    admin.post("/editclassifications.cgi", {"action": "reclassify",
                                            "classification": "Devices",
                                            "myprodlist": ["TestProduct"]})
    assert classification_of(services, "TestProduct") == "Unclassified"
    page = admin.get("/editclassifications.cgi")
    assert 'aria-label="Delete Devices"' in page.text
    admin.post("/editclassifications.cgi", {"action": "delete", "classification": "Devices"})
    assert [row[0] for row in classifications(services)] == ["Unclassified"]
    assert services.query("SELECT field, removed FROM audit_log WHERE object_name = 'Devices'"
                          " ORDER BY id DESC LIMIT 1") == [("name", "Devices")]


def test_refusals_come_back_as_typed(admin, services):
    before = classifications(services)
    admin.get("/editclassifications.cgi?action=add")
    page = admin.post("/editclassifications.cgi", {"action": "new", "name": "unclassified",
                                                   "description": "Typed words"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="unclassified"' in page.text and "Typed words" in page.text
    admin.get("/editclassifications.cgi")
    page = admin.post("/editclassifications.cgi", {"action": "delete",
                                                   "classification": "Unclassified"})
    assert page.status_code == 400 and "default classification" in text_of(page.text)
    assert classifications(services) == before


def test_the_page_is_closed_while_classifications_are_not_used(admin, services):
    set_param(services, "useclassification", "0")
    page = admin.get("/editclassifications.cgi")
    assert page.status_code == 400 and "useclassification" in text_of(page.text)


def test_plain_users_visitors_and_forged_posts_are_refused(app, admin, services):
    visitor = Browser(app)
    page = visitor.get("/editclassifications.cgi")
    assert page.status_code == 401 and "Sign in" in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get("/editclassifications.cgi")
    assert page.status_code == 401 and "Sorry" in page.text and "Unclassified" not in page.text
    plain.get("/")
    assert plain.post("/editclassifications.cgi", {"action": "new", "name": "X"}
                      ).status_code == 401
    admin.get("/editclassifications.cgi")
    assert admin.post("/editclassifications.cgi", {"action": "new", "name": "X"},
                      token=False).status_code == 403
    assert [row[0] for row in classifications(services)] == ["Unclassified"]


def test_delete_over_rest(client, services, admin_key, plain_key):
    created = client.simulate_post("/rest/classification", params={"Bugzilla_api_key": admin_key},
                                   json={"name": "Spare"})
    assert created.status_code == 201
    refused = client.simulate_delete("/rest/classification/Spare",
                                     params={"Bugzilla_api_key": plain_key})
    assert (refused.status_code, refused.json["code"]) == (401, 304)
    refused = client.simulate_delete("/rest/classification/1",
                                     params={"Bugzilla_api_key": admin_key})
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    answer = client.simulate_delete("/rest/classification/Spare",
                                    params={"Bugzilla_api_key": admin_key})
    assert answer.json == {"classifications": [{"id": created.json["id"]}]}
    missing = client.simulate_delete("/rest/classification/Spare",
                                     params={"Bugzilla_api_key": admin_key})
    assert (missing.status_code, missing.json["code"]) == (404, 51)
