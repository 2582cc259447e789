"""Administration in a real headless Chromium against a real server: the
status workflow and the values of Bugzilla's own fields, set up with the
keyboard alone; axe-core finds no violation on their pages (a refusal
included), and bugs changed over REST afterwards follow the workflow."""

import json

import pytest

from browser_site import ADMIN, by, file_bug, sign_in
from browser_support import axe_violations, navigate, open_page


pytestmark = pytest.mark.slow


def press_space_on(driver, css):
    from selenium.webdriver.common.keys import Keys
    by(driver, css).send_keys(Keys.SPACE)


def submit_with_enter(driver, css, what):
    from selenium.webdriver.common.keys import Keys
    navigate(driver, lambda: by(driver, css).send_keys(Keys.ENTER), what)


def test_an_administrator_makes_reopening_need_a_comment_in_the_browser(site, driver):
    sign_in(driver, site, ADMIN)
    found = {}
    # A new closed status, typed and submitted with the keyboard.
    open_page(driver, site.url + "/editvalues.cgi?field=bug_status&action=add")
    found["new status form"] = axe_violations(driver)
    by(driver, "#value").send_keys("SHIPPED")
    press_space_on(driver, "#is_open_0")
    submit_with_enter(driver, "main form button[type=submit]", "the statuses")
    assert 'role="status"' in driver.page_source and "SHIPPED" in driver.page_source
    found["statuses"] = axe_violations(driver)
    # The same name again is refused on the form, as typed.
    open_page(driver, site.url + "/editvalues.cgi?field=bug_status&action=add")
    by(driver, "#value").send_keys("shipped")
    submit_with_enter(driver, "main form button[type=submit]", "the refusal")
    assert 'role="alert"' in driver.page_source and 'value="shipped"' in driver.page_source
    found["refused status"] = axe_violations(driver)
    for path in ("/editvalues.cgi", "/editvalues.cgi?field=priority&action=edit&value=Low",
                 "/editproducts.cgi?action=editgroupcontrols&product=TestProduct",
                 "/editversions.cgi?product=TestProduct",
                 "/editmilestones.cgi?product=TestProduct", "/sanitycheck.cgi"):
        open_page(driver, site.url + path)
        found[path] = axe_violations(driver)
    site.rest("PUT", "/parameters", {"useclassification": "1"})
    site.rest("POST", "/classification", {"name": "Hardware"})
    for path in ("/editclassifications.cgi", "/editclassifications.cgi?action=add",
                 "/editclassifications.cgi?action=edit&classification=Hardware",
                 "/editclassifications.cgi?action=reclassify&classification=Hardware"):
        open_page(driver, site.url + path)
        found[path] = axe_violations(driver)
    # RESOLVED may move to SHIPPED.
    open_page(driver, site.url + "/editworkflow.cgi")
    found["workflow"] = axe_violations(driver)
    press_space_on(driver, 'input[aria-label="From RESOLVED to SHIPPED"]')
    submit_with_enter(driver, "main form button[type=submit]", "the saved workflow")
    assert 'role="status"' in driver.page_source
    assert by(driver, 'input[aria-label="From RESOLVED to SHIPPED"]').is_selected()
    # Reopening (RESOLVED to CONFIRMED) needs a comment.
    open_page(driver, site.url + "/editworkflow.cgi?action=edit_comment")
    found["comments"] = axe_violations(driver)
    press_space_on(driver, 'input[aria-label="A comment is required from RESOLVED to '
                           'CONFIRMED"]')
    submit_with_enter(driver, "main form button[type=submit]", "the saved comments")
    assert by(driver, 'input[aria-label="A comment is required from RESOLVED to '
                      'CONFIRMED"]').is_selected()
    open_page(driver, site.url + "/auditlog.cgi?class=Bugzilla::Status")
    assert "comment_required_to" in driver.page_source
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)

    # Over REST afterwards: a reopening without a comment is refused ...
    bug_id = file_bug(site, "Shipped then broken")
    site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "FIXED"})
    status, answer, _ = site.server.call("PUT", f"/rest/bug/{bug_id}",
                                         {"Bugzilla_api_key": site.key},
                                         {"status": "CONFIRMED"})
    assert (status, answer["code"]) == (400, 32000), answer
    # ... one with a comment goes through, and so does the new move.
    site.rest("PUT", f"/bug/{bug_id}", {"status": "CONFIRMED",
                                        "comment": {"body": "Broken again."}})
    site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "FIXED"})
    site.rest("PUT", f"/bug/{bug_id}", {"status": "SHIPPED"})
    assert site.rest("GET", f"/bug/{bug_id}")["bugs"][0]["status"] == "SHIPPED"
