"""Login, logout and valid_login (interface "Users and login")."""

import re
from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from rpc_support import xmlrpc_call as xml_call


TOKEN_FORM = re.compile(r"^(\d+)-[A-Za-z0-9]{10}$")


def login(client, remote_addr="127.0.0.1", **params):
    return client.simulate_get("/rest/login", params=params, remote_addr=remote_addr)


def sees_own_account(client, user_id, remote_addr="127.0.0.1", **credentials):
    """Whether the credentials log in as `user_id` (only one's own account
    shows saved_searches)."""
    resp = client.simulate_get("/rest/user", remote_addr=remote_addr,
                               params={"ids": user_id, "include_fields": "saved_searches",
                                       **credentials})
    assert resp.status_code == 200, resp.json
    return "saved_searches" in resp.json["users"][0]


def set_param(services, name, value):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE params SET value = ? WHERE name = ?", (value, name))


def failures(services):
    return services.query("SELECT COALESCE(SUM(failures), 0) FROM login_throttle")[0][0]


@pytest.fixture
def alice(services):
    return services.add_user("alice@example.com", password="alice-secret", real_name="Alice")


# Login ------------------------------------------------------------------------

def test_login_answers_id_and_a_working_token(client, services, alice):
    resp = login(client, login="alice@example.com", password="alice-secret")
    assert resp.status_code == 200
    assert resp.json["id"] == alice
    token = resp.json["token"]
    assert TOKEN_FORM.match(token).group(1) == str(alice)
    assert sees_own_account(client, alice, Bugzilla_token=token)
    assert services.query("SELECT COUNT(*) FROM login_tokens WHERE user_id = ?",
                          (alice,))[0][0] == 1


def test_login_name_is_case_insensitive(client, alice):
    resp = login(client, login="ALICE@Example.com", password="alice-secret")
    assert resp.json["id"] == alice


@pytest.mark.parametrize("login_key, password_key", [
    ("Bugzilla_login", "Bugzilla_password"), ("Service_login", "Service_password")])
def test_login_accepts_the_credential_parameter_names(client, alice, login_key, password_key):
    resp = login(client, **{login_key: "alice@example.com", password_key: "alice-secret"})
    assert resp.status_code == 200 and resp.json["id"] == alice


def test_login_accepts_credential_headers(client, alice):
    resp = client.simulate_get("/rest/login", headers={"X-BUGZILLA-LOGIN": "alice@example.com",
                                                       "X-BUGZILLA-PASSWORD": "alice-secret"})
    assert resp.status_code == 200 and resp.json["id"] == alice


@pytest.mark.parametrize("params", [{}, {"login": "alice@example.com"}, {"password": "x"}])
def test_login_without_login_or_password_is_50(client, alice, params):
    resp = login(client, **params)
    assert (resp.status_code, resp.json["code"]) == (400, 50)


@pytest.mark.parametrize("params", [{"login": "", "password": "alice-secret"},
                                    {"Bugzilla_login": "", "Bugzilla_password": "alice-secret"},
                                    {"login": "", "password": ""}])
def test_an_empty_login_is_a_failed_login(client, services, alice, params):
    resp = login(client, **params)
    assert (resp.status_code, resp.json["code"]) == (401, 300)
    assert xml_call(client, "User.login", params) == (None, 300)
    assert failures(services) == 2


@pytest.mark.parametrize("credentials", [
    {"Bugzilla_login": "", "Bugzilla_password": "alice-secret"},
    {"Service_login": "", "Service_password": "x"},
    {"login": "", "password": "alice-secret"}])
def test_an_empty_login_on_any_call_is_300_not_an_anonymous_call(client, alice, credentials):
    resp = client.simulate_get("/rest/user", params={"names": "alice@example.com",
                                                     **credentials})
    assert (resp.status_code, resp.json["code"]) == (401, 300)
    assert xml_call(client, "User.get", {"names": ["alice@example.com"], **credentials}) \
        == (None, 300)


def test_wrong_password_is_300_and_is_logged(client, services, alice):
    resp = login(client, login="alice@example.com", password="not-her-password")
    assert (resp.status_code, resp.json["code"]) == (401, 300)
    assert "not-her-password" not in resp.text
    assert failures(services) == 1
    assert services.query("SELECT COUNT(*) FROM login_tokens")[0][0] == 0


def test_unknown_login_is_300(client, services):
    resp = login(client, login="nobody@example.com", password="whatever")
    assert (resp.status_code, resp.json["code"]) == (401, 300)
    assert failures(services) == 1


def test_account_without_password_cannot_log_in(client, services):
    services.add_user("nopass@example.com")
    resp = login(client, login="nopass@example.com", password="")
    assert resp.json["code"] == 300


def test_disabled_account_is_301_with_the_right_password_only(client, services):
    services.add_user("gone@example.com", password="gone-secret", disabled_text="Left the team")
    resp = login(client, login="gone@example.com", password="gone-secret")
    assert (resp.status_code, resp.json["code"]) == (401, 301)
    assert "Left the team" in resp.json["message"]
    assert login(client, login="gone@example.com", password="wrong-one").json["code"] == 300


def test_five_failures_throttle_that_login_from_every_address(client, services, alice):
    # Before: the address was locked for 30 minutes, every account behind it.
    services.add_user("bob@example.com", password="bob-secret")
    start = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        for _ in range(5):
            assert login(client, "10.0.0.5", login="alice@example.com",
                         password="guess").json["code"] == 300
        for address in ("10.0.0.5", "10.0.0.6"):
            throttled = login(client, address, login="alice@example.com", password="alice-secret")
            assert (throttled.status_code, throttled.json["code"]) == (400, 32000)
            assert "1 second" in throttled.json["message"]
        # Other accounts behind the same address are not affected.
        assert login(client, "10.0.0.5", login="bob@example.com",
                     password="bob-secret").status_code == 200
        clock.move_to(start + timedelta(seconds=1))
        assert login(client, "10.0.0.5", login="alice@example.com",
                     password="alice-secret").status_code == 200
        assert failures(services) == 0           # a right password clears the count


def test_four_failures_do_not_throttle(client, alice):
    for _ in range(4):
        login(client, "10.0.0.7", login="alice@example.com", password="guess")
    assert login(client, "10.0.0.7", login="alice@example.com",
                 password="alice-secret").status_code == 200


@pytest.mark.parametrize("restrict_key", ["restrict_login", "Bugzilla_restrictlogin",
                                          "Service_restrictlogin"])
def test_restricted_token_works_only_from_the_login_address(client, alice, restrict_key):
    token = login(client, "10.1.1.1", login="alice@example.com", password="alice-secret",
                  **{restrict_key: "1"}).json["token"]
    assert sees_own_account(client, alice, "10.1.1.1", Bugzilla_token=token)
    resp = client.simulate_get("/rest/user", params={"ids": alice, "Bugzilla_token": token},
                               remote_addr="10.2.2.2")
    assert (resp.status_code, resp.json["code"]) == (400, 32000)


def test_unrestricted_token_works_from_anywhere(client, alice):
    token = login(client, "10.1.1.1", login="alice@example.com", password="alice-secret",
                  restrict_login="0").json["token"]
    assert sees_own_account(client, alice, "10.9.9.9", Bugzilla_token=token)


def test_login_stays_open_when_requirelogin_is_on(client, services, alice):
    set_param(services, "requirelogin", "1")
    assert client.simulate_get("/rest/user",
                               params={"names": "alice@example.com"}).json["code"] == 410
    resp = login(client, login="alice@example.com", password="alice-secret")
    assert resp.status_code == 200


def test_login_ignores_other_credentials_and_checks_the_password(client, alice, admin_key):
    resp = login(client, login="alice@example.com", password="wrong",
                 Bugzilla_api_key=admin_key)
    assert resp.json["code"] == 300


# Logout -----------------------------------------------------------------------

def test_logout_ends_the_token(client, services, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    resp = client.simulate_get("/rest/logout", params={"Bugzilla_token": token})
    assert (resp.status_code, resp.json) == (200, {"result": None})
    assert services.query("SELECT COUNT(*) FROM login_tokens")[0][0] == 0
    after = client.simulate_get("/rest/user", params={"ids": alice, "Bugzilla_token": token})
    assert after.json["code"] == 32000


@pytest.mark.parametrize("key", ["token", "Service_token"])
def test_logout_accepts_every_token_name(client, services, alice, key):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    client.simulate_get("/rest/logout", params={key: token})
    assert services.query("SELECT COUNT(*) FROM login_tokens")[0][0] == 0


def test_logout_ends_only_the_given_token(client, services, alice):
    first = login(client, login="alice@example.com", password="alice-secret").json["token"]
    second = login(client, login="alice@example.com", password="alice-secret").json["token"]
    client.simulate_get("/rest/logout", params={"token": first})
    assert sees_own_account(client, alice, Bugzilla_token=second)


@pytest.mark.parametrize("params", [{}, {"token": "1-AAAAAAAAAA"}, {"token": "garbage"}])
def test_logout_with_an_unused_or_no_token_does_nothing(client, services, alice, params):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    resp = client.simulate_get("/rest/logout", params=params)
    assert (resp.status_code, resp.json) == (200, {"result": None})
    assert sees_own_account(client, alice, Bugzilla_token=token)


# Valid login ------------------------------------------------------------------

def test_valid_login_is_true_for_the_token_owner(client, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    resp = client.simulate_get("/rest/valid_login", params={"login": "alice@example.com",
                                                            "token": token})
    assert (resp.status_code, resp.json) == (200, {"result": True})
    # The login is compared as Bugzilla 5.2 compares it: exactly.
    resp = client.simulate_get("/rest/valid_login", params={"login": "Alice@EXAMPLE.com",
                                                            "token": token})
    assert (resp.status_code, resp.json) == (200, {"result": False})


@pytest.mark.parametrize("where", ["query", "header"])
def test_valid_login_with_an_api_key_compares_the_keys_own_login(client, services, alice, where):
    key = services.api_key("alice@example.com")

    def valid(name):
        if where == "query":
            return client.simulate_get("/rest/valid_login",
                                       params={"login": name, "Bugzilla_api_key": key})
        return client.simulate_get("/rest/valid_login", params={"login": name},
                                   headers={"X-BUGZILLA-API-KEY": key})
    assert (valid("alice@example.com").status_code, valid("alice@example.com").json) == (
        200, {"result": True})
    assert valid(ADMIN).json == {"result": False}
    assert valid("ALICE@example.com").json == {"result": False}


def test_valid_login_with_a_login_and_password_signs_in_and_compares(client, services, alice):
    answer = client.simulate_get("/rest/valid_login", params={
        "login": "alice@example.com", "password": "alice-secret"})
    assert (answer.status_code, answer.json) == (200, {"result": True})
    answer = client.simulate_get("/rest/valid_login", params={
        "login": ADMIN, "Bugzilla_login": "alice@example.com",
        "Bugzilla_password": "alice-secret"})
    assert (answer.status_code, answer.json) == (200, {"result": False})
    answer = client.simulate_get("/rest/valid_login", params={"login": "alice@example.com"},
                                 headers={"X-BUGZILLA-LOGIN": "alice@example.com",
                                          "X-BUGZILLA-PASSWORD": "alice-secret"})
    assert answer.json == {"result": True}


def test_valid_login_with_credentials_that_do_not_sign_in_is_their_error(client, services,
                                                                         alice):
    answer = client.simulate_get("/rest/valid_login", params={
        "login": "alice@example.com", "Bugzilla_api_key": "K" * 40})
    assert (answer.status_code, answer.json["code"]) == (400, 306)
    answer = client.simulate_get("/rest/valid_login", params={
        "login": "alice@example.com", "password": "wrong-secret"})
    assert (answer.status_code, answer.json["code"]) == (401, 300)
    assert failures(services) == 2          # counted like every failed sign-in
    key = services.api_key("alice@example.com")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'Gone' WHERE id = ?", (alice,))
    answer = client.simulate_get("/rest/valid_login", params={
        "login": "alice@example.com", "Bugzilla_api_key": key})
    assert (answer.status_code, answer.json["code"]) == (401, 301)


def test_valid_login_without_credentials_needs_a_login_while_requirelogin_is_on(
        client, services):
    set_param(services, "requirelogin", "1")
    answer = client.simulate_get("/rest/valid_login", params={"login": ADMIN})
    assert (answer.status_code, answer.json["code"]) == (401, 410)


@pytest.mark.parametrize("transport", ["jsonrpc", "xmlrpc"])
def test_valid_login_with_an_api_key_over_rpc(client, services, alice, transport):
    key = services.api_key("alice@example.com")
    for name, expected in (("alice@example.com", True), (ADMIN, False)):
        params = {"login": name, "Bugzilla_api_key": key}
        if transport == "xmlrpc":
            assert xml_call(client, "User.valid_login", params) == (expected, None)
        else:
            answer = client.simulate_post("/jsonrpc.cgi", json={
                "method": "User.valid_login", "id": 1, "params": [params]}).json
            assert (answer["result"], answer["error"]) == (expected, None)
    params = {"login": "alice@example.com", "Bugzilla_api_key": "K" * 40}
    if transport == "xmlrpc":
        assert xml_call(client, "User.valid_login", params) == (None, 306)
    else:
        answer = client.simulate_post("/jsonrpc.cgi", json={
            "method": "User.valid_login", "id": 1, "params": [params]}).json
        assert answer["error"]["code"] == 306


def test_valid_login_is_false_for_another_login_or_no_token(client, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    assert client.simulate_get("/rest/valid_login", params={"login": ADMIN, "token": token}
                               ).json == {"result": False}
    assert client.simulate_get("/rest/valid_login", params={"login": "alice@example.com"}
                               ).json == {"result": False}


def test_valid_login_is_false_after_logout(client, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    client.simulate_get("/rest/logout", params={"token": token})
    resp = client.simulate_get("/rest/valid_login", params={"login": "alice@example.com",
                                                            "token": token})
    assert (resp.status_code, resp.json) == (200, {"result": False})
    assert xml_call(client, "User.valid_login", {"login": "alice@example.com",
                                                 "token": token}) == (False, None)


def test_valid_login_without_login_is_50(client, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    resp = client.simulate_get("/rest/valid_login", params={"token": token})
    assert (resp.status_code, resp.json["code"]) == (400, 50)


@pytest.mark.parametrize("token", ["1-AAAAAAAAAA", "no-dash-here", "abc", "1-"])
def test_valid_login_with_an_unknown_or_malformed_token_is_false(client, services, token):
    resp = client.simulate_get("/rest/valid_login", params={"login": ADMIN, "token": token})
    assert (resp.status_code, resp.json) == (200, {"result": False})
    assert xml_call(client, "User.valid_login", {"login": ADMIN, "token": token}) == (False, None)
    assert failures(services) == 2               # counted like any token that is not valid


def test_valid_login_is_false_for_a_token_of_another_address_or_a_disabled_account(
        client, services, alice):
    token = login(client, "10.1.1.1", login="alice@example.com", password="alice-secret",
                  restrict_login="1").json["token"]
    check = {"login": "alice@example.com", "token": token}
    assert client.simulate_get("/rest/valid_login", params=check,
                               remote_addr="10.1.1.1").json == {"result": True}
    assert client.simulate_get("/rest/valid_login", params=check,
                               remote_addr="10.2.2.2").json == {"result": False}
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'Gone' WHERE id = ?", (alice,))
    assert client.simulate_get("/rest/valid_login", params=check,
                               remote_addr="10.1.1.1").json == {"result": False}


def test_valid_login_guesses_are_throttled_but_a_valid_token_still_answers(client, alice):
    token = login(client, login="alice@example.com", password="alice-secret").json["token"]
    with freeze_time("2026-05-01 12:00:00"):
        for number in range(5):
            guess = client.simulate_get("/rest/valid_login", params={
                "login": "alice@example.com", "token": f"{alice}-Guess{number:05d}"})
            assert guess.json == {"result": False}
        throttled = client.simulate_get("/rest/valid_login", params={
            "login": "alice@example.com", "token": f"{alice}-GuessAgain"})
        assert (throttled.status_code, throttled.json["code"]) == (400, 32000)
        assert client.simulate_get("/rest/valid_login", params={
            "login": "alice@example.com", "token": token}).json == {"result": True}


# Logout and the tokens that are not valid ---------------------------------------

@pytest.mark.parametrize("token", ["1-AAAAAAAAAA", "garbage", "1-"])
def test_logout_with_a_token_that_is_not_valid_succeeds_over_every_transport(client, alice,
                                                                             token):
    assert client.simulate_get("/rest/logout", params={"token": token}).json == {"result": None}
    assert xml_call(client, "User.logout", {"token": token}) == (None, None)
    resp = client.simulate_post("/jsonrpc.cgi", json={"method": "User.logout", "id": 1,
                                                      "params": [{"Bugzilla_token": token}]})
    assert resp.json["error"] is None


def test_logout_of_an_expired_token_succeeds(client, services, alice):
    start = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        token = login(client, login="alice@example.com", password="alice-secret").json["token"]
        clock.move_to(start + timedelta(days=31))
        assert client.simulate_get("/rest/logout", params={"Bugzilla_token": token}
                                   ).json == {"result": None}
        assert xml_call(client, "User.logout", {"Bugzilla_token": token}) == (None, None)


# Token expiry and last use --------------------------------------------------------------

def token_last_used(services):
    return services.query("SELECT last_used FROM login_tokens")[0][0]


def test_a_token_unused_for_login_token_max_age_days_expires(client, services, alice):
    start = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        token = login(client, login="alice@example.com", password="alice-secret").json["token"]
        # Used on day 29, it lives 30 more days from then.
        clock.move_to(start + timedelta(days=29))
        assert sees_own_account(client, alice, Bugzilla_token=token)
        clock.move_to(start + timedelta(days=59))
        assert xml_call(client, "User.get", {"ids": [alice], "Bugzilla_token": token})[1] is None
        clock.move_to(start + timedelta(days=89, seconds=1))
        expired = client.simulate_get("/rest/user", params={"ids": alice, "Bugzilla_token": token})
        assert (expired.status_code, expired.json["code"]) == (400, 32000)
        assert "expired" in expired.json["message"]
        assert xml_call(client, "User.get", {"ids": [alice], "Bugzilla_token": token}) \
            == (None, 32000)
        assert client.simulate_get("/rest/valid_login", params={
            "login": "alice@example.com", "token": token}).json == {"result": False}
        # The next login deletes the expired tokens.
        login(client, login="alice@example.com", password="alice-secret")
        assert services.query("SELECT COUNT(*) FROM login_tokens")[0][0] == 1


def test_login_token_max_age_is_a_parameter_checked_like_the_others(client, services, alice,
                                                                    admin_key):
    key = {"Bugzilla_api_key": admin_key}
    for bad in ("0", "-1", "3651", "a week", ""):
        resp = client.simulate_put("/rest/parameters", params=key,
                                   json={"login_token_max_age": bad})
        assert (resp.status_code, resp.json["code"]) == (400, 32000), bad
    assert client.simulate_get("/rest/parameters", params=key
                               ).json["parameters"]["login_token_max_age"] == "30"
    resp = client.simulate_put("/rest/parameters", params=key, json={"login_token_max_age": 2})
    assert resp.json == {"parameters": {"login_token_max_age": {"added": "2", "removed": "30"}}}
    start = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        token = login(client, login="alice@example.com", password="alice-secret").json["token"]
        clock.move_to(start + timedelta(days=2))
        assert sees_own_account(client, alice, Bugzilla_token=token)
        clock.move_to(start + timedelta(days=4, seconds=1))
        assert client.simulate_get("/rest/user", params={"ids": alice, "Bugzilla_token": token}
                                   ).json["code"] == 32000


def test_a_tokens_use_is_recorded_at_most_once_a_minute(client, services, alice):
    start = datetime(2026, 5, 1, 12, 0, 5, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        token = login(client, login="alice@example.com", password="alice-secret").json["token"]
        assert token_last_used(services) == "2026-05-01 12:00:05"
        clock.move_to(start + timedelta(seconds=50))           # the same minute: not again
        assert sees_own_account(client, alice, Bugzilla_token=token)
        assert token_last_used(services) == "2026-05-01 12:00:05"
        clock.move_to(start + timedelta(seconds=70))           # a read call records it
        assert sees_own_account(client, alice, Bugzilla_token=token)
        assert token_last_used(services) == "2026-05-01 12:01:15"
        clock.move_to(start + timedelta(minutes=5))            # so does a write call
        resp = client.simulate_post("/rest/api_key", params={"Bugzilla_token": token},
                                    json={"description": "x"})
        assert resp.status_code == 201
        assert token_last_used(services) == "2026-05-01 12:05:05"
        clock.move_to(start + timedelta(minutes=7))            # and XML-RPC
        assert xml_call(client, "User.get", {"ids": [alice], "Bugzilla_token": token})[1] is None
        assert token_last_used(services) == "2026-05-01 12:07:05"
