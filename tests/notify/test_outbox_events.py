"""Every change that mail and webhooks tell about writes an outbox event in
its own transaction: a change rolled back leaves none, each bug a call
changes gets one, holding what changed (history rows, comments,
attachments, flags) by reference."""

import base64

import pytest

from bug_support import NA, SHOWN, add_bug_group, control, file_bug, update_bug
from bugsvc.bugs import events
from bugsvc.errors import ServiceError
from bugsvc.services import (
    attachment as attachment_service,
    comment as comment_service,
    flagtype as flagtype_service,
)


def outbox(services):
    """[(bug id, changer id, data)] of every event, oldest first."""
    return [(bug_id, changer, events.load(data)) for bug_id, changer, data in services.query(
        "SELECT bug_id, changer_id, data FROM outbox_events ORDER BY id")]


def fields_of(data):
    return [change["field"] for change in data["changes"]]


def test_filing_a_bug_writes_one_event_with_its_description(services):
    bug_id = file_bug(services)
    [(event_bug, changer, data)] = outbox(services)
    description = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0",
                                 (bug_id,))[0][0]
    assert (event_bug, changer) == (bug_id, services.user_id("admin@example.com"))
    assert data["new"] is True and data["comments"] == [description]
    assert data["changes"] == [] and data["attachments"] == [] and data["flags"] == []


def test_an_update_holds_its_history_rows_and_comment_in_order(services):
    services.add_user("dev@example.com")
    bug_id = file_bug(services)
    update_bug(services, bug_id, status="IN_PROGRESS", assigned_to="dev@example.com",
               comment={"body": "Taking it"})
    _, _, data = outbox(services)[-1]
    assert data["new"] is False
    assert sorted(fields_of(data)) == ["assigned_to", "status"]
    assert {"field": "assigned_to", "removed": "admin@example.com",
            "added": "dev@example.com"} in data["changes"]
    [comment_id] = data["comments"]
    assert services.query("SELECT body FROM comments WHERE id = ?", (comment_id,)) == [
        ("Taking it",)]


def test_a_change_that_fails_writes_no_event(services):
    bug_id = file_bug(services)
    before = outbox(services)
    with pytest.raises(ServiceError):
        update_bug(services, bug_id, status="IN_PROGRESS", priority="No such priority")
    with pytest.raises(ServiceError):
        services.call(comment_service.add, {"id": bug_id, "comment": "x", "is_private": True},
                      as_user=services.add_user("outsider@example.com"))
    assert outbox(services) == before


def test_an_update_that_changes_nothing_writes_no_event(services):
    bug_id = file_bug(services, priority="Normal")
    before = outbox(services)
    update_bug(services, bug_id, priority="Normal")
    assert outbox(services) == before


def test_each_bug_a_call_changes_gets_its_own_event(services):
    first, second = file_bug(services), file_bug(services)
    update_bug(services, first, depends_on={"add": [second]})
    latest = {bug_id: data for bug_id, _, data in outbox(services)[2:]}
    assert set(latest) == {first, second}
    assert latest[first]["changes"] == [{"field": "depends_on", "removed": "",
                                         "added": str(second)}]
    assert latest[second]["changes"] == [{"field": "blocks", "removed": "",
                                          "added": str(first)}]


def test_closing_a_bug_tells_the_bugs_that_depend_on_it(services):
    blocker = file_bug(services)
    dependent = file_bug(services, depends_on=[blocker])
    update_bug(services, blocker, status="RESOLVED", resolution="FIXED")
    latest = {bug_id: data for bug_id, _, data in outbox(services)[2:]}
    assert latest[dependent]["blockers"] == [{"id": blocker,
                                              "status": ["CONFIRMED", "RESOLVED"],
                                              "resolution": ["", "FIXED"]}]
    assert latest[dependent]["changes"] == []


def test_comments_attachments_and_their_changes(services):
    bug_id = file_bug(services)
    comment_id = services.call(comment_service.add, {"id": bug_id, "comment": "Look"},
                               as_user="admin@example.com")["id"]
    assert outbox(services)[-1][2]["comments"] == [comment_id]
    data = base64.b64encode(b"trace").decode()
    [attachment_id] = services.call(attachment_service.create, {
        "ids": [bug_id], "data": data, "file_name": "t.log", "summary": "Trace",
        "content_type": "text/plain"}, as_user="admin@example.com")["ids"]
    created = outbox(services)[-1][2]
    assert created["attachments"] == [attachment_id] and len(created["comments"]) == 1
    services.call(attachment_service.update, {"ids": [attachment_id], "summary": "Full trace",
                                              "comment": "Renamed"},
                  as_user="admin@example.com")
    changed = outbox(services)[-1][2]
    assert changed["changes"] == [{"field": "attachments.description", "removed": "Trace",
                                   "added": "Full trace", "attachment_id": attachment_id}]
    assert len(changed["comments"]) == 1


def test_flag_requests_are_noted_with_their_people(services):
    requestee = services.add_user("qa@example.com")
    services.call(flagtype_service.create, {"name": "review", "description": "Review",
                                            "target_type": "bug"}, as_user="admin@example.com")
    bug_id = file_bug(services)
    update_bug(services, bug_id, flags=[{"name": "review", "status": "?",
                                         "requestee": "qa@example.com"}])
    [flag] = outbox(services)[-1][2]["flags"]
    admin = services.user_id("admin@example.com")
    assert flag["old"] is None and flag["attachment_id"] is None
    assert flag["new"] == {"status": "?", "setter_id": admin, "requestee_id": requestee}
    update_bug(services, bug_id, flags=[{"id": flag["flag_id"], "status": "+"}])
    [granted] = outbox(services)[-1][2]["flags"]
    assert granted["old"]["status"] == "?" and granted["new"]["status"] == "+"


def test_restricting_a_bug_notes_that_it_is_no_longer_public(services):
    group_id = add_bug_group(services, "secret")
    control(services, group_id, SHOWN, NA)
    bug_id = file_bug(services)
    update_bug(services, bug_id, groups={"add": ["secret"]})
    assert outbox(services)[-1][2]["public"] == [True, False]


def test_writes_made_to_tell_nobody_leave_no_event(services):
    with services.units.context(services.user_id("admin@example.com"), write=True,
                                events=False) as ctx:
        from bugsvc.bugs import create
        create.create(ctx, {"product": "TestProduct", "component": "TestComponent",
                            "version": "unspecified", "summary": "Imported", "op_sys": "Linux",
                            "platform": "PC"})
    assert services.query("SELECT COUNT(*) FROM bugs") == [(1,)]
    assert outbox(services) == []


def test_the_worker_of_the_process_is_woken_after_the_commit(services):
    woken = []
    services.units.on_events = lambda: woken.append(
        services.query("SELECT COUNT(*) FROM outbox_events")[0][0])
    file_bug(services)
    assert woken == [1]
