"""Which accounts the caller may see (the parameter usevisibilitygroups)."""


def visible_users_sql(ctx, column):
    """SQL condition (and its arguments) true when the account whose id is in
    `column` is visible to the caller. With the parameter usevisibilitygroups
    off (the default) every caller sees every account; when it is on, a
    caller sees the members of the groups its groups have a visibility
    grant on (Bugzilla's rule, set on editgroups.cgi), and besides its own
    account and the accounts sharing a group membership with it; members
    of editusers see all."""
    if not ctx.param_is_on("usevisibilitygroups") or ctx.caller.in_group("editusers"):
        return "1 = 1", []
    if not ctx.caller.is_logged_in:
        return "1 = 0", []
    return (f"({column} = ? OR EXISTS (SELECT 1 FROM user_groups theirs JOIN user_groups mine"
            f" ON mine.group_id = theirs.group_id WHERE theirs.user_id = {column}"
            " AND theirs.is_bless = 0 AND mine.user_id = ? AND mine.is_bless = 0)"
            " OR EXISTS (SELECT 1 FROM user_groups theirs JOIN group_grants seen"
            " ON seen.grantor_id = theirs.group_id AND seen.grant_type = 2"
            " JOIN user_groups mine ON mine.group_id = seen.member_id"
            f" WHERE theirs.user_id = {column} AND theirs.is_bless = 0"
            " AND mine.user_id = ? AND mine.is_bless = 0))",
            [ctx.caller.id, ctx.caller.id, ctx.caller.id])


def can_see_user(ctx, user_id):
    """True when account `user_id` is visible to the caller."""
    condition, args = visible_users_sql(ctx, "u.id")
    if condition == "1 = 1":
        return True
    return ctx.conn.execute(f"SELECT 1 FROM users u WHERE u.id = ? AND {condition}",
                            [user_id] + args).fetchone() is not None


def sees_every_user(ctx):
    """True when no account is hidden from the caller; only such a caller is
    told that an account does not exist (to others, hidden and missing answer alike)."""
    condition, args = visible_users_sql(ctx, "u.id")
    if condition == "1 = 1":
        return True
    return ctx.conn.execute(f"SELECT 1 FROM users u WHERE NOT {condition} LIMIT 1",
                            args).fetchone() is None
