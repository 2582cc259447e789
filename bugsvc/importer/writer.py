"""Writing one bug with everything that belongs to it, keeping the source's
bug, comment, attachment and flag ids (so old links and commit messages
point at the right bug, comment and attachment).

This is the import's path into the bug tables, and it goes below the
domain code (bugsvc/bugs/), deliberately: the domain's writes are what
raise notifications (bug mail, webhooks) and stamp the change with the
caller and the present time, while an imported bug is a record of what
already happened, with its own authors and times. Writing here raises no
event of any kind. Every bug is written whole: its rows in the dependent
tables are replaced by what the source shows now, so writing a bug again
(a resumed or a later run) gives the same result as writing it once.

Links to bugs not yet in the target (a dependency on, or a duplicate of, a
bug with a higher id) wait in import_links and are made when that bug is
written; those whose other bug never comes (the key may not see it) stay
unmade and are reported at the end of the run.
"""

from ..bugs import comments as comment_kinds
from ..catalogue import bug_fields
from ..catalogue.field_types import BUG_ID, DATE, DATETIME, MULTI_SELECT, SINGLE_SELECT
from ..store.db import ids_written, placeholders
from . import forms


_CHUNK = 400


def write_bug(target, bug, comments, history, attachments, report):
    """Store `bug` (forms.bug) with its comments (forms.comment), history
    rows (forms.history) and attachments (forms.attachment; `data` only for
    those to be stored anew) in the caller's transaction."""
    conn = target.conn
    bug_id = bug["id"]
    product_id = target.product_id(bug["product"], bug["classification"])
    component_id = target.component_id(product_id, bug["component"])
    target.ensure_version(product_id, bug["version"])
    target.ensure_milestone(product_id, bug["target_milestone"] or "---")
    for field in bug_fields.SELECTS:
        if bug[field.api] or field.name != "resolution":
            target.ensure_value(field.name, bug[field.api])
    user = target.user_id
    exists = conn.execute("SELECT 1 FROM bugs WHERE id = ?", (bug_id,)).fetchone() is not None
    dupe_of = bug["dupe_of"] if bug["dupe_of"] and _bug_exists(conn, bug["dupe_of"]) else None
    columns = {
        "product_id": product_id, "component_id": component_id, "version": bug["version"],
        "target_milestone": bug["target_milestone"] or "---", "summary": bug["summary"],
        "status": bug["status"], "resolution": bug["resolution"],
        "is_confirmed": int(bug["is_confirmed"]), "priority": bug["priority"],
        "severity": bug["severity"], "platform": bug["platform"], "op_sys": bug["op_sys"],
        "assigned_to": user(bug["assigned_to"]),
        "qa_contact": user(bug["qa_contact"]) if bug["qa_contact"] else None,
        "reporter": user(bug["creator"]), "url": bug["url"], "whiteboard": bug["whiteboard"],
        "dupe_of": dupe_of, "creation_time": bug["creation_time"],
        "last_change_time": bug["last_change_time"] or bug["creation_time"],
        "is_cc_accessible": int(bug["is_cc_accessible"]),
        "is_creator_accessible": int(bug["is_creator_accessible"]),
    }
    if "time" in bug:
        columns.update(estimated_time=bug["time"]["estimated_time"],
                       remaining_time=bug["time"]["remaining_time"],
                       deadline=bug["time"]["deadline"])
    names = list(columns)
    if exists:
        conn.execute(f"UPDATE bugs SET {', '.join(f'{name} = ?' for name in names)}"
                     " WHERE id = ?", [columns[name] for name in names] + [bug_id])
    else:
        conn.execute(f"INSERT INTO bugs (id, {', '.join(names)}) VALUES"
                     f" (?, {placeholders(names)})", [bug_id] + [columns[name] for name in names])
        ids_written(conn, "bugs")
    report.count("bugs")
    conn.execute("DELETE FROM import_links WHERE bug_id = ?", (bug_id,))
    if bug["dupe_of"] and dupe_of is None:
        _wait_for(conn, bug_id, "dupe_of", bug["dupe_of"])
    _write_lists(target, bug, report)
    _write_dependencies(conn, bug, report)
    _write_custom(target, bug, report)
    attachment_ids = _write_attachments(target, bug_id, attachments, report)
    _write_comments(target, bug_id, comments, history, attachments, report)
    when = columns["last_change_time"]
    _write_flags(target, bug_id, bug["flags"], None, "b", when, report)
    for attachment in attachments:
        if attachment["id"] in attachment_ids:
            _write_flags(target, bug_id, attachment["flags"], attachment["id"], "a",
                         attachment["last_change_time"] or when, report)
    _write_history(target, bug_id, history, report)
    _write_tags(target, bug, report)
    _resolve_waiting(conn, bug_id)


def _bug_exists(conn, bug_id):
    return conn.execute("SELECT 1 FROM bugs WHERE id = ?", (bug_id,)).fetchone() is not None


def _wait_for(conn, bug_id, field, other):
    conn.execute("INSERT INTO import_links (bug_id, field, other) VALUES (?, ?, ?)"
                 " ON CONFLICT DO NOTHING", (bug_id, field, other))


def _resolve_waiting(conn, bug_id):
    """Make the links other bugs waited to make with this one."""
    for other, field in conn.execute("SELECT bug_id, field FROM import_links WHERE other = ?",
                                     (bug_id,)).fetchall():
        if field == "dupe_of":
            conn.execute("UPDATE bugs SET dupe_of = ? WHERE id = ?", (bug_id, other))
        elif field == "depends_on":
            _depend(conn, other, bug_id)
        elif field == "blocks":
            _depend(conn, bug_id, other)
    conn.execute("DELETE FROM import_links WHERE other = ?", (bug_id,))


def _depend(conn, blocked, depends_on):
    conn.execute("INSERT INTO dependencies (blocked, depends_on) VALUES (?, ?)"
                 " ON CONFLICT DO NOTHING", (blocked, depends_on))


def _write_lists(target, bug, report):
    conn = target.conn
    bug_id = bug["id"]
    conn.execute("DELETE FROM bug_aliases WHERE bug_id = ?", (bug_id,))
    for alias in bug["alias"]:
        # An alias moved from another bug at the source: that bug changed
        # too and is written again with its own aliases.
        conn.execute("DELETE FROM bug_aliases WHERE lower(alias) = lower(?)", (alias,))
        conn.execute("INSERT INTO bug_aliases (alias, bug_id) VALUES (?, ?)", (alias, bug_id))
        report.count("aliases")
    conn.execute("DELETE FROM bug_cc WHERE bug_id = ?", (bug_id,))
    for login in dict.fromkeys(bug["cc"]):
        conn.execute("INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                     (bug_id, target.user_id(login)))
        report.count("cc entries")
    conn.execute("DELETE FROM bug_keywords WHERE bug_id = ?", (bug_id,))
    for name in dict.fromkeys(bug["keywords"]):
        conn.execute("INSERT INTO bug_keywords (bug_id, keyword_id) VALUES (?, ?)"
                     " ON CONFLICT DO NOTHING", (bug_id, target.keyword_id(name)))
    conn.execute("DELETE FROM bug_groups WHERE bug_id = ?", (bug_id,))
    product_id = target.products[bug["product"].lower()]
    for name in dict.fromkeys(bug["groups"]):
        group_id = target.group_id(name)
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)"
                     " ON CONFLICT DO NOTHING", (bug_id, group_id))
        if product_id in target.controls_unknown:
            # The product's controls are not known: it allows at least the
            # groups its bugs are in (Shown to members), so a bug can be
            # filed into them as it could at the source.
            added = conn.execute(
                "INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                " othercontrol, canedit) VALUES (?, ?, 0, 1, 0, 0)"
                " ON CONFLICT (group_id, product_id) DO NOTHING", (group_id, product_id))
            if added.rowcount:
                report.count("group controls")
    conn.execute("DELETE FROM bug_see_also WHERE bug_id = ?", (bug_id,))
    links = target.local_links
    for url in dict.fromkeys(bug["see_also"]):
        stored = links.rewrite(url) if links is not None else url
        conn.execute("INSERT INTO bug_see_also (bug_id, url) VALUES (?, ?)", (bug_id, stored))
        report.count("see also links")
        if stored != url:
            report.count("see also links rewritten")
        elif links is not None and links.bug_id(url) is not None:
            report.count("see also links to the old installation")


def _write_dependencies(conn, bug, report):
    bug_id = bug["id"]
    conn.execute("DELETE FROM dependencies WHERE blocked = ? OR depends_on = ?", (bug_id, bug_id))
    for field, others in (("depends_on", bug["depends_on"]), ("blocks", bug["blocks"])):
        for other in others:
            if other == bug_id:
                continue
            if not _bug_exists(conn, other):
                _wait_for(conn, bug_id, field, other)
                continue
            if field == "depends_on":
                _depend(conn, bug_id, other)
            else:
                _depend(conn, other, bug_id)
            report.count("dependencies")


def _write_custom(target, bug, report):
    conn = target.conn
    bug_id = bug["id"]
    conn.execute("DELETE FROM bug_custom_values WHERE bug_id = ?", (bug_id,))
    for name, value in bug["custom"].items():
        field = target.custom_field(name)
        if field is None:
            report.not_carried("custom field values", f"{name} of bug {bug_id}",
                               "the field is not in the source's field list")
            continue
        try:
            stored = _custom_values(field, value)
        except forms.FormError as exc:
            report.not_carried("custom field values", f"{name} of bug {bug_id}",
                               f"the target refuses it: {exc}")
            continue
        for text in stored:
            if field["type"] in (SINGLE_SELECT, MULTI_SELECT):
                target.ensure_value(name, text)
            conn.execute("INSERT INTO bug_custom_values (bug_id, field_id, value) VALUES (?, ?, ?)",
                         (bug_id, field["id"], text))


def _custom_values(field, value):
    """The stored strings of a custom field's value as the source shows it."""
    kind = field["type"]
    if value is None:
        return []
    if kind == MULTI_SELECT:
        items = value if isinstance(value, list) else [v for v in str(value).split(",")]
        return [str(item).strip() for item in items if str(item).strip()]
    if isinstance(value, list):
        value = value[0] if value else ""
    text = str(value)
    if kind == SINGLE_SELECT:
        return [] if text in ("", "---") else [text]
    if kind == BUG_ID:
        return [str(int(text))] if text.strip() not in ("", "0") else []
    if kind == DATETIME:
        return [forms.when(text, field["name"])] if text.strip() else []
    if kind == DATE:
        return [forms.when(text, field["name"])[:10] + " 00:00:00"] if text.strip() else []
    return [text] if text.strip() else []


def _write_attachments(target, bug_id, attachments, report):
    """Store the attachments; returns the ids stored. Attachments the
    target has but the source no longer shows (deleted, or now private to
    the key) are removed."""
    conn = target.conn
    have = {row[0] for row in conn.execute("SELECT id FROM attachments WHERE bug_id = ?",
                                           (bug_id,))}
    shown = {attachment["id"] for attachment in attachments}
    gone = sorted(have - shown)
    if gone:
        marks = placeholders(gone)
        conn.execute(f"DELETE FROM flags WHERE attachment_id IN ({marks})", gone)
        conn.execute(f"DELETE FROM attachment_data WHERE attachment_id IN ({marks})", gone)
        conn.execute(f"DELETE FROM attachments WHERE id IN ({marks})", gone)
    stored = set()
    for attachment in attachments:
        attachment_id = attachment["id"]
        has_data = attachment_id in have and conn.execute(
            "SELECT 1 FROM attachment_data WHERE attachment_id = ?",
            (attachment_id,)).fetchone() is not None
        if "data" not in attachment and not has_data:
            report.not_carried("attachments", attachment_id, "the source did not give its data")
            continue
        owner = conn.execute("SELECT bug_id FROM attachments WHERE id = ?",
                             (attachment_id,)).fetchone()
        if owner is not None and owner[0] != bug_id:
            report.not_carried("attachments", attachment_id,
                               f"the target already has it on bug {owner[0]}")
            continue
        size = attachment["size"] if attachment["size"] is not None else len(
            attachment.get("data") or b"")
        values = (bug_id, target.user_id(attachment["creator"]), attachment["creation_time"],
                  attachment["last_change_time"], attachment["summary"], attachment["file_name"],
                  attachment["content_type"], int(attachment["is_patch"]),
                  int(attachment["is_obsolete"]), int(attachment["is_private"]), size)
        conn.execute(
            "INSERT INTO attachments (id, bug_id, creator_id, created_at, last_change_time,"
            " summary, file_name, content_type, is_patch, is_obsolete, is_private, size)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET bug_id = excluded.bug_id,"
            " creator_id = excluded.creator_id, created_at = excluded.created_at,"
            " last_change_time = excluded.last_change_time, summary = excluded.summary,"
            " file_name = excluded.file_name, content_type = excluded.content_type,"
            " is_patch = excluded.is_patch, is_obsolete = excluded.is_obsolete,"
            " is_private = excluded.is_private, size = excluded.size",
            (attachment_id,) + values)
        if "data" in attachment:
            conn.execute("INSERT INTO attachment_data (attachment_id, data) VALUES (?, ?)"
                         " ON CONFLICT (attachment_id) DO UPDATE SET data = excluded.data",
                         (attachment_id, attachment["data"]))
            report.count("attachment bytes", len(attachment["data"]))
        stored.add(attachment_id)
        report.count("attachments")
    ids_written(conn, "attachments")
    return stored


def _work_times(comments, history):
    """{comment id: hours} from the history's work_time rows: each row goes
    to its comment (comment_id), else to the comment its author made at
    the same moment."""
    by_moment = {}
    for comment in comments:
        by_moment.setdefault((comment["creator"].lower(), comment["time"]), comment["id"])
    hours = {}
    for row in history:
        if row["field"] != "work_time":
            continue
        comment_id = row.get("comment_id") or by_moment.get((row["who"].lower(), row["when"]))
        if comment_id is None:
            continue
        try:
            worked = float(row["added"] or 0) - float(row["removed"] or 0)
        except ValueError:
            continue
        hours[comment_id] = hours.get(comment_id, 0.0) + worked
    return hours


def _comment_form(comment, summaries):
    """(kind, extra, attachment_id, body) storing `comment` so that the
    target shows exactly the text the source showed: a system comment is
    stored as such only when rendering it gives the same text back, else
    as plain text."""
    text = comment["text"]
    attachment_id = comment["attachment_id"]
    if attachment_id is not None:
        summary = summaries.get(attachment_id, "")
        for kind, verb in ((comment_kinds.ATTACHMENT_CREATED, "Created attachment"),
                           (comment_kinds.ATTACHMENT_UPDATED, "Comment on attachment")):
            head = f"{verb} {attachment_id}\n{summary}"
            if text == head or text.startswith(head + "\n\n"):
                body = text[len(head) + 2:]
                if comment_kinds.render_text(kind, body, attachment_id, summary) == text:
                    return kind, str(attachment_id), attachment_id, body
        return comment_kinds.PLAIN, None, attachment_id, text
    mark = " has been marked as a duplicate of "
    if text.startswith("*** Bug ") and text.endswith(" ***") and mark in text:
        other = text[len("*** Bug "):].split(" ", 1)[0]
        if other.isdigit() and comment_kinds.render_text(
                comment_kinds.HAS_DUPE, "", other) == text:
            return comment_kinds.HAS_DUPE, other, None, ""
    tail = "*** This bug has been marked as a duplicate of bug "
    at = text.rfind("\n\n" + tail)
    if at >= 0 and text.endswith(" ***"):
        other = text[at + 2 + len(tail):-4]
        body = text[:at]
        if other.isdigit() and comment_kinds.render_text(
                comment_kinds.DUPE_OF, body, other) == text:
            return comment_kinds.DUPE_OF, other, None, body
    return comment_kinds.PLAIN, None, None, text


def _write_comments(target, bug_id, comments, history, attachments, report):
    conn = target.conn
    old = [row[0] for row in conn.execute("SELECT id FROM comments WHERE bug_id = ?", (bug_id,))]
    for start in range(0, len(old), _CHUNK):
        chunk = old[start:start + _CHUNK]
        conn.execute(f"DELETE FROM comment_tags WHERE comment_id IN ({placeholders(chunk)})",
                     chunk)
    conn.execute("DELETE FROM comments WHERE bug_id = ?", (bug_id,))
    summaries = {attachment["id"]: attachment["summary"] for attachment in attachments}
    hours = _work_times(comments, history)
    used_counts = set()
    for position, comment in enumerate(comments):
        count = comment["count"] if comment["count"] is not None else position
        if count in used_counts:
            count = max(used_counts) + 1
        used_counts.add(count)
        kind, extra, attachment_id, body = _comment_form(comment, summaries)
        taken = conn.execute("SELECT bug_id FROM comments WHERE id = ?",
                             (comment["id"],)).fetchone()
        if taken is not None:
            report.not_carried("comments", comment["id"],
                               f"the target already has it on bug {taken[0]}")
            continue
        conn.execute(
            "INSERT INTO comments (id, bug_id, count, author_id, created_at, body, is_private,"
            " work_time, kind, extra, attachment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (comment["id"], bug_id, count, target.user_id(comment["creator"]), comment["time"],
             body, int(comment["is_private"]), round(hours.get(comment["id"], 0.0), 2), kind,
             extra, attachment_id))
        report.count("comments")
        for tag in dict.fromkeys(comment.get("tags") or []):
            conn.execute("INSERT INTO comment_tags (comment_id, tag) VALUES (?, ?)"
                         " ON CONFLICT DO NOTHING", (comment["id"], tag))
            report.count("comment tags")
    ids_written(conn, "comments")


def _write_flags(target, bug_id, flags, attachment_id, target_type, when, report):
    """Replace the flags of a bug (attachment_id None) or of one attachment;
    `when` stands in for a flag's dates when the source gives none."""
    conn = target.conn
    if attachment_id is None:
        conn.execute("DELETE FROM flags WHERE bug_id = ? AND attachment_id IS NULL", (bug_id,))
    else:
        conn.execute("DELETE FROM flags WHERE attachment_id = ?", (attachment_id,))
    for flag in flags:
        if flag["status"] not in ("+", "-", "?") or not flag["setter"]:
            report.not_carried("flags", f"{flag['name']} on bug {bug_id}",
                               f"the target refuses the status '{flag['status']}' or a flag "
                               "without a setter")
            continue
        type_id = target.ensure_flag_type(flag["type_id"], flag["name"], target_type)
        created = flag["creation_date"] or flag["modification_date"] or when
        taken = flag["id"] is not None and conn.execute(
            "SELECT 1 FROM flags WHERE id = ?", (flag["id"],)).fetchone() is not None
        values = (type_id, flag["status"], bug_id, attachment_id, target.user_id(flag["setter"]),
                  target.user_id(flag["requestee"]) if flag["requestee"] else None, created,
                  flag["modification_date"] or created)
        columns = ("type_id, status, bug_id, attachment_id, setter_id, requestee_id, created_at,"
                   " modified_at")
        if flag["id"] is None or taken:
            # A flag without an id of its own (or whose id the target gave
            # another flag) gets a new one.
            conn.execute(f"INSERT INTO flags ({columns}) VALUES ({placeholders(values)})", values)
        else:
            conn.execute(f"INSERT INTO flags (id, {columns}) VALUES (?, {placeholders(values)})",
                         (flag["id"],) + values)
        report.count("flags")
    ids_written(conn, "flags")


def _write_history(target, bug_id, history, report):
    conn = target.conn
    conn.execute("DELETE FROM bug_activity WHERE bug_id = ?", (bug_id,))
    for row in history:
        conn.execute(
            "INSERT INTO bug_activity (bug_id, attachment_id, who, changed_at, field, removed,"
            " added, comment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bug_id, row["attachment_id"], target.user_id(row["who"]), row["when"], row["field"],
             row["removed"], row["added"], row["comment_id"]))
        report.count("history changes")


def _write_tags(target, bug, report):
    """The key's personal tags on the bug, as the source showed them (the
    tags of other accounts are theirs alone: the source shows them to
    nobody else)."""
    if "tags" not in bug or not target.tag_owner:
        return
    conn = target.conn
    owner = target.user_id(target.tag_owner)
    conn.execute("DELETE FROM bug_tags WHERE bug_id = ? AND tag_id IN (SELECT id FROM"
                 " personal_tags WHERE user_id = ?)", (bug["id"], owner))
    for name in bug["tags"]:
        row = conn.execute("SELECT id FROM personal_tags WHERE user_id = ?"
                           " AND lower(name) = lower(?)", (owner, name)).fetchone()
        tag_id = row[0] if row else conn.execute(
            "INSERT INTO personal_tags (user_id, name) VALUES (?, ?) RETURNING id",
            (owner, name)).fetchone()[0]
        conn.execute("INSERT INTO bug_tags (bug_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                     (bug["id"], tag_id))
        report.count("personal tags")


def rewrite_local_links(conn, links):
    """Rewrite the See Also links already stored that name the old
    installation's bugs (`links`: forms.LocalLinks); returns how many."""
    changed = 0
    for row_id, url in conn.execute("SELECT id, url FROM bug_see_also").fetchall():
        stored = links.rewrite(url)
        if stored != url:
            conn.execute("UPDATE bug_see_also SET url = ? WHERE id = ?", (stored, row_id))
            changed += 1
    return changed


def unresolved_links(conn):
    """[(bug id, field, other bug id)] still waiting: their other bug never
    came."""
    return [tuple(row) for row in conn.execute(
        "SELECT bug_id, field, other FROM import_links ORDER BY bug_id, field, other")]
