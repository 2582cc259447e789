"""Signing in against an LDAP directory (user_verify_class, the LDAP*
parameters), against a real OpenLDAP server (Debian's slapd) each test
starts on loopback (tests/ldap_server.py): accounts made and kept up to
date from the directory, checkers tried in order, throttling, API keys,
TLS with certificates checked, a directory that is down, and who may set
the parameters."""

import socket
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

import ldap_server
from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from bugsvc.accounts import auth, directory
from bugsvc.errors import ServiceError
from bugsvc.services import instance
from live_server import free_port
from page_support import Browser, text_of
from rpc_support import xmlrpc_call


pytestmark = pytest.mark.skipif(not ldap_server.available(),
                                reason="Debian's slapd is not installed (apt-get install slapd "
                                       "ldap-utils; .ci/run installs them)")


@pytest.fixture
def slapd(tmp_path, monkeypatch):
    """A running directory whose certificates this process trusts."""
    server = ldap_server.Directory(tmp_path / "slapd").start()
    monkeypatch.setenv("SSL_CERT_FILE", server.ca_file)
    yield server
    server.stop()


def use_directory(services, server, classes="LDAP,DB", url=None, starttls="0"):
    for name, value in (("user_verify_class", classes),
                        ("LDAPserver", url or f"ldap://localhost:{server.ldap_port}"),
                        ("LDAPstarttls", starttls), ("LDAPBaseDN", ldap_server.BASE_DN)):
        set_param(services, name, value)


@pytest.fixture
def ldap(services, slapd):
    use_directory(services, slapd)
    return slapd


def login(client, name, password, remote_addr="127.0.0.1"):
    return client.simulate_get("/rest/login", params={"login": name, "password": password},
                               remote_addr=remote_addr)


def account(services, login_name):
    rows = services.query("SELECT id, login, real_name, password_hash FROM users"
                          " WHERE lower(login) = lower(?)", (login_name,))
    return rows[0] if rows else None


def user_count(services):
    return services.query("SELECT COUNT(*) FROM users")[0][0]


def modify(server, ldif):
    subprocess.run(["ldapmodify", "-x", "-H", f"ldap://127.0.0.1:{server.ldap_port}",
                    "-D", ldap_server.ROOT_DN, "-w", ldap_server.ROOT_PASSWORD],
                   input=ldif, text=True, check=True, capture_output=True, timeout=30)


# Accounts from the directory --------------------------------------------------------

def test_first_sign_in_creates_the_account_without_a_password(client, services, ldap):
    resp = login(client, "ada", "ada-secret")
    assert resp.status_code == 200, resp.json
    user_id, login_name, real_name, password_hash = account(services, "ada@example.com")
    assert (resp.json["id"], login_name, real_name, password_hash) == (
        user_id, "ada@example.com", "Ada L.", None)
    assert services.query("SELECT source, subject, user_id FROM external_logins") == [
        ("LDAP", "ada", user_id)]
    # Created as any account, recorded in the audit log (by nobody signed in).
    assert services.query("SELECT user_id, class, object_id, field FROM audit_log"
                          " WHERE object_id = ? AND class = 'Bugzilla::User'", (user_id,)) == [
        (None, "Bugzilla::User", user_id, None)]
    whoami = client.simulate_get("/rest/whoami", params={"token": resp.json["token"]}).json
    assert (whoami["id"], whoami["name"], whoami["real_name"]) == (
        user_id, "ada@example.com", "Ada L.")
    # The next sign-in finds the same account.
    assert login(client, "ada", "ada-secret").json["id"] == user_id
    assert user_count(services) == 2


def test_the_account_follows_the_directory_at_each_sign_in(client, services, ldap):
    user_id = login(client, "bob", "bob-secret").json["id"]
    modify(ldap, "dn: uid=bob,ou=people,dc=example,dc=com\nchangetype: modify\n"
                 "replace: mail\nmail: robert@example.com\n-\nreplace: cn\ncn: Robert B.\n")
    assert login(client, "bob", "bob-secret").json["id"] == user_id
    assert account(services, "robert@example.com")[:3] == (
        user_id, "robert@example.com", "Robert B.")
    assert account(services, "bob@example.com") is None
    assert ("email", "bob@example.com", "robert@example.com") in services.query(
        "SELECT field, removed, added FROM audit_log WHERE object_id = ?", (user_id,))


def test_an_account_with_the_directorys_address_is_linked(client, services, ldap):
    existing = services.add_user("ada@example.com", password="database-secret",
                                 real_name="Ada")
    assert login(client, "ada", "ada-secret").json["id"] == existing
    assert services.query("SELECT user_id FROM external_logins") == [(existing,)]
    # Its stored password is the database checker's, as before.
    assert login(client, "ada@example.com", "database-secret").json["id"] == existing


def test_of_several_addresses_the_one_an_account_has_is_the_login(client, services, ldap):
    modify(ldap, "dn: uid=bob,ou=people,dc=example,dc=com\nchangetype: modify\n"
                 "add: mail\nmail: builder@example.com\n")
    existing = services.add_user("builder@example.com")
    assert login(client, "bob", "bob-secret").json["id"] == existing
    assert account(services, "bob@example.com") is None


def test_wrong_unknown_ambiguous_or_empty_is_300_and_stores_nothing(client, services, ldap):
    before = user_count(services)
    for name, password in (("ada", "wrong"), ("nobody", "x"), ("twin", "twin-secret"),
                           ("ada", ""), ("", "ada-secret"), ("ada*", "ada-secret"),
                           ("ada)(uid=*", "ada-secret")):
        resp = login(client, name, password, remote_addr="10.0.0.9")
        assert (resp.status_code, resp.json["code"]) == (401, 300), (name, resp.json)
    assert user_count(services) == before
    assert services.query("SELECT COUNT(*) FROM external_logins") == [(0,)]


def test_an_entry_without_the_mail_attribute_is_the_directorys_error(client, services, ldap):
    # The reference's stack: the next checker is tried, and the last one's
    # answer is the answer.
    assert login(client, "nomail", "nomail-secret").json["code"] == 300
    set_param(services, "user_verify_class", "LDAP")
    resp = login(client, "nomail", "nomail-secret")
    assert resp.json["code"] == -32000
    assert "The LDAP attribute 'mail' was not found." in resp.json["message"]
    # Without a mail attribute, the name signed in with is the login (which
    # must then be acceptable here).
    set_param(services, "LDAPmailattribute", "")
    set_param(services, "emailregexp", r"^[a-z]+$")
    resp = login(client, "nomail", "nomail-secret")
    assert resp.status_code == 200, resp.json
    assert account(services, "nomail")[1:3] == ("nomail", "No Mail")


def test_a_disabled_account_stays_disabled(client, services, ldap):
    user_id = login(client, "ada", "ada-secret").json["id"]
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'Gone' WHERE id = ?", (user_id,))
    resp = login(client, "ada", "ada-secret")
    assert (resp.status_code, resp.json["code"]) == (401, 301)


# Checkers in order ----------------------------------------------------------------

def test_checkers_are_tried_in_the_order_given(client, services, slapd):
    services.add_user("alice@example.com", password="alice-secret")
    use_directory(services, slapd, classes="LDAP,DB")
    assert login(client, "alice@example.com", "alice-secret").status_code == 200
    assert login(client, "ada", "ada-secret").status_code == 200
    use_directory(services, slapd, classes="LDAP")
    assert login(client, "alice@example.com", "alice-secret").json["code"] == 300
    assert login(client, "ada", "ada-secret").status_code == 200
    use_directory(services, slapd, classes="DB")
    assert login(client, "ada", "ada-secret").json["code"] == 300
    assert login(client, "alice@example.com", "alice-secret").status_code == 200


def test_directory_accounts_have_no_database_password(client, services, ldap):
    login(client, "ada", "ada-secret")
    use_directory(services, ldap, classes="DB")
    for password in ("", "ada-secret", "*"):
        assert login(client, "ada@example.com", password).json["code"] == 300


def test_no_password_is_set_or_reset_here_for_a_directory_account(client, services, ldap):
    """The directory keeps the password: one set here would let someone
    removed from the directory sign in with it (while DB is a checker)."""
    from datetime import datetime, timezone

    from bugsvc.accounts import tokens
    from bugsvc.errors import ServiceError
    from bugsvc.services import account as account_service, user as user_service
    user_id = login(client, "ada", "ada-secret").json["id"]
    with pytest.raises(ServiceError) as refused:
        services.call(user_service.update_self, {"password": "a-new-secret-9",
                                                 "current_password": "ada-secret"},
                      as_user=user_id)
    assert refused.value.code == 32000 and "directory" in refused.value.message
    outbox_before = services.query("SELECT COUNT(*) FROM outbox_messages")
    assert services.call(account_service.request_password_reset,
                         {"login": "ada@example.com"}) is None
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == outbox_before  # none mailed
    with services.db.transaction(write=True) as conn:      # a link mailed before it was linked
        secret = tokens.issue(conn, tokens.PASSWORD, datetime.now(timezone.utc), user_id=user_id)
    with pytest.raises(ServiceError) as refused:
        services.call(account_service.reset_password, {"reset_token": secret,
                                                       "password": "a-new-secret-9"})
    assert refused.value.code == 32000 and "directory" in refused.value.message
    assert account(services, "ada@example.com")[3] is None
    # A database account still resets its password (the admin's, here).
    services.call(account_service.request_password_reset, {"login": "admin@example.com"})
    assert services.query("SELECT COUNT(*) FROM outbox_messages")[0][0] == outbox_before[0][0] + 1


# Every way in, API keys, throttling ---------------------------------------------------

def test_every_way_in_signs_in_through_the_directory(client, services, ldap):
    answer, code = xmlrpc_call(client, "User.login", {"login": "ada", "password": "ada-secret"})
    assert code is None, answer
    user_id = answer["id"]
    # Credentials given with a call sign that call in.
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_login": "ada",
                                                       "Bugzilla_password": "ada-secret"})
    assert resp.json["id"] == user_id
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_login": "ada",
                                                       "Bugzilla_password": "wrong"})
    assert (resp.status_code, resp.json["code"]) == (401, 300)
    # An API key of the account works, whatever the directory says.
    key = services.api_key("ada@example.com")
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key})
    assert resp.json["id"] == user_id
    slapd_stopped = ldap
    slapd_stopped.stop()
    resp = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key})
    assert resp.json["id"] == user_id


def test_wrong_directory_passwords_are_throttled_like_others(client, services, ldap):
    now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    for _ in range(auth.FREE_FAILURES):
        with pytest.raises(ServiceError) as caught:
            services.auth.check_password("bob", "wrong", "10.0.0.1", now)
        assert caught.value.code == 300
    with pytest.raises(ServiceError) as caught:
        services.auth.check_password("bob", "bob-secret", "10.0.0.1", now)
    assert caught.value.code == 32000
    assert "Too many failed sign-in attempts" in caught.value.message
    # Once the wait is over, the right password works and clears the count.
    later = now + timedelta(seconds=auth.FIRST_DELAY_SECONDS)
    assert services.auth.check_password("bob", "bob-secret", "10.0.0.1", later)
    assert services.query("SELECT COUNT(*) FROM login_throttle") == [(0,)]


# TLS ----------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["ldaps", "starttls"])
def test_tls_with_a_trusted_certificate_signs_in(client, services, slapd, how):
    if how == "ldaps":
        use_directory(services, slapd, url=f"ldaps://localhost:{slapd.ldaps_port}")
    else:
        use_directory(services, slapd, starttls="1")
    assert login(client, "ada", "ada-secret").status_code == 200


@pytest.mark.parametrize("how", ["ldaps", "starttls"])
def test_an_untrusted_certificate_is_refused(client, services, slapd, monkeypatch, how):
    monkeypatch.setenv("SSL_CERT_FILE", slapd.other_ca_file)
    if how == "ldaps":
        use_directory(services, slapd, url=f"ldaps://localhost:{slapd.ldaps_port}")
    else:
        use_directory(services, slapd, starttls="1")
    before = user_count(services)
    resp = login(client, "ada", "ada-secret")
    assert (resp.status_code, resp.json["code"]) == (400, -32000)
    assert "CERTIFICATE_VERIFY_FAILED" in resp.json["message"]
    assert user_count(services) == before


# A directory that is down or silent -----------------------------------------------------

def test_servers_are_tried_in_turn(client, services, slapd):
    dead = free_port()
    use_directory(services, slapd, url=f"localhost:{dead}, ldap://localhost:{slapd.ldap_port}")
    assert login(client, "ada", "ada-secret").status_code == 200


def test_a_directory_that_is_down_is_a_clear_error(client, services, slapd):
    dead = free_port()
    use_directory(services, slapd, url=f"ldap://localhost:{dead}")
    before = user_count(services)
    resp = login(client, "ada", "ada-secret")
    assert (resp.status_code, resp.json["code"]) == (400, -32000)
    assert resp.json["message"].startswith("Could not connect to the LDAP server(s) localhost")
    assert "Traceback" not in resp.json["message"]
    # As in the reference, the checkers after it are not tried.
    services.add_user("alice@example.com", password="alice-secret")
    assert login(client, "alice@example.com", "alice-secret").json["code"] == -32000
    assert user_count(services) == before + 1


def test_a_silent_directory_answers_within_the_timeout(client, services, slapd, monkeypatch):
    monkeypatch.setattr(directory, "TIMEOUT_SECONDS", 1)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)            # connections complete, nothing ever answers
        use_directory(services, slapd, url=f"ldap://127.0.0.1:{silent.getsockname()[1]}")
        resp = login(client, "ada", "ada-secret")
    assert resp.json["code"] == -32000
    assert "LDAP server" in resp.json["message"]


def test_a_refused_search_account_is_a_clear_error(client, services, ldap):
    set_param(services, "LDAPbinddn", f"{ldap_server.ROOT_DN}:wrong")
    resp = login(client, "ada", "ada-secret")
    assert resp.json == {"error": True, "code": -32000, "documentation": resp.json["documentation"],
                         "message": "Failed to bind to the LDAP server: invalidCredentials."}
    set_param(services, "LDAPbinddn", f"{ldap_server.ROOT_DN}:{ldap_server.ROOT_PASSWORD}")
    assert login(client, "ada", "ada-secret").status_code == 200


# The parameters ---------------------------------------------------------------------------

LDAP_PARAMETERS = {"user_verify_class": "DB", "LDAPserver": "", "LDAPstarttls": "0",
                   "LDAPbinddn": "", "LDAPBaseDN": "", "LDAPuidattribute": "uid",
                   "LDAPmailattribute": "mail", "LDAPfilter": ""}


def test_only_tweakparams_members_see_and_set_them(client, services, admin_key):
    services.add_user("plain@example.com", password="plain-password")
    plain_key = services.api_key("plain@example.com")
    for params in ({}, {"Bugzilla_api_key": plain_key}):
        seen = client.simulate_get("/rest/parameters", params=params).json["parameters"]
        assert not set(LDAP_PARAMETERS) & set(seen)
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert {name: seen[name] for name in LDAP_PARAMETERS} == LDAP_PARAMETERS
    for who, code in ((None, 410), ("plain@example.com", 304)):
        with pytest.raises(ServiceError) as caught:
            services.call(instance.update_parameters, {"user_verify_class": "LDAP"},
                          as_user=who)
        assert caught.value.code == code
    answer = services.call(instance.update_parameters,
                           {"user_verify_class": "LDAP, DB", "LDAPbinddn": "cn=s,dc=x:pw",
                            "LDAPserver": "ldaps://ldap1.example.com, ldap2.example.com:389"},
                           as_user=ADMIN)
    assert answer["parameters"]["user_verify_class"] == {"added": "LDAP,DB", "removed": "DB"}
    # The search account's password is never shown back, nor logged.
    assert answer["parameters"]["LDAPbinddn"] == {"added": "********", "removed": ""}
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert seen["LDAPbinddn"] == "********"
    assert "pw" not in str(services.query("SELECT removed, added FROM audit_log"))


@pytest.mark.parametrize("name, value", [
    ("user_verify_class", "RADIUS"), ("user_verify_class", ""),
    ("user_verify_class", "DB,DB"), ("LDAPserver", "ldapi://%2fvar%2frun"),
    ("LDAPserver", "ldap://host:99999"), ("LDAPserver", "http://ldap.example.com/")])
def test_values_they_cannot_take_are_refused(services, name, value):
    before = services.query("SELECT name, value FROM params ORDER BY name")
    with pytest.raises(ServiceError) as caught:
        services.call(instance.update_parameters, {name: value}, as_user=ADMIN)
    assert caught.value.code == 32000
    assert services.query("SELECT name, value FROM params ORDER BY name") == before


# The web pages ------------------------------------------------------------------------------

def test_the_sign_in_page_signs_in_through_the_directory(app, services, ldap):
    browser = Browser(app)
    browser.login("ada", "ada-secret")
    assert "ada@example.com" in browser.get("/").text
    browser = Browser(app)
    browser.get("/login")
    page = browser.post("/login", {"Bugzilla_login": "ada", "Bugzilla_password": "wrong",
                                   "target": "/"})
    assert page.status_code == 401
    assert "The username or password you entered is not valid." in text_of(page.text)


def test_the_sign_in_page_says_when_the_directory_is_down(app, services, slapd):
    use_directory(services, slapd, url=f"ldap://localhost:{free_port()}")
    browser = Browser(app)
    browser.get("/login")
    page = browser.post("/login", {"Bugzilla_login": "ada", "Bugzilla_password": "ada-secret",
                                   "target": "/"})
    assert page.status_code == 401
    assert "Could not connect to the LDAP server(s) localhost" in text_of(page.text)
    assert "Traceback" not in page.text and "bugsvc_session" not in browser.cookies


def test_only_tweakparams_members_reach_the_ldap_settings_page(app, services):
    services.add_user("plain@example.com", password="plain-password")
    anonymous = Browser(app)
    assert "LDAPserver" not in anonymous.get("/editparams.cgi", section="ldap").text
    plain = Browser(app)
    plain.login("plain@example.com", "plain-password")
    page = plain.get("/editparams.cgi", section="ldap")
    assert page.status_code == 401 and "LDAPserver" not in page.text
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    admin.get("/editparams.cgi", section="ldap")
    admin.post("/editparams.cgi", {"section": "ldap",
                                   "param-LDAPserver": "ldaps://ldap.example.com",
                                   "param-LDAPbinddn": "cn=bugs,dc=example,dc=com:s3cr3t-pw"})
    assert services.query("SELECT value FROM params WHERE name IN ('LDAPserver', 'LDAPbinddn')"
                          " ORDER BY name") == [("cn=bugs,dc=example,dc=com:s3cr3t-pw",),
                                                ("ldaps://ldap.example.com",)]
    page = admin.get("/editparams.cgi", section="ldap")
    assert "ldaps://ldap.example.com" in page.text and "s3cr3t-pw" not in page.text
