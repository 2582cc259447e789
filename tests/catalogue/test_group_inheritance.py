"""Group inheritance (Bugzilla's group_group_map "members" grant, set in
editgroups.cgi): the members of a group are members of the groups it is
made a member of, through chains and loops, kept up to date when direct
memberships, regexps or the inheritance change; and who may set it, on the
page and through the operations."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import NA, SHOWN, add_bug_group, control, file_bug
from bugsvc.accounts.caller import load_caller
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service, group as group_service, user as user_service
from conftest import world_fixture
from page_support import Browser


PAT, ROB = "pat@example.com", "rob@example.com"
PASSWORD = "inherit password 1"


@world_fixture
def world(services):
    ids = {"pat": services.add_user(PAT, password=PASSWORD),
           "rob": services.add_user(ROB, password=PASSWORD)}
    for name in ("team", "staff", "everyone"):
        ids[name] = add_bug_group(services, name, with_admin=False)
    return ids


def groups_of(services, login):
    user_id = services.user_id(login)
    with services.db.transaction() as conn:
        return set(load_caller(conn, user_id).group_names)


def bug_group_inheritance(services):
    """How many groups are members of the bug groups (the system groups'
    own inheritance, admin's among it, aside)."""
    return services.query("SELECT COUNT(*) FROM group_group_map m JOIN groups g"
                          " ON g.id = m.grantor_id WHERE g.is_bug_group = 1")[0][0]


def inherit(services, group_id, names, as_user=ADMIN):
    return services.call(group_service.update_inheritance,
                         {"id": group_id, "member_groups": names}, as_user=as_user)


def set_groups(services, login, change):
    services.call(user_service.update, {"names": [login], "groups": change}, as_user=ADMIN)


def test_members_of_a_member_group_are_members_through_a_chain(services, world):
    set_groups(services, PAT, {"add": ["team"]})
    answer = inherit(services, world["staff"], ["team"])
    assert answer["changes"] == {"member_groups": {"removed": "", "added": "team"}}
    inherit(services, world["everyone"], ["staff"])
    assert {"team", "staff", "everyone"} <= groups_of(services, PAT)
    assert not {"team", "staff", "everyone"} & groups_of(services, ROB)
    # Joining and leaving the member group carries the derived ones along.
    set_groups(services, ROB, {"add": ["team"]})
    assert {"staff", "everyone"} <= groups_of(services, ROB)
    set_groups(services, PAT, {"remove": ["team"]})
    assert not {"team", "staff", "everyone"} & groups_of(services, PAT)
    # Group.get's membership lists the members through inheritance too, as
    # Bugzilla's flattens the group's membership.
    found = services.call(group_service.get, {"ids": [world["everyone"]], "membership": 1},
                          as_user=ADMIN)
    assert [m["name"] for m in found["groups"][0]["membership"]] == [ROB]
    # Ending the inheritance ends the derived memberships.
    inherit(services, world["staff"], [])
    assert groups_of(services, ROB) & {"staff", "everyone"} == set()


def test_regexp_members_inherit_and_loops_end(services, world):
    services.call(group_service.update, {"ids": [world["team"]], "user_regexp": "^pat@"},
                  as_user=ADMIN)
    inherit(services, world["staff"], ["team"])
    inherit(services, world["team"], ["staff"])        # a loop
    assert {"team", "staff"} <= groups_of(services, PAT)
    set_groups(services, ROB, {"add": ["staff"]})
    assert {"team", "staff"} <= groups_of(services, ROB)
    read = services.call(group_service.inheritance, {"ids": [world["team"]]}, as_user=ADMIN)
    assert read["groups"][0]["member_groups"] == ["staff"]
    assert read["groups"][0]["member_of"] == ["staff"]


def test_an_inherited_member_sees_the_bugs_of_the_group(services, world):
    control(services, world["staff"], SHOWN, NA)
    set_groups(services, ADMIN, {"add": ["staff"]})
    bug_id = file_bug(services, summary="Staff only", groups=["staff"])

    def sees():
        try:
            services.call(bug_service.get, {"ids": [bug_id]}, as_user=PAT)
            return True
        except ServiceError as error:
            assert error.code == 102
            return False
    set_groups(services, PAT, {"add": ["team"]})
    assert not sees()
    inherit(services, world["staff"], ["team"])
    assert sees()


@pytest.mark.parametrize("names, code", [(["nonesuch"], 51), (["staff"], 32000)])
def test_bad_names_change_nothing(services, world, names, code):
    with pytest.raises(ServiceError) as caught:
        inherit(services, world["staff"], ["team"] + names)
    assert caught.value.code == code
    assert bug_group_inheritance(services) == 0


def test_only_creategroups_members_read_or_set_it(services, world):
    for who, code in ((PAT, 304), (None, 410)):
        with pytest.raises(ServiceError) as caught:
            inherit(services, world["staff"], ["team"], as_user=who)
        assert caught.value.code == code
        with pytest.raises(ServiceError) as caught:
            services.call(group_service.inheritance, {"ids": [world["staff"]]}, as_user=who)
        assert caught.value.code == code
    assert bug_group_inheritance(services) == 0


def test_the_change_is_audited(services, world):
    inherit(services, world["staff"], ["team", "everyone"])
    inherit(services, world["staff"], ["team"])
    rows = services.query("SELECT object_name, field, removed, added FROM audit_log"
                          " WHERE class = 'Bugzilla::Group' AND field = 'member_groups'"
                          " ORDER BY id")
    assert rows == [("staff", "member_groups", "", "everyone, team"),
                    ("staff", "member_groups", "everyone", "")]


def test_the_group_page_sets_it(app, services, world):
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    page = admin.get(f"/editgroups.cgi?action=changeform&group={world['staff']}")
    assert page.status_code == 200 and "Groups whose members are members" in page.text
    assert 'name="member_groups" value="team"' in page.text
    # Not a member of itself (it may bless itself or see its own members).
    assert 'name="member_groups" value="staff"' not in page.text
    saved = admin.post("/editgroups.cgi", {"action": "inheritance", "group": world["staff"],
                                           "member_groups": ["team"]})
    assert saved.status_code == 200
    assert 'name="member_groups" value="team" checked' in saved.text
    refused = admin.post("/editgroups.cgi", {"action": "inheritance", "group": world["staff"],
                                             "member_groups": ["team", "staff"]})
    assert refused.status_code == 400 and "cannot be a member of itself" in refused.text
    assert bug_group_inheritance(services) == 1
    forged = admin.post("/editgroups.cgi", {"action": "inheritance", "group": world["staff"]},
                        token=False)
    assert forged.status_code == 403
    assert bug_group_inheritance(services) == 1


def test_the_group_page_refuses_plain_users_and_visitors(app, services, world):
    plain = Browser(app)
    plain.login(PAT, PASSWORD)
    assert plain.get(f"/editgroups.cgi?action=changeform&group={world['staff']}"
                     ).status_code == 401
    plain.get("/")
    posted = plain.post("/editgroups.cgi", {"action": "inheritance", "group": world["staff"],
                                            "member_groups": ["team"]})
    assert posted.status_code == 401 and "creategroups" in posted.text
    visitor = Browser(app)
    page = visitor.get(f"/editgroups.cgi?action=changeform&group={world['staff']}")
    assert page.status_code == 401 and 'name="Bugzilla_password"' in page.text
    assert bug_group_inheritance(services) == 0
