"""Group membership: the members a new group starts with, membership
granted by a group's user_regexp (grant_type 2), and membership derived
through groups whose members are members of another group (grant_type 1,
group_group_map).

Kept materialised in user_groups, like the reference, and refreshed whenever
a user's login or direct groups, a group's regexp, or the groups' inheritance
change.
"""

import re

from ..store.db import placeholders


GRANT_DIRECT = 0
GRANT_DERIVED = 1
GRANT_REGEXP = 2

# group_grants' grant types: the members of one group may add and remove
# the members of another (bless), or see them while usevisibilitygroups is
# on (visibility).
GRANT_BLESS = 1
GRANT_VISIBLE = 2


def grant_admin_visibility(conn, group_ids):
    """Give the admin group a visibility grant on each group of `group_ids`
    (but admin itself) that lacks one, as the reference does for every group
    it creates once its admin group exists. Nothing when there is no admin
    group."""
    admin = conn.execute("SELECT id FROM groups WHERE name = 'admin'").fetchone()
    if admin is None:
        return
    held = {row[0] for row in conn.execute(
        "SELECT grantor_id FROM group_grants WHERE member_id = ? AND grant_type = ?",
        (admin[0], GRANT_VISIBLE))}
    conn.executemany("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                     " VALUES (?, ?, ?)",
                     [(admin[0], group_id, GRANT_VISIBLE) for group_id in sorted(set(group_ids))
                      if group_id != admin[0] and group_id not in held])


def grant_admin(conn, group_id):
    """Make the admin group a member of group `group_id` with a bless and a
    visibility grant on it, as the reference does for every group it
    creates once its admin group exists, and make the accounts that are
    members of admin members of it (derived). Nothing without an admin
    group, or for admin itself."""
    admin = conn.execute("SELECT id FROM groups WHERE name = 'admin'").fetchone()
    if admin is None or admin[0] == group_id:
        return
    conn.execute("INSERT INTO group_group_map (member_id, grantor_id) VALUES (?, ?)",
                 (admin[0], group_id))
    conn.execute("INSERT INTO group_grants (member_id, grantor_id, grant_type) VALUES (?, ?, ?)",
                 (admin[0], group_id, GRANT_BLESS))
    grant_admin_visibility(conn, [group_id])
    admins = [row[0] for row in conn.execute(
        "SELECT DISTINCT user_id FROM user_groups WHERE group_id = ? AND is_bless = 0",
        (admin[0],))]
    if admins:
        refresh_derived(conn, admins)


def create_bug_group(conn, name, description, user_regexp="", is_active=True, icon_url=""):
    """Store a new bug group: the admin group becomes its member, with bless
    and visibility grants on it (grant_admin), so the members of admin are
    members through it (derived, for as long as they are admins), and
    accounts whose login matches `user_regexp` become members. Nobody is
    made a direct member. Returns the group's id."""
    cur = conn.execute(
        "INSERT INTO groups (name, description, is_bug_group, user_regexp, is_active, icon_url)"
        " VALUES (?, ?, 1, ?, ?, ?) RETURNING id",
        (name, description, user_regexp, int(is_active), icon_url))
    group_id = cur.fetchone()[0]
    grant_admin(conn, group_id)
    refresh_for_group(conn, group_id)
    return group_id


def regexp_matches(pattern, login):
    """True when `login` matches the group regexp `pattern` (case-insensitive search)."""
    if not pattern:
        return False
    try:
        return re.search(pattern, login, re.IGNORECASE) is not None
    except re.error:
        return False


def refresh_for_user(conn, user_id):
    """Recompute the regexp memberships of one account."""
    login = conn.execute("SELECT login FROM users WHERE id = ?", (user_id,)).fetchone()[0]
    conn.execute("DELETE FROM user_groups WHERE user_id = ? AND grant_type = ?",
                 (user_id, GRANT_REGEXP))
    for group_id, pattern in conn.execute("SELECT id, user_regexp FROM groups"
                                          " WHERE user_regexp <> ''").fetchall():
        if regexp_matches(pattern, login):
            conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, 0, ?)", (user_id, group_id, GRANT_REGEXP))
    refresh_derived(conn, [user_id])


def refresh_for_group(conn, group_id):
    """Recompute which accounts one group's regexp grants membership to."""
    pattern = conn.execute("SELECT user_regexp FROM groups WHERE id = ?", (group_id,)).fetchone()[0]
    conn.execute("DELETE FROM user_groups WHERE group_id = ? AND grant_type = ?",
                 (group_id, GRANT_REGEXP))
    if not pattern:
        return
    compiled = re.compile(pattern, re.IGNORECASE)
    rows = [(user_id, group_id, GRANT_REGEXP)
            for user_id, login in conn.execute("SELECT id, login FROM users")
            if compiled.search(login)]
    conn.executemany("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, ?)", rows)
    refresh_derived(conn)


def refresh_derived(conn, user_ids=None):
    """Recompute the memberships derived through group_group_map of the
    accounts `user_ids` (every account when None): an account that is a
    member of a group (directly or by regexp) is a member of every group
    that group's members are members of, through any chain (a loop ends)."""
    if user_ids is None:
        conn.execute("DELETE FROM user_groups WHERE grant_type = ?", (GRANT_DERIVED,))
    else:
        for user_id in user_ids:
            conn.execute("DELETE FROM user_groups WHERE user_id = ? AND grant_type = ?",
                         (user_id, GRANT_DERIVED))
    grants = {}
    for member_id, grantor_id in conn.execute("SELECT member_id, grantor_id"
                                              " FROM group_group_map"):
        grants.setdefault(member_id, []).append(grantor_id)
    if not grants:
        return
    sql = "SELECT user_id, group_id FROM user_groups WHERE is_bless = 0"
    args = []
    if user_ids is not None:
        sql += f" AND user_id IN ({placeholders(user_ids)})"
        args = list(user_ids)
    own = {}
    for user_id, group_id in conn.execute(sql, args):
        own.setdefault(user_id, set()).add(group_id)
    rows = []
    for user_id, groups in own.items():
        reached, waiting = set(), list(groups)
        while waiting:
            for grantor_id in grants.get(waiting.pop(), ()):
                if grantor_id not in groups and grantor_id not in reached:
                    reached.add(grantor_id)
                    waiting.append(grantor_id)
        rows.extend((user_id, group_id, GRANT_DERIVED) for group_id in sorted(reached))
    conn.executemany("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, ?)", rows)


def not_member_sql(caller, column):
    """SQL condition true when the group id in `column` is one `caller` is
    not a member of, and its arguments."""
    groups = sorted(caller.group_ids)
    if not groups:
        return "1 = 1", []
    return f"{column} NOT IN ({placeholders(groups)})", groups
