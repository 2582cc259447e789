"""Personal tags on bugs (the bug field `tags`): each account's own labels."""

from ..errors import USER_ERROR, ServiceError
from .lookup import visible_bug_id


MAX_TAG_LENGTH = 64


def tags_of(conn, user_id, bug_id):
    """The account's tags on the bug, by name."""
    return [row[0] for row in conn.execute(
        "SELECT t.name FROM bug_tags bt JOIN personal_tags t ON t.id = bt.tag_id"
        " WHERE bt.bug_id = ? AND t.user_id = ? ORDER BY lower(t.name)", (bug_id, user_id))]


def _name(value):
    name = str(value).strip() if value is not None else ""
    if not name:
        raise ServiceError(USER_ERROR, "A tag name cannot be empty.")
    if len(name) > MAX_TAG_LENGTH:
        raise ServiceError(USER_ERROR, f"Tag names cannot be longer than {MAX_TAG_LENGTH} "
                                       "characters.")
    return name


def add(conn, user_id, bug_id, value):
    """Tag the bug (creating the account's tag when new). Errors: 32000 bad name."""
    name = _name(value)
    row = conn.execute("SELECT id FROM personal_tags WHERE user_id = ? AND lower(name) = lower(?)",
                       (user_id, name)).fetchone()
    tag_id = row[0] if row else conn.execute(
        "INSERT INTO personal_tags (user_id, name) VALUES (?, ?) RETURNING id",
        (user_id, name)).fetchone()[0]
    conn.execute("INSERT INTO bug_tags (bug_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                 (bug_id, tag_id))


def remove(conn, user_id, bug_id, value):
    """Untag the bug (an unknown tag is ignored). Errors: 32000 bad name."""
    name = _name(value)
    conn.execute("DELETE FROM bug_tags WHERE bug_id = ? AND tag_id IN (SELECT id FROM"
                 " personal_tags WHERE user_id = ? AND lower(name) = lower(?))",
                 (bug_id, user_id, name))


def change(ctx, bug_values, to_remove, to_add):
    """Remove the caller's tags `to_remove`, then add `to_add` (names as
    given), on the bugs of `bug_values` (ids or aliases). Returns {bug id: {"removed": [...],
    "added": [...]}}. Errors: 100/101/102; 32000 empty or too long tag name.
    """
    changes = {}
    for value in bug_values:
        bug_id = visible_bug_id(ctx, value)
        before = tags_of(ctx.conn, ctx.caller.id, bug_id)
        for name in to_remove:
            remove(ctx.conn, ctx.caller.id, bug_id, name)
        for name in to_add:
            add(ctx.conn, ctx.caller.id, bug_id, name)
        after = tags_of(ctx.conn, ctx.caller.id, bug_id)
        changes[bug_id] = {"removed": [t for t in before if t not in after],
                           "added": [t for t in after if t not in before]}
    return changes
