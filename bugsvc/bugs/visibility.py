"""Who may see and use which product: the reference's per-product group
controls, in one place for every area; which bugs and
accounts the caller may see.

membercontrol / othercontrol values: 0 NA, 1 Shown, 2 Default, 3 Mandatory.
"""

from ..store.db import placeholders

NA, SHOWN, DEFAULT, MANDATORY = 0, 1, 2, 3
CONTROL_NAMES = {NA: "NA", SHOWN: "Shown", DEFAULT: "Default", MANDATORY: "Mandatory"}
CONTROL_VALUES = {name: value for value, name in CONTROL_NAMES.items()}


def _not_in_groups(caller, column):
    """SQL condition '<column> NOT IN (caller's groups)' and its arguments."""
    groups = sorted(caller.group_ids)
    if not groups:
        return "1 = 1", []
    return f"{column} NOT IN ({placeholders(groups)})", groups


def selectable_product_ids(ctx):
    """Ids of the products the caller may search: those with no Mandatory
    group control for a group the caller is not in."""
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})"
        " ORDER BY lower(p.name)", args)
    return [row[0] for row in rows]


def enterable_product_ids(ctx):
    """Ids of the active products the caller may file bugs in: member of every
    entry group, with at least one active component and one active version.

    Searching is another right: a product with a Mandatory control for a
    group the caller is not in, but no entry group it lacks, is enterable
    without being selectable (the reference's "report a security bug here"
    product). A bug filed there gets the group, and its reporter keeps
    access to it through is_creator_accessible.
    """
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE p.is_active = 1"
        " AND EXISTS (SELECT 1 FROM components c WHERE c.product_id = p.id AND c.is_active = 1)"
        " AND EXISTS (SELECT 1 FROM versions v WHERE v.product_id = p.id AND v.is_active = 1)"
        " AND NOT EXISTS (SELECT 1 FROM group_controls gc WHERE gc.product_id = p.id"
        f" AND gc.entry <> 0 AND {condition})"
        " ORDER BY lower(p.name)", args)
    return [row[0] for row in rows]


def accessible_product_ids(ctx):
    """Ids of the products the caller may search or file bugs in, by name."""
    selectable = selectable_product_ids(ctx)
    enterable = set(enterable_product_ids(ctx)) - set(selectable)
    ids = selectable + sorted(enterable)
    if not enterable:
        return ids
    names = dict(ctx.conn.execute(f"SELECT id, lower(name) FROM products WHERE id IN"
                                  f" ({placeholders(ids)})", ids).fetchall())
    return sorted(ids, key=lambda pid: names[pid])


def can_see_product(ctx, product_id):
    """True when the caller may search product `product_id`."""
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    row = ctx.conn.execute(
        "SELECT 1 FROM products p WHERE p.id = ? AND NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})",
        [product_id] + args).fetchone()
    return row is not None


def can_enter_product(ctx, product_id):
    """True when the caller may file bugs in product `product_id` right now."""
    return product_id in enterable_product_ids(ctx)


def bug_visibility_sql(ctx, bug="b"):
    """SQL condition (and its arguments) true for the rows of table alias
    `bug` that the caller may see.

    A bug is visible when the caller is in every group the bug is restricted
    to, or is its reporter (while is_creator_accessible), on its CC list
    (while is_cc_accessible), its assignee or its QA contact.
    """
    condition, args = _not_in_groups(ctx.caller, "bg.group_id")
    sql = f"(NOT EXISTS (SELECT 1 FROM bug_groups bg WHERE bg.bug_id = {bug}.id AND {condition})"
    user_id = ctx.caller.id
    if user_id is not None:
        sql += (f" OR ({bug}.reporter = ? AND {bug}.is_creator_accessible = 1)"
                f" OR {bug}.assigned_to = ? OR {bug}.qa_contact = ?"
                f" OR ({bug}.is_cc_accessible = 1 AND EXISTS (SELECT 1 FROM bug_cc cc"
                f" WHERE cc.bug_id = {bug}.id AND cc.user_id = ?))")
        args = args + [user_id, user_id, user_id, user_id]
    return sql + ")", args


def visible_bug_ids(ctx, bug_ids):
    """The subset of `bug_ids` (existing bugs) the caller may see."""
    bug_ids = list(bug_ids)
    if not bug_ids:
        return set()
    condition, args = bug_visibility_sql(ctx)
    rows = ctx.conn.execute(f"SELECT b.id FROM bugs b WHERE b.id IN ({placeholders(bug_ids)})"
                            f" AND {condition}", bug_ids + args)
    return {row[0] for row in rows}


def sees_every_bug(ctx):
    """True when no bug is hidden from the caller: it is in every group some
    bug is restricted to. Only such a caller is told that a bug id does not
    exist (hidden and missing bugs answer alike to everyone else)."""
    condition, args = _not_in_groups(ctx.caller, "g.id")
    row = ctx.conn.execute(f"SELECT 1 FROM groups g WHERE {condition} AND EXISTS"
                           " (SELECT 1 FROM bug_groups bg WHERE bg.group_id = g.id) LIMIT 1",
                           args).fetchone()
    return row is None


def visible_users_sql(ctx, column):
    """SQL condition (and its arguments) true when the account whose id is in
    `column` is visible to the caller. With the parameter usevisibilitygroups
    off (the default) every caller sees every account; when it is on, a
    caller sees its own account and the accounts sharing a group membership
    with it, and members of editusers see all."""
    if not ctx.param_is_on("usevisibilitygroups") or ctx.caller.in_group("editusers"):
        return "1 = 1", []
    if not ctx.caller.is_logged_in:
        return "1 = 0", []
    return (f"({column} = ? OR EXISTS (SELECT 1 FROM user_groups theirs JOIN user_groups mine"
            f" ON mine.group_id = theirs.group_id WHERE theirs.user_id = {column}"
            " AND theirs.is_bless = 0 AND mine.user_id = ? AND mine.is_bless = 0))",
            [ctx.caller.id, ctx.caller.id])


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


def is_insider(ctx):
    """True when the caller is in the insidergroup (sees private comments and
    attachments); nobody is when the parameter is empty."""
    group = ctx.param("insidergroup")
    return bool(group) and ctx.caller.in_group(group)


def is_timetracker(ctx):
    """True when the caller is in the timetrackinggroup."""
    group = ctx.param("timetrackinggroup")
    return bool(group) and ctx.caller.in_group(group)
