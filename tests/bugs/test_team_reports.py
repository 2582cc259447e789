"""The most duplicated bugs (duplicates.cgi) and time summaries
(summarize_time.cgi): only what the viewer may see is counted; time
summaries for the time-tracking group only."""

import csv
import io
import re
from datetime import datetime, timezone

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import editbugs_only_for_members, file_bug, update_bug
from bugsvc.errors import ServiceError
from bugsvc.services import report
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, text_of


LONG_AGO = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def world(services):
    world = World(services)     # world.bug public, world.secret only for `secret`
    world.popular = file_bug(services, summary="Popular crash")
    world.dupes = []
    for n in range(3):          # two duplicates marked long ago, one now
        dupe = file_bug(services, summary=f"Dupe {n}", now=LONG_AGO)
        update_bug(services, dupe, status="RESOLVED", resolution="DUPLICATE",
                   dupe_of=world.popular, now=LONG_AGO if n < 2 else None)
        world.dupes.append(dupe)
    hidden = file_bug(services, summary="Hidden dupe", groups=["secret"])
    update_bug(services, hidden, status="RESOLVED", resolution="DUPLICATE", dupe_of=world.popular)
    dupe_of_secret = file_bug(services, summary="Dupe of the secret")
    update_bug(services, dupe_of_secret, status="RESOLVED", resolution="DUPLICATE",
               dupe_of=world.secret)
    return world


def test_duplicates_count_only_what_the_viewer_may_see(services, world):
    for who in (None, PLAIN, INSIDER):
        found = services.call(report.duplicates, {}, as_user=who)["bugs"]
        assert [(b["id"], b["count"], b["delta"]) for b in found] == [(world.popular, 3, 1)]
    mine = services.call(report.duplicates, {}, as_user=ADMIN)["bugs"]
    assert {(b["id"], b["count"]) for b in mine} == {(world.popular, 4), (world.secret, 1)}
    assert mine[0]["id"] == world.popular
    assert services.call(report.duplicates, {"changedsince": "36500"},
                         as_user=PLAIN)["bugs"][0]["delta"] == 3
    assert services.call(report.duplicates, {"product": ["Nothing"]}, as_user=PLAIN)["bugs"] == []
    with pytest.raises(ServiceError):
        services.call(report.duplicates, {"sortby": "; DROP TABLE bugs"}, as_user=PLAIN)
    with pytest.raises(ServiceError):
        services.call(report.duplicates, {"maxrows": "0"}, as_user=PLAIN)


def test_the_duplicates_page_links_each_count_to_its_duplicates(app, world):
    browser = Browser(app)
    page = browser.get("/duplicates.cgi?changedsince=7&sortby=bug_id")
    assert page.status_code == 200
    link, count = re.search(r'<a href="(/buglist\.cgi\?[^"]+)">(\d+)</a>', page.text).groups()
    listed = text_of(browser.get(link.replace("&amp;", "&")).text)
    assert f"{count} bugs found" in listed and count == "3"
    rows = list(csv.reader(io.StringIO(browser.get("/duplicates.cgi?ctype=csv").text)))
    assert rows[0][:3] == ["Bug", "Duplicates", "Change"] and rows[1][:3] == [
        str(world.popular), "3", "1"]


@pytest.fixture
def hours(services, world):
    editbugs_only_for_members(services)          # time trackers: the administrator only
    update_bug(services, world.popular, work_time=2.5, comment={"body": "worked"},
               now=datetime(2026, 2, 1, tzinfo=timezone.utc))
    update_bug(services, world.popular, work_time=1, comment={"body": "more"},
               now=datetime(2026, 2, 10, tzinfo=timezone.utc))
    update_bug(services, world.secret, work_time=4, comment={"body": "secret work"})
    return world


def test_time_summary_for_time_trackers_only(services, hours):
    world = hours
    found = services.call(report.time_summary, {"id": f"{world.popular},{world.secret}"},
                          as_user=ADMIN)
    assert found["total"] == 7.5
    assert services.call(report.time_summary, {
        "id": str(world.popular), "start_date": "2026-02-05", "end_date": "2026-02-28"},
        as_user=ADMIN)["hours"] == [{"bug_id": world.popular, "summary": "Popular crash",
                                     "login": ADMIN, "real_name": "Administrator",
                                     "hours": 1.0}]
    for who, code in ((None, 410), (PLAIN, 32000), (INSIDER, 32000)):
        with pytest.raises(ServiceError) as refused:
            services.call(report.time_summary, {"id": str(world.popular)}, as_user=who)
        assert refused.value.code == code
    with pytest.raises(ServiceError) as refused:
        services.call(report.time_summary, {"id": "1", "start_date": "soon"}, as_user=ADMIN)
    assert refused.value.code == 56


def test_time_summary_counts_only_bugs_the_tracker_may_see(services, hours):
    world = hours
    services.add_user("tracker@example.com", password="tracker-password-1")
    from bug_support import add_to_group
    add_to_group(services, "tracker@example.com", "editbugs")
    found = services.call(report.time_summary, {"id": f"{world.popular},{world.secret}"},
                          as_user="tracker@example.com")
    assert found["bugs"] == [world.popular] and found["total"] == 3.5


def test_the_time_summary_page(app, hours):
    world = hours
    browser = Browser(app)
    assert browser.get("/summarize_time.cgi").status_code == 401      # sign in first
    browser.login(PLAIN, PASSWORDS[PLAIN])
    assert browser.get(f"/summarize_time.cgi?id={world.popular}").status_code == 400
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    assert admin.get("/summarize_time.cgi").status_code == 200
    page = admin.get(f"/summarize_time.cgi?id={world.popular}&group_by=owner")
    assert "3.5 hours worked on 1 bug" in text_of(page.text)
    rows = list(csv.reader(io.StringIO(admin.get(
        f"/summarize_time.cgi?id={world.popular}&ctype=csv").text)))
    assert rows[1] == [str(world.popular), "Popular crash", ADMIN, "3.5"]
