"""Signing in and out of the web pages: the session cookie is a login token
(User.login, throttled like every sign-in; User.logout), its flags, the
form token on every form that changes something, and sessions that end
elsewhere (logout, password change, expiry)."""

import pytest
from freezegun import freeze_time

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from conftest import world_fixture
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


@world_fixture
def world(services):
    return World(services)


@pytest.fixture
def browser(app):
    return Browser(app)


def session_cookie(result):
    return next(cookie for cookie in result.cookies.values() if cookie.name == "bugsvc_session")


def test_signing_in_sets_an_httponly_lax_session_cookie(browser, world, services):
    browser.get("/login")
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password":
                                     PASSWORDS[PLAIN], "target": "/query.cgi",
                                     "Bugzilla_restrictlogin": "1"}, follow=False)
    assert result.status_code == 303 and result.headers["Location"] == "/query.cgi"
    cookie = session_cookie(result)
    assert cookie.http_only and cookie.same_site == "Lax" and not cookie.secure
    # rememberlogin is "on" on a default installation, as in Bugzilla: the
    # cookie outlives the browser's session.
    assert cookie.path == "/" and cookie.max_age == 30 * 24 * 3600
    # The cookie is a login token of the account, bound to the address (the
    # form's box, ticked unless the visitor unticks it).
    assert services.query("SELECT u.login, t.ip_address FROM login_tokens t JOIN users u"
                          " ON u.id = t.user_id") == [(PLAIN, "127.0.0.1")]
    page = browser.get("/")
    assert "My work" in page.text and PLAIN in page.text


@pytest.mark.parametrize("mode, offered, ticked, remembered, remembered_unticked", [
    ("on", False, False, True, True), ("off", False, False, False, False),
    ("defaulton", True, True, True, False), ("defaultoff", True, False, True, False),
])
def test_rememberlogin_decides_whether_the_session_outlives_the_browsers(
        browser, world, services, mode, offered, ticked, remembered, remembered_unticked):
    set_param(services, "rememberlogin", mode)
    page = browser.get("/login").text
    assert ('name="Bugzilla_remember"' in page) == offered
    assert ('value="on" checked' in page) == ticked
    for asked, expected in ((True, remembered), (False, remembered_unticked)):
        form = {"Bugzilla_login": PLAIN, "Bugzilla_password": PASSWORDS[PLAIN]}
        if asked:
            form["Bugzilla_remember"] = "on"
        browser.get("/login")
        result = browser.post("/login", form, follow=False)
        assert session_cookie(result).max_age == (30 * 24 * 3600 if expected else None), asked
        browser.cookies.clear()


def test_cookiepath_is_the_path_of_every_cookie_of_the_pages(browser, world, services):
    set_param(services, "cookiepath", "/bugs/")
    result = browser.get("/login")
    assert {cookie.name: cookie.path for cookie in result.cookies.values()} == {
        "bugsvc_visit": "/bugs/"}
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password":
                                     PASSWORDS[PLAIN], "target": "/"}, follow=False)
    paths = {cookie.name: cookie.path for cookie in result.cookies.values()}
    assert paths == {"bugsvc_session": "/bugs/", "bugsvc_notice": "/bugs/"}
    page = browser.get("/")
    assert PLAIN in page.text
    result = browser.post("/logout", {}, follow=False)
    ended = session_cookie(result)
    assert ended.path == "/bugs/" and ended.value == ""       # removed where it was set
    assert "bugsvc_session" not in browser.cookies


def test_the_cookie_is_secure_behind_https_from_a_trusted_proxy(config, db, world):
    from bugsvc.app import create_app
    from bugsvc.web.client_address import parse_networks
    config.trusted_proxies = parse_networks("127.0.0.1")
    browser = Browser(create_app(config, db=db))
    browser.get("/login")
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7"}
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password":
                                     PASSWORDS[PLAIN]}, follow=False, headers=forwarded)
    assert session_cookie(result).secure


def test_a_forwarded_scheme_from_anyone_else_is_not_believed(browser, world):
    browser.get("/login")
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password":
                                     PASSWORDS[PLAIN]}, follow=False,
                          headers={"X-Forwarded-Proto": "https"})
    assert not session_cookie(result).secure


def test_a_wrong_password_is_refused_and_counted(browser, world, services):
    browser.get("/login")
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password": "wrong"})
    assert result.status_code == 401
    assert "The username or password you entered is not valid." in text_of(result.text)
    assert "bugsvc_session" not in browser.cookies
    assert services.query("SELECT failures FROM login_throttle") == [(1,)]


def test_sign_ins_are_throttled_like_the_api(browser, world, client):
    # After five failures the login waits a second: the clock stands still
    # so that a slow machine does not let that second pass.
    with freeze_time("2026-05-01 09:00:00"):
        browser.get("/login")
        for _ in range(5):
            browser.post("/login", {"Bugzilla_login": PLAIN, "Bugzilla_password": "wrong"})
        result = browser.post("/login", {"Bugzilla_login": PLAIN,
                                         "Bugzilla_password": PASSWORDS[PLAIN]})
        assert result.status_code == 401
        assert "Too many failed sign-in attempts" in result.text
        assert "bugsvc_session" not in browser.cookies
        # The API answers alike: one count for both ways in.
        api = client.simulate_get("/rest/login", params={"login": PLAIN,
                                                         "password": PASSWORDS[PLAIN]})
        assert api.json["code"] == 32000


def test_signing_out_ends_the_token(browser, world, services):
    browser.login(PLAIN, PASSWORDS[PLAIN])
    token = browser.cookies["bugsvc_session"]
    page = browser.get("/logout")
    result = browser.post("/logout", {})
    assert "You are signed out." in result.text and "bugsvc_session" not in browser.cookies
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]
    # The old cookie, sent again, is a session that ended: the page is anonymous.
    browser.cookies["bugsvc_session"] = token
    again = browser.get("/")
    assert "Welcome to bugsvc" in again.text and "Your session has ended" in again.text
    assert "bugsvc_session" not in browser.cookies
    assert page.status_code == 200


def test_a_session_ends_when_the_token_is_logged_out_elsewhere(browser, world, client):
    browser.login(PLAIN, PASSWORDS[PLAIN])
    client.simulate_get("/rest/logout", params={"token": browser.cookies["bugsvc_session"]})
    page = browser.get("/userprefs.cgi")
    assert page.status_code == 401 and "Sign in" in page.text


def test_a_session_ends_when_the_account_is_disabled(browser, world, services):
    browser.login(PLAIN, PASSWORDS[PLAIN])
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'Gone' WHERE login = ?", (PLAIN,))
    page = browser.get("/")
    assert "Welcome to bugsvc" in page.text and "bugsvc_session" not in browser.cookies


def test_a_post_without_the_form_token_is_refused_and_changes_nothing(
        browser, world, services):
    browser.login(PLAIN, PASSWORDS[PLAIN])
    before = services.query("SELECT * FROM comments")
    for token in (None, "forged", browser.token()):
        fields = {"id": world.bug, "comment": "CSRF!"}
        if token == "forged":
            fields["csrf_token"] = "0" * 40
        result = browser.post("/process_bug.cgi", fields, token=token is not None
                              and token != "forged")
        if token is None or token == "forged":
            assert result.status_code == 403
            assert "nothing was changed" in result.text
    assert services.query("SELECT COUNT(*) FROM comments WHERE body = 'CSRF!'") == [(0,)]
    assert len(services.query("SELECT * FROM comments")) == len(before)


def test_a_form_from_another_site_is_refused_even_with_a_token(browser, world, services):
    browser.login(PLAIN, PASSWORDS[PLAIN])
    browser.get(f"/show_bug.cgi?id={world.bug}")
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        result = browser.post("/process_bug.cgi", {"id": world.bug, "comment": "x"},
                              headers=headers)
        assert result.status_code == 403
    assert services.query("SELECT COUNT(*) FROM comments WHERE body = 'x'") == [(0,)]


def test_the_form_token_belongs_to_the_session(app, world, services):
    first, second = Browser(app), Browser(app)
    first.login(PLAIN, PASSWORDS[PLAIN])
    second.login(ADMIN, ADMIN_PASSWORD)
    first.get(f"/show_bug.cgi?id={world.bug}")
    stolen = first.token()
    result = second.post("/process_bug.cgi", {"id": world.bug, "comment": "y",
                                              "csrf_token": stolen})
    assert result.status_code == 403


def test_signing_in_needs_the_form_token_too(browser, world):
    result = browser.post("/login", {"Bugzilla_login": PLAIN,
                                     "Bugzilla_password": PASSWORDS[PLAIN]}, token=False)
    assert result.status_code == 403 and "bugsvc_session" not in browser.cookies


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/\\evil",
                                    "javascript:alert(1)"])
def test_sign_in_goes_back_only_to_a_page_of_this_site(browser, world, target):
    browser.get("/login")
    result = browser.post("/login", {"Bugzilla_login": PLAIN, "target": target,
                                     "Bugzilla_password": PASSWORDS[PLAIN]}, follow=False)
    assert result.headers["Location"] == "/"


def test_a_page_that_needs_a_sign_in_offers_the_form_and_comes_back(browser, world):
    page = browser.get("/enter_bug.cgi?product=TestProduct")
    assert page.status_code == 401 and 'name="Bugzilla_password"' in page.text
    assert 'value="/enter_bug.cgi?product=TestProduct"' in page.text
    result = browser.post("/login", {"Bugzilla_login": PLAIN,
                                     "Bugzilla_password": PASSWORDS[PLAIN],
                                     "target": "/enter_bug.cgi?product=TestProduct"})
    assert result.status_code == 200 and "File a bug in TestProduct" in result.text


def test_old_links_to_sign_in_and_out_work(browser, world):
    assert "Sign in" in browser.get("/index.cgi?GoAheadAndLogIn=1").text
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/relogin.cgi")
    assert page.status_code == 200 and "<h1>Sign out</h1>" in page.text
