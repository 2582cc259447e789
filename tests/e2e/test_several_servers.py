"""Two server processes on one database, as two hosts behind one address:
whatever one of them changes, the other answers by on its next request,
although each keeps copies of what rarely changes (the catalogue: products,
components, parameters, fields, the workflow) and its own connections. A new
product and a parameter change, a disabled account, a revoked API key, a
logout, wrong passwords counted by both, and web pages one server keeps for
visitors who are not signed in; on either engine."""

import urllib.request

import pytest

from notify_support import wait_for
from write_load import ADMIN, ADMIN_ENV, ADMIN_PASSWORD


pytestmark = pytest.mark.slow

PASSWORD = "a password of carol's"


@pytest.fixture
def pair(start, new_db):
    """(first server, second server, the administrator's API key) on one new
    database; the second server starts on the database the first installed."""
    location = new_db("shared")
    first = start(location, ADMIN_ENV, name="first")
    second = start(location, name="second")
    status, body, _ = first.call("POST", "/rest/api_key", {"Bugzilla_login": ADMIN,
                                                           "Bugzilla_password": ADMIN_PASSWORD},
                                 {"description": "several servers"})
    assert status == 201, body
    return first, second, body["api_key"]


def as_key(key):
    return {"Bugzilla_api_key": key}


def add_carol(server, admin):
    """Carol's account (made through `server`) and an API key of hers."""
    status, body, _ = server.call("POST", "/rest/user", as_key(admin),
                                  {"email": "carol@example.com", "password": PASSWORD})
    assert status == 201, body
    carol_id = body["id"]
    status, body, _ = server.call("POST", "/rest/api_key", {"Bugzilla_login": "carol@example.com",
                                                            "Bugzilla_password": PASSWORD},
                                  {"description": "carol's"})
    assert status == 201, body
    return carol_id, body["id"], body["api_key"]


def whoami(server, credentials):
    """(HTTP status, error code or the caller's login) of a call as `credentials`."""
    status, body, _ = server.call("GET", "/rest/user", dict(credentials, ids=1))
    if status != 200:
        return status, body.get("code")
    return status, "signed in"


def products(server, key, name):
    status, body, _ = server.call("GET", "/rest/product", dict(as_key(key), names=name))
    assert status == 200, body
    return [product["name"] for product in body["products"]]


def test_catalogue_changed_through_one_server_is_seen_by_the_other(pair):
    first, second, admin = pair
    # The second server reads (and keeps copies of) the catalogue first.
    assert products(second, admin, "Gadgets") == []
    assert second.call("GET", "/rest/product_accessible")[0] == 200

    status, body, _ = first.call("POST", "/rest/product", as_key(admin), {
        "name": "Gadgets", "description": "Things", "version": "1.0"})
    assert status == 201, body
    status, body, _ = first.call("POST", "/rest/component", as_key(admin), {
        "product": "Gadgets", "name": "Widgets", "description": "Small things",
        "default_assignee": ADMIN})
    assert status == 201, body
    assert products(second, admin, "Gadgets") == ["Gadgets"]
    status, body, _ = second.call("POST", "/rest/bug", as_key(admin), {
        "product": "Gadgets", "component": "Widgets", "version": "1.0", "summary": "filed",
        "op_sys": "Linux", "platform": "PC"})
    assert status == 201, body

    # A parameter: anonymous callers need to sign in, on both at once.
    status, body, _ = first.call("PUT", "/rest/parameters", as_key(admin),
                                 {"requirelogin": "1"})
    assert status == 200, body
    for server in (second, first):
        status, body, _ = server.call("GET", "/rest/product_accessible")
        assert (status, body["code"]) == (401, 410), body
    status, body, _ = first.call("PUT", "/rest/parameters", as_key(admin),
                                 {"requirelogin": "0"})
    assert status == 200, body
    assert second.call("GET", "/rest/product_accessible")[0] == 200


def test_accounts_and_keys_changed_through_one_server_are_seen_by_the_other(pair):
    first, second, admin = pair
    carol_id, key_id, key = add_carol(first, admin)
    assert whoami(second, as_key(key)) == (200, "signed in")

    # Revoked through the first: refused by the second; usable again likewise.
    status, body, _ = first.call("PUT", f"/rest/api_key/{key_id}", as_key(key),
                                 {"revoked": True})
    assert status == 200, body
    assert whoami(second, as_key(key)) == (400, 306)
    status, body, _ = second.call("PUT", f"/rest/api_key/{key_id}", as_key(admin),
                                  {"revoked": False})
    assert status == 200, body
    assert whoami(first, as_key(key)) == (200, "signed in")

    # A login token made by the first works on the second until the first
    # logs it out.
    status, body, _ = first.call("GET", "/rest/login", {"login": "carol@example.com",
                                                        "password": PASSWORD})
    assert status == 200, body
    token = body["token"]
    assert whoami(second, {"Bugzilla_token": token}) == (200, "signed in")
    status, body, _ = first.call("GET", "/rest/logout", {"token": token})
    assert status == 200, body
    assert whoami(second, {"Bugzilla_token": token})[1] == 32000

    # Disabled through the second: the first refuses her key and password.
    status, body, _ = second.call("PUT", f"/rest/user/{carol_id}", as_key(admin),
                                  {"login_denied_text": "Gone fishing."})
    assert status == 200, body
    assert whoami(first, as_key(key)) == (401, 301)
    status, body, _ = first.call("GET", "/rest/login", {"login": "carol@example.com",
                                                        "password": PASSWORD})
    assert (status, body["code"]) == (401, 301), body


def own_account(server, key):
    """(real name, sorted group names) of the account behind `key`, as `server` answers."""
    status, body, _ = server.call("GET", "/rest/whoami", as_key(key))
    assert status == 200, body
    return body["real_name"], sorted(body["groups"])


def test_who_a_kept_key_signs_in_as_follows_changes_made_by_the_other(pair):
    """Each server keeps the account behind an API key it resolved; a change
    through the other server to the account, its groups or the key shows on
    the next request."""
    first, second, admin = pair
    carol_id, key_id, key = add_carol(first, admin)
    status, body, _ = first.call("POST", "/rest/group", as_key(admin), {
        "name": "testers", "description": "Testers", "is_active": True})
    assert status == 201, body
    group_id = body["id"]
    name, groups = own_account(second, key)
    assert name == "" and "testers" not in groups

    status, body, _ = first.call("PUT", f"/rest/user/{carol_id}", as_key(admin),
                                 {"full_name": "Carol Ann", "groups": {"add": ["testers"]}})
    assert status == 200, body
    assert own_account(second, key) == ("Carol Ann", sorted(groups + ["testers"]))

    # A group renamed through the first is named anew by the second.
    status, body, _ = first.call("PUT", f"/rest/group/{group_id}", as_key(admin),
                                 {"name": "quality"})
    assert status == 200, body
    assert own_account(second, key) == ("Carol Ann", sorted(groups + ["quality"]))

    # Left through the second: the first, which resolved her key too, sees it.
    assert own_account(first, key) == ("Carol Ann", sorted(groups + ["quality"]))
    status, body, _ = second.call("PUT", f"/rest/user/{carol_id}", as_key(admin),
                                  {"groups": {"remove": ["quality"]}})
    assert status == 200, body
    assert own_account(first, key) == ("Carol Ann", groups)

    # Revoked through the first after the second used it many times: refused.
    for _ in range(3):
        assert own_account(second, key)[0] == "Carol Ann"
    status, body, _ = first.call("PUT", f"/rest/api_key/{key_id}", as_key(admin),
                                 {"revoked": True})
    assert status == 200, body
    assert whoami(second, as_key(key)) == (400, 306)


def test_wrong_passwords_are_counted_by_both_servers_together(pair):
    first, second, admin = pair
    add_carol(first, admin)
    servers = [first, second]

    def wrong_password():
        """One wrong password, through each server in turn; the answer's
        message once the login waits at least 4 seconds (7 failures
        counted), else None."""
        server = servers[0]
        servers.reverse()
        status, body, _ = server.call("GET", "/rest/login", {"login": "carol@example.com",
                                                             "password": "not it"})
        if body["code"] == 300:
            return None                     # counted
        assert (status, body["code"]) == (400, 32000), body
        seconds = int(body["message"].split("checked in ")[1].split()[0])
        return body["message"] if seconds >= 4 else None
    # The first five failures are free, then the login waits 1 s, 2 s, 4 s
    # ...: failures are counted while it does not wait, through both
    # servers alike, until it waits 4 s.
    message = wait_for(wrong_password, timeout=60, what="the login to wait 4 seconds")
    assert "Too many failed sign-in attempts for this login name" in message
    for server in (first, second):
        status, body, _ = server.call("GET", "/rest/login", {"login": "carol@example.com",
                                                             "password": PASSWORD})
        assert (status, body["code"]) == (400, 32000), body

    # An administrator's reset through one server lets her in through the other.
    status, body, _ = second.call("PUT", "/rest/user/carol@example.com", as_key(admin),
                                  {"reset_failed_logins": True})
    assert status == 200, body
    status, body, _ = first.call("GET", "/rest/login", {"login": "carol@example.com",
                                                        "password": PASSWORD})
    assert status == 200, body


def page(server, path):
    """The HTML of page `path` as a visitor who is not signed in gets it."""
    with urllib.request.urlopen(server.url + path, timeout=30) as response:
        assert response.status == 200
        return response.read().decode("utf-8")


def test_pages_one_server_keeps_show_what_the_other_changed(pair):
    """A page rendered for visitors who are not signed in is kept by its
    process and served again, as long as what decides it is unchanged."""
    first, second, admin = pair
    status, body, _ = first.call("POST", "/rest/bug", as_key(admin), {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Shown on both", "op_sys": "Linux", "platform": "PC"})
    assert status == 201, body
    bug_page = f"/show_bug.cgi?id={body['id']}"
    for _ in range(2):                      # rendered, then served as kept
        shown = page(second, bug_page)
        assert "Shown on both" in shown and "Added through the first" not in shown
        assert "TestProduct" in shown

    status, body, _ = first.call("POST", f"/rest/bug/{body['id']}/comment", as_key(admin),
                                 {"comment": "Added through the first"})
    assert status == 201, body
    assert "Added through the first" in page(second, bug_page)
    status, body, _ = first.call("PUT", "/rest/product/TestProduct", as_key(admin),
                                 {"name": "Renamed Product"})
    assert status == 200, body
    shown = page(second, bug_page)
    assert "Renamed Product" in shown and "TestProduct" not in shown


def test_a_search_one_server_keeps_is_answered_anew_after_a_change_through_the_other(pair):
    """A server keeps a caller's search answer (on SQLite); a bug changed or
    filed through the other server shows in its next answer."""
    first, second, admin = pair
    _, _, key = add_carol(first, admin)
    for path, body in (("/rest/product", {"name": "Gadgets", "description": "Things",
                                          "version": "1.0"}),
                       ("/rest/component", {"product": "Gadgets", "name": "Widgets",
                                            "description": "Small things",
                                            "default_assignee": ADMIN})):
        status, answer, _ = first.call("POST", path, as_key(admin), body)
        assert status == 201, answer
    filed = dict(product="Gadgets", component="Widgets", version="1.0", op_sys="Linux",
                 platform="PC")
    status, body, _ = second.call("POST", "/rest/bug", as_key(admin),
                                  dict(filed, summary="filed"))
    assert status == 201, body
    bug_id = body["id"]

    def found():
        status, body, _ = first.call("GET", "/rest/bug", dict(as_key(key), product="Gadgets",
                                                              limit=50))
        assert status == 200, body
        return [(bug["id"], bug["summary"], bug["cc"]) for bug in body["bugs"]]
    assert found() == found() == [(bug_id, "filed", [])]

    status, body, _ = second.call("PUT", f"/rest/bug/{bug_id}", as_key(admin),
                                  {"summary": "changed", "cc": {"add": ["carol@example.com"]}})
    assert status == 200, body
    assert found() == [(bug_id, "changed", ["carol@example.com"])]
    status, body, _ = second.call("POST", "/rest/bug", as_key(admin),
                                  dict(filed, summary="another"))
    assert status == 201, body
    assert found() == [(bug_id, "changed", ["carol@example.com"]), (body["id"], "another", [])]
