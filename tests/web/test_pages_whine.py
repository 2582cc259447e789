"""editwhines.cgi: scheduled searches for members of bz_canusewhines,
under Bugzilla's form names, with the form token; refusals shown on the
form with their reason, nothing kept of them; anonymous visitors and
plain users turned away."""

import re

import pytest
from freezegun import freeze_time

from bug_support import editbugs_only_for_members
from bugsvc.services import saved_search
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


WHINER, BOSS = "whiner@example.com", "boss@example.com"


@pytest.fixture
def world(services):
    world = World(services)
    services.add_user(WHINER, password="whiner-password-1", groups=["bz_canusewhines"])
    services.add_user(BOSS, password="boss-password-1",
                      groups=["bz_canusewhines", "bz_canusewhineatothers"])
    for login in (WHINER, BOSS):
        services.call(saved_search.create, {"name": "Open", "query": "bug_status=__open__"},
                      as_user=login)
    return world


def signed_in(app, login, password):
    browser = Browser(app)
    browser.login(login, password)
    return browser


def first_event(services):
    return services.query("SELECT id FROM whine_events ORDER BY id")[0][0]


def test_anonymous_visitors_and_plain_users_are_turned_away(app, world, services):
    # The plain user is no member of editbugs, so none of bz_canusewhines
    # (editbugs is one of its member groups, as in Bugzilla).
    editbugs_only_for_members(services)
    anonymous = Browser(app)
    page = anonymous.get("/editwhines.cgi")
    assert page.status_code == 401 and "Sign in" in page.text
    plain = signed_in(app, PLAIN, PASSWORDS[PLAIN])
    page = plain.get("/editwhines.cgi")
    assert page.status_code == 401
    assert "bz_canusewhines" in text_of(page.text)
    page = plain.post("/editwhines.cgi", {"add_event": "1"})
    assert page.status_code == 401
    assert services.query("SELECT COUNT(*) FROM whine_events") == [(0,)]


def test_a_member_adds_an_event_with_a_schedule_and_a_search(app, world, services):
    browser = signed_in(app, WHINER, "whiner-password-1")
    browser.get("/editwhines.cgi")
    # Without the form token nothing is made.
    refused = browser.post("/editwhines.cgi", {"add_event": "1"}, token=False)
    assert refused.status_code == 403
    browser.get("/editwhines.cgi")
    page = browser.post("/editwhines.cgi", {"add_event": "1"})
    assert page.status_code == 200 and "Event 1" in page.text
    event = first_event(services)
    page = browser.post("/editwhines.cgi", {
        "event": event, f"event_{event}_subject": "Morning list",
        f"event_{event}_body": "Look at these", "add_schedule": "1"})
    [(schedule, day, time)] = services.query("SELECT id, run_day, run_time FROM whine_schedules")
    assert (day, time) == ("Sun", "2")
    page = browser.post("/editwhines.cgi", {
        "event": event, f"event_{event}_subject": "Morning list",
        f"event_{event}_body": "Look at these", f"day_{schedule}": "MF",
        f"time_{schedule}": "8", "add_query": "1"})
    [(query, name)] = services.query("SELECT id, query_name FROM whine_queries")
    assert name == "Open"
    page = browser.post("/editwhines.cgi", {
        "event": event, f"event_{event}_subject": "Morning list",
        f"event_{event}_body": "Look at these", f"event_{event}_mailifnobugs": "1",
        f"day_{schedule}": "MF", f"time_{schedule}": "8", f"query_name_{query}": "Open",
        f"query_title_{query}": "My open bugs", f"query_sort_{query}": "3",
        f"query_onemailperbug_{query}": "1", "update": "1"})
    assert page.status_code == 200
    assert services.query("SELECT subject, body, mailifnobugs FROM whine_events") == [
        ("Morning list", "Look at these", 1)]
    assert services.query("SELECT run_day, run_time FROM whine_schedules") == [("MF", "8")]
    assert services.query("SELECT title, sortkey, onemailperbug FROM whine_queries") == [
        ("My open bugs", 3, 1)]
    assert 'value="Morning list"' in page.text and "Monday to Friday" in page.text
    # Removing the schedule, then the event.
    browser.post("/editwhines.cgi", {"event": event, f"day_{schedule}": "MF",
                                     f"time_{schedule}": "8",
                                     f"remove_schedule_{schedule}": "1", "update": "1"})
    assert services.query("SELECT COUNT(*) FROM whine_schedules") == [(0,)]
    browser.post("/editwhines.cgi", {"event": event, "remove_event": "1"})
    assert services.query("SELECT COUNT(*) FROM whine_events") == [(0,)]


def test_a_refusal_is_shown_on_the_form_and_changes_nothing(app, world, services):
    browser = signed_in(app, WHINER, "whiner-password-1")
    browser.get("/editwhines.cgi")
    browser.post("/editwhines.cgi", {"add_event": "1"})
    event = first_event(services)
    browser.post("/editwhines.cgi", {"event": event, "add_schedule": "1"})
    [(schedule,)] = services.query("SELECT id FROM whine_schedules")
    # Mailing someone else needs bz_canusewhineatothers, which the whiner lacks.
    page = browser.post("/editwhines.cgi", {
        "event": event, f"event_{event}_subject": "Changed", f"day_{schedule}": "All",
        f"time_{schedule}": "9", f"mailto_type_{schedule}": "0", f"mailto_{schedule}": BOSS})
    assert page.status_code == 401
    alert = re.search(rf'id="event-{event}-error">([^<]*)<', page.text)
    assert alert and "bz_canusewhineatothers" in alert.group(1)
    assert services.query("SELECT subject FROM whine_events") == [("",)]
    assert services.query("SELECT run_day, run_time FROM whine_schedules") == [("Sun", "2")]
    # Only members of bz_canusewhineatothers are offered another recipient.
    assert f'name="mailto_type_{schedule}"' not in page.text


def test_whining_at_others_on_the_form(app, world, services):
    browser = signed_in(app, BOSS, "boss-password-1")
    browser.get("/editwhines.cgi")
    browser.post("/editwhines.cgi", {"add_event": "1"})
    event = first_event(services)
    browser.post("/editwhines.cgi", {"event": event, "add_schedule": "1"})
    [(schedule,)] = services.query("SELECT id FROM whine_schedules")
    page = browser.get("/editwhines.cgi")
    assert f'name="mailto_type_{schedule}"' in page.text
    with freeze_time("2026-03-02 09:30:00"):
        page = browser.post("/editwhines.cgi", {
            "event": event, f"day_{schedule}": "All", f"time_{schedule}": "9",
            f"mailto_type_{schedule}": "1", f"mailto_{schedule}": "staff", "update": "1"})
    assert services.query("SELECT mailto_type, run_next FROM whine_schedules") == [
        (1, "2026-03-02 09:00:00.000000")]                 # saved in its hour: due at once


def test_the_home_page_links_to_it_for_members_only(app, world, services):
    editbugs_only_for_members(services)
    member = signed_in(app, WHINER, "whiner-password-1")
    assert 'href="/editwhines.cgi"' in member.get("/").text
    plain = signed_in(app, PLAIN, PASSWORDS[PLAIN])
    assert 'href="/editwhines.cgi"' not in plain.get("/").text
