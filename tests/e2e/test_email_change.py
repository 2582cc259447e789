"""Changing one's own e-mail address (the login), as Bugzilla's preferences
page and token.cgi do it while allowemailchange is on: the new address gets
a link that confirms the change (with the account's password), the current
one a notice whose link cancels it, and takes the address back after the
change; over REST, JSON-RPC and the web pages, with a real SMTP server."""

import re
from datetime import datetime, timedelta, timezone

import pytest

from accounts import ADMIN
from bug_support import set_param
from notify_support import deliver, use_smtp
from page_support import Browser, text_of


OLD, NEW = "dana@example.com", "dana@new.example.com"
PASSWORD = "dana password 1"


@pytest.fixture
def dana(services, smtp):
    use_smtp(services, smtp)
    set_param(services, "urlbase", "https://bugs.example.com/")
    user_id = services.add_user(OLD, password=PASSWORD, real_name="Dana")
    return {"id": user_id, "key": services.api_key(OLD)}


def rest(client, path, body, key=None):
    return client.simulate_post(f"/rest/user/{path}", json=body,
                                params={"Bugzilla_api_key": key} if key else None)


def jsonrpc(client, method, params):
    answer = client.simulate_post("/jsonrpc.cgi", json={"method": method, "params": [params],
                                                        "id": 1}).json
    return answer["result"], (answer["error"] or {}).get("code")


def link_token(mail, action):
    found = re.search(r"https://bugs\.example\.com/token\.cgi\?t=(\w+)&a=" + action,
                      mail.get_content())
    assert found, mail.get_content()
    return found.group(1)


def login_of(services, user_id):
    return services.query("SELECT login FROM users WHERE id = ?", (user_id,))[0][0]


def can_sign_in(client, login):
    return client.simulate_get("/rest/login", params={"login": login,
                                                      "password": PASSWORD}).status_code == 200


def requested(client, services, smtp, dana):
    """Ask for the change over REST and deliver the mails; returns
    (token mailed to the new address, token mailed to the old one)."""
    answer = rest(client, "request_email_change", {"new_email": NEW,
                                                   "current_password": PASSWORD}, dana["key"])
    assert (answer.status_code, answer.json) == (200, {"result": None})
    assert login_of(services, dana["id"]) == OLD               # nothing changed yet
    deliver(services)
    confirm, notice = smtp.to(NEW)[-1], smtp.to(OLD)[-1]
    assert confirm["Subject"] == "Confirm your new e-mail address"
    assert notice["Subject"] == "Your e-mail address is changing"
    assert NEW in notice.get_content() and "a=cfmem" not in notice.get_content()
    return link_token(confirm, "cfmem"), link_token(notice, "cxlem")


def test_the_new_address_confirms_the_change_over_rest(client, services, smtp, dana):
    new_token, old_token = requested(client, services, smtp, dana)
    # Only hashes are kept; the outbox never held the secrets.
    for secret in (new_token, old_token):
        assert secret not in str(services.query("SELECT * FROM account_tokens"))
        assert secret not in str(services.query("SELECT * FROM outbox_messages"))
    checked = rest(client, "check_token", {"email_token": new_token}).json
    assert checked == {"type": "emailnew", "login": OLD, "email": NEW}
    wrong = rest(client, "change_email", {"email_token": new_token, "password": "wrong"})
    assert (wrong.status_code, wrong.json["code"]) == (401, 300)
    assert login_of(services, dana["id"]) == OLD
    answer = rest(client, "change_email", {"email_token": new_token, "password": PASSWORD})
    assert (answer.status_code, answer.json) == (200, {"id": dana["id"], "login": NEW})
    assert login_of(services, dana["id"]) == NEW
    assert can_sign_in(client, NEW) and not can_sign_in(client, OLD)
    # The key still works (sessions and keys stay, as Bugzilla keeps them).
    assert client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": dana["key"]}
                               ).json["name"] == NEW
    again = rest(client, "change_email", {"email_token": new_token, "password": PASSWORD})
    assert (again.status_code, again.json["code"]) == (400, 32000)
    assert services.query("SELECT field, removed, added FROM audit_log WHERE class ="
                          " 'Bugzilla::User'") == [("email", OLD, NEW)]


def test_the_old_address_takes_the_address_back_after_the_change(client, services, smtp, dana):
    new_token, old_token = requested(client, services, smtp, dana)
    with services.db.transaction(write=True) as conn:
        from bugsvc.accounts import auth
        auth.create_token(conn, dana["id"], None, datetime.now(timezone.utc))
    rest(client, "change_email", {"email_token": new_token, "password": PASSWORD})
    assert rest(client, "check_token", {"email_token": old_token}).json == {
        "type": "emailold", "login": NEW, "email": OLD}
    answer = rest(client, "cancel_token", {"email_token": old_token})
    assert answer.json == {"type": "emailold", "login": OLD}
    assert login_of(services, dana["id"]) == OLD
    # Whoever made the change is signed out everywhere; the link is spent.
    assert services.query("SELECT COUNT(*) FROM login_tokens WHERE user_id = ?",
                          (dana["id"],)) == [(0,)]
    again = rest(client, "cancel_token", {"email_token": old_token})
    assert (again.status_code, again.json["code"]) == (400, 32000)


def test_either_address_cancels_a_change_not_yet_made(client, services, smtp, dana):
    new_token, old_token = requested(client, services, smtp, dana)
    assert rest(client, "cancel_token", {"email_token": old_token}).json == {
        "type": "emailold", "login": OLD}
    refused = rest(client, "change_email", {"email_token": new_token, "password": PASSWORD})
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    assert login_of(services, dana["id"]) == OLD
    # Over JSON-RPC, and from the new address's link this time.
    new_token, _ = requested(client, services, smtp, dana)
    assert jsonrpc(client, "User.cancel_token", {"email_token": new_token}) == (
        {"type": "emailnew", "login": OLD}, None)
    assert jsonrpc(client, "User.change_email", {"email_token": new_token,
                                                 "password": PASSWORD}) == (None, 32000)


def test_a_mail_sent_after_the_change_was_cancelled_carries_no_link(client, services, smtp,
                                                                    dana):
    rest(client, "request_email_change", {"new_email": NEW, "current_password": PASSWORD},
         dana["key"])
    # The current address's notice goes out first; its link cancels at once.
    from bugsvc.store import outbox
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE outbox_messages SET next_attempt_at = ? WHERE kind = ?",
                     (outbox.stamp(datetime.now(timezone.utc) + timedelta(hours=1)),
                      "email_change_new"))
    deliver(services)
    rest(client, "cancel_token", {"email_token": link_token(smtp.to(OLD)[0], "cxlem")})
    later = datetime.now(timezone.utc) + timedelta(hours=2)
    deliver(services, clock=lambda: later)
    assert smtp.to(NEW) == []
    assert services.query("SELECT state FROM outbox_messages WHERE kind = 'email_change_new'"
                          ) == [("dropped",)]


def test_over_jsonrpc_the_change_is_asked_for_and_confirmed(client, services, smtp, dana):
    result = jsonrpc(client, "User.request_email_change", {
        "Bugzilla_api_key": dana["key"], "new_email": NEW, "current_password": PASSWORD})
    assert result == (None, None)
    deliver(services)
    token = link_token(smtp.to(NEW)[0], "cfmem")
    assert jsonrpc(client, "User.change_email", {"email_token": token, "password": PASSWORD}) \
        == ({"id": dana["id"], "login": NEW}, None)


@pytest.mark.parametrize("body, code", [
    ({"new_email": NEW, "current_password": "wrong"}, 300),
    ({"new_email": NEW}, 50),
    ({"current_password": PASSWORD}, 50),
    ({"new_email": "not an address", "current_password": PASSWORD}, 501),
    ({"new_email": ADMIN, "current_password": PASSWORD}, 500),
    ({"new_email": ADMIN.upper(), "current_password": PASSWORD}, 500),
])
def test_a_request_that_cannot_be_made_is_refused_and_mails_nothing(client, services, dana,
                                                                    body, code):
    answer = rest(client, "request_email_change", body, dana["key"])
    assert answer.json["code"] == code
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM account_tokens") == [(0,)]


def test_nobody_asks_for_anyone_elses_change(client, services, dana):
    answer = rest(client, "request_email_change", {"new_email": NEW,
                                                   "current_password": PASSWORD})
    assert (answer.status_code, answer.json["code"]) == (401, 410)
    # Signed in as the administrator, the change is the administrator's own
    # and needs its password: there is no parameter naming another account.
    admin_key = services.api_key(ADMIN)
    answer = rest(client, "request_email_change", {"new_email": NEW, "user": OLD,
                                                   "current_password": PASSWORD}, admin_key)
    assert answer.json["code"] == 300
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]


def test_allowemailchange_off_refuses_the_request(client, services, dana):
    set_param(services, "allowemailchange", "0")
    for body in ({"new_email": NEW, "current_password": PASSWORD}, {}):
        answer = rest(client, "request_email_change", body, dana["key"])
        assert (answer.status_code, answer.json["code"]) == (400, 32000)
        assert "allowemailchange" in answer.json["message"]
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]


def test_asking_for_ones_own_address_changes_and_mails_nothing(client, services, dana):
    answer = rest(client, "request_email_change", {"new_email": OLD,
                                                   "current_password": PASSWORD}, dana["key"])
    assert (answer.status_code, answer.json) == (200, {"result": None})
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM account_tokens") == [(0,)]
    assert login_of(services, dana["id"]) == OLD


def test_one_change_at_a_time(client, services, smtp, dana):
    requested(client, services, smtp, dana)
    answer = rest(client, "request_email_change", {"new_email": "other@example.com",
                                                   "current_password": PASSWORD}, dana["key"])
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    # Three days later the links have expired and another change may begin.
    later = datetime.now(timezone.utc) + timedelta(days=3, minutes=1)
    from bugsvc.services import account
    assert services.call(account.request_email_change, {
        "new_email": "other@example.com", "current_password": PASSWORD},
        as_user=OLD, now=later) is None


def test_a_confirmation_fails_when_another_account_took_the_address(
        client, services, smtp, dana):
    new_token, _ = requested(client, services, smtp, dana)
    services.add_user(NEW)
    answer = rest(client, "change_email", {"email_token": new_token, "password": PASSWORD})
    assert (answer.status_code, answer.json["code"]) == (400, 500)
    assert login_of(services, dana["id"]) == OLD


# The web pages -------------------------------------------------------------------------------

def test_the_change_through_the_preferences_and_the_mailed_links(app, services, smtp, dana):
    browser = Browser(app)
    browser.login(OLD, PASSWORD)
    page = browser.get("/userprefs.cgi?tab=account")
    assert 'name="new_login_name"' in page.text
    done = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Dana",
                                           "old_password": PASSWORD, "new_login_name": NEW})
    assert "A mail with a link to confirm your new e-mail address" in text_of(done.text)
    deliver(services)
    token = link_token(smtp.to(NEW)[0], "cfmem")
    form = browser.get(f"/token.cgi?t={token}&a=cfmem")
    assert form.status_code == 200 and form.headers["Referrer-Policy"] == "no-referrer"
    assert f"{OLD} to {NEW}" in text_of(form.text)
    wrong = browser.post("/token.cgi", {"a": "chgem", "t": token, "password": "wrong"})
    assert wrong.status_code == 401 and login_of(services, dana["id"]) == OLD
    changed = browser.post("/token.cgi", {"a": "chgem", "t": token, "password": PASSWORD})
    assert changed.status_code == 200 and NEW in text_of(changed.text)
    assert login_of(services, dana["id"]) == NEW
    # The old address's link: a button first (a GET changes nothing), then back.
    old_token = link_token(smtp.to(OLD)[0], "cxlem")
    ask = browser.get(f"/token.cgi?t={old_token}&a=cxlem")
    assert "gets the address" in text_of(ask.text) and login_of(services, dana["id"]) == NEW
    browser.post("/token.cgi", {"a": "cxlem", "t": old_token})
    assert login_of(services, dana["id"]) == OLD
    # The old address's link never confirms anything.
    assert browser.get(f"/token.cgi?t={old_token}&a=cfmem").status_code in (400, 401)


def test_the_preferences_offer_no_change_while_allowemailchange_is_off(app, services, dana):
    set_param(services, "allowemailchange", "0")
    browser = Browser(app)
    browser.login(OLD, PASSWORD)
    assert 'name="new_login_name"' not in browser.get("/userprefs.cgi?tab=account").text
    browser.post("/userprefs.cgi", {"tab": "account", "realname": "Dana",
                                    "old_password": PASSWORD, "new_login_name": NEW})
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]
