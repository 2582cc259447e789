"""The preferences pages: one's real name, password and API keys."""

import re

import pytest

from page_support import PASSWORDS, PLAIN, Browser, World


@pytest.fixture
def browser(app, services):
    World(services)
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    return browser


def test_the_real_name_is_changed(browser, services):
    browser.get("/userprefs.cgi")
    page = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Q. Plain"})
    assert "Your preferences have been saved." in page.text
    assert services.query("SELECT real_name FROM users WHERE login = ?", (PLAIN,)) == [
        ("Pat Q. Plain",)]


def test_a_new_password_needs_the_current_one(browser, services):
    browser.get("/userprefs.cgi")
    before = services.query("SELECT password_hash FROM users WHERE login = ?", (PLAIN,))
    wrong = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Plain",
                                            "old_password": "nope",
                                            "new_password1": "fresh password 1",
                                            "new_password2": "fresh password 1"})
    assert wrong.status_code == 401 and "current password" in wrong.text
    differ = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Plain",
                                             "old_password": PASSWORDS[PLAIN],
                                             "new_password1": "fresh password 1",
                                             "new_password2": "fresh password 2"})
    assert differ.status_code == 400
    assert services.query("SELECT password_hash FROM users WHERE login = ?", (PLAIN,)) == before


def test_a_password_change_ends_every_session(app, browser, services):
    other = Browser(app)
    other.login(PLAIN, PASSWORDS[PLAIN])
    browser.get("/userprefs.cgi")
    page = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Plain",
                                           "old_password": PASSWORDS[PLAIN],
                                           "new_password1": "fresh password 1",
                                           "new_password2": "fresh password 1"})
    assert "Your password has been changed" in page.text and 'name="Bugzilla_password"' in page.text
    assert "bugsvc_session" not in browser.cookies
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]
    assert "Welcome to bugsvc" in other.get("/").text      # the other session ended too
    browser.login(PLAIN, "fresh password 1")


def test_api_keys_are_created_shown_once_and_revoked(browser, services, client):
    browser.get("/userprefs.cgi?tab=apikey")
    page = browser.post("/userprefs.cgi", {"tab": "apikey", "action": "create",
                                           "description": "laptop"})
    key = re.search(r'<code class="api-key">([A-Za-z0-9]{40})</code>', page.text).group(1)
    assert client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key}).json[
        "login"] == PLAIN
    listed = browser.get("/userprefs.cgi?tab=apikey")
    assert "laptop" in listed.text and key not in listed.text
    key_id = services.query("SELECT id FROM api_keys WHERE description = 'laptop'")[0][0]
    browser.post("/userprefs.cgi", {"tab": "apikey", "action": "revoke", "key_id": key_id})
    assert client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key}).json[
        "code"] == 306


def test_another_accounts_key_cannot_be_revoked(browser, services):
    from accounts import ADMIN
    services.api_key(ADMIN)
    key_id = services.query("SELECT id FROM api_keys")[0][0]
    browser.get("/userprefs.cgi?tab=apikey")
    page = browser.post("/userprefs.cgi", {"tab": "apikey", "action": "revoke",
                                           "key_id": key_id})
    assert page.status_code == 404
    assert services.query("SELECT revoked FROM api_keys") == [(0,)]
