"""Bug lists (buglist.cgi) with Bugzilla's query strings, chosen columns,
sorting, paging, counts and CSV; saved searches; the search form; old
Bugzilla links."""

import csv
import io
import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import file_bug, update_bug
from conftest import world_fixture
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


@world_fixture
def world(services):
    return World(services)


@pytest.fixture
def bugs(services, world):
    ids = [file_bug(services, summary=f"Widget {n} misbehaves", priority=priority)
           for n, priority in enumerate(["Low", "High", "Normal", "Highest"])]
    update_bug(services, ids[0], status="RESOLVED", resolution="FIXED")
    return ids


def listed(page):
    return [int(n) for n in re.findall(r'<td class="id"><a href="/show_bug.cgi\?id=(\d+)">',
                                       page.text)]


def test_a_list_with_bugzillas_query_string(app, bugs):
    page = Browser(app).get("/buglist.cgi?short_desc=Widget&short_desc_type=allwordssubstr"
                            "&bug_status=__open__&columnlist=priority,short_desc"
                            "&order=bug_id%20DESC")
    assert page.status_code == 200
    assert listed(page) == sorted(bugs[1:], reverse=True)
    assert "3 bugs found." in text_of(page.text)
    headings = re.findall(r'<th scope="col"><a href="[^"]*">([^<]+)</a></th>', page.text)
    assert headings == ["Bug", "Priority", "Summary"]


def test_columns_sort_links_toggle_and_keep_the_query(app, bugs):
    browser = Browser(app)
    page = browser.get("/buglist.cgi?short_desc=Widget&columnlist=priority&order=priority")
    link = re.search(r'<a href="([^"]+)">Priority</a>', page.text).group(1)
    assert "order=priority+DESC" in link and "short_desc=Widget" in link
    ordered = browser.get(link.replace("&amp;", "&"))
    priorities = re.findall(r"<td>(Highest|High|Normal|Low)</td>", ordered.text)
    assert priorities == ["Low", "Normal", "High", "Highest"]


def test_paging_and_the_count(app, bugs):
    browser = Browser(app)
    first = browser.get("/buglist.cgi?short_desc=Widget&order=bug_id&limit=2")
    assert listed(first) == bugs[:2]
    assert "4 bugs found; showing 1 to 2." in text_of(first.text)
    following = re.search(r'<a href="([^"]+)">Next 2</a>', first.text).group(1)
    second = browser.get(following.replace("&amp;", "&"))
    assert listed(second) == bugs[2:]


def test_a_csv_download_of_the_list(app, bugs, services):
    update_bug(services, bugs[1], summary="=HYPERLINK(\"http://evil\")")
    result = Browser(app).get("/buglist.cgi?short_desc_type=substring&short_desc=e"
                              "&columnlist=short_desc,priority&order=bug_id&ctype=csv")
    assert result.headers["Content-Type"] == "text/csv; charset=UTF-8"
    assert result.headers["Content-Disposition"].startswith("attachment")
    rows = list(csv.reader(io.StringIO(result.text)))
    assert rows[0] == ["bug_id", "short_desc", "priority"]
    by_id = {int(row[0]): row for row in rows[1:]}
    assert by_id[bugs[1]][1] == "'=HYPERLINK(\"http://evil\")"    # never a formula


def headings_of(page):
    return re.findall(r'<th scope="col"><a href="[^"]*">([^<]+)</a></th>', page.text)


def test_the_column_chooser_sends_each_ticked_box_and_all_are_shown(app, bugs):
    browser = Browser(app)
    page = browser.get("/buglist.cgi?short_desc=Widget&columnlist=priority")
    chooser = page.text.split("<summary>Change columns</summary>", 1)[1].split("</form>", 1)[0]
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', chooser))
    assert "columnlist" not in hidden
    # The form as a browser sends it: one columnlist per ticked box.
    chosen = browser.get("/buglist.cgi", **dict(hidden, columnlist=["priority", "bug_severity",
                                                                    "short_desc"]))
    assert headings_of(chosen) == ["Bug", "Priority", "Severity", "Summary"]
    mixed = browser.get("/buglist.cgi?short_desc=Widget&columnlist=priority,bug_severity"
                        "&columnlist=short_desc&columnlist=priority")
    assert headings_of(mixed) == ["Bug", "Priority", "Severity", "Summary"]
    download = browser.get("/buglist.cgi?short_desc=Widget&columnlist=priority"
                           "&columnlist=short_desc&ctype=csv")
    assert next(csv.reader(io.StringIO(download.text))) == ["bug_id", "priority", "short_desc"]
    # Edit this search keeps every column.
    edit = browser.get("/query.cgi?short_desc=Widget&columnlist=priority&columnlist=short_desc")
    assert 'name="columnlist" value="priority,short_desc"' in edit.text


def test_a_saved_search_keeps_every_chosen_column(app, bugs):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/buglist.cgi?short_desc=Widget&columnlist=priority&columnlist=short_desc")
    query = re.search(r'name="query" value="([^"]+)"', page.text).group(1).replace("&amp;", "&")
    browser.post("/buglist.cgi", {"newqueryname": "Columns", "query": query})
    again = browser.get("/buglist.cgi?cmdtype=runnamed&namedcmd=Columns")
    assert headings_of(again) == ["Bug", "Priority", "Summary"]


def test_quicksearch_of_a_number_opens_the_bug(app, bugs):
    result = Browser(app).get(f"/buglist.cgi?quicksearch={bugs[1]}", follow=False)
    assert result.status_code == 303 and result.headers["Location"] == f"/show_bug.cgi?id={bugs[1]}"
    words = Browser(app).get("/buglist.cgi?quicksearch=misbehaves")
    assert sorted(listed(words)) == sorted(bugs[1:])
    assert 'value="misbehaves"' in words.text       # the box keeps the words


def test_a_bad_search_is_the_apis_error(app, bugs):
    page = Browser(app).get("/buglist.cgi?f1=no_such_field&o1=equals&v1=1")
    assert page.status_code == 400 and "108" in page.text


def test_credentials_in_a_list_link_are_not_used(app, bugs, services):
    key = services.api_key(ADMIN)
    page = Browser(app).get(f"/buglist.cgi?product=TestProduct&Bugzilla_api_key={key}")
    assert "Secret hole" not in page.text


def test_saved_searches_are_named_reused_and_forgotten(app, bugs, services):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/buglist.cgi?short_desc=Widget&bug_status=__open__&columnlist=priority")
    query = re.search(r'name="query" value="([^"]+)"', page.text).group(1).replace("&amp;", "&")
    result = browser.post("/buglist.cgi", {"newqueryname": "My widgets", "query": query})
    assert "The search has been saved." in result.text
    assert ">My widgets</a>" in result.text          # in the saved searches bar
    again = browser.get("/buglist.cgi?cmdtype=runnamed&namedcmd=My%20widgets")
    assert sorted(listed(again)) == sorted(bugs[1:])
    prefs = browser.get("/userprefs.cgi?tab=saved-searches")
    assert "My widgets" in prefs.text
    browser.post("/buglist.cgi", {"action": "forget", "name": "My widgets"})
    assert services.query("SELECT COUNT(*) FROM saved_searches") == [(0,)]
    missing = browser.get("/buglist.cgi?cmdtype=runnamed&namedcmd=My%20widgets")
    assert missing.status_code == 404


def test_saving_a_search_needs_a_sign_in(app, bugs, services):
    browser = Browser(app)
    page = browser.get("/buglist.cgi?short_desc=Widget")
    assert 'name="newqueryname"' not in page.text
    assert browser.post("/buglist.cgi", {"newqueryname": "x", "query": "short_desc=x"},
                        token=False).status_code == 403
    browser.get("/login")       # a form token of the anonymous visitor
    result = browser.post("/buglist.cgi", {"newqueryname": "x", "query": "short_desc=x"})
    assert result.status_code == 401
    assert services.query("SELECT COUNT(*) FROM saved_searches") == [(0,)]


def test_the_search_form_fills_in_from_its_query(app, bugs):
    page = Browser(app).get("/query.cgi?short_desc=Widget&bug_status=NEW&bug_status=CONFIRMED"
                            "&product=TestProduct")
    assert 'id="short_desc" name="short_desc" type="text" size="40" value="Widget"' in page.text
    assert "<option selected>CONFIRMED</option>" in page.text
    assert "<option selected>TestProduct</option>" in page.text
    assert 'action="/buglist.cgi" class="search-form"' in page.text.replace(
        'method="get" ', "")


def test_the_search_forms_query_runs(app, bugs):
    # What the search form sends when only the summary is filled in.
    page = Browser(app).get("/buglist.cgi?short_desc_type=allwordssubstr&short_desc=Widget"
                            "&longdesc_type=allwordssubstr&longdesc=&keywords_type=allwords"
                            "&keywords=&status_whiteboard=&emailtype1=substring&email1="
                            "&emailassigned_to1=1&emailreporter1=1&creation_time="
                            "&chfieldfrom=&chfieldto=&f1=&o1=&v1=&f2=&o2=&v2=")
    assert page.status_code == 200 and sorted(listed(page)) == sorted(bugs)


@pytest.mark.parametrize("path, text", [
    ("/show_bug.cgi?id={bug}", "Public crash on start"),
    ("/show_bug.cgi?id=crash-alias", "Public crash on start"),
    ("/buglist.cgi?bug_id={bug}&columnlist=short_desc", "Public crash on start"),
    ("/enter_bug.cgi?product=TestProduct", "File a bug in TestProduct"),
    ("/attachment.cgi?id={file}&action=edit", "File trace.txt"),
    ("/attachment.cgi?id={file}", "Traceback: boom"),
    ("/show_activity.cgi?id={bug}", "Changes made to"),
    ("/query.cgi", "Search for bugs"),
    ("/index.cgi", "My work"),
])
def test_old_bugzilla_links_answer_as_pages(app, world, services, path, text):
    update_bug(services, world.bug, alias={"add": ["crash-alias"]})
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get(path.format(bug=world.bug, file=world.public_file))
    assert page.status_code == 200 and text in page.text
