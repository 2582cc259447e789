"""The team lead's pages in a real headless Chromium against a real server,
on each database engine: changing several bugs at once, moving a bug to
another product through the page that asks for its component, cloning a
bug, filing one restricted to a group, the dependency tree and graph, the
request queue and scheduled searches; each page for an anonymous visitor,
a plain user, an insider and an administrator, with JavaScript on and off,
a restricted bug shown to none who may not see it; axe-core finds no
violation on any of them, and the changes are made with the keyboard."""

import json
from urllib.parse import quote

import pytest

from browser_site import (
    ADMIN,
    INSIDER,
    PLAIN,
    all_of,
    bug_of,
    by,
    choose,
    file_bug,
    sign_in,
    sign_out,
)
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


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_scheduled_searches_pass_axe_and_are_set_with_the_keyboard(site, driver, javascript):
    browser = driver if javascript else new_driver(javascript=False)
    try:
        set_a_whine_with_the_keyboard(site, browser, f"Whine sample {int(javascript)}")
    finally:
        if not javascript:
            browser.quit()


def set_a_whine_with_the_keyboard(site, driver, search):
    from selenium.webdriver.common.keys import Keys
    site.rest("POST", "/saved_search", {"name": search, "query": "bug_status=__open__"})
    found = {}
    # Every account is in editbugs (its regexp '.*'), a member of
    # bz_canusewhines as in Bugzilla: the plain user has the page too.
    sign_in(driver, site, PLAIN)
    open_page(driver, site.url + "/editwhines.cgi", shows="Scheduled searches")
    found["plain empty"] = axe_violations(driver)
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
    assert [(q["name"], q["title"]) for q in event["queries"]] == [(search, "Everything open")]
    # A refusal is shown on the form, with its reason.
    box = by(driver, 'input[id^="mailto_"]')
    box.clear()
    box.send_keys("nobody-here@example.com")
    navigate(driver, lambda: by(driver, '.whine-event form button[name="update"]').send_keys(
        Keys.ENTER), "the refusal", shows="Not saved: There is no account")
    found["admin refused"] = axe_violations(driver)
    site.rest("DELETE", f"/whine/{event['id']}")
    site.rest("DELETE", f"/saved_search/{quote(search)}")
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


VISITORS = (None, PLAIN, INSIDER, ADMIN)


def visit_as(browser, site, who):
    if who:
        sign_in(browser, site, who)
    else:
        sign_out(browser, site)


def asks_to_sign_in(browser):
    return bool(all_of(browser, "#Bugzilla_login"))


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_each_team_page_for_each_visitor(site, driver, javascript):
    """Every team page (bulk change, dependency tree and graph, request queue,
    scheduled searches, most duplicated bugs, time summary) as each visitor,
    with JavaScript on and off: the pages that need an account ask anonymous
    visitors to sign in, a bug restricted
    to a group (blocked by a public one, with a request) appears in no list,
    tree, graph or queue of anyone who may not see it, a plain user's change
    of several bugs at once is refused bug by bug as one by one, and axe-core
    finds no violation."""
    from selenium.webdriver.common.keys import Keys
    mode = "javascript" if javascript else "scriptless"
    public = file_bug(site, f"Matrix {mode} public")
    secret = file_bug(site, f"Matrix {mode} secret", groups=["secret"], depends_on=[public])
    for bug_id in (public, secret):
        site.rest("PUT", f"/bug/{bug_id}", {"flags": [{"name": "review", "status": "?"}]})
    listed = f"/buglist.cgi?short_desc={quote(f'Matrix {mode}')}&short_desc_type=substring"
    pages = {"bulk": listed + "&tweak=1", "tree": f"/showdependencytree.cgi?id={public}",
             "graph": f"/showdependencygraph.cgi?id={public}",
             "queue": "/request.cgi?action=queue&type=review&status=%3F",
             "whines": "/editwhines.cgi", "duplicates": "/duplicates.cgi",
             "time": f"/summarize_time.cgi?id={public},{secret}&do_depends=1"}
    needs_account = {"bulk", "queue", "whines", "time"}
    # Pages that need not list either bug (no duplicates, no hours worked).
    may_list_neither = {"whines", "duplicates", "time"}
    browser = driver if javascript else new_driver(javascript=False)
    found, shown = {}, {}
    try:
        for who in VISITORS:
            visit_as(browser, site, who)
            for page, path in pages.items():
                open_page(browser, site.url + path)
                found[f"{who or 'anonymous'} {page}"] = axe_violations(browser)
                if who is None and page in needs_account:
                    assert asks_to_sign_in(browser), (page, browser.page_source[:2000])
                    continue
                source = browser.page_source
                shown[who, page] = (f"Matrix {mode} public" in source,
                                    f"Matrix {mode} secret" in source)
                if page == "whines":
                    # Every account is in bz_canusewhines through editbugs.
                    assert "Scheduled searches" in source
                    assert "bz_canusewhines" not in source
                if page == "bulk":
                    assert bool(all_of(browser, f"#id_{secret}")) == (who == ADMIN)
            if who == PLAIN:
                # A box for the restricted bug, forged into the form (the
                # page has none): that bug is refused as one by one, its
                # summary told to no one, while the public one changes.
                open_page(browser, site.url + pages["bulk"])
                by(browser, f"#id_{public}").send_keys(Keys.SPACE)
                browser.execute_script(
                    "var box = document.createElement('input'); box.type = 'checkbox';"
                    "box.name = arguments[0]; box.value = 'on'; box.checked = true;"
                    "document.getElementById('bulk').appendChild(box);", f"id_{secret}")
                choose(browser, "#bulk-priority", "Lowest")
                navigate(browser, lambda: by(browser, "#bulk button[type=submit]").send_keys(
                    Keys.ENTER), "the bulk result", shows="1 bug changed, 1 refused.")
                found["plain bulk result"] = axe_violations(browser)
                assert f"Matrix {mode} secret" not in browser.page_source
                assert bug_of(site, public)["priority"] == "Lowest"
                assert bug_of(site, secret)["priority"] != "Lowest"
    finally:
        if not javascript:
            browser.quit()
    for (who, page), (public_shown, secret_shown) in shown.items():
        if page in may_list_neither:
            assert not secret_shown or who == ADMIN, (who, page)
        else:
            assert public_shown, (who, page)
            assert secret_shown == (who == ADMIN), (who, page)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_new_bug_is_restricted_to_a_group_from_its_form(site, driver, javascript):
    """The new-bug form offers the product's groups the visitor may restrict
    a bug to (as Bugzilla's enter_bug.cgi), ticked with the keyboard; those
    it keeps from a visitor are not offered."""
    from selenium.webdriver.common.keys import Keys
    browser = driver if javascript else new_driver(javascript=False)
    mode = "javascript" if javascript else "scriptless"
    found = {}
    try:
        for who in (PLAIN, INSIDER):
            sign_in(browser, site, who)
            open_page(browser, site.url + "/enter_bug.cgi?product=TestProduct",
                      shows="File a bug in TestProduct")
            assert not all_of(browser, 'input[name="groups"]'), who
        sign_in(browser, site, ADMIN)
        open_page(browser, site.url + "/enter_bug.cgi?product=TestProduct",
                  shows="File a bug in TestProduct")
        found["admin form"] = axe_violations(browser)
        [box] = all_of(browser, 'input[name="groups"]')
        assert (box.get_attribute("value"), box.is_selected()) == ("secret", False)
        by(browser, "#summary").send_keys(f"Filed {mode} in secret")
        box.send_keys(Keys.SPACE)
        assert box.is_selected()
        navigate(browser, lambda: by(browser, "#summary").send_keys(Keys.ENTER),
                 "the new bug", shows="The bug has been filed.")
        found["admin new bug"] = axe_violations(browser)
        bug_id = int(browser.current_url.split("id=")[1].split("&")[0])
        assert bug_of(site, bug_id)["groups"] == ["secret"]
    finally:
        if not javascript:
            browser.quit()
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)
