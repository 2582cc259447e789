"""The team lead's pages in a real headless Chromium against a real server:
changing several bugs at once, moving a bug to another product through the
page that asks for its component, cloning a bug, the dependency tree and
graph, and the request queue; axe-core finds no violation on any of them,
and the changes are made with the keyboard."""

import json

import pytest

from browser_site import ADMIN, PLAIN, bug_of, by, choose, file_bug, sign_in, sign_out
from browser_support import axe_violations, navigate, new_driver, open_page


pytestmark = [pytest.mark.slow, pytest.mark.site_on_each_engine]


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


def test_scheduled_searches_pass_axe_and_are_set_with_the_keyboard(site, driver):
    from selenium.webdriver.common.keys import Keys
    site.rest("POST", "/saved_search", {"name": "Whine sample",
                                        "query": "bug_status=__open__"})
    found = {}
    sign_in(driver, site, PLAIN)
    open_page(driver, site.url + "/editwhines.cgi", shows="bz_canusewhines")
    found["plain refused"] = axe_violations(driver)
    sign_in(driver, site, ADMIN)
    open_page(driver, site.url + "/editwhines.cgi", shows="Scheduled searches")
    found["admin empty"] = axe_violations(driver)
    navigate(driver, lambda: by(driver, 'button[name="add_event"]').send_keys(Keys.ENTER),
             "the new event", shows="Event 1")
    by(driver, 'input[id$="_subject"]').send_keys("Keyboard whine")
    navigate(driver, lambda: by(driver, 'button[name="add_schedule"]').send_keys(Keys.ENTER),
             "the new schedule", shows="Remove this schedule")
    choose(driver, 'select[id^="day_"]', "Monday to Friday")
    choose(driver, 'select[id^="time_"]', "at 07:00")
    navigate(driver, lambda: by(driver, 'button[name="add_query"]').send_keys(Keys.ENTER),
             "the new search", shows="Remove this search")
    by(driver, 'input[id^="query_title_"]').send_keys("Everything open")
    navigate(driver, lambda: by(driver, '.whine-event form button[name="update"]').send_keys(
        Keys.ENTER), "the saved event", shows="Saved.")
    found["admin event"] = axe_violations(driver)
    [event] = site.rest("GET", "/whine")["events"]
    assert event["subject"] == "Keyboard whine"
    assert [(s["day"], s["time"]) for s in event["schedules"]] == [("MF", "7")]
    assert [(q["name"], q["title"]) for q in event["queries"]] == [
        ("Whine sample", "Everything open")]
    # A refusal is shown on the form, with its reason.
    box = by(driver, 'input[id^="mailto_"]')
    box.clear()
    box.send_keys("nobody-here@example.com")
    navigate(driver, lambda: by(driver, '.whine-event form button[name="update"]').send_keys(
        Keys.ENTER), "the refusal", shows="Not saved: There is no account")
    found["admin refused"] = axe_violations(driver)
    site.rest("DELETE", f"/whine/{event['id']}")
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


def test_the_team_pages_work_without_javascript(site):
    """With JavaScript off every team page is a plain page of forms that
    passes axe-core, and a report and a change of several bugs at once are
    made by its forms alone."""
    from selenium.webdriver.common.keys import Keys
    first = file_bug(site, "Script-free one")
    second = file_bug(site, "Script-free two", depends_on=[first])
    driver = new_driver(javascript=False)
    try:
        sign_in(driver, site, ADMIN)
        found = {}
        for path in ("/report.cgi", "/chart.cgi", "/duplicates.cgi",
                     f"/showdependencytree.cgi?id={second}",
                     f"/showdependencygraph.cgi?id={second}", "/request.cgi", "/editwhines.cgi",
                     "/buglist.cgi?product=TestProduct&tweak=1"):
            open_page(driver, site.url + path)
            found[path] = axe_violations(driver)
        open_page(driver, site.url + "/report.cgi")
        by(driver, "#x_axis_field").send_keys("Priority")
        navigate(driver, lambda: by(driver, "#quicksearch-words").send_keys("Script-free",
                                                                              Keys.ENTER),
                 "the report", shows="Bugs by Priority")
        assert "2 bugs counted" in driver.page_source
        found["the report"] = axe_violations(driver)
        open_page(driver, site.url + "/buglist.cgi?product=TestProduct&tweak=1")
        for bug_id in (first, second):
            by(driver, f"#id_{bug_id}").send_keys(Keys.SPACE)
        choose(driver, "#bulk-priority", "Lowest")
        navigate(driver, lambda: by(driver, "#bulk button[type=submit]").send_keys(Keys.ENTER),
                 "the bulk result", shows="2 bugs changed, 0 refused.")
        found["the bulk result"] = axe_violations(driver)
        assert [bug_of(site, n)["priority"] for n in (first, second)] == ["Lowest", "Lowest"]
    finally:
        driver.quit()
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)
