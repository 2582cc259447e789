"""A bug mail, rendered for its recipient at send time.

Everything in it is read as the recipient (the context is the recipient's):
nothing is sent about a bug the recipient cannot see; the changes shown are
those the bug's history shows the recipient (no time tracking outside the
time-tracking group, no change of a private comment or attachment for
non-insiders, dependencies on hidden bugs left out); comments are those the
recipient may read; the headers and the new bug's fields come from the bug
object the interface would answer the recipient. An account that is
disabled, that has bug mail turned off, or that ignores the bug gets
nothing. Whether it gets the mail at all follows its preferences for each
of its roles on the bug, and the kinds of change it is shown (the
reference's rules, "not my own changes" and "not while UNCONFIRMED"
included).
"""

from datetime import datetime, timezone

from ..bugs import (
    comments as stored_comments,
    events as bug_events,
    history,
    mentions,
    view,
    visibility,
)
from ..catalogue import bug_fields
from ..store import outbox
from . import mail_settings as ms, message, reply
from .message import Drop


# Changes of these fields are these events; any other field is EVT_OTHER.
_FIELD_EVENTS = {
    "resolution": ms.EVT_OPENED_CLOSED, "keywords": ms.EVT_KEYWORD, "cc": ms.EVT_CC,
    "severity": ms.EVT_PROJ_MANAGEMENT, "priority": ms.EVT_PROJ_MANAGEMENT,
    "status": ms.EVT_PROJ_MANAGEMENT, "target_milestone": ms.EVT_PROJ_MANAGEMENT,
    "attachments.description": ms.EVT_ATTACHMENT_DATA,
    "attachments.mimetype": ms.EVT_ATTACHMENT_DATA,
    "attachments.ispatch": ms.EVT_ATTACHMENT_DATA,
    "depends_on": ms.EVT_DEPEND_BLOCK, "blocks": ms.EVT_DEPEND_BLOCK,
    "product": ms.EVT_COMPONENT, "component": ms.EVT_COMPONENT,
}
_REASONS = {
    ms.REL_ASSIGNEE: "You are assigned to the bug.",
    ms.REL_REPORTER: "You reported the bug.",
    ms.REL_QA: "You are the bug's QA contact.",
    ms.REL_CC: "You are on the bug's CC list.",
    ms.REL_GLOBAL_WATCHER: "You watch all bug changes.",
    ms.REL_MENTIONED: "You were mentioned in a comment.",
}
_WATCH_REASONS = {
    ms.REL_ASSIGNEE: "You watch the bug's assignee.",
    ms.REL_REPORTER: "You watch the bug's reporter.",
    ms.REL_QA: "You watch the bug's QA contact.",
    ms.REL_CC: "You watch someone on the bug's CC list.",
}
# The fields of a new bug's mail, in order.
_NEW_BUG_FIELDS = sorted((field for field in bug_fields.STANDARD if field.new_bugmail),
                         key=lambda field: field.new_bugmail)


def recipient(ctx, user_id):
    """The account row of a recipient, or Drop when it gets no mail at all
    (missing, disabled, or bug mail turned off)."""
    row = ctx.conn.execute("SELECT id, login, real_name, disabled_text, email_enabled"
                           " FROM users WHERE id = ?", (user_id,)).fetchone()
    if row is None:
        raise Drop("the account no longer exists")
    if row["disabled_text"]:
        raise Drop("the account is disabled")
    if not row["email_enabled"]:
        raise Drop("bug mail is turned off for the account")
    return row


def visible_bug(ctx, bug_id):
    """The bug object as the context's caller sees it, or Drop."""
    bugs = view.bug_objects(ctx, [bug_id]) if visibility.visible_bug_ids(ctx, [bug_id]) else []
    if not bugs:
        raise Drop("the recipient cannot see the bug")
    return bugs[0]


def visible_comments(ctx, comment_ids):
    """Comment objects of `comment_ids` the caller may read, oldest first,
    each with the author's real name."""
    ids = sorted(set(comment_ids))
    if not ids:
        return []
    where = f"c.id IN ({', '.join('?' for _ in ids)})"
    if not visibility.is_insider(ctx):
        where += " AND c.is_private = 0"
    rows = stored_comments.select_rows(ctx, where, ids)
    objects = stored_comments.comment_objects(ctx, rows)
    kinds = {row["id"]: row["kind"] for row in rows}
    names = dict(ctx.conn.execute(
        f"SELECT c.id, u.real_name FROM comments c JOIN users u ON u.id = c.author_id"
        f" WHERE c.id IN ({', '.join('?' for _ in ids)})", ids).fetchall())
    for obj in objects:
        obj["kind"] = kinds[obj["id"]]
        obj["author_name"] = names.get(obj["id"], "")
    # Bugzilla skips empty comments that are not of a special kind.
    return [obj for obj in objects if obj["kind"] or obj["text"].strip()]


def _mentioned_in(ctx, user_id, comments):
    """True when one of `comments` (those the recipient may read) @mentions
    account `user_id` (a mention in a private comment reaches insiders only)."""
    return any(user_id in people for people in
               mentions.mentioned(ctx.conn, [comment["id"] for comment in comments]).values())


def events_of(login, relationship, changes, comments, is_new, dep_only):
    """The preference events a change makes for a recipient in
    `relationship` (the reference's rules)."""
    found = set()
    if not is_new:
        for change in changes:
            field = change["field"]
            found.add(_FIELD_EVENTS.get(field, ms.EVT_OTHER))
            if ((field == "assigned_to" and relationship == ms.REL_ASSIGNEE)
                    or (field == "qa_contact" and relationship == ms.REL_QA)):
                found.add(ms.EVT_ADDED_REMOVED)
            if field == "cc":
                removed = [name.strip().lower() for name in change["removed"].split(",")]
                added = [name.strip().lower() for name in change["added"].split(",")]
                if (login.lower() in removed) != (login.lower() in added):
                    found.add(ms.EVT_ADDED_REMOVED)
    else:
        found.add(ms.EVT_BUG_CREATED)
        if relationship in (ms.REL_ASSIGNEE, ms.REL_QA, ms.REL_CC):
            found.add(ms.EVT_ADDED_REMOVED)
    if any(c["kind"] == stored_comments.ATTACHMENT_CREATED for c in comments):
        found.add(ms.EVT_ATTACHMENT)
    elif comments:
        found.add(ms.EVT_COMMENT)
    if dep_only:
        found.add(ms.EVT_DEPEND_BLOCK)
    return found


def wants(settings, relationship, found, by_me, unconfirmed):
    """True when preferences `settings` want mail in `relationship` for the
    events `found` (negative choices win: my own change, an UNCONFIRMED bug)."""
    if not settings.wants_any(relationship, found):
        return False
    if by_me and not settings.wants_any(relationship, [ms.EVT_CHANGED_BY_ME]):
        return False
    if unconfirmed and not settings.wants_any(relationship, [ms.EVT_UNCONFIRMED]):
        return False
    return True


def _labels(ctx):
    return dict(ctx.conn.execute("SELECT name, display_name FROM fields").fetchall())


def _internal(field):
    return bug_fields.bugzilla_name(field)


def _label(labels, change):
    label = labels.get(_internal(change["field"]), change["field"])
    if change.get("attachment_id") is not None:
        label = f"Attachment #{change['attachment_id']} " + label.removeprefix("Attachment ")
    if change["field"] == "longdescs.isprivate" and change.get("comment_count") is not None:
        label = f"Comment #{change['comment_count']} " + label.removeprefix("Comment ")
    return label


def _text(value):
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return "" if value is None else str(value)


def render(ctx, message_row, event_row):
    """The mail of bug-mail message `message_row` about event `event_row`,
    as the context's caller (the recipient) sees it. Errors: Drop."""
    data = outbox.message_data(message_row)
    event = bug_events.load(event_row["data"])
    user = recipient(ctx, message_row["user_id"])
    bug_id = event_row["bug_id"]
    if ms.ignores(ctx.conn, user["id"], bug_id):
        raise Drop("the recipient ignores the bug")
    bug = visible_bug(ctx, bug_id)
    is_new = event["new"]
    changes = history.visible_changes(ctx, event["changes"])
    for change in changes:
        if change["field"] == "longdescs.isprivate" and change.get("comment_id"):
            row = ctx.conn.execute("SELECT count FROM comments WHERE id = ?",
                                   (change["comment_id"],)).fetchone()
            change["comment_count"] = row[0] if row else None
    comments = visible_comments(ctx, event["comments"])
    blockers = [b for b in event.get("blockers", [])
                if visibility.visible_bug_ids(ctx, [b["id"]])]
    dep_only = bool(blockers) and not changes and not comments and not is_new
    if not (changes or comments or is_new or blockers):
        raise Drop("nothing the recipient may see")
    settings = ms.load(ctx.conn, user["id"])
    by_me = event_row["changer_id"] == user["id"]
    unconfirmed = bug["status"] == "UNCONFIRMED"
    direct, watching = [], []
    for relationship, bits in sorted((int(k), v) for k, v in data["roles"].items()):
        if relationship == ms.REL_MENTIONED and not _mentioned_in(ctx, user["id"], comments):
            continue
        found = events_of(user["login"], relationship, changes, comments, is_new,
                          bool(blockers))
        if wants(settings, relationship, found, by_me, unconfirmed):
            if bits & 1:
                direct.append(relationship)
            if bits & 2:
                watching.append(relationship)
    if not direct and not watching:
        raise Drop("the recipient's preferences")
    return _compose(ctx, user, bug, event_row, message_row, data, changes, comments, blockers,
                    direct, watching, is_new, dep_only)


def _compose(ctx, user, bug, event_row, message_row, data, changes, comments, blockers,
             direct, watching, is_new, dep_only):
    labels = _labels(ctx)
    changer = ctx.conn.execute("SELECT login, real_name FROM users WHERE id = ?",
                               (event_row["changer_id"],)).fetchone()
    when = datetime.fromisoformat(event_row["created_at"]).replace(tzinfo=timezone.utc)
    lines = [message.bug_url(ctx, bug["id"]), ""]
    changed_fields = []
    if is_new:
        for field in _NEW_BUG_FIELDS:
            value = bug.get(field.bug_key)
            if field.bug_key not in bug or _text(value) in ("", "0", "0.0") or (
                    field.parameter and not ctx.param_is_on(field.parameter)):
                continue
            lines += message.field_line(field.mail_label or field.label, _text(value))
            changed_fields.append(field.name)
        if changes:
            lines.append("")
    if changes:
        if not is_new:
            lines += [f"{message.identity(changer['real_name'], changer['login'])} changed:", ""]
        lines += message.table_header()
        for change in changes:
            lines += message.columns(_label(labels, change), change["removed"], change["added"])
            changed_fields.append(_internal(change["field"]))
        lines.append("")
    for blocker in blockers:
        summary = ctx.conn.execute("SELECT summary FROM bugs WHERE id = ?",
                                   (blocker["id"],)).fetchone()[0]
        state = "reopened" if _is_open(ctx, blocker["status"][1]) else "closed"
        lines += [f"Bug {bug['id']} depends on bug {blocker['id']}, which was {state}.",
                  "", f"Bug {blocker['id']} Summary: {summary}",
                  message.bug_url(ctx, blocker["id"]), ""]
        lines += message.table_header()
        lines += message.columns("Status", *blocker["status"])
        lines += message.columns("Resolution", *blocker["resolution"])
        lines.append("")
        changed_fields += ["bug_status", "resolution"]
    for comment in comments:
        if comment["count"]:
            lines.append(f"--- Comment #{comment['count']} from "
                         f"{message.identity(comment['author_name'], comment['creator'])} ---")
        lines += [message.wrap_comment(comment["text"]), ""]
    if any(c["kind"] == stored_comments.ATTACHMENT_CREATED for c in comments):
        changed_fields.append("attachments.created")
    lines += ["-- ", "You are receiving this mail because:"]
    lines += [_REASONS[rel] for rel in direct if rel in _REASONS]
    lines += [_WATCH_REASONS[rel] for rel in watching if rel in _WATCH_REASONS]
    kind = "new" if is_new else "dep_changed" if dep_only else "changed"
    watched = [row[0] for row in ctx.conn.execute(
        f"SELECT login FROM users WHERE id IN ({', '.join('?' for _ in data['watching'])})"
        " ORDER BY login", data["watching"])] if data["watching"] else []
    reason = " ".join(ms.HEADER_NAMES[rel] for rel in direct) or "None"
    watch_reason = " ".join([ms.HEADER_NAMES[rel] for rel in watching] + watched) if watching \
        else "None"
    headers = [("X-Bugzilla-Reason", reason), ("X-Bugzilla-Type", kind),
               ("X-Bugzilla-Watch-Reason", watch_reason)]
    headers += common_headers(ctx, bug, changer["login"])
    headers.append(("X-Bugzilla-Changed-Fields", " ".join(dict.fromkeys(changed_fields))))
    headers += message.thread_headers(ctx, bug["id"], user["id"], is_new, message_row["id"])
    if ctx.param("mailin_address"):
        headers.append(("Reply-To", reply.reply_address(ctx.conn, ctx.param("mailin_address"),
                                                        bug["id"], user["id"])))
    subject = f"[Bug {bug['id']}] {'New: ' if is_new else ''}{bug['summary']}"
    return message.new_mail(ctx, message.address_of(ctx, user["login"]), subject, when, headers,
                            "\n".join(lines).rstrip() + "\n")


def _is_open(ctx, status):
    row = ctx.conn.execute("SELECT v.is_open FROM field_values v JOIN fields f"
                           " ON f.id = v.field_id WHERE f.name = 'bug_status' AND v.value = ?",
                           (status,)).fetchone()
    return bool(row and row[0])


def common_headers(ctx, bug, changer_login):
    """The X-Bugzilla headers every mail about a bug has (from the bug object
    as the recipient sees it), for people's mail filters."""
    headers = []
    if ctx.param_is_on("useclassification"):
        headers.append(("X-Bugzilla-Classification", bug["classification"]))
    headers += [("X-Bugzilla-Product", bug["product"]),
                ("X-Bugzilla-Component", bug["component"]),
                ("X-Bugzilla-Version", bug["version"]),
                ("X-Bugzilla-Keywords", ", ".join(bug["keywords"])),
                ("X-Bugzilla-Severity", bug["severity"]),
                ("X-Bugzilla-ID", bug["id"]),
                ("X-Bugzilla-Who", changer_login),
                ("X-Bugzilla-Status", bug["status"]),
                ("X-Bugzilla-Resolution", bug["resolution"]),
                ("X-Bugzilla-Priority", bug["priority"]),
                ("X-Bugzilla-Assigned-To", bug["assigned_to"])]
    if ctx.param_is_on("usetargetmilestone"):
        headers.append(("X-Bugzilla-Target-Milestone", bug["target_milestone"]))
    headers.append(("X-Bugzilla-Flags", " ".join(f"{flag['name']}{flag['status']}"
                                                 for flag in bug["flags"])))
    return headers
