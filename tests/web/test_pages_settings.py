"""What the installation's parameters change on the web pages: the fields
the pages show and offer (usestatuswhiteboard, use_see_also,
letsubmitterchoosemilestone), while the API takes those fields whatever
they say (tests/bugs/test_parameter_effects.py)."""

import pytest

from accounts import ADMIN
from bug_support import file_bug, get_bug, set_param
from page_support import DEV, GONE, PLAIN, Browser, menu, signed_in, text_of


@pytest.fixture
def marked_bug(services):
    """A bug with a whiteboard and a See Also link, set over the API on a
    default installation (usestatuswhiteboard off)."""
    return file_bug(services, summary="Marked bug", whiteboard="[triage-me]",
                    see_also=["https://github.com/o/r/issues/7"])


# The status whiteboard and See Also ---------------------------------------------------------

@pytest.mark.parametrize("who", [None, PLAIN, ADMIN])
def test_the_bug_page_hides_the_whiteboard_while_usestatuswhiteboard_is_off(
        app, services, plain, marked_bug, who):
    browser = signed_in(app, who) if who else Browser(app)
    page = browser.get(f"/show_bug.cgi?id={marked_bug}")
    assert page.status_code == 200 and "Marked bug" in page.text
    assert "[triage-me]" not in page.text and 'name="whiteboard"' not in page.text
    assert "Whiteboard" not in text_of(page.text)
    set_param(services, "usestatuswhiteboard", "1")
    page = browser.get(f"/show_bug.cgi?id={marked_bug}")
    assert "[triage-me]" in page.text
    assert ('name="whiteboard"' in page.text) == (who is not None)


@pytest.mark.parametrize("who", [None, ADMIN])
def test_the_bug_page_hides_see_also_while_use_see_also_is_off(app, services, marked_bug, who):
    browser = signed_in(app, who) if who else Browser(app)
    assert "github.com/o/r/issues/7" in browser.get(f"/show_bug.cgi?id={marked_bug}").text
    set_param(services, "use_see_also", "0")
    page = browser.get(f"/show_bug.cgi?id={marked_bug}")
    assert "Marked bug" in page.text
    assert "github.com/o/r/issues/7" not in page.text and "See Also" not in text_of(page.text)
    assert 'name="see_also_add"' not in page.text and 'name="see_also_remove"' not in page.text


def test_the_bug_form_changes_no_hidden_field(app, services, marked_bug):
    browser = signed_in(app, ADMIN)
    browser.get(f"/show_bug.cgi?id={marked_bug}")
    set_param(services, "use_see_also", "0")
    page = browser.get(f"/show_bug.cgi?id={marked_bug}")
    token = page.text.split('name="update_token" value="', 1)[1].split('"', 1)[0]
    # A hand-made form naming the hidden fields: the page does not read them.
    browser.post("/process_bug.cgi", {
        "id": marked_bug, "update_token": token, "whiteboard": "[changed]",
        "see_also_remove": "https://github.com/o/r/issues/7", "comment": "Only a comment"})
    bug = get_bug(services, marked_bug)
    assert bug["whiteboard"] == "[triage-me]"
    assert bug["see_also"] == ["https://github.com/o/r/issues/7"]


def test_the_bug_form_changes_the_whiteboard_while_it_is_shown(app, services, marked_bug):
    set_param(services, "usestatuswhiteboard", "1")
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={marked_bug}")
    token = page.text.split('name="update_token" value="', 1)[1].split('"', 1)[0]
    browser.post("/process_bug.cgi", {"id": marked_bug, "update_token": token,
                                      "whiteboard": "[done]"})
    assert get_bug(services, marked_bug)["whiteboard"] == "[done]"


def test_the_new_bug_page_offers_the_whiteboard_see_also_and_milestone_by_their_parameters(
        app, services):
    browser = signed_in(app, ADMIN)
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (1, 'M2', 20)")
    page = browser.get("/enter_bug.cgi?product=TestProduct").text
    assert 'name="whiteboard"' not in page and 'name="see_also"' in page
    assert 'name="target_milestone"' not in page           # usetargetmilestone is off
    set_param(services, "usestatuswhiteboard", "1")
    set_param(services, "use_see_also", "0")
    set_param(services, "usetargetmilestone", "1")
    page = browser.get("/enter_bug.cgi?product=TestProduct").text
    assert 'name="whiteboard"' in page and 'name="see_also"' not in page
    assert 'name="target_milestone"' in page
    set_param(services, "letsubmitterchoosemilestone", "0")
    assert 'name="target_milestone"' not in browser.get("/enter_bug.cgi?product=TestProduct").text


def test_filing_from_the_page_takes_no_hidden_field(app, services):
    browser = signed_in(app, ADMIN)
    browser.get("/enter_bug.cgi?product=TestProduct")
    result = browser.post("/post_bug.cgi", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Filed from the page", "description": "Steps", "severity": "normal",
        "platform": "PC", "op_sys": "Linux", "whiteboard": "[sneaked]",
        "see_also": "https://github.com/o/r/issues/9"})
    assert result.status_code == 200
    bug_id = int(result.text.split("<span class=\"bug-id\">Bug ", 1)[1].split("<", 1)[0])
    bug = get_bug(services, bug_id)
    assert bug["whiteboard"] == "" and bug["see_also"] == ["https://github.com/o/r/issues/9"]


def test_the_search_form_and_column_chooser_offer_the_whiteboard_only_while_it_is_on(
        app, services, marked_bug):
    browser = Browser(app)
    assert 'name="status_whiteboard"' not in browser.get("/query.cgi").text
    columns = browser.get("/buglist.cgi?bug_id=%d" % marked_bug).text
    assert 'value="status_whiteboard"' not in columns
    # A list whose address names the column still shows it, as Bugzilla's does.
    named = browser.get(f"/buglist.cgi?bug_id={marked_bug}&columnlist=status_whiteboard").text
    assert "[triage-me]" in named
    set_param(services, "usestatuswhiteboard", "1")
    assert 'name="status_whiteboard"' in browser.get("/query.cgi").text
    assert 'value="status_whiteboard"' in browser.get(f"/buglist.cgi?bug_id={marked_bug}").text


# usemenuforusers -------------------------------------------------------------------------


def test_people_fields_are_text_boxes_while_usemenuforusers_is_off(app, people, marked_bug):
    page = signed_in(app, ADMIN).get(f"/show_bug.cgi?id={marked_bug}").text
    assert menu(page, "assigned_to") is None
    assert '<input id="assigned_to" name="assigned_to" type="text"' in page
    assert '<input id="cc_add" name="cc_add" type="text"' in page


def test_people_fields_are_menus_of_the_enabled_accounts_while_usemenuforusers_is_on(
        app, people, marked_bug):
    set_param(people, "usemenuforusers", "1")
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={marked_bug}").text
    assignees = menu(page, "assigned_to")
    assert assignees == [
        (ADMIN, f"Administrator <{ADMIN}>", True), (DEV, f"Dana Developer <{DEV}>", False),
        (PLAIN, f"Pat Plain <{PLAIN}>", False)]               # no disabled account
    assert [value for value, _, _ in menu(page, "cc_add")] == [ADMIN, DEV, PLAIN]
    assert 'id="cc_add" name="cc_add" multiple' in page
    # The menus send what the text boxes sent: the form works unchanged.
    token = page.split('name="update_token" value="', 1)[1].split('"', 1)[0]
    browser.post("/process_bug.cgi", {"id": marked_bug, "update_token": token,
                                      "assigned_to": DEV, "cc_add": [DEV, PLAIN]})
    bug = get_bug(people, marked_bug)
    assert bug["assigned_to"] == DEV and sorted(bug["cc"]) == [DEV, PLAIN]
    page = browser.get("/enter_bug.cgi?product=TestProduct").text
    assert menu(page, "assigned_to")[0] == ("", "the component's default", False)
    assert [value for value, _, _ in menu(page, "cc")] == [ADMIN, DEV, PLAIN]
    page = browser.get("/editcomponents.cgi?product=TestProduct&component=TestComponent").text
    assert (ADMIN, f"Administrator <{ADMIN}>", True) in menu(page, "default_assignee")
    page = browser.get("/userprefs.cgi?tab=email").text
    assert [value for value, _, _ in menu(page, "watching")] == [ADMIN, DEV, PLAIN]


def test_a_chosen_account_the_menu_does_not_list_stays_chosen(app, people, marked_bug):
    from bug_support import update_bug
    update_bug(people, marked_bug, assigned_to=GONE)
    set_param(people, "usemenuforusers", "1")
    page = signed_in(app, ADMIN).get(f"/show_bug.cgi?id={marked_bug}").text
    assert (GONE, GONE, True) in menu(page, "assigned_to")


def test_the_menu_lists_only_the_accounts_the_visitor_may_see(app, people, marked_bug):
    from bug_support import add_bug_group, editbugs_only_for_members, grant_visibility
    editbugs_only_for_members(people)
    add_bug_group(people, "team", members=[PLAIN, DEV, ADMIN])
    grant_visibility(people, "team", "team")
    people.add_user("stranger@example.com", real_name="Stranger")
    set_param(people, "usevisibilitygroups", "1")
    set_param(people, "usemenuforusers", "1")
    page = signed_in(app, PLAIN).get("/userprefs.cgi?tab=email").text
    assert [value for value, _, _ in menu(page, "watching")] == [ADMIN, DEV, PLAIN]
    assert "stranger@example.com" not in page and "Stranger" not in page


def test_the_menu_holds_at_most_maxusermatches_accounts(app, people):
    set_param(people, "usemenuforusers", "1")
    set_param(people, "maxusermatches", "2")
    page = signed_in(app, ADMIN).get("/userprefs.cgi?tab=email").text
    assert [value for value, _, _ in menu(page, "watching")] == [ADMIN, DEV]


# default_search_limit ------------------------------------------------------------------------

def bug_rows(page):
    return page.count('<td class="id">')


def test_default_search_limit_is_the_bug_lists_page_size(app, services):
    for number in range(5):
        file_bug(services, summary=f"Listed bug {number}")
    browser = Browser(app)
    assert bug_rows(browser.get("/buglist.cgi?bug_status=__open__").text) == 5
    set_param(services, "default_search_limit", "2")
    page = browser.get("/buglist.cgi?bug_status=__open__").text
    assert bug_rows(page) == 2 and "5 bugs found; showing 1 to 2" in text_of(page)
    assert "Next 2" in page
    # The list's address still decides when it names a limit; 0 is every bug.
    assert bug_rows(browser.get("/buglist.cgi?bug_status=__open__&limit=3").text) == 3
    assert bug_rows(browser.get("/buglist.cgi?bug_status=__open__&limit=0").text) == 5
    set_param(services, "default_search_limit", "0")
    assert bug_rows(browser.get("/buglist.cgi?bug_status=__open__").text) == 5
