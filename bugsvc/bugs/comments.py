"""Comments: storing (numbering, normalisation, limits),
reading them as Comment objects (rendered system texts, tags), time worked."""

from ..accounts import access
from .. import dates
from ..store.db import placeholders
from ..accounts.email import visible_email
from ..errors import ServiceError, COMMENT_TOO_LONG
from . import activity
from ..call.fields import Shape

MAX_COMMENT_LENGTH = 65535

# comments.kind values
PLAIN, DUPE_OF, HAS_DUPE, ATTACHMENT_CREATED, ATTACHMENT_UPDATED = 0, 2, 3, 5, 6

# include/exclude shape of comments, by bug and by comment id.
COMMENT_SHAPE = Shape()
COMMENT_SHAPES = {"bugs.*.comments": COMMENT_SHAPE, "comments.*": COMMENT_SHAPE}


def normalise(text):
    """Comment text as stored: CRLF/CR become LF, trailing whitespace removed.

    Errors: 114 when longer than 65535 characters.
    """
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if len(text) > MAX_COMMENT_LENGTH:
        raise ServiceError(COMMENT_TOO_LONG, f"A comment cannot be longer than "
                                             f"{MAX_COMMENT_LENGTH} characters.")
    return text


def insert(conn, bug_id, author_id, body, when, is_private=False, work_time=0.0, kind=PLAIN,
           extra=None, attachment_id=None):
    """Store a comment as the bug's next one (count 0 is the description).

    body: already normalised text. when: aware datetime. Returns the new id.
    """
    count = conn.execute("SELECT COALESCE(MAX(count) + 1, 0) FROM comments WHERE bug_id = ?",
                         (bug_id,)).fetchone()[0]
    cur = conn.execute(
        "INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private, work_time,"
        " kind, extra, attachment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (bug_id, count, author_id, dates.to_db(when), body, 1 if is_private else 0, work_time or 0,
         kind, extra, attachment_id))
    return cur.fetchone()[0]


def add(ctx, bug_id, body, is_private=False, work_time=0.0, kind=PLAIN, extra=None,
        attachment_id=None):
    """Store a comment of the caller at the call's time (see `insert`) and
    note it in the call's journal of events. Returns the new id."""
    comment_id = insert(ctx.conn, bug_id, ctx.caller.id, body, ctx.now, is_private, work_time,
                        kind, extra, attachment_id)
    ctx.events.commented(bug_id, comment_id)
    return comment_id


# Reading comments --------------------------------------------------------------

_SELECT = ("SELECT c.id, c.bug_id, c.count, u.login AS creator, c.created_at, c.body,"
           " c.is_private, c.kind, c.extra, c.attachment_id"
           " FROM comments c JOIN users u ON u.id = c.author_id")


def select_rows(ctx, where, args):
    """Comment rows matching `where` (SQL over alias c), oldest first."""
    return ctx.conn.execute(f"{_SELECT} WHERE {where} ORDER BY c.created_at, c.id",
                            list(args)).fetchall()


def render_text(kind, body, extra, attachment_summary=""):
    """The `text` of a comment: system comments are rendered as the reference shows them."""
    if kind == DUPE_OF:
        return f"{body}\n\n*** This bug has been marked as a duplicate of bug {extra} ***"
    if kind == HAS_DUPE:
        return f"*** Bug {extra} has been marked as a duplicate of this bug. ***"
    if kind in (ATTACHMENT_CREATED, ATTACHMENT_UPDATED):
        verb = "Created attachment" if kind == ATTACHMENT_CREATED else "Comment on attachment"
        return f"{verb} {extra}\n{attachment_summary}\n\n{body}".rstrip()
    return body


def _attachment_of(row):
    """The attachment a comment is about (kinds 5 and 6), else None."""
    if row["kind"] not in (ATTACHMENT_CREATED, ATTACHMENT_UPDATED):
        return None
    if row["attachment_id"] is not None:
        return row["attachment_id"]
    extra = str(row["extra"] or "")
    return int(extra) if extra.isdigit() else None


def _attachment_summaries(ctx, attachment_ids):
    """{attachment id: summary} of those of `attachment_ids` the caller may
    see. The text of an attachment comment shows the attachment's current
    summary, and the comment may be public while the attachment is private
    (it was made private later, or the comment was made public): the summary
    of a private attachment shows only to insiders and to its creator, the
    callers who see it in the bug's attachment list; everyone else reads the
    comment with that line empty."""
    insider = access.is_insider(ctx)
    return {row["id"]: row["summary"] for row in ctx.conn.execute(
        "SELECT id, summary, is_private, creator_id FROM attachments"
        f" WHERE id IN ({placeholders(attachment_ids)})", attachment_ids)
        if insider or not row["is_private"] or row["creator_id"] == ctx.caller.id}


def tags_enabled(ctx):
    """True while comment tagging is on (comment_taggers_group non-empty)."""
    return bool(ctx.param("comment_taggers_group"))


def tags_of(conn, comment_ids):
    """{comment id: sorted list of its tags} for `comment_ids`."""
    result = {comment_id: [] for comment_id in comment_ids}
    ids = list(result)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for comment_id, tag in conn.execute(
                "SELECT comment_id, tag FROM comment_tags"
                f" WHERE comment_id IN ({placeholders(chunk)})",
                chunk):
            result[comment_id].append(tag)
    for tags in result.values():
        tags.sort()
    return result


def comment_objects(ctx, rows):
    """Comment objects (interface "Comment") for `rows` of select_rows, in order."""
    attachment_ids = sorted({a for a in (_attachment_of(row) for row in rows) if a is not None})
    summaries = _attachment_summaries(ctx, attachment_ids) if attachment_ids else {}
    tags = None
    if tags_enabled(ctx) and ctx.fields.wants("tags", COMMENT_SHAPE):
        tags = tags_of(ctx.conn, [row["id"] for row in rows])
    objects = []
    for row in rows:
        attachment_id = _attachment_of(row)
        when = dates.from_db(row["created_at"])
        obj = {
            "id": row["id"],
            "bug_id": row["bug_id"],
            "attachment_id": attachment_id,
            "count": row["count"],
            "text": render_text(row["kind"], row["body"], row["extra"],
                                summaries.get(attachment_id, "")),
            "creator": visible_email(ctx, row["creator"]),
            "time": when,
            "creation_time": when,
            "is_private": bool(row["is_private"]),
        }
        if tags is not None:
            obj["tags"] = tags[row["id"]]
        objects.append(obj)
    return objects


# Time worked -------------------------------------------------------------------

def format_hours(hours):
    """Hours as history shows them: two decimals."""
    return f"{hours:.2f}"


def record_work_time(ctx, bug_id, comment_id, hours):
    """Book `hours` worked on the bug: a work_time history row, and the
    remaining time lowered by them (never below 0), with its own row."""
    activity.log(ctx, bug_id, "work_time", "", format_hours(hours), comment_id=comment_id)
    remaining = ctx.conn.execute("SELECT remaining_time FROM bugs WHERE id = ?",
                                 (bug_id,)).fetchone()[0] or 0.0
    lowered = round(max(remaining - hours, 0.0), 2)
    if lowered != remaining:
        ctx.conn.execute("UPDATE bugs SET remaining_time = ? WHERE id = ?", (lowered, bug_id))
        activity.log(ctx, bug_id, "remaining_time", format_hours(remaining),
                     format_hours(lowered))
