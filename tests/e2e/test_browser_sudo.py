"""Acting as another user (relogin.cgi's sudo) in a real headless Chromium
against a real server, with the keyboard alone: an administrator (a member
of bz_sudoers) is refused a protected user on the form, then acts as the
plain user, sees the banner on every page and not the bug of a group only
the administrator is in, and ends it with the banner's button; axe-core
finds no violation on the form, the refusal and a page with the banner."""

import pytest

from browser_site import ADMIN, ADMIN_PASSWORD, PLAIN, by, file_bug, keys, sign_in, tab_to
from browser_support import axe_violations, navigate, open_page


pytestmark = pytest.mark.slow

PROTECTED = "protected@example.com"


def type_into(browser, css, text):
    tab_to(browser, css)
    keys(browser, text)


def enter(browser, what, shows=None):
    from selenium.webdriver.common.keys import Keys
    navigate(browser, lambda: keys(browser, Keys.ENTER), what, shows)


def test_act_as_a_plain_user_and_end_it_with_the_keyboard(site, driver):
    site.rest("POST", "/user", {"email": PROTECTED, "password": "protected password 1",
                                "full_name": "Pro Tected"})
    site.rest("PUT", f"/user/{PROTECTED}", {"groups": {"add": ["bz_sudo_protect"]}})
    site.rest("PUT", f"/user/{ADMIN}", {"groups": {"add": ["secret"]}})
    secret = file_bug(site, "Only the security team sees this", groups=["secret"])
    found = {}
    sign_in(driver, site, ADMIN)
    open_page(driver, site.url + f"/show_bug.cgi?id={secret}", "Only the security team")

    open_page(driver, site.url + "/relogin.cgi?action=prepare-sudo", "Begin sudo session")
    found["form"] = axe_violations(driver)
    by(driver, "body").click()          # from here on, only keys
    type_into(driver, "#target_login", PROTECTED)
    type_into(driver, "#reason", "Looking at a report")
    type_into(driver, "#current_password", ADMIN_PASSWORD)
    enter(driver, "the refusal", "may not be impersonated")
    found["refusal"] = axe_violations(driver)
    assert by(driver, "#target_login").get_attribute("value") == PROTECTED
    assert by(driver, "#current_password").get_attribute("value") == ""

    by(driver, "#target_login").clear()
    by(driver, "body").click()
    type_into(driver, "#target_login", PLAIN)
    type_into(driver, "#current_password", ADMIN_PASSWORD)
    enter(driver, "the home page as the plain user", f"You are acting as {PLAIN}")
    found["home, acting"] = axe_violations(driver)
    assert by(driver, ".account .who").text == PLAIN

    open_page(driver, site.url + f"/show_bug.cgi?id={secret}", f"You are acting as {PLAIN}")
    assert "Only the security team" not in driver.page_source
    found["hidden bug, acting"] = axe_violations(driver)

    by(driver, "body").click()
    tab_to(driver, ".sudo button[type=submit]")
    enter(driver, "the end", "You are no longer acting as another user")
    assert by(driver, ".account .who").text == ADMIN
    open_page(driver, site.url + f"/show_bug.cgi?id={secret}", "Only the security team")
    entries = site.rest("GET", "/audit_log", **{"class": "User", "object": PLAIN})["entries"]
    assert [entry.get("added") for entry in entries
            if entry.get("field") == "sudo_session"] == ["ended", "began: Looking at a report"]
    assert {page: issues for page, issues in found.items() if issues} == {}
