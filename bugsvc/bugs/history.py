"""A bug's history as the caller may see it.

Left out for the caller: changes of private comments' privacy and of
private attachments (non-insiders), time-tracking fields (non-timetrackers),
and ids of bugs they cannot see in the changes of fields holding bug ids
(depends_on, blocks and Bug ID custom fields); a change of such a field that
names no bug the caller may see is left out whole.

The same rule decides which history rows a search's changed* conditions
read (`visible_rows_sql`, `visible_value`), so a search never tells more of
a bug's history than the history itself.
"""

from .. import dates
from ..accounts.email import visible_email
from ..catalogue.field_types import BUG_ID
from . import visibility
from .lookup import visible_bug_id
from .permissions import TIME_FIELDS


_DEPENDENCY_FIELDS = ("depends_on", "blocks")


def histories(ctx, bug_values, new_since=None):
    """[{"id", "alias", "history"}] of the bugs of `bug_values` (ids or
    aliases), each history as `history` gives it. Errors: 100/101/102."""
    result = []
    for value in bug_values:
        bug_id = visible_bug_id(ctx, value)
        aliases = [row[0] for row in ctx.conn.execute(
            "SELECT alias FROM bug_aliases WHERE bug_id = ? ORDER BY id", (bug_id,))]
        result.append({"id": bug_id, "alias": aliases,
                       "history": history(ctx, bug_id, new_since)})
    return result


def history(ctx, bug_id, new_since=None):
    """[{when, who, changes: [{field_name, removed, added, attachment_id?,
    comment_id?}]}],
    one entry per (who, when), oldest first. new_since: aware datetime;
    only later changes."""
    visible_rows, args = visible_rows_sql(ctx, "a")
    sql = ("SELECT a.id, a.changed_at, u.login, a.field, a.removed, a.added, a.attachment_id,"
           " a.comment_id"
           " FROM bug_activity a JOIN users u ON u.id = a.who"
           f" WHERE a.bug_id = ? AND {visible_rows}")
    args = [bug_id] + args
    if new_since is not None:
        sql += " AND a.changed_at > ?"
        args.append(dates.to_db(new_since))
    rows = ctx.conn.execute(sql + " ORDER BY a.changed_at, a.id", args).fetchall()
    id_fields = bug_id_fields(ctx)
    visible = visibility.visible_bug_ids(ctx, {
        bug for row in rows if row["field"] in id_fields
        for bug in _ids(row["removed"]) + _ids(row["added"])})
    entries = []
    for row in rows:
        change = {"field_name": row["field"], "removed": row["removed"], "added": row["added"]}
        if row["field"] in id_fields:
            change["removed"] = _only_visible(row["removed"], visible)
            change["added"] = _only_visible(row["added"], visible)
        if row["attachment_id"] is not None:
            change["attachment_id"] = row["attachment_id"]
        # The comment a change is about (the reference attaches the whole
        # comment row there): rows of comments the caller may not see are
        # already left out above.
        if row["comment_id"] is not None:
            change["comment_id"] = row["comment_id"]
        who = visible_email(ctx, row["login"])
        when = dates.from_db(row["changed_at"])
        if entries and entries[-1]["when"] == when and entries[-1]["who"] == who:
            entries[-1]["changes"].append(change)
        else:
            entries.append({"when": when, "who": who, "changes": [change]})
    return entries


def visible_changes(ctx, changes):
    """The history rows `changes` ([{field, removed, added, attachment_id?,
    comment_id?}], as outbox events hold them) that the caller may see, by
    the rule of `history`, with the values of fields holding bug ids
    limited to the bugs the caller may see. The privacy of comments and
    attachments is read as it is now."""
    insider = visibility.is_insider(ctx)
    hidden_comments, hidden_attachments = set(), set()
    if not insider:
        hidden_comments = _private(ctx, "comments", {c.get("comment_id") for c in changes})
        hidden_attachments = _private(ctx, "attachments",
                                      {c.get("attachment_id") for c in changes})
    timetracker = visibility.is_timetracker(ctx)
    id_fields = bug_id_fields(ctx)
    visible = visibility.visible_bug_ids(ctx, {bug for c in changes if c["field"] in id_fields
                                               for bug in _ids(c["removed"]) + _ids(c["added"])})
    shown = []
    for change in changes:
        if (change.get("comment_id") in hidden_comments
                or change.get("attachment_id") in hidden_attachments
                or (not timetracker and change["field"] in TIME_FIELDS)):
            continue
        change = dict(change)
        if change["field"] in id_fields:
            change["removed"] = _only_visible(change["removed"], visible)
            change["added"] = _only_visible(change["added"], visible)
            if not change["removed"] and not change["added"]:
                continue
        shown.append(change)
    return shown


def _private(ctx, table, ids):
    """The private ones among `ids` of comments or attachments (`table`)."""
    ids = sorted(i for i in ids if i is not None)
    if not ids:
        return set()
    return {row[0] for row in ctx.conn.execute(
        f"SELECT id FROM {table} WHERE is_private <> 0 AND id IN"
        f" ({', '.join('?' for _ in ids)})", ids)}


def bug_id_fields(ctx):
    """Names of the fields whose history values are bug ids: depends_on,
    blocks and every Bug ID custom field."""
    return _DEPENDENCY_FIELDS + tuple(row[0] for row in ctx.conn.execute(
        "SELECT name FROM fields WHERE is_custom = 1 AND type = ?", (BUG_ID,)))


def visible_rows_sql(ctx, row="a"):
    """SQL condition (and its arguments) true for the bug_activity rows
    (table alias `row`) the caller may see: for non-insiders none about a
    private comment or attachment, for non-timetrackers none of a
    time-tracking field, and a change of a field holding bug ids only when
    it names a bug the caller may see."""
    parts, args = [], []
    if not visibility.is_insider(ctx):
        parts.append(f"NOT EXISTS (SELECT 1 FROM comments hc WHERE hc.id = {row}.comment_id"
                     " AND hc.is_private <> 0)")
        parts.append(f"NOT EXISTS (SELECT 1 FROM attachments ha WHERE ha.id = {row}.attachment_id"
                     " AND ha.is_private <> 0)")
    if not visibility.is_timetracker(ctx):
        parts.append(f"{row}.field NOT IN ({', '.join('?' for _ in TIME_FIELDS)})")
        args += list(TIME_FIELDS)
    id_fields = bug_id_fields(ctx)
    # The ids of a change: values are ids joined by ", ".
    ids = (f"{row}.removed || CASE WHEN {row}.removed <> '' AND {row}.added <> ''"
           f" THEN ', ' ELSE '' END || {row}.added")
    visible, visible_args = visibility.bug_visibility_sql(ctx, "hb")
    parts.append(f"({row}.field NOT IN ({', '.join('?' for _ in id_fields)}) OR EXISTS"
                 f" (SELECT 1 FROM {ctx.conn.dialect.numbers_in(ids, 'hj')}"
                 f" JOIN bugs hb ON hb.id = hj.value WHERE {visible}))")
    args += list(id_fields) + visible_args
    return "(" + " AND ".join(parts) + ")", args


def visible_value(ctx, field, text):
    """`text`, a value of history field `field`, as the caller may see it:
    ids of bugs the caller may not see (or that do not exist) left out of
    the values of fields holding bug ids; other fields' values as they are."""
    if field not in bug_id_fields(ctx):
        return text
    ids = _ids(text)
    return _only_visible(text, visibility.visible_bug_ids(ctx, ids))


def _ids(text):
    return [int(part) for part in text.replace(",", " ").split() if part.isdigit()]


def _only_visible(text, visible):
    return ", ".join(str(bug_id) for bug_id in _ids(text) if bug_id in visible)
