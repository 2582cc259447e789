"""The pages in a real headless Chromium against a real bugsvc server on a
free loopback port: signing in, filing a bug with an attachment, commenting,
changing the status, a mid-air collision, a search saved and run again, a
private comment seen by an insider and not by a plain user, a restricted bug
a plain user cannot reach by link, filing a bug with the keyboard alone,
and axe-core on every page with zero violations."""

import json

import pytest

from browser_site import (
    ADMIN,
    INSIDER,
    PLAIN,
    PLAIN_PASSWORD,
    all_of,
    bug_of,
    by,
    check_every_state,
    choose,
    click_and_wait,
    every_page,
    file_bug,
    sign_in,
    sign_out,
)
from browser_support import axe_violations, navigate, new_driver, open_page, wait_for


pytestmark = pytest.mark.slow


def test_sign_in_file_a_bug_with_an_attachment_comment_and_resolve_it(site, driver, tmp_path):
    sign_in(driver, site, PLAIN)
    click_and_wait(driver, 'nav a[href="/enter_bug.cgi"]', "the new bug form",
                   "File a bug in TestProduct")
    by(driver, "#summary").send_keys("Export loses the last row")
    by(driver, "#description").send_keys("Export 10 rows; the file has 9.")
    choose(driver, "#severity", "major")
    log = tmp_path / "export.log"
    log.write_text("row 10 dropped\n")
    by(driver, "#data").send_keys(str(log))
    by(driver, "#attachment_description").send_keys("The export log")
    click_and_wait(driver, "form.form-grid button[type=submit]", "the new bug's page",
                   "The bug has been filed.")
    bug_id = int(by(driver, "h1 .bug-id").text.split()[1])
    bug = bug_of(site, bug_id)
    assert (bug["summary"], bug["severity"], bug["creator"]) == (
        "Export loses the last row", "major", PLAIN)
    assert "The export log" in driver.page_source
    attachment = site.rest("GET", f"/bug/{bug_id}/attachment", exclude_fields="data")
    assert [a["file_name"] for a in attachment["bugs"][str(bug_id)]] == ["export.log"]
    # A comment, then the status as the administrator (a plain reporter may only close it).
    by(driver, "#comment").send_keys("Still happens on 2.1.")
    click_and_wait(driver, "#bottom button[type=submit]", "the comment", "Still happens on 2.1.")
    sign_in(driver, site, ADMIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    choose(driver, "#bug_status", "RESOLVED")
    choose(driver, "#resolution", "FIXED")
    by(driver, "#comment").send_keys("Fixed in 2.2.")
    click_and_wait(driver, "#bottom button[type=submit]", "the saved change",
                   "Your changes have been saved.")
    bug = bug_of(site, bug_id)
    assert (bug["status"], bug["resolution"]) == ("RESOLVED", "FIXED")


def test_the_resolution_shows_only_for_a_closed_status_with_the_script(site, driver):
    bug_id = file_bug(site, "Script check")
    sign_in(driver, site, ADMIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    assert not by(driver, "#resolution").is_displayed()
    choose(driver, "#bug_status", "RESOLVED")
    wait_for(driver, lambda d: by(d, "#resolution").is_displayed(), "the resolution to show")


def test_a_mid_air_collision_is_shown_then_submitted_anyway(site, driver):
    bug_id = file_bug(site, "Collision course")
    sign_in(driver, site, ADMIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    # Someone else changes the bug while the page is open.
    site.rest("PUT", f"/bug/{bug_id}",
              {"priority": "Highest", "comment": {"body": "Meanwhile: raising it"}})
    summary = by(driver, "#summary")
    summary.clear()
    summary.send_keys("Collision course, corrected")
    by(driver, "#comment").send_keys("My take")
    click_and_wait(driver, "#bottom button[type=submit]", "the collision page", "Mid-air collision")
    page = driver.page_source
    assert "Meanwhile: raising it" in page and "Highest" in page
    assert bug_of(site, bug_id)["summary"] == "Collision course"
    click_and_wait(driver, "#midair button[type=submit]", "the saved change",
                   "Your changes have been saved.")
    bug = bug_of(site, bug_id)
    assert (bug["summary"], bug["priority"]) == ("Collision course, corrected", "Highest")


def test_a_search_is_saved_and_run_again(site, driver):
    for n in range(3):
        file_bug(site, f"Gadget {n} squeaks")
    sign_in(driver, site, PLAIN)
    click_and_wait(driver, 'nav a[href="/query.cgi"]', "the search form")
    by(driver, "#short_desc").send_keys("Gadget squeaks")
    click_and_wait(driver, "form.search-form button[type=submit]", "the bug list", "3 bugs found.")
    by(driver, "#newqueryname").send_keys("Squeaky gadgets")
    click_and_wait(driver, "form.save-search button[type=submit]", "the saved search",
                   "The search has been saved.")
    open_page(driver, site.url + "/")
    click_and_wait(driver, "nav.saved a", "the saved search's list", "3 bugs found.")
    assert "Gadget 2 squeaks" in driver.page_source


def test_a_private_comment_is_seen_by_insiders_only(site, driver):
    bug_id = file_bug(site, "Customer escalation")
    sign_in(driver, site, INSIDER)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    by(driver, "#comment").send_keys("The customer is ACME Corp.")
    by(driver, "#comment_is_private").click()
    click_and_wait(driver, "#bottom button[type=submit]", "the comment",
                   "Your changes have been saved.")
    assert "The customer is ACME Corp." in driver.page_source
    sign_in(driver, site, PLAIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    assert "Customer escalation" in driver.page_source
    assert "ACME" not in driver.page_source
    sign_out(driver, site)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    assert "ACME" not in driver.page_source


def test_a_restricted_bug_cannot_be_reached_by_link(site, driver):
    bug_id = file_bug(site, "Password leak in the logs", groups=["secret"])
    sign_in(driver, site, PLAIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    assert "Password leak" not in driver.page_source
    assert "You are not authorized to access bug" in driver.page_source
    open_page(driver, f"{site.url}/buglist.cgi?quicksearch=Password+leak")
    assert "0 bugs found." in driver.page_source
    assert "Password leak in the logs" not in driver.page_source
    sign_in(driver, site, ADMIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    assert "Password leak in the logs" in driver.page_source


def test_a_bug_is_filed_with_the_keyboard_alone(site, driver):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    def keys(*typed):
        ActionChains(driver).send_keys(*typed).perform()
    driver.delete_all_cookies()
    open_page(driver, site.url + "/login")
    body = by(driver, "body")
    body.click()        # the page has the focus; from here on, only keys

    def tab_to(css, limit=80):
        target = by(driver, css)
        for _ in range(limit):
            keys(Keys.TAB)
            if driver.switch_to.active_element == target:
                style = driver.execute_script(
                    "var s = getComputedStyle(document.activeElement);"
                    "return [s.outlineStyle, s.outlineWidth];")
                assert style[0] != "none" and style[1] != "0px", f"no visible focus on {css}"
                return target
        raise AssertionError(f"{css} cannot be reached with the Tab key")

    tab_to("#Bugzilla_login")
    keys(PLAIN)
    tab_to("#Bugzilla_password")
    keys(PLAIN_PASSWORD)
    navigate(driver, lambda: keys(Keys.ENTER), "the home page", "My work")
    tab_to('nav a[href="/enter_bug.cgi"]')
    navigate(driver, lambda: keys(Keys.ENTER), "the form", "File a bug in TestProduct")
    tab_to("#summary")
    keys("Typed without a mouse")
    tab_to("#description")
    keys("Every step with the keyboard.")
    tab_to("#severity")
    keys("critical")        # typing picks the option, as in a select list
    tab_to("form.form-grid button[type=submit]")
    navigate(driver, lambda: keys(Keys.ENTER), "the new bug", "The bug has been filed.")
    bug_id = int(by(driver, "h1 .bug-id").text.split()[1])
    bug = bug_of(site, bug_id)
    assert (bug["summary"], bug["severity"]) == ("Typed without a mouse", "critical")


def test_axe_finds_no_violation_on_any_page(site, driver):
    bug_id, anonymous, signed_in = every_page(site)
    found = {}
    sign_out(driver, site)
    for path in anonymous:
        open_page(driver, site.url + path)
        found["anonymous " + path] = axe_violations(driver)
        if "a=cfmpw" in path and "t=x" not in path:
            assert 'name="matchpassword"' in driver.page_source     # a working link's form
    # The answers to the forgotten-password and new-account forms.
    open_page(driver, site.url + "/login")
    by(driver, "#loginname").send_keys(PLAIN)
    navigate(driver, by(driver, "#loginname").submit, "the reset notice", "Check your mail")
    found["anonymous reset mailed"] = axe_violations(driver)
    open_page(driver, site.url + "/createaccount.cgi")
    by(driver, "#login").send_keys("someone@example.com")
    navigate(driver, by(driver, "#login").submit, "the sign-up notice", "Check your mail")
    found["anonymous account offered"] = axe_violations(driver)
    sign_in(driver, site, ADMIN)
    for path in signed_in:
        open_page(driver, site.url + path)
        found["admin " + path] = axe_violations(driver)
    # Pages reached by doing something: a mid-air collision, a refused form.
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    site.rest("PUT", f"/bug/{bug_id}", {"priority": "Low"})
    by(driver, "#comment").send_keys("late")
    click_and_wait(driver, "#bottom button[type=submit]", "the collision page", "Mid-air collision")
    found["admin mid-air collision"] = axe_violations(driver)
    sign_in(driver, site, PLAIN)
    open_page(driver, site.url + "/")
    found["plain home with a request"] = axe_violations(driver)
    open_page(driver, site.url + "/editparams.cgi")
    found["plain refused administration"] = axe_violations(driver)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_people_menus_work_with_the_keyboard_and_pass_axe(site, driver, javascript):
    # usemenuforusers' own effect: the people fields become menus (plain
    # select elements: they work without JavaScript too).
    site.rest("PUT", "/parameters", {"usemenuforusers": "1"})
    browser = driver if javascript else new_driver(javascript=False)
    try:
        bug_id = file_bug(site, "Menus of people")
        sign_in(browser, site, ADMIN)
        open_page(browser, f"{site.url}/show_bug.cgi?id={bug_id}")
        choose(browser, "#assigned_to", f"Pat Plain <{PLAIN}>")
        click_and_wait(browser, "#bottom button[type=submit]", "the saved bug",
                       "Your changes have been saved.")
        assert bug_of(site, bug_id)["assigned_to"] == PLAIN
        violations = {}
        found = {}
        check_every_state(browser, found, "the bug's menus of people")
        violations.update((state, v) for state, v in found.items() if v)
        for path in (f"/show_bug.cgi?id={bug_id}", "/enter_bug.cgi?product=TestProduct",
                     "/userprefs.cgi?tab=email",
                     "/editcomponents.cgi?product=TestProduct&component=TestComponent"):
            open_page(browser, site.url + path)
            found = axe_violations(browser)
            if found:
                violations[path] = found
        assert not violations, json.dumps(violations, indent=1)
    finally:
        site.rest("PUT", "/parameters", {"usemenuforusers": "0"})
        if not javascript:
            browser.quit()


def test_an_administrator_sets_up_an_installation_in_the_browser(site, driver):
    """An installation set up in the browser alone: a product with a
    component, a drop-down that appears only for that product, a review
    flag type for that component, parameters; bugs filed afterwards over
    REST follow those rules."""
    from selenium.webdriver.support.ui import Select
    sign_in(driver, site, ADMIN)

    def submit(button_text):
        button = [b for b in all_of(driver, "main button[type=submit]")
                  if b.text.strip() == button_text][0]
        navigate(driver, button.click, f"the answer to {button_text}")
        assert 'role="alert"' not in driver.page_source, driver.page_source
        assert 'role="status"' in driver.page_source, driver.page_source

    open_page(driver, site.url + "/editproducts.cgi?action=add")
    by(driver, "#name").send_keys("Router")
    by(driver, "#description").send_keys("Home routers")
    by(driver, "#version").clear()
    by(driver, "#version").send_keys("1.0")
    navigate(driver, by(driver, "main button[type=submit]").click, "the new product",
             shows="Product Router")
    open_page(driver, site.url + "/editcomponents.cgi?product=Router&action=add")
    by(driver, "#name").send_keys("WiFi")
    by(driver, "#description").send_keys("Wireless")
    by(driver, "#default_assignee").send_keys(PLAIN)
    submit("Save the component")
    # A drop-down shown only for Router, with two values.
    open_page(driver, site.url + "/editfields.cgi?action=add")
    by(driver, "#name").clear()
    by(driver, "#name").send_keys("cf_band")
    by(driver, "#display_name").send_keys("Band")
    Select(by(driver, "#type")).select_by_value("2")
    by(driver, "#is_on_bug_entry").click()
    Select(by(driver, "#visibility")).select_by_value("product:Router")
    submit("Create the field")
    for band in ("2.4 GHz", "5 GHz"):
        open_page(driver, site.url + "/editvalues.cgi?field=cf_band&action=add")
        by(driver, "#value").send_keys(band)
        submit("Add the value")
    # A review flag type for Router's WiFi component only.
    open_page(driver, site.url + "/editflagtypes.cgi?action=enter&target_type=bug")
    by(driver, "#name").send_keys("wifi-review")
    by(driver, "#description").send_keys("Radio review")
    inclusions = Select(by(driver, "#inclusions"))
    inclusions.deselect_all()
    inclusions.select_by_value("Router:WiFi")
    Select(by(driver, "#grant_group")).select_by_value("editbugs")
    submit("Create the flag type")
    # Parameters: target milestones used, a comment needed to mark a duplicate.
    open_page(driver, site.url + "/editparams.cgi?section=bugfields")
    by(driver, "#param-usetargetmilestone-on").click()
    submit("Save the parameters")
    open_page(driver, site.url + "/editparams.cgi?section=bugchange")
    by(driver, "#param-commentonduplicate-on").click()
    submit("Save the parameters")
    # Every change is in the audit log, under the administrator's name.
    open_page(driver, site.url + "/auditlog.cgi?object=wifi")
    assert "wifi-review" in driver.page_source and ADMIN in driver.page_source

    # Bugs filed afterwards follow those rules over REST.
    field = site.rest("GET", "/field/bug/cf_band")["fields"][0]
    assert (field["visibility_field"], field["visibility_values"]) == ("product", ["Router"])
    assert [v["name"] for v in field["values"]] == ["---", "2.4 GHz", "5 GHz"]
    assert "wifi-review" in [t["name"] for t in site.rest("GET", "/flag_type/Router/WiFi")["bug"]]
    assert "wifi-review" not in [t["name"] for t in
                                 site.rest("GET", "/flag_type/TestProduct/TestComponent")["bug"]]
    bug_id = file_bug(site, "Drops at night", product="Router", component="WiFi",
                      version="1.0", cf_band="5 GHz",
                      flags=[{"name": "wifi-review", "status": "?"}])
    bug = bug_of(site, bug_id)
    assert bug["cf_band"] == "5 GHz"
    assert [(f["name"], f["status"]) for f in bug["flags"]] == [("wifi-review", "?")]
    status, answer, _ = site.server.call(
        "POST", "/rest/bug", {"Bugzilla_api_key": site.key},
        {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
         "summary": "No review here", "description": "x", "op_sys": "Linux", "platform": "PC",
         "flags": [{"name": "wifi-review", "status": "?"}]})
    assert status >= 400, answer
    other = file_bug(site, "Another one")
    status, answer, _ = site.server.call(
        "PUT", f"/rest/bug/{other}", {"Bugzilla_api_key": site.key},
        {"status": "RESOLVED", "resolution": "DUPLICATE", "dupe_of": bug_id})
    assert status >= 400 and "comment" in str(answer).lower(), answer
    assert site.rest("GET", "/parameters")["parameters"]["usetargetmilestone"] == "1"
