"""A webhook call's body, in bugzilla.mozilla.org's format, as the webhook's
owner may see it (the context is the owner's).

{"webhook_id", "webhook_name",
 "event": {"action": "create"|"modify"|"mention", "target": "bug"|"comment"|"attachment",
           "routing_key": "bug.create", "bug.modify:status,resolution", ...,
           "changes": [{"field", "removed", "added"}] (modify only),
           "mentions": [logins the owner may see] (mention only),
           "time", "user": {"id", "login", "real_name"}},
 "bug": {the bug's fields, with "comment" or "attachment" for those targets}}

Its rules: nothing is sent about a bug the owner cannot see (nor in a
product the owner cannot see), except the note that a bug became
restricted; a call about a private comment or attachment is sent only to
an insider. A restricted bug ("private": not visible to everyone) is sent
as its id alone, and a private comment or attachment (or one on a private
bug) as ids alone, without changes. Changes are those the bug's history
shows the owner.
"""

from .. import dates
from ..accounts.visibility import can_see_user
from ..bugs import attachments as stored_attachments, history, mentions, view, visibility
from ..catalogue import bug_fields, group_control
from ..store import outbox
from .bugmail import visible_comments
from .message import Drop


# History names bugzilla.mozilla.org uses differently in its changes.
_RENAMES = {field.history: field.webhook_change for field in bug_fields.STANDARD
            if field.webhook_change}


def _user(conn, user_id):
    row = conn.execute("SELECT id, login, real_name FROM users WHERE id = ?",
                       (user_id,)).fetchone()
    return {"id": row["id"], "login": row["login"], "real_name": row["real_name"]}


def _select(value):
    """Empty for the '---' of a select field without a value."""
    return "" if value in ("---", "--") else value


def _detail(obj, key):
    detail = obj.get(f"{key}_detail")
    if not detail:
        return None
    return {"id": detail["id"], "login": detail["email"], "real_name": detail["real_name"]}


def bug_hash(ctx, bug, is_private):
    """The bug's fields in the webhook format, from the bug object as the
    owner sees it."""
    result = {
        "id": bug["id"], "alias": ", ".join(bug["alias"]), "assigned_to": bug["assigned_to"],
        "assigned_to_detail": _detail(bug, "assigned_to"),
        "classification": bug["classification"], "component": bug["component"],
        "creation_time": bug["creation_time"], "creator": bug["creator"],
        "creator_detail": _detail(bug, "creator"),
        "flags": [_flag(ctx, flag) for flag in bug["flags"]], "is_private": is_private,
        "keywords": bug["keywords"], "last_change_time": bug["last_change_time"],
        "operating_system": bug["op_sys"], "platform": bug["platform"],
        "priority": _select(bug["priority"]), "product": bug["product"],
        "resolution": bug["resolution"], "see_also": bug["see_also"],
        "severity": bug["severity"], "status": bug["status"], "summary": bug["summary"],
        "target_milestone": bug["target_milestone"], "url": bug["url"],
        "version": bug["version"], "whiteboard": bug["whiteboard"],
        "qa_contact": bug["qa_contact"] or "",
    }
    if bug.get("qa_contact_detail"):
        result["qa_contact_detail"] = _detail(bug, "qa_contact")
    for name, value in bug.items():
        if name.startswith("cf_"):
            result[name] = _select(value) if isinstance(value, str) else value
    return result


def _flag(ctx, flag):
    result = {"id": flag["id"], "name": flag["name"], "value": flag["status"]}
    if flag.get("requestee"):
        row = ctx.conn.execute("SELECT id, login, real_name FROM users WHERE login = ?",
                               (flag["requestee"],)).fetchone()
        if row is not None:
            result["requestee"] = {"id": row["id"], "login": row["login"],
                                   "real_name": row["real_name"]}
    return result


def _split_flags(changes):
    """`flagtypes.name` changes as one `flag.<name>` change per flag type,
    each value a status, with `(requestee)` for requests."""
    result, flags = [], {}
    for change in changes:
        if change["field"] != "flagtypes.name":
            result.append(change)
            continue
        for side in ("removed", "added"):
            for item in [part for part in change[side].split(", ") if part]:
                requestee = ""
                if item.endswith(")") and "(" in item:
                    item, requestee = item[:-1].split("(", 1)
                name, status = item[:-1], item[-1]
                entry = flags.setdefault(name, {"field": f"flag.{name}", "removed": "",
                                                "added": ""})
                entry[side] = status + (f" ({requestee})" if requestee else "")
    return result + [entry for entry in flags.values() if entry["removed"] != entry["added"]]


def _mentioned_logins(ctx, comment_id):
    """The logins of the accounts comment `comment_id` @mentions that the
    webhook's owner may see."""
    people = mentions.mentioned(ctx.conn, [comment_id]).get(comment_id, set())
    return sorted(_user(ctx.conn, user_id)["login"] for user_id in people
                  if can_see_user(ctx, user_id))


def changes_for(ctx, changes, target):
    """The changes in the webhook format, as the owner may see them."""
    shown = []
    for change in _split_flags(history.visible_changes(ctx, changes)):
        field = _RENAMES.get(change["field"], change["field"])
        if target == "attachment":
            field = field.removeprefix("attachments.").replace("isprivate", "is_private")
        removed, added = change["removed"], change["added"]
        if bug_fields.bugzilla_name(field) in ("priority", "target_milestone"):
            removed, added = _select(removed), _select(added)
        if removed == "" and added == "":
            continue
        shown.append({"field": field, "removed": removed, "added": added})
    return shown


def build(ctx, webhook, message_row, event_row):
    """The body (a dict) of the call `message_row` of `webhook` (a row)
    about event `event_row`, as the webhook's owner (the context's caller)
    may see it. Errors: Drop."""
    conn = ctx.conn
    item = outbox.message_data(message_row)
    bug_id = event_row["bug_id"]
    target = item["target"]
    privacy_note = bool(item.get("privacy"))
    is_private = conn.execute("SELECT 1 FROM bug_groups WHERE bug_id = ? LIMIT 1",
                              (bug_id,)).fetchone() is not None
    product_id = conn.execute("SELECT product_id FROM bugs WHERE id = ?", (bug_id,)).fetchone()
    visible = bool(visibility.visible_bug_ids(ctx, [bug_id])) and product_id is not None and \
        group_control.can_see_product(ctx, product_id[0])
    if not visible and not privacy_note:
        raise Drop("the webhook's owner cannot see the bug")
    event = {"action": item["action"], "target": target,
             "routing_key": f"{target}.{item['action']}",
             "time": dates.from_db(event_row["created_at"]),
             "user": _user(conn, event_row["changer_id"])}
    if item["action"] == "modify":
        event["changes"] = (item["changes"] if privacy_note
                            else changes_for(ctx, item["changes"], target))
        if not event["changes"]:
            raise Drop("no change the webhook's owner may see")
        event["routing_key"] += ":" + ",".join(c["field"] for c in event["changes"])
    detail, detail_private = None, False
    if target == "comment":
        comment = conn.execute("SELECT id, count, body, created_at, is_private FROM comments"
                               " WHERE id = ?", (item["comment_id"],)).fetchone()
        if comment is None:
            raise Drop("the comment no longer exists")
        detail_private = bool(comment["is_private"])
        if detail_private and not visibility.is_insider(ctx):
            raise Drop("the comment is private and the webhook's owner is no insider")
        if not visible_comments(ctx, [comment["id"]]) and not detail_private:
            raise Drop("the webhook's owner cannot read the comment")
        detail = {"id": comment["id"], "body": comment["body"],
                  "creation_time": dates.from_db(comment["created_at"]),
                  "is_private": detail_private, "number": comment["count"]}
    elif target == "attachment":
        found = stored_attachments.load(conn, [item["attachment_id"]])
        attachment = found.get(item["attachment_id"])
        if attachment is None:
            raise Drop("the attachment no longer exists")
        detail_private = attachment["is_private"]
        if detail_private and not visibility.is_insider(ctx):
            raise Drop("the attachment is private and the webhook's owner is no insider")
        [obj] = stored_attachments.attachment_objects(ctx, [attachment])
        detail = {"id": obj["id"], "content_type": obj["content_type"],
                  "creation_time": obj["creation_time"], "description": obj["summary"],
                  "file_name": obj["file_name"],
                  "flags": [{"id": f["id"], "name": f["name"], "value": f["status"]}
                            for f in obj.get("flags", [])],
                  "is_obsolete": obj["is_obsolete"], "is_patch": obj["is_patch"],
                  "is_private": detail_private, "last_change_time": obj["last_change_time"]}
    if is_private or detail_private or not visible:
        bug = {"id": bug_id, "is_private": is_private}
        if detail is not None:
            bug[target] = {"id": detail["id"], "is_private": True}
        if item["action"] == "modify" and not privacy_note:
            del event["changes"]
            event["routing_key"] = f"{target}.modify"
    else:
        bug = bug_hash(ctx, view.bug_objects(ctx, [bug_id])[0], is_private)
        if detail is not None:
            bug[target] = detail
        if item["action"] == "mention":
            event["mentions"] = _mentioned_logins(ctx, item["comment_id"])
    return {"webhook_id": webhook["id"], "webhook_name": webhook["name"], "event": event,
            "bug": bug}
