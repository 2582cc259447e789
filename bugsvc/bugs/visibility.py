"""Which bugs the caller may see, and which of their private parts: the
bug groups a bug is restricted to, its reporter, assignee, QA contact and
CC list (the reference's rule); private comments and attachments for the
insidergroup, the time fields for the timetrackinggroup."""

import functools

from ..accounts.membership import not_member_sql
from ..store.db import placeholders


def bug_visibility_sql(ctx, bug="b", scan=False):
    """SQL condition (and its arguments, a new list) true for the rows of
    table alias `bug` that the caller may see.

    A bug is visible when the caller is in every group the bug is restricted
    to, or is its reporter (while is_creator_accessible), on its CC list
    (while is_cc_accessible), its assignee or its QA contact.

    Its subqueries are looked up for each bug the statement reaches
    (dialect.per_row_subquery_end), as SQLite does: their cost follows the
    bugs checked, not the size of bug_groups or of the caller's CC list.
    scan: the statement may go over most bugs (a count, a report, a
    queue): the engine may then read each subquery's table once instead.
    """
    end = "" if scan else ctx.conn.dialect.per_row_subquery_end
    try:
        sql, args = _visibility_sql(ctx.caller, bug, end)
    except TypeError:                   # a caller that cannot be a key (not a frozen Caller)
        sql, args = _visibility_sql.__wrapped__(ctx.caller, bug, end)
    return sql, list(args)


@functools.lru_cache(maxsize=1024)
def _visibility_sql(caller, bug, end):
    """bug_visibility_sql's (condition, arguments as a tuple) for `caller`,
    a Caller: it never changes, so the same caller always gets the same
    text, made once. end: what ends each subquery (the dialect's
    per_row_subquery_end)."""
    condition, args = not_member_sql(caller, "bg.group_id")
    sql = (f"(NOT EXISTS (SELECT 1 FROM bug_groups bg WHERE bg.bug_id = {bug}.id"
           f" AND {condition}{end})")
    user_id = caller.id
    if user_id is not None:
        sql += (f" OR ({bug}.reporter = ? AND {bug}.is_creator_accessible = 1)"
                f" OR {bug}.assigned_to = ? OR {bug}.qa_contact = ?"
                f" OR ({bug}.is_cc_accessible = 1 AND EXISTS (SELECT 1 FROM bug_cc cc"
                f" WHERE cc.bug_id = {bug}.id AND cc.user_id = ?{end}))")
        args = args + [user_id, user_id, user_id, user_id]
    return sql + ")", tuple(args)


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
    condition, args = not_member_sql(ctx.caller, "g.id")
    row = ctx.conn.execute(f"SELECT 1 FROM groups g WHERE {condition} AND EXISTS"
                           " (SELECT 1 FROM bug_groups bg WHERE bg.group_id = g.id) LIMIT 1",
                           args).fetchone()
    return row is None


def is_insider(ctx):
    """True when the caller is in the insidergroup (sees private comments and
    attachments); nobody is when the parameter is empty."""
    group = ctx.param("insidergroup")
    return bool(group) and ctx.caller.in_group(group)


def is_timetracker(ctx):
    """True when the caller is in the timetrackinggroup."""
    group = ctx.param("timetrackinggroup")
    return bool(group) and ctx.caller.in_group(group)
