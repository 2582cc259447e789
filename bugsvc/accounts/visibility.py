"""Which accounts the caller may see (the parameter usevisibilitygroups)."""


def visible_users_sql(ctx, column):
    """SQL condition (and its arguments) true when the account whose id is in
    `column` is visible to the caller. With the parameter usevisibilitygroups
    off (the default) every caller sees every account. When it is on, a
    caller sees exactly the members of the groups that one of its groups has
    a visibility grant on (group_grants grant_type 2, set on editgroups.cgi;
    memberships derived through inheritance count on both sides): there is
    no exception for its own account, for accounts sharing a group with it
    or for any group (an installation gives the admin group a grant on every
    other group); an account in no such group is hidden, and a logged-out
    caller sees nobody."""
    if not ctx.param_is_on("usevisibilitygroups"):
        return "1 = 1", []
    if not ctx.caller.is_logged_in:
        return "1 = 0", []
    return (f"EXISTS (SELECT 1 FROM user_groups theirs JOIN group_grants seen"
            " ON seen.grantor_id = theirs.group_id AND seen.grant_type = 2"
            " JOIN user_groups mine ON mine.group_id = seen.member_id"
            f" WHERE theirs.user_id = {column} AND theirs.is_bless = 0"
            " AND mine.user_id = ? AND mine.is_bless = 0)",
            [ctx.caller.id])


def administered_users_sql(ctx, column):
    """Like visible_users_sql, for the caller administering accounts
    (editusers.cgi, User.update): members of editusers see every account
    there, others the accounts visible to them."""
    if ctx.caller.in_group("editusers"):
        return "1 = 1", []
    return visible_users_sql(ctx, column)


def can_see_user(ctx, user_id, administering=False):
    """True when account `user_id` is visible to the caller (when
    `administering`, by administered_users_sql's rule)."""
    rule = administered_users_sql if administering else visible_users_sql
    condition, args = rule(ctx, "u.id")
    if condition == "1 = 1":
        return True
    return ctx.conn.execute(f"SELECT 1 FROM users u WHERE u.id = ? AND {condition}",
                            [user_id] + args).fetchone() is not None


def sees_every_user(ctx, administering=False):
    """True when no account is hidden from the caller (when `administering`,
    by administered_users_sql's rule); only such a caller is told that an
    account does not exist (to others, hidden and missing answer alike)."""
    rule = administered_users_sql if administering else visible_users_sql
    condition, args = rule(ctx, "u.id")
    if condition == "1 = 1":
        return True
    return ctx.conn.execute(f"SELECT 1 FROM users u WHERE NOT {condition} LIMIT 1",
                            args).fetchone() is None
