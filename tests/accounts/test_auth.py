"""Authentication on every call: each credential name in the query and in the
body, the headers, precedence, failures that are never anonymous, and no
secret kept or echoed in clear."""

from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from bugsvc.accounts import auth


PASSWORD = "carols-password"


@pytest.fixture
def carol(services):
    return services.add_user("carol@example.com", password=PASSWORD, real_name="Carol")


@pytest.fixture
def carol_key(services, carol):
    return services.api_key("carol@example.com")


@pytest.fixture
def carol_token(client, carol):
    return client.simulate_get("/rest/login", params={"login": "carol@example.com",
                                                      "password": PASSWORD}).json["token"]


def credentials(kind, key, token):
    """Every way of presenting each credential as parameters: (label, dict)."""
    if kind == "api_key":
        return [{name: key} for name in ("Bugzilla_api_key", "Service_api_key", "api_key")]
    if kind == "password":
        return [{"Bugzilla_login": "carol@example.com", "Bugzilla_password": PASSWORD},
                {"Service_login": "carol@example.com", "Service_password": PASSWORD},
                {"login": "carol@example.com", "password": PASSWORD}]
    return [{name: token} for name in ("Bugzilla_token", "Service_token", "token")]


def own_account_seen(resp):
    assert resp.status_code == 200, resp.json
    return "saved_searches" in resp.json["users"][0]


def probe(client, user_id, params=None, headers=None, remote_addr="127.0.0.1"):
    """GET the account `user_id`; only its owner sees saved_searches."""
    return client.simulate_get("/rest/user", params={"ids": user_id,
                                                     "include_fields": "saved_searches",
                                                     **(params or {})},
                               headers=headers, remote_addr=remote_addr)


def created_key_owner(client, services, params=None, body=None, headers=None):
    """POST /rest/api_key and return the owner of the key it made (or the error)."""
    resp = client.simulate_post("/rest/api_key", params=params, json=body or {}, headers=headers)
    if resp.status_code != 201:
        return resp.json["code"]
    return services.query("SELECT user_id FROM api_keys WHERE id = ?", (resp.json["id"],))[0][0]


# Every name, in the query and in the body ----------------------------------------

@pytest.mark.parametrize("kind", ["api_key", "password", "token"])
def test_every_credential_name_works_in_the_query(client, carol, carol_key, carol_token, kind):
    for params in credentials(kind, carol_key, carol_token):
        assert own_account_seen(probe(client, carol, params)), params


@pytest.mark.parametrize("kind", ["api_key", "password", "token"])
def test_every_credential_name_works_in_the_body(client, services, carol, carol_key, carol_token,
                                                 kind):
    for body in credentials(kind, carol_key, carol_token):
        assert created_key_owner(client, services, body=body) == carol, body


def test_body_credentials_never_reach_the_service_as_parameters(client, services, carol,
                                                                carol_key):
    resp = client.simulate_post("/rest/api_key", json={"api_key": carol_key,
                                                       "description": "from the body"})
    listing = services.query("SELECT description FROM api_keys WHERE id = ?", (resp.json["id"],))
    assert listing == [("from the body",)]


def test_login_alone_is_a_plain_parameter_not_a_credential(client, carol):
    resp = client.simulate_get("/rest/user", params={"names": "carol@example.com",
                                                     "login": "carol@example.com"})
    assert resp.json == {"users": [{"id": carol, "name": "carol@example.com",
                                    "real_name": "Carol"}]}


# Headers -------------------------------------------------------------------------

@pytest.mark.parametrize("header_set", ["X-BUGZILLA", "X-SERVICE"])
def test_credential_headers(client, carol, carol_key, carol_token, header_set):
    for headers in ({f"{header_set}-API-KEY": carol_key},
                    {f"{header_set}-LOGIN": "carol@example.com",
                     f"{header_set}-PASSWORD": PASSWORD},
                    {f"{header_set}-TOKEN": carol_token}):
        assert own_account_seen(probe(client, carol, headers=headers)), headers


def test_authorization_bearer_header(client, services, carol, carol_key):
    assert own_account_seen(probe(client, carol, headers={"Authorization": f"Bearer {carol_key}"}))
    assert created_key_owner(client, services,
                             headers={"Authorization": f"bearer {carol_key}"}) == carol


def test_percent_encoded_header_values_are_decoded(services, client):
    user_id = services.add_user("dora@example.com", password="p@ss word%")
    headers = {"X-BUGZILLA-LOGIN": "dora%40example.com", "X-BUGZILLA-PASSWORD": "p%40ss%20word%25"}
    assert own_account_seen(probe(client, user_id, headers=headers))


def test_empty_headers_are_ignored(client, carol):
    resp = client.simulate_get("/rest/user", params={"names": "carol@example.com"},
                               headers={"X-BUGZILLA-API-KEY": "", "X-BUGZILLA-TOKEN": ""})
    assert resp.status_code == 200


def test_parameter_beats_header(client, services, carol, carol_key, admin_key):
    assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key},
                                  headers={"X-BUGZILLA-API-KEY": admin_key}))
    assert created_key_owner(client, services, params={"Bugzilla_api_key": carol_key},
                             headers={"Authorization": f"Bearer {admin_key}"}) == carol
    wrong_param = probe(client, carol, {"Bugzilla_api_key": "x" * 40},
                        headers={"X-BUGZILLA-API-KEY": carol_key})
    assert wrong_param.json["code"] == 306


# Failures are errors, never anonymous calls -----------------------------------------

WRONG = [
    ({"Bugzilla_api_key": "WrongKeyWrongKeyWrongKeyWrongKeyWrongKey"}, None, 400, 306),
    ({"api_key": "ShortKey1"}, None, 400, 306),
    ({"Bugzilla_login": "carol@example.com", "Bugzilla_password": "WrongPassword"}, None, 401, 300),
    ({"login": "carol@example.com", "password": "WrongPassword"}, None, 401, 300),
    ({"Bugzilla_login": "nobody@example.com", "Bugzilla_password": "WrongPassword"},
     None, 401, 300),
    ({"Bugzilla_token": "1-WrongToken"}, None, 400, 32000),
    ({"token": "WrongToken"}, None, 400, 32000),
    (None, {"X-BUGZILLA-API-KEY": "WrongKeyInAHeader"}, 400, 306),
    (None, {"X-SERVICE-TOKEN": "1-WrongTokenH"}, 400, 32000),
    (None, {"X-BUGZILLA-LOGIN": "carol@example.com", "X-BUGZILLA-PASSWORD": "WrongPassword"},
     401, 300),
    (None, {"Authorization": "Bearer WrongBearerKey"}, 400, 306),
]


@pytest.mark.parametrize("params, headers, status, code", WRONG)
def test_wrong_credentials_are_errors_that_do_not_echo_them(client, carol, params, headers,
                                                            status, code):
    # Get User by name is open to anonymous callers: a wrong credential must
    # still fail rather than fall back to an anonymous answer.
    resp = client.simulate_get("/rest/user",
                               params={"names": "carol@example.com", **(params or {})},
                               headers=headers)
    assert (resp.status_code, resp.json["code"]) == (status, code)
    assert resp.json["error"] is True
    for secret in list((params or {}).values()) + list((headers or {}).values()):
        if secret != "carol@example.com":
            assert secret.split()[-1] not in resp.text


def test_wrong_credentials_fail_on_open_calls_too(client):
    resp = client.simulate_get("/rest/extensions", params={"Bugzilla_api_key": "WrongKey"})
    assert resp.json["code"] == 306


# Calls exempt from login: a stale key or token does not fail them ----------------

def rest_exempt(client, path, params=None, headers=None):
    return client.simulate_get(path, params=params, headers=headers)


def jsonrpc_exempt(client, path, params=None, headers=None):
    method = {"/rest/version": "Bugzilla.version", "/rest/timezone": "Bugzilla.timezone",
              "/rest/parameters": "Bugzilla.parameters"}[path]
    resp = client.simulate_post("/jsonrpc.cgi", json={"method": method, "id": 1,
                                                      "params": [params or {}]},
                                headers=headers)
    assert resp.status_code == 200 and resp.json["error"] is None, resp.text
    return resp.json["result"]


@pytest.mark.parametrize("path", ["/rest/version", "/rest/timezone", "/rest/parameters"])
def test_exempt_calls_run_anonymously_with_a_stale_key_or_token(client, services, carol,
                                                                carol_key, path):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE api_keys SET revoked = 1 WHERE user_id = ?", (carol,))
    anonymous = rest_exempt(client, path).json
    stale = [({"Bugzilla_api_key": carol_key}, None), ({"Bugzilla_api_key": "W" * 40}, None),
             ({"Bugzilla_token": f"{carol}-AAAAAAAAAA"}, None), ({"token": "garbage"}, None),
             (None, {"X-BUGZILLA-API-KEY": "W" * 40}), (None, {"Authorization": "Bearer nope"})]
    for params, headers in stale:
        resp = rest_exempt(client, path, params, headers)
        assert (resp.status_code, resp.json) == (200, anonymous), (params, headers)
        assert jsonrpc_exempt(client, path, params, headers) == anonymous
    # Refused there, they are not counted as failures either.
    assert services.query("SELECT COUNT(*) FROM login_throttle") == [(0,)]


def test_exempt_calls_still_use_a_valid_key_and_check_a_given_login(client, admin_key, carol):
    everything = client.simulate_get("/rest/parameters", params={"Bugzilla_api_key": admin_key})
    assert "insidergroup" in everything.json["parameters"]     # tweakparams sees them all
    # A login name given: the credentials are checked as on every call.
    for params, code in (({"Bugzilla_login": "carol@example.com", "Bugzilla_password": "no"}, 300),
                         ({"Bugzilla_login": "", "Bugzilla_password": "no"}, 300),
                         ({"Bugzilla_login": "carol@example.com", "Bugzilla_password": "no",
                           "Bugzilla_api_key": "W" * 40}, 306)):
        resp = client.simulate_get("/rest/version", params=params)
        assert resp.json["code"] == code, params
    logged_in = client.simulate_get("/rest/parameters", params={
        "Bugzilla_login": "carol@example.com", "Bugzilla_password": PASSWORD})
    assert "urlbase" in logged_in.json["parameters"]


def test_wrong_credentials_in_the_body_are_errors(client, services):
    before = services.query("SELECT COUNT(*) FROM api_keys")
    resp = client.simulate_post("/rest/api_key", json={"Bugzilla_api_key": "WrongBodyKey"})
    assert (resp.status_code, resp.json["code"]) == (400, 306)
    assert "WrongBodyKey" not in resp.text
    assert services.query("SELECT COUNT(*) FROM api_keys") == before


def test_revoked_key_is_306(client, services, carol, carol_key):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE api_keys SET revoked = 1 WHERE user_id = ?", (carol,))
    resp = probe(client, carol, {"Bugzilla_api_key": carol_key})
    assert (resp.status_code, resp.json["code"]) == (400, 306)


def test_restricted_token_is_refused_from_another_address(client, carol):
    token = client.simulate_get("/rest/login", remote_addr="192.0.2.1",
                                params={"login": "carol@example.com", "password": PASSWORD,
                                        "restrict_login": "true"}).json["token"]
    assert own_account_seen(probe(client, carol, {"token": token}, remote_addr="192.0.2.1"))
    other = probe(client, carol, {"token": token}, remote_addr="192.0.2.99")
    assert (other.status_code, other.json["code"]) == (400, 32000)


def test_token_of_a_deleted_session_is_refused(client, services, carol, carol_token):
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM login_tokens")
    assert probe(client, carol, {"Bugzilla_token": carol_token}).json["code"] == 32000


def test_token_with_another_accounts_number_is_refused(client, carol, carol_token):
    forged = "1-" + carol_token.split("-", 1)[1]
    assert probe(client, carol, {"Bugzilla_token": forged}).json["code"] == 32000


def test_disabled_account_is_301_with_every_credential(client, services, carol, carol_key,
                                                       carol_token):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'Suspended' WHERE id = ?", (carol,))
    for params in ({"Bugzilla_api_key": carol_key}, {"Bugzilla_token": carol_token},
                   {"Bugzilla_login": "carol@example.com", "Bugzilla_password": PASSWORD}):
        resp = probe(client, carol, params)
        assert (resp.status_code, resp.json["code"]) == (401, 301), params
    header = probe(client, carol, headers={"Authorization": f"Bearer {carol_key}"})
    assert header.json["code"] == 301


def test_guessing_api_keys_throttles_guesses_not_valid_keys(client, carol, carol_key):
    # Before: five wrong keys locked the address out, valid keys included.
    with freeze_time("2026-05-01 09:00:00"):
        for _ in range(5):
            assert probe(client, carol, {"api_key": "guess"}, remote_addr="198.51.100.7"
                         ).json["code"] == 306
        throttled = probe(client, carol, {"api_key": "guess"}, remote_addr="198.51.100.7")
        assert (throttled.status_code, throttled.json["code"]) == (400, 32000)
        assert own_account_seen(probe(client, carol, {"api_key": carol_key},
                                      remote_addr="198.51.100.7"))
        assert own_account_seen(probe(client, carol, {"api_key": carol_key},
                                      remote_addr="198.51.100.8"))


def test_login_required_call_without_credentials_is_410(client):
    resp = client.simulate_get("/rest/api_key")
    assert (resp.status_code, resp.json["code"]) == (401, 410)


# Nothing secret is stored in clear ----------------------------------------------------

def all_stored_text(services):
    with services.db.transaction() as conn:
        tables = conn.dialect.tables(conn)
    return "\n".join(str(services.query(f'SELECT * FROM "{table}"')) for table in tables)


def test_database_holds_no_key_token_or_password_in_clear(client, services, admin_key):
    created = client.simulate_post("/rest/user", params={"Bugzilla_api_key": admin_key},
                                   json={"email": "eve@example.com",
                                         "password": "EvesClearPassword"}).json
    client.simulate_put(f"/rest/user/{created['id']}", params={"Bugzilla_api_key": admin_key},
                        json={"password": "EvesSecondPassword"})
    token = client.simulate_get("/rest/login",
                                params={"login": "eve@example.com",
                                        "password": "EvesSecondPassword"}).json["token"]
    new_key = client.simulate_post("/rest/api_key", params={"Bugzilla_token": token},
                                   json={"description": "eve"}).json["api_key"]
    client.simulate_get("/rest/login", params={"login": "eve@example.com",
                                               "password": "EvesWrongPassword"})
    stored = all_stored_text(services)
    for secret in (admin_key, new_key, token, token.split("-", 1)[1], "EvesClearPassword",
                   "EvesSecondPassword", "EvesWrongPassword", "admin-password"):
        assert secret not in stored, secret


# The accounts behind API keys, kept per process -----------------------------------

@pytest.mark.parametrize("change, code", [
    ("UPDATE api_keys SET revoked = 1 WHERE user_id = ?", 306),
    ("UPDATE users SET disabled_text = 'Suspended' WHERE id = ?", 301),
    ("DELETE FROM api_keys WHERE user_id = ?", 306),
])
def test_a_key_used_before_is_refused_once_changed_behind_the_process(client, services, carol,
                                                                     carol_key, change, code):
    """The change is made on the database directly, as another server process
    would: the next call reads the key's account afresh."""
    for _ in range(2):
        assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key}))
    with services.db.transaction(write=True) as conn:
        conn.execute(change, (carol,))
    resp = probe(client, carol, {"Bugzilla_api_key": carol_key})
    assert resp.json["code"] == code


def test_a_key_used_before_signs_in_as_its_account_now_is(client, services, carol, carol_key):
    def whoami():
        resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": carol_key})
        assert resp.status_code == 200, resp.json
        return resp.json["real_name"], "admin" in resp.json["groups"]
    assert whoami() == ("Carol", False)
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET real_name = 'Carol Ann' WHERE id = ?", (carol,))
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " SELECT ?, id, 0, 0 FROM groups WHERE name = 'admin'", (carol,))
    assert whoami() == ("Carol Ann", True)
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM user_groups WHERE user_id = ?", (carol,))
    assert whoami() == ("Carol Ann", False)


def test_a_keys_use_is_recorded_at_most_once_a_minute(client, services, carol, carol_key):
    def last_used():
        return services.query("SELECT last_used FROM api_keys WHERE user_id = ?", (carol,))[0][0]
    start = datetime(2026, 5, 1, 12, 0, 5, tzinfo=timezone.utc)
    with freeze_time(start) as clock:
        assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key}))
        assert last_used() == "2026-05-01 12:00:05"
        clock.move_to(start + timedelta(seconds=50))           # the same minute: not again
        assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key}))
        assert last_used() == "2026-05-01 12:00:05"
        clock.move_to(start + timedelta(seconds=70))
        assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key}))
        assert last_used() == "2026-05-01 12:01:15"
        assert own_account_seen(probe(client, carol, {"Bugzilla_api_key": carol_key}))
        assert last_used() == "2026-05-01 12:01:15"


def test_the_kept_keys_are_those_of_one_generation():
    kept = auth.ApiKeyCache()
    first = auth.KnownKey(1, "caller at 5", None)
    kept.put(5, "digest", first)
    assert kept.get(5, "digest") is first
    assert kept.get(6, "digest") is None and kept.get(4, "digest") is None
    kept.put(6, "other", auth.KnownKey(2, "caller at 6", None))
    assert kept.get(5, "digest") is None and kept.get(6, "digest") is None
    kept.recorded(2, "2026-05-01 12:00:05")
    assert kept.last_use(auth.KnownKey(2, "caller at 6", None)) == "2026-05-01 12:00:05"
