"""Flags on bugs: naming the flag or type, the type's
rules, the grant/request groups, and their history (`flagtypes.name`)."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bug_support import (
    ADMIN,
    MANDATORY,
    add_bug_group,
    add_flag_type,
    add_to_group,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    history_of,
    update_bug,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service


JAN = datetime(2026, 1, 1, tzinfo=timezone.utc)


def set_flags(services, bug_id, flags, as_user=ADMIN, now=None):
    return update_bug(services, bug_id, as_user=as_user, now=now, flags=flags)["changes"]


def flag_error(services, bug_id, flags, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.update, {"ids": [bug_id], "flags": flags}, as_user=as_user)
    return caught.value.code


def flags_of(services, bug_id):
    return [(f["name"], f["status"], f.get("requestee"))
            for f in get_bug(services, bug_id)["flags"]]


def test_set_request_and_clear_by_name(services):
    add_flag_type(services, "review")
    services.add_user("rev@example.com")
    bug_id = file_bug(services)
    changes = set_flags(services, bug_id, [{"name": "review", "status": "?",
                                            "requestee": "rev@example.com"}])
    assert changes == {"flagtypes.name": {"removed": "", "added": "review?(rev@example.com)"}}
    changes = set_flags(services, bug_id, [{"name": "review", "status": "+"}])
    assert changes == {"flagtypes.name": {"removed": "review?(rev@example.com)",
                                          "added": "review+"}}
    assert flags_of(services, bug_id) == [("review", "+", None)]
    changes = set_flags(services, bug_id, [{"name": "review", "status": "X"}])
    assert changes == {"flagtypes.name": {"removed": "review+", "added": ""}}
    assert flags_of(services, bug_id) == []
    history = [c for e in history_of(services, bug_id) for c in e["changes"]]
    assert [c["field_name"] for c in history] == ["flagtypes.name"] * 3


def test_flags_on_create_are_in_history(services):
    add_flag_type(services, "qa")
    with freeze_time("2026-03-03 03:03:03"):
        bug_id = file_bug(services, flags=[{"name": "qa", "status": "-"}])
    assert history_of(services, bug_id) == [{
        "when": "2026-03-03T03:03:03Z", "who": ADMIN,
        "changes": [{"field_name": "flagtypes.name", "removed": "", "added": "qa-"}]}]
    flag = get_bug(services, bug_id)["flags"][0]
    assert flag["creation_date"] == flag["modification_date"] == "2026-03-03T03:03:03Z"


def test_modification_date_and_setter(services):
    add_flag_type(services, "review")
    services.add_user("other@example.com")
    bug_id = file_bug(services, flags=[{"name": "review", "status": "?"}], now=JAN)
    with freeze_time("2026-02-02"):
        set_flags(services, bug_id, [{"name": "review", "status": "?"}],
                  as_user="other@example.com")
    flag = get_bug(services, bug_id)["flags"][0]
    assert flag["modification_date"] == "2026-01-01T00:00:00Z" and flag["setter"] == ADMIN
    with freeze_time("2026-03-03"):
        set_flags(services, bug_id, [{"id": flag["id"], "status": "+"}],
                  as_user="other@example.com")
    flag = get_bug(services, bug_id)["flags"][0]
    assert flag["modification_date"] == "2026-03-03T00:00:00Z"
    assert flag["setter"] == "other@example.com"
    assert flag["creation_date"] == "2026-01-01T00:00:00Z"


def test_type_id_new_and_not_unique(services):
    review = add_flag_type(services, "review")
    bug_id = file_bug(services)
    set_flags(services, bug_id, [{"type_id": review, "status": "+"}])
    set_flags(services, bug_id, [{"type_id": review, "status": "-", "new": True}])
    assert flags_of(services, bug_id) == [("review", "+", None), ("review", "-", None)]
    assert flag_error(services, bug_id, [{"type_id": review, "status": "?"}]) == 132
    assert flag_error(services, bug_id, [{"name": "review", "status": "?"}]) == 132


def test_type_rules(services):
    add_flag_type(services, "single", is_multiplicable=False)
    add_flag_type(services, "norequest", is_requestable=False)
    add_flag_type(services, "noperson", is_requesteeble=False)
    add_flag_type(services, "retired", is_active=False)
    add_flag_type(services, "twin")
    add_flag_type(services, "twin")
    add_flag_type(services, "attachmentonly", target="a")
    services.add_user("rev@example.com")
    bug_id = file_bug(services, flags=[{"name": "single", "status": "+"}])
    assert flag_error(services, bug_id, [{"name": "single", "status": "-", "new": True}]) == 32000
    assert flag_error(services, bug_id, [{"name": "norequest", "status": "?"}]) == 129
    assert flag_error(services, bug_id, [{"name": "single", "status": "maybe"}]) == 129
    assert flag_error(services, bug_id, [{"name": "single"}]) == 129
    assert flag_error(services, bug_id, [{"name": "noperson", "status": "?",
                                          "requestee": "rev@example.com"}]) == 131
    assert flag_error(services, bug_id, [{"name": "retired", "status": "+"}]) == 134
    assert flag_error(services, bug_id, [{"name": "twin", "status": "+"}]) == 133
    assert flag_error(services, bug_id, [{"name": "attachmentonly", "status": "+"}]) == 51
    assert flag_error(services, bug_id, [{"id": 999, "status": "+"}]) == 51
    assert flag_error(services, bug_id, [{"type_id": 999, "status": "+"}]) == 51
    assert flag_error(services, bug_id, [{"status": "+"}]) == 50
    assert set_flags(services, bug_id, [{"name": "noperson", "status": "X"}]) == {}


def test_requestee_rules(services):
    add_flag_type(services, "needinfo")
    services.add_user("gone@example.com", disabled_text="left")
    services.add_user("outsider@example.com")
    secret = add_bug_group(services, "secret")
    control(services, secret, MANDATORY, MANDATORY)
    bug_id = file_bug(services)
    assert flag_error(services, bug_id, [{"name": "needinfo", "status": "?",
                                          "requestee": "ghost@example.com"}]) == 51
    assert flag_error(services, bug_id, [{"name": "needinfo", "status": "?",
                                          "requestee": "gone@example.com"}]) == 32000
    assert flag_error(services, bug_id, [{"name": "needinfo", "status": "?",
                                          "requestee": "outsider@example.com"}]) == 32000
    update_bug(services, bug_id, cc={"add": ["outsider@example.com"]})
    set_flags(services, bug_id, [{"name": "needinfo", "status": "?",
                                  "requestee": "outsider@example.com"}])
    assert flags_of(services, bug_id) == [("needinfo", "?", "outsider@example.com")]
    set_flags(services, bug_id, [{"name": "needinfo", "status": "+",
                                  "requestee": "outsider@example.com"}])
    assert flags_of(services, bug_id) == [("needinfo", "+", None)]


def test_grant_and_request_groups(services):
    editbugs_only_for_members(services)
    add_bug_group(services, "granters")
    add_bug_group(services, "requesters")
    add_flag_type(services, "approval", grant_group="granters", request_group="requesters")
    add_flag_type(services, "open", grant_group="granters")
    services.add_user("plain@example.com")
    services.add_user("requester@example.com")
    add_to_group(services, "requester@example.com", "requesters")
    plain = "plain@example.com"
    bug_id = file_bug(services, as_user=plain)
    assert flag_error(services, bug_id, [{"name": "approval", "status": "+"}], plain) == 130
    assert flag_error(services, bug_id, [{"name": "approval", "status": "?"}], plain) == 130
    assert set_flags(services, bug_id, [{"name": "open", "status": "?"}], plain)
    set_flags(services, bug_id, [{"name": "approval", "status": "?"}], "requester@example.com")
    assert flag_error(services, bug_id, [{"name": "approval", "status": "+"}],
                      "requester@example.com") == 130
    set_flags(services, bug_id, [{"name": "approval", "status": "+"}])
    # Anyone may clear a flag (the setter is always the caller in 5.2).
    changes = set_flags(services, bug_id, [{"name": "approval", "status": "X"}], plain)
    assert changes == {"flagtypes.name": {"removed": "approval+", "added": ""}}
    # Leaving a flag as it is needs no rights.
    set_flags(services, bug_id, [{"name": "open", "status": "+"}])
    assert set_flags(services, bug_id, [{"name": "open", "status": "+"}], plain) == {}


def test_flag_rules_failure_changes_nothing(services):
    add_flag_type(services, "a")
    add_flag_type(services, "b", is_requestable=False)
    bug_id = file_bug(services, now=JAN)
    assert flag_error(services, bug_id, [{"name": "a", "status": "+"},
                                         {"name": "b", "status": "?"}]) == 129
    assert flags_of(services, bug_id) == []
    assert history_of(services, bug_id) == []


def test_flags_follow_a_component_move(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO components (product_id, name, description, default_assignee)"
                     " VALUES (1, 'Other', 'o', 1)")
    everywhere = add_flag_type(services, "everywhere")
    first = add_flag_type(services, "local")
    second = add_flag_type(services, "local")
    only_first = add_flag_type(services, "onlyfirst")
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM flag_inclusions WHERE type_id IN (?, ?, ?)",
                     (first, second, only_first))
        conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                     " VALUES (?, 1, 1), (?, 1, 2), (?, 1, 1)", (first, second, only_first))
    bug_id = file_bug(services, flags=[{"type_id": everywhere, "status": "+"},
                                       {"type_id": first, "status": "+"},
                                       {"type_id": only_first, "status": "-"}])
    changes = update_bug(services, bug_id, component="Other")["changes"]
    assert changes["flagtypes.name"] == {"removed": "onlyfirst-", "added": ""}
    assert [f["type_id"] for f in get_bug(services, bug_id)["flags"]] == [everywhere, second]
