"""Reports (report.cgi and Report.get): bugs counted by field values in SQL,
only the bugs the caller may see; tables whose counts link to bug lists
of exactly those bugs; bar, line and pie charts as SVG with their table;
CSV; PNG."""

import csv
import io
import re
import sys
from html import unescape

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import (
    add_custom_field,
    add_keyword,
    editbugs_only_for_members,
    file_bug,
    set_param,
    update_bug,
)
from bugsvc.catalogue.field_types import MULTI_SELECT, SINGLE_SELECT
from bugsvc.errors import ServiceError
from bugsvc.services import report
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, csp, text_of


@pytest.fixture
def world(services):
    world = World(services)      # a public bug, and a bug restricted to `secret`
    add_keyword(services, "crash")
    add_keyword(services, "ux")
    add_custom_field(services, "cf_team", SINGLE_SELECT, values=["Red", "Blue"])
    add_custom_field(services, "cf_os", MULTI_SELECT, values=["win", "mac"])
    world.bugs = [
        file_bug(services, summary="One", priority="High", keywords=["crash", "ux"],
                 cf_team="Red", cf_os=["win", "mac"]),
        file_bug(services, summary="Two", priority="High", keywords=["crash"], cf_team="Blue"),
        file_bug(services, summary="Three", priority="Low", assigned_to=PLAIN),
    ]
    update_bug(services, world.bugs[2], status="RESOLVED", resolution="FIXED")
    return world


def counted(services, as_user, **params):
    return services.call(report.get, params, as_user=as_user)


def grid(answer):
    """{(x, y): count} of a one-table answer."""
    table = answer["tables"][0]["rows"]
    return {(x, y): table[row][column]
            for row, y in enumerate(answer["y_labels"] or [None])
            for column, x in enumerate(answer["x_labels"] or [None])}


def test_counts_by_two_fields_only_of_the_bugs_the_caller_may_see(services, world):
    mine = counted(services, ADMIN, x_axis_field="bug_status", y_axis_field="priority")
    assert mine["x_labels"] == ["CONFIRMED", "RESOLVED"]     # in the field's order
    # The world's two bugs (public and secret) have the default priority.
    assert grid(mine) == {("CONFIRMED", "High"): 2, ("RESOLVED", "High"): 0,
                          ("CONFIRMED", "Low"): 0, ("RESOLVED", "Low"): 1,
                          ("CONFIRMED", "---"): 2, ("RESOLVED", "---"): 0}
    assert mine["total"] == 5
    for who in (PLAIN, INSIDER, None):
        theirs = counted(services, who, x_axis_field="bug_status", y_axis_field="priority")
        assert theirs["total"] == 4, who                  # the secret bug is never counted
        assert grid(theirs)[("CONFIRMED", "---")] == 1


def test_a_field_with_several_values_counts_a_bug_under_each(services, world):
    by_keyword = counted(services, PLAIN, y_axis_field="keywords")
    assert by_keyword["y_labels"] == ["", "crash", "ux"]
    assert [row[0] for row in by_keyword["tables"][0]["rows"]] == [2, 2, 1]
    by_custom = counted(services, PLAIN, x_axis_field="cf_os", y_axis_field="cf_team")
    assert by_custom["x_labels"] == ["", "win", "mac"]     # the legal values' order
    assert grid(by_custom)[("mac", "Red")] == 1 and grid(by_custom)[("", "Blue")] == 1


def test_separate_tables_by_a_third_field(services, world):
    answer = counted(services, ADMIN, x_axis_field="priority", y_axis_field="bug_status",
                     z_axis_field="resolution")
    assert answer["z_labels"] == ["", "FIXED"]
    assert [table["z"] for table in answer["tables"]] == ["", "FIXED"]
    assert sum(sum(row) for row in answer["tables"][1]["rows"]) == 1


def test_search_parameters_choose_the_bugs(services, world):
    answer = counted(services, PLAIN, x_axis_field="priority", bug_status="__open__",
                     keywords="crash")
    assert answer["total"] == 2 and answer["x_labels"] == ["High"]


@pytest.mark.parametrize("params, code", [
    ({}, 32000),
    ({"x_axis_field": "no_such_field"}, 108),
    ({"x_axis_field": "short_desc"}, 108),
    ({"x_axis_field": "priority", "y_axis_field": "priority"}, 32000),
    ({"x_axis_field": "estimated_time"}, 108),          # time-tracking: not for a plain user
    ({"x_axis_field": "priority", "f1": "short_desc", "o1": "regexp", "v1": "("}, 32000),
])
def test_refusals(services, world, params, code):
    editbugs_only_for_members(services)      # the time-tracking group: the administrator
    with pytest.raises(ServiceError) as refused:
        counted(services, PLAIN, **params)
    assert refused.value.code == code


def test_time_tracking_fields_are_axes_for_time_trackers(services, world):
    editbugs_only_for_members(services)
    update_bug(services, world.bugs[0], estimated_time=4)
    answer = counted(services, ADMIN, x_axis_field="estimated_time")
    assert dict(zip(answer["x_labels"], answer["tables"][0]["rows"][0], strict=True))["4.0"] == 1
    assert "estimated_time" not in [f["name"] for f in services.call(
        report.axes, {}, as_user=PLAIN)["fields"]]


def test_no_criteria_follows_search_allow_no_criteria(services, world):
    set_param(services, "search_allow_no_criteria", "0")
    with pytest.raises(ServiceError) as refused:
        counted(services, PLAIN, x_axis_field="priority")
    assert refused.value.code == 1000


def test_over_rest(client, services, world):
    answer = client.simulate_get("/rest/report", params={
        "x_axis_field": "priority", "product": "TestProduct"}).json
    assert answer["total"] == 4
    axes = client.simulate_get("/rest/report/axes").json["fields"]
    assert {"name": "priority", "display_name": "Priority"} in axes


# The page ------------------------------------------------------------------------

def cells(page):
    """[(count, link)] of every count that links to a bug list."""
    return [(int(count), unescape(link)) for link, count in re.findall(
        r'<a href="(/buglist\.cgi\?[^"]*)">(\d+)</a>', page.text)]


def listed_count(browser, link):
    return int(re.search(r"(\d+) bugs? found", text_of(browser.get(link).text)).group(1))


@pytest.mark.parametrize("axes", [
    {"x_axis_field": "bug_status", "y_axis_field": "priority"},
    {"x_axis_field": "keywords", "y_axis_field": "resolution"},
    {"x_axis_field": "assigned_to", "y_axis_field": "cf_team", "z_axis_field": "cf_os"},
    {"y_axis_field": "component", "x_axis_field": "product"},
])
def test_every_count_links_to_a_list_of_exactly_its_bugs(app, world, axes):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get("/report.cgi", action="wrap", format="table", product="TestProduct",
                       **axes)
    assert page.status_code == 200, page.text
    found = cells(page)
    assert found
    for count, link in found:
        assert listed_count(browser, link) == count, link


def test_the_table_for_each_visitor(app, world):
    for who in (None, PLAIN, INSIDER, ADMIN):
        browser = Browser(app)
        if who:
            browser.login(who, PASSWORDS.get(who, ADMIN_PASSWORD))
        page = browser.get("/report.cgi?x_axis_field=bug_status&format=table")
        text = text_of(page.text)
        # One field in a table lists its values downwards, as the reference.
        assert re.search(r"<th scope=\"row\">CONFIRMED</th>", page.text)
        assert f"{5 if who == ADMIN else 4} bugs counted" in text, who
        assert "Secret" not in text


def test_a_bar_chart_is_an_svg_picture_with_its_table(app, world):
    page = Browser(app).get("/report.cgi?x_axis_field=priority&y_axis_field=bug_status"
                            "&format=bar&x_labels_vertical=1")
    assert page.status_code == 200
    svg = re.search(r"<svg .*?</svg>", page.text, re.S).group(0)
    assert 'role="img"' in svg and "<title" in svg and "<desc" in svg
    assert "<script" not in svg and "style=" not in svg
    assert "Bugs by Priority and Status" in svg
    assert re.search(r"<table class=\"buglist report\">", page.text)
    assert "script-src 'self'" in csp(page)["script-src"] or csp(page)["script-src"]
    for shape in ("line", "pie"):
        other = Browser(app).get(f"/report.cgi?x_axis_field=priority&format={shape}")
        assert other.status_code == 200 and "<svg " in other.text
    # A picture of one field along the vertical axis draws it along the horizontal one.
    turned = Browser(app).get("/report.cgi?y_axis_field=priority&format=bar")
    assert "Bugs by Priority" in turned.text


def test_csv(app, world):
    result = Browser(app).get("/report.cgi?x_axis_field=bug_status&y_axis_field=priority"
                              "&format=table&ctype=csv")
    assert result.headers["Content-Type"] == "text/csv; charset=UTF-8"
    rows = list(csv.reader(io.StringIO(result.text)))
    assert rows[0] == ["Priority / Status", "CONFIRMED", "RESOLVED", "Total"]
    assert ["High", "2", "0", "2"] in rows and ["---", "1", "0", "1"] in rows
    assert rows[-1] == ["Total", "3", "1", "4"]


def test_png(app, world, monkeypatch):
    pytest.importorskip("cairosvg")
    result = Browser(app).get("/report.cgi?x_axis_field=priority&format=pie&ctype=png")
    assert result.status_code == 200 and result.headers["Content-Type"] == "image/png"
    assert result.content.startswith(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setitem(sys.modules, "cairosvg", None)        # as if it were not installed
    missing = Browser(app).get("/report.cgi?x_axis_field=priority&format=bar&ctype=png")
    assert missing.status_code == 501 and "bugsvc[png]" in text_of(missing.text)


@pytest.mark.parametrize("query, status", [
    ("x_axis_field=priority&format=radar", 400),
    ("x_axis_field=priority&format=bar&width=50", 400),
    ("x_axis_field=priority&format=bar&height=x", 400),
    ("x_axis_field=priority&format=table&ctype=png", 400),
    ("z_axis_field=priority&format=bar", 400),
    ("x_axis_field=nothing", 400),
])
def test_bad_report_addresses_are_refused(app, world, query, status):
    result = Browser(app).get("/report.cgi?" + query)
    assert result.status_code == status, result.text


def test_the_menu_carries_the_search_it_came_from(app, world):
    browser = Browser(app)
    page = browser.get("/report.cgi?action=menu&keywords=crash&product=TestProduct")
    assert page.status_code == 200
    assert '<input type="hidden" name="keywords" value="crash">' in page.text
    assert re.search(r'<option selected>TestProduct</option>', page.text)
    assert '<option value="priority">Priority</option>' in page.text
    again = browser.get("/report.cgi?action=menu&x_axis_field=priority&format=pie")
    assert '<option value="priority" selected>Priority</option>' in again.text
    assert 'id="format-pie" name="format" value="pie" checked' in again.text
    bug_list = browser.get("/buglist.cgi?keywords=crash")
    assert "/report.cgi?keywords=crash&amp;action=menu" in bug_list.text
