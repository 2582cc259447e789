"""The custom fields page (editfields.cgi) and the values page
(editvalues.cgi): every kind of custom field, shown for one value of
another field, on the new-bug form, made obsolete; values added with a sort
key and a controlling value, removed (deactivated while bugs carry them);
for admin members only, a refusal shown on the form as typed."""

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


def new_field(admin, **changes):
    admin.get("/editfields.cgi?action=add")
    fields = {"action": "new", "name": "cf_colour", "display_name": "Colour", "type": "2",
              "sort_key": "", "is_on_bug_entry": "1"}
    fields.update(changes)
    return admin.post("/editfields.cgi", fields)


def stored_field(services, name="cf_colour"):
    return services.query("SELECT type, display_name, is_on_bug_entry, is_mandatory,"
                          " is_obsolete, visibility_field_id FROM fields WHERE name = ?", (name,))


def values(services, name="cf_colour"):
    return services.query("SELECT v.value, v.sort_key, v.is_active FROM field_values v"
                          " JOIN fields f ON f.id = v.field_id WHERE f.name = ?"
                          " ORDER BY v.sort_key, v.value", (name,))


@pytest.mark.parametrize("kind", [1, 2, 3, 4, 5, 6, 9, 10])
def test_every_kind_of_field_is_created(admin, services, kind):
    page = new_field(admin, name=f"cf_kind{kind}", type=str(kind))
    assert page.status_code == 200, text_of(page.text)
    assert stored_field(services, f"cf_kind{kind}")[0][:3] == (kind, "Colour", 1)


def test_a_drop_down_shown_for_one_product_with_values(admin, services, client):
    page = admin.get("/editfields.cgi?action=add")
    assert '<option value="product:TestProduct">product is TestProduct</option>' in page.text
    new_field(admin, visibility=["product:TestProduct"])
    field = client.simulate_get("/rest/field/bug/cf_colour").json["fields"][0]
    assert (field["visibility_field"], field["visibility_values"]) == ("product",
                                                                       ["TestProduct"])
    listing = admin.get("/editfields.cgi")
    assert "when product is TestProduct" in text_of(listing.text)
    admin.get("/editvalues.cgi?field=cf_colour")
    admin.post("/editvalues.cgi", {"field": "cf_colour", "action": "add", "value": "red",
                                   "sort_key": "20"})
    admin.post("/editvalues.cgi", {"field": "cf_colour", "action": "add", "value": "blue",
                                   "sort_key": "10"})
    assert values(services) == [("---", 0, 1), ("blue", 10, 1), ("red", 20, 1)]
    # A bug filed afterwards takes the values over REST.
    bug_id = file_bug(services, cf_colour="red")
    assert services.query("SELECT COUNT(*) FROM bugs WHERE id = ?", (bug_id,)) == [(1,)]
    # Removing a value in use deactivates it; an unused one goes.
    admin.post("/editvalues.cgi", {"field": "cf_colour", "action": "remove", "value": "red"})
    admin.post("/editvalues.cgi", {"field": "cf_colour", "action": "remove", "value": "blue"})
    assert values(services) == [("---", 0, 1), ("red", 20, 0)]


def test_a_field_is_changed_and_made_obsolete(admin, services):
    new_field(admin)
    page = admin.get("/editfields.cgi?action=edit&name=cf_colour")
    assert 'value="Colour"' in page.text
    admin.post("/editfields.cgi", {"action": "update", "name": "cf_colour",
                                   "display_name": "Paint", "sort_key": ""})
    assert stored_field(services)[0][1:5] == ("Paint", 0, 0, 0)
    admin.get("/editfields.cgi?action=edit&name=cf_colour")
    admin.post("/editfields.cgi", {"action": "obsolete", "name": "cf_colour"})
    assert stored_field(services)[0][4] == 1
    assert "cf_colour" not in admin.get("/editfields.cgi").text


def test_refusals_are_shown_on_the_form_as_typed(admin, services):
    before = services.table("fields")
    page = new_field(admin, name="colour", display_name="Typed name")
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="colour"' in page.text and 'value="Typed name"' in page.text
    page = new_field(admin, visibility=["product:TestProduct", "cf_x:y"])
    assert page.status_code == 400 and "one other field" in page.text
    assert services.table("fields") == before
    new_field(admin)
    admin.get("/editvalues.cgi?field=cf_colour")
    page = admin.post("/editvalues.cgi", {"field": "cf_colour", "action": "add",
                                          "value": "---", "sort_key": "abc"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert 'value="---"' in page.text


def test_plain_users_and_visitors_are_refused(app, admin, services):
    new_field(admin)
    before = services.table("fields"), values(services)
    visitor = Browser(app)
    page = visitor.get("/editfields.cgi")
    assert page.status_code == 401 and "Sign in" in page.text and "cf_colour" not in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    for path in ("/editfields.cgi", "/editvalues.cgi?field=cf_colour"):
        page = plain.get(path)
        assert page.status_code == 401 and "Sorry" in page.text and "cf_colour" not in page.text
    plain.get("/")
    assert plain.post("/editfields.cgi", {"action": "new", "name": "cf_x", "display_name": "x",
                                          "type": "1"}).status_code == 401
    assert plain.post("/editvalues.cgi", {"field": "cf_colour", "action": "add",
                                          "value": "x"}).status_code == 401
    assert (services.table("fields"), values(services)) == before
