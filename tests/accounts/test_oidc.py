"""Signing in with OpenID Connect providers (oidc_providers,
oidc_create_accounts, User.oidc_authorization and User.login_oidc, the
pages /oidc/login, /oidc/callback and editoidc.cgi), against a real
OpenID provider each test starts on loopback (tests/oidc_server.py:
oidc-provider under Node.js)."""

import json

import pytest

import oidc_server
from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from bugsvc.accounts import oidc
from bugsvc.errors import ServiceError
from bugsvc.services import instance, user
from live_server import free_port
from page_support import Browser, text_of


pytestmark = pytest.mark.skipif(not oidc_server.available(),
                                reason="Node.js and oidc-provider are not installed (.ci/run "
                                       "installs oidc-provider with npm)")

REDIRECT = "http://127.0.0.1:9/oidc/callback"


@pytest.fixture
def provider():
    server = oidc_server.Provider(free_port(), REDIRECT).start()
    yield server
    server.stop()


def configure(services, provider, create="0", **extra):
    set_param(services, "oidc_providers", json.dumps([provider.setting(**extra)]))
    set_param(services, "oidc_create_accounts", create)


def start(services, name="Example ID"):
    return services.call(user.oidc_authorization, {"provider": name, "redirect_uri": REDIRECT})


def finish(services, started, answer, **changed):
    params = {"provider": "Example ID", "code": answer.get("code"), "redirect_uri": REDIRECT,
              "code_verifier": started["code_verifier"], "nonce": started["nonce"], **changed}
    return services.call(user.login_oidc, params)


def sign_in(services, login, **changed):
    started = start(services)
    answer = oidc_server.sign_in_at_provider(started["url"], login)
    assert answer["state"] == started["state"]
    return finish(services, started, answer, **changed)


def test_a_verified_address_is_created_while_allowed(services, provider):
    configure(services, provider, create="1")
    answer = sign_in(services, "alice")
    rows = services.query("SELECT id, login, real_name, password_hash FROM users"
                          " WHERE login = 'alice@example.org'")
    assert rows == [(answer["id"], "alice@example.org", "Alice Provider", None)]
    assert services.query("SELECT source, subject FROM external_logins") == [
        ("oidc:example id", "alice")]
    assert services.query("SELECT class, field FROM audit_log WHERE object_id = ?"
                          " AND class = 'Bugzilla::User'", (answer["id"],)) == [
        ("Bugzilla::User", None)]


def test_an_existing_account_is_matched_by_its_verified_address(services, provider):
    configure(services, provider)
    bob = services.add_user("bob@example.org", password="bob-password", real_name="Bob")
    assert sign_in(services, "bob")["id"] == bob
    assert services.query("SELECT source, subject, user_id FROM external_logins") == [
        ("oidc:example id", "bob", bob)]
    # The account keeps its password and gets the provider's real name.
    [(real_name, password_hash)] = services.query("SELECT real_name, password_hash FROM users"
                                                  " WHERE id = ?", (bob,))
    assert real_name == "Bob Provider" and password_hash is not None


def test_an_account_with_a_second_factor_still_gives_its_code(services, provider):
    """A provider's answer is a first factor like a password: an account
    with a second factor gets no login token until its code is right."""
    from datetime import datetime, timedelta, timezone

    from bugsvc.accounts import second_factor
    from bugsvc.services import second_factor as second_factor_service
    configure(services, provider)
    bob = services.add_user("bob@example.org", password="bob-password", real_name="Bob")
    earlier = datetime.now(timezone.utc) - timedelta(minutes=5)
    with services.db.transaction(write=True) as conn:
        secret = second_factor.begin_enrolment(conn, bob, earlier)
        assert second_factor.confirm_enrolment(
            conn, bob, second_factor.current_code(secret, earlier), earlier) is not None
    answer = sign_in(services, "bob")
    assert set(answer) == {"pending", "enrol"} and answer["enrol"] is False
    assert services.query("SELECT COUNT(*) FROM login_tokens WHERE user_id = ?", (bob,)) == [(0,)]
    with pytest.raises(ServiceError) as refused:
        services.call(second_factor_service.finish_sign_in,
                      {"pending": answer["pending"], "code": "000000"
                       if second_factor.current_code(secret, datetime.now(timezone.utc))
                       != "000000" else "111111"})
    assert refused.value.code == 331
    done = services.call(second_factor_service.finish_sign_in, {
        "pending": answer["pending"],
        "code": second_factor.current_code(secret, datetime.now(timezone.utc))})
    assert done["id"] == bob and done["token"]


def test_no_account_while_creation_is_off_stores_nothing(services, provider):
    configure(services, provider)
    before = services.query("SELECT COUNT(*) FROM users")
    with pytest.raises(ServiceError) as caught:
        sign_in(services, "alice")
    assert caught.value.code == 32000
    assert "No account here has the address alice@example.org" in caught.value.message
    assert services.query("SELECT COUNT(*) FROM users") == before
    assert services.query("SELECT COUNT(*) FROM external_logins") == [(0,)]


def test_an_unverified_address_matches_no_account(services, provider):
    # mallory's provider gives the administrator's address, unverified.
    configure(services, provider, create="1")
    with pytest.raises(ServiceError) as caught:
        sign_in(services, "mallory")
    assert caught.value.code == 32000
    assert "did not say your e-mail address is verified" in caught.value.message
    assert services.query("SELECT COUNT(*) FROM external_logins") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]


def test_a_wrong_nonce_or_a_reused_code_is_refused(services, provider):
    configure(services, provider, create="1")
    started = start(services)
    answer = oidc_server.sign_in_at_provider(started["url"], "alice")
    with pytest.raises(ServiceError) as caught:
        finish(services, started, answer, nonce="another-nonce")
    assert caught.value.code == 32000
    assert "id_token was refused" in caught.value.message
    assert services.query("SELECT COUNT(*) FROM users WHERE login = 'alice@example.org'") == [
        (0,)]
    with pytest.raises(ServiceError) as caught:           # the code was used up
        finish(services, started, answer)
    assert caught.value.code == 32000
    assert "refused the code" in caught.value.message


def test_a_tampered_id_token_is_refused(services, provider, monkeypatch):
    configure(services, provider, create="1")
    seen = {}
    checked = oidc.check_id_token

    def keep(provider_setting, id_token, jwks, nonce, issuer):
        seen.update(provider=provider_setting, id_token=id_token, jwks=jwks, nonce=nonce,
                    issuer=issuer)
        return checked(provider_setting, id_token, jwks, nonce, issuer)

    monkeypatch.setattr(oidc, "check_id_token", keep)
    sign_in(services, "alice")
    header, payload, signature = seen["id_token"].split(".")
    claims = json.loads(oidc_b64decode(payload))
    forged = oidc_b64encode(json.dumps(dict(claims, email="admin@example.com")).encode())
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    for token in (f"{header}.{forged}.{signature}", f"{header}.{payload}.{flipped}",
                  f"{header}.{payload}."):
        with pytest.raises(ServiceError) as caught:
            checked(seen["provider"], token, seen["jwks"], seen["nonce"], seen["issuer"])
        assert caught.value.code == 32000
    # Another client's token (audience) is refused too.
    with pytest.raises(ServiceError):
        checked(dict(seen["provider"], client_id="someone-else"), seen["id_token"],
                seen["jwks"], seen["nonce"], seen["issuer"])


def oidc_b64decode(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def oidc_b64encode(data):
    import base64
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def test_groups_are_granted_from_the_claim(services, provider):
    configure(services, provider, create="1", groups={"devs": "tweakparams",
                                                      "nobody": "editusers"})
    user_id = sign_in(services, "alice")["id"]
    assert services.query("SELECT g.name FROM user_groups ug JOIN groups g"
                          " ON g.id = ug.group_id WHERE ug.user_id = ? AND ug.grant_type = 0",
                          (user_id,)) == [("tweakparams",)]
    assert ("groups", "", "tweakparams") in services.query(
        "SELECT field, removed, added FROM audit_log WHERE object_id = ?", (user_id,))
    assert sign_in(services, "alice")["id"] == user_id        # granted once


def test_admin_granted_from_the_claim_gives_the_system_groups_at_once(services, provider):
    """admin is a member of every system group: the account is a member of
    them through it as soon as the claim makes it an admin."""
    configure(services, provider, create="1", groups={"devs": "admin"})
    user_id = sign_in(services, "alice")["id"]
    held = dict(services.query("SELECT g.name, ug.grant_type FROM user_groups ug JOIN groups g"
                               " ON g.id = ug.group_id WHERE ug.user_id = ? AND ug.is_bless = 0"
                               " AND g.name IN ('admin', 'tweakparams', 'editusers')",
                               (user_id,)))
    assert held == {"admin": 0, "tweakparams": 1, "editusers": 1}


def test_a_disabled_account_is_refused(services, provider):
    configure(services, provider)
    services.add_user("bob@example.org", disabled_text="Gone")
    with pytest.raises(ServiceError) as caught:
        sign_in(services, "bob")
    assert caught.value.code == 301


def test_a_provider_that_is_down_is_a_clear_error(services, provider):
    configure(services, provider)
    provider.stop()
    with pytest.raises(ServiceError) as caught:
        start(services)
    assert caught.value.code == -32000
    assert caught.value.message.startswith("Signing in with Example ID failed: ")
    assert "could not be reached" in caught.value.message


# The parameter --------------------------------------------------------------------------

def test_only_tweakparams_members_set_providers_and_secrets_are_never_shown(
        client, services, admin_key, provider):
    value = json.dumps([provider.setting()])
    services.add_user("plain@example.com", password="plain-password")
    for who, code in ((None, 410), ("plain@example.com", 304)):
        with pytest.raises(ServiceError) as caught:
            services.call(instance.update_parameters, {"oidc_providers": value}, as_user=who)
        assert caught.value.code == code
    answer = services.call(instance.update_parameters, {"oidc_providers": value},
                           as_user=ADMIN)
    assert oidc_server.CLIENT_SECRET not in json.dumps(answer)
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    shown = json.loads(seen["oidc_providers"])
    assert shown[0]["client_secret"] == "********"
    assert oidc_server.CLIENT_SECRET not in str(services.query("SELECT added FROM audit_log"))
    # What was read back, sent back, keeps the stored secret.
    services.call(instance.update_parameters,
                  {"oidc_providers": json.dumps(
                      shown + [dict(shown[0], name="Second", client_secret="two")])},
                  as_user=ADMIN)
    stored = json.loads(services.query("SELECT value FROM params WHERE name = ?",
                                       ("oidc_providers",))[0][0])
    assert stored[0]["client_secret"] == oidc_server.CLIENT_SECRET
    # A mask for a provider that has no stored secret is refused.
    with pytest.raises(ServiceError):
        services.call(instance.update_parameters,
                      {"oidc_providers": json.dumps([dict(shown[0], name="Third")])},
                      as_user=ADMIN)


@pytest.mark.parametrize("issuer", ["http://idp.example.com", "http://10.0.0.1:8080",
                                    "ftp://127.0.0.1", "https://"])
def test_an_http_issuer_off_loopback_is_refused(services, issuer):
    before = services.query("SELECT name, value FROM params ORDER BY name")
    value = json.dumps([{"name": "X", "issuer": issuer, "client_id": "c", "client_secret": "s"}])
    with pytest.raises(ServiceError) as caught:
        services.call(instance.update_parameters, {"oidc_providers": value}, as_user=ADMIN)
    assert caught.value.code == 32000
    assert services.query("SELECT name, value FROM params ORDER BY name") == before


@pytest.mark.parametrize("value", ["{}", "[1]", "not json",
                                   '[{"name": "X", "issuer": "https://a", "client_id": "c"}]'])
def test_values_it_cannot_take_are_refused(services, value):
    with pytest.raises(ServiceError) as caught:
        services.call(instance.update_parameters, {"oidc_providers": value}, as_user=ADMIN)
    assert caught.value.code == 32000


def test_https_and_loopback_issuers_are_accepted(services):
    for issuer in ("https://idp.example.com", "http://127.0.0.1:9000", "http://localhost:1",
                   "http://[::1]:5"):
        value = json.dumps([{"name": "X", "issuer": issuer, "client_id": "c",
                             "client_secret": "s"}])
        services.call(instance.update_parameters, {"oidc_providers": value}, as_user=ADMIN)


# The pages ------------------------------------------------------------------------------------

def page_flow(app, services, provider, login, deny=False):
    """Sign in on the pages: the sign-in page's button, the provider, the
    callback. Returns (the browser, the callback's answer)."""
    set_param(services, "urlbase", "http://127.0.0.1:9/")
    browser = Browser(app)
    page = browser.get("/login")
    assert "Sign in with Example ID" in text_of(page.text)
    started = browser.get("/oidc/login", follow=False, provider="Example ID", target="/query.cgi")
    assert started.status_code == 303
    back = oidc_server.sign_in_at_provider(started.headers["Location"], login, deny=deny)
    return browser, browser.get("/oidc/callback", follow=False, **back)


def test_the_sign_in_page_signs_in_with_a_provider(app, services, provider):
    configure(services, provider, create="1")
    browser, answer = page_flow(app, services, provider, "alice")
    assert answer.status_code == 303 and answer.headers["Location"] == "/query.cgi"
    assert "bugsvc_session" in browser.cookies
    assert "alice@example.org" in browser.get("/").text


def test_a_refusal_at_the_provider_is_a_clear_page(app, services, provider):
    configure(services, provider, create="1")
    browser, answer = page_flow(app, services, provider, "alice", deny=True)
    assert answer.status_code == 401
    assert "Example ID did not sign you in: " in text_of(answer.text)
    assert "access_denied" in answer.text or "End-User aborted" in answer.text
    assert "bugsvc_session" not in browser.cookies


def test_the_callback_takes_only_the_state_its_browser_started(app, services, provider):
    configure(services, provider, create="1")
    set_param(services, "urlbase", "http://127.0.0.1:9/")
    started = Browser(app).get("/oidc/login", follow=False, provider="Example ID")
    back = oidc_server.sign_in_at_provider(started.headers["Location"], "alice")
    other = Browser(app)            # another browser: no flow cookie
    answer = other.get("/oidc/callback", follow=False, **back)
    assert answer.status_code == 400
    assert "not started from this browser" in text_of(answer.text)
    assert "bugsvc_session" not in other.cookies
    assert services.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]


def test_an_unverified_address_is_a_clear_page(app, services, provider):
    configure(services, provider, create="1")
    browser, answer = page_flow(app, services, provider, "mallory")
    assert answer.status_code == 400
    assert "did not say your e-mail address is verified" in text_of(answer.text)
    assert "Traceback" not in answer.text and "bugsvc_session" not in browser.cookies


def test_a_provider_that_is_down_is_a_clear_page(app, services, provider):
    configure(services, provider)
    provider.stop()
    page = Browser(app).get("/oidc/login", follow=False, provider="Example ID")
    assert page.status_code == 400
    assert "Signing in with Example ID failed" in text_of(page.text)


def test_only_tweakparams_members_set_up_providers_on_their_page(app, services, provider):
    services.add_user("plain@example.com", password="plain-password")
    anonymous = Browser(app).get("/editoidc.cgi")
    assert anonymous.status_code == 401 and "Sign in" in anonymous.text
    plain = Browser(app)
    plain.login("plain@example.com", "plain-password")
    assert plain.get("/editoidc.cgi").status_code == 401
    assert "/editoidc.cgi" not in plain.get("/admin.cgi").text
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    assert "/editoidc.cgi" in admin.get("/admin.cgi").text
    admin.get("/editoidc.cgi")
    refused = admin.post("/editoidc.cgi", {"action": "add", "name": "Far", "issuer":
                                           "http://idp.example.com", "client_id": "c",
                                           "client_secret": "s", "groups": ""})
    assert refused.status_code == 400 and "loopback" in text_of(refused.text)
    page = admin.post("/editoidc.cgi", {"action": "add", "name": "Example ID",
                                        "issuer": provider.issuer, "client_id": "bugsvc-test",
                                        "client_secret": oidc_server.CLIENT_SECRET,
                                        "group_claim": "groups", "groups": "devs = tweakparams"})
    assert "Example ID" in page.text and oidc_server.CLIENT_SECRET not in page.text
    stored = json.loads(services.query("SELECT value FROM params WHERE name = ?",
                                       ("oidc_providers",))[0][0])
    assert stored == [provider.setting(group_claim="groups", groups={"devs": "tweakparams"})]
    page = admin.post("/editoidc.cgi", {"action": "remove", "name": "Example ID"})
    assert services.query("SELECT value FROM params WHERE name = ?",
                          ("oidc_providers",)) == [("",)]
