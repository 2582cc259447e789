"""The second factor (TOTP): every way that signs
in with a password asks an enrolled account for its code, refuses a
missing or wrong one, accepts the right one once, and answers an unknown
login or a wrong password as it always did; API keys and login tokens need
no code; codes are throttled like passwords and never work twice."""

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bugsvc.accounts import second_factor
from page_support import Browser
from rpc_support import xmlrpc_call


START = datetime(2026, 3, 2, 10, 0, 5, tzinfo=timezone.utc)
PASSWORD = "carol-secret-1"


def enrol(services, user_id, now):
    """Enrol `user_id` as the pages do (the secret confirmed with a first
    code at `now`); returns (secret, recovery codes)."""
    with services.db.transaction(write=True) as conn:
        secret = second_factor.begin_enrolment(conn, user_id, now)
        codes = second_factor.confirm_enrolment(
            conn, user_id, second_factor.current_code(secret, now), now)
    assert codes is not None
    return secret, codes


@pytest.fixture
def carol(services):
    """An account with a second factor enrolled at START - 5 minutes (its
    enrolment code's step is long past)."""
    user_id = services.add_user("carol@example.com", password=PASSWORD, real_name="Carol")
    secret, codes = enrol(services, user_id, START - timedelta(minutes=5))
    return {"id": user_id, "secret": secret, "recovery": codes}


@pytest.fixture
def dave(services):
    """An account without a second factor."""
    return services.add_user("dave@example.com", password="dave-secret-1")


def code_now(carol):
    return second_factor.current_code(carol["secret"], START)


def wrong_code(carol):
    right = code_now(carol)
    return f"{(int(right) + 1) % 1000000:06d}"


# Each way that signs in with a password, as (status or fault, code) and
# whether it signed in as the account. `totp` None: no code given.

def _rest_code(resp):
    return (resp.status_code, resp.json.get("code") if resp.status_code != 200 else None)


def rest_login(client, login, password, totp):
    params = {"login": login, "password": password}
    if totp is not None:
        params["totp"] = totp
    resp = client.simulate_get("/rest/login", params=params)
    return _rest_code(resp), resp.status_code == 200 and "token" in resp.json


def rest_login_credential_names(client, login, password, totp):
    params = {"Bugzilla_login": login, "Bugzilla_password": password}
    if totp is not None:
        params["Bugzilla_totp"] = totp
    resp = client.simulate_get("/rest/login", params=params)
    return _rest_code(resp), resp.status_code == 200 and "token" in resp.json


def rest_query_credentials(client, login, password, totp):
    params = {"Bugzilla_login": login, "Bugzilla_password": password}
    if totp is not None:
        params["Bugzilla_totp"] = totp
    resp = client.simulate_get("/rest/whoami", params=params)
    return _rest_code(resp), resp.status_code == 200 and resp.json["login"] == login


def rest_body_credentials(client, login, password, totp):
    body = {"Service_login": login, "Service_password": password, "full_name": "Renamed"}
    if totp is not None:
        body["Service_totp"] = totp
    resp = client.simulate_put("/rest/whoami", body=json.dumps(body),
                               headers={"Content-Type": "application/json"})
    return _rest_code(resp), resp.status_code == 200


def rest_headers(client, login, password, totp):
    headers = {"X-BUGZILLA-LOGIN": login, "X-BUGZILLA-PASSWORD": password}
    if totp is not None:
        headers["X-BUGZILLA-TOTP"] = totp
    resp = client.simulate_get("/rest/whoami", headers=headers)
    return _rest_code(resp), resp.status_code == 200 and resp.json["login"] == login


def rest_valid_login(client, login, password, totp):
    params = {"login": login, "Bugzilla_login": login, "Bugzilla_password": password}
    if totp is not None:
        params["Bugzilla_totp"] = totp
    resp = client.simulate_get("/rest/valid_login", params=params)
    return _rest_code(resp), resp.status_code == 200 and resp.json["result"] is True


def xmlrpc_login(client, login, password, totp):
    params = {"login": login, "password": password}
    if totp is not None:
        params["totp"] = totp
    result, fault = xmlrpc_call(client, "User.login", params)
    return (200 if fault is None else "fault", fault), result is not None and "token" in result


def xmlrpc_credentials(client, login, password, totp):
    params = {"Bugzilla_login": login, "Bugzilla_password": password, "names": [login]}
    if totp is not None:
        params["Bugzilla_totp"] = totp
    result, fault = xmlrpc_call(client, "User.get", params)
    return ((200 if fault is None else "fault", fault),
            result is not None and "saved_searches" in result["users"][0])


def jsonrpc(client, method, params):
    resp = client.simulate_post("/jsonrpc.cgi", json={"method": method, "params": [params],
                                                      "id": 1})
    body = resp.json
    error = body.get("error")
    return (200 if error is None else "fault", error["code"] if error else None), body["result"]


def jsonrpc_login(client, login, password, totp):
    params = {"login": login, "password": password}
    if totp is not None:
        params["Service_totp"] = totp
    code, result = jsonrpc(client, "User.login", params)
    return code, result is not None and "token" in result


def jsonrpc_credentials(client, login, password, totp):
    params = {"Bugzilla_login": login, "Bugzilla_password": password}
    if totp is not None:
        params["Bugzilla_totp"] = totp
    code, result = jsonrpc(client, "User.whoami", params)
    return code, result is not None and result["login"] == login


PATHS = [rest_login, rest_login_credential_names, rest_query_credentials, rest_body_credentials,
         rest_headers, rest_valid_login, xmlrpc_login, xmlrpc_credentials, jsonrpc_login,
         jsonrpc_credentials]


def refused(outcome, code):
    (status, error), signed_in = outcome
    return error == code and not signed_in and status in (401, "fault")


@pytest.mark.parametrize("path", PATHS, ids=[path.__name__ for path in PATHS])
def test_every_password_path_needs_the_right_code_once(client, services, carol, path):
    with freeze_time(START):
        assert refused(path(client, "carol@example.com", PASSWORD, None), 330)
        assert refused(path(client, "carol@example.com", PASSWORD, wrong_code(carol)), 331)
        assert refused(path(client, "carol@example.com", PASSWORD, "not a code"), 331)
        (status, error), signed_in = path(client, "carol@example.com", PASSWORD, code_now(carol))
        assert (status, error, signed_in) == (200, None, True)
        # The same code again (replayed within its step) is refused.
        assert refused(path(client, "carol@example.com", PASSWORD, code_now(carol)), 331)
    # The next step's code works.
    with freeze_time(START + timedelta(seconds=30)):
        later = second_factor.current_code(carol["secret"], START + timedelta(seconds=30))
        assert path(client, "carol@example.com", PASSWORD, later)[1]


@pytest.mark.parametrize("path", PATHS, ids=[path.__name__ for path in PATHS])
def test_no_path_tells_which_accounts_have_a_second_factor(client, services, carol, dave, path):
    """A wrong password, or an unknown login, answers 300 with or without a
    code, for an account with a second factor as for one without: the
    'code needed' answer comes only after the right password."""
    with freeze_time(START):
        answers = set()
        for login in ("carol@example.com", "dave@example.com", "nobody@example.com"):
            for totp in (None, code_now(carol)):
                outcome = path(client, login, "wrong-password", totp)
                assert refused(outcome, 300), (login, totp, outcome)
                answers.add(outcome)
        assert len(answers) == 1
        # An account without a second factor signs in as before, a code or not.
        assert path(client, "dave@example.com", "dave-secret-1", None)[1]


def test_a_recovery_code_signs_in_once(client, carol):
    with freeze_time(START):
        first = carol["recovery"][0]
        assert rest_login(client, "carol@example.com", PASSWORD, first.lower())[1]
        assert refused(rest_login(client, "carol@example.com", PASSWORD, first), 331)
        assert rest_login(client, "carol@example.com", PASSWORD,
                          carol["recovery"][1].replace("-", " "))[1]


def test_api_keys_and_login_tokens_need_no_code(client, services, carol):
    key = services.api_key("carol@example.com")
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key})
    assert resp.status_code == 200 and resp.json["login"] == "carol@example.com"
    with freeze_time(START):
        token = client.simulate_get("/rest/login", params={
            "login": "carol@example.com", "password": PASSWORD,
            "totp": code_now(carol)}).json["token"]
        resp = client.simulate_get("/rest/whoami", params={"Bugzilla_token": token})
    assert resp.status_code == 200 and resp.json["login"] == "carol@example.com"


def test_a_password_reset_keeps_the_second_factor(client, services, carol):
    """Resetting a forgotten password (by its mailed link) changes the
    password only: signing in with the new one still asks the code."""
    from bugsvc.accounts import tokens
    with services.db.transaction(write=True) as conn:
        secret = tokens.issue(conn, tokens.PASSWORD, START, user_id=carol["id"])
    with freeze_time(START):
        resp = client.simulate_post("/rest/user/reset_password", json={
            "reset_token": secret, "password": "carol-new-secret-2"})
        assert resp.status_code == 200, resp.json
        assert refused(rest_login(client, "carol@example.com", "carol-new-secret-2", None), 330)
        assert rest_login(client, "carol@example.com", "carol-new-secret-2", code_now(carol))[1]


def test_wrong_codes_are_throttled_like_passwords(client, carol):
    """A guesser who knows the password is throttled on the codes: the
    right password does not clear the count until the code is right too."""
    with freeze_time(START) as frozen:
        for _ in range(5):
            assert refused(rest_login(client, "carol@example.com", PASSWORD, wrong_code(carol)),
                           331)
        # The sixth attempt waits: not checked, even with the right code.
        (status, error), signed_in = rest_login(client, "carol@example.com", PASSWORD,
                                                code_now(carol))
        assert (status, error, signed_in) == (400, 32000, False)
        frozen.tick(timedelta(seconds=31))
        later = second_factor.current_code(carol["secret"], START + timedelta(seconds=31))
        assert rest_login(client, "carol@example.com", PASSWORD, later)[1]
        # A right sign-in cleared the count.
        frozen.tick(timedelta(seconds=30))
        assert refused(rest_login(client, "carol@example.com", PASSWORD, "000000"), 331)


def test_the_secret_is_in_no_answer(client, services, carol):
    key = services.api_key("carol@example.com")
    for path in ("/rest/whoami", f"/rest/user/{carol['id']}"):
        resp = client.simulate_get(path, params={"Bugzilla_api_key": key})
        assert resp.status_code == 200
        assert carol["secret"] not in resp.text
    admin_key = services.api_key(ADMIN)
    resp = client.simulate_get(f"/rest/user/{carol['id']}", params={"Bugzilla_api_key": admin_key})
    assert carol["secret"] not in resp.text


def test_mfa_group_members_without_one_cannot_sign_in_with_a_password_over_the_api(
        client, services, dave):
    from bug_support import add_to_group, set_param
    set_param(services, "mfa_group", "editbugs")
    add_to_group(services, "dave@example.com", "editbugs")
    outcome = rest_login(client, "dave@example.com", "dave-secret-1", None)
    assert refused(outcome, 332)
    # A wrong password is still 300 (no telling who is in the group).
    assert refused(rest_login(client, "dave@example.com", "wrong", None), 300)
    # API keys keep working (the way for scripts).
    key = services.api_key("dave@example.com")
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key})
    assert resp.status_code == 200


# The web pages ----------------------------------------------------------------------------

_SECRET = re.compile(r'<code id="totp-secret"[^>]*>([A-Z2-7]+)</code>')
_PENDING = re.compile(r'name="pending" value="([^"]+)"')


@pytest.fixture
def browser(app):
    return Browser(app)


def sign_in_password(browser, login, password, target="/"):
    browser.get("/login")
    return browser.post("/login", {"Bugzilla_login": login, "Bugzilla_password": password,
                                   "target": target})


def test_the_sign_in_page_asks_the_code_on_a_second_page(browser, services, carol):
    with freeze_time(START):
        page = sign_in_password(browser, "carol@example.com", PASSWORD, "/query.cgi")
        assert page.status_code == 200 and "Two-factor sign-in" in page.text
        # No session yet: the pending sign-in lives on the server only.
        assert "bugsvc_session" not in browser.cookies
        assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]
        pending = _PENDING.search(page.text).group(1)
        stored = services.query("SELECT token_hash FROM pending_sign_ins")
        assert len(stored) == 1 and pending not in stored[0][0]
        wrong = browser.post("/login", {"step": "code", "pending": pending,
                                        "code": wrong_code(carol), "target": "/query.cgi"})
        assert wrong.status_code == 401 and "wrong, expired or used" in wrong.text
        assert "bugsvc_session" not in browser.cookies
        done = browser.post("/login", {"step": "code", "pending": pending,
                                       "code": code_now(carol), "target": "/query.cgi"},
                            follow=False)
        assert done.status_code == 303 and done.headers["Location"] == "/query.cgi"
        assert "bugsvc_session" in browser.cookies
        # The pending sign-in was used up.
        assert services.query("SELECT COUNT(*) FROM pending_sign_ins") == [(0,)]


def test_a_pending_sign_in_cannot_be_forged_reused_or_kept(browser, services, carol):
    with freeze_time(START) as frozen:
        page = sign_in_password(browser, "carol@example.com", PASSWORD)
        pending = _PENDING.search(page.text).group(1)
        forged = browser.post("/login", {"step": "code", "pending": "x" * 32,
                                         "code": code_now(carol)})
        assert forged.status_code == 400 and "expired" in forged.text
        assert "bugsvc_session" not in browser.cookies
        frozen.tick(timedelta(minutes=11))
        later = second_factor.current_code(carol["secret"], START + timedelta(minutes=11))
        late = browser.post("/login", {"step": "code", "pending": pending, "code": later})
        assert late.status_code == 400 and "bugsvc_session" not in browser.cookies


def test_a_wrong_password_on_the_page_answers_as_for_any_account(browser, carol, dave):
    with freeze_time(START):
        pages = [sign_in_password(browser, login, "wrong-password")
                 for login in ("carol@example.com", "dave@example.com", "nobody@example.com")]
    assert {page.status_code for page in pages} == {401}
    assert all("username or password you entered is not valid" in page.text for page in pages)
    assert not any("Two-factor" in page.text for page in pages)


def test_enrolment_recovery_codes_and_disabling_in_the_preferences(browser, services, dave):
    with freeze_time(START) as frozen:
        browser.login("dave@example.com", "dave-secret-1")
        page = browser.get("/userprefs.cgi", tab="mfa")
        assert "Two-factor sign-in is off" in page.text
        page = browser.post("/userprefs.cgi", {"tab": "mfa", "action": "begin"})
        secret = _SECRET.search(page.text).group(1)
        assert "otpauth://totp/" in page.text and "<svg" in page.text
        wrong = browser.post("/userprefs.cgi", {"tab": "mfa", "action": "confirm",
                                                "code": "000000"})
        assert wrong.status_code == 401 and secret in wrong.text      # the same secret again
        page = browser.post("/userprefs.cgi", {"tab": "mfa", "action": "confirm",
                                               "code": second_factor.current_code(secret, START)})
        codes = re.findall(r"<li><code>([A-Z0-9-]{19})</code></li>", page.text)
        assert len(codes) == 10
        stored = {row[0] for row in services.query("SELECT code_hash FROM recovery_codes")}
        assert len(stored) == 10 and not any(code.replace("-", "") in stored for code in codes)
        # Never shown again.
        page = browser.get("/userprefs.cgi", tab="mfa")
        assert secret not in page.text and codes[0] not in page.text
        assert "10 unused recovery codes" in page.text
        # Turning it off needs a current code or the password.
        refused = browser.post("/userprefs.cgi", {"tab": "mfa", "action": "disable",
                                                  "password": "wrong"})
        assert refused.status_code == 401
        frozen.tick(timedelta(seconds=30))
        later = second_factor.current_code(secret, START + timedelta(seconds=30))
        browser.post("/userprefs.cgi", {"tab": "mfa", "action": "disable", "code": later})
        assert services.query("SELECT COUNT(*) FROM second_factors") == [(0,)]
        assert services.query("SELECT COUNT(*) FROM recovery_codes") == [(0,)]


def test_mfa_group_members_enrol_before_anything_else(browser, services, dave):
    from bug_support import add_to_group, set_param
    set_param(services, "mfa_group", "editbugs")
    add_to_group(services, "dave@example.com", "editbugs")
    with freeze_time(START):
        page = sign_in_password(browser, "dave@example.com", "dave-secret-1", "/query.cgi")
        assert "Set up two-factor sign-in" in page.text
        assert "bugsvc_session" not in browser.cookies
        secret = _SECRET.search(page.text).group(1)
        pending = _PENDING.search(page.text).group(1)
        wrong = browser.post("/login", {"step": "enrol", "pending": pending, "code": "000000",
                                        "target": "/query.cgi"})
        assert wrong.status_code == 401 and "bugsvc_session" not in browser.cookies
        done = browser.post("/login", {"step": "enrol", "pending": pending, "target": "/query.cgi",
                                       "code": second_factor.current_code(secret, START)})
        assert len(re.findall(r"<li><code>", done.text)) == 10
        assert "bugsvc_session" in browser.cookies
        page = browser.get("/userprefs.cgi", tab="mfa")
        assert "cannot be turned off" in page.text


def test_an_administrator_resets_a_second_factor_and_the_audit_log_says_so(
        browser, services, carol):
    from accounts import ADMIN_PASSWORD
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get("/editusers.cgi", action="edit", userid=carol["id"])
    assert "Reset two-factor sign-in" in page.text
    page = browser.post("/editusers.cgi", {"action": "reset_second_factor",
                                           "userid": carol["id"]})
    assert "has been reset" in page.text
    assert services.query("SELECT COUNT(*) FROM second_factors") == [(0,)]
    assert services.query("SELECT class, object_id, field FROM audit_log"
                          " WHERE field = 'second_factor'") == [
        ("Bugzilla::User", carol["id"], "second_factor")]
    # Carol signs in with her password alone now.
    assert rest_login(browser.client, "carol@example.com", PASSWORD, None)[1]


def test_only_editusers_may_reset_or_read_another_accounts_second_factor(services, carol, dave):
    from bugsvc.errors import ServiceError
    from bugsvc.services import second_factor as service
    for as_user in ("dave@example.com", None):
        for function, params in ((service.reset, {"user_id": carol["id"]}),
                                 (service.get, {"user_id": carol["id"]})):
            with pytest.raises(ServiceError) as caught:
                services.call(function, params, as_user=as_user)
            assert caught.value.code in (304, 410)
    assert services.query("SELECT COUNT(*) FROM second_factors") == [(1,)]
    assert services.call(service.get, {"user_id": carol["id"]}, as_user=ADMIN)["enabled"]


def test_the_pages_own_operations_are_served_by_no_api(client, carol):
    """The sign-in steps and the second factor's set-up are the pages'
    alone: REST, XML-RPC and JSON-RPC do not know them."""
    for method in ("SignIn.begin", "SignIn.finish", "SignIn.enrolment", "SecondFactor.get",
                   "SecondFactor.begin", "SecondFactor.reset"):
        assert xmlrpc_call(client, method, {"login": "carol@example.com",
                                            "password": PASSWORD})[1] == -32601
        assert jsonrpc(client, method, {})[0] == ("fault", -32601)
    for path in ("/rest/second_factor", "/rest/signin"):
        assert client.simulate_get(path).status_code == 404


def test_a_pending_sign_in_works_only_from_its_address_and_once(services, carol):
    with services.db.transaction(write=True) as conn:
        pending = second_factor.begin_pending(conn, carol["id"], "192.0.2.1", False, False,
                                              False, START)
    with services.db.transaction() as conn:
        assert second_factor.find_pending(conn, pending, "192.0.2.2", START) is None
        assert second_factor.find_pending(conn, pending + "x", "192.0.2.1", START) is None
        assert second_factor.find_pending(conn, pending, "192.0.2.1", START)["user_id"] == (
            carol["id"])
    with services.db.transaction(write=True) as conn:
        second_factor.end_pending(conn, pending)
    with services.db.transaction() as conn:
        assert second_factor.find_pending(conn, pending, "192.0.2.1", START) is None


def test_the_second_step_keeps_the_restriction_to_the_address(browser, services, carol):
    with freeze_time(START):
        browser.get("/login")
        page = browser.post("/login", {"Bugzilla_login": "carol@example.com",
                                       "Bugzilla_password": PASSWORD,
                                       "Bugzilla_restrictlogin": "1", "target": "/"})
        pending = _PENDING.search(page.text).group(1)
        browser.post("/login", {"step": "code", "pending": pending, "code": code_now(carol)})
    assert services.query("SELECT ip_address FROM login_tokens") == [("127.0.0.1",)]


def test_a_plain_user_cannot_reset_anothers_second_factor_on_the_page(
        browser, carol, dave, services):
    browser.login("dave@example.com", "dave-secret-1")
    browser.get("/")
    page = browser.post("/editusers.cgi", {"action": "reset_second_factor",
                                           "userid": carol["id"]})
    assert page.status_code in (401, 403)
    assert services.query("SELECT COUNT(*) FROM second_factors WHERE confirmed_at IS NOT NULL"
                          ) == [(1,)]
    assert services.query("SELECT COUNT(*) FROM audit_log WHERE field = 'second_factor'"
                          ) == [(0,)]


def test_mfa_group_members_cannot_turn_it_off(services, carol):
    from bug_support import add_to_group, set_param
    from bugsvc.errors import ServiceError
    from bugsvc.services import second_factor as service
    set_param(services, "mfa_group", "editbugs")
    add_to_group(services, "carol@example.com", "editbugs")
    with pytest.raises(ServiceError) as caught:
        services.call(service.disable, {"password": PASSWORD}, as_user="carol@example.com")
    assert caught.value.code == 332
    assert services.query("SELECT COUNT(*) FROM second_factors") == [(1,)]


def test_sessions_from_before_the_group_required_it_end(browser, client, services, dave):
    """A member of mfa_group without a second factor cannot go on with a
    session or login token made before: its owner signs in again, which
    sets one up first; API keys keep working."""
    from bug_support import add_to_group, set_param
    browser.login("dave@example.com", "dave-secret-1")
    token = client.simulate_get("/rest/login", params={"login": "dave@example.com",
                                                       "password": "dave-secret-1"}).json["token"]
    key = services.api_key("dave@example.com")
    set_param(services, "mfa_group", "editbugs")
    add_to_group(services, "dave@example.com", "editbugs")
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_token": token})
    assert (resp.status_code, resp.json["code"]) == (400, 32000)
    page = browser.get("/userprefs.cgi")
    assert "Your session has ended" in page.text and "bugsvc_session" not in browser.cookies
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key})
    assert resp.status_code == 200
    with freeze_time(START):
        page = sign_in_password(browser, "dave@example.com", "dave-secret-1")
    assert "Set up two-factor sign-in" in page.text
