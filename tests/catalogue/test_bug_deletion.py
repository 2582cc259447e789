"""Deleting a product or component that has bugs (Bugzilla's parameter
allowbugdeletion, off by default): off, refused and nothing changes; on,
the bugs go with it, with all that belongs to them, each audited, after
a page that says how many. Over REST and on the pages, for an
administrator, a plain user and a visitor."""

import base64

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_flag_type, add_keyword
from bugsvc.bugs import removal
from catalog_support import add_product
from page_support import Browser


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"
NEW_BUG = {"version": "1.0", "summary": "It breaks", "op_sys": "Linux", "platform": "PC"}


def key_header(key):
    return {"X-BUGZILLA-API-KEY": key}


def switch(client, admin_key, on):
    resp = client.simulate_put("/rest/parameters", headers=key_header(admin_key),
                               json={"allowbugdeletion": on})
    assert resp.status_code == 200, resp.text


@pytest.fixture
def doomed(client, services, admin_key):
    """Product Doomed (components Front, Back), with two bugs in Front that
    carry a comment, an attachment, a flag, a CC, a keyword, a see-also link
    and a last visit; a bug of TestProduct depends on one and another is
    its duplicate. Returns their ids."""
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    add_product(services, "Doomed", components=("Front", "Back"))
    add_keyword(services, "crash")
    add_flag_type(services, "review")
    admin = key_header(admin_key)

    def new_bug(**fields):
        resp = client.simulate_post("/rest/bug", headers=admin, json=dict(NEW_BUG, **fields))
        assert resp.status_code == 201, resp.text
        return resp.json["id"]
    ids = [new_bug(product="Doomed", component="Front", cc=[PLAIN], keywords=["crash"],
                   flags=[{"name": "review", "status": "?"}]) for _ in range(2)]
    for bug_id in ids:
        client.simulate_post(f"/rest/bug/{bug_id}/comment", headers=admin,
                             json={"comment": "More detail"})
        attached = client.simulate_post(f"/rest/bug/{bug_id}/attachment", headers=admin, json={
            "ids": [bug_id], "data": base64.b64encode(b"log").decode(), "file_name": "a.log",
            "summary": "log", "content_type": "text/plain"})
        assert attached.status_code == 201, attached.text
        changed = client.simulate_put(f"/rest/bug/{bug_id}", headers=admin, json={
            "see_also": {"add": ["https://bugzilla.example.com/show_bug.cgi?id=1"]},
            "priority": "Highest"})
        assert changed.status_code == 200, changed.text
        client.simulate_post(f"/rest/bug_user_last_visit/{bug_id}", headers=admin)
    blocked = new_bug(product="TestProduct", component="TestComponent", version="unspecified",
                      depends_on=[ids[0]])
    duplicate = new_bug(product="TestProduct", component="TestComponent",
                        version="unspecified")
    resp = client.simulate_put(f"/rest/bug/{duplicate}", headers=admin, json={
        "status": "RESOLVED", "resolution": "DUPLICATE", "dupe_of": ids[0]})
    assert resp.status_code == 200, resp.text
    return {"doomed": ids, "blocked": blocked, "duplicate": duplicate}


def rows_of(services, bug_ids):
    """{table: rows that belong to the bugs `bug_ids`} for every table that
    holds some, over every table bugs/removal.py clears."""
    marks = ", ".join("?" for _ in bug_ids)
    found = {}
    checks = [(table, column) for table, column in removal._BY_BUG] + [
        ("comments", "bug_id"), ("attachments", "bug_id"), ("bugs", "id"), ("bugs", "dupe_of")]
    for table, column in checks:
        count = services.query(f"SELECT COUNT(*) FROM {table} WHERE {column} IN ({marks})",
                               bug_ids)[0][0]
        if count:
            found[f"{table}.{column}"] = count
    for table, link in (("attachment_data", "attachment_id IN (SELECT id FROM attachments"),
                        ("comment_tags", "comment_id IN (SELECT id FROM comments")):
        count = services.query(f"SELECT COUNT(*) FROM {table} WHERE {link}"
                               f" WHERE bug_id IN ({marks}))", bug_ids)[0][0]
        if count:
            found[table] = count
    return found


def test_off_by_default_a_product_or_component_with_bugs_stays(client, services, admin_key,
                                                               doomed):
    before = rows_of(services, doomed["doomed"])
    assert {"bugs.id", "comments.bug_id", "attachments.bug_id", "flags.bug_id",
            "bug_cc.bug_id", "bug_keywords.bug_id", "bug_activity.bug_id",
            "dependencies.depends_on", "bugs.dupe_of", "bug_see_also.bug_id",
            "attachment_data"} <= set(before)
    product = client.simulate_delete("/rest/product/Doomed", headers=key_header(admin_key))
    assert product.status_code == 400 and product.json["code"] == 32000
    assert "has 2 bugs" in product.json["message"]
    component = client.simulate_delete("/rest/component/Doomed/Front",
                                       headers=key_header(admin_key))
    assert component.status_code == 400 and component.json["code"] == 1202
    assert rows_of(services, doomed["doomed"]) == before
    assert services.query("SELECT name FROM components WHERE name IN ('Front', 'Back')"
                          " ORDER BY name") == [("Back",), ("Front",)]


def test_on_deleting_a_product_deletes_its_bugs_and_all_theirs(client, services, admin_key,
                                                               doomed):
    switch(client, admin_key, True)
    resp = client.simulate_delete("/rest/product/Doomed", headers=key_header(admin_key))
    assert resp.status_code == 200, resp.text
    assert rows_of(services, doomed["doomed"]) == {}
    assert services.query("SELECT COUNT(*) FROM products WHERE name = 'Doomed'") == [(0,)]
    # The bugs of other products stay, without their links to the deleted ones.
    blocked = client.simulate_get(f"/rest/bug/{doomed['blocked']}",
                                  headers=key_header(admin_key)).json["bugs"][0]
    assert blocked["depends_on"] == []
    duplicate = client.simulate_get(f"/rest/bug/{doomed['duplicate']}",
                                    headers=key_header(admin_key)).json["bugs"][0]
    assert duplicate["resolution"] == "DUPLICATE" and duplicate["dupe_of"] is None
    gone = client.simulate_get(f"/rest/bug/{doomed['doomed'][0]}",
                               headers=key_header(admin_key))
    assert gone.status_code == 404 and gone.json["code"] == 101
    audited = services.query("SELECT class, object_id, object_name FROM audit_log WHERE"
                             " removed = '__remove__' ORDER BY class, object_id")
    assert audited == [("Bugzilla::Bug", doomed["doomed"][0], "It breaks"),
                       ("Bugzilla::Bug", doomed["doomed"][1], "It breaks"),
                       ("Bugzilla::Product", audited[-1][1], "Doomed")]


def test_on_deleting_a_component_deletes_its_bugs_only(client, services, admin_key, doomed):
    switch(client, admin_key, True)
    resp = client.simulate_delete("/rest/component/Doomed/Front", headers=key_header(admin_key))
    assert resp.status_code == 200, resp.text
    assert rows_of(services, doomed["doomed"]) == {}
    assert services.query("SELECT name FROM components WHERE name IN ('Front', 'Back')") == [
        ("Back",)]
    assert services.query("SELECT COUNT(*) FROM bugs") == [(2,)]


def test_plain_users_and_visitors_delete_nothing(client, services, admin_key, doomed):
    switch(client, admin_key, True)
    before = rows_of(services, doomed["doomed"])
    plain = key_header(services.api_key(PLAIN))
    for headers, code in ((plain, 304), ({}, 410)):
        for path in ("/rest/product/Doomed", "/rest/component/Doomed/Front"):
            resp = client.simulate_delete(path, headers=headers)
            assert resp.status_code == 401 and resp.json["code"] == code, (path, code)
    assert rows_of(services, doomed["doomed"]) == before


# The pages ----------------------------------------------------------------------------

@pytest.fixture
def admin_page(app, doomed):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


def test_the_question_says_how_many_bugs_and_whether_they_go(client, admin_key, admin_page,
                                                            services, doomed):
    page = admin_page.get("/editproducts.cgi?action=del&product=Doomed")
    assert "2 bugs are in Doomed, and bugs are never deleted here" in page.text
    admin_page.post("/editproducts.cgi", {"action": "delete", "product": "Doomed"})
    assert services.query("SELECT COUNT(*) FROM products WHERE name = 'Doomed'") == [(1,)]
    switch(client, admin_key, True)
    page = admin_page.get("/editproducts.cgi?action=del&product=Doomed")
    assert "2 bugs are in Doomed; they are deleted with it" in page.text
    assert "Delete Doomed and its 2 bugs" in page.text
    component = admin_page.get("/editcomponents.cgi?action=del&product=Doomed&component=Back")
    assert "No bug is in Back." in component.text
    component = admin_page.get("/editcomponents.cgi?action=del&product=Doomed&component=Front")
    assert "2 bugs are in Front; they are deleted with it" in component.text
    admin_page.post("/editcomponents.cgi", {"action": "delete", "product": "Doomed",
                                            "component": "Front"})
    assert rows_of(services, doomed["doomed"]) == {}


def test_the_pages_refuse_plain_users_and_visitors(app, client, admin_key, services, doomed):
    switch(client, admin_key, True)
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    visitor = Browser(app)
    for path in ("/editproducts.cgi?action=del&product=Doomed",
                 "/editcomponents.cgi?action=del&product=Doomed&component=Front"):
        refused = plain.get(path)
        assert refused.status_code == 401 and "Sorry" in refused.text and "2 bugs" not in \
            refused.text
        signed_out = visitor.get(path)
        assert signed_out.status_code == 401 and "Sign in" in signed_out.text
    plain.get("/")
    assert plain.post("/editproducts.cgi", {"action": "delete",
                                            "product": "Doomed"}).status_code == 401
    assert services.query("SELECT COUNT(*) FROM bugs WHERE id IN (?, ?)",
                          doomed["doomed"]) == [(2,)]
