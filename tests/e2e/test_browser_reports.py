"""Reports and charts in a real headless Chromium against a real server, on
each database engine: axe-core finds no violation on the report menu, the
table and the three charts, and on the charts' pages, for an anonymous
visitor, a plain user, an insider and an administrator, with JavaScript on
and off; a report is chosen and shown, and a series charted, with the
keyboard alone; a restricted bug is counted, in a report or a chart, only
for those who may see it."""

import io
import json
import re

import pytest

from browser_site import ADMIN, INSIDER, PLAIN, by, file_bug, sign_in, sign_out
from browser_support import axe_violations, navigate, new_driver, open_page, wait_for_page
from bugsvc.cli import main


pytestmark = [pytest.mark.slow, pytest.mark.site_on_each_engine]

PAGES = ["/report.cgi", "/report.cgi?x_axis_field=bug_status&y_axis_field=priority",
         "/report.cgi?x_axis_field=priority&y_axis_field=bug_status&format=bar",
         "/report.cgi?x_axis_field=priority&format=line",
         "/report.cgi?x_axis_field=bug_status&format=pie", "/report.cgi?x_axis_field=priority",
         "/report.cgi?x_axis_field=priority&y_axis_field=bug_status&z_axis_field=resolution"]


@pytest.fixture(scope="module")
def bugs(site):
    public = [file_bug(site, f"Report sample {n}", priority=priority)
              for n, priority in enumerate(("High", "Low", "High"))]
    secret = file_bug(site, "Report secret", groups=["secret"], priority="High")
    for day in ("2026-03-01", "2026-03-02"):
        assert main(["collectstats", "--date", day, "--db", str(site.db_path)], {},
                    out=io.StringIO()) == 0
    return public, secret


def chart_pages(site):
    found = site.rest("GET", "/series")["series"]
    first, second = found[0]["id"], found[1]["id"]
    return ["/chart.cgi", f"/chart.cgi?action=wrap&line0={first}&line1={second}",
            "/chart.cgi?action=convert_search&bug_status=__open__"]


def counted(driver):
    wait_for_page(driver, "the report", shows="counted")
    return int(re.search(r"(\d+) bugs? counted", driver.page_source).group(1))


def test_axe_finds_no_violation_on_the_report_pages(site, driver, bugs):
    found = {}
    for who in (None, PLAIN, INSIDER, ADMIN):
        if who:
            sign_in(driver, site, who)
        else:
            sign_out(driver, site)
        for path in PAGES + chart_pages(site):
            open_page(driver, site.url + path)
            found[f"{who or 'anonymous'} {path}"] = axe_violations(driver)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_restricted_bug_counts_only_for_those_who_may_see_it(site, driver, bugs, javascript):
    """In the table, each chart and the CSV's page alike, with JavaScript on
    and off; axe-core finds no violation with it off either."""
    browser = driver if javascript else new_driver(javascript=False)
    search = "short_desc=Report+s&short_desc_type=substring"
    totals, found = {}, {}
    try:
        for who in (None, PLAIN, INSIDER, ADMIN):
            if who:
                sign_in(browser, site, who)
            else:
                sign_out(browser, site)
            for shape in ("", "&format=bar", "&format=pie", "&y_axis_field=bug_status"):
                path = f"/report.cgi?x_axis_field=priority&{search}{shape}"
                open_page(browser, site.url + path)
                totals[who, shape] = counted(browser)
                if not javascript:
                    found[f"{who or 'anonymous'} {path}"] = axe_violations(browser)
            if not javascript:
                for path in chart_pages(site):
                    open_page(browser, site.url + path)
                    found[f"{who or 'anonymous'} {path}"] = axe_violations(browser)
    finally:
        if not javascript:
            browser.quit()
    expected = {None: 3, PLAIN: 3, INSIDER: 3, ADMIN: 4}
    assert totals == {(who, shape): expected[who] for who, shape in totals}
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


def test_a_restricted_bug_never_counts_in_a_chart(site, driver, bugs):
    """A public series is counted as an anonymous visitor sees the bugs:
    its chart shows everyone the count of the bugs anyone may see, which
    the administrator's report of the same search exceeds by the
    restricted bug."""
    day = "2026-03-09"
    assert main(["collectstats", "--date", day, "--db", str(site.db_path)], {},
                out=io.StringIO()) == 0
    [series] = [s for s in site.rest("GET", "/series")["series"]
                if (s["category"], s["subcategory"], s["name"]) == ("TestProduct", "-All-",
                                                                   "All Open")]
    reported, charted = {}, {}
    for who in (None, PLAIN, INSIDER, ADMIN):
        if who:
            sign_in(driver, site, who)
        else:
            sign_out(driver, site)
        open_page(driver, f"{site.url}/report.cgi?x_axis_field=product&{series['query']}")
        reported[who] = counted(driver)
        open_page(driver, f"{site.url}/chart.cgi?action=wrap&line0={series['id']}"
                          f"&datefrom={day}&dateto={day}", shows="Bugs each day")
        charted[who] = int(by(driver, "table.report tbody td.n").text)
    public = reported[None]
    assert reported == {None: public, PLAIN: public, INSIDER: public, ADMIN: public + 1}
    assert charted == {None: public, PLAIN: public, INSIDER: public, ADMIN: public}


def test_a_report_is_chosen_with_the_keyboard_alone(site, driver, bugs):
    from selenium.webdriver.common.keys import Keys
    sign_out(driver, site)
    open_page(driver, site.url + "/report.cgi")
    by(driver, "#x_axis_field").send_keys("Priority")
    by(driver, "#format-bar").send_keys(Keys.SPACE)
    navigate(driver, lambda: by(driver, "#quicksearch-words").send_keys("Report", Keys.ENTER),
             "the bar chart", shows="Bugs by Priority")
    assert "<svg" in driver.page_source and counted(driver) == 3
    # The first count is a link the keyboard reaches and follows.
    link = by(driver, "table.report td.n a")
    navigate(driver, lambda: link.send_keys(Keys.ENTER), "the bug list of a count", shows="found")
    assert "Bug list" in driver.title


def test_a_series_is_charted_with_the_keyboard_alone(site, driver, bugs):
    from selenium.webdriver.common.keys import Keys
    sign_out(driver, site)
    open_page(driver, site.url + "/chart.cgi")
    box = by(driver, "fieldset input[type=checkbox]")
    box.send_keys(Keys.SPACE)
    assert box.is_selected()
    navigate(driver, lambda: by(driver, "#dateto").send_keys("2026-03-02", Keys.ENTER),
             "the chart", shows="Bugs each day")
    assert "<svg" in driver.page_source and "2026-03-01" in driver.page_source


def test_axe_on_the_duplicates_and_time_summary_pages(site, driver, bugs):
    dupe = file_bug(site, "Report duplicate")
    hidden_dupe = file_bug(site, "Hidden duplicate", groups=["secret"])
    for bug_id in (dupe, hidden_dupe):
        site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "DUPLICATE",
                                            "dupe_of": bugs[0][0]})
    site.rest("PUT", f"/bug/{bugs[0][0]}",
              {"work_time": 1.5, "comment": {"body": "worked on it"}})
    visits = {None: ["/duplicates.cgi"], PLAIN: ["/duplicates.cgi", "/summarize_time.cgi"],
              INSIDER: ["/duplicates.cgi?sortby=bug_id&reverse=1"],
              ADMIN: ["/duplicates.cgi", "/summarize_time.cgi",
                      f"/summarize_time.cgi?id={bugs[0][0]}&group_by=owner"]}
    found, counts = {}, {}
    for who, paths in visits.items():
        if who:
            sign_in(driver, site, who)
        else:
            sign_out(driver, site)
        for path in paths:
            open_page(driver, site.url + path)
            found[f"{who or 'anonymous'} {path}"] = axe_violations(driver)
            if path.startswith("/duplicates.cgi"):
                # The restricted duplicate counts only for those who may see it.
                link = by(driver, f'td.n a[href$="v1={bugs[0][0]}"]')
                counts[who] = int(link.text)
    assert "1.5 hours worked" in driver.page_source
    assert counts == {None: 1, PLAIN: 1, INSIDER: 1, ADMIN: 2}
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)
