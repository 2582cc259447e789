"""Deleting bugs for good, as the reference does when its parameter
allowbugdeletion is on and a product or component that has bugs is
deleted: each bug with everything that belongs to it (aliases, comments
with their tags and earlier texts, attachments with their data, flags,
history, CC list, keywords, groups, custom values, see-also links,
dependencies in both directions, personal tags, last visits, ignored-mail
marks, forge links, mail not yet sent about it). Other bugs that were
duplicates of a deleted one keep their resolution and lose the link, as
the reference's foreign keys do."""

from ..store import audit
from ..store.db import placeholders


# Tables of things that belong to one bug, by their bug column, children
# before their parents.
_BY_BUG = (("bug_aliases", "bug_id"), ("bug_cc", "bug_id"), ("bug_keywords", "bug_id"),
           ("bug_groups", "bug_id"), ("bug_see_also", "bug_id"),
           ("bug_custom_values", "bug_id"), ("bug_activity", "bug_id"), ("flags", "bug_id"),
           ("bug_user_last_visit", "bug_id"), ("bug_tags", "bug_id"),
           ("email_bug_ignore", "bug_id"), ("forge_links", "bug_id"),
           ("import_links", "bug_id"), ("outbox_messages", "bug_id"),
           ("outbox_events", "bug_id"), ("dependencies", "blocked"),
           ("dependencies", "depends_on"))


def delete_bugs(ctx, bug_ids):
    """Delete the bugs `bug_ids` and all that belongs to them; each is
    audited (Bugzilla::Bug, __remove__, its summary kept as its name).
    Returns the number deleted."""
    bug_ids = sorted(set(bug_ids))
    if not bug_ids:
        return 0
    conn = ctx.conn
    for start in range(0, len(bug_ids), 500):
        chunk = bug_ids[start:start + 500]
        marks = placeholders(chunk)
        summaries = conn.execute(f"SELECT id, summary FROM bugs WHERE id IN ({marks})",
                                 chunk).fetchall()
        comments = f"SELECT id FROM comments WHERE bug_id IN ({marks})"
        for table in ("comment_tags", "comment_revisions"):
            conn.execute(f"DELETE FROM {table} WHERE comment_id IN ({comments})", chunk)
        conn.execute("DELETE FROM attachment_data WHERE attachment_id IN"
                     f" (SELECT id FROM attachments WHERE bug_id IN ({marks}))", chunk)
        conn.execute("DELETE FROM outbox_messages WHERE event_id IN (SELECT id FROM"
                     f" outbox_events WHERE bug_id IN ({marks}))", chunk)
        for table, column in _BY_BUG:
            conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
        # Comments first: an attachment's comment points at the attachment.
        conn.execute(f"DELETE FROM comments WHERE bug_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM attachments WHERE bug_id IN ({marks})", chunk)
        conn.execute(f"UPDATE bugs SET dupe_of = NULL WHERE dupe_of IN ({marks})", chunk)
        conn.execute(f"DELETE FROM bugs WHERE id IN ({marks})", chunk)
        for bug_id, summary in summaries:
            audit.record(ctx, "Bug", bug_id, None, "__remove__", None, name=summary)
    return len(bug_ids)
