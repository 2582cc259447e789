"""Password hashes: scrypt at OWASP's factors (n=2**17, r=8, p=1) for new
hashes, and a stored hash made with lower factors replaced at the account's
next successful sign-in, by every way of signing in. The tests use a small
configured cost (conftest.FAST_COST, and a higher one here) to stay fast."""

import xmlrpc.client

import pytest
from falcon import testing

from bugsvc.accounts import auth
from bugsvc.accounts.auth import ScryptCost
from bugsvc.app import create_app
from bugsvc.config import Config
from conftest import FAST_COST


PASSWORD = "erins password"
CONFIGURED = ScryptCost(n=64, r=2, p=1)


def test_new_hashes_use_owasps_scrypt_factors():
    assert ScryptCost() == ScryptCost(n=2**17, r=8, p=1)
    assert Config().password_cost == ScryptCost(n=2**17, r=8, p=1)
    stored = auth.hash_password("a password")
    assert stored.startswith("scrypt$131072$8$1$")
    assert auth.verify_password("a password", stored)


@pytest.fixture
def erin(services):
    return services.add_user("erin@example.com", password=PASSWORD)      # at FAST_COST


@pytest.fixture
def stronger(config, db):
    """A client of an app whose configured cost is above FAST_COST."""
    config.password_cost = CONFIGURED
    return testing.TestClient(create_app(config, db=db))


def factors(stored):
    """The ScryptCost written in a stored hash ('scrypt$n$r$p$salt$digest')."""
    scheme, n, r, p, _, _ = stored.split("$")
    assert scheme == "scrypt"
    return ScryptCost(int(n), int(r), int(p))


def stored_hash(services, user_id):
    return services.query("SELECT password_hash FROM users WHERE id = ?", (user_id,))[0][0]


def test_a_weaker_hash_is_replaced_at_the_next_successful_login(stronger, services, erin):
    before = stored_hash(services, erin)
    assert factors(before) == FAST_COST
    wrong = stronger.simulate_get("/rest/login", params={"login": "erin@example.com",
                                                         "password": "not it"})
    assert wrong.json["code"] == 300
    assert stored_hash(services, erin) == before               # only a right password upgrades
    ok = stronger.simulate_get("/rest/login", params={"login": "erin@example.com",
                                                      "password": PASSWORD})
    assert ok.status_code == 200
    after = stored_hash(services, erin)
    assert factors(after) == CONFIGURED and PASSWORD not in after
    again = stronger.simulate_get("/rest/login", params={"login": "erin@example.com",
                                                         "password": PASSWORD})
    assert again.status_code == 200
    assert stored_hash(services, erin) == after                # at the cost now: left alone


def test_a_password_given_with_a_call_upgrades_too(stronger, services, erin):
    body = xmlrpc.client.dumps(({"ids": [erin], "Bugzilla_login": "erin@example.com",
                                 "Bugzilla_password": PASSWORD},), "User.get")
    resp = stronger.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    assert xmlrpc.client.loads(resp.content)[0][0]["users"][0]["id"] == erin
    assert factors(stored_hash(services, erin)) == CONFIGURED


def test_no_factor_of_a_stored_hash_is_lowered(stronger, services):
    user_id = services.add_user("finn@example.com")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                     (auth.hash_password(PASSWORD, ScryptCost(n=256, r=1, p=1)), user_id))
    ok = stronger.simulate_get("/rest/login", params={"login": "finn@example.com",
                                                      "password": PASSWORD})
    assert ok.status_code == 200
    assert factors(stored_hash(services, user_id)) == ScryptCost(n=256, r=2, p=1)


def test_the_configured_cost_is_used_for_new_passwords(stronger, services, admin_key):
    created = stronger.simulate_post("/rest/user", params={"Bugzilla_api_key": admin_key},
                                     json={"email": "gina@example.com", "password": PASSWORD})
    assert factors(stored_hash(services, created.json["id"])) == CONFIGURED
