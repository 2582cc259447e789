"""A bug restricted to a group, read by every kind of caller: anonymous, a
plain user, an insider (insidergroup, not in the bug's group), a member of
the group and the administrator."""

import pytest

from bug_support import (
    ADMIN,
    NA,
    SHOWN,
    add_bug_group,
    add_to_group,
    control,
    file_bug,
    get_bug,
    history_of,
    set_param,
    update_bug,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service
from conftest import world_fixture


PLAIN, INSIDER, MEMBER = "plain@example.com", "insider@example.com", "member@example.com"
SECRET_SUMMARY = "Secret vulnerability in login"


@world_fixture
def world(services):
    """{"secret": restricted bug, "public": bug depending on it and blocking it}."""
    for login in (PLAIN, INSIDER, MEMBER):
        services.add_user(login)
    add_bug_group(services, "insiders", members=[INSIDER])
    set_param(services, "insidergroup", "insiders")
    group = add_bug_group(services, "secret", members=[MEMBER])
    control(services, group, SHOWN, NA)
    secret = file_bug(services, summary=SECRET_SUMMARY, groups=["secret"], alias="hidden-one",
                      description="exploit details")
    public = file_bug(services, summary="Public bug", depends_on=[secret])
    return {"secret": secret, "public": public}


CANNOT_SEE = [None, PLAIN, INSIDER]
CAN_SEE = [MEMBER, ADMIN]


def error_of(services, function, params, as_user):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value


@pytest.mark.parametrize("caller", CANNOT_SEE)
def test_get_and_history_denied(services, world, caller):
    for function in (bug_service.get, bug_service.history):
        error = error_of(services, function, {"ids": [world["secret"]]}, caller)
        assert error.code == 102
        assert "Secret" not in error.message and "hidden-one" not in error.message
        # The alias of a hidden bug answers like an unknown alias.
        error = error_of(services, function, {"ids": ["hidden-one"]}, caller)
        assert error.code == 100
        assert str(world["secret"]) not in error.message and "Secret" not in error.message


@pytest.mark.parametrize("caller", CAN_SEE)
def test_get_and_history_allowed(services, world, caller):
    assert get_bug(services, world["secret"], as_user=caller)["summary"] == SECRET_SUMMARY
    (entry,) = history_of(services, world["secret"], as_user=caller)
    assert entry["changes"] == [{"field_name": "blocks", "removed": "",
                                 "added": str(world["public"])}]


def test_http_status_for_anonymous_and_plain(client, services, world):
    resp = client.simulate_get(f"/rest/bug/{world['secret']}")
    assert (resp.status_code, resp.json["code"]) == (401, 102)
    key = services.api_key(PLAIN)
    resp = client.simulate_get(f"/rest/bug/{world['secret']}/history",
                               params={"Bugzilla_api_key": key})
    assert (resp.status_code, resp.json["code"]) == (401, 102)


@pytest.mark.parametrize("caller", CANNOT_SEE)
def test_permissive_get_reports_a_fault(services, world, caller):
    result = services.call(bug_service.get, {"ids": [world["public"], world["secret"]],
                                             "permissive": True}, as_user=caller, write=False)
    assert [b["id"] for b in result["bugs"]] == [world["public"]]
    assert [f["faultCode"] for f in result["faults"]] == [102]


@pytest.mark.parametrize("caller", CANNOT_SEE + CAN_SEE)
def test_get_of_several_numbers_checks_each(services, world, caller):
    # Bugs named by number are read with their visibility in one query;
    # one hidden among them fails the call as when it is named alone.
    params = {"ids": [world["public"], f"#{world['secret']}", world["public"]]}
    if caller in CANNOT_SEE:
        assert error_of(services, bug_service.get, params, caller).code == 102
    else:
        result = services.call(bug_service.get, params, as_user=caller, write=False)
        assert [b["id"] for b in result["bugs"]] == [world["public"], world["secret"],
                                                     world["public"]]
        assert result["faults"] == []


@pytest.mark.parametrize("caller, sees", [(c, False) for c in CANNOT_SEE]
                         + [(c, True) for c in CAN_SEE])
def test_dependencies_of_visible_bugs(services, world, caller, sees):
    public = get_bug(services, world["public"], as_user=caller)
    assert public["depends_on"] == ([world["secret"]] if sees else [])


@pytest.mark.parametrize("caller, sees", [(c, False) for c in CANNOT_SEE]
                         + [(c, True) for c in CAN_SEE])
def test_possible_duplicates(services, world, caller, sees):
    found = services.call(bug_service.possible_duplicates, {"summary": "vulnerability login"},
                          as_user=caller, write=False)["bugs"]
    assert [b["id"] for b in found] == ([world["secret"]] if sees else [])


@pytest.mark.parametrize("caller", [PLAIN, INSIDER])
def test_update_denied_and_nothing_changes(services, world, caller):
    assert error_of(services, bug_service.update, {"ids": [world["secret"]], "summary": "x"},
                    caller).code == 102
    for params, code in (({"depends_on": {"add": [world["secret"]]}}, 102),
                         ({"blocks": {"add": ["hidden-one"]}}, 100),
                         ({"dupe_of": world["secret"]}, 102),
                         ({"see_also": {"add": [str(world["secret"])]}}, 102)):
        own = file_bug(services, as_user=caller)
        error = error_of(services, bug_service.update, dict(params, ids=[own]), caller)
        assert error.code == code
    assert get_bug(services, world["secret"])["summary"] == SECRET_SUMMARY


def test_member_may_update(services, world):
    assert update_bug(services, world["secret"], as_user=MEMBER, whiteboard="w")["changes"]


def test_roles_on_the_bug_grant_sight(services, world):
    """Reporter (while is_creator_accessible), CC (while is_cc_accessible),
    assignee and QA contact see a bug outside its group."""
    set_param(services, "useqacontact", "1")
    for login in ("reporter", "cc", "assignee", "qa"):
        services.add_user(f"{login}@example.com")
    add_to_group(services, "reporter@example.com", "secret")
    bug_id = file_bug(services, as_user="reporter@example.com", groups=["secret"])
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM user_groups WHERE user_id = (SELECT id FROM users WHERE login ="
                     " 'reporter@example.com') AND group_id = (SELECT id FROM groups WHERE"
                     " name = 'secret')")
    update_bug(services, bug_id, cc={"add": ["cc@example.com"]},
               assigned_to="assignee@example.com", qa_contact="qa@example.com")
    for login in ("reporter", "cc", "assignee", "qa"):
        assert get_bug(services, bug_id, as_user=f"{login}@example.com")["id"] == bug_id
    update_bug(services, bug_id, is_cc_accessible=False, is_creator_accessible=False)
    for login in ("reporter", "cc"):
        assert error_of(services, bug_service.get, {"ids": [bug_id]},
                        f"{login}@example.com").code == 102
    for login in ("assignee", "qa"):
        assert get_bug(services, bug_id, as_user=f"{login}@example.com")["id"] == bug_id


def test_insider_sees_private_history_only_on_visible_bugs(services, world):
    comment_id = services.query("SELECT id FROM comments WHERE bug_id = ?",
                                (world["public"],))[0][0]
    update_bug(services, world["public"], comment_is_private={str(comment_id): True})
    assert len(history_of(services, world["public"], as_user=INSIDER)) == 1
    assert history_of(services, world["public"], as_user=PLAIN) == []
    assert history_of(services, world["public"], as_user=None) == []


def test_marking_a_duplicate_does_not_cc_a_reporter_who_cannot_see_the_original(services, world):
    dupe = file_bug(services, as_user=PLAIN, summary="Login broken")
    update_bug(services, dupe, dupe_of=world["secret"])
    assert get_bug(services, world["secret"])["cc"] == []
    assert error_of(services, bug_service.get, {"ids": [world["secret"]]}, PLAIN).code == 102


@pytest.mark.engine("postgresql")
@pytest.mark.parametrize("caller", [None, PLAIN, MEMBER])
def test_a_few_bugs_are_checked_bug_by_bug_and_a_count_may_read_every_group(
        services, world, caller):
    """Whether the caller may see a few bugs is looked up for each of them
    (PostgreSQL's planner would otherwise read all of bug_groups, and all of
    the caller's CC rows, into a hash for every such statement: a cost that
    grows with every restricted bug of the installation). A statement that
    goes over every bug (scan) leaves that choice to the planner. Both
    answer the same."""
    from bugsvc.bugs import visibility

    def plans_and_answers(ctx, params):
        found = {}
        for scan in (False, True):
            condition, args = visibility.bug_visibility_sql(ctx, scan=scan)
            sql = f"SELECT b.id FROM bugs b WHERE b.id IN (?, ?) AND {condition}"
            ids = [world["secret"], world["public"]]
            plan = "\n".join(row[0] for row in ctx.conn.execute(f"EXPLAIN {sql}", ids + args))
            found[scan] = plan, sorted(row[0] for row in ctx.conn.execute(sql, ids + args))
        return found

    found = services.call(plans_and_answers, as_user=caller, write=False)
    plan, seen = found[False]
    assert "hash" not in plan.lower()        # no hashed subplan, no hash join
    assert seen == sorted([world["public"]] + ([world["secret"]] if caller == MEMBER else []))
    assert found[True][1] == seen
