"""Self-registration stays open by default (createemailregexp `.*`, as the
reference), but account requests are throttled per client address and per
e-mail domain, and an administrator can block addresses and domains
(parameters blocked_emails and blocked_email_domains, bugsvc additions
shown to tweakparams members only)."""

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from falcon import testing

from bug_support import set_param
from bugsvc.accounts import self_service, tokens
from bugsvc.app import create_app
from bugsvc.errors import ServiceError
from bugsvc.services import account


START = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


class Clock:
    now = START

    def __call__(self):
        return self.now


@pytest.fixture
def site(config, db):
    clock = Clock()
    return testing.TestClient(create_app(dataclasses.replace(config), db=db, clock=clock)), clock


def ask(client, email, remote_addr="198.51.100.1"):
    answer = client.simulate_post("/rest/user/offer_account_by_email", json={"email": email},
                                  remote_addr=remote_addr)
    return answer.status_code, (answer.json or {}).get("code")


def mails(services):
    return services.query("SELECT address FROM outbox_messages ORDER BY id")


def test_requests_per_address_are_throttled(site, services):
    client, clock = site
    allowed = self_service.ACCOUNT_REQUESTS_PER_ADDRESS
    assert [ask(client, f"new{n}@example.org") for n in range(allowed)] == [(200, None)] * allowed
    status, code = ask(client, "one-more@example.org")
    assert (status, code) == (400, 32000)
    assert len(mails(services)) == self_service.ACCOUNT_REQUESTS_PER_ADDRESS
    assert ask(client, "other@example.org", remote_addr="198.51.100.2") == (200, None)
    clock.now = START + timedelta(hours=1)
    assert ask(client, "one-more@example.org") == (200, None)


def test_repeated_requests_for_one_address_cost_nothing(site):
    client, _ = site
    for _ in range(10):
        assert ask(client, "same@example.org") == (200, None)


def test_requests_per_domain_are_throttled(site):
    client, _ = site
    for n in range(self_service.ACCOUNT_REQUESTS_PER_DOMAIN):
        assert ask(client, f"n{n}@example.org", remote_addr=f"203.0.113.{n + 1}") == (200, None)
    assert ask(client, "late@example.org", remote_addr="203.0.113.200") == (400, 32000)
    assert ask(client, "late@example.net", remote_addr="203.0.113.200") == (200, None)


def test_blocked_addresses_and_domains(site, services):
    client, _ = site
    set_param(services, "blocked_email_domains", "spam.example, @junk.test")
    set_param(services, "blocked_emails", "Mallory@Example.org")
    for email in ("a@spam.example", "b@mail.spam.example", "c@JUNK.test", "mallory@example.org"):
        assert ask(client, email) == (400, 501), email
    assert mails(services) == []
    assert ask(client, "d@notspam.example") == (200, None)
    assert ask(client, "alice@example.org") == (200, None)


def test_a_link_mailed_before_the_block_no_longer_works(services):
    with services.db.transaction(write=True) as conn:
        secret = tokens.issue(conn, tokens.ACCOUNT, datetime.now(timezone.utc),
                              login="late@spam.example")
    set_param(services, "blocked_email_domains", "spam.example")
    with pytest.raises(ServiceError) as refused:
        services.call(account.create_account, {"account_token": secret,
                                               "password": "a long enough password"})
    assert refused.value.code == 501
    assert services.query("SELECT 1 FROM users WHERE login = 'late@spam.example'") == []


def test_the_new_parameters_are_shown_to_tweakparams_members_only(client, admin_key, plain_key):
    anonymous = client.simulate_get("/rest/parameters").json["parameters"]
    plain = client.simulate_get("/rest/parameters",
                                params={"Bugzilla_api_key": plain_key}).json["parameters"]
    admin = client.simulate_get("/rest/parameters",
                                params={"Bugzilla_api_key": admin_key}).json["parameters"]
    for name in ("blocked_email_domains", "blocked_emails"):
        assert name not in anonymous and name not in plain
        assert admin[name] == ""
    changed = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                  json={"blocked_email_domains": "spam.example"})
    assert changed.status_code == 200
    assert changed.json["parameters"]["blocked_email_domains"]["added"] == "spam.example"
