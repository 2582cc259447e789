"""Attachments: the rules of their fields, storing them,
changing them in memory and writing the difference with its history, and
Attachment objects for many attachments at once; reading them as asked,
attaching files to bugs and changing attachments as the caller may (the
calls are services/attachment.py's).

The content (attachment_data) is read only when the caller wants `data`,
one row at a time, and is held as bytes only while it is encoded.
"""

import base64
import binascii
import copy
import re

from .. import dates
from ..accounts.email import visible_email
from ..call.fields import Shape
from ..call.params import as_list, clean_text
from ..catalogue import bug_fields
from ..errors import (
    AUTH_FAILURE,
    FILE_NOT_SPECIFIED,
    FILE_TOO_LARGE,
    INVALID_CONTENT_TYPE,
    MISSING_DESCRIPTION,
    USER_ERROR,
    USER_NOT_INSIDER,
    ZERO_LENGTH_FILE,
    ServiceError,
)
from ..store.db import placeholders
from . import activity, comments, flags as bug_flags, record, visibility
from .attachment_flags import AttachmentFlagEditor
from .lookup import visible_bug_id
from .permissions import can_edit_product, has_editbugs, require_product_edit
from .store import diff


MAX_FILE_NAME = 255

# include/exclude shape: plain default fields; flags are never filtered.
ATTACHMENT_SHAPES = {"bugs.*": Shape(), "attachments.*": Shape()}

_CONTENT_TYPE = re.compile(
    r"^(application|audio|image|message|model|multipart|text|video)/[a-z0-9_\-+.]+"
    r"(;\s*charset=[a-z0-9_\-+]+)?$", re.IGNORECASE)
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/=]")
# API name -> internal name of history (the reference's field names).
HISTORY_NAMES = {field.attachment_key: field.history for field in bug_fields.STANDARD
                 if field.attachment_key}
FIELDS = tuple(HISTORY_NAMES)
_BOOLEAN_FIELDS = ("is_patch", "is_obsolete", "is_private")
_COLUMNS = ("id, bug_id, creator_id, created_at, last_change_time, summary, file_name,"
            " content_type, is_patch, is_obsolete, is_private, size")


# Field rules -----------------------------------------------------------------------

def decode_data(value):
    """The bytes of base64 text, decoded leniently (as the reference): every
    character outside the alphabet, whitespace included, is skipped, and
    nothing after the first '=' counts."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("ascii", errors="ignore")
    text = _NOT_BASE64.sub("", str(value)).split("=", 1)[0]
    text = text[:len(text) - len(text) % 4] if len(text) % 4 == 1 else text
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


def max_size(ctx):
    """Bytes an attachment may have: max(maxattachmentsize KB, maxlocalattachment MB)."""
    return max(_int_param(ctx, "maxattachmentsize") * 1024,
               _int_param(ctx, "maxlocalattachment") * 1048576)


def _int_param(ctx, name):
    try:
        return int(ctx.param(name) or 0)
    except ValueError:
        return 0


def check_data(ctx, value):
    """The decoded content. Errors: 606 empty; 600 larger than max_size."""
    data = decode_data(value)
    if not data:
        raise ServiceError(ZERO_LENGTH_FILE, "The file you are trying to attach is empty, does "
                                             "not exist, or you don't have permission to read it.")
    limit = max_size(ctx)
    if len(data) > limit:
        raise ServiceError(FILE_TOO_LARGE, f"The file you are trying to attach is "
                                           f"{round(len(data) / 1024)} kilobytes in size; "
                                           f"attachments may be at most {limit // 1024} KB.")
    return data


def check_file_name(value, empty_code=FILE_NOT_SPECIFIED):
    """The file name without any directory part, at most its last 255
    characters. Errors: `empty_code` (603 on create; 32000 on update) when
    nothing is left."""
    name = re.sub(r"^.*[/\\]", "", clean_text(value)).strip()
    if not name:
        raise ServiceError(empty_code, "You did not specify a file name for the attachment.")
    return name[-MAX_FILE_NAME:]


def check_summary(value):
    """The trimmed summary. Errors: 604 empty."""
    summary = (value or "").strip()
    if not summary:
        raise ServiceError(MISSING_DESCRIPTION, "You must enter a description for the attachment.")
    return summary


def check_content_type(value, is_patch):
    """The MIME type; always text/plain for a patch. Errors: 601 missing or invalid."""
    content_type = "text/plain" if is_patch else clean_text(value)
    if not content_type or not _CONTENT_TYPE.match(content_type):
        raise ServiceError(INVALID_CONTENT_TYPE, f"The MIME type '{content_type}' is not a valid "
                                                 "type/subtype.")
    return content_type


def require_insider(ctx):
    """Errors: 113 when the caller is not in the insidergroup."""
    if not visibility.is_insider(ctx):
        raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make attachments private or "
                                             "public: you are not an insider.")


# Who may see and edit --------------------------------------------------------------

def listing_condition(ctx, alias="a"):
    """SQL condition (and args) for the attachments a bug's listing shows the
    caller: all for insiders, else public ones and the caller's own."""
    if visibility.is_insider(ctx):
        return "1 = 1", []
    if ctx.caller.is_logged_in:
        return f"({alias}.is_private = 0 OR {alias}.creator_id = ?)", [ctx.caller.id]
    return f"{alias}.is_private = 0", []


def can_edit(ctx, attachment):
    """True when the caller may change the attachment's fields: its creator;
    or, when it is public or the caller an insider, an editbugs member."""
    if ctx.caller.id is not None and attachment["creator_id"] == ctx.caller.id:
        return True
    return ((not attachment["is_private"] or visibility.is_insider(ctx))
            and has_editbugs(ctx, _product_of_bug(ctx, attachment["bug_id"])))


def _product_of_bug(ctx, bug_id):
    return ctx.conn.execute("SELECT product_id FROM bugs WHERE id = ?", (bug_id,)).fetchone()[0]


def illegal_edit(attachment_id):
    return ServiceError(USER_ERROR, f"You are not allowed to edit attachment {attachment_id}.")


# Reading ---------------------------------------------------------------------------

def _row(row):
    values = dict(row)
    for name in _BOOLEAN_FIELDS:
        values[name] = bool(values[name])
    return values


def load(conn, attachment_ids):
    """{id: attachment dict (no data)} of the existing ones among `attachment_ids`."""
    ids = list(dict.fromkeys(attachment_ids))
    if not ids:
        return {}
    return {row["id"]: _row(row) for row in conn.execute(
        f"SELECT {_COLUMNS} FROM attachments WHERE id IN ({placeholders(ids)})", ids)}


def of_bugs(ctx, bug_ids):
    """Attachment dicts of `bug_ids` the caller may see in a listing, by id."""
    bug_ids = list(bug_ids)
    if not bug_ids:
        return []
    condition, args = listing_condition(ctx)
    return [_row(row) for row in ctx.conn.execute(
        f"SELECT {_COLUMNS} FROM attachments a WHERE a.bug_id IN ({placeholders(bug_ids)})"
        f" AND {condition} ORDER BY a.id", bug_ids + args)]


def flags_of(conn, attachments):
    """{attachment id: [flag dict]} (the keys of bugs.record flags), in id order."""
    result = {a["id"]: [] for a in attachments}
    if not result:
        return result
    bug_ids = sorted({a["bug_id"] for a in attachments})
    ids = list(result)
    for row in conn.execute(
            "SELECT id, attachment_id, type_id, status, setter_id, requestee_id, created_at,"
            f" modified_at FROM flags WHERE bug_id IN ({placeholders(bug_ids)})"
            f" AND attachment_id IN ({placeholders(ids)}) ORDER BY id", bug_ids + ids):
        flag = dict(row)
        result[flag.pop("attachment_id")].append(flag)
    return result


def attachment_objects(ctx, attachments):
    """Attachment objects for attachment dicts, in order."""
    if not attachments:
        return []
    conn, wants = ctx.conn, ctx.fields.wants
    flags = _flag_rows(conn, attachments) if wants("flags") else {}
    user_ids = {a["creator_id"] for a in attachments}
    for rows in flags.values():
        user_ids.update(uid for f in rows for uid in (f["setter_id"], f["requestee_id"])
                        if uid is not None)
    logins = _logins(conn, user_ids)
    objects = []
    for attachment in attachments:
        obj = {
            "id": attachment["id"],
            "bug_id": attachment["bug_id"],
            "file_name": attachment["file_name"],
            "summary": attachment["summary"],
            "content_type": attachment["content_type"],
            "is_private": attachment["is_private"],
            "is_obsolete": attachment["is_obsolete"],
            "is_patch": attachment["is_patch"],
            "creator": visible_email(ctx, logins[attachment["creator_id"]]),
            "creation_time": dates.from_db(attachment["created_at"]),
            "last_change_time": dates.from_db(attachment["last_change_time"]),
            "size": attachment["size"],
        }
        if wants("flags"):
            obj["flags"] = [_flag_object(ctx, logins, f) for f in flags.get(attachment["id"], [])]
        objects.append(obj)
    if wants("data"):
        _add_data(conn, objects)
    return objects


def _add_data(conn, objects):
    """Set `data` (base64) of the objects, reading one content at a time."""
    by_id = {}
    for obj in objects:
        by_id.setdefault(obj["id"], []).append(obj)
        obj["data"] = ""
    ids = list(by_id)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for attachment_id, data in conn.execute(
                "SELECT attachment_id, data FROM attachment_data WHERE attachment_id IN"
                f" ({placeholders(chunk)})", chunk):
            encoded = base64.b64encode(data or b"").decode("ascii")
            for obj in by_id[attachment_id]:
                obj["data"] = encoded


def _flag_rows(conn, attachments):
    result = {}
    bug_ids = sorted({a["bug_id"] for a in attachments})
    ids = [a["id"] for a in attachments]
    for row in conn.execute(
            "SELECT f.id, f.attachment_id, f.type_id, t.name, f.status, f.setter_id,"
            " f.requestee_id, f.created_at, f.modified_at FROM flags f"
            " JOIN flag_types t ON t.id = f.type_id"
            f" WHERE f.bug_id IN ({placeholders(bug_ids)})"
            f" AND f.attachment_id IN ({placeholders(ids)})"
            " ORDER BY t.sort_key, lower(t.name), t.id, f.id", bug_ids + ids):
        result.setdefault(row["attachment_id"], []).append(dict(row))
    return result


def _logins(conn, user_ids):
    user_ids = sorted(user_ids)
    return dict(conn.execute(f"SELECT id, login FROM users WHERE id IN"
                             f" ({placeholders(user_ids)})", user_ids).fetchall())


def _flag_object(ctx, logins, flag):
    obj = {"id": flag["id"], "name": flag["name"], "type_id": flag["type_id"],
           "creation_date": dates.from_db(flag["created_at"]),
           "modification_date": dates.from_db(flag["modified_at"]),
           "status": flag["status"], "setter": visible_email(ctx, logins[flag["setter_id"]])}
    if flag["requestee_id"] is not None:
        obj["requestee"] = visible_email(ctx, logins[flag["requestee_id"]])
    return obj


# Writing ---------------------------------------------------------------------------

def insert(ctx, bug_id, fields, data):
    """Store a new attachment of the caller on bug `bug_id` at ctx.now, with
    its content; returns the new attachment dict.

    fields: summary, file_name, content_type, is_patch, is_private.
    """
    stamp = dates.to_db(ctx.now)
    attachment_id = ctx.conn.execute(
        "INSERT INTO attachments (bug_id, creator_id, created_at, last_change_time, summary,"
        " file_name, content_type, is_patch, is_obsolete, is_private, size)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING id",
        (bug_id, ctx.caller.id, stamp, stamp, fields["summary"], fields["file_name"],
         fields["content_type"], int(fields["is_patch"]), int(fields["is_private"]),
         len(data))).fetchone()[0]
    ctx.conn.execute("INSERT INTO attachment_data (attachment_id, data) VALUES (?, ?)",
                     (attachment_id, data))
    return load(ctx.conn, [attachment_id])[attachment_id]


class AttachmentEdit:
    """One attachment being changed: `old` as stored, `new` and `flags` in
    memory until `save` writes the difference."""

    def __init__(self, attachment, flags):
        self.old = attachment
        self.new = dict(attachment)
        self.old_flags = flags
        self.flags = copy.deepcopy(flags)

    @property
    def id(self):
        return self.old["id"]

    def set_obsolete(self, value):
        """Mark obsolete (or not); turning it on cancels pending requests."""
        if value and not self.new["is_obsolete"]:
            self.flags[:] = [f for f in self.flags if f["status"] != "?"]
        self.new["is_obsolete"] = bool(value)

    def save(self, ctx):
        """Write what changed at ctx.now with its bug history; return the
        `changes` answer ({API name: {"added", "removed"}}). Touches the
        attachment's last_change_time when anything changed."""
        conn, changes = ctx.conn, {}
        changed = [name for name in FIELDS if self.old[name] != self.new[name]]
        if changed:
            conn.execute(f"UPDATE attachments SET {', '.join(f'{n} = ?' for n in changed)}"
                         " WHERE id = ?",
                         [_stored(self.new[n]) for n in changed] + [self.id])
        for name in changed:
            changes[name] = {"removed": _text(self.old[name]), "added": _text(self.new[name])}
        flag_change = save_flags(ctx, self.old["bug_id"], self.id, self.old_flags, self.flags)
        if flag_change:
            changes["flagtypes.name"] = flag_change
        for name, change in changes.items():
            activity.log(ctx, self.old["bug_id"], HISTORY_NAMES.get(name, name),
                         change["removed"], change["added"], attachment_id=self.id)
        if changes:
            self.new["last_change_time"] = dates.to_db(ctx.now)
            conn.execute("UPDATE attachments SET last_change_time = ? WHERE id = ?",
                         (self.new["last_change_time"], self.id))
        return changes


def _stored(value):
    return int(value) if isinstance(value, bool) else value


def _text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return "" if value is None else str(value)


def save_flags(ctx, bug_id, attachment_id, old, new):
    """Write the attachment's flags `new` over `old` (lists of flag dicts) at
    ctx.now; returns the `flagtypes.name` change ({"removed", "added"}) or None."""
    conn, stamp = ctx.conn, dates.to_db(ctx.now)
    kept = {flag["id"] for flag in new if flag["id"] is not None}
    for flag in old:
        if flag["id"] not in kept:
            conn.execute("DELETE FROM flags WHERE id = ?", (flag["id"],))
    previous = {flag["id"]: flag for flag in old}
    for flag in new:
        if flag["id"] is None:
            flag["created_at"] = flag["modified_at"] = stamp
            flag["id"] = conn.execute(
                "INSERT INTO flags (type_id, status, bug_id, attachment_id, setter_id,"
                " requestee_id, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (flag["type_id"], flag["status"], bug_id, attachment_id, flag["setter_id"],
                 flag["requestee_id"], stamp, stamp)).fetchone()[0]
            continue
        before = previous[flag["id"]]
        if any(before[key] != flag[key] for key in ("status", "setter_id", "requestee_id")):
            flag["modified_at"] = stamp
            conn.execute("UPDATE flags SET status = ?, setter_id = ?, requestee_id = ?,"
                         " modified_at = ? WHERE id = ?",
                         (flag["status"], flag["setter_id"], flag["requestee_id"], stamp,
                          flag["id"]))
        elif flag["modified_at"] is None:
            flag["modified_at"] = before["modified_at"]
    ctx.events.flagged(bug_id, attachment_id, old, new)
    removed, added = diff(bug_flags.summaries(conn, old), bug_flags.summaries(conn, new))
    if removed or added:
        return {"removed": ", ".join(removed), "added": ", ".join(added)}
    return None


# Reading, attaching and changing as the caller ----------------------------------

def attachments_of(ctx, bug_values, attachment_ids):
    """The attachments of the bugs of `bug_values` (ids or aliases), and
    those of `attachment_ids`: ({"<bug id>": [Attachment, by id]},
    {"<attachment id>": Attachment}). A bug's list holds its private
    attachments only for insiders and for their creator; unknown attachment
    ids are left out for a caller who sees every attachment (see
    _requested).
    Errors: 100/101/102 a bug; 304 a requested attachment the caller may
    not see (private and the caller no insider, or its bug hidden) or,
    alike, a missing one.
    """
    bug_ids = list(dict.fromkeys(visible_bug_id(ctx, value) for value in bug_values))
    requested = _requested(ctx, attachment_ids)
    listed = of_bugs(ctx, bug_ids)
    ordered = [requested[i] for i in dict.fromkeys(attachment_ids) if i in requested]
    objects = attachment_objects(ctx, listed + ordered)
    by_bug = {str(bug_id): [] for bug_id in bug_ids}
    for obj in objects[:len(listed)]:
        by_bug[str(obj["bug_id"])].append(obj)
    by_id = {str(obj["id"]): obj for obj in objects[len(listed):]}
    return by_bug, by_id


def _requested(ctx, attachment_ids):
    """{id: attachment} of the attachments asked for by id. One the caller may
    not see (its bug is hidden, or it is private and the caller no insider)
    and a missing one answer alike: 304, except that a caller who
    sees every attachment is answered truthfully (a missing id is left out)."""
    found = load(ctx.conn, attachment_ids)
    insider = visibility.is_insider(ctx)
    visible_bugs = visibility.visible_bug_ids(ctx, {a["bug_id"] for a in found.values()})
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
    if not visibility.sees_every_bug(ctx):
        return False
    return insider or ctx.conn.execute(
        "SELECT 1 FROM attachments WHERE is_private = 1 LIMIT 1").fetchone() is None


def attach(ctx, bug_values, data, summary, file_name, content_type=None, is_patch=False,
           is_private=False, comment=None, flags=None, obsoletes=()):
    """Attach one file (`data`: base64, decoded leniently) to each bug of
    `bug_values` (ids or aliases). A patch is text/plain; flags (as given)
    are Flag changes of attachment flag types; obsoletes: ids of
    attachments of those bugs to mark obsolete. Every attachment, its
    "Created attachment" comment (private when the attachment is) and the
    bugs' last_change_time share one timestamp. Returns the new ids, in
    the order of the bugs.
    Errors: 100/101/102 a bug; 109 its product is not editable by the
    caller; 606 empty data; 600 too large; 604 no summary; 603 no file
    name; 113 private without being an insider; 601 bad content type; 114
    comment too long; 51/129-134/32000 flag problems; 32000 an obsoletes
    id that is unknown, on another bug or not editable by the caller.
    """
    bugs = []
    for value in bug_values:
        bug = record.load(ctx.conn, visible_bug_id(ctx, value))
        if all(bug.id != other.id for other in bugs):
            bugs.append(bug)
    for bug in bugs:
        product = ctx.conn.execute("SELECT name FROM products WHERE id = ?",
                                   (bug.product_id,)).fetchone()[0]
        require_product_edit(ctx, bug.product_id, product)
    data = check_data(ctx, data)
    fields = {"summary": check_summary(summary),
              "file_name": check_file_name(file_name),
              "is_patch": is_patch, "is_private": is_private}
    if fields["is_private"]:
        require_insider(ctx)
    fields["content_type"] = check_content_type(content_type, is_patch)
    body = comments.normalise(comment or "")
    flag_lists = []
    for bug in bugs:
        bug_flag_list = []
        AttachmentFlagEditor(ctx, bug, bug_flag_list, fields["is_private"]).apply(flags)
        flag_lists.append(bug_flag_list)
    obsolete = _obsoletes(ctx, obsoletes, {bug.id for bug in bugs})
    created = []
    for bug, bug_flag_list in zip(bugs, flag_lists, strict=True):
        attachment = insert(ctx, bug.id, fields, data)
        ctx.events.attached(bug.id, attachment["id"])
        save_flags(ctx, bug.id, attachment["id"], [], bug_flag_list)
        comments.add(ctx, bug.id, body, is_private=fields["is_private"],
                     kind=comments.ATTACHMENT_CREATED, extra=str(attachment["id"]),
                     attachment_id=attachment["id"])
        activity.touch(ctx.conn, bug.id, ctx.now, ctx.events)
        created.append(attachment["id"])
    for edit in obsolete:
        edit.save(ctx)
    return created


def _obsoletes(ctx, attachment_ids, bug_ids):
    """AttachmentEdits marking the still-current ones of `attachment_ids`
    obsolete. Errors: 32000 unknown id, on none of `bug_ids` or hidden from
    the caller (one answer), or not editable by the caller."""
    found = load(ctx.conn, attachment_ids)
    flags = flags_of(ctx.conn, list(found.values()))
    edits = []
    for attachment_id in dict.fromkeys(attachment_ids):
        attachment = found.get(attachment_id)
        # Missing, on another bug, or hidden from the caller: one answer.
        if attachment is None or attachment["bug_id"] not in bug_ids or not _may_see(
                ctx, attachment):
            raise ServiceError(USER_ERROR, f"Attachment #{attachment_id} is not an attachment "
                                           "of the bug the new attachment is for.")
        if not can_edit(ctx, attachment):
            raise illegal_edit(attachment_id)
        if attachment["is_obsolete"]:
            continue
        edit = AttachmentEdit(attachment, flags[attachment_id])
        edit.set_obsolete(True)
        edits.append(edit)
    return edits


def change(ctx, attachment_ids, given, comment=None, flags=None):
    """Change the attachments of `attachment_ids`.

    given: {field of FIELDS: new value} of the fields given (is_private:
    changing it needs insider; is_obsolete: turning it on cancels pending
    requests); comment: added to each attachment's bug as "Comment on
    attachment", private when the attachment is; flags: Flag changes, as
    given. The creator, and editbugs members (for a private attachment only
    insiders among them), may change everything; others only existing
    flags they set or were asked for (and add a comment with that).
    Returns [{"id", "last_change_time", "changes"}] in the order of ids;
    booleans in changes read "1"/"0".
    Errors: 32000 unknown attachment or one the caller may not see (alike:
    "not allowed to edit", see _unknown_attachment), product not editable,
    not allowed to edit, empty file name; 604 empty summary; 601 bad
    content type; 113 privacy change without being an insider; 114 comment
    too long; 51/129-134/32000 flag problems.
    """
    found = load(ctx.conn, attachment_ids)
    for attachment_id in attachment_ids:
        attachment = found.get(attachment_id)
        if attachment is None or not _may_see(ctx, attachment):
            raise _unknown_attachment(ctx, attachment_id, attachment is None)
        _check_bug(ctx, attachment["bug_id"])
    text = (comment or "").strip()
    body = comments.normalise(text) if text else ""
    flag_rows = flags_of(ctx.conn, list(found.values()))
    bugs = {}
    edits = []
    for attachment_id in attachment_ids:
        attachment = found[attachment_id]
        if attachment["bug_id"] not in bugs:
            bugs[attachment["bug_id"]] = record.load(ctx.conn, attachment["bug_id"])
        edit = AttachmentEdit(attachment, flag_rows[attachment_id])
        if can_edit(ctx, attachment):
            _apply_fields(ctx, edit, given)
            _apply_flags(ctx, edit, bugs[attachment["bug_id"]], flags)
        else:
            _apply_own_flags(ctx, edit, bugs[attachment["bug_id"]], given, flags)
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
            activity.touch(ctx.conn, bug_id, ctx.now, ctx.events)
        results.append({"id": edit.id, "changes": changes,
                        "last_change_time": dates.from_db(edit.new["last_change_time"])})
    return results


def _may_see(ctx, attachment):
    """True when the caller sees the attachment's bug, and the attachment is
    public or the caller is an insider or its creator."""
    return (bool(visibility.visible_bug_ids(ctx, [attachment["bug_id"]]))
            and (not attachment["is_private"] or visibility.is_insider(ctx)
                 or attachment["creator_id"] == ctx.caller.id))


def _unknown_attachment(ctx, attachment_id, missing):
    """32000 for an attachment that is missing or hidden from the caller: the
    same answer for both, except to a caller who sees every
    attachment, who is told a missing one does not exist."""
    if missing and _sees_every_attachment(ctx, visibility.is_insider(ctx)):
        return ServiceError(USER_ERROR, f"Attachment #{attachment_id} does not exist.")
    return illegal_edit(attachment_id)


def _check_bug(ctx, bug_id):
    """Errors: 32000 when the caller cannot edit the (visible) bug's product."""
    product_id = ctx.conn.execute("SELECT product_id FROM bugs WHERE id = ?",
                                  (bug_id,)).fetchone()[0]
    if not can_edit_product(ctx, product_id):
        raise ServiceError(USER_ERROR, f"You are not allowed to change attachments of bug "
                                       f"#{bug_id}.")


def _apply_fields(ctx, edit, given):
    """Check and apply the fields `given` to `edit.new`."""
    new = edit.new
    if "summary" in given:
        new["summary"] = check_summary(given["summary"])
    if "file_name" in given:
        new["file_name"] = check_file_name(given["file_name"], USER_ERROR)
    if "is_patch" in given:
        new["is_patch"] = given["is_patch"]
    if "content_type" in given or (new["is_patch"] and not edit.old["is_patch"]):
        new["content_type"] = check_content_type(given.get("content_type",
                                                           new["content_type"]),
                                                 new["is_patch"])
    if "is_private" in given:
        new["is_private"] = given["is_private"]
        if new["is_private"] != edit.old["is_private"]:
            require_insider(ctx)
    if "is_obsolete" in given:
        edit.set_obsolete(given["is_obsolete"])


def _apply_flags(ctx, edit, bug, flags):
    if flags is not None:
        AttachmentFlagEditor(ctx, bug, edit.flags, edit.new["is_private"]).apply(flags)


def _apply_own_flags(ctx, edit, bug, given, flags):
    """A caller who may not edit the attachment: only flag changes, each of
    an existing flag the caller set or was asked for. Errors: 32000."""
    if given or not as_list(flags):
        raise illegal_edit(edit.id)
    _apply_flags(ctx, edit, bug, flags)
    before = {flag["id"]: flag for flag in edit.old_flags}
    after = {flag["id"]: flag for flag in edit.flags}
    if None in after:
        raise illegal_edit(edit.id)
    for flag_id, flag in before.items():
        now = after.get(flag_id)
        if now is not None and all(now[k] == flag[k] for k in ("status", "requestee_id")):
            continue
        if ctx.caller.id not in (flag["setter_id"], flag["requestee_id"]):
            raise illegal_edit(edit.id)
