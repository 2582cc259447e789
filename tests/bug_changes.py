"""A world of bugs seen differently by each kind of caller, and every kind
of change to what a bug search answers (through the API, or written
straight into the tables as the importer, a command or a repair by hand
would): for the tests of what serving processes keep (answer_cache.py,
object_cache.py). A plugin of conftest.py: its fixture `callers_world`
serves every test module."""

from bug_rows import (
    ADMIN,
    add_bug,
    add_custom_field,
    add_flag,
    add_group,
    add_keyword,
    set_custom_value,
    set_param,
    user_id,
)
from bugsvc.bugs.removal import delete_bugs
from bugsvc.services import bug as bug_service
from conftest import world_fixture


PAT = "pat@example.com"          # a plain account, reporter of a restricted bug
PAM = "pam@example.com"          # a plain account too, in no bug's role
MEMBER = "member@example.com"    # in the staff group
INSIDER = "insider@example.com"  # in the insider group
TIMER = "timer@example.com"      # in the time tracking group
CALLERS = (None, PAT, PAM, MEMBER, INSIDER, TIMER, ADMIN)
SEARCH = {"product": "TestProduct", "status": ["CONFIRMED", "IN_PROGRESS"], "limit": 50}


@world_fixture
def callers_world(services):
    """Bugs of TestProduct: two open to all, one restricted to staff, one
    restricted to staff that PAT reported (so PAT sees it, PAM does not)."""
    for login in (PAT, PAM, MEMBER, INSIDER, TIMER):
        services.add_user(login, real_name=login.split("@")[0])
    add_group(services, "staff", members=[MEMBER])
    add_group(services, "insiders", members=[INSIDER])
    add_group(services, "timers", members=[TIMER])
    set_param(services, "insidergroup", "insiders")
    set_param(services, "timetrackinggroup", "timers")
    add_keyword(services, "crash")
    return {"open": add_bug(services, summary="Open to all", cc=[PAT], keywords=["crash"],
                            estimated_time=3.0),
            "other": add_bug(services, summary="Also open", status="IN_PROGRESS",
                             qa_contact=PAM),
            "staff": add_bug(services, summary="Staff only", groups=["staff"]),
            "reported": add_bug(services, summary="Pat's own", groups=["staff"], reporter=PAT)}


def sql_change(*statements):
    """A change written straight into the tables (no bugsvc code runs)."""
    def write(services, world):
        names = dict(world, pat=user_id(services, PAT), pam=user_id(services, PAM))
        with services.db.transaction(write=True) as conn:
            for sql in statements:
                conn.execute(sql.format(**names))
    return write


def _through_the_api(services, world):
    services.call(bug_service.update, {"ids": [world["open"]], "summary": "Renamed",
                                       "priority": "High"}, as_user=ADMIN)


def _delete(services, world):
    with services.units.context(None, write=True) as ctx:
        delete_bugs(ctx, [world["other"]])


def _new_bug(services, world):
    add_bug(services, summary="A new one")


def _custom_value(services, world):
    set_custom_value(services, world["open"], add_custom_field(services, "cf_notes", 1), "new")


def _flag(services, world):
    add_flag(services, world["open"], "review", "?")


CHANGES = {
    "bug through the API": (ADMIN, _through_the_api),
    "bug summary in SQL": (ADMIN, sql_change("UPDATE bugs SET summary = 'x' WHERE id = {open}")),
    "bug status in SQL": (ADMIN, sql_change("UPDATE bugs SET status = 'RESOLVED',"
                                            " resolution = 'FIXED' WHERE id = {other}")),
    "bug deleted": (ADMIN, _delete),
    "bug added": (ADMIN, _new_bug),
    "alias": (ADMIN, sql_change("INSERT INTO bug_aliases (bug_id, alias) VALUES ({open}, 'al')")),
    "cc": (ADMIN, sql_change("INSERT INTO bug_cc (bug_id, user_id) VALUES ({other}, {pam})")),
    "cc removed": (ADMIN, sql_change("DELETE FROM bug_cc WHERE bug_id = {open}")),
    "keyword": (ADMIN, sql_change("INSERT INTO bug_keywords (bug_id, keyword_id)"
                                  " SELECT {other}, id FROM keywords WHERE name = 'crash'")),
    "keyword renamed": (ADMIN, sql_change("UPDATE keywords SET name = 'boom'"
                                          " WHERE name = 'crash'")),
    "dependency": (ADMIN, sql_change("INSERT INTO dependencies (blocked, depends_on)"
                                     " VALUES ({open}, {other})")),
    "see also": (ADMIN, sql_change("INSERT INTO bug_see_also (bug_id, url)"
                                   " VALUES ({open}, 'https://example.com/1')")),
    "custom value": (ADMIN, _custom_value),
    "flag": (ADMIN, _flag),
    "flag type renamed": (ADMIN, sql_change("INSERT INTO flag_types (name, description)"
                                            " VALUES ('review', 'r')",
                                            "INSERT INTO flags (type_id, status, bug_id, setter_id,"
                                            " created_at, modified_at) SELECT id, '?', {open}, 1,"
                                            " '2026-01-03 00:00:00', '2026-01-03 00:00:00'"
                                            " FROM flag_types WHERE name = 'review'",
                                            "UPDATE flag_types SET name = 'approval'"
                                            " WHERE name = 'review'")),
    "hours worked": (TIMER, sql_change("INSERT INTO comments (bug_id, count, author_id, created_at,"
                                       " body, is_private, work_time, kind) VALUES ({open}, 1, 1,"
                                       " '2026-01-02 00:00:00', 'worked', 0, 2.5, 0)")),
    "bug restricted to a group": (PAM, sql_change("INSERT INTO bug_groups (bug_id, group_id)"
                                                  " SELECT {open}, id FROM groups"
                                                  " WHERE name = 'staff'")),
    "bug opened to all": (PAM, sql_change("DELETE FROM bug_groups WHERE bug_id = {staff}")),
    "membership": (PAM, sql_change("INSERT INTO user_groups (user_id, group_id, is_bless,"
                                   " grant_type) SELECT {pam}, id, 0, 0 FROM groups"
                                   " WHERE name = 'staff'")),
    "account renamed": (ADMIN, sql_change("UPDATE users SET real_name = 'Pamela'"
                                          " WHERE id = {pam}")),
    "product renamed": (ADMIN, sql_change("UPDATE products SET name = 'Renamed'"
                                          " WHERE name = 'TestProduct'")),
    "component renamed": (ADMIN, sql_change("UPDATE components SET name = 'Parts' WHERE id ="
                                            " (SELECT component_id FROM bugs WHERE id = {open})")),
    "parameter": (None, sql_change("DELETE FROM params WHERE name = 'webservice_email_filter'",
                                   "INSERT INTO params (name, value)"
                                   " VALUES ('webservice_email_filter', '1')")),
    "status closed in the workflow": (ADMIN, sql_change(
        "UPDATE field_values SET is_open = 0 WHERE value = 'IN_PROGRESS' AND field_id ="
        " (SELECT id FROM fields WHERE name = 'bug_status')")),
}


def change_is_seen(services, world, change, search, made_anew):
    """Search (`search(services, who)`, twice) before and after the change
    CHANGES[change]: the answer after is `made_anew(services, who)`'s,
    differs from the one before, and is given again when asked again."""
    who, write = CHANGES[change]
    before = search(services, who)
    assert search(services, who) == before
    write(services, world)
    after = search(services, who)
    assert after == made_anew(services, who)
    assert after != before
    assert search(services, who) == after
