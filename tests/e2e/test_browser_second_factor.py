"""Two-factor sign-in in a real headless Chromium against a real server:
setting it up in the preferences (the secret read from the page, the code
computed with pyotp), signing out, signing in again with a wrong code first
and then the right one, with the keyboard alone; axe-core finds no
violation on the set-up page, the recovery codes and the second step.

The server runs in its own process on the real clock, so the codes are
computed with pyotp's at(time): the code of the step after the current one
(accepted for clock drift) signs in right after the set-up used the
current step's code, with no waiting."""

import time

import pyotp
import pytest

from browser_site import ADMIN, by, keys, sign_in, tab_to
from browser_support import axe_violations, navigate, open_page, wait_for


pytestmark = pytest.mark.slow

LOGIN, PASSWORD = "two.factor@example.com", "two factor password 1"


def enter(browser, what, shows=None):
    from selenium.webdriver.common.keys import Keys
    navigate(browser, lambda: keys(browser, Keys.ENTER), what, shows)


def sign_in_with_keys(browser, url):
    browser.delete_all_cookies()
    open_page(browser, url + "/login")
    by(browser, "body").click()          # from here on, only keys
    tab_to(browser, "#Bugzilla_login")
    keys(browser, LOGIN)
    tab_to(browser, "#Bugzilla_password")
    keys(browser, PASSWORD)
    enter(browser, "the second step", "Two-factor sign-in")


def test_set_up_sign_out_and_sign_in_with_a_wrong_code_first(site, driver):
    user_id = site.rest("POST", "/user", {"email": LOGIN, "password": PASSWORD,
                                          "full_name": "Tove Factor"})["id"]
    found = {}
    driver.delete_all_cookies()
    open_page(driver, site.url + "/login")
    by(driver, "#Bugzilla_login").send_keys(LOGIN)
    by(driver, "#Bugzilla_password").send_keys(PASSWORD)
    navigate(driver, by(driver, "form.stacked button[type=submit]").click, "the home page",
             "My work")

    # Set it up with the keyboard: the secret read from the page, the
    # code computed from it.
    open_page(driver, site.url + "/userprefs.cgi?tab=mfa", "Two-factor sign-in is off")
    found["preferences, off"] = axe_violations(driver)
    by(driver, "body").click()
    tab_to(driver, "#main form button[type=submit]")
    enter(driver, "the set-up", "otpauth://totp/")
    found["preferences, set-up"] = axe_violations(driver)
    secret = by(driver, "#totp-secret").text
    assert by(driver, "figure.qr-code svg").is_displayed()
    tab_to(driver, "#code")
    keys(driver, pyotp.TOTP(secret).now())
    enter(driver, "the recovery codes", "shown only this once")
    found["preferences, recovery codes"] = axe_violations(driver)
    assert len(driver.find_elements("css selector", "#recovery-codes li")) == 10

    # Sign out with the page's button.
    open_page(driver, site.url + "/logout")
    navigate(driver, by(driver, "#main form button[type=submit]").click, "signed out",
             "You are signed out.")

    # The password alone leads to the second step, where a wrong code is
    # refused and the right one signs in.
    sign_in_with_keys(driver, site.url)
    found["second step"] = axe_violations(driver)
    assert driver.switch_to.active_element == by(driver, "#code")     # autofocus
    right = pyotp.TOTP(secret).at(time.time() + 30)
    keys(driver, f"{(int(right) + 1) % 1000000:06d}")
    enter(driver, "the refusal", "wrong, expired or used already")
    wait_for(driver, lambda d: by(d, "p.error[role=alert]").is_displayed(), "the error")
    found["second step, wrong code"] = axe_violations(driver)
    tab_to(driver, "#code")
    keys(driver, pyotp.TOTP(secret).at(time.time() + 30))
    enter(driver, "the home page", "My work")
    assert LOGIN in driver.page_source

    # An administrator resets it (a lost phone); the audit log says so.
    sign_in(driver, site, ADMIN)
    open_page(driver, site.url + f"/editusers.cgi?action=edit&userid={user_id}",
              "Reset two-factor sign-in")
    found["user page, two-factor on"] = axe_violations(driver)
    navigate(driver, by(driver, "#second-factor ~ form button[type=submit]").click,
             "the reset", "two-factor sign-in has been reset")
    entries = site.rest("GET", "/audit_log", **{"class": "User", "object": LOGIN})["entries"]
    assert any(entry.get("field") == "second_factor" and entry.get("object_id") == user_id
               for entry in entries), entries
    assert {page: issues for page, issues in found.items() if issues} == {}
