"""GET /rest/bug/{id_or_alias}/history."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bug_support import (
    ADMIN,
    MANDATORY,
    add_bug_group,
    control,
    editbugs_only_for_members,
    file_bug,
    history_of,
    set_param,
    update_bug,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service


def at(day, hour=0):
    return datetime(2026, 1, day, hour, tzinfo=timezone.utc)


def test_history_over_http(client, services):
    bug_id = file_bug(services, alias="hist", now=at(1))
    update_bug(services, bug_id, summary="Second", now=at(2))
    resp = client.simulate_get("/rest/bug/hist/history")
    assert resp.status_code == 200
    assert resp.json == {"bugs": [{"id": bug_id, "alias": ["hist"], "history": [{
        "when": "2026-01-02T00:00:00Z", "who": ADMIN, "changes": [
            {"field_name": "summary", "removed": "Something is broken", "added": "Second"}]}]}]}


def test_creation_is_not_history_and_entries_group_by_who_and_when(services):
    services.add_user("other@example.com")
    bug_id = file_bug(services, now=at(1))
    assert history_of(services, bug_id) == []
    update_bug(services, bug_id, summary="A", whiteboard="w", now=at(2))
    update_bug(services, bug_id, as_user="other@example.com", summary="B", now=at(2))
    update_bug(services, bug_id, priority="High", now=at(3))
    history = history_of(services, bug_id)
    assert [(e["when"], e["who"], [c["field_name"] for c in e["changes"]]) for e in history] == [
        ("2026-01-02T00:00:00Z", ADMIN, ["summary", "whiteboard"]),
        ("2026-01-02T00:00:00Z", "other@example.com", ["summary"]),
        ("2026-01-03T00:00:00Z", ADMIN, ["priority"])]


def test_new_since_returns_only_later_changes(services):
    bug_id = file_bug(services, now=at(1))
    update_bug(services, bug_id, summary="A", now=at(2))
    update_bug(services, bug_id, summary="B", now=at(3))
    history = history_of(services, bug_id, new_since="2026-01-02T00:00:00Z")
    assert [e["when"] for e in history] == ["2026-01-03T00:00:00Z"]
    assert len(history_of(services, bug_id, new_since="2026-01-01")) == 2
    with pytest.raises(ServiceError) as caught:
        history_of(services, bug_id, new_since="yesterday")
    assert caught.value.code == 56


def test_history_errors(client, services):
    file_bug(services)
    assert client.simulate_get("/rest/bug/999/history").json["code"] == 101
    assert client.simulate_get("/rest/bug/nope/history").json["code"] == 100
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.history, {}, write=False)
    assert caught.value.code == 50


def test_time_tracking_changes_hidden_from_others(services):
    editbugs_only_for_members(services)
    services.add_user("plain@example.com")
    bug_id = file_bug(services, now=at(1))
    update_bug(services, bug_id, estimated_time=2, deadline="2026-02-01", now=at(2))
    update_bug(services, bug_id, work_time=1, comment={"body": "w"}, whiteboard="x", now=at(3))
    fields = [c["field_name"] for e in history_of(services, bug_id) for c in e["changes"]]
    assert set(fields) == {"estimated_time", "deadline", "work_time",
                           "whiteboard"}
    plain = history_of(services, bug_id, as_user="plain@example.com")
    assert [c["field_name"] for e in plain for c in e["changes"]] == ["whiteboard"]


def test_privacy_changes_of_private_comments_hidden_from_non_insiders(services):
    add_bug_group(services, "insiders")
    set_param(services, "insidergroup", "insiders")
    services.add_user("plain@example.com")
    bug_id = file_bug(services, description="text", now=at(1))
    comment_id = services.query("SELECT id FROM comments WHERE bug_id = ?", (bug_id,))[0][0]
    update_bug(services, bug_id, comment_is_private={str(comment_id): True}, now=at(2))
    assert history_of(services, bug_id)[0]["changes"][0]["field_name"] == "longdescs.isprivate"
    assert history_of(services, bug_id, as_user="plain@example.com") == []
    update_bug(services, bug_id, comment_is_private={str(comment_id): False}, now=at(3))
    assert len(history_of(services, bug_id, as_user="plain@example.com")) == 2


def test_changes_about_a_comment_name_it(services):
    add_bug_group(services, "insiders")
    set_param(services, "insidergroup", "insiders")
    bug_id = file_bug(services, description="text", now=at(1))
    comment_id = services.query("SELECT id FROM comments WHERE bug_id = ?", (bug_id,))[0][0]
    update_bug(services, bug_id, comment_is_private={str(comment_id): True}, now=at(2))
    update_bug(services, bug_id, summary="Other", now=at(3))
    first, second = history_of(services, bug_id)
    assert first["changes"] == [{"field_name": "longdescs.isprivate", "removed": "0",
                                 "added": "1", "comment_id": comment_id}]
    assert "comment_id" not in second["changes"][0]


def test_ids_of_hidden_bugs_left_out_of_dependency_changes(services):
    secret = add_bug_group(services, "secret")
    services.add_user("plain@example.com")
    public = file_bug(services, now=at(1))
    hidden = file_bug(services, now=at(1))
    control(services, secret, MANDATORY, MANDATORY)
    other = file_bug(services, now=at(1))
    assert other != hidden
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)", (hidden, secret))
        conn.execute("DELETE FROM bug_groups WHERE bug_id = ?", (other,))
    update_bug(services, public, depends_on={"add": [hidden, other]}, now=at(2))
    admin_view = history_of(services, public)[0]["changes"]
    assert admin_view == [{"field_name": "depends_on", "removed": "",
                           "added": f"{hidden}, {other}"}]
    plain_view = history_of(services, public, as_user="plain@example.com")[0]["changes"]
    assert plain_view == [{"field_name": "depends_on", "removed": "", "added": str(other)}]


@freeze_time("2026-07-01")
def test_history_of_several_bugs(services):
    first = file_bug(services)
    second = file_bug(services, alias="two")
    result = services.call(bug_service.history, {"ids": [second, first]}, write=False)["bugs"]
    assert [(b["id"], b["alias"], b["history"]) for b in result] == \
        [(second, ["two"], []), (first, [], [])]
