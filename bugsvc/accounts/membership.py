"""Group membership granted by a group's user_regexp (grant_type 2).

Kept materialised in user_groups, like the reference, and refreshed whenever
a user's login or a group's regexp changes.
"""

import re

GRANT_DIRECT = 0
GRANT_REGEXP = 2


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
    conn.execute("DELETE FROM user_groups WHERE user_id = ? AND grant_type = ?", (user_id, GRANT_REGEXP))
    for group_id, pattern in conn.execute("SELECT id, user_regexp FROM groups WHERE user_regexp <> ''"
                                          ).fetchall():
        if regexp_matches(pattern, login):
            conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, 0, ?)", (user_id, group_id, GRANT_REGEXP))


def refresh_for_group(conn, group_id):
    """Recompute which accounts one group's regexp grants membership to."""
    pattern = conn.execute("SELECT user_regexp FROM groups WHERE id = ?", (group_id,)).fetchone()[0]
    conn.execute("DELETE FROM user_groups WHERE group_id = ? AND grant_type = ?", (group_id, GRANT_REGEXP))
    if not pattern:
        return
    compiled = re.compile(pattern, re.IGNORECASE)
    rows = [(user_id, group_id, GRANT_REGEXP)
            for user_id, login in conn.execute("SELECT id, login FROM users")
            if compiled.search(login)]
    conn.executemany("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, ?)", rows)
