"""Charts over time: the daily collection (bugsvc collectstats and the
delivery worker), stored once a day however many collect; public series
counted as an anonymous visitor sees the bugs, private ones as their
creator; chart.cgi drawing series as SVG with their table, CSV; saving and
deleting series with the form token."""

import csv
import io
import re
import threading
from datetime import date, datetime, timezone

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import file_bug, update_bug
from bugsvc.bugs import series
from bugsvc.cli import main
from bugsvc.errors import ServiceError
from bugsvc.notify.worker import Deliverer
from bugsvc.services import chart
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


DAY1, DAY2 = date(2026, 3, 1), date(2026, 3, 2)


@pytest.fixture
def world(services):
    world = World(services)          # a public bug and one only `secret` may see
    world.other = file_bug(services, summary="Another public one")
    return world


def series_id(services, category, subcategory, name, as_user=ADMIN):
    for item in services.call(chart.get, {}, as_user=as_user)["series"]:
        if (item["category"], item["subcategory"], item["name"]) == (category, subcategory,
                                                                     name):
            return item["id"]
    raise AssertionError(f"no series {category}/{subcategory}/{name}")


def counts(services, ids, as_user=ADMIN):
    found = services.call(chart.data, {"ids": ids}, as_user=as_user)["data"]
    return {int(key): [(row["date"], row["count"]) for row in rows]
            for key, rows in found.items()}


def test_public_series_count_what_anyone_may_see_private_ones_what_their_creator_may(
        services, world):
    mine = services.call(chart.create, {"category": "Mine", "subcategory": "-All-",
                                        "name": "Open", "query": "bug_status=__open__"},
                         as_user=ADMIN)["id"]
    assert series.collect(services.units, DAY1) > 0
    public = series_id(services, "TestProduct", "-All-", "All Open")
    by_component = series_id(services, "TestProduct", "TestComponent", "All Open")
    found = counts(services, [public, by_component, mine])
    # Three open bugs, one restricted: public series leave it out for everybody.
    assert found[public] == [("2026-03-01", 2)] and found[by_component] == [("2026-03-01", 2)]
    assert found[mine] == [("2026-03-01", 3)]
    # Nobody else sees a private series or its counts.
    assert "Mine" not in [s["category"] for s in services.call(chart.get, {}, as_user=PLAIN)
                          ["series"]]
    for who in (PLAIN, None):
        with pytest.raises(ServiceError) as refused:
            counts(services, [mine], as_user=who)
        assert refused.value.code == 51
    assert counts(services, [public], as_user=None)[public] == [("2026-03-01", 2)]


def test_a_day_is_counted_once_however_many_collect(services, world):
    series.collect(services.units, DAY1)
    public = series_id(services, "TestProduct", "-All-", "All Open")
    update_bug(services, world.other, status="RESOLVED", resolution="FIXED")
    # Several collectors at once, and again later the same day: one count, the first.
    threads = [threading.Thread(target=series.collect, args=(services.units, DAY1))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert series.collect(services.units, DAY1) == 0
    assert counts(services, [public])[public] == [("2026-03-01", 2)]
    series.collect(services.units, DAY2)
    assert counts(services, [public])[public] == [("2026-03-01", 2), ("2026-03-02", 1)]


def test_the_delivery_worker_collects_once_a_day(services, world):
    now = [datetime(2026, 3, 1, 0, 5, tzinfo=timezone.utc)]
    deliverer = Deliverer(services.units, clock=lambda: now[0])
    deliverer.run_once()
    public = series_id(services, "TestProduct", "-All-", "All Open")
    assert counts(services, [public])[public] == [("2026-03-01", 2)]
    now[0] = datetime(2026, 3, 2, 0, 1, tzinfo=timezone.utc)
    deliverer.run_once()
    deliverer.run_once()
    assert [day for day, _ in counts(services, [public])[public]] == ["2026-03-01",
                                                                      "2026-03-02"]


def test_the_collectstats_command(services, world, config, capsys):
    assert main(["collectstats", "--date", "2026-03-01", "--db", config.database.text], {}) == 0
    assert "2026-03-01" in capsys.readouterr().out
    public = series_id(services, "TestProduct", "-All-", "All Open")
    assert counts(services, [public])[public] == [("2026-03-01", 2)]
    assert main(["collectstats", "--date", "March", "--db", config.database.text], {}) == 2


@pytest.mark.parametrize("params, who, code", [
    ({"category": "C", "subcategory": "S", "name": "N", "query": "bug_status=NEW"}, None, 410),
    ({"category": "C", "subcategory": "S", "name": "", "query": "bug_status=NEW"}, PLAIN, 50),
    ({"category": "C", "subcategory": "S", "name": "N", "query": "f1=nope&o1=equals&v1=x"},
     PLAIN, 108),
    ({"category": "C", "subcategory": "S", "name": "N", "query": "bug_status=NEW",
      "is_public": True}, PLAIN, 32000),
    ({"category": "C", "subcategory": "S", "name": "N", "query": "bug_status=NEW",
      "frequency": 0}, PLAIN, 32000),
])
def test_refused_series_store_nothing(services, world, params, who, code):
    with pytest.raises(ServiceError) as refused:
        services.call(chart.create, params, as_user=who)
    assert refused.value.code == code
    assert services.query("SELECT COUNT(*) FROM series") == [(0,)]


# The pages ------------------------------------------------------------------------

def test_chart_page_draws_the_series_with_their_table_and_csv(app, services, world):
    series.collect(services.units, DAY1)
    update_bug(services, world.other, status="RESOLVED", resolution="FIXED")
    series.collect(services.units, DAY2)
    public = series_id(services, "TestProduct", "-All-", "All Open")
    closed = series_id(services, "TestProduct", "-All-", "All Closed")
    browser = Browser(app)
    menu = browser.get("/chart.cgi")
    assert f'name="line{public}" value="{public}"' in menu.text
    page = browser.get(f"/chart.cgi?action=wrap&line{public}={public}&line{closed}={closed}")
    assert page.status_code == 200
    svg = re.search(r"<svg .*?</svg>", page.text, re.S).group(0)
    assert 'role="img"' in svg and "<script" not in svg and "style=" not in svg
    text = text_of(page.text)
    assert "2026-03-01 2 0" in text and "2026-03-02 1 1" in text
    stacked = browser.get(f"/chart.cgi?action=wrap&line0={public}&line1={closed}&cumulate=1"
                          "&datefrom=2026-03-02&ctype=csv")
    rows = list(csv.reader(io.StringIO(stacked.text)))
    assert rows[1] == ["2026-03-02", "1", "2"]


def test_a_series_is_saved_and_deleted_with_the_form_token(app, services, world):
    browser = Browser(app)
    browser.login(PLAIN, PASSWORDS[PLAIN])
    form = browser.get("/chart.cgi?action=convert_search&product=TestProduct&bug_status=NEW")
    assert 'value="product=TestProduct&amp;bug_status=NEW"' in form.text
    fields = {"action": "create", "category": "Mine", "subcategory": "-All-", "name": "New",
              "query": "product=TestProduct&bug_status=CONFIRMED"}
    refused = browser.post("/chart.cgi", dict(fields, csrf_token="forged"))
    assert refused.status_code == 403
    assert services.query("SELECT COUNT(*) FROM series WHERE name = 'New'") == [(0,)]
    browser.get("/chart.cgi")
    shown = browser.post("/chart.cgi", fields)
    assert shown.status_code == 200 and "no counts" in text_of(shown.text)
    (saved,), = services.query("SELECT id FROM series WHERE name = 'New'")
    # Someone else may neither see nor delete it.
    other = Browser(app)
    other.login(ADMIN, ADMIN_PASSWORD)
    assert f'name="line{saved}"' not in other.get("/chart.cgi").text
    menu = browser.get("/chart.cgi")
    assert "Your series" in menu.text
    browser.post("/chart.cgi", {"action": "delete", "series_id": saved})
    assert services.query("SELECT COUNT(*) FROM series WHERE name = 'New'") == [(0,)]
    # Saved and deleted, each in the audit log, as a saved search is.
    assert services.query("SELECT u.login, a.removed, a.added FROM audit_log a"
                          " JOIN users u ON u.id = a.user_id WHERE a.field = 'series'"
                          " ORDER BY a.id") == [(PLAIN, "", "Mine / -All- / New"),
                                                (PLAIN, "Mine / -All- / New", "")]


def test_bad_chart_addresses(app, world):
    browser = Browser(app)
    assert browser.get("/chart.cgi?action=wrap").status_code == 400
    assert browser.get("/chart.cgi?action=wrap&line0=x").status_code == 400
    assert browser.get("/chart.cgi?action=wrap&line0=999").status_code == 404
    assert browser.get("/chart.cgi?action=wrap&line0=1&datefrom=soon").status_code == 400
