"""Comments: storing (numbering, normalisation, limits),
reading them as Comment objects (rendered system texts, tags), time worked;
reading and adding them as the caller may, and comment tags (the calls are
services/comment.py's)."""

import re

from .. import dates
from ..accounts.email import visible_email
from ..call.fields import Shape
from ..errors import (
    AUTH_FAILURE,
    COMMENT_ID_INVALID,
    COMMENT_IS_PRIVATE,
    COMMENT_TAG_DISABLED,
    COMMENT_TAG_INVALID,
    COMMENT_TAG_TOO_LONG,
    COMMENT_TAG_TOO_SHORT,
    COMMENT_TOO_LONG,
    USER_ERROR,
    USER_NOT_INSIDER,
    ServiceError,
    require_login,
)
from ..store.db import placeholders
from ..store.dialect import once_per_dialect
from . import activity, events, values, visibility
from .lookup import MAX_BUG_ID, numeric_bug_id, visible_bug_id
from .permissions import product_edit_denied, product_edit_sql


MAX_COMMENT_LENGTH = 65535
MIN_TAG_LENGTH, MAX_TAG_LENGTH = 3, 24
_TAG = re.compile(r"^[\w.\-]+$")

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


# The count of a bug's next comment (as `insert` reads it), over alias `bug` of bugs.
NEXT_COUNT_SQL = ("(SELECT COALESCE(MAX(nc.count) + 1, 0) FROM comments nc"
                  " WHERE nc.bug_id = {bug}.id)")


# A comment's columns as `insert` and the caller's comment (_add_if_editable)
# store them: the bug and its count, then _stored_values's.
_INSERT_COMMENT = ("INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private,"
                   " work_time, kind, extra, attachment_id, is_markdown)")


def _stored_values(author_id, body, when, is_private, work_time, kind, extra, attachment_id,
                   is_markdown):
    """The values of a new comment's columns after its bug and count, as stored."""
    return (author_id, dates.to_db(when), body, 1 if is_private else 0, work_time or 0, kind,
            extra, attachment_id, 1 if is_markdown and kind == PLAIN else 0)


def insert(conn, bug_id, author_id, body, when, is_private=False, work_time=0.0, kind=PLAIN,
           extra=None, attachment_id=None, is_markdown=False, count=None):
    """Store a comment as the bug's next one (count 0 is the description).

    body: already normalised text. when: aware datetime. is_markdown: the
    body is shown rendered as Markdown. count: the bug's next count
    (NEXT_COUNT_SQL) when already read in this transaction, else None.
    Returns the new id.
    """
    if count is None:
        count = conn.execute("SELECT COALESCE(MAX(count) + 1, 0) FROM comments WHERE bug_id = ?",
                             (bug_id,)).fetchone()[0]
    cur = conn.execute(
        f"{_INSERT_COMMENT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (bug_id, count, *_stored_values(author_id, body, when, is_private, work_time, kind,
                                        extra, attachment_id, is_markdown)))
    return cur.fetchone()[0]


def add(ctx, bug_id, body, is_private=False, work_time=0.0, kind=PLAIN, extra=None,
        attachment_id=None, is_markdown=False, count=None):
    """Store a comment of the caller at the call's time (see `insert`) and
    note it in the call's journal of events. Returns the new id."""
    comment_id = insert(ctx.conn, bug_id, ctx.caller.id, body, ctx.now, is_private, work_time,
                        kind, extra, attachment_id, is_markdown, count)
    ctx.events.commented(bug_id, comment_id)
    return comment_id


# Reading comments --------------------------------------------------------------

_SELECT = ("SELECT c.id, c.bug_id, c.count, u.login AS creator, c.created_at, c.body,"
           " c.is_private, c.kind, c.extra, c.attachment_id, c.is_markdown, c.edit_count"
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
    insider = visibility.is_insider(ctx)
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
            "is_markdown": bool(row["is_markdown"]),
            "edits": row["edit_count"],
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


# Reading and adding comments as the caller ------------------------------------

def comments_of(ctx, bug_values, since=None):
    """{"<bug id>": {"comments": [Comment, oldest first]}} of the bugs of
    `bug_values` (ids or aliases), of those made after `since` when given;
    private comments only for insiders. Errors: 100/101/102 a bug."""
    bug_ids = []
    for value in bug_values:
        bug_id = visible_bug_id(ctx, value)
        if bug_id not in bug_ids:
            bug_ids.append(bug_id)
    by_bug = {str(bug_id): {"comments": []} for bug_id in bug_ids}
    if bug_ids:
        where = f"c.bug_id IN ({placeholders(bug_ids)})"
        args = list(bug_ids)
        if since is not None:
            where += " AND c.created_at > ?"
            args.append(dates.to_db(since))
        if not visibility.is_insider(ctx):
            where += " AND c.is_private = 0"
        for obj in comment_objects(ctx, select_rows(ctx, where, args)):
            by_bug[str(obj["bug_id"])]["comments"].append(obj)
    return by_bug


def comments_by_id(ctx, comment_ids):
    """{"<comment id>": Comment} of `comment_ids`. A comment the caller may
    not see (its bug is hidden, or it is private and the caller no insider)
    and a missing one answer alike: 110, except that a caller who sees every
    comment is told 111 for a missing one."""
    if not comment_ids:
        return {}
    rows = select_rows(ctx, f"c.id IN ({placeholders(comment_ids)})", comment_ids)
    insider = visibility.is_insider(ctx)
    visible_bugs = visibility.visible_bug_ids(ctx, {row["bug_id"] for row in rows})
    found = {row["id"]: row for row in rows
             if row["bug_id"] in visible_bugs and (insider or not row["is_private"])}
    existing = {row["id"] for row in rows}
    for comment_id in comment_ids:
        if comment_id in found:
            continue
        if comment_id not in existing and _sees_every_comment(ctx, insider):
            raise ServiceError(COMMENT_ID_INVALID, f"There is no comment with the id {comment_id}.")
        raise _comment_denied(comment_id)
    ordered = [found[comment_id] for comment_id in dict.fromkeys(comment_ids)]
    return {str(obj["id"]): obj for obj in comment_objects(ctx, ordered)}


def _comment_denied(comment_id):
    return ServiceError(COMMENT_IS_PRIVATE,
                        f"You are not authorized to access comment #{comment_id}.")


def _sees_every_comment(ctx, insider):
    """True when no comment is hidden from the caller: it sees every bug and
    is an insider, or no comment is private."""
    if not visibility.sees_every_bug(ctx):
        return False
    return insider or ctx.conn.execute(
        "SELECT 1 FROM comments WHERE is_private = 1 LIMIT 1").fetchone() is None


def post(ctx, bug_value, text, is_private=False, work_time=None, is_markdown=False):
    """Add the caller's comment `text` to the bug of `bug_value` (an id or
    alias), Markdown when `is_markdown`; work_time (hours, as given) is
    booked only for time trackers and subtracted from the remaining time,
    not below 0. Returns its id.
    Errors: 100/101/102 the bug; 109 the caller may not edit the product's
    bugs; 114 comment too long; 113 private without being an insider; 52/54
    bad work_time.
    """
    try:
        body = normalise(text)
        if is_private and not visibility.is_insider(ctx):
            raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make comments private.")
        hours = 0.0
        if visibility.is_timetracker(ctx) and work_time is not None:
            hours = values.time_value(work_time, "work_time", allow_negative=True)
    except ServiceError:
        _editable_target(ctx, bug_value)        # the bug's own errors come first
        raise
    number = numeric_bug_id(bug_value)
    comment_id, touched = None, False
    if number is not None and number < MAX_BUG_ID:
        bug_id = number
        comment_id, touched = _add_if_editable(ctx, number, body, is_private, hours,
                                               is_markdown, whole_change=not hours)
    if comment_id is None:
        # A bug named by alias, or one the caller may not see or edit (the
        # lookup says which error), is read first.
        bug_id, target = _editable_target(ctx, bug_value)
        comment_id = add(ctx, bug_id, body, is_private=is_private, work_time=hours,
                         is_markdown=is_markdown, count=target["next_count"])
    if hours:
        record_work_time(ctx, bug_id, comment_id, hours)
    if not touched:
        activity.touch(ctx.conn, bug_id, ctx.now, ctx.events)
    return comment_id


def _add_if_editable(ctx, bug_id, body, is_private, hours, is_markdown, whole_change):
    """Store the caller's comment as bug `bug_id`'s next one and note it in
    the call's journal (as `add`), by one statement that also checks what
    _editable_target checks: that the caller may see the bug and edit its
    product's bugs. Where one statement may write several tables
    (dialect.writes_several_tables) it is also activity.touch of the bug,
    whose row it changes first, so that the comment's reference to it takes
    no lock of its own, and, when the comment is the call's `whole_change`
    of the bug, it stores the bug's outbox event too (the journal's
    stored_with_change). Returns (the new id, whether the bug was touched),
    or (None, False) when nothing was stored (no such bug, or one of those
    checks failed: _editable_target says which)."""
    conn = ctx.conn
    touches = conn.dialect.writes_several_tables
    bug = "bugs" if touches else "b"
    visible, args = visibility.bug_visibility_sql(ctx, bug)
    may_edit, edit_args = product_edit_sql(ctx, f"{bug}.product_id")
    stored = _stored_values(ctx.caller.id, body, ctx.now, is_private, hours, PLAIN, None, None,
                            is_markdown)
    chosen = f"{bug}.id = ? AND {visible} AND {may_edit}"
    if touches:
        tells = whole_change and ctx.events is not None and \
            ctx.events.may_store_with_change(bug_id, ctx.caller.id)
        stamp = dates.to_db(ctx.now)
        told, told_args = (_told_sql(conn.dialect), [ctx.caller.id, stamp]) if tells else ("", [])
        # It carries the generations the call assumed, if not checked yet
        # (cache.Generations.carried): its last two columns.
        carried = ctx.generations.carried() if ctx.generations is not None else None
        row = conn.execute(
            f"WITH touched AS (UPDATE bugs SET last_change_time = ? WHERE {chosen}"
            f" RETURNING bugs.id, {events.people_columns(conn.dialect)}),"
            f" added AS ({_INSERT_COMMENT} SELECT b.id, {NEXT_COUNT_SQL.format(bug='b')},"
            f" ?, ?, ?, ?, ?, ?, ?, ?, ? FROM touched b RETURNING id){told}"
            f" SELECT added.id, touched.*{', ' + carried if carried else ''}"
            " FROM added, touched",
            [stamp, bug_id, *args, *edit_args, *stored, *told_args]).fetchone()
        if carried:
            if row is None:
                ctx.generations.settle()
            else:
                ctx.generations.confirm(row[-2], row[-1])
                row = row[:-2]
        if row is not None and tells:
            ctx.events.stored_with_change(bug_id)
            return row[0], True
    else:
        row = conn.execute(
            f"{_INSERT_COMMENT} SELECT b.id, {NEXT_COUNT_SQL.format(bug='b')},"
            f" ?, ?, ?, ?, ?, ?, ?, ?, ? FROM bugs b WHERE {chosen} RETURNING id",
            [*stored, bug_id, *args, *edit_args]).fetchone()
    if row is None:
        return None, False
    ctx.events.commented(bug_id, row[0])
    if touches:
        ctx.events.people_seen(bug_id, events.people_of(row[2:]), conn.writes_so_far())
    return row[0], touches


@once_per_dialect
def _told_sql(dialect):
    """The part of _add_if_editable's statement that stores the bug's
    outbox event (events.comment_event_data), from its `touched` and
    `added` rows; its values: the changer's id and the event's time."""
    people = ["t.assigned_to", "t.qa_contact", "t.reporter", "t.cc"]
    return (", told AS (INSERT INTO outbox_events (bug_id, changer_id, created_at, data)"
            f" SELECT t.id, ?, ?, {events.comment_event_data(dialect, 'a.id', people)}"
            " FROM touched t, added a)")


def _editable_target(ctx, bug_value):
    """_comment_target's (bug id, row) of the bug of `bug_value`, which the
    caller must see and may edit.
    Errors: 100/101/102 the bug; 109 the caller may not edit its product's bugs."""
    bug_id, target = _comment_target(ctx, bug_value)
    if not target["may_edit"]:
        raise product_edit_denied(target["product"])
    return bug_id, target


def _comment_target(ctx, bug_value):
    """(bug id, row) of the bug of `bug_value` that the caller must see; the
    row: "product" (its product's name), "may_edit" (the caller may edit
    the product's bugs, see permissions.can_edit_product) and "next_count"
    (the count its next comment takes). A visible bug named by its number
    is read with all of that by one statement; any other value is found
    by visible_bug_id, which raises its errors.
    Errors: 100/101/102 the bug (visible_bug_id's)."""
    number = numeric_bug_id(bug_value)
    if number is not None and number < MAX_BUG_ID:
        row = _target_row(ctx, number, check_visible=True)
        if row is not None and row["visible"]:
            return number, row
    bug_id = visible_bug_id(ctx, bug_value)
    return bug_id, _target_row(ctx, bug_id, check_visible=False)


def _target_row(ctx, bug_id, check_visible):
    """_comment_target's row of bug `bug_id` (None when there is none),
    with "visible" (the caller may see it) when `check_visible`."""
    visible, args = visibility.bug_visibility_sql(ctx) if check_visible else ("1", [])
    may_edit, edit_args = product_edit_sql(ctx, "b.product_id")
    return ctx.conn.execute(
        f"SELECT {visible} AS visible, p.name AS product, {may_edit} AS may_edit,"
        f" {NEXT_COUNT_SQL.format(bug='b')} AS next_count"
        " FROM bugs b JOIN products p ON p.id = b.product_id WHERE b.id = ?",
        args + edit_args + [bug_id]).fetchone()


# Editing comments ---------------------------------------------------------------

def _visible_row(ctx, comment_id):
    """The comments row of `comment_id` when the caller may see it.
    Errors: 110 hidden (its bug, or private and the caller no insider) or
    missing, alike, unless the caller sees every comment: 111 missing."""
    row = ctx.conn.execute("SELECT id, bug_id, author_id, body, is_private, is_markdown, kind"
                           " FROM comments WHERE id = ?", (comment_id,)).fetchone()
    insider = visibility.is_insider(ctx)
    if row is not None and visibility.visible_bug_ids(ctx, [row["bug_id"]]) and (
            insider or not row["is_private"]):
        return row
    if row is None and _sees_every_comment(ctx, insider):
        raise ServiceError(COMMENT_ID_INVALID, f"There is no comment with the id {comment_id}.")
    raise _comment_denied(comment_id)


def may_edit_own(ctx):
    """True when the caller is in the group edit_comments_group names
    (empty: nobody may edit comments)."""
    group = ctx.param("edit_comments_group")
    return bool(group) and ctx.caller.is_logged_in and ctx.caller.in_group(group)


def edit(ctx, comment_id, text, is_markdown=None):
    """Replace the text of the caller's own comment `comment_id` (Markdown
    when is_markdown, unchanged when None), keeping the text it replaces in
    the comment's revisions. Returns {"text", "is_markdown", "bug_id",
    "count" (revisions kept)}.
    Errors: 410 logged out; 304 not in edit_comments_group (or it is
    empty), or the comment is someone else's; 110/111 a comment the caller
    may not see, or none; 114 too long; 32000 the text is unchanged.
    """
    require_login(ctx)
    group = ctx.param("edit_comments_group")
    if not may_edit_own(ctx):
        raise ServiceError(AUTH_FAILURE, f"Sorry, you aren't a member of the '{group}' group, "
                                         "and only users with that membership may edit "
                                         "comments." if group else
                           "Comments may not be edited here (edit_comments_group is empty).")
    row = _visible_row(ctx, comment_id)
    if row["author_id"] != ctx.caller.id:
        raise ServiceError(AUTH_FAILURE, "You may only edit your own comments.")
    body = normalise(text)
    markdown = bool(row["is_markdown"]) if is_markdown is None else bool(is_markdown)
    if row["kind"] != PLAIN:
        markdown = False
    if body == row["body"] and markdown == bool(row["is_markdown"]):
        raise ServiceError(USER_ERROR, "The comment is unchanged.")
    ctx.conn.execute("INSERT INTO comment_revisions (comment_id, editor_id, changed_at, old_body,"
                     " old_is_markdown) VALUES (?, ?, ?, ?, ?)",
                     (comment_id, ctx.caller.id, dates.to_db(ctx.now), row["body"],
                      row["is_markdown"]))
    ctx.conn.execute("UPDATE comments SET body = ?, is_markdown = ?, edit_count = edit_count + 1"
                     " WHERE id = ?", (body, int(markdown), comment_id))
    activity.touch(ctx.conn, row["bug_id"], ctx.now, ctx.events)
    count = ctx.conn.execute("SELECT COUNT(*) FROM comment_revisions WHERE comment_id = ?",
                             (comment_id,)).fetchone()[0]
    return {"text": body, "is_markdown": markdown, "bug_id": row["bug_id"], "count": count}


def revisions(ctx, comment_id):
    """The earlier texts of comment `comment_id`, oldest first: [{"time",
    "editor", "text", "is_markdown"}], and the comment now. Only insiders
    and administrators read them (everyone sees that a comment was edited).
    Errors: 410 logged out; 110/111 a comment the caller may not see, or
    none; 304 neither an insider nor an administrator."""
    require_login(ctx)
    row = _visible_row(ctx, comment_id)
    if not (visibility.is_insider(ctx) or ctx.caller.in_group("admin")):
        raise ServiceError(AUTH_FAILURE, "Only insiders and administrators may read the earlier "
                                         "texts of a comment.")
    found = ctx.conn.execute(
        "SELECT r.changed_at, u.login, r.old_body, r.old_is_markdown FROM comment_revisions r"
        " JOIN users u ON u.id = r.editor_id WHERE r.comment_id = ? ORDER BY r.id",
        (comment_id,)).fetchall()
    return {"comment": comment_objects(ctx, select_rows(ctx, "c.id = ?", [row["id"]]))[0],
            "revisions": [{"time": dates.from_db(changed_at), "editor": visible_email(ctx, login),
                           "text": body, "is_markdown": bool(markdown)}
                          for changed_at, login, body, markdown in found]}


# Comment tags ---------------------------------------------------------------------

def require_tagger(ctx, action):
    """Errors: 410 logged out; 125 tagging disabled; 304 not in
    comment_taggers_group (`action`: what the caller wanted to do)."""
    require_login(ctx)
    group = ctx.param("comment_taggers_group")
    if not group:
        raise ServiceError(COMMENT_TAG_DISABLED, "Comment tagging is disabled.")
    if not ctx.caller.in_group(group):
        raise ServiceError(AUTH_FAILURE, f"Sorry, you aren't a member of the '{group}' group, "
                                         f"and only users with that membership may {action} "
                                         "comment tags.")


def search_tags(ctx, query, limit):
    """At most `limit` comment tags containing `query` (case-insensitive),
    most used first. Only tags of comments the caller can see count
    (visible bugs; private comments only for insiders)."""
    visible, args = visibility.bug_visibility_sql(ctx, scan=True)
    private = "" if visibility.is_insider(ctx) else " AND c.is_private = 0"
    rows = ctx.conn.execute(
        "SELECT MIN(t.tag), COUNT(*) AS uses FROM comment_tags t"
        " JOIN comments c ON c.id = t.comment_id JOIN bugs b ON b.id = c.bug_id"
        f" WHERE {ctx.conn.dialect.contains('lower(t.tag)', 'lower(?)')}{private} AND {visible}"
        " GROUP BY lower(t.tag) ORDER BY uses DESC, lower(t.tag) LIMIT ?",
        [query] + args + [limit]).fetchall()
    return [row[0] for row in rows]


def _checked_tag(value):
    tag = str(value).strip() if not isinstance(value, bool) else ""
    if len(tag) < MIN_TAG_LENGTH:
        raise ServiceError(COMMENT_TAG_TOO_SHORT, f"The comment tag '{tag}' is too short: at least "
                                                  f"{MIN_TAG_LENGTH} characters.")
    if len(tag) > MAX_TAG_LENGTH:
        raise ServiceError(COMMENT_TAG_TOO_LONG, f"The comment tag '{tag}' is too long: at most "
                                                 f"{MAX_TAG_LENGTH} characters.")
    if not _TAG.match(tag):
        raise ServiceError(COMMENT_TAG_INVALID, f"The comment tag '{tag}' contains invalid "
                                                "characters or spaces.")
    return tag


def update_tags(ctx, comment_id, add, remove):
    """Add the tags of `add` to comment `comment_id` and remove those of
    `remove` (add first, then remove; tags as given). A tag the comment
    already has in another case is not added twice. Returns the comment's
    tags, sorted; [] for an unknown comment and alike, so that nobody
    learns what exists, for one the caller may not see (its bug hidden, or
    private and the caller no insider): nothing changes then.
    Errors: 126/127/128 invalid, too long, too short tag.
    """
    row = ctx.conn.execute("SELECT bug_id, is_private FROM comments WHERE id = ?",
                           (comment_id,)).fetchone()
    if (row is None or not visibility.visible_bug_ids(ctx, [row["bug_id"]])
            or (row["is_private"] and not visibility.is_insider(ctx))):
        return []
    to_add = [_checked_tag(tag) for tag in add if tag is not None]
    to_remove = [str(tag).strip() for tag in remove if tag is not None]
    tags = tags_of(ctx.conn, [comment_id])[comment_id]
    for tag in to_add:
        if tag.lower() not in {t.lower() for t in tags}:
            ctx.conn.execute("INSERT INTO comment_tags (comment_id, tag) VALUES (?, ?)",
                             (comment_id, tag))
            tags.append(tag)
    for tag in to_remove:
        match = next((t for t in tags if t.lower() == tag.lower()), None)
        if match is not None:
            ctx.conn.execute("DELETE FROM comment_tags WHERE comment_id = ? AND tag = ?",
                             (comment_id, match))
            tags.remove(match)
    return sorted(tags)
