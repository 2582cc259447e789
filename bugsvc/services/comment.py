"""Comments of bugs and comment tags (interface "Comments")."""

import re

from ..accounts import access
from .. import dates
from ..bugs import activity, values
from ..bugs import comments as stored
from ..bugs.lookup import visible_bug_id
from ..bugs.permissions import require_product_edit
from ..store.db import placeholders
from ..errors import (
    ServiceError, require_login, AUTH_FAILURE, OBJECT_NOT_SPECIFIED, PARAM_MUST_BE_NUMERIC,
    COMMENT_ID_INVALID, COMMENT_IS_PRIVATE, COMMENT_TAG_DISABLED, COMMENT_TAG_INVALID,
    COMMENT_TAG_TOO_LONG, COMMENT_TAG_TOO_SHORT, USER_NOT_INSIDER,
)
from ..call.params import Params


MIN_TAG_LENGTH, MAX_TAG_LENGTH = 3, 24
_TAG = re.compile(r"^[\w.\-]+$")
DEFAULT_TAG_LIMIT = 10


def comments(ctx, params):
    """Comments of bugs and comments by id.

    params: ids (bug ids or aliases), comment_ids (ints), new_since
    (datetime; only for the bugs' comments).
    Returns {"bugs": {"<bug id>": {"comments": [Comment, oldest first]}},
    "comments": {"<comment id>": Comment}}. Private comments are left out of
    the bugs' lists for callers outside the insidergroup.
    Errors: 50 neither ids nor comment_ids; 100/101/102 a bug; 52 a
    comment id that is not a whole number of 0 or more; 110 a requested
    comment the caller may not see (private, or on a hidden bug) or, alike,
    a missing one; 111 a missing comment, for a caller who sees every
    comment; 56 bad new_since.
    """
    p = Params(params)
    if not p.has("ids") and not p.has("comment_ids"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify ids or comment_ids.")
    since = dates.parse_datetime(p.get("new_since"), "new_since") if p.get("new_since") else None
    bug_ids = []
    for value in p.list("ids"):
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
        if not access.is_insider(ctx):
            where += " AND c.is_private = 0"
        for obj in stored.comment_objects(ctx, stored.select_rows(ctx, where, args)):
            by_bug[str(obj["bug_id"])]["comments"].append(obj)
    return {"bugs": by_bug, "comments": _comments_by_id(ctx, p.id_list("comment_ids"))}


def _comments_by_id(ctx, comment_ids):
    """Comments by id. A comment the caller may not see (its bug is hidden,
    or it is private and the caller no insider) and a missing one answer
    alike: 110, except that a caller who sees every comment is
    told 111 for a missing one."""
    if not comment_ids:
        return {}
    rows = stored.select_rows(ctx, f"c.id IN ({placeholders(comment_ids)})", comment_ids)
    insider = access.is_insider(ctx)
    visible_bugs = access.visible_bug_ids(ctx, {row["bug_id"] for row in rows})
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
    return {str(obj["id"]): obj for obj in stored.comment_objects(ctx, ordered)}


def _comment_denied(comment_id):
    return ServiceError(COMMENT_IS_PRIVATE,
                        f"You are not authorized to access comment #{comment_id}.")


def _sees_every_comment(ctx, insider):
    """True when no comment is hidden from the caller: it sees every bug and
    is an insider, or no comment is private."""
    if not access.sees_every_bug(ctx):
        return False
    return insider or ctx.conn.execute(
        "SELECT 1 FROM comments WHERE is_private = 1 LIMIT 1").fetchone() is None


def add(ctx, params):
    """Add a comment to a bug.

    params: id (bug id or alias), comment (text), is_private (or legacy
    private; insiders only), work_time (hours; ignored for callers outside
    the timetrackinggroup, otherwise booked and subtracted from the
    remaining time, not below 0).
    Returns {"id": new comment id}.
    Errors: 410 logged out; 50 no id or an empty comment; 100/101/102 the
    bug (100 also for an empty id); 109 the caller may not edit the product's bugs; 114 comment too
    long; 113 private without being an insider; 52/54 bad work_time.
    """
    require_login(ctx)
    p = Params(params)
    # Only a missing id is "not specified" (50); an empty one is a bad bug
    # id (100), as the reference answers.
    if p.get("id") in (None, []):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'id' is required.")
    text = p.str("comment")
    if text is None or not text.strip():
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'comment' is required and must not "
                                                 "be empty.")
    bug_id = visible_bug_id(ctx, p.get("id"))
    product = ctx.conn.execute("SELECT p.id, p.name FROM bugs b JOIN products p"
                               " ON p.id = b.product_id WHERE b.id = ?", (bug_id,)).fetchone()
    require_product_edit(ctx, product[0], product[1])
    body = stored.normalise(text)
    is_private = p.bool("is_private") if p.has("is_private") else p.bool("private")
    if is_private and not access.is_insider(ctx):
        raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make comments private.")
    hours = 0.0
    if access.is_timetracker(ctx) and p.get("work_time") is not None:
        hours = values.time_value(p.get("work_time"), "work_time", allow_negative=True)
    comment_id = stored.add(ctx, bug_id, body, is_private=is_private, work_time=hours)
    if hours:
        stored.record_work_time(ctx, bug_id, comment_id, hours)
    activity.touch(ctx.conn, bug_id, ctx.now)
    return {"id": comment_id}


# Comment tags ---------------------------------------------------------------------

def _require_tagger(ctx, action):
    require_login(ctx)
    group = ctx.param("comment_taggers_group")
    if not group:
        raise ServiceError(COMMENT_TAG_DISABLED, "Comment tagging is disabled.")
    if not ctx.caller.in_group(group):
        raise ServiceError(AUTH_FAILURE, f"Sorry, you aren't a member of the '{group}' group, "
                                         f"and only users with that membership may {action} "
                                         "comment tags.")


def search_tags(ctx, params):
    """Comment tags containing a substring (case-insensitive), most used first.

    params: query (text), limit (default 10).
    Returns a bare array of tag strings. Only tags of comments the caller
    can see count (visible bugs; private comments only for insiders).
    Errors: 410 logged out; 125 tagging disabled; 304 not in
    comment_taggers_group; 50 no query; 52 bad limit.
    """
    _require_tagger(ctx, "search")
    p = Params(params)
    query = p.str("query")
    if query is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'query' is required.")
    limit = p.int("limit") or DEFAULT_TAG_LIMIT
    if limit < 0:
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           "The parameter 'limit' must be a positive number.")
    visible, args = access.bug_visibility_sql(ctx)
    private = "" if access.is_insider(ctx) else " AND c.is_private = 0"
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


def update_tags(ctx, params):
    """Add tags to and remove tags from one comment (add first, then remove).

    params: comment_id (int), add (array of tags), remove (array of tags).
    Tags are 3-24 characters of letters, digits, '_', '.', '-'; a tag the
    comment already has in another case is not added twice.
    Returns the comment's tags, sorted (bare array); [] for an unknown
    comment id and alike, so that nobody learns what exists, for a comment
    the caller may not see (its bug hidden, or private and the caller no
    insider): nothing changes.
    Errors: 410 logged out; 125 tagging disabled; 304 not in
    comment_taggers_group; 50 no comment_id; 52 a comment_id that is not a
    whole number of 0 or more;
    126/127/128 invalid, too long, too short tag.
    """
    _require_tagger(ctx, "update")
    p = Params(params)
    comment_id = p.id("comment_id")
    if comment_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'comment_id' is required.")
    row = ctx.conn.execute("SELECT bug_id, is_private FROM comments WHERE id = ?",
                           (comment_id,)).fetchone()
    if (row is None or not access.visible_bug_ids(ctx, [row["bug_id"]])
            or (row["is_private"] and not access.is_insider(ctx))):
        return []
    to_add = [_checked_tag(tag) for tag in p.list("add") if tag is not None]
    to_remove = [str(tag).strip() for tag in p.list("remove") if tag is not None]
    tags = stored.tags_of(ctx.conn, [comment_id])[comment_id]
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
