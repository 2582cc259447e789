"""The help pages at Bugzilla's addresses (page.cgi?id=quicksearch.html,
fields.html, bug-writing.html), and the page a browser gets at an address
that is no page here, while the REST and RPC addresses keep their own
errors."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from page_support import HTML, Browser, text_of


HELP_PAGES = ("quicksearch.html", "fields.html", "bug-writing.html")


@pytest.mark.parametrize("page_id", HELP_PAGES)
@pytest.mark.parametrize("signed_in", [False, True])
def test_the_help_pages_are_served_to_everyone(app, page_id, signed_in):
    browser = Browser(app)
    if signed_in:
        browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get(f"/page.cgi?id={page_id}")
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert "<main" in page.text and "Quick search help" in page.text     # the site's layout


def test_the_quick_search_help_describes_the_syntax_with_this_trackers_values(app, services):
    text = text_of(Browser(app).get("/page.cgi?id=quicksearch.html").text)
    for words in ("crash OR hang", "-printing", "field:value", "@name", "!keyword", "P2-P4",
                  "review?dev@example.com", "ALL", "OPEN"):
        assert words in text, words
    # The statuses and resolutions of this installation, and the short names.
    assert "UNCONFIRMED (open)" in text and "RESOLVED (closed)" in text and "WORKSFORME" in text
    assert "whiteboard status_whiteboard" in text and "kw keywords" in text
    # What words match follows the whiteboard parameter, as the pages do.
    assert "or its status whiteboard" not in text
    set_param(services, "usestatuswhiteboard", "1")
    assert "or its status whiteboard" in text_of(
        Browser(app).get("/page.cgi?id=quicksearch.html").text)


def test_the_fields_help_has_an_anchor_per_field_and_this_trackers_values(app, services):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE field_values SET value = 'Sometimes' WHERE value = 'Low'")
    page = Browser(app).get("/page.cgi?id=fields.html").text
    for anchor in ("bug_status", "resolution", "bug_severity", "priority", "rep_platform",
                   "assigned_to", "keywords", "dependson", "bug_file_loc", "see_also"):
        assert f'id="{anchor}"' in page, anchor
    assert 'id="status_whiteboard"' not in page            # usestatuswhiteboard is off
    text = text_of(page)
    assert "Sometimes" in text and "IN_PROGRESS" in text
    assert "CONFIRMED open IN_PROGRESS, RESOLVED" in text    # its transitions


def test_an_unknown_help_page_is_the_not_found_page(app):
    page = Browser(app).get("/page.cgi?id=%2E%2E%2Fsecrets.html")
    assert page.status_code == 404
    assert "There is no help page" in text_of(page.text) and "quicksearch.html" in page.text


@pytest.mark.parametrize("path, advice", [
    ("/reports.cgi?product=TestProduct", "/chart.cgi"),
    ("/describecomponents.cgi?product=TestProduct", "/enter_bug.cgi"),
    ("/votes.cgi?action=show_user", None),
    ("/no/such/place", None),
])
def test_a_browser_at_an_address_that_is_no_page_gets_the_not_found_page(app, path, advice):
    page = Browser(app).get(path)
    assert page.status_code == 404
    assert page.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert "No such page" in page.text and "<main" in page.text and "<pre>" not in page.text
    assert "Content-Security-Policy" in page.headers
    if advice:
        assert f'href="{advice}"' in page.text


def test_the_not_found_page_escapes_the_address(app):
    page = Browser(app).get("/%3Cscript%3Ealert(1)%3C/script%3E.cgi")
    assert page.status_code == 404
    assert "<script>alert" not in page.text and "&lt;script&gt;" in page.text


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
def test_programs_at_an_address_that_is_no_page_keep_the_json_error(client, accept):
    headers = {"Accept": accept} if accept else {}
    answer = client.simulate_get("/votes.cgi", params={"id": "1"}, headers=headers)
    assert answer.status_code == 404
    assert answer.json["code"] == 32614 and answer.json["error"] is True


@pytest.mark.parametrize("path", ["/rest/no_such_call", "/rest.cgi/no_such_call", "/rest/group/1/x",
                                  "/static/"])
def test_the_interfaces_addresses_keep_their_errors_for_browsers_too(client, path):
    answer = client.simulate_get(path, headers={"Accept": HTML})
    assert answer.status_code == 404
    assert "No such page" not in answer.text


def test_rpc_errors_stay_in_their_envelopes_for_browsers_too(client):
    answer = client.simulate_post("/jsonrpc.cgi", headers={"Accept": HTML},
                                  json={"method": "No.such", "params": [{}], "id": 1})
    assert answer.status_code == 200 and answer.json["error"]["code"] == -32601
    assert "No such page" not in answer.text
    answer = client.simulate_get("/jsonrpc.cgi/extra", headers={"Accept": HTML})
    assert "No such page" not in answer.text
