"""The pages that mailed links open, and the forms that send those mails:
a forgotten password (the sign-in page's form, token.cgi a=cfmpw and
a=chgpw, a=cxlpw), a new account (createaccount.cgi, token.cgi
a=request_new_account, a=confirm_new_account, a=cancel_new_account). A
token that does not work answers the operation's error and changes
nothing; every form carries a form token."""

from datetime import datetime, timedelta, timezone

import pytest

from bug_support import set_param
from bugsvc.accounts import tokens
from conftest import world_fixture
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


@world_fixture
def world(services):
    return World(services)


def issue(services, kind, login, now=None):
    """A token as a mailed link carries it (the mail itself is tested below
    and in the notification tests)."""
    now = now or datetime.now(timezone.utc)
    with services.db.transaction(write=True) as conn:
        if kind == tokens.PASSWORD:
            user_id = conn.execute("SELECT id FROM users WHERE login = ?", (login,)).fetchone()[0]
            return tokens.issue(conn, kind, now, user_id=user_id)
        return tokens.issue(conn, kind, now, login=login)


def password_hash(services, login=PLAIN):
    return services.query("SELECT password_hash FROM users WHERE login = ?", (login,))


def token_count(services):
    return services.query("SELECT COUNT(*) FROM account_tokens")[0][0]


def queued(services):
    return services.query("SELECT kind, user_id, address FROM outbox_messages"
                          " WHERE kind IN ('password_reset', 'new_account', 'account_exists')"
                          " ORDER BY id")


# Forgotten passwords ------------------------------------------------------------------------

def test_the_sign_in_page_offers_a_reset_that_tells_nothing_about_accounts(app, world,
                                                                           services):
    browser = Browser(app)
    page = browser.get("/login")
    assert "Forgot your password?" in page.text and 'name="loginname"' in page.text
    known = browser.post("/token.cgi", {"a": "reqpw", "loginname": PLAIN})
    browser.get("/login")
    unknown = browser.post("/token.cgi", {"a": "reqpw", "loginname": "nobody@example.com"})
    assert known.status_code == unknown.status_code == 200
    assert text_of(known.text).replace(PLAIN, "X") == text_of(unknown.text).replace(
        "nobody@example.com", "X")
    assert "a mail with a link to choose a new password" in text_of(known.text)
    plain_id = services.user_id(PLAIN)
    assert queued(services) == [("password_reset", plain_id, None)]


def test_a_reset_request_needs_a_login_and_a_form_token(app, world, services):
    browser = Browser(app)
    browser.get("/login")
    empty = browser.post("/token.cgi", {"a": "reqpw", "loginname": " "})
    assert empty.status_code == 400 and 'name="loginname"' in empty.text
    forged = browser.post("/token.cgi", {"a": "reqpw", "loginname": PLAIN}, token=False)
    assert forged.status_code == 403
    other_site = Browser(app)
    other_site.cookies = dict(browser.cookies)
    refused = other_site.post("/token.cgi", {"a": "reqpw", "loginname": PLAIN,
                                             "csrf_token": browser.token()},
                              headers={"Sec-Fetch-Site": "cross-site"})
    assert refused.status_code == 403
    assert queued(services) == []


def test_a_mailed_link_sets_a_new_password_and_ends_every_session(app, world, services):
    signed_in = Browser(app)
    signed_in.login(PLAIN, PASSWORDS[PLAIN])
    secret = issue(services, tokens.PASSWORD, PLAIN)
    browser = Browser(app)
    form = browser.get(f"/token.cgi?t={secret}&a=cfmpw")
    assert form.status_code == 200 and PLAIN in form.text
    assert form.headers["Referrer-Policy"] == "no-referrer"
    assert 'name="matchpassword"' in form.text and 'value="chgpw"' in form.text
    done = browser.post("/token.cgi", {"a": "chgpw", "t": secret,
                                       "password": "brand new pass 1",
                                       "matchpassword": "brand new pass 1"})
    assert "Your new password is set" in done.text and 'name="Bugzilla_password"' in done.text
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]
    assert "Welcome to bugsvc" in signed_in.get("/").text       # that session ended
    browser.login(PLAIN, "brand new pass 1")
    again = Browser(app).get(f"/token.cgi?t={secret}&a=cfmpw")
    assert again.status_code == 400 and "does not exist, has expired" in again.text


def test_a_link_used_while_signed_in_as_someone_else_keeps_that_session(app, world, services):
    from accounts import ADMIN, ADMIN_PASSWORD
    plain = Browser(app)
    plain.login(PLAIN, PASSWORDS[PLAIN])
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    secret = issue(services, tokens.PASSWORD, PLAIN)
    admin.get(f"/token.cgi?t={secret}&a=cfmpw")
    done = admin.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "brand new pass 1",
                                     "matchpassword": "brand new pass 1"})
    assert "you are still signed in as yourself" in done.text
    assert f'<span class="who">{ADMIN}</span>' in done.text
    assert "Welcome to bugsvc" in plain.get("/").text          # the account's session ended
    Browser(app).login(PLAIN, "brand new pass 1")


def test_a_link_used_while_signed_in_as_its_account_signs_out(app, world, services):
    plain = Browser(app)
    plain.login(PLAIN, PASSWORDS[PLAIN])
    secret = issue(services, tokens.PASSWORD, PLAIN)
    plain.get(f"/token.cgi?t={secret}&a=cfmpw")
    done = plain.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "brand new pass 1",
                                     "matchpassword": "brand new pass 1"})
    assert "Your new password is set" in done.text and 'name="Bugzilla_password"' in done.text
    assert "bugsvc_session" not in plain.cookies


def test_a_reset_form_with_different_or_weak_passwords_changes_nothing(app, world, services):
    secret = issue(services, tokens.PASSWORD, PLAIN)
    before = password_hash(services)
    browser = Browser(app)
    browser.get(f"/token.cgi?t={secret}&a=cfmpw")
    differ = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "one password 1",
                                         "matchpassword": "two password 2"})
    assert differ.status_code == 400 and "not the same" in differ.text
    short = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "abc",
                                        "matchpassword": "abc"})
    assert short.status_code == 400 and "Error code" not in short.text
    assert 'name="matchpassword"' in short.text                 # the form again
    forged = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "good pass 12",
                                         "matchpassword": "good pass 12"}, token=False)
    assert forged.status_code == 403
    assert password_hash(services) == before and token_count(services) == 1
    browser.get(f"/token.cgi?t={secret}&a=cfmpw")
    done = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "good pass 12",
                                       "matchpassword": "good pass 12"})
    assert "Your new password is set" in done.text and password_hash(services) != before


@pytest.mark.parametrize("secret", ["", "not-a-token", "x" * 32])
def test_a_link_without_a_working_token_answers_its_error(app, world, services, secret):
    browser = Browser(app)
    for action in ("cfmpw", "cxlpw", "request_new_account", "cancel_new_account"):
        page = browser.get(f"/token.cgi?t={secret}&a={action}")
        assert page.status_code == 400
        if secret:
            assert "does not exist, has expired, or has been used" in page.text
            assert "Error code 32000" in page.text
    browser.get("/login")
    before = password_hash(services)
    refused = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "good pass 12",
                                          "matchpassword": "good pass 12"})
    assert refused.status_code == 400 and password_hash(services) == before


def test_a_refused_link_still_shows_who_is_signed_in(app, world):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/token.cgi?t=nothing&a=cfmpw")
    assert page.status_code == 400 and f'<span class="who">{PLAIN}</span>' in page.text
    assert "bugsvc_session" in browser.cookies


def test_a_token_of_one_kind_does_not_work_for_the_other(app, world, services):
    reset = issue(services, tokens.PASSWORD, PLAIN)
    offer = issue(services, tokens.ACCOUNT, "newcomer@example.com")
    browser = Browser(app)
    assert browser.get(f"/token.cgi?t={reset}&a=request_new_account").status_code == 400
    assert browser.get(f"/token.cgi?t={offer}&a=cfmpw").status_code == 400
    assert browser.get(f"/token.cgi?t={offer}&a=cxlpw").status_code == 400
    assert token_count(services) == 2


def test_an_expired_link_changes_nothing(app, world, services):
    old = datetime.now(timezone.utc) - tokens.MAX_AGE - timedelta(minutes=1)
    secret = issue(services, tokens.PASSWORD, PLAIN, now=old)
    browser = Browser(app)
    assert browser.get(f"/token.cgi?t={secret}&a=cfmpw").status_code == 400
    browser.get("/login")
    before = password_hash(services)
    page = browser.post("/token.cgi", {"a": "chgpw", "t": secret, "password": "good pass 12",
                                       "matchpassword": "good pass 12"})
    assert page.status_code == 400 and password_hash(services) == before


def test_a_disabled_account_cannot_use_its_link(app, world, services):
    secret = issue(services, tokens.PASSWORD, PLAIN)
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'gone' WHERE login = ?", (PLAIN,))
    assert Browser(app).get(f"/token.cgi?t={secret}&a=cfmpw").status_code == 400


def test_a_reset_link_is_cancelled_and_the_password_stays(app, world, services):
    secret = issue(services, tokens.PASSWORD, PLAIN)
    before = password_hash(services)
    browser = Browser(app)
    page = browser.get(f"/token.cgi?t={secret}&a=cxlpw")
    assert page.status_code == 200 and "Cancel the link" in page.text
    assert token_count(services) == 1                           # a GET changes nothing
    assert browser.post("/token.cgi", {"a": "cxlpw", "t": secret},
                        token=False).status_code == 403
    assert token_count(services) == 1
    browser.get(f"/token.cgi?t={secret}&a=cxlpw")
    done = browser.post("/token.cgi", {"a": "cxlpw", "t": secret})
    assert "The link no longer works" in done.text and "stays as it was" in done.text
    assert token_count(services) == 0 and password_hash(services) == before
    assert browser.get(f"/token.cgi?t={secret}&a=cfmpw").status_code == 400


def test_an_unknown_action_is_refused(app, world):
    browser = Browser(app)
    assert browser.get("/token.cgi?t=abc&a=chgem").status_code == 400
    browser.get("/login")
    assert browser.post("/token.cgi", {"a": "nothing", "t": "abc"}).status_code == 400


# New accounts -----------------------------------------------------------------------------

def test_sign_up_is_offered_only_while_createemailregexp_allows_it(app, world, services):
    browser = Browser(app)
    assert 'href="/createaccount.cgi"' in browser.get("/login").text
    assert browser.get("/createaccount.cgi").status_code == 200
    set_param(services, "createemailregexp", "")
    assert 'href="/createaccount.cgi"' not in browser.get("/login").text
    page = browser.get("/createaccount.cgi")
    assert page.status_code == 403 and 'name="login"' not in page.text
    browser.get("/login")
    refused = browser.post("/createaccount.cgi", {"login": "newcomer@example.com"})
    assert refused.status_code == 400 and "createemailregexp" in refused.text
    assert queued(services) == []


def test_a_new_account_by_a_mailed_link(app, world, services):
    set_param(services, "createemailregexp", r"@example\.com$")
    browser = Browser(app)
    browser.get("/createaccount.cgi")
    outsider = browser.post("/createaccount.cgi", {"login": "someone@elsewhere.org"})
    assert outsider.status_code == 400 and "cannot be created" in outsider.text
    sent = browser.post("/createaccount.cgi", {"login": "newcomer@example.com"})
    assert sent.status_code == 200 and "A mail is on its way" in sent.text
    browser.get("/createaccount.cgi")
    existing = browser.post("/createaccount.cgi", {"login": PLAIN})
    assert text_of(existing.text).replace(PLAIN, "X") == text_of(sent.text).replace(
        "newcomer@example.com", "X")                           # no oracle
    assert queued(services) == [("new_account", None, "newcomer@example.com"),
                                ("account_exists", services.user_id(PLAIN), None)]
    secret = issue(services, tokens.ACCOUNT, "newcomer@example.com")
    form = browser.get(f"/token.cgi?t={secret}&a=request_new_account")
    assert form.status_code == 200 and "newcomer@example.com" in form.text
    assert form.headers["Referrer-Policy"] == "no-referrer"
    differ = browser.post("/token.cgi", {"a": "confirm_new_account", "t": secret,
                                         "realname": "New Comer", "password": "a good pass 1",
                                         "matchpassword": "a good pass 2"})
    assert differ.status_code == 400 and 'value="New Comer"' in differ.text
    assert services.query("SELECT COUNT(*) FROM users WHERE login = 'newcomer@example.com'") \
        == [(0,)]
    home = browser.post("/token.cgi", {"a": "confirm_new_account", "t": secret,
                                       "realname": "New Comer", "password": "a good pass 1",
                                       "matchpassword": "a good pass 1"})
    assert "Your account has been created and you are signed in." in home.text
    assert "newcomer@example.com" in home.text and "bugsvc_session" in browser.cookies
    assert services.query("SELECT real_name FROM users WHERE login = 'newcomer@example.com'") \
        == [("New Comer",)]
    used = Browser(app).get(f"/token.cgi?t={secret}&a=request_new_account")
    assert used.status_code == 400
    Browser(app).login("newcomer@example.com", "a good pass 1")


def test_an_account_link_is_refused_once_sign_up_is_turned_off(app, world, services):
    secret = issue(services, tokens.ACCOUNT, "newcomer@example.com")
    set_param(services, "createemailregexp", "")
    browser = Browser(app)
    browser.get(f"/token.cgi?t={secret}&a=request_new_account")
    page = browser.post("/token.cgi", {"a": "confirm_new_account", "t": secret,
                                       "password": "a good pass 1",
                                       "matchpassword": "a good pass 1"})
    assert page.status_code == 400 and "Error code 501" in page.text
    assert services.query("SELECT COUNT(*) FROM users WHERE login = 'newcomer@example.com'") \
        == [(0,)]
    assert token_count(services) == 1


def test_an_account_link_is_cancelled(app, world, services):
    secret = issue(services, tokens.ACCOUNT, "newcomer@example.com")
    browser = Browser(app)
    assert browser.get(f"/token.cgi?t={secret}&a=cancel_new_account").status_code == 200
    done = browser.post("/token.cgi", {"a": "cancel_new_account", "t": secret})
    assert "No account was created for newcomer@example.com" in done.text
    assert browser.get(f"/token.cgi?t={secret}&a=request_new_account").status_code == 400
    assert token_count(services) == 0


def test_a_signed_in_visitor_is_sent_home_from_sign_up(app, world):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/createaccount.cgi", follow=False)
    assert page.status_code == 303 and page.headers["Location"] == "/"
