"""Scheduled searches mailed ("whining", editwhines.cgi): who may schedule
them and mail them to whom, when they run (days, hours and intervals in
the instance's time zone, at once when saved during their hour, once per
run however many processes run them, again after a restart during the
hour), and that each mail lists only the bugs its recipient may see, sent
through a real SMTP server."""

import threading
from datetime import date, datetime, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bug_support import add_to_group, editbugs_only_for_members, file_bug
from bugsvc.bugs import whine
from bugsvc.cli import main
from bugsvc.errors import ServiceError
from bugsvc.services import saved_search, whine as whine_service
from notify_support import deliver, use_smtp
from page_support import INSIDER, PLAIN, World


WHINER = "whiner@example.com"
BOSS = "boss@example.com"


@pytest.fixture
def world(services):
    world = World(services)        # a public bug, and a `secret` one only the admin may see
    services.add_user(WHINER, password="whiner-password-1", groups=["bz_canusewhines"])
    services.add_user(BOSS, password="boss-password-1",
                      groups=["bz_canusewhines", "bz_canusewhineatothers"])
    for login in (WHINER, BOSS, ADMIN):
        services.call(saved_search.create, {"name": "Crashes and holes",
                                            "query": "bug_status=__open__&order=bug_id"},
                      as_user=login)
    return world


def schedule(services, who, day="All", time="9", mailto_type=0, mailto="", onemailperbug=False,
             mailifnobugs=False, now=None):
    """A new event of `who`'s with one schedule and the saved search; returns its id."""
    event_id = services.call(whine_service.create_event, {}, as_user=who, now=now)["id"]
    services.call(whine_service.update_event, {
        "id": event_id, "subject": "Open bugs", "body": "Your open bugs:",
        "mailifnobugs": mailifnobugs,
        "schedules": [{"day": day, "time": time, "mailto_type": mailto_type,
                       "mailto": mailto}],
        "queries": [{"name": "Crashes and holes", "title": "Open", "sortkey": 1,
                     "onemailperbug": onemailperbug}]}, as_user=who, now=now)
    return event_id


def outbox(services):
    return services.query("SELECT user_id, kind FROM outbox_messages WHERE kind = 'whine'"
                          " ORDER BY id")


def whines(smtp, login=None):
    """The whine mails the sink took (for `login`)."""
    mails = smtp.to(login) if login else [mail for _, _, mail in smtp.mails]
    return [mail for mail in mails if mail["X-Bugzilla-Type"] == "whine"]


def at(text):
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


# Who may ------------------------------------------------------------------------------------

@pytest.mark.parametrize("who, code", [(None, 410), (PLAIN, 304)])
def test_only_members_of_bz_canusewhines_schedule_searches(services, world, who, code):
    # editbugs (whose regexp '.*' makes every account a member by default)
    # is a member of bz_canusewhines, as in Bugzilla: made an ordinary
    # group, it leaves the plain user outside.
    editbugs_only_for_members(services)
    for call, params in ((whine_service.get, {}), (whine_service.create_event, {}),
                         (whine_service.update_event, {"id": 1}),
                         (whine_service.delete_event, {"id": 1})):
        with pytest.raises(ServiceError) as refused:
            services.call(call, params, as_user=who)
        assert refused.value.code == code
    assert services.query("SELECT COUNT(*) FROM whine_events") == [(0,)]


def test_by_default_every_account_schedules_searches_through_editbugs(services, world):
    """Bugzilla's installation makes editbugs and bz_canusewhineatothers
    members of bz_canusewhines, and editbugs' regexp takes in every account:
    a plain user may schedule searches until editbugs is made an ordinary
    group."""
    assert services.call(whine_service.get, {}, as_user=PLAIN)["events"] == []
    assert services.call(whine_service.create_event, {}, as_user=PLAIN)["id"]
    editbugs_only_for_members(services)
    with pytest.raises(ServiceError) as refused:
        services.call(whine_service.get, {}, as_user=PLAIN)
    assert refused.value.code == 304


def test_a_member_keeps_events_and_nobody_else_sees_or_changes_them(services, world):
    event_id = schedule(services, WHINER)
    events = services.call(whine_service.get, {}, as_user=WHINER)["events"]
    assert [(e["id"], e["subject"], e["body"]) for e in events] == [
        (event_id, "Open bugs", "Your open bugs:")]
    assert [(s["day"], s["time"], s["mailto"]) for s in events[0]["schedules"]] == [
        ("All", "9", WHINER)]
    assert [(q["name"], q["title"]) for q in events[0]["queries"]] == [
        ("Crashes and holes", "Open")]
    assert services.call(whine_service.get, {}, as_user=BOSS)["events"] == []
    with pytest.raises(ServiceError) as refused:
        services.call(whine_service.delete_event, {"id": event_id}, as_user=BOSS)
    assert refused.value.code == 51
    services.call(whine_service.delete_event, {"id": event_id}, as_user=WHINER)
    assert services.query("SELECT COUNT(*) FROM whine_schedules") == [(0,)]
    # Made, changed and deleted: each in the audit log, by the whiner.
    assert services.query(
        "SELECT u.login, a.removed, a.added FROM audit_log a JOIN users u ON u.id = a.user_id"
        " WHERE a.field = 'whine_event' ORDER BY a.id") == [
        (WHINER, "", str(event_id)), (WHINER, "", str(event_id)), (WHINER, str(event_id), "")]


@pytest.mark.parametrize("mailto_type, mailto", [(0, PLAIN), (1, "staff")])
def test_mailing_others_needs_bz_canusewhineatothers(services, world, mailto_type, mailto):
    event_id = schedule(services, WHINER)
    with pytest.raises(ServiceError) as refused:
        services.call(whine_service.update_event,
                      {"id": event_id, "schedules": [{"day": "All", "time": "9",
                                                      "mailto_type": mailto_type,
                                                      "mailto": mailto}]},
                      as_user=WHINER)
    assert refused.value.code == 304
    # Nothing changed: the schedule to oneself stays.
    assert services.query("SELECT run_day, mailto_id FROM whine_schedules") == [
        ("All", services.user_id(WHINER))]
    event_id = schedule(services, BOSS, mailto_type=mailto_type, mailto=mailto)
    assert services.query("SELECT mailto_type FROM whine_schedules s JOIN whine_events e"
                          " ON e.id = s.event_id WHERE e.id = ?", (event_id,)) == [
        (mailto_type,)]


@pytest.mark.parametrize("change, code", [
    ({"schedules": [{"day": "Someday", "time": "9"}]}, 32000),
    ({"schedules": [{"day": "All", "time": "25"}]}, 32000),
    ({"schedules": [{"day": "All", "time": "9", "mailto": "nobody@example.com"}]}, 51),
    ({"queries": [{"name": "Not saved"}]}, 51),
    ({"subject": "two\nlines"}, 32000),
    ({"schedules": [{"id": 999999, "day": "All", "time": "9"}]}, 51),
    ({"schedules": ["All"]}, 53),
])
def test_refused_changes_store_nothing(services, world, change, code):
    event_id = schedule(services, BOSS)
    tables = ("whine_schedules", "whine_queries", "whine_events")
    before = [services.table(table) for table in tables]
    with pytest.raises(ServiceError) as refused:
        services.call(whine_service.update_event, dict({"id": event_id}, **change),
                      as_user=BOSS)
    assert refused.value.code == code
    assert [services.table(table) for table in tables] == before


# When --------------------------------------------------------------------------------------

@pytest.mark.parametrize("day, time, now, first, expected", [
    ("All", "9", "2026-03-02 08:59:00", False, "2026-03-02 09:00:00"),
    ("All", "9", "2026-03-02 09:00:00", False, "2026-03-03 09:00:00"),
    ("All", "9", "2026-03-02 09:40:00", True, "2026-03-02 09:00:00"),    # saved in its hour
    ("All", "9", "2026-03-02 10:00:00", True, "2026-03-03 09:00:00"),
    ("MF", "9", "2026-03-06 10:00:00", False, "2026-03-09 09:00:00"),    # Friday -> Monday
    ("Wed", "0", "2026-03-02 10:00:00", False, "2026-03-04 00:00:00"),
    ("last", "23", "2026-02-10 00:00:00", False, "2026-02-28 23:00:00"),
    ("31", "6", "2026-04-01 07:00:00", False, "2026-04-30 06:00:00"),   # April has no 31st
    ("15", "6", "2026-03-15 07:00:00", False, "2026-04-15 06:00:00"),
    ("All", "15min", "2026-03-02 10:07:00", False, "2026-03-02 10:15:00"),
    ("All", "15min", "2026-03-02 10:07:00", True, "2026-03-02 10:07:00"),
    ("All", "60min", "2026-03-02 23:30:00", False, "2026-03-03 00:00:00"),
    ("Sat", "30min", "2026-03-02 10:00:00", True, "2026-03-07 00:00:00"),
])
def test_next_run(day, time, now, first, expected):
    assert whine.next_run(day, time, at(now), first=first) == at(expected)


def test_a_schedule_saved_during_its_hour_runs_at_once_then_the_next_day(services, world):
    with freeze_time("2026-03-02 09:40:00"):
        schedule(services, WHINER, time="9")
        assert whine.run_due(services.units) == 1
        assert whine.run_due(services.units) == 0             # once per run
    assert services.query("SELECT run_next FROM whine_schedules") == [
        ("2026-03-03 09:00:00.000000",)]
    with freeze_time("2026-03-03 08:59:59"):
        assert whine.run_due(services.units) == 0
    with freeze_time("2026-03-03 09:00:00"):
        assert whine.run_due(services.units) == 1
    assert len(outbox(services)) == 2


def test_a_restart_during_the_hour_runs_it_once(services, world):
    with freeze_time("2026-03-02 08:00:00"):
        schedule(services, WHINER, time="9")
    # Down from 08:30 to 09:25: the first round after the restart runs it.
    with freeze_time("2026-03-02 09:25:00"):
        assert whine.run_due(services.units) == 1
    # Restarted again within the hour: the run is not repeated.
    with freeze_time("2026-03-02 09:50:00"):
        assert whine.run_due(services.units) == 0
    assert len(outbox(services)) == 1


def test_several_runners_at_once_queue_one_mail(services, world):
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9")
        schedule(services, BOSS, time="9", mailto_type=1, mailto="staff")
        done = []
        threads = [threading.Thread(target=lambda: done.append(whine.run_due(services.units)))
                   for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    # One mail to the whiner, one to each member of staff (the insider and the admin).
    assert sum(done) == 3
    assert sorted(row[0] for row in outbox(services)) == sorted(
        services.user_id(login) for login in (WHINER, INSIDER, ADMIN))


def test_an_owner_who_left_bz_canusewhines_mails_nothing(services, world):
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9")
    whiner = services.user_id(WHINER)
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM user_groups WHERE user_id = ?", (whiner,))
    with freeze_time("2026-03-02 09:11:00"):
        assert whine.run_due(services.units) == 0
    assert services.query("SELECT run_next FROM whine_schedules") == [
        ("2026-03-03 09:00:00.000000",)]


def test_the_whine_command(services, world, config, capsys):
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9")
        assert main(["whine", "--db", config.database.text], {}) == 0
    assert "1 mails queued" in capsys.readouterr().out
    assert len(outbox(services)) == 1


# What is mailed ----------------------------------------------------------------------------

def test_each_mail_lists_only_what_its_recipient_may_see(services, world, smtp):
    use_smtp(services, smtp)
    add_to_group(services, BOSS, "staff")
    with freeze_time("2026-03-02 09:10:00"):
        # The boss mails staff (the insider, the admin and the boss) the boss's search.
        schedule(services, BOSS, time="9", mailto_type=1, mailto="staff")
        schedule(services, WHINER, time="9")
        whine.run_due(services.units)
        deliver(services)
    assert len(whines(smtp)) == 4
    for login, sees_secret in ((INSIDER, False), (BOSS, False), (WHINER, False),
                               (ADMIN, True)):
        [mail] = whines(smtp, login)
        text = mail.get_content()
        assert mail["Subject"] == "Open bugs" and mail["X-Bugzilla-Type"] == "whine"
        assert "Your open bugs:" in text and "Public crash on start" in text
        assert f"show_bug.cgi?id={world.bug}" in text
        assert ("Secret hole in the login" in text) == sees_secret
        assert (f"Bug {world.secret} " in text) == sees_secret


def test_a_bug_hidden_after_the_run_is_left_out_when_sent(services, world, smtp):
    use_smtp(services, smtp)
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9")
        whine.run_due(services.units)
    with services.db.transaction(write=True) as conn:     # restricted before it is sent
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                     (world.bug, world.secret_group))
    with freeze_time("2026-03-02 09:11:00"):
        deliver(services)
    [mail] = whines(smtp, WHINER)
    assert "Public crash on start" not in mail.get_content()


def test_one_mail_per_bug_and_nothing_when_nothing_is_found(services, world, smtp):
    use_smtp(services, smtp)
    other = file_bug(services, summary="Second public bug")
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9", onemailperbug=True)
        whine.run_due(services.units)
        deliver(services)
    subjects = sorted(mail["Subject"] for mail in whines(smtp, WHINER))
    assert subjects == sorted([f"Open bugs [Bug {world.bug}] Public crash on start",
                               f"Open bugs [Bug {other}] Second public bug"])
    services.call(saved_search.create, {"name": "Nothing", "query": "bug_id=999999"},
                  as_user=BOSS)
    with freeze_time("2026-03-02 10:10:00"):
        for mailifnobugs in (False, True):
            event_id = services.call(whine_service.create_event, {}, as_user=BOSS)["id"]
            services.call(whine_service.update_event, {
                "id": event_id, "subject": f"empty {mailifnobugs}",
                "mailifnobugs": mailifnobugs,
                "schedules": [{"day": "All", "time": "10"}],
                "queries": [{"name": "Nothing"}]}, as_user=BOSS)
        whine.run_due(services.units)
        deliver(services)
    assert [mail["Subject"] for mail in whines(smtp, BOSS)] == ["empty True"]


def test_whines_run_in_the_delivery_worker(services, world, smtp):
    use_smtp(services, smtp)
    with freeze_time("2026-03-02 09:10:00"):
        schedule(services, WHINER, time="9")
        deliver(services)
    assert len(whines(smtp, WHINER)) == 1
    assert date(2026, 3, 3).isoformat() in services.query(
        "SELECT run_next FROM whine_schedules")[0][0]
