"""A bug's history as the caller may see it (bugs.md section 8).

Left out for the caller: changes of private comments' privacy and of
private attachments (non-insiders), time-tracking fields (non-timetrackers),
and ids of bugs they cannot see in depends_on/blocks changes.
"""

from ..accounts import access
from .. import dates
from ..accounts.email import visible_email
from .permissions import TIME_FIELDS

_DEPENDENCY_FIELDS = ("depends_on", "blocks")


def history(ctx, bug_id, new_since=None):
    """[{when, who, changes: [{field_name, removed, added, attachment_id?}]}],
    one entry per (who, when), oldest first. new_since: aware datetime;
    only later changes."""
    sql = ("SELECT a.id, a.changed_at, u.login, a.field, a.removed, a.added, a.attachment_id"
           " FROM bug_activity a JOIN users u ON u.id = a.who"
           " LEFT JOIN comments c ON c.id = a.comment_id"
           " LEFT JOIN attachments att ON att.id = a.attachment_id"
           " WHERE a.bug_id = ?")
    args = [bug_id]
    if new_since is not None:
        sql += " AND a.changed_at > ?"
        args.append(dates.to_db(new_since))
    if not access.is_insider(ctx):
        sql += " AND COALESCE(c.is_private, 0) = 0 AND COALESCE(att.is_private, 0) = 0"
    if not access.is_timetracker(ctx):
        sql += f" AND a.field NOT IN ({', '.join('?' for _ in TIME_FIELDS)})"
        args += list(TIME_FIELDS)
    rows = ctx.conn.execute(sql + " ORDER BY a.changed_at, a.id", args).fetchall()
    visible = _visible_dependencies(ctx, rows)
    entries = []
    for row in rows:
        change = {"field_name": row["field"], "removed": row["removed"], "added": row["added"]}
        if row["field"] in _DEPENDENCY_FIELDS:
            change["removed"] = _only_visible(row["removed"], visible)
            change["added"] = _only_visible(row["added"], visible)
            if not change["removed"] and not change["added"]:
                continue
        if row["attachment_id"] is not None:
            change["attachment_id"] = row["attachment_id"]
        who = visible_email(ctx, row["login"])
        when = dates.from_db(row["changed_at"])
        if entries and entries[-1]["when"] == when and entries[-1]["who"] == who:
            entries[-1]["changes"].append(change)
        else:
            entries.append({"when": when, "who": who, "changes": [change]})
    return entries


def _ids(text):
    return [int(part) for part in text.replace(",", " ").split() if part.isdigit()]


def _visible_dependencies(ctx, rows):
    ids = {bug_id for row in rows if row["field"] in _DEPENDENCY_FIELDS
           for bug_id in _ids(row["removed"]) + _ids(row["added"])}
    return access.visible_bug_ids(ctx, ids)


def _only_visible(text, visible):
    return ", ".join(str(bug_id) for bug_id in _ids(text) if bug_id in visible)
