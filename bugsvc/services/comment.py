"""Comments of bugs, comment tags (interface "Comments") and editing
comments (bugzilla.mozilla.org's EditComments). The behaviour lives in
bugsvc/bugs/comments.py."""

from .. import dates
from ..bugs import comments as bug_comments, markup
from ..bugs.lookup import visible_bug_id
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, PARAM_MUST_BE_NUMERIC, ServiceError, require_login


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
    by_bug = bug_comments.comments_of(ctx, p.list("ids"), since)
    return {"bugs": by_bug, "comments": bug_comments.comments_by_id(ctx, p.id_list("comment_ids"))}


def add(ctx, params):
    """Add a comment to a bug.

    params: id (bug id or alias), comment (text), is_private (or legacy
    private; insiders only), is_markdown (the text is Markdown, as
    bugzilla.mozilla.org takes it; default false), work_time (hours; ignored for callers outside
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
    is_private = p.bool("is_private") if p.has("is_private") else p.bool("private")
    return {"id": bug_comments.post(ctx, p.get("id"), text, is_private, p.get("work_time"),
                                    p.bool("is_markdown"))}


# Comment tags ---------------------------------------------------------------------

def search_tags(ctx, params):
    """Comment tags containing a substring (case-insensitive), most used first.

    params: query (text), limit (default 10).
    Returns a bare array of tag strings. Only tags of comments the caller
    can see count (visible bugs; private comments only for insiders).
    Errors: 410 logged out; 125 tagging disabled; 304 not in
    comment_taggers_group; 50 no query; 52 bad limit.
    """
    bug_comments.require_tagger(ctx, "search")
    p = Params(params)
    query = p.str("query")
    if query is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'query' is required.")
    limit = p.int("limit") or DEFAULT_TAG_LIMIT
    if limit < 0:
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           "The parameter 'limit' must be a positive number.")
    return bug_comments.search_tags(ctx, query, limit)


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
    bug_comments.require_tagger(ctx, "update")
    p = Params(params)
    comment_id = p.id("comment_id")
    if comment_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'comment_id' is required.")
    return bug_comments.update_tags(ctx, comment_id, p.list("add"), p.list("remove"))


# Editing comments (bugzilla.mozilla.org's EditComments) ---------------------------

def update_comment(ctx, params):
    """Replace the text of one's own comment (bugzilla.mozilla.org's
    EditComments.update_comment); the text it replaces is kept in the
    comment's revisions, and the comment shows it was edited.

    params: comment_id (int), new_comment (text), is_markdown (bool; as it
    was when not given).
    Returns {"text": the new text, "html": it as the pages show it,
    "is_markdown", "count": revisions kept}.
    Errors: 410 logged out; 50 no comment_id or an empty new_comment; 52 a
    comment_id that is not a whole number of 0 or more; 304 not in
    edit_comments_group (empty: nobody) or someone else's comment; 110/111
    a comment the caller may not see, or none; 114 too long; 32000 the text
    is unchanged.
    """
    require_login(ctx)
    p = Params(params)
    comment_id = p.id("comment_id")
    if comment_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'comment_id' is required.")
    text = p.str("new_comment")
    if text is None or not text.strip():
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'new_comment' is required and "
                                                 "must not be empty.")
    markdown = p.bool("is_markdown") if p.has("is_markdown") else None
    edited = bug_comments.edit(ctx, comment_id, text, markdown)
    return {"text": edited["text"], "is_markdown": edited["is_markdown"],
            "html": markup.comment_html(edited["text"], edited["is_markdown"],
                                        edited["bug_id"]),
            "count": edited["count"]}


def comment_revisions(ctx, params):
    """The earlier texts of an edited comment, for insiders and administrators.

    params: comment_id (int).
    Returns {"comment": Comment (as it is now), "revisions": [{"time",
    "editor", "text", "is_markdown"}, oldest first]}.
    Errors: 410 logged out; 50 no comment_id; 52 a bad comment_id; 110/111
    a comment the caller may not see, or none; 304 neither an insider nor an
    administrator.
    """
    p = Params(params)
    comment_id = p.id("comment_id")
    if comment_id is None:
        require_login(ctx)
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'comment_id' is required.")
    return bug_comments.revisions(ctx, comment_id)


def render_comment(ctx, params):
    """A text as a comment of a bug would show it on the pages (Bugzilla's
    Bug.render_comment; bugzilla.mozilla.org's is_markdown).

    params: text (required; may be empty), id (a bug id or alias whose
    comment references are meant; optional), is_markdown (bool).
    Returns {"html": the text as HTML}. Nothing is stored.
    Errors: 50 no text; 100/101/102 the bug; 114 a text longer than a
    comment may be.
    """
    p = Params(params)
    text = p.str("text")
    if text is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'text' is required.")
    bug_id = None
    if p.get("id") not in (None, ""):
        bug_id = visible_bug_id(ctx, p.get("id"))
    body = bug_comments.normalise(text)
    return {"html": markup.comment_html(body, p.bool("is_markdown"), bug_id)}
