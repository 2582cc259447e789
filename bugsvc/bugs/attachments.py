"""Attachments: the rules of their fields, storing them,
changing them in memory and writing the difference with its history, and
Attachment objects for many attachments at once.

The content (attachment_data) is read only when the caller wants `data`,
one row at a time, and is held as bytes only while it is encoded.
"""

import base64
import binascii
import copy
import re

from ..accounts import access
from .. import dates
from ..store.db import placeholders
from ..accounts.email import visible_email
from ..errors import (
    ServiceError, USER_ERROR, FILE_NOT_SPECIFIED, FILE_TOO_LARGE, INVALID_CONTENT_TYPE,
    MISSING_DESCRIPTION, USER_NOT_INSIDER, ZERO_LENGTH_FILE,
)
from ..call.fields import Shape
from ..call.params import clean_text
from . import activity, flags as bug_flags
from .store import diff

MAX_FILE_NAME = 255

# include/exclude shape: plain default fields; flags are never filtered.
ATTACHMENT_SHAPES = {"bugs.*": Shape(), "attachments.*": Shape()}

_CONTENT_TYPE = re.compile(
    r"^(application|audio|image|message|model|multipart|text|video)/[a-z0-9_\-+.]+"
    r"(;\s*charset=[a-z0-9_\-+]+)?$", re.IGNORECASE)
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/=]")
# API name -> internal name of history (the reference's field names).
HISTORY_NAMES = {"summary": "attachments.description", "file_name": "attachments.filename",
                 "content_type": "attachments.mimetype", "is_patch": "attachments.ispatch",
                 "is_obsolete": "attachments.isobsolete",
                 "is_private": "attachments.isprivate"}
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
    if not access.is_insider(ctx):
        raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make attachments private or "
                                             "public: you are not an insider.")


# Who may see and edit --------------------------------------------------------------

def listing_condition(ctx, alias="a"):
    """SQL condition (and args) for the attachments a bug's listing shows the
    caller: all for insiders, else public ones and the caller's own."""
    if access.is_insider(ctx):
        return "1 = 1", []
    if ctx.caller.is_logged_in:
        return f"({alias}.is_private = 0 OR {alias}.creator_id = ?)", [ctx.caller.id]
    return f"{alias}.is_private = 0", []


def can_edit(ctx, attachment):
    """True when the caller may change the attachment's fields: its creator;
    or, when it is public or the caller an insider, an editbugs member."""
    if ctx.caller.id is not None and attachment["creator_id"] == ctx.caller.id:
        return True
    return ((not attachment["is_private"] or access.is_insider(ctx))
            and ctx.caller.in_group("editbugs"))


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
