"""Every page, for an anonymous visitor, a plain user, an insider and an
administrator: what it shows and what it refuses. A page shows exactly what
the API shows the same caller: restricted bugs, private comments and
private attachments are invisible to those who may not see them, and a
hidden bug answers like a missing one."""

import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from conftest import world_fixture
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, csp, text_of


VISITORS = ("anonymous", PLAIN, INSIDER, ADMIN)


@world_fixture
def world(services):
    return World(services)


def browser_for(app, who):
    browser = Browser(app)
    if who != "anonymous":
        browser.login(who, ADMIN_PASSWORD if who == ADMIN else PASSWORDS[who])
    return browser


@pytest.fixture(params=VISITORS)
def visitor(request, app, world):
    return request.param, browser_for(app, request.param)


# Pages everyone may open ----------------------------------------------------------------

PUBLIC_PAGES = ("/", "/index.cgi", "/query.cgi", "/buglist.cgi?bug_status=__open__",
                "/show_bug.cgi", "/login")


@pytest.mark.parametrize("path", PUBLIC_PAGES)
def test_public_pages_open_for_everyone_with_the_page_headers(visitor, path):
    who, browser = visitor
    result = browser.get(path)
    assert result.status_code == 200, result.text
    policy = csp(result)
    assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert policy["script-src"] == "'self'" and "unsafe" not in result.headers[
        "Content-Security-Policy"]
    assert result.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script>" not in result.text and " on" + "click=" not in result.text
    assert result.headers["Cache-Control"] == ("no-cache" if who == "anonymous" else "no-store")


def test_the_bug_page_shows_what_each_visitor_may_see(visitor, world):
    who, browser = visitor
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Public crash on start" in text and "A public note" in text
    assert "File trace.txt" in text
    sees_private = who in (INSIDER, ADMIN)
    assert ("The customer is ACME" in text) is sees_private
    assert ("File contract.txt" in text) is sees_private
    # The form: none for the anonymous visitor, the private switch for insiders only.
    assert ('id="changeform"' in page.text) is (who != "anonymous")
    assert ('name="comment_is_private"' in page.text) is sees_private
    assert ('name="comment_private"' in page.text) is sees_private


def test_a_restricted_bug_answers_like_a_missing_one(visitor, world):
    who, browser = visitor
    hidden = browser.get(f"/show_bug.cgi?id={world.secret}")
    missing = browser.get("/show_bug.cgi?id=999999")
    if who == ADMIN:
        assert hidden.status_code == 200 and "Secret hole" in hidden.text
        return
    assert hidden.status_code == missing.status_code == 401
    assert "Secret hole" not in hidden.text

    def shown(page, number):
        return re.sub(rf"#{number}\b|id={number}\b|%3D{number}\b", "#N", text_of(page.text)
                      + " ".join(re.findall(r'value="([^"]*)"', page.text)))
    assert shown(hidden, world.secret) == shown(missing, 999999)


@pytest.mark.parametrize("path", ["/show_activity.cgi?id={secret}",
                                  "/attachment.cgi?bugid={secret}&action=enter",
                                  "/buglist.cgi?quicksearch=hole",
                                  "/buglist.cgi?bug_id={secret}&ctype=csv",
                                  "/buglist.cgi?product=TestProduct&ctype=csv"])
def test_restricted_bugs_stay_out_of_every_other_page(visitor, world, path):
    who, browser = visitor
    result = browser.get(path.format(secret=world.secret))
    if who == ADMIN:
        return
    assert "Secret hole" not in result.text
    assert f"show_bug.cgi?id={world.secret}" not in result.text


def test_lists_leave_restricted_bugs_out(visitor, world):
    who, browser = visitor
    for path in ("/", "/buglist.cgi?product=TestProduct"):
        page = browser.get(path)
        # The administrator is the default assignee: its home lists the bug too.
        assert ("Secret hole" in page.text) is (who == ADMIN)
        if path != "/":
            assert ("Public crash" in page.text)


def test_private_attachments_are_refused_to_those_who_may_not_see_them(visitor, world):
    who, browser = visitor
    content = browser.get(f"/attachment.cgi?id={world.private_file}")
    details = browser.get(f"/attachment.cgi?id={world.private_file}&action=edit")
    if who in (INSIDER, ADMIN):
        assert content.status_code == 200 and content.text == "ACME contract terms"
        assert details.status_code == 200
    else:
        assert content.status_code == details.status_code == 401
        assert "ACME" not in content.text and "contract" not in details.text
    public = browser.get(f"/attachment.cgi?id={world.public_file}")
    assert public.status_code == 200 and public.text == "Traceback: boom"


def test_the_history_page_shows_what_the_api_history_shows(visitor, world, services):
    from bugsvc.services import bug as bug_service
    services.call(bug_service.update, {"ids": [world.bug], "priority": "High"}, as_user=ADMIN)
    who, browser = visitor
    page = browser.get(f"/show_activity.cgi?id={world.bug}")
    assert page.status_code == 200 and "High" in page.text


# Pages that need a sign-in ----------------------------------------------------------------

SIGNED_IN_PAGES = ("/enter_bug.cgi", "/enter_bug.cgi?product=TestProduct",
                   "/attachment.cgi?bugid={bug}&action=enter", "/userprefs.cgi",
                   "/userprefs.cgi?tab=apikey", "/userprefs.cgi?tab=saved-searches",
                   "/admin.cgi", "/logout")


@pytest.mark.parametrize("path", SIGNED_IN_PAGES)
def test_pages_for_signed_in_users_offer_the_sign_in_form_to_others(visitor, world, path):
    who, browser = visitor
    result = browser.get(path.format(bug=world.bug))
    if who == "anonymous":
        assert (result.status_code, "/logout" in path) in ((401, False), (200, True))
        if "/logout" not in path:
            assert 'name="Bugzilla_password"' in result.text
    else:
        assert result.status_code == 200, result.text


ADMIN_PAGES = ("/editproducts.cgi?product=TestProduct",
               "/editcomponents.cgi?product=TestProduct&component=TestComponent",
               "/editusers.cgi", "/editusers.cgi?action=edit&userid=1", "/editgroups.cgi",
               "/editgroups.cgi?action=changeform&group=1", "/editparams.cgi")


@pytest.mark.parametrize("path", ADMIN_PAGES)
def test_administration_pages_are_for_their_groups(visitor, path):
    who, browser = visitor
    result = browser.get(path)
    if who == ADMIN:
        assert result.status_code == 200, result.text
    else:
        assert result.status_code == 401
        assert ("Sign in" if who == "anonymous" else "Sorry") in result.text


def test_the_administration_index_lists_the_visitors_areas(app, world):
    assert "Parameters" in browser_for(app, ADMIN).get("/admin.cgi").text
    plain = browser_for(app, PLAIN).get("/admin.cgi")
    assert "You are in none of the groups" in plain.text
    assert 'href="/admin.cgi"' not in plain.text


def test_an_unknown_page_stays_an_error_for_programs(client):
    assert client.simulate_get("/no_such.cgi").json["code"] == 32614


def test_a_page_served_again_to_visitors_not_signed_in_follows_every_change(
        app, world, services):
    from bugsvc.services import comment
    browser = Browser(app)
    first = browser.get(f"/show_bug.cgi?id={world.bug}")
    assert browser.get(f"/show_bug.cgi?id={world.bug}").text == first.text
    services.call(comment.add, {"id": world.bug, "comment": "A newer note"}, as_user=ADMIN)
    assert "A newer note" in browser.get(f"/show_bug.cgi?id={world.bug}").text
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE comments SET is_private = 1 WHERE body = 'A newer note'")
    assert "A newer note" not in browser.get(f"/show_bug.cgi?id={world.bug}").text
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                     (world.bug, world.secret_group))
    assert browser.get(f"/show_bug.cgi?id={world.bug}").status_code == 401
    # A signed-in visitor's page is always its own.
    plain = browser_for(app, PLAIN)
    assert plain.get(f"/show_bug.cgi?id={world.secret}").status_code == 401
