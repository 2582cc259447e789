"""The team lead's pages in a real headless Chromium against a real server:
changing several bugs at once, moving a bug to another product through the
page that asks for its component, cloning a bug, the dependency tree and
graph, and the request queue; axe-core finds no violation on any of them,
and the changes are made with the keyboard."""

import json

import pytest

from browser_site import ADMIN, PLAIN, bug_of, by, choose, file_bug, sign_in, sign_out
from browser_support import axe_violations, navigate, open_page


pytestmark = pytest.mark.slow


def test_the_team_pages_pass_axe_and_change_bugs_with_the_keyboard(site, driver):
    from selenium.webdriver.common.keys import Keys
    first = file_bug(site, "Team sample one")
    second = file_bug(site, "Team sample two", depends_on=[first])
    site.rest("PUT", f"/bug/{second}", {"flags": [{"name": "review", "status": "?",
                                                   "requestee": PLAIN}]})
    site.rest("POST", "/product", {"name": "Gadgets", "description": "Gadgets we make",
                                   "version": "1.0", "has_unconfirmed": True})
    site.rest("POST", "/component", {"product": "Gadgets", "name": "Casing",
                                     "description": "The outside",
                                     "default_assignee": ADMIN})
    found = {}
    sign_out(driver, site)
    for path in (f"/showdependencytree.cgi?id={second}", f"/showdependencygraph.cgi?id={second}",
                 f"/showdependencygraph.cgi?id={second}&display=web"):
        open_page(driver, site.url + path)
        found["anonymous " + path] = axe_violations(driver)
    assert "<svg" in driver.page_source
    sign_in(driver, site, ADMIN)
    for path in ("/buglist.cgi?product=TestProduct&tweak=1", "/request.cgi",
                 f"/request.cgi?action=queue&requestee={PLAIN}",
                 f"/enter_bug.cgi?cloned_bug_id={second}",
                 f"/showdependencytree.cgi?id={first}&hide_resolved=1&maxdepth=2"):
        open_page(driver, site.url + path)
        found["admin " + path] = axe_violations(driver)
    # Several bugs at once: tick two boxes and choose a priority, by keyboard.
    open_page(driver, site.url + "/buglist.cgi?product=TestProduct&tweak=1")
    for bug_id in (first, second):
        by(driver, f"#id_{bug_id}").send_keys(Keys.SPACE)
    choose(driver, "#bulk-priority", "Highest")
    by(driver, "#bulk-comment").send_keys("Both at once")
    navigate(driver, lambda: by(driver, "#bulk button[type=submit]").send_keys(Keys.ENTER),
             "the bulk result", shows="2 bugs changed, 0 refused.")
    found["admin bulk result"] = axe_violations(driver)
    assert [bug_of(site, n)["priority"] for n in (first, second)] == ["Highest", "Highest"]
    # Moving a bug to another product asks for its component.
    open_page(driver, f"{site.url}/show_bug.cgi?id={first}")
    choose(driver, "#product", "Gadgets")
    navigate(driver, lambda: by(driver, "#bottom button[type=submit]").send_keys(Keys.ENTER),
             "the verify page", shows="Verify new product details")
    found["admin verify new product"] = axe_violations(driver)
    choose(driver, "#component", "Casing")
    choose(driver, "#version", "1.0")
    navigate(driver, lambda: by(driver, "#verify-product button[type=submit]").send_keys(
        Keys.ENTER), "the moved bug", shows='class="bug-head"')
    assert (bug_of(site, first)["product"], bug_of(site, first)["component"]) == (
        "Gadgets", "Casing")
    sign_in(driver, site, PLAIN)
    open_page(driver, site.url + "/")
    navigate(driver, lambda: by(driver, 'a[href^="/request.cgi?action=queue"]').send_keys(
        Keys.ENTER), "my requests", shows="Team sample two")
    found["plain my requests"] = axe_violations(driver)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)
