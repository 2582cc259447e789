"""editflagtypes.cgi for a product's own administrators (members of a group
whose group controls give editcomponents on a product), as Bugzilla 5.2's
page: the types of their products, their products alone in the form, the
other fields of a type that also covers other products shown but locked,
deletion and deactivation of a type wholly theirs only, every refusal on the
form as typed with its reason. A plain user and a visitor are refused; a
member of editcomponents sees every type and __Any__."""

import re

import pytest

from catalog_support import PRODUCT_ADMIN, PRODUCT_ADMIN_PASSWORD, product_admin_world
from page_support import Browser, csp, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"
EDITOR, EDITOR_PASSWORD = "editor@example.com", "editor-password-1"


@pytest.fixture
def types(services, client, admin_key):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    services.add_user(EDITOR, password=EDITOR_PASSWORD, groups=("editcomponents",))
    return product_admin_world(services, client, admin_key)


def signed_in(app, login, password):
    browser = Browser(app)
    browser.login(login, password)
    return browser


@pytest.fixture
def team(app, types):
    return signed_in(app, PRODUCT_ADMIN, PRODUCT_ADMIN_PASSWORD)


def stored(services, type_id):
    return services.query("SELECT description, is_active FROM flag_types WHERE id = ?",
                          (type_id,))[0], sorted(
        (product or "__Any__", component or "__Any__") for product, component in services.query(
            "SELECT p.name, c.name FROM flag_inclusions r LEFT JOIN products p"
            " ON p.id = r.product_id LEFT JOIN components c ON c.id = r.component_id"
            " WHERE r.type_id = ?", (type_id,)))


def options(page, select):
    block = re.search(rf'<select id="{select}"[^>]*>(.*?)</select>', page, re.S).group(1)
    return re.findall(r'<option value="([^"]*)"', block)


def test_they_see_the_types_of_their_products(team, types):
    page = team.get("/editflagtypes.cgi")
    assert page.status_code == 200
    listed = text_of(page.text)
    assert "The mine type" in listed and "The shared type" in listed
    assert "The everywhere type" in listed
    assert "The elsewhere type" not in listed and "The kept_out type" not in listed
    assert 'href="/editflagtypes.cgi"' in team.get("/admin.cgi").text
    assert csp(page)["script-src"] == "'self'"
    assert not re.search(r"<script(?![^>]* src=)", page.text)


def test_the_new_type_form_offers_their_products_and_groups_alone(team, services):
    page = team.get("/editflagtypes.cgi?action=enter&target_type=bug").text
    assert options(page, "inclusions") == ["TestProduct:__Any__", "TestProduct:TestComponent"]
    assert "selected" not in re.search(r'<select id="inclusions".*?</select>', page, re.S)[0]
    assert "Team" in options(page, "grant_group") and "admin" not in options(page, "grant_group")
    made = team.post("/editflagtypes.cgi", {
        "action": "insert", "target_type": "bug", "name": "qa", "description": "QA",
        "inclusions": ["TestProduct:TestComponent"], "sortkey": "5", "is_active": "1",
        "grant_group": "Team"})
    assert made.status_code == 200 and "qa" in text_of(made.text)
    [(type_id,)] = services.query("SELECT id FROM flag_types WHERE name = 'qa'")
    assert stored(services, type_id) == (("QA", 1), [("TestProduct", "TestComponent")])


def test_a_type_for_another_product_is_refused_on_the_form_as_typed(team, services):
    before = services.table("flag_types")
    for inclusions in (["Other:__Any__"], ["__Any__:__Any__"]):
        team.get("/editflagtypes.cgi?action=enter&target_type=bug")
        page = team.post("/editflagtypes.cgi", {
            "action": "insert", "target_type": "bug", "name": "qa",
            "description": "Typed by hand", "inclusions": inclusions, "sortkey": "5"})
        assert page.status_code == 401
        alert = re.search(r'role="alert"[^>]*>([^<]+)', page.text)[1]
        assert "editcomponents" in alert or "administer" in alert
        assert 'value="qa"' in page.text and "Typed by hand</textarea>" in page.text
    assert services.table("flag_types") == before


def test_a_shared_type_shows_its_fields_locked_and_changes_in_their_products(team, services,
                                                                             types):
    page = team.get(f"/editflagtypes.cgi?action=edit&id={types['shared']}").text
    assert "also applies to products you do not administer" in text_of(page)
    assert re.search(r'<textarea id="description"[^>]* disabled', page)
    assert re.search(r'<input id="name"[^>]* disabled', page)
    assert options(page, "inclusions") == ["TestProduct:__Any__", "TestProduct:TestComponent"]
    saved = team.post("/editflagtypes.cgi", {
        "action": "update", "id": types["shared"], "target_type": "bug",
        "description": "Hijacked", "inclusions": ["TestProduct:TestComponent"]})
    assert saved.status_code == 200
    assert stored(services, types["shared"]) == (
        ("The shared type", 1), [("Other", "__Any__"), ("TestProduct", "TestComponent")])
    team.get(f"/editflagtypes.cgi?action=edit&id={types['shared']}")
    refused = team.post("/editflagtypes.cgi", {
        "action": "update", "id": types["shared"], "target_type": "bug",
        "inclusions": ["Other:General"]})
    assert refused.status_code == 401
    assert "you do not administer it" in text_of(refused.text)
    assert re.search(r'<option value="Other:General" selected>', refused.text)
    assert stored(services, types["shared"])[1] == [("Other", "__Any__"),
                                                    ("TestProduct", "TestComponent")]


def test_a_type_wholly_theirs_is_edited_copied_deactivated_and_deleted(client, admin_key, team,
                                                                      services, types):
    client.simulate_put(f"/rest/flag_type/{types['mine']}", json={"grant_group": "admin"},
                        headers={"X-BUGZILLA-API-KEY": admin_key})
    page = team.get(f"/editflagtypes.cgi?action=edit&id={types['mine']}").text
    assert "disabled" not in page and "also applies to" not in page
    # A group of the type's that is not theirs stays offered, and chosen.
    assert '<option value="admin" selected>' in page
    team.post("/editflagtypes.cgi", {
        "action": "update", "id": types["mine"], "target_type": "bug", "name": "mine",
        "description": "Ours now", "inclusions": ["TestProduct:__Any__"], "sortkey": "2",
        "is_active": "1", "grant_group": "admin"})
    assert stored(services, types["mine"])[0] == ("Ours now", 1)
    assert services.query("SELECT g.name FROM flag_types t JOIN groups g"
                          " ON g.id = t.grant_group_id WHERE t.id = ?",
                          (types["mine"],)) == [("admin",)]
    copy = team.get(f"/editflagtypes.cgi?action=copy&id={types['shared']}").text
    assert "Other" not in copy and "disabled" not in copy
    confirm = team.get(f"/editflagtypes.cgi?action=confirmdelete&id={types['mine']}")
    assert "Deactivate mine instead" in confirm.text
    team.post("/editflagtypes.cgi", {"action": "deactivate", "id": types["mine"]})
    assert stored(services, types["mine"])[0] == ("Ours now", 0)
    team.post("/editflagtypes.cgi", {"action": "delete", "id": types["mine"]})
    assert services.query("SELECT COUNT(*) FROM flag_types WHERE id = ?",
                          (types["mine"],)) == [(0,)]


def test_a_shared_type_is_neither_deleted_nor_deactivated(team, services, types):
    before = services.table("flag_types")
    confirm = team.get(f"/editflagtypes.cgi?action=confirmdelete&id={types['shared']}")
    assert confirm.status_code == 400
    assert "also applies to products you do not administer" in text_of(confirm.text)
    assert 'value="delete"' not in confirm.text
    refused = team.post("/editflagtypes.cgi", {"action": "delete", "id": types["shared"]})
    assert refused.status_code == 400 and "may not delete it" in text_of(refused.text)
    refused = team.post("/editflagtypes.cgi", {"action": "deactivate", "id": types["shared"]})
    assert refused.status_code == 400 and "1105" in refused.text
    assert "also applies to products you do not administer" in text_of(refused.text)
    refused = team.post("/editflagtypes.cgi", {"action": "delete", "id": types["elsewhere"]})
    assert refused.status_code == 400 and "not available for the products" in refused.text
    assert services.table("flag_types") == before


def test_plain_users_and_visitors_are_refused(app, services, types):
    before = services.table("flag_types")
    plain = signed_in(app, PLAIN, PLAIN_PASSWORD)
    for path in ("/editflagtypes.cgi", f"/editflagtypes.cgi?action=edit&id={types['mine']}",
                 "/editflagtypes.cgi?action=enter&target_type=bug"):
        page = plain.get(path)
        assert page.status_code == 401 and "Sorry" in page.text and "The mine type" not in page.text
    plain.get("/")
    assert plain.post("/editflagtypes.cgi", {"action": "delete",
                                             "id": types["mine"]}).status_code == 401
    visitor = Browser(app).get("/editflagtypes.cgi")
    assert visitor.status_code == 401 and "Sign in" in visitor.text
    assert services.table("flag_types") == before


def test_a_member_of_editcomponents_sees_every_type_and_any_product(app, types):
    editor = signed_in(app, EDITOR, EDITOR_PASSWORD)
    listed = text_of(editor.get("/editflagtypes.cgi").text)
    assert all(f"The {name} type" in listed for name in types)
    page = editor.get(f"/editflagtypes.cgi?action=edit&id={types['shared']}").text
    assert "disabled" not in page
    assert {"__Any__:__Any__", "Other:__Any__"} <= set(options(page, "inclusions"))
    assert "admin" in options(page, "grant_group")
