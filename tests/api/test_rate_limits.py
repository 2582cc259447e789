"""Rate limits (bugsvc/api/limits.py): off by default; per API key, account
and address; per kind of call; 429 with Retry-After over REST and the
pages, fault 32000 over XML-RPC and JSON-RPC; a wrong credential never
counts against the account it names; counted across server processes
through the database."""

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from falcon import testing

from bugsvc.api.limits import Counter, Rule, parse_rules
from bugsvc.app import create_app
from bugsvc.cli.options import UsageError, build_parser, make_config
from rpc_support import xmlrpc_call
from write_load import ADMIN, ADMIN_ENV, ADMIN_PASSWORD


START = datetime(2026, 5, 1, 12, 0, 10, tzinfo=timezone.utc)


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now


@pytest.fixture
def limited(config, db):
    """limited(rules=..., anonymous=...) -> (TestClient, Clock) of an app with
    those limits."""
    def make(rules="", anonymous=""):
        clock = Clock()
        limited_config = dataclasses.replace(config, rate_limits=parse_rules(rules),
                                             anonymous_rate_limits=parse_rules(anonymous))
        return testing.TestClient(create_app(limited_config, db=db, clock=clock)), clock
    return make


def version(client, remote_addr="127.0.0.1", **query):
    return client.simulate_get("/rest/version", params=query, remote_addr=remote_addr)


def test_a_default_installation_has_no_limit(client):
    assert {version(client).status_code for _ in range(200)} == {200}


def test_anonymous_calls_per_address_with_retry_after(limited):
    client, clock = limited(anonymous="5/minute")
    assert [version(client).status_code for _ in range(5)] == [200] * 5
    refused = version(client)
    assert refused.status_code == 429
    assert refused.json["code"] == 32000 and "at most 5 calls per minute" in refused.json["message"]
    assert refused.headers["Retry-After"] == "50"
    assert version(client, remote_addr="192.0.2.7").status_code == 200   # another address
    clock.now += timedelta(seconds=50)
    assert version(client).status_code == 200


def test_per_api_key_and_per_account(limited, services, plain_key):
    client, _ = limited(rules="3/minute")
    second_key = services.api_key("plain@example.com")
    for _ in range(3):
        assert version(client, Bugzilla_api_key=plain_key).status_code == 200
    assert version(client, Bugzilla_api_key=plain_key).status_code == 429
    assert version(client, Bugzilla_api_key=second_key).status_code == 200
    password = {"Bugzilla_login": "plain@example.com", "Bugzilla_password": "plain-password-1"}
    assert [version(client, **password).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert version(client).status_code == 200               # anonymous callers: no limit set


def test_wrong_credentials_never_count_against_the_account(limited, services, plain_key):
    client, _ = limited(rules="2/minute", anonymous="100/minute")
    for _ in range(6):
        wrong = version(client, Bugzilla_login="plain@example.com", Bugzilla_password="wrong")
        assert wrong.status_code != 429
    assert version(client, Bugzilla_api_key=plain_key).status_code == 200
    assert version(client, Bugzilla_api_key="0" * 40).status_code != 429
    assert version(client, Bugzilla_api_key=plain_key).status_code == 200


def test_per_kind_of_call(limited, plain_key):
    client, _ = limited(rules="Bug.search=2/minute,write=1/minute")
    key = {"Bugzilla_api_key": plain_key}
    searches = [client.simulate_get("/rest/bug", params=dict(key, summary="x")).status_code
                for _ in range(3)]
    assert searches == [200, 200, 429]
    assert version(client, **key).status_code == 200
    saved = [client.simulate_post("/rest/saved_search", params=key,
                                  json={"name": f"s{n}", "query": "summary=x"}).status_code
             for n in range(2)]
    assert saved[0] in (200, 201) and saved[1] == 429


def test_rpc_faults_and_pages(limited):
    client, _ = limited(anonymous="1/minute")
    assert xmlrpc_call(client, "Bugzilla.version", {})[1] is None
    assert xmlrpc_call(client, "Bugzilla.version", {}) == (None, 32000)
    answer = client.simulate_post("/jsonrpc.cgi", json={"method": "Bugzilla.version",
                                                        "params": [{}], "id": 1})
    assert answer.json["error"]["code"] == 32000
    page = client.simulate_get("/show_bug.cgi", params={"id": "1"})
    assert page.status_code == 429 and page.headers["Retry-After"] == "50"


def test_counted_across_processes_through_the_database(config, db):
    """Two apps on one database stand for two server processes."""
    clock = Clock()
    limited_config = dataclasses.replace(config, anonymous_rate_limits=parse_rules("4/hour"))
    first = testing.TestClient(create_app(limited_config, db=db, clock=clock))
    second = testing.TestClient(create_app(limited_config, db=db, clock=clock))
    assert [version(first).status_code, version(second).status_code,
            version(first).status_code, version(second).status_code] == [200] * 4
    assert version(first).status_code == 429 and version(second).status_code == 429


def test_large_limits_are_stored_in_batches_and_stay_close(db):
    clock = Clock()
    counters = [Counter(db, clock), Counter(db, clock)]
    rule = Rule("*", 200, 3600)
    allowed = 0
    for n in range(400):
        try:
            counters[n % 2].count("address:x", [rule])
            allowed += 1
        except Exception:
            pass
        counters[n % 2].sync_if_due()
    assert 200 <= allowed <= 200 + 2 * (200 // 20)


@pytest.mark.parametrize("value", ["600", "600/fortnight", "x=1/minute", "0/minute", "-1/hour"])
def test_option_values_that_are_no_rate(value):
    with pytest.raises(UsageError):
        make_config(build_parser().parse_args([f"--rate-limit={value}"]), {})


def test_option_values():
    config = make_config(build_parser().parse_args(
        ["--rate-limit", "600/minute,write=60/minute,Bug.search=10/second"]),
        {"BUGSVC_RATE_LIMIT_ANONYMOUS": "100/hour"})
    assert config.rate_limits == (Rule("*", 600, 60), Rule("write", 60, 60),
                                  Rule("Bug.search", 10, 1))
    assert config.anonymous_rate_limits == (Rule("*", 100, 3600),)


@pytest.mark.slow
def test_two_real_servers_share_the_count(start, new_db):
    location = new_db("limits")
    env = dict(ADMIN_ENV, BUGSVC_RATE_LIMIT_ANONYMOUS="4/day")
    first = start(location, env, name="first")
    second = start(location, {"BUGSVC_RATE_LIMIT_ANONYMOUS": "4/day"}, name="second")
    statuses = [server.call("GET", "/rest/version")[0]
                for server in (first, second, first, second, first, second)]
    assert statuses == [200, 200, 200, 200, 429, 429]
    status, body, headers = first.call("GET", "/rest/version")
    assert status == 429 and body["code"] == 32000 and int(headers["Retry-After"]) >= 1
    # A valid credential is counted apart from its address's anonymous calls.
    status, _, _ = first.call("GET", "/rest/version", {"Bugzilla_login": ADMIN,
                                                       "Bugzilla_password": ADMIN_PASSWORD})
    assert status == 200
