"""Accounts by mail, over a real SMTP server: self-registration
(User.offer_account_by_email, for addresses matching createemailregexp,
confirmed by a mailed link) and password reset by a mailed one-time link.
Tokens are stored hashed, expire, work once; the answers never tell whether
an account exists."""

import re
from datetime import datetime, timedelta, timezone

import pytest

from bug_support import set_param
from bugsvc.accounts import auth
from bugsvc.errors import ServiceError
from bugsvc.services import account
from notify_support import deliver, use_smtp


@pytest.fixture
def mail(services, smtp):
    use_smtp(services, smtp)
    set_param(services, "urlbase", "https://bugs.example.com/")
    return services


def link_token(mail_message, action):
    match = re.search(r"https://bugs\.example\.com/token\.cgi\?t=(\w+)&a=" + action,
                      mail_message.get_content())
    assert match, mail_message.get_content()
    return match.group(1)


def error_code(call):
    with pytest.raises(ServiceError) as caught:
        call()
    return caught.value.code


def test_self_registration_by_a_mailed_link(mail, smtp, client):
    answer = client.simulate_post("/rest/user/offer_account_by_email",
                                  json={"email": "new@example.com"})
    assert answer.status_code == 200 and answer.json == {"result": None}
    assert mail.query("SELECT COUNT(*) FROM users WHERE login = 'new@example.com'") == [(0,)]
    deliver(mail)
    [offer] = smtp.to("new@example.com")
    assert offer["Subject"] == "Create your account"
    token = link_token(offer, "request_new_account")
    checked = client.simulate_post("/rest/user/check_token", json={"account_token": token})
    assert checked.json == {"type": "account", "login": "new@example.com"}
    created = client.simulate_post("/rest/user/create_account", json={
        "account_token": token, "password": "a good password", "full_name": "New Person"})
    assert created.status_code == 201
    assert created.json == {"id": created.json["id"], "login": "new@example.com"}
    login = client.simulate_get("/rest/login", params={"login": "new@example.com",
                                                       "password": "a good password"})
    assert login.status_code == 200
    again = client.simulate_post("/rest/user/create_account", json={
        "account_token": token, "password": "another password"})
    assert (again.status_code, again.json["code"]) == (400, 32000)


def test_an_address_that_has_an_account_gets_a_notice_and_the_same_answer(mail, smtp):
    mail.add_user("known@example.com")
    assert mail.call(account.offer_account_by_email, {"email": "KNOWN@example.com"}) is None
    assert mail.call(account.offer_account_by_email, {"email": "unknown@example.com"}) is None
    deliver(mail)
    [notice] = smtp.to("known@example.com")
    assert notice["Subject"] == "You already have an account"
    assert "token.cgi" not in notice.get_content()


def test_createemailregexp_decides_who_may_register(mail):
    set_param(mail, "createemailregexp", r"@example\.com$")
    assert error_code(lambda: mail.call(account.offer_account_by_email,
                                        {"email": "x@elsewhere.org"})) == 501
    set_param(mail, "createemailregexp", "")
    assert error_code(lambda: mail.call(account.offer_account_by_email,
                                        {"email": "x@example.com"})) == 501
    assert error_code(lambda: mail.call(account.offer_account_by_email, {})) == 50
    assert mail.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]


def test_one_mail_per_address_in_ten_minutes(mail, smtp):
    for _ in range(3):
        mail.call(account.offer_account_by_email, {"email": "new@example.com"})
    deliver(mail)
    assert len(smtp.to("new@example.com")) == 1
    later = datetime.now(timezone.utc) + timedelta(minutes=11)
    mail.call(account.offer_account_by_email, {"email": "new@example.com"}, now=later)
    deliver(mail, clock=lambda: later)
    assert len(smtp.to("new@example.com")) == 2


def test_password_reset_by_a_mailed_link(mail, smtp, client):
    user_id = mail.add_user("dev@example.com", password="the old password")
    with mail.db.transaction(write=True) as conn:
        session = auth.create_token(conn, user_id, None, datetime.now(timezone.utc))
    for login in ("dev@example.com", "nobody@example.com"):
        answer = client.simulate_post("/rest/user/request_password_reset",
                                      json={"login": login})
        assert answer.status_code == 200 and answer.json == {"result": None}
    assert mail.query("SELECT kind, user_id FROM outbox_messages") == [("password_reset",
                                                                        user_id)]
    deliver(mail)
    [reset] = smtp.to("dev@example.com")
    token = link_token(reset, "cfmpw")
    # Only a hash is kept; the outbox never held the secret.
    assert token not in str(mail.query("SELECT * FROM account_tokens"))
    assert token not in str(mail.query("SELECT * FROM outbox_messages"))
    answer = client.simulate_post("/rest/user/reset_password",
                                  json={"reset_token": token, "password": "a new password"})
    assert answer.json == {"id": user_id, "login": "dev@example.com"}
    assert client.simulate_get("/rest/login", params={
        "login": "dev@example.com", "password": "a new password"}).status_code == 200
    assert client.simulate_get("/rest/login", params={
        "login": "dev@example.com", "password": "the old password"}).json["code"] == 300
    # The other sessions ended, and the link works once.
    assert client.simulate_get("/rest/valid_login", params={
        "login": "dev@example.com", "token": session}).json == {"result": False}
    again = client.simulate_post("/rest/user/reset_password",
                                 json={"reset_token": token, "password": "third password"})
    assert (again.status_code, again.json["code"]) == (400, 32000)


def test_a_reset_token_expires_after_three_days(mail, smtp):
    mail.add_user("dev@example.com", password="the old password")
    mail.call(account.request_password_reset, {"login": "dev@example.com"})
    deliver(mail)
    token = link_token(smtp.to("dev@example.com")[0], "cfmpw")
    later = datetime.now(timezone.utc) + timedelta(days=3, minutes=1)
    assert error_code(lambda: mail.call(account.reset_password, {
        "reset_token": token, "password": "a new password"}, now=later)) == 32000
    assert error_code(lambda: mail.call(account.check_token, {"reset_token": token},
                                        now=later)) == 32000


def test_a_reset_needs_a_valid_password_and_leaves_the_token_on_failure(mail, smtp):
    mail.add_user("dev@example.com", password="the old password")
    mail.call(account.request_password_reset, {"login": "dev@example.com"})
    deliver(mail)
    token = link_token(smtp.to("dev@example.com")[0], "cfmpw")
    assert error_code(lambda: mail.call(account.reset_password, {
        "reset_token": token, "password": "short"})) == 502
    assert mail.call(account.reset_password, {"reset_token": token,
                                              "password": "long enough"})["login"] == \
        "dev@example.com"


def test_a_disabled_account_gets_no_reset_and_the_same_answer(mail, smtp):
    mail.add_user("gone@example.com", password="a password", disabled_text="Left")
    assert mail.call(account.request_password_reset, {"login": "gone@example.com"}) is None
    deliver(mail)
    assert smtp.to("gone@example.com") == []


def test_the_calls_stay_open_while_requirelogin_is_on(mail, client):
    set_param(mail, "requirelogin", "1")
    assert client.simulate_post("/rest/user/request_password_reset",
                                json={"login": "x@example.com"}).status_code == 200
    assert client.simulate_post("/rest/user/offer_account_by_email",
                                json={"email": "x@example.com"}).status_code == 200
    answer = client.simulate_post("/rest/user/reset_password",
                                  json={"reset_token": "nope", "password": "whatever1"})
    assert answer.json["code"] == 32000


def test_a_mailed_link_is_cancelled_by_its_cancel_link(mail, smtp, client):
    mail.add_user("dev@example.com", password="the old password")
    mail.call(account.request_password_reset, {"login": "dev@example.com"})
    mail.call(account.offer_account_by_email, {"email": "new@example.com"})
    deliver(mail)
    [reset] = smtp.to("dev@example.com")
    [offer] = smtp.to("new@example.com")
    token = link_token(reset, "cxlpw")
    assert token == link_token(reset, "cfmpw")
    offered = link_token(offer, "cancel_new_account")
    assert offered == link_token(offer, "request_new_account")
    assert client.simulate_post("/rest/user/cancel_token", json={}).json["code"] == 50
    wrong_kind = client.simulate_post("/rest/user/cancel_token", json={"account_token": token})
    assert (wrong_kind.status_code, wrong_kind.json["code"]) == (400, 32000)
    answer = client.simulate_post("/rest/user/cancel_token", json={"reset_token": token})
    assert answer.status_code == 200
    assert answer.json == {"type": "password", "login": "dev@example.com"}
    assert client.simulate_post("/rest/user/reset_password", json={
        "reset_token": token, "password": "a new password"}).json["code"] == 32000
    assert client.simulate_get("/rest/login", params={
        "login": "dev@example.com", "password": "the old password"}).status_code == 200
    answer = client.simulate_post("/rest/user/cancel_token", json={"account_token": offered})
    assert answer.json == {"type": "account", "login": "new@example.com"}
    again = client.simulate_post("/rest/user/cancel_token", json={"account_token": offered})
    assert again.json["code"] == 32000
    assert mail.query("SELECT COUNT(*) FROM account_tokens") == [(0,)]
    assert mail.query("SELECT COUNT(*) FROM users WHERE login = 'new@example.com'") == [(0,)]


def test_whether_people_may_create_accounts_is_public_but_the_pattern_is_not(mail, client):
    set_param(mail, "requirelogin", "1")
    set_param(mail, "createemailregexp", r"@example\.com$")
    answer = client.simulate_get("/rest/user/can_create_account")
    assert answer.status_code == 200 and answer.json == {"can_create_account": True}
    assert "example" not in answer.text
    set_param(mail, "createemailregexp", "")
    assert client.simulate_get("/rest/user/can_create_account").json == {
        "can_create_account": False}
