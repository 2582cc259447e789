"""Signing in through a directory and through an OpenID provider in a real
headless Chromium against a real server: the sign-in form checked against
slapd (tests/ldap_server.py), and "Sign in with ..." through
oidc-provider's own sign-in and consent pages (tests/oidc_server.py),
Chromium following every redirect."""

import json

import pytest

import ldap_server
import oidc_server
from browser_site import by
from browser_support import gone, open_page, wait_for, wait_for_page
from live_server import free_port


pytestmark = pytest.mark.slow


def test_the_sign_in_form_checks_the_password_with_the_directory(site, driver, tmp_path):
    if not ldap_server.available():
        pytest.skip("Debian's slapd is not installed (.ci/run installs slapd)")
    directory = ldap_server.Directory(tmp_path / "slapd").start()
    try:
        site.rest("PUT", "/parameters", {
            "user_verify_class": "LDAP,DB", "LDAPBaseDN": ldap_server.BASE_DN,
            "LDAPserver": f"ldap://127.0.0.1:{directory.ldap_port}"})
        driver.delete_all_cookies()
        open_page(driver, site.url + "/login")
        by(driver, "#Bugzilla_login").send_keys("ada")
        by(driver, "#Bugzilla_password").send_keys("wrong")
        submit(driver, "form.stacked button[type=submit]", "the refusal",
               "The username or password you entered is not valid.")
        by(driver, "#Bugzilla_login").clear()
        by(driver, "#Bugzilla_login").send_keys("ada")
        by(driver, "#Bugzilla_password").send_keys("ada-secret")
        submit(driver, "form.stacked button[type=submit]", "Ada's home page", "My work")
        assert "ada@example.com" in driver.page_source
    finally:
        site.rest("PUT", "/parameters", {"user_verify_class": "DB", "LDAPserver": ""})
        directory.stop()
        driver.delete_all_cookies()


def test_sign_in_with_an_openid_provider(site, driver):
    if not oidc_server.available():
        pytest.skip("Node.js and oidc-provider are not installed (.ci/run installs them)")
    provider = oidc_server.Provider(free_port(), site.url + "/oidc/callback").start()
    try:
        site.rest("PUT", "/parameters", {"oidc_create_accounts": "1", "oidc_providers":
                                         json.dumps([provider.setting()])})
        driver.delete_all_cookies()
        open_page(driver, site.url + "/login", shows="Sign in with Example ID")
        leave(driver, "a[href^='/oidc/login']", "the provider's sign-in page",
              lambda d: d.find_elements("name", "login"))
        by(driver, "input[name=login]").send_keys("alice")
        by(driver, "input[name=password]").send_keys("anything")
        leave(driver, "button[type=submit]", "the provider's consent page",
              lambda d: "Continue" in d.page_source and not d.find_elements("name", "login"))
        submit(driver, "button[type=submit]", "the home page after the provider",
               "alice@example.org")
        assert "My work" in driver.page_source
        account = site.rest("GET", "/user", names="alice@example.org")["users"][0]
        assert account["real_name"] == "Alice Provider"
    finally:
        site.rest("PUT", "/parameters", {"oidc_create_accounts": "0", "oidc_providers": ""})
        provider.stop()
        driver.delete_all_cookies()


def leave(driver, css, what, arrived):
    """Click `css` and wait for another site's page (the provider's, which
    has none of ours' layout) for which `arrived(driver)` is true."""
    from selenium.webdriver.common.by import By
    before = driver.find_element(By.TAG_NAME, "html")
    by(driver, css).click()
    wait_for(driver, lambda d: gone(before) and d.execute_script(
        "return document.readyState === 'complete'") and arrived(d), what)


def submit(driver, css, what, shows):
    """Click `css` and wait for one of our pages showing `shows`."""
    from selenium.webdriver.common.by import By
    before = driver.find_element(By.TAG_NAME, "html")
    by(driver, css).click()
    wait_for(driver, lambda _: gone(before), f"the page to leave for {what}")
    wait_for_page(driver, what, shows)
