"""Throttling of guessed credentials: 5 failures (wrong passwords, unknown
logins, wrong or revoked API keys, in any mix) from one address within 30
minutes lock that address out of every credentialed call, by every
transport, until the failures age out. The answer is the reference's
account-locked error: code 32000, HTTP 400. Keys and passwords never appear
in an answer or in the logs."""

import json
from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from live_server import start  # noqa: F401 (fixture)

GUESSER = "203.0.113.9"
NEIGHBOUR = "203.0.113.10"
START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=timezone.utc)
PASSWORD = "carols real password"


@pytest.fixture
def carol(services):
    return services.add_user("carol@example.com", password=PASSWORD)


@pytest.fixture
def carol_key(services, carol):
    return services.api_key("carol@example.com")


def fail_with_password(client, remote_addr=GUESSER, login="carol@example.com"):
    answer = client.simulate_get("/rest/login", params={"login": login, "password": "not it"},
                                 remote_addr=remote_addr)
    assert (answer.status_code, answer.json["code"]) == (401, 300), answer.text
    return answer


def fail_with_key(client, remote_addr=GUESSER, key="K" * 40):
    answer = client.simulate_get("/rest/user", params={"Bugzilla_api_key": key, "ids": 1},
                                 remote_addr=remote_addr)
    assert (answer.status_code, answer.json["code"]) == (400, 306), answer.text
    return answer


def assert_locked(answer):
    assert (answer.status_code, answer.json["code"]) == (400, 32000), answer.text
    assert set(answer.json) == {"error", "code", "message", "documentation"}
    assert "locked" in answer.json["message"]


def test_a_mix_of_five_failures_locks_the_address_for_every_credential(client, carol, carol_key):
    with freeze_time(START):
        for _ in range(3):
            fail_with_password(client)
        fail_with_key(client)
        fail_with_password(client, login="nobody@example.com")     # unknown logins count too
        assert_locked(client.simulate_get("/rest/login", remote_addr=GUESSER,
                                          params={"login": "carol@example.com",
                                                  "password": PASSWORD}))
        assert_locked(client.simulate_get("/rest/user", params={"Bugzilla_api_key": carol_key},
                                          remote_addr=GUESSER))
        assert_locked(client.simulate_get("/rest/user", headers={"X-BUGZILLA-API-KEY": carol_key},
                                          remote_addr=GUESSER))
        assert_locked(client.simulate_get("/rest/user", remote_addr=GUESSER,
                                          headers={"Authorization": f"Bearer {carol_key}"}))
        assert_locked(client.simulate_post("/rest/bug_user_last_visit", remote_addr=GUESSER,
                                           json={"Bugzilla_api_key": carol_key}))
        assert_locked(client.simulate_get("/rest/parameters", remote_addr=GUESSER, params={
            "Bugzilla_login": "carol@example.com", "Bugzilla_password": PASSWORD}))
        # The address, not the account, is locked; an anonymous call still works.
        ok = client.simulate_get("/rest/user", params={"Bugzilla_api_key": carol_key, "ids": carol},
                                 remote_addr=NEIGHBOUR)
        assert ok.status_code == 200 and ok.json["users"][0]["name"] == "carol@example.com"
        assert client.simulate_get("/rest/version", remote_addr=GUESSER).status_code == 200


def test_a_forwarded_for_header_does_not_escape_the_lock(client, carol, carol_key):
    with freeze_time(START):
        for _ in range(5):
            fail_with_key(client)
        answer = client.simulate_get("/rest/user", params={"Bugzilla_api_key": carol_key},
                                     headers={"X-Forwarded-For": NEIGHBOUR, "X-Real-IP": NEIGHBOUR},
                                     remote_addr=GUESSER)
        assert_locked(answer)


def test_the_rpc_transports_are_locked_too(client, carol, carol_key):
    with freeze_time(START):
        for _ in range(5):
            fail_with_key(client)
        answer = client.simulate_post("/jsonrpc.cgi", remote_addr=GUESSER,
                                      headers={"Content-Type": "application/json"},
                                      body=json.dumps({"method": "User.get", "id": 1, "params": [
                                          {"Bugzilla_api_key": carol_key, "ids": [carol]}]}))
        assert answer.json["error"]["code"] == 32000 and "locked" in answer.json["error"]["message"]
        xml = ("<?xml version='1.0'?><methodCall><methodName>User.login</methodName><params>"
               "<param><value><struct><member><name>login</name><value><string>carol@example.com"
               "</string></value></member><member><name>password</name><value><string>"
               f"{PASSWORD}</string></value></member></struct></value></param></params>"
               "</methodCall>")
        answer = client.simulate_post("/xmlrpc.cgi", remote_addr=GUESSER, body=xml,
                                      headers={"Content-Type": "text/xml"})
        assert "<int>32000</int>" in answer.text and PASSWORD not in answer.text


def test_failures_age_out_one_by_one_after_30_minutes(client, carol, carol_key):
    def own_call():
        return client.simulate_get("/rest/user", params={"Bugzilla_api_key": carol_key,
                                                         "ids": carol}, remote_addr=GUESSER)
    with freeze_time(START) as clock:
        for _ in range(4):
            fail_with_key(client)
        clock.move_to(START + timedelta(minutes=20))
        fail_with_password(client)
        assert_locked(own_call())
        clock.move_to(START + timedelta(minutes=29, seconds=59))   # the first four still count
        assert_locked(own_call())
        clock.move_to(START + timedelta(minutes=30))           # 30 minutes old: aged out
        assert own_call().status_code == 200                   # only one left in the window
        for _ in range(3):
            fail_with_key(client)
        assert own_call().status_code == 200                   # four in the window
        fail_with_key(client)
        assert_locked(own_call())
        clock.move_to(START + timedelta(minutes=61))
        assert own_call().status_code == 200


def test_a_successful_login_clears_that_accounts_failures(client, carol):
    with freeze_time(START):
        for _ in range(4):
            fail_with_password(client)
        ok = client.simulate_get("/rest/login", params={"login": "carol@example.com",
                                                        "password": PASSWORD}, remote_addr=GUESSER)
        assert ok.status_code == 200
        for _ in range(4):
            fail_with_password(client)
        again = client.simulate_get("/rest/login", params={"login": "carol@example.com",
                                                           "password": PASSWORD},
                                    remote_addr=GUESSER)
        assert again.status_code == 200, again.text


def test_locked_answers_say_nothing_of_the_secrets_tried(client, carol):
    tried = [f"guess-{n}-secret" for n in range(8)]
    with freeze_time(START):
        answers = [client.simulate_get("/rest/user", params={"Bugzilla_api_key": key},
                                       remote_addr=GUESSER) for key in tried[:4]]
        answers += [client.simulate_get("/rest/login", remote_addr=GUESSER, params={
            "login": "carol@example.com", "password": password}) for password in tried[4:]]
    assert [a.json["code"] for a in answers] == [306] * 4 + [300, 32000, 32000, 32000]
    for answer in answers:
        for secret in tried:
            assert secret not in answer.text


def test_guessing_through_the_real_server_is_locked_and_never_logged(start, tmp_path):
    server = start(tmp_path / "guard.sqlite", {"BUGSVC_ADMIN_EMAIL": "boss@example.com",
                                               "BUGSVC_ADMIN_PASSWORD": "boss password 9"})
    secrets = ["Wrong0Key" * 4 + "ABCD", "second-wrong-key-0123456789abcdefghijklm",
               "a wrong password", "another wrong password", "pass word with spaces"]
    answers = [
        server.call("GET", "/rest/user", {"Bugzilla_api_key": secrets[0], "ids": 1}),
        server.call("GET", "/rest/user", {"ids": 1}, headers={"X-BUGZILLA-API-KEY": secrets[1]}),
        server.call("POST", "/rest/bug_user_last_visit", body={
            "Bugzilla_login": "boss@example.com", "Bugzilla_password": secrets[2]}),
        server.call("GET", "/rest/login", {"login": "boss@example.com", "password": secrets[3]}),
        server.call("POST", "/jsonrpc.cgi", body={"method": "User.login", "id": 1, "params": [
            {"login": "boss@example.com", "password": secrets[4]}]}),
    ]
    assert [a[0] for a in answers] == [400, 400, 401, 401, 200]
    status, body, _ = server.call("GET", "/rest/parameters", {
        "Bugzilla_login": "boss@example.com", "Bugzilla_password": "boss password 9"})
    assert (status, body["code"]) == (400, 32000) and "locked" in body["message"]
    exit_status, stdout, stderr = server.stop()
    assert exit_status == 0 and "Traceback" not in stderr
    for secret in secrets + ["boss password 9"]:
        for text in [stdout, stderr] + [json.dumps(a[1]) for a in answers]:
            assert secret not in text
            assert secret.replace(" ", "+") not in text and secret.replace(" ", "%20") not in text


def test_refused_passwords_are_never_repeated_in_answers(client, services, admin_key, carol):
    with freeze_time(START):
        key = {"Bugzilla_api_key": admin_key}
        tried = ("Qz1", "sh0rt", ["Listed-Pass-1", "x"], {"nested": "Dict-Pass-2"})
        for password in tried:
            for method, path, body in (
                    ("POST", "/rest/user", {"email": "new@example.com", "password": password}),
                    ("PUT", f"/rest/user/{carol}", {"password": password})):
                answer = client.simulate_request(method, path, params=key, json=body)
                assert answer.status_code == 400, answer.text
                for text in json.dumps(password).split('"'):
                    if len(text) > 2:
                        assert text not in answer.json["message"]
        services.call(lambda ctx, params: ctx.conn.execute(
            "UPDATE params SET value = 'letters_numbers_specialchars'"
            " WHERE name = 'password_complexity'"))
        answer = client.simulate_put(f"/rest/user/{carol}", params=key,
                                     json={"password": "onlyletters"})
        assert answer.json["code"] == 305 and "onlyletters" not in answer.text
