"""Attachments of bugs: get, create, update."""

from ..accounts import access
from .. import dates
from ..bugs import activity, attachments as stored, comments, record
from ..bugs.attachment_flags import AttachmentFlagEditor
from ..bugs.lookup import visible_bug_id
from ..bugs.permissions import can_edit_product, require_product_edit
from ..errors import ServiceError, require_login, OBJECT_NOT_SPECIFIED, AUTH_FAILURE, USER_ERROR
from ..call.params import Params

# Keys of an update that change the attachment itself (not flags or comment).
_FIELD_KEYS = ("summary", "file_name", "content_type", "is_patch", "is_private", "is_obsolete")


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
    bug_ids = list(dict.fromkeys(visible_bug_id(ctx, value) for value in p.list("ids")))
    requested = _requested(ctx, p.id_list("attachment_ids"))
    listed = stored.of_bugs(ctx, bug_ids)
    ordered = [requested[i] for i in dict.fromkeys(p.id_list("attachment_ids")) if i in requested]
    objects = stored.attachment_objects(ctx, listed + ordered)
    by_bug = {str(bug_id): [] for bug_id in bug_ids}
    for obj in objects[:len(listed)]:
        by_bug[str(obj["bug_id"])].append(obj)
    by_id = {str(obj["id"]): obj for obj in objects[len(listed):]}
    return {"bugs": by_bug, "attachments": by_id}


def _requested(ctx, attachment_ids):
    """{id: attachment} of the attachments asked for by id. One the caller may
    not see (its bug is hidden, or it is private and the caller no insider)
    and a missing one answer alike: 304, except that a caller who
    sees every attachment is answered truthfully (a missing id is left out)."""
    found = stored.load(ctx.conn, attachment_ids)
    insider = access.is_insider(ctx)
    visible_bugs = access.visible_bug_ids(ctx, {a["bug_id"] for a in found.values()})
    shown = {i: a for i, a in found.items()
             if a["bug_id"] in visible_bugs and (insider or not a["is_private"])}
    for attachment_id in dict.fromkeys(attachment_ids):
        if attachment_id in shown:
            continue
        if attachment_id in found or not _sees_every_attachment(ctx, insider):
            raise ServiceError(AUTH_FAILURE, f"Sorry, you are not authorized to access "
                                             f"attachment #{attachment_id}.")
    return shown


def _sees_every_attachment(ctx, insider):
    """True when no attachment is hidden from the caller: it sees every bug
    and is an insider, or no attachment is private."""
    if not access.sees_every_bug(ctx):
        return False
    return insider or ctx.conn.execute(
        "SELECT 1 FROM attachments WHERE is_private = 1 LIMIT 1").fetchone() is None


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
    bugs = []
    for value in p.list("ids"):
        bug = record.load(ctx.conn, visible_bug_id(ctx, value))
        if all(bug.id != other.id for other in bugs):
            bugs.append(bug)
    for bug in bugs:
        product = ctx.conn.execute("SELECT name FROM products WHERE id = ?",
                                   (bug.product_id,)).fetchone()[0]
        require_product_edit(ctx, bug.product_id, product)
    data = stored.check_data(ctx, p.str("data"))
    is_patch = p.bool("is_patch")
    fields = {"summary": stored.check_summary(p.str("summary")),
              "file_name": stored.check_file_name(p.str("file_name")),
              "is_patch": is_patch, "is_private": p.bool("is_private")}
    if fields["is_private"]:
        stored.require_insider(ctx)
    fields["content_type"] = stored.check_content_type(p.str("content_type"), is_patch)
    body = comments.normalise(p.str("comment") or "")
    flag_lists = []
    for bug in bugs:
        flags = []
        AttachmentFlagEditor(ctx, bug, flags, fields["is_private"]).apply(p.get("flags"))
        flag_lists.append(flags)
    obsolete = _obsoletes(ctx, p.id_list("obsoletes"), {bug.id for bug in bugs})
    created = []
    for bug, flags in zip(bugs, flag_lists):
        attachment = stored.insert(ctx, bug.id, fields, data)
        ctx.events.attached(bug.id, attachment["id"])
        stored.save_flags(ctx, bug.id, attachment["id"], [], flags)
        comments.add(ctx, bug.id, body, is_private=fields["is_private"],
                     kind=comments.ATTACHMENT_CREATED, extra=str(attachment["id"]),
                     attachment_id=attachment["id"])
        activity.touch(ctx.conn, bug.id, ctx.now)
        created.append(attachment["id"])
    for edit in obsolete:
        edit.save(ctx)
    return {"ids": created}


def _obsoletes(ctx, attachment_ids, bug_ids):
    """AttachmentEdits marking the still-current ones of `attachment_ids`
    obsolete. Errors: 32000 unknown id, on none of `bug_ids` or hidden from
    the caller (one answer), or not editable by the caller."""
    found = stored.load(ctx.conn, attachment_ids)
    flags = stored.flags_of(ctx.conn, list(found.values()))
    edits = []
    for attachment_id in dict.fromkeys(attachment_ids):
        attachment = found.get(attachment_id)
        # Missing, on another bug, or hidden from the caller: one answer.
        if attachment is None or attachment["bug_id"] not in bug_ids or not _may_see(
                ctx, attachment):
            raise ServiceError(USER_ERROR, f"Attachment #{attachment_id} is not an attachment "
                                           "of the bug the new attachment is for.")
        if not stored.can_edit(ctx, attachment):
            raise stored.illegal_edit(attachment_id)
        if attachment["is_obsolete"]:
            continue
        edit = stored.AttachmentEdit(attachment, flags[attachment_id])
        edit.set_obsolete(True)
        edits.append(edit)
    return edits


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
    found = stored.load(ctx.conn, attachment_ids)
    for attachment_id in attachment_ids:
        attachment = found.get(attachment_id)
        if attachment is None or not _may_see(ctx, attachment):
            raise _unknown_attachment(ctx, attachment_id, attachment is None)
        _check_bug(ctx, attachment["bug_id"])
    text = (p.str("comment") or "").strip()
    body = comments.normalise(text) if text else ""
    flags = stored.flags_of(ctx.conn, list(found.values()))
    bugs = {}
    edits = []
    for attachment_id in attachment_ids:
        attachment = found[attachment_id]
        if attachment["bug_id"] not in bugs:
            bugs[attachment["bug_id"]] = record.load(ctx.conn, attachment["bug_id"])
        edit = stored.AttachmentEdit(attachment, flags[attachment_id])
        if stored.can_edit(ctx, attachment):
            _apply_fields(ctx, edit, p)
            _apply_flags(ctx, edit, bugs[attachment["bug_id"]], p)
        else:
            _apply_own_flags(ctx, edit, bugs[attachment["bug_id"]], p)
        edits.append(edit)
    results = []
    for edit in edits:
        changes = edit.save(ctx)
        bug_id = edit.old["bug_id"]
        if body:
            comments.add(ctx, bug_id, body, is_private=edit.new["is_private"],
                         kind=comments.ATTACHMENT_UPDATED, extra=str(edit.id),
                         attachment_id=edit.id)
        if changes or body:
            activity.touch(ctx.conn, bug_id, ctx.now)
        results.append({"id": edit.id, "changes": changes,
                        "last_change_time": dates.from_db(edit.new["last_change_time"])})
    return {"attachments": results}


def _may_see(ctx, attachment):
    """True when the caller sees the attachment's bug, and the attachment is
    public or the caller is an insider or its creator."""
    return (bool(access.visible_bug_ids(ctx, [attachment["bug_id"]]))
            and (not attachment["is_private"] or access.is_insider(ctx)
                 or attachment["creator_id"] == ctx.caller.id))


def _unknown_attachment(ctx, attachment_id, missing):
    """32000 for an attachment that is missing or hidden from the caller: the
    same answer for both, except to a caller who sees every
    attachment, who is told a missing one does not exist."""
    if missing and _sees_every_attachment(ctx, access.is_insider(ctx)):
        return ServiceError(USER_ERROR, f"Attachment #{attachment_id} does not exist.")
    return stored.illegal_edit(attachment_id)


def _check_bug(ctx, bug_id):
    """Errors: 32000 when the caller cannot edit the (visible) bug's product."""
    product_id = ctx.conn.execute("SELECT product_id FROM bugs WHERE id = ?",
                                  (bug_id,)).fetchone()[0]
    if not can_edit_product(ctx, product_id):
        raise ServiceError(USER_ERROR, f"You are not allowed to change attachments of bug "
                                       f"#{bug_id}.")


def _apply_fields(ctx, edit, p):
    """Check and apply the field keys of the update to `edit.new`."""
    new = edit.new
    if p.has("summary"):
        new["summary"] = stored.check_summary(p.str("summary"))
    if p.has("file_name"):
        new["file_name"] = stored.check_file_name(p.str("file_name"), USER_ERROR)
    if p.has("is_patch"):
        new["is_patch"] = p.bool("is_patch")
    if p.has("content_type") or (new["is_patch"] and not edit.old["is_patch"]):
        new["content_type"] = stored.check_content_type(
            p.str("content_type") if p.has("content_type") else new["content_type"],
            new["is_patch"])
    if p.has("is_private"):
        new["is_private"] = p.bool("is_private")
        if new["is_private"] != edit.old["is_private"]:
            stored.require_insider(ctx)
    if p.has("is_obsolete"):
        edit.set_obsolete(p.bool("is_obsolete"))


def _apply_flags(ctx, edit, bug, p):
    if p.get("flags") is not None:
        AttachmentFlagEditor(ctx, bug, edit.flags, edit.new["is_private"]).apply(p.get("flags"))


def _apply_own_flags(ctx, edit, bug, p):
    """A caller who may not edit the attachment: only flag changes, each of
    an existing flag the caller set or was asked for. Errors: 32000."""
    if any(p.has(key) for key in _FIELD_KEYS) or not p.list("flags"):
        raise stored.illegal_edit(edit.id)
    _apply_flags(ctx, edit, bug, p)
    before = {flag["id"]: flag for flag in edit.old_flags}
    after = {flag["id"]: flag for flag in edit.flags}
    if None in after:
        raise stored.illegal_edit(edit.id)
    for flag_id, flag in before.items():
        now = after.get(flag_id)
        if now is not None and all(now[k] == flag[k] for k in ("status", "requestee_id")):
            continue
        if ctx.caller.id not in (flag["setter_id"], flag["requestee_id"]):
            raise stored.illegal_edit(edit.id)
