"""The flag types page (editflagtypes.cgi): list, create, edit, copy,
deactivate and delete flag types with their inclusions and exclusions,
groups, CC list, sort key and switches, for editcomponents members (a
product's own administrators: tests/web/test_pages_flagtypes_product.py);
a refusal is shown on the form as typed, with the reason."""

import re

import pytest

from bug_support import file_bug, update_bug
from page_support import Browser, text_of


EDITOR, EDITOR_PASSWORD = "editor@example.com", "editor-password-1"
PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


@pytest.fixture
def editor(app, services):
    services.add_user(EDITOR, password=EDITOR_PASSWORD, groups=("editcomponents",))
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    browser = Browser(app)
    browser.login(EDITOR, EDITOR_PASSWORD)
    return browser


def new_review(editor, **changes):
    editor.get("/editflagtypes.cgi?action=enter&target_type=bug")
    fields = {"action": "insert", "target_type": "bug", "name": "review",
              "description": "Code review", "inclusions": ["TestProduct:TestComponent"],
              "exclusions": [], "sortkey": "10", "cc_list": "qa@example.com",
              "is_active": "1", "is_requestable": "1", "is_specifically_requestable": "1",
              "grant_group": "editbugs", "request_group": ""}
    fields.update(changes)
    return editor.post("/editflagtypes.cgi", fields)


def stored_type(services, name="review"):
    return services.query("SELECT id, description, sort_key, cc_list, is_active,"
                          " is_requestable, is_requesteeble, is_multiplicable, grant_group_id,"
                          " request_group_id FROM flag_types WHERE name = ?", (name,))


def clusions(services, table, type_id):
    return services.query(f"SELECT p.name, c.name FROM {table} r LEFT JOIN products p"
                          f" ON p.id = r.product_id LEFT JOIN components c"
                          f" ON c.id = r.component_id WHERE r.type_id = ?", (type_id,))


def test_a_flag_type_for_one_component_is_created_and_applies_there(editor, services, client):
    page = editor.get("/editflagtypes.cgi?action=enter&target_type=bug")
    assert '<option value="TestProduct:TestComponent">' in page.text
    assert '<option value="__Any__:__Any__" selected>' in page.text
    assert '<option value="editbugs">' in page.text          # every group, not only one's own
    saved = new_review(editor)
    assert saved.status_code == 200 and "review" in text_of(saved.text)
    [(type_id, description, sortkey, cc_list, active, requestable, specific, multiple,
      grant, request)] = stored_type(services)
    assert (description, sortkey, cc_list, active, requestable, specific, multiple) == (
        "Code review", 10, "qa@example.com", 1, 1, 1, 0)
    assert grant == services.query("SELECT id FROM groups WHERE name = 'editbugs'")[0][0]
    assert request is None
    assert clusions(services, "flag_inclusions", type_id) == [("TestProduct", "TestComponent")]
    # It applies where it was included, over REST too.
    answer = client.simulate_get("/rest/flag_type/TestProduct/TestComponent").json
    assert [t["name"] for t in answer["bug"]] == ["review"]


def test_a_flag_type_is_changed_and_deactivated(editor, services):
    new_review(editor)
    type_id = stored_type(services)[0][0]
    page = editor.get(f"/editflagtypes.cgi?action=edit&id={type_id}")
    assert '<option value="TestProduct:TestComponent" selected>' in page.text
    assert 'id="is_active" name="is_active" value="1" checked' in page.text
    editor.post("/editflagtypes.cgi", {
        "action": "update", "id": type_id, "target_type": "bug", "name": "review",
        "description": "Code review, twice", "inclusions": ["__Any__:__Any__"],
        "exclusions": ["TestProduct:TestComponent"], "sortkey": "3", "cc_list": "",
        "is_requestable": "1", "is_multiplicable": "1", "grant_group": "",
        "request_group": "editbugs"})
    [(_, description, sortkey, cc_list, active, requestable, specific, multiple, grant,
      request)] = stored_type(services)
    assert (description, sortkey, cc_list, active, requestable, specific, multiple,
            grant) == ("Code review, twice", 3, "", 0, 1, 0, 1, None)
    assert request is not None
    assert clusions(services, "flag_inclusions", type_id) == [(None, None)]
    assert clusions(services, "flag_exclusions", type_id) == [("TestProduct", "TestComponent")]


def test_a_copy_starts_from_the_type_without_its_name(editor, services):
    new_review(editor)
    type_id = stored_type(services)[0][0]
    page = editor.get(f"/editflagtypes.cgi?action=copy&id={type_id}")
    assert 'name="name" type="text" size="50" maxlength="50" value=""' in page.text
    assert "Code review</textarea>" in page.text
    assert 'name="action" value="insert"' in page.text
    new_review(editor, name="superreview")
    assert len(stored_type(services, "superreview")) == 1


def test_a_refusal_is_shown_as_typed_and_nothing_is_stored(editor, services):
    before = services.table("flag_types")
    page = new_review(editor, name="code review", description="Typed text")
    assert page.status_code == 400
    assert re.search(r'role="alert"[^>]*>[^<]+', page.text)
    assert 'value="code review"' in page.text and "Typed text</textarea>" in page.text
    assert '<option value="TestProduct:TestComponent" selected>' in page.text
    assert services.table("flag_types") == before


def test_deletion_is_confirmed_and_takes_the_flags_along(editor, services):
    new_review(editor, inclusions=["__Any__:__Any__"])
    type_id = stored_type(services)[0][0]
    bug_id = file_bug(services)
    update_bug(services, bug_id, flags=[{"name": "review", "status": "+"}])
    assert services.query("SELECT COUNT(*) FROM flags") == [(1,)]
    page = editor.get(f"/editflagtypes.cgi?action=confirmdelete&id={type_id}")
    assert "There is 1 flag of this type" in text_of(page.text)
    assert services.query("SELECT COUNT(*) FROM flag_types WHERE id = ?", (type_id,)) == [(1,)]
    editor.post("/editflagtypes.cgi", {"action": "delete", "id": type_id})
    assert services.query("SELECT COUNT(*) FROM flag_types WHERE id = ?", (type_id,)) == [(0,)]
    assert services.query("SELECT COUNT(*) FROM flags") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM flag_inclusions WHERE type_id = ?",
                          (type_id,)) == [(0,)]
    assert services.query("SELECT u.login, a.object_name, a.removed FROM audit_log a JOIN users u"
                          " ON u.id = a.user_id WHERE a.class = 'Bugzilla::FlagType'"
                          " ORDER BY a.id DESC LIMIT 1") == [(EDITOR, "review", "__remove__")]


def test_plain_users_and_visitors_are_refused(app, editor, services, client):
    new_review(editor)
    type_id = stored_type(services)[0][0]
    before = services.table("flag_types")
    visitor = Browser(app)
    page = visitor.get("/editflagtypes.cgi")
    assert page.status_code == 401 and "Sign in" in page.text and "Code review" not in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    for path in ("/editflagtypes.cgi", f"/editflagtypes.cgi?action=edit&id={type_id}"):
        page = plain.get(path)
        assert page.status_code == 401 and "Sorry" in page.text and "Code review" not in page.text
    plain.get("/")
    refused = plain.post("/editflagtypes.cgi", {"action": "delete", "id": type_id})
    assert refused.status_code == 401
    refused = plain.post("/editflagtypes.cgi", {"action": "insert", "name": "x",
                                                "description": "x"})
    assert refused.status_code == 401
    assert services.table("flag_types") == before
    # The calls beneath the page refuse the same people.
    plain_key = services.api_key(PLAIN)
    assert client.simulate_get("/rest/flag_type", params={
        "Bugzilla_api_key": plain_key}).json["code"] == 304
    assert client.simulate_delete(f"/rest/flag_type/{type_id}", params={
        "Bugzilla_api_key": plain_key}).json["code"] == 304
    assert client.simulate_delete(f"/rest/flag_type/{type_id}").json["code"] == 410
    assert services.table("flag_types") == before


def test_the_rest_calls_list_and_delete(client, services, admin_key):
    created = client.simulate_post("/rest/flag_type", params={"Bugzilla_api_key": admin_key},
                                   json={"name": "qa", "description": "QA",
                                         "inclusions": [{"TestProduct": ["TestComponent"]}]})
    type_id = created.json["id"]
    listed = client.simulate_get("/rest/flag_type", params={"Bugzilla_api_key": admin_key}).json
    [entry] = [t for t in listed["flagtypes"] if t["id"] == type_id]
    assert entry["inclusions"] == ["TestProduct:TestComponent"] and entry["flags"] == 0
    assert "admin" in listed["groups"]
    deleted = client.simulate_delete(f"/rest/flag_type/{type_id}",
                                     params={"Bugzilla_api_key": admin_key})
    assert deleted.json == {"flagtypes": [{"id": type_id, "name": "qa", "flags": 0}]}
    again = client.simulate_delete(f"/rest/flag_type/{type_id}",
                                   params={"Bugzilla_api_key": admin_key})
    assert again.json["code"] == 51
