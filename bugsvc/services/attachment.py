"""Attachments of bugs: get, create, update. The behaviour lives in
bugsvc/bugs/attachments.py."""

from ..bugs import attachments as bug_attachments
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login


# Update parameters read as text; the other fields are booleans.
_TEXTS = ("summary", "file_name", "content_type")


def get(ctx, params):
    """Attachments of bugs and attachments by id.

    params: ids (bug ids or aliases), attachment_ids (ints).
    Returns {"bugs": {"<bug id>": [Attachment, by id]}, "attachments":
    {"<attachment id>": Attachment}}. A bug's list holds its private
    attachments only for insiders and for their creator; unknown attachment
    ids are left out for a caller who sees every attachment (see
    _requested). `exclude_fields=data` never reads the content.
    Errors: 50 neither ids nor attachment_ids; 100/101/102 a bug; 52 an
    attachment id that is not a whole number of 0 or more; 304 a requested attachment the caller may
    not see (private and the caller no insider, or its bug hidden) or,
    alike, a missing one.
    """
    p = Params(params)
    if p.get("ids") in (None, []) and p.get("attachment_ids") in (None, []):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify ids or attachment_ids.")
    by_bug, by_id = bug_attachments.attachments_of(ctx, p.list("ids"), p.id_list("attachment_ids"))
    return {"bugs": by_bug, "attachments": by_id}


def create(ctx, params):
    """Attach one file to one or several bugs.

    params: ids (bug ids or aliases), data (base64, decoded leniently),
    file_name, summary, content_type (not needed for a patch), is_patch
    (forces text/plain), is_private (insiders only), comment, flags (Flag
    changes of attachment flag types), obsoletes (ids of attachments of
    the target bugs to mark obsolete). Other keys are ignored.
    Every attachment, its "Created attachment" comment (private when the
    attachment is) and the bugs' last_change_time share one timestamp.
    Returns {"ids": [new attachment id per target bug, in target order]}.
    Errors: 410 logged out; 50 no ids or no data; 100/101/102 a bug; 109
    its product is not editable by the caller; 606 empty data; 600 too
    large; 604 no summary; 603 no file name; 113 private without being an
    insider; 601 bad content type; 114 comment too long; 51/129-134/32000
    flag problems; 52 an obsoletes id that is not a whole number of 0 or more; 32000 an obsoletes id
    that is unknown, on another bug or not editable by the caller.
    """
    require_login(ctx)
    p = Params(params)
    if not p.list("ids"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'ids' is required.")
    if p.get("data") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'data' is required.")
    ids = bug_attachments.attach(
        ctx, p.list("ids"), p.str("data"), p.str("summary"), p.str("file_name"),
        content_type=p.str("content_type"), is_patch=p.bool("is_patch"),
        is_private=p.bool("is_private"), comment=p.str("comment"), flags=p.get("flags"),
        obsoletes=p.id_list("obsoletes"))
    return {"ids": ids}


def update(ctx, params):
    """Change attachments.

    params: ids (attachment ids), summary, file_name, content_type,
    is_patch, is_private (changing it needs insider), is_obsolete (turning
    it on cancels pending requests), comment (added to each attachment's
    bug as "Comment on attachment", private when the attachment is), flags
    (Flag changes). Unknown keys are ignored. The creator, and editbugs
    members (for a private attachment only insiders among them), may
    change everything; others only existing flags they set or were asked
    for (and add a comment with that).
    Returns {"attachments": [{"id", "last_change_time", "changes"}]} in the
    order of ids; booleans in changes read "1"/"0".
    Errors: 410 logged out; 50 no ids; 52 an id that is not a whole number
    of 0 or more; 32000 unknown attachment or one the caller may not see
    (alike: "not allowed to edit", see _unknown_attachment), product not
    editable, not allowed to edit, empty file name; 604 empty summary; 601
    bad content type; 113 privacy change without being an insider; 114
    comment too long; 51/129-134/32000 flag problems.
    """
    require_login(ctx)
    p = Params(params)
    attachment_ids = list(dict.fromkeys(p.id_list("ids")))
    if not attachment_ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'ids' is required.")
    given = {field: p.str(field) if field in _TEXTS else p.bool(field)
             for field in bug_attachments.FIELDS if p.has(field)}
    changed = bug_attachments.change(ctx, attachment_ids, given, p.str("comment"), p.get("flags"))
    return {"attachments": changed}
