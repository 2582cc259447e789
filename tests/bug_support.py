"""Builders for the bug tests: filing bugs through the service, and setting
up the world (parameters, groups, rights) directly in the database."""

from accounts import ADMIN
from bugsvc.accounts.membership import grant_admin_visibility, refresh_derived, refresh_for_user
from bugsvc.services import bug as bug_service, group as group_service


NA, SHOWN, DEFAULT, MANDATORY = 0, 1, 2, 3


def traced(db, call):
    """(call()'s answer, the statements it ran on the test's connection)."""
    statements = []
    conn = db.connection()
    conn.set_trace_callback(statements.append)
    try:
        return call(), statements
    finally:
        conn.set_trace_callback(None)


def file_bug(services, as_user=ADMIN, now=None, **fields):
    """File a bug in TestProduct/TestComponent (fields override); returns its id."""
    params = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
              "summary": "Something is broken", "op_sys": "Linux", "platform": "PC"}
    params.update(fields)
    return services.call(bug_service.create, params, as_user=as_user, now=now)["id"]


def get_bug(services, bug_id, as_user=ADMIN, **params):
    """The bug object of `bug_id` as `as_user` sees it."""
    params.setdefault("ids", [bug_id])
    return services.call(bug_service.get, params, as_user=as_user, write=False)["bugs"][0]


def update_bug(services, bug_id, as_user=ADMIN, now=None, **params):
    """Update one bug; returns its entry of the answer ({id, alias, last_change_time, changes})."""
    params.setdefault("ids", [bug_id])
    return services.call(bug_service.update, params, as_user=as_user, now=now)["bugs"][0]


def set_param(services, name, value):
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM params WHERE name = ?", (name,))
        conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))


def editbugs_only_for_members(services):
    """Make editbugs an ordinary group: only the administrator stays in it
    (by default its regexp '.*' makes every account a member)."""
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE groups SET user_regexp = '' WHERE name = 'editbugs'")
        conn.execute("DELETE FROM user_groups WHERE grant_type = 2 AND group_id ="
                     " (SELECT id FROM groups WHERE name = 'editbugs')")
        for (user_id,) in conn.execute("SELECT id FROM users").fetchall():
            refresh_for_user(conn, user_id)


def add_to_group(services, login, group_name):
    with services.db.transaction(write=True) as conn:
        user_id = conn.execute("SELECT id FROM users WHERE login = ?", (login,)).fetchone()[0]
        group_id = conn.execute("SELECT id FROM groups WHERE name = ?", (group_name,)).fetchone()[0]
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, 0) ON CONFLICT DO NOTHING", (user_id, group_id))
        refresh_derived(conn, [user_id])      # what the group's membership of others gives


def add_bug_group(services, name, members=(), with_admin=True):
    """An active bug group with `members` (logins) and the administrator; the
    admin group sees its members, as for every new group. Returns its id."""
    with services.db.transaction(write=True) as conn:
        group_id = conn.execute("INSERT INTO groups (name, description, is_bug_group, is_active)"
                                " VALUES (?, ?, 1, 1)", (name, f"{name} group")).lastrowid
        grant_admin_visibility(conn, [group_id])
    for login in list(members) + ([ADMIN] if with_admin else []):
        add_to_group(services, login, name)
    return group_id


def control(services, group_id, membercontrol, othercontrol, product="TestProduct", entry=0,
            canedit=0):
    """Set the group control of `group_id` on `product`."""
    with services.db.transaction(write=True) as conn:
        product_id = conn.execute("SELECT id FROM products WHERE name = ?",
                                  (product,)).fetchone()[0]
        conn.execute("DELETE FROM group_controls WHERE group_id = ? AND product_id = ?",
                     (group_id, product_id))
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, ?, ?, ?, ?)",
                     (group_id, product_id, entry, membercontrol, othercontrol, canedit))


def add_keyword(services, name, is_active=True):
    with services.db.transaction(write=True) as conn:
        return conn.execute("INSERT INTO keywords (name, description, is_active) VALUES (?, ?, ?)",
                            (name, f"{name} keyword", int(is_active))).lastrowid


def add_flag_type(services, name, is_requestable=True, is_requesteeble=True,
                  is_multiplicable=True, is_active=True, grant_group=None, request_group=None,
                  target="b", sort_key=1):
    """A flag type for every product; returns its id."""
    with services.db.transaction(write=True) as conn:
        def group_id(group):
            if group is None:
                return None
            return conn.execute("SELECT id FROM groups WHERE name = ?", (group,)).fetchone()[0]
        type_id = conn.execute(
            "INSERT INTO flag_types (name, description, target_type, is_active, is_requestable,"
            " is_requesteeble, is_multiplicable, sort_key, grant_group_id, request_group_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, f"{name} flag", target, int(is_active), int(is_requestable),
             int(is_requesteeble), int(is_multiplicable), sort_key, group_id(grant_group),
             group_id(request_group))).lastrowid
        conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                     " VALUES (?, NULL, NULL)", (type_id,))
    return type_id


def add_custom_field(services, name, field_type, values=(), is_mandatory=False):
    """A custom field (select types get '---' and `values`); returns its id."""
    with services.db.transaction(write=True) as conn:
        field_id = conn.execute(
            "INSERT INTO fields (name, display_name, type, is_custom, is_mandatory,"
            " is_on_bug_entry, sort_key) VALUES (?, ?, ?, 1, ?, 1, 5000)",
            (name, name, field_type, int(is_mandatory))).lastrowid
        if field_type in (2, 3):
            for position, value in enumerate(("---",) + tuple(values)):
                conn.execute("INSERT INTO field_values (field_id, value, sort_key)"
                             " VALUES (?, ?, ?)", (field_id, value, position * 10))
    return field_id


def history_of(services, bug_id, as_user=ADMIN, **params):
    params.setdefault("ids", [bug_id])
    return services.call(bug_service.history, params, as_user=as_user,
                         write=False)["bugs"][0]["history"]


def comments_of(services, bug_id):
    """[(count, author login, body, is_private, kind, extra)] of a bug, in order."""
    return services.query("SELECT c.count, u.login, c.body, c.is_private, c.kind, c.extra"
                          " FROM comments c JOIN users u ON u.id = c.author_id"
                          " WHERE c.bug_id = ? ORDER BY c.count", (bug_id,))


def grant_visibility(services, viewers, group_name):
    """Let the members of group `viewers` see the members of group
    `group_name` while usevisibilitygroups is on: the visibility grant an
    administrator sets on editgroups.cgi (Group.update_inheritance, the
    group's other grants and inheritance kept)."""
    group_id = services.query("SELECT id FROM groups WHERE name = ?", (group_name,))[0][0]
    now = services.call(group_service.inheritance, {"ids": [group_id]}, as_user=ADMIN,
                        write=False)["groups"][0]
    services.call(group_service.update_inheritance, {
        "id": group_id, "member_groups": now["member_groups"],
        "visible_to": sorted(set(now["visible_to"]) | {viewers})}, as_user=ADMIN)
