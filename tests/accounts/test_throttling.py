"""Throttling of guessed credentials.

Wrong passwords count against the login name they were given for (an
account, or a name no account has: both are answered alike); API keys and
login tokens that are not valid count against the client's address. The
first five failures of a subject are free; after that its next attempt waits
1 second after the last failure, twice as long with each further failure, at
most 30 minutes, and is answered with the reference's locked-account code
(32000, HTTP 400) without being checked or counted. Valid API keys and
tokens always work. A right password clears its login's count; a subject
idle for a day is forgotten; an administrator clears counts with
`bugsvc reset-failed-logins` or PUT /rest/user's reset_failed_logins. Keys
and passwords never appear in an answer or in the logs.

Before: five failures of any kind from one address locked every account
behind it out for 30 minutes, valid keys included. The tests that asserted
that lock now assert these rules (their names say so).
"""

import json
import threading
import xmlrpc.client
from datetime import datetime, timedelta, timezone

import pytest
from falcon import testing
from freezegun import freeze_time

from accounts import ADMIN as ADMIN_EMAIL
from bugsvc.accounts import auth
from bugsvc.app import create_app
from bugsvc.cli import main as cli_main
from bugsvc.web.client_address import parse_networks
from rpc_support import xmlrpc_call


GUESSER = "203.0.113.9"
NEIGHBOUR = "203.0.113.10"
PROXY = "10.0.0.2"
START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=timezone.utc)
PASSWORD = "carols real password"


@pytest.fixture
def carol(services):
    return services.add_user("carol@example.com", password=PASSWORD)


@pytest.fixture
def carol_key(services, carol):
    return services.api_key("carol@example.com")


@pytest.fixture
def checks(monkeypatch):
    """Counts the passwords actually checked (scrypt evaluations)."""
    counted = []
    real = auth.verify_password

    def counting(password, stored):
        counted.append(password)
        return real(password, stored)

    monkeypatch.setattr(auth, "verify_password", counting)
    return counted


def sign_in(client, password, login="carol@example.com", remote_addr=GUESSER):
    return client.simulate_get("/rest/login", params={"login": login, "password": password},
                               remote_addr=remote_addr)


def fail_with_password(client, remote_addr=GUESSER, login="carol@example.com"):
    answer = sign_in(client, "not it", login, remote_addr)
    assert (answer.status_code, answer.json["code"]) == (401, 300), answer.text
    return answer


def fail_with_key(client, remote_addr=GUESSER, key="K" * 40, headers=None):
    answer = client.simulate_get("/rest/user", params={"Bugzilla_api_key": key, "ids": 1},
                                 remote_addr=remote_addr, headers=headers)
    assert (answer.status_code, answer.json["code"]) == (400, 306), answer.text
    return answer


def assert_throttled(answer):
    assert (answer.status_code, answer.json["code"]) == (400, 32000), answer.text
    assert set(answer.json) == {"error", "code", "message", "documentation"}
    assert "Too many failed sign-in attempts" in answer.json["message"]


def stored_failures(services, subject):
    rows = services.query("SELECT failures FROM login_throttle WHERE subject = ?", (subject,))
    return rows[0][0] if rows else 0


def jsonrpc(client, method, params, remote_addr=GUESSER):
    resp = client.simulate_post("/jsonrpc.cgi", remote_addr=remote_addr,
                                json={"method": method, "id": 1, "params": [params]})
    return resp.json


def xml_call(client, method, params, remote_addr=GUESSER):
    """(result, None) or (None, fault code), from the guessing address."""
    return xmlrpc_call(client, method, params, remote_addr)


# Keys and tokens: guesses are throttled, valid ones always work ----------------------

def test_made_up_keys_never_lock_out_valid_keys_or_tokens(client, carol, carol_key, admin_key):
    # Before: five made-up keys locked every account behind the address out.
    with freeze_time(START):
        token = sign_in(client, PASSWORD).json["token"]
        for _ in range(5):
            fail_with_key(client)
        assert_throttled(client.simulate_get("/rest/user", remote_addr=GUESSER,
                                             params={"Bugzilla_api_key": "K" * 40}))
        assert jsonrpc(client, "User.get", {"Bugzilla_api_key": "K" * 40, "ids": [1]}
                       )["error"]["code"] == 32000
        assert xml_call(client, "User.get", {"Bugzilla_api_key": "K" * 40, "ids": [1]}) \
            == (None, 32000)
        for key, user in ((carol_key, carol), (admin_key, 1)):
            for params, headers in (({"Bugzilla_api_key": key}, None),
                                    (None, {"X-BUGZILLA-API-KEY": key}),
                                    (None, {"Authorization": f"Bearer {key}"})):
                ok = client.simulate_get("/rest/user", remote_addr=GUESSER, headers=headers,
                                         params={"ids": user, **(params or {})})
                assert ok.status_code == 200 and "email" in ok.json["users"][0], ok.text
            assert jsonrpc(client, "User.get", {"Bugzilla_api_key": key, "ids": [user]}
                           )["result"]["users"][0]["id"] == user
            assert xml_call(client, "User.get", {"Bugzilla_api_key": key, "ids": [user]}
                            )[0]["users"][0]["id"] == user
        written = client.simulate_post("/rest/api_key", remote_addr=GUESSER,
                                       json={"Bugzilla_api_key": carol_key, "description": "x"})
        assert written.status_code == 201, written.text
        assert "email" in client.simulate_get("/rest/user", remote_addr=GUESSER, params={
            "ids": carol, "Bugzilla_token": token}).json["users"][0]


def test_made_up_tokens_are_throttled_per_address_like_keys(client, services, carol):
    with freeze_time(START):
        token = sign_in(client, PASSWORD).json["token"]
        for number in range(5):
            wrong = client.simulate_get("/rest/user", remote_addr=GUESSER, params={
                "ids": carol, "Bugzilla_token": f"{carol}-Wrong{number:05d}"})
            assert (wrong.status_code, wrong.json["code"]) == (400, 32000)
            assert "not valid" in wrong.json["message"]
        assert stored_failures(services, f"address:{GUESSER}") == 5
        assert_throttled(client.simulate_get("/rest/user", remote_addr=GUESSER, params={
            "ids": carol, "Bugzilla_token": f"{carol}-WrongAgain"}))
        assert xml_call(client, "User.get", {"ids": [carol], "Bugzilla_token": "1-Wrong"}) \
            == (None, 32000)
        assert stored_failures(services, f"address:{GUESSER}") == 5     # throttled: not counted
        assert "email" in client.simulate_get("/rest/user", remote_addr=GUESSER, params={
            "ids": carol, "Bugzilla_token": token}).json["users"][0]
        # Another address is not throttled by them.
        other = client.simulate_get("/rest/user", remote_addr=NEIGHBOUR, params={
            "ids": carol, "Bugzilla_token": f"{carol}-WrongThere"})
        assert "not valid" in other.json["message"]


# Passwords: throttled per login name -------------------------------------------------

def test_wrong_passwords_throttle_that_login_only(client, services, carol, carol_key):
    # Before: the address was locked, for every account and credential.
    services.add_user("dave@example.com", password="daves password")
    with freeze_time(START):
        for _ in range(5):
            fail_with_password(client)
        for address in (GUESSER, NEIGHBOUR):
            assert_throttled(sign_in(client, PASSWORD, remote_addr=address))
            assert_throttled(client.simulate_get("/rest/parameters", remote_addr=address, params={
                "Bugzilla_login": "carol@example.com", "Bugzilla_password": PASSWORD}))
        assert xml_call(client, "User.login", {"login": "carol@example.com",
                                               "password": PASSWORD}) == (None, 32000)
        assert sign_in(client, "daves password", "dave@example.com").status_code == 200
        assert client.simulate_get("/rest/user", remote_addr=GUESSER, params={
            "Bugzilla_api_key": carol_key, "ids": carol}).status_code == 200
        assert client.simulate_get("/rest/version", remote_addr=GUESSER).status_code == 200


def test_the_delay_doubles_after_five_failures_up_to_30_minutes(client, services, carol):
    with freeze_time(START) as clock:
        last = START
        for _ in range(5):
            fail_with_password(client)
        for failures in range(5, 20):
            delay = min(2 ** (failures - 5), 30 * 60)
            clock.move_to(last + timedelta(seconds=delay - 1))
            if delay > 1:
                throttled = sign_in(client, "not it")
                assert_throttled(throttled)
                assert "in 1 second." in throttled.json["message"]
            clock.move_to(last + timedelta(seconds=delay))
            fail_with_password(client)                   # checked again, and wrong
            last = last + timedelta(seconds=delay)
            assert stored_failures(services, "login:carol@example.com") == failures + 1
        assert_throttled(sign_in(client, PASSWORD))
        assert "in 1800 seconds" in sign_in(client, PASSWORD).json["message"]
        clock.move_to(last + timedelta(minutes=30))
        assert sign_in(client, PASSWORD).status_code == 200
        assert stored_failures(services, "login:carol@example.com") == 0
        fail_with_password(client)                       # cleared: the free ones again


def test_a_throttled_attempt_is_neither_checked_nor_counted(client, services, carol, checks):
    with freeze_time(START):
        for _ in range(5):
            fail_with_password(client)
        assert len(checks) == 5
        for _ in range(3):
            assert_throttled(sign_in(client, PASSWORD))
        assert xml_call(client, "User.get", {"ids": [carol], "Bugzilla_login": "carol@example.com",
                                             "Bugzilla_password": PASSWORD}) == (None, 32000)
        assert len(checks) == 5
        assert stored_failures(services, "login:carol@example.com") == 5


def test_concurrent_wrong_passwords_get_only_the_free_checks(client, services, carol,
                                                             monkeypatch):
    # Before: the check and the record were apart, and 40 concurrent guesses
    # got about 10 checks.
    checked, lock = [], threading.Lock()
    real = auth.verify_password

    def slow_check(password, stored):
        with lock:
            checked.append(password)
        threading.Event().wait(0.02)           # a real hash takes a while: widen the race
        return real(password, stored)

    monkeypatch.setattr(auth, "verify_password", slow_check)
    codes, start_together = [], threading.Barrier(40)

    def guess(number):
        start_together.wait()
        if number % 2:
            answer = sign_in(client, f"guess {number}").json
        else:
            answer = jsonrpc(client, "User.get", {"ids": [carol], "Bugzilla_login":
                             "carol@example.com", "Bugzilla_password": f"guess {number}"})["error"]
        with lock:
            codes.append(answer["code"])

    with freeze_time(START):
        threads = [threading.Thread(target=guess, args=(n,)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(checked) == 5
    assert sorted(codes) == [300] * 5 + [32000] * 35


def test_unknown_login_names_are_answered_like_accounts(client, carol):
    def answers(login):
        with freeze_time(START):
            result = [sign_in(client, "not it", login) for _ in range(7)]
        return [(a.status_code, a.json["code"], a.json["message"]) for a in result]

    assert answers("carol@example.com") == answers("nobody@example.com")


def test_failures_are_forgotten_after_a_day_idle(client, services, carol):
    # Before: five failures locked the address for 30 minutes.
    with freeze_time(START) as clock:
        for _ in range(7):
            clock.tick(timedelta(minutes=40))
            fail_with_password(client)
        clock.move_to(datetime.now(timezone.utc) + timedelta(days=1))
        for _ in range(5):
            fail_with_password(client)
        assert stored_failures(services, "login:carol@example.com") == 5


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


# An administrator clears them ---------------------------------------------------------

def throttle_carol(client):
    for _ in range(5):
        fail_with_password(client)
    assert_throttled(sign_in(client, PASSWORD))


def test_put_user_reset_failed_logins_clears_a_login(client, services, carol, admin_key):
    plain = services.add_user("plain@example.com", password="plain password")
    plain_key = services.api_key("plain@example.com")
    with freeze_time(START):
        throttle_carol(client)
        refused = client.simulate_put(f"/rest/user/{carol}", params={"Bugzilla_api_key": plain_key},
                                      json={"reset_failed_logins": True})
        assert (refused.status_code, refused.json["code"]) == (401, 304)
        assert_throttled(sign_in(client, PASSWORD))
        done = client.simulate_put("/rest/user/carol@example.com",
                                   params={"Bugzilla_api_key": admin_key},
                                   json={"reset_failed_logins": True})
        assert done.json == {"users": [{"id": carol, "changes": {}}]}
        assert sign_in(client, PASSWORD).status_code == 200
        assert services.query("SELECT field, removed, added FROM audit_log WHERE object_id = ?"
                              " AND field = 'failed_logins'", (carol,)) == [
            ("failed_logins", "5", "0")]
        # The same over XML-RPC.
        throttle_carol(client)
        assert xml_call(client, "User.update", {"ids": [plain], "Bugzilla_api_key": plain_key,
                                                "reset_failed_logins": True}) == (None, 304)
        result, fault = xml_call(client, "User.update", {"ids": [carol], "Bugzilla_api_key":
                                                         admin_key, "reset_failed_logins": True})
        assert fault is None and result["users"][0]["id"] == carol
        assert sign_in(client, PASSWORD).status_code == 200


def test_the_reset_command_clears_logins_and_addresses(client, config, services, carol):
    with freeze_time(START):
        throttle_carol(client)
        for _ in range(5):
            fail_with_key(client)
        assert_throttled(client.simulate_get("/rest/user", remote_addr=GUESSER,
                                             params={"Bugzilla_api_key": "K" * 40}))
    argv = ["--db", config.database.text, "reset-failed-logins"]
    status, out, err = run_cli(argv + [GUESSER, "nobody@example.com"])
    assert status == 1 and "'nobody@example.com' is neither" in err
    assert stored_failures(services, f"address:{GUESSER}") == 5          # nothing changed
    status, out, err = run_cli(argv + ["Carol@Example.com", GUESSER])
    assert status == 0, err
    assert out == (f"carol@example.com: 5 failed sign-in attempts forgotten.\n"
                   f"{GUESSER}: 5 failed sign-in attempts forgotten.\n")
    with freeze_time(START):
        assert sign_in(client, PASSWORD).status_code == 200
        fail_with_key(client)


def run_cli(argv):
    import io
    out, err = io.StringIO(), io.StringIO()
    return cli_main(argv, {}, out=out, err=err), out.getvalue(), err.getvalue()


# The client's address -----------------------------------------------------------------

def test_a_forwarded_for_header_is_ignored_without_a_trusted_proxy(client, carol):
    with freeze_time(START):
        for _ in range(5):
            fail_with_key(client)
        answer = client.simulate_get("/rest/user", params={"Bugzilla_api_key": "K" * 40},
                                     headers={"X-Forwarded-For": NEIGHBOUR, "X-Real-IP": NEIGHBOUR},
                                     remote_addr=GUESSER)
        assert_throttled(answer)


@pytest.fixture
def proxied(config, db):
    """A client of an app that trusts the proxies of 10.0.0.0/8."""
    config.trusted_proxies = parse_networks("10.0.0.0/8, ::1")
    return testing.TestClient(create_app(config, db=db))


def test_a_trusted_proxy_forwards_the_client_address(proxied, services, carol):
    def through_proxy(forwarded_for, **extra):
        return proxied.simulate_get("/rest/user", remote_addr=PROXY,
                                    params={"Bugzilla_api_key": "K" * 40, "ids": 1},
                                    headers={"X-Forwarded-For": forwarded_for, **extra})

    with freeze_time(START):
        for _ in range(5):
            assert through_proxy(GUESSER).json["code"] == 306
        assert stored_failures(services, f"address:{GUESSER}") == 5
        assert stored_failures(services, f"address:{PROXY}") == 0
        assert_throttled(through_proxy(GUESSER))
        assert through_proxy(NEIGHBOUR).json["code"] == 306
        # What the client wrote left of what the proxy appended is not believed,
        # nor a forwarded address from a peer that is not a trusted proxy.
        assert_throttled(through_proxy(f"{NEIGHBOUR}, {GUESSER}"))
        assert_throttled(through_proxy(f"{NEIGHBOUR}, {GUESSER}, 10.9.9.9"))
        direct = proxied.simulate_get("/rest/user", remote_addr=GUESSER,
                                      params={"Bugzilla_api_key": "K" * 40},
                                      headers={"X-Forwarded-For": NEIGHBOUR})
        assert_throttled(direct)
        answer = proxied.simulate_post("/xmlrpc.cgi", remote_addr=PROXY, body=xmlrpc.client.dumps(
            ({"Bugzilla_api_key": "K" * 40, "ids": [1]},), "User.get"),
            headers={"Content-Type": "text/xml", "X-Forwarded-For": GUESSER})
        assert "<int>32000</int>" in answer.text


def test_a_restricted_token_is_bound_to_the_forwarded_address(proxied, carol):
    login = proxied.simulate_get("/rest/login", remote_addr=PROXY,
                                 headers={"X-Forwarded-For": NEIGHBOUR},
                                 params={"login": "carol@example.com", "password": PASSWORD,
                                         "restrict_login": "1"})
    token = login.json["token"]

    def use(forwarded_for):
        return proxied.simulate_get("/rest/user", remote_addr=PROXY,
                                    headers={"X-Forwarded-For": forwarded_for},
                                    params={"ids": carol, "Bugzilla_token": token})

    assert use(NEIGHBOUR).status_code == 200
    assert use(GUESSER).json["code"] == 32000


@pytest.mark.parametrize("remote, forwarded, expected", [
    ("10.0.0.2", "203.0.113.9", "203.0.113.9"),
    ("10.0.0.2", "203.0.113.9:4711", "203.0.113.9"),
    ("10.0.0.2", "[2001:db8::7]:443", "2001:db8::7"),
    ("10.0.0.2", "2001:db8::7, 10.0.0.3", "2001:db8::7"),           # two trusted hops
    ("10.0.0.2", "unknown, 203.0.113.9", "203.0.113.9"),
    ("10.0.0.2", "203.0.113.9, garbage", "10.0.0.2"),               # nothing believable
    ("::ffff:10.0.0.2", "203.0.113.9", "203.0.113.9"),
    ("203.0.113.50", "203.0.113.9", "203.0.113.50"),                # not a trusted peer
    ("10.0.0.2", None, "10.0.0.2"),
])
def test_the_client_address_behind_trusted_proxies(remote, forwarded, expected):
    from bugsvc.web.client_address import client_address
    assert client_address(remote, forwarded, parse_networks("10.0.0.0/8")) == expected
    assert client_address(remote, forwarded, ()) == remote


def test_trusted_proxies_are_an_option_with_an_environment_variable():
    from bugsvc.cli.options import UsageError, build_parser, make_config
    parse = build_parser().parse_args
    assert make_config(parse([]), {}).trusted_proxies == ()
    from_env = make_config(parse([]), {"BUGSVC_TRUSTED_PROXIES": "10.0.0.1, fd00::/8"})
    assert [str(n) for n in from_env.trusted_proxies] == ["10.0.0.1/32", "fd00::/8"]
    from_flag = make_config(parse(["--trusted-proxies", "192.168.1.0/24"]),
                            {"BUGSVC_TRUSTED_PROXIES": "10.0.0.1"})
    assert [str(n) for n in from_flag.trusted_proxies] == ["192.168.1.0/24"]
    with pytest.raises(UsageError, match="not-an-address"):
        make_config(parse(["--trusted-proxies", "10.0.0.1,not-an-address"]), {})


# Nothing secret in answers or logs ------------------------------------------------------

def test_throttled_answers_say_nothing_of_the_secrets_tried(client, carol):
    tried = [f"guess-{n}-secret" for n in range(12)]
    with freeze_time(START):
        answers = [client.simulate_get("/rest/user", params={"Bugzilla_api_key": key},
                                       remote_addr=GUESSER) for key in tried[:6]]
        answers += [client.simulate_get("/rest/login", remote_addr=GUESSER, params={
            "login": "carol@example.com", "password": password}) for password in tried[6:]]
    assert [a.json["code"] for a in answers] == [306] * 5 + [32000] + [300] * 5 + [32000]
    for answer in answers:
        for secret in tried:
            assert secret not in answer.text


def test_guessing_through_the_real_server_is_throttled_and_never_logged(start, tmp_path):
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
    # Three wrong passwords and two wrong keys: nobody waits yet.
    status, body, _ = server.call("GET", "/rest/parameters", {
        "Bugzilla_login": "boss@example.com", "Bugzilla_password": "boss password 9"})
    assert status == 200 and "insidergroup" in body["parameters"]
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


def test_the_admin_is_not_locked_out_by_anyone_elses_guesses(client, admin_key):
    with freeze_time(START):
        for _ in range(10):
            client.simulate_get("/rest/user", params={"Bugzilla_api_key": "K" * 40},
                                remote_addr=GUESSER)
            client.simulate_get("/rest/login", remote_addr=GUESSER,
                                params={"login": "nobody@example.com", "password": "x"})
        ok = client.simulate_get("/rest/user", params={"Bugzilla_api_key": admin_key,
                                                       "names": ADMIN_EMAIL}, remote_addr=GUESSER)
        assert ok.status_code == 200
        assert client.simulate_get("/rest/login", remote_addr=GUESSER, params={
            "login": ADMIN_EMAIL, "password": "admin-password"}).status_code == 200


# Databases of the fixed lockout ----------------------------------------------------------

def test_a_version_2_database_keeps_its_failures_as_counts(tmp_path):
    from bugsvc.store.location import open_database
    path = tmp_path / "v2.sqlite"
    database = open_database(path)
    database.initialize()
    conn = database.connection()
    conn.execute("INSERT INTO users (login, real_name, created_at)"
                 " VALUES ('Carol@example.com', '', '2026-01-01 00:00:00')")
    carol = conn.execute("SELECT id FROM users WHERE login = 'Carol@example.com'").fetchone()[0]
    # Back to what version 2 stored: a log of failures per address.
    conn.execute("DROP TABLE login_throttle")
    conn.execute("CREATE TABLE login_failures (ip_address TEXT NOT NULL, user_id INTEGER,"
                 " failed_at TEXT NOT NULL)")
    conn.executemany("INSERT INTO login_failures (ip_address, user_id, failed_at)"
                     " VALUES (?, ?, ?)",
                     [(GUESSER, carol, "2026-05-01 08:50:00"),
                      (NEIGHBOUR, carol, "2026-05-01 08:55:00"),
                      (GUESSER, None, "2026-05-01 08:51:00"),
                      (GUESSER, 999, "2026-05-01 08:52:00")])
    conn.execute("PRAGMA user_version = 2")
    database.close()

    migrated = open_database(path)
    assert migrated.initialize() is False
    with migrated.transaction() as conn:
        assert sorted(tuple(row) for row in conn.execute("SELECT * FROM login_throttle")) == [
            (f"address:{GUESSER}", 2, "2026-05-01 08:52:00"),
            ("login:carol@example.com", 2, "2026-05-01 08:55:00")]
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'login_failures'"
                            ).fetchone() is None
    migrated.close()
