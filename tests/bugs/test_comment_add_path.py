"""Adding a comment (Bug.add_comment): when the bug is named by its number
one statement finds, checks, numbers and stores the comment; otherwise (an
alias) the shared lookup finds the bug first; every way gives the same
answers and errors in the same order, and each refusal stores nothing (no
comment, no change of the bug, no outbox event)."""

import re
from datetime import datetime, timezone

import pytest

from bug_rows import ADMIN, add_bug, add_group, set_param, user_id
from bugsvc.bugs import activity, events
from bugsvc.errors import ServiceError, http_status
from bugsvc.services import comment
from rpc_support import xmlrpc_call


PLAIN = "plain@example.com"
INSIDER = "insider@example.com"
MEMBER = "member@example.com"
REPORTER = "reporter@example.com"
CC = "cc@example.com"
ASSIGNEE = "assignee@example.com"
QA = "qa@example.com"


@pytest.fixture
def world(services):
    for login in (PLAIN, INSIDER, MEMBER, REPORTER, CC, ASSIGNEE, QA):
        services.add_user(login)
    add_group(services, "insiders", members=[INSIDER])
    set_param(services, "insidergroup", "insiders")
    add_group(services, "secret", members=[MEMBER])
    public = add_bug(services, summary="Public", reporter=REPORTER, assigned_to=ASSIGNEE,
                     qa_contact=QA, cc=[CC, PLAIN], aliases=["public-one"],
                     description="Opening words.")
    hidden = add_bug(services, summary="Hidden", groups=["secret"], reporter=REPORTER,
                     assigned_to=ASSIGNEE, qa_contact=QA, cc=[CC], aliases=["hidden-one"])
    closed_doors = add_bug(services, summary="Not even for its people", groups=["secret"],
                           reporter=REPORTER, cc=[CC], is_cc_accessible=0,
                           is_creator_accessible=0)
    return {"public": public, "hidden": hidden, "closed": closed_doors}


def stored(services):
    """What a refused call must leave as it was: every comment, every bug's
    last change and remaining time, every outbox event."""
    return (services.query("SELECT id, bug_id, count, author_id, body, is_private, work_time"
                           " FROM comments ORDER BY id"),
            services.query("SELECT id, last_change_time, remaining_time FROM bugs ORDER BY id"),
            services.query("SELECT id, bug_id, data FROM outbox_events ORDER BY id"))


def add(services, as_user, bug, text="A comment", **more):
    return services.call(comment.add, {"id": bug, "comment": text, **more}, as_user=as_user)["id"]


def traced_add(services, as_user, bug, text="A comment"):
    """(the statements the call ran, as the connection traced them; the new
    comment's id)."""
    statements = []
    original = services.units.new_context

    def traced(conn, *args, **kwargs):
        conn.set_trace_callback(statements.append)
        return original(conn, *args, **kwargs)

    services.units.new_context = traced
    try:
        comment_id = add(services, as_user, bug, text)
    finally:
        services.units.new_context = original
    return statements, comment_id


def refused(services, as_user, bug, text="A comment", **more):
    """The error code of a refused call, checking that it stored nothing."""
    before = stored(services)
    with pytest.raises(ServiceError) as caught:
        add(services, as_user, bug, text, **more)
    assert stored(services) == before
    return caught.value.code


@pytest.mark.parametrize("name", ["{id}", "#{id}", " 000{id} ", "public-one", "PUBLIC-ONE"])
def test_every_way_of_naming_the_bug_numbers_the_comment_next(services, world, name):
    public = world["public"]
    first = add(services, PLAIN, name.format(id=public), "First")
    second = add(services, PLAIN, name.format(id=public), "Second")
    assert services.query("SELECT id, count, body FROM comments WHERE bug_id = ? AND count > 0"
                          " ORDER BY count", (public,)) == [(first, 1, "First"),
                                                             (second, 2, "Second")]


def test_the_event_holds_the_people_of_the_bug_as_the_comment_left_them(services, world):
    comment_id = add(services, PLAIN, world["public"])
    bug_id, changer, data = services.query(
        "SELECT bug_id, changer_id, data FROM outbox_events ORDER BY id DESC LIMIT 1")[0]
    data = events.load(data)
    assert (bug_id, changer) == (world["public"], user_id(services, PLAIN))
    assert data["comments"] == [comment_id]
    assert data["people"] == {"assigned_to": user_id(services, ASSIGNEE),
                              "qa_contact": user_id(services, QA),
                              "reporter": user_id(services, REPORTER),
                              "cc": sorted([user_id(services, CC), user_id(services, PLAIN)])}


def test_the_event_of_a_bug_without_cc_or_qa_contact(services, world):
    bare = add_bug(services, summary="Bare", reporter=PLAIN, assigned_to=ADMIN)
    add(services, PLAIN, bare)
    data = events.load(services.query("SELECT data FROM outbox_events WHERE bug_id = ?",
                                      (bare,))[0][0])
    assert data["people"] == {"assigned_to": user_id(services, ADMIN), "qa_contact": None,
                              "reporter": user_id(services, PLAIN), "cc": []}


@pytest.mark.parametrize("who", [MEMBER, REPORTER, CC, ASSIGNEE, QA])
def test_those_who_see_a_restricted_bug_may_comment_on_it(services, world, who):
    hidden = world["hidden"]
    comment_id = add(services, who, hidden, "Seen")
    assert services.query("SELECT bug_id, count, author_id FROM comments WHERE id = ?",
                          (comment_id,)) == [(hidden, 1, user_id(services, who))]
    assert services.query("SELECT COUNT(*) FROM outbox_events WHERE bug_id = ?",
                          (hidden,)) == [(1,)]


@pytest.mark.parametrize("who", [PLAIN, INSIDER, ADMIN])
def test_a_restricted_bug_is_102_by_number_and_100_by_alias_to_others(services, world, who):
    hidden = world["hidden"]
    assert refused(services, who, hidden) == 102
    assert refused(services, who, f"#{hidden}") == 102
    assert refused(services, who, "hidden-one") == 100
    assert services.query("SELECT COUNT(*) FROM comments WHERE bug_id = ?", (hidden,)) == [(1,)]


@pytest.mark.parametrize("who", [REPORTER, CC])
def test_reporter_and_cc_lose_a_bug_closed_to_them(services, world, who):
    assert refused(services, who, world["closed"]) == 102
    assert add(services, MEMBER, world["closed"])


def test_a_missing_bug_is_101_only_to_a_caller_who_sees_every_bug(services, world):
    missing = world["closed"] + 1000
    assert refused(services, PLAIN, missing) == 102
    assert refused(services, MEMBER, missing) == 101
    assert refused(services, MEMBER, "99999999999999999999999999") == 101
    assert refused(services, PLAIN, "99999999999999999999999999") == 102
    for value in ("no-such-alias", "", "12abc"):
        assert refused(services, MEMBER, value) == 100


def test_private_comments_are_for_insiders_alone(services, world):
    public = world["public"]
    assert refused(services, PLAIN, public, is_private=True) == 113
    assert refused(services, MEMBER, world["hidden"], is_private=True) == 113
    comment_id = add(services, INSIDER, public, "Between us", is_private=True)
    assert services.query("SELECT is_private FROM comments WHERE id = ?", (comment_id,)) == [(1,)]
    # The insider's private comment on a bug it may not see is still refused as hidden.
    assert refused(services, INSIDER, world["hidden"], is_private=True) == 102


def test_product_edit_rights_109_store_nothing(services, world):
    editors = add_group(services, "editors", members=[INSIDER, MEMBER])
    product_id = services.query("SELECT product_id FROM bugs WHERE id = ?",
                                (world["hidden"],))[0][0]
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 1, 1, 1)", (editors, product_id))
    assert refused(services, PLAIN, world["public"]) == 109
    assert refused(services, REPORTER, "hidden-one") == 109
    assert refused(services, CC, world["hidden"]) == 109
    # Hidden comes first: who may not see the bug is not told about the product.
    assert refused(services, PLAIN, world["hidden"]) == 102
    assert add(services, MEMBER, world["hidden"])
    assert add(services, INSIDER, "public-one")


def test_too_long_and_bad_work_time_store_nothing(services, world):
    assert refused(services, MEMBER, world["hidden"], "x" * 65536) == 114
    assert refused(services, PLAIN, world["public"], "x", work_time="100000") == 54
    assert refused(services, MEMBER, world["hidden"], "x", work_time="lots") == 52


@pytest.mark.parametrize("more", [{"text": "x" * 65536}, {"is_private": True},
                                  {"work_time": "lots"}])
def test_the_bugs_own_errors_come_before_those_of_the_comment(services, world, more):
    """Who may not see the bug learns nothing about what they sent, by
    number or by alias; who may not edit it hears 109 first."""
    assert refused(services, PLAIN, world["hidden"], **more) == 102
    assert refused(services, PLAIN, "hidden-one", **more) == 100
    assert refused(services, PLAIN, world["closed"] + 1000, **more) == 102
    editors = add_group(services, "editors", members=[MEMBER])
    product_id = services.query("SELECT product_id FROM bugs WHERE id = ?",
                                (world["public"],))[0][0]
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 1, 1, 1)", (editors, product_id))
    assert refused(services, PLAIN, world["public"], **more) == 109
    assert refused(services, PLAIN, "public-one", **more) == 109


def test_a_bug_named_by_its_number_is_checked_and_commented_by_one_statement(services, world):
    statements, comment_id = traced_add(services, MEMBER, world["hidden"], "Seen")
    # (SQLite traces a statement again for each trigger it runs.)
    inserts = {sql for sql in statements if "INSERT INTO comments" in sql}
    assert len(inserts) == 1
    insert = inserts.pop()
    if services.db.dialect.writes_several_tables:
        # PostgreSQL: the same statement sets the bug's last change time first.
        assert insert.startswith("WITH touched AS (UPDATE bugs SET last_change_time = ")
        assert not [sql for sql in statements if sql.startswith("UPDATE bugs")]
    else:
        assert insert.startswith("INSERT INTO comments") and "FROM bugs b WHERE b.id = " in insert
    # Nothing read the bug for the comment before: no target row, no count.
    assert not [sql for sql in statements
                if sql.startswith("SELECT") and ("FROM bugs b JOIN products p" in sql
                                                 or "MAX(count)" in sql)]
    assert services.query("SELECT bug_id, count, body FROM comments WHERE id = ?",
                          (comment_id,)) == [(world["hidden"], 1, "Seen")]
    assert services.query("SELECT b.last_change_time = c.created_at FROM bugs b"
                          " JOIN comments c ON c.bug_id = b.id WHERE c.id = ?",
                          (comment_id,)) == [(True,)]


def test_over_http_and_xmlrpc_the_answers_are_the_same(client, services, world):
    hidden = world["hidden"]
    key = services.api_key(PLAIN)
    before = stored(services)
    resp = client.simulate_post(f"/rest/bug/{hidden}/comment",
                                headers={"X-BUGZILLA-API-KEY": key}, json={"comment": "Hi"})
    assert (resp.status_code, resp.json["code"]) == (http_status(102), 102)
    assert xmlrpc_call(client, "Bug.add_comment", {"id": hidden, "comment": "Hi",
                                                   "Bugzilla_api_key": key}) == (None, 102)
    assert stored(services) == before
    member_key = services.api_key(MEMBER)
    resp = client.simulate_post(f"/rest/bug/{hidden}/comment",
                                headers={"X-BUGZILLA-API-KEY": member_key},
                                json={"comment": "Hi"})
    assert resp.status_code == 201
    result, fault = xmlrpc_call(client, "Bug.add_comment", {"id": "hidden-one", "comment": "Again",
                                                            "Bugzilla_api_key": member_key})
    assert fault is None
    assert services.query("SELECT id, count FROM comments WHERE bug_id = ? AND count > 0"
                          " ORDER BY count", (hidden,)) == [(resp.json["id"], 1),
                                                             (result["id"], 2)]


def test_the_comment_reads_its_bugs_people_once_with_the_bugs_last_change(services, world):
    """The statement that stamps the bug's last change answers its people,
    which the event takes: the comment sends no statement of its own for
    them."""
    statements, comment_id = traced_add(services, PLAIN, world["public"])
    assert not [sql for sql in statements
                if sql.startswith("SELECT assigned_to, qa_contact, reporter")]
    assert any(re.search(r"RETURNING (bugs\.id, )?assigned_to, qa_contact, reporter", sql)
               for sql in statements)
    data = events.load(services.query("SELECT data FROM outbox_events WHERE bug_id = ?"
                                      " ORDER BY id DESC LIMIT 1", (world["public"],))[0][0])
    assert data["comments"] == [comment_id]
    assert data["people"] == {"assigned_to": user_id(services, ASSIGNEE),
                              "qa_contact": user_id(services, QA),
                              "reporter": user_id(services, REPORTER),
                              "cc": sorted(user_id(services, login) for login in (CC, PLAIN))}


def test_people_written_after_the_stamp_are_read_again_for_the_event(services, world, db):
    """A write after the stamp (here a CC added in the same transaction)
    makes the event read the people again, so it holds them as the call
    left them."""
    bug_id = world["public"]
    journal = events.Journal()
    with db.transaction(write=True) as conn:
        activity.touch(conn, bug_id, datetime(2026, 11, 27, tzinfo=timezone.utc), journal)
        journal.changed(bug_id, "cc", "", INSIDER)
        conn.execute("INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
                     (bug_id, user_id(services, INSIDER)))
        journal.write(conn, user_id(services, PLAIN), datetime(2026, 11, 27, tzinfo=timezone.utc))
    data = events.load(services.query("SELECT data FROM outbox_events WHERE bug_id = ?"
                                      " ORDER BY id DESC LIMIT 1", (bug_id,))[0][0])
    assert data["people"]["cc"] == sorted(user_id(services, login)
                                          for login in (CC, PLAIN, INSIDER))


def test_the_event_is_the_one_the_journal_writes_and_stored_by_the_comments_statement(
        services, world):
    """Where one statement may write several tables (PostgreSQL) the
    comment's statement stores the bug's outbox event too; on either engine
    the event holds exactly what the journal writes for a comment."""
    statements, comment_id = traced_add(services, PLAIN, world["public"])
    told = [sql for sql in statements if "INSERT INTO outbox_events" in sql]
    assert len(told) == 1
    if services.db.dialect.writes_several_tables:
        assert told[0].startswith("WITH touched AS (UPDATE bugs") and "told AS (" in told[0]
    else:
        assert told[0].startswith("INSERT INTO outbox_events")
    rows = services.query("SELECT bug_id, changer_id, created_at, data FROM outbox_events")
    assert len(rows) == 1
    bug_id, changer, created_at, data = rows[0]
    assert (bug_id, changer) == (world["public"], user_id(services, PLAIN))
    assert services.query("SELECT created_at FROM comments WHERE id = ?",
                          (comment_id,)) == [(created_at,)]
    assert events.load(data) == {
        "new": False, "changes": [], "comments": [comment_id], "attachments": [], "flags": [],
        "people": {"assigned_to": user_id(services, ASSIGNEE), "qa_contact": user_id(services, QA),
                   "reporter": user_id(services, REPORTER),
                   "cc": sorted([user_id(services, CC), user_id(services, PLAIN)])}}


def test_a_comment_booking_hours_has_one_event_with_the_hours_and_the_comment(services, world):
    """A comment that is not the call's whole change of the bug (hours
    booked with it) has the journal write the one event of the call."""
    add_group(services, "timers", members=[MEMBER])
    set_param(services, "timetrackinggroup", "timers")
    comment_id = add(services, MEMBER, world["hidden"], "Worked on it", work_time="1.5")
    rows = services.query("SELECT data FROM outbox_events WHERE bug_id = ?", (world["hidden"],))
    assert len(rows) == 1
    data = events.load(rows[0][0])
    assert data["comments"] == [comment_id]
    assert [(change["field"], change["added"]) for change in data["changes"]] == \
        [("work_time", "1.50")]


def test_a_bug_whose_event_was_stored_with_its_change_takes_no_more_notes(services, world):
    """The journal counts an event a statement stored, writes none for its
    bug, and refuses a later note of that bug (a second event would tell
    its people twice of one call)."""
    stored_with, noted = world["hidden"], world["public"]
    journal = events.Journal()
    assert journal.may_store_with_change(stored_with, changer_id=1)
    assert not journal.may_store_with_change(stored_with, changer_id=None)
    assert not events.Journal(enabled=False).may_store_with_change(stored_with, changer_id=1)
    journal.stored_with_change(stored_with)
    assert not journal.may_store_with_change(stored_with, changer_id=1)
    with pytest.raises(RuntimeError):
        journal.commented(stored_with, 99)
    journal.commented(noted, 100)
    assert not journal.may_store_with_change(noted, changer_id=1)
    with services.db.transaction(write=True) as conn:
        assert journal.write(conn, user_id(services, PLAIN),
                             datetime(2026, 11, 29, tzinfo=timezone.utc)) == 2
    assert services.query("SELECT bug_id FROM outbox_events") == [(noted,)]
