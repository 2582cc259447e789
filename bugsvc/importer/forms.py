"""The source's answers in one form, whichever reference answered.

Bugzilla 5.0 to 5.2, bugzilla.mozilla.org and bugsvc agree on the shape of
their REST answers but not on every detail:

- dates: `2024-05-01T10:00:00Z` (bugsvc, Bugzilla 5.x), the compact
  `20240501T10:00:00` of older JSON-RPC answers, `2024-05-01 10:00:00`, or
  an offset instead of Z;
- booleans: JSON true/false (bugsvc), 1/0 (Bugzilla's attachment fields are
  typed int), or the strings "1"/"0"/"true"/"false";
- history: Bugzilla names most fields by their API names but leaves some in
  the database's names (bug_group, and every name in an older reference);
  it attaches the whole comment row (`comment`, with `comment_id`) to a
  change of a comment's privacy, bugsvc its `comment_id`;
- aliases: a list (5.x) or one string or null (older answers);
- attachments: `is_private` etc. as 0/1; comments: `time` and/or
  `creation_time`.

Everything here is pure: answers in, plain dicts out. Times come out in the
database's form ('YYYY-MM-DD HH:MM:SS', UTC).
"""

import base64
import binascii
import re
from datetime import datetime, timedelta, timezone

from ..catalogue import bug_fields


_DATETIME = re.compile(
    r"^\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2})(?::?(\d{2})(?:\.\d+)?)?)?"
    r"\s*(Z|UTC|[+-]\d{2}:?\d{2})?\s*$")

# Database names of bug fields (as an older reference's history names them)
# to the names bugsvc's history stores (a field's history name, else its
# interface name).
HISTORY_NAMES = {name: field.history or field.api for field in bug_fields.STANDARD
                 for name in field.bugzilla_names if name != (field.history or field.api)}


class FormError(ValueError):
    """A value the target cannot take in this form."""


def when(value, name="date"):
    """A source time as the database stores it, or None for none.
    Errors: FormError for text that is no date."""
    if value is None or value == "":
        return None
    match = _DATETIME.match(str(value))
    if not match:
        raise FormError(f"'{value}' is not a date ({name})")
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                          int(second or 0))
    except ValueError:
        raise FormError(f"'{value}' is not a date ({name})") from None
    if zone and zone not in ("Z", "UTC"):
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def wire(db_time):
    """The answer form of a stored time ('YYYY-MM-DDTHH:MM:SSZ'), None for None."""
    if db_time is None:
        return None
    return db_time[:10] + "T" + db_time[11:19] + "Z"


def moment(db_time):
    """A stored time as an aware datetime."""
    return datetime.strptime(db_time, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)


def truth(value):
    """A boolean in any of the references' forms."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(value)


def number(value, default=0.0):
    """A float from a number or its text (time tracking)."""
    if value is None or value == "":
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        raise FormError(f"'{value}' is not a number") from None


def aliases(value):
    """Aliases as a list, from a list, one string or None."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"[\s,]+", value) if part]
    return [str(item) for item in value if item not in (None, "")]


def logins_of_detail(bug):
    """{login: real name} from a bug's *_detail objects."""
    names = {}
    for key in ("assigned_to_detail", "creator_detail", "qa_contact_detail"):
        detail = bug.get(key)
        if isinstance(detail, dict) and detail.get("name"):
            names[detail["name"]] = detail.get("real_name") or ""
    for detail in bug.get("cc_detail") or []:
        if isinstance(detail, dict) and detail.get("name"):
            names[detail["name"]] = detail.get("real_name") or ""
    return names


# The bug fields the import reads as they are (strings).
_TEXT_FIELDS = ("summary", "status", "resolution", "product", "component", "classification",
                "version", "target_milestone", "platform", "op_sys", "priority", "severity",
                "url", "whiteboard")
TIME_FIELDS = ("estimated_time", "remaining_time", "deadline")


def bug(raw):
    """One bug of Bug.get in the import's form: the API names, times in the
    database form, lists as lists, custom fields under `custom` (as
    answered), time tracking under `time` only when the source showed it.
    Errors: FormError for a date that is not one."""
    item = {"id": int(raw["id"])}
    for name in _TEXT_FIELDS:
        item[name] = "" if raw.get(name) is None else str(raw.get(name))
    item["alias"] = aliases(raw.get("alias"))
    item["is_confirmed"] = truth(raw.get("is_confirmed", True))
    item["dupe_of"] = int(raw["dupe_of"]) if raw.get("dupe_of") not in (None, "", 0) else None
    item["keywords"] = [str(k) for k in raw.get("keywords") or []]
    item["blocks"] = sorted(int(b) for b in raw.get("blocks") or [])
    item["depends_on"] = sorted(int(b) for b in raw.get("depends_on") or [])
    item["cc"] = [str(c) for c in raw.get("cc") or []]
    item["assigned_to"] = str(raw.get("assigned_to") or "")
    item["creator"] = str(raw.get("creator") or raw.get("reporter") or "")
    item["qa_contact"] = str(raw.get("qa_contact") or "")
    item["groups"] = [str(g) for g in raw.get("groups") or []]
    item["see_also"] = [str(s) for s in raw.get("see_also") or []]
    item["flags"] = [flag(f) for f in raw.get("flags") or []]
    item["creation_time"] = when(raw.get("creation_time"), "creation_time")
    item["last_change_time"] = when(raw.get("last_change_time"), "last_change_time")
    item["is_cc_accessible"] = truth(raw.get("is_cc_accessible", True))
    item["is_creator_accessible"] = truth(raw.get("is_creator_accessible", True))
    if any(name in raw for name in TIME_FIELDS):
        item["time"] = {"estimated_time": number(raw.get("estimated_time")),
                        "remaining_time": number(raw.get("remaining_time")),
                        "deadline": (str(raw["deadline"])[:10] if raw.get("deadline")
                                     else None)}
    if "tags" in raw:
        item["tags"] = sorted({str(tag) for tag in raw.get("tags") or []}, key=str.lower)
    item["custom"] = {key: value for key, value in raw.items() if key.startswith("cf_")}
    item["real_names"] = logins_of_detail(raw)
    return item


def flag(raw):
    """A flag of a bug or an attachment."""
    return {"id": int(raw["id"]) if raw.get("id") is not None else None,
            "name": str(raw.get("name") or ""),
            "type_id": int(raw["type_id"]) if raw.get("type_id") is not None else None,
            "status": str(raw.get("status") or ""),
            "setter": str(raw.get("setter") or ""),
            "requestee": str(raw.get("requestee") or "") or None,
            "creation_date": when(raw.get("creation_date"), "flag creation_date"),
            "modification_date": when(raw.get("modification_date") or raw.get("creation_date"),
                                      "flag modification_date")}


def comment(raw):
    """A comment of Bug.comments."""
    created = raw.get("creation_time") or raw.get("time")
    item = {"id": int(raw["id"]), "bug_id": int(raw["bug_id"]),
            "count": int(raw["count"]) if raw.get("count") is not None else None,
            "creator": str(raw.get("creator") or raw.get("author") or ""),
            "time": when(created, "comment time"),
            "text": str(raw.get("text") if raw.get("text") is not None
                        else raw.get("raw_text") or ""),
            "is_private": truth(raw.get("is_private", False)),
            "attachment_id": (int(raw["attachment_id"]) if raw.get("attachment_id")
                              not in (None, "", 0) else None)}
    if "tags" in raw:
        item["tags"] = sorted(str(tag) for tag in raw.get("tags") or [])
    return item


def attachment(raw):
    """An attachment of Bug.attachments (with its data when it was asked for).
    Errors: FormError for data that is not base64."""
    item = {"id": int(raw["id"]), "bug_id": int(raw["bug_id"]),
            "creator": str(raw.get("creator") or raw.get("attacher") or ""),
            "creation_time": when(raw.get("creation_time"), "attachment creation_time"),
            "last_change_time": when(raw.get("last_change_time") or raw.get("creation_time"),
                                     "attachment last_change_time"),
            "summary": str(raw.get("summary") or raw.get("description") or ""),
            "file_name": str(raw.get("file_name") or ""),
            "content_type": str(raw.get("content_type") or "application/octet-stream"),
            "is_patch": truth(raw.get("is_patch", False)),
            "is_obsolete": truth(raw.get("is_obsolete", False)),
            "is_private": truth(raw.get("is_private", False)),
            "size": int(raw["size"]) if raw.get("size") is not None else None,
            "flags": [flag(f) for f in raw.get("flags") or []]}
    if raw.get("data") is not None:
        item["data"] = attachment_data(raw["data"])
        if item["size"] is None:
            item["size"] = len(item["data"])
    return item


def attachment_data(text):
    """The bytes of an attachment's base64 `data`. Errors: FormError."""
    try:
        return base64.b64decode(re.sub(r"\s+", "", str(text)), validate=True)
    except (binascii.Error, ValueError):
        raise FormError("attachment data that is not base64") from None


LOCAL_PATH = "show_bug.cgi?id="


class LocalLinks:
    """See Also links to the old installation's own bugs, and their
    address at the new one (bug ids are kept, so bug N is bug N there).

    old: the old installation's addresses ('https://old.example.org/'; ''
    for a source that stores its links without one), each also tried with
    the other scheme. new: the new installation's address, None when
    unknown (links then stay as they are).
    """

    def __init__(self, old, new=None):
        bases = set()
        for base in old:
            base = str(base or "")
            bases.add(base.lower())
            for scheme, other in (("http://", "https://"), ("https://", "http://")):
                if base.lower().startswith(scheme):
                    bases.add(other + base[len(scheme):].lower())
        self.old = sorted(bases)
        self.new = new

    def bug_id(self, url):
        """The bug id `url` names at the old installation, else None."""
        text = url.lower()
        for base in self.old:
            prefix = base + LOCAL_PATH.lower()
            if text.startswith(prefix) and text[len(prefix):].isdigit():
                return int(text[len(prefix):])
        return None

    def rewrite(self, url):
        """`url` at the new installation (itself when it names no old bug,
        or when the new address is unknown)."""
        bug_id = self.bug_id(url)
        if bug_id is None or self.new is None:
            return url
        return f"{self.new}{LOCAL_PATH}{bug_id}"


def history(raw_entries):
    """A bug's history as rows: [{when, who, field, removed, added,
    attachment_id, comment_id}], in the source's order."""
    rows = []
    for entry in raw_entries or []:
        at = when(entry.get("when"), "history when")
        who = str(entry.get("who") or "")
        for change in entry.get("changes") or []:
            field = str(change.get("field_name") or change.get("fieldname") or "")
            comment_id = change.get("comment_id")
            if comment_id is None and isinstance(change.get("comment"), dict):
                comment_id = change["comment"].get("comment_id") or change["comment"].get("id")
            rows.append({
                "when": at, "who": who, "field": HISTORY_NAMES.get(field, field),
                "removed": "" if change.get("removed") is None else str(change["removed"]),
                "added": "" if change.get("added") is None else str(change["added"]),
                "attachment_id": (int(change["attachment_id"]) if change.get("attachment_id")
                                  else None),
                "comment_id": int(comment_id) if comment_id else None})
    return rows


def history_entries(rows):
    """Rows of `history` grouped back into entries as the interface shows
    them: one per (when, who), changes in order (the comparison's form)."""
    entries = []
    for row in rows:
        change = {"field_name": row["field"], "removed": row["removed"], "added": row["added"]}
        if row.get("attachment_id"):
            change["attachment_id"] = row["attachment_id"]
        if entries and entries[-1]["when"] == row["when"] and entries[-1]["who"] == row["who"]:
            entries[-1]["changes"].append(change)
        else:
            entries.append({"when": row["when"], "who": row["who"], "changes": [change]})
    return entries
