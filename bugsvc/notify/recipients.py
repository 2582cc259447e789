"""Who may be told about an event: one message per recipient, queued when
the event is expanded (a moment after the change, by the delivery worker).

Bug mail goes to the people in a role on the bug, as the reference sends
it: the assignee, the reporter, the QA contact (while useqacontact is on),
the CC list, and those who were removed from a role by the change (the old
assignee, the old QA contact, people taken off the CC list); the users
watching any of them, in their role; and everyone named in the parameter
globalwatchers. Flag mail goes to the person asked (or whose request was
answered) and to the flag type's CC list. Webhook calls go to each enabled
webhook whose events, product and component match.

Whether a recipient gets anything, and what, is decided later, when the
message is rendered as the recipient (bugmail.py, flagmail.py,
webhook_payload.py): visibility, private parts and preferences are checked
then, against the state of that moment.
"""

import re
import secrets

from ..bugs import events as bug_events, mentions, record
from ..store import outbox
from . import mail_settings as ms


DIRECT, WATCHING = 1, 2
# Webhook events (bugzilla.mozilla.org's names, and bugsvc's "mention": a
# comment @mentions people) and what they cover.
WEBHOOK_EVENTS = ("create", "change", "comment", "attachment", "attachment_change", "mention")
_SPLIT = re.compile(r"[\s,;]+")


def expand(ctx, row):
    """Queue the messages of event `row` (an outbox_events row) in the
    context's write transaction. Returns how many were queued."""
    mailing = ctx.param("mail_delivery_method") != "None"
    calling = ctx.param_is_on("webhooks_enabled")
    if not (mailing or calling):
        return 0                # nobody is told anything: the bug need not be read
    data = bug_events.load(row["data"])
    conn = ctx.conn
    if conn.execute("SELECT 1 FROM bugs WHERE id = ?", (row["bug_id"],)).fetchone() is None:
        return 0
    bug = record.load(conn, row["bug_id"])
    people = data.get("people")
    if people is not None:
        # The roles as the change left them.
        bug.assigned_to, bug.qa_contact = people["assigned_to"], people["qa_contact"]
        bug.reporter, bug.cc = people["reporter"], people["cc"]
    queued = []
    if mailing:
        queued += _bug_mail(ctx, bug, data)
        queued += _flag_mail(ctx, data)
    if calling:
        queued += _webhook_calls(ctx, bug, data)
    for spec in queued:
        outbox.add_message(conn, now=ctx.now, event_id=row["id"], bug_id=row["bug_id"], **spec)
    return len(queued)


# Bug mail -----------------------------------------------------------------------------

def _user_ids(conn, logins):
    """Ids of the accounts with these logins (unknown ones left out)."""
    found = []
    for login in logins:
        user = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                            (login,)).fetchone()
        if user is not None and user[0] not in found:
            found.append(user[0])
    return found


def roles(ctx, bug, changes, comment_ids=()):
    """{user id: {relationship: DIRECT and/or WATCHING bits}} and {watcher:
    [watched ids]} of the people bug mail about `bug` (a BugRecord, as it is
    with the roles of the event), `changes` (its history rows) and the
    comments of `comment_ids` (whose @mentions are told) may go to."""
    conn = ctx.conn
    found = {}

    def add(user_id, relationship, bits=DIRECT):
        if user_id is not None:
            found.setdefault(user_id, {})
            found[user_id][relationship] = found[user_id].get(relationship, 0) | bits
    qa_used = ctx.param_is_on("useqacontact")
    for user_id in bug.cc:
        add(user_id, ms.REL_CC)
    add(bug.reporter, ms.REL_REPORTER)
    if qa_used:
        add(bug.qa_contact, ms.REL_QA)
    add(bug.assigned_to, ms.REL_ASSIGNEE)
    # Those the change took out of a role hear about it too.
    for change in changes:
        if not change["removed"] or change.get("attachment_id") is not None:
            continue
        if change["field"] == "cc":
            for user_id in _user_ids(conn, _SPLIT.split(change["removed"].strip())):
                add(user_id, ms.REL_CC)
        elif change["field"] == "assigned_to":
            for user_id in _user_ids(conn, [change["removed"]]):
                add(user_id, ms.REL_ASSIGNEE)
        elif change["field"] == "qa_contact" and qa_used:
            for user_id in _user_ids(conn, [change["removed"]]):
                add(user_id, ms.REL_QA)
    watching = {}
    for watcher, watched in ms.watchers_of(conn, found):
        for relationship, bits in list(found[watched].items()):
            if bits & DIRECT:
                add(watcher, relationship, WATCHING)
        watching.setdefault(watcher, []).append(watched)
    # The people the comments @mention (a mention is no role others watch).
    for people in mentions.mentioned(conn, comment_ids).values():
        for user_id in people:
            add(user_id, ms.REL_MENTIONED)
    for user_id in _user_ids(conn, [name for name in _SPLIT.split(ctx.param("globalwatchers"))
                                    if name]):
        add(user_id, ms.REL_GLOBAL_WATCHER)
    return found, watching


def _bug_mail(ctx, bug, data):
    if not (data["new"] or data["changes"] or data["comments"] or data.get("blockers")):
        return []
    found, watching = roles(ctx, bug, data["changes"], data["comments"])
    return [{"channel": outbox.MAIL, "kind": "bug", "user_id": user_id,
             "data": {"roles": {str(rel): bits for rel, bits in sorted(rels.items())},
                      "watching": watching.get(user_id, [])}}
            for user_id, rels in sorted(found.items())]


# Flag mail ----------------------------------------------------------------------------

def flag_addressee(flag):
    """(user id, reason, preference event) of the person a flag change is
    addressed to, or None: the person newly asked, or the person whose
    request was granted, denied or cancelled."""
    old, new = flag["old"], flag["new"]
    if new is not None and new["requestee_id"] and (
            old is None or old["requestee_id"] != new["requestee_id"]):
        return new["requestee_id"], "requestee", ms.EVT_FLAG_REQUESTED
    if old is not None and old["status"] == "?" and (new is None or new["status"] != "?"):
        return old["setter_id"], "requester", ms.EVT_REQUESTED_FLAG
    return None


def _flag_mail(ctx, data):
    conn = ctx.conn
    specs = []
    for index, flag in enumerate(data["flags"]):
        sent_to = set()
        addressee = flag_addressee(flag)
        if addressee is not None:
            user_id, reason, _ = addressee
            sent_to.add(user_id)
            specs.append({"channel": outbox.MAIL, "kind": "flag", "user_id": user_id,
                          "data": {"flag": index, "reason": reason}})
        row = conn.execute("SELECT cc_list FROM flag_types WHERE id = ?",
                           (flag["type_id"],)).fetchone()
        for address in _SPLIT.split((row[0] if row else "").strip()):
            if not address:
                continue
            account = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                   (address,)).fetchone()
            if account is not None and account[0] in sent_to:
                continue
            if account is not None:
                sent_to.add(account[0])
            specs.append({"channel": outbox.MAIL, "kind": "flag",
                          "user_id": account[0] if account else None,
                          "address": None if account else address,
                          "data": {"flag": index, "reason": "cc_list"}})
    return specs


# Webhooks ---------------------------------------------------------------------------

def webhook_items(conn, data):
    """The webhook calls an event makes, in the order they are sent:
    [(event name, {"target", "action", ...})]. The bug's creation or change
    first (a change of its restriction on its own, before the others), then
    each comment with text (not a new bug's description), each comment that
    @mentions people, each attachment created, and the changes of each
    other attachment."""
    items = []
    bug_changes = [c for c in data["changes"] if c.get("attachment_id") is None]
    if data.get("public"):
        was, now = data["public"]
        items.append(("change", {"target": "bug", "action": "modify", "privacy": True,
                                 "changes": [{"field": "is_private", "removed": str(int(not was)),
                                              "added": str(int(not now))}]}))
    if data["new"]:
        items.append(("create", {"target": "bug", "action": "create"}))
    elif bug_changes:
        items.append(("change", {"target": "bug", "action": "modify", "changes": bug_changes}))
    for comment_id in data["comments"]:
        row = conn.execute("SELECT count, body FROM comments WHERE id = ?",
                           (comment_id,)).fetchone()
        if row is None or not row["body"].strip() or (data["new"] and row["count"] == 0):
            continue
        items.append(("comment", {"target": "comment", "action": "create",
                                  "comment_id": comment_id}))
    for comment_id in mentions.mentioned(conn, data["comments"]):
        items.append(("mention", {"target": "comment", "action": "mention",
                                  "comment_id": comment_id}))
    for attachment_id in data["attachments"]:
        items.append(("attachment", {"target": "attachment", "action": "create",
                                     "attachment_id": attachment_id}))
    changed = {}
    for change in data["changes"]:
        attachment_id = change.get("attachment_id")
        if attachment_id is not None and attachment_id not in data["attachments"]:
            changed.setdefault(attachment_id, []).append(change)
    for attachment_id, changes in changed.items():
        items.append(("attachment_change", {"target": "attachment", "action": "modify",
                                            "attachment_id": attachment_id,
                                            "changes": changes}))
    return items


def _moved_from(data):
    """(product name, component name) a bug was moved away from by this
    change (each None when it did not change)."""
    product = component = None
    for change in data["changes"]:
        if change.get("attachment_id") is None and change["field"] == "product":
            product = change["removed"]
        if change.get("attachment_id") is None and change["field"] == "component":
            component = change["removed"]
    return product, component


def _matches(conn, webhook, bug, data, event_name):
    if event_name not in webhook["events"].split(","):
        return False
    product_ok = webhook["product_id"] is None or webhook["product_id"] == bug.product_id
    component_ok = webhook["component_id"] is None or webhook["component_id"] == bug.component_id
    if product_ok and component_ok:
        return True
    if event_name != "change":
        return False
    # A bug moved out of the webhook's product or component: its owner hears of the move.
    old_product, old_component = _moved_from(data)
    names = conn.execute("SELECT p.name AS product, c.name AS component FROM products p"
                         " LEFT JOIN components c ON c.id = ? WHERE p.id = ?",
                         (webhook["component_id"], webhook["product_id"])).fetchone()
    if names is None or (old_product is None and old_component is None):
        return False
    current = conn.execute("SELECT name FROM products WHERE id = ?",
                           (bug.product_id,)).fetchone()[0]
    if names["product"] != (old_product or current):
        return False
    return webhook["component_id"] is None or names["component"] == old_component


def _webhook_calls(ctx, bug, data):
    conn = ctx.conn
    webhooks = conn.execute("SELECT id, events, product_id, component_id FROM webhooks"
                            " WHERE enabled = 1 ORDER BY id").fetchall()
    if not webhooks:
        return []
    specs = []
    for event_name, item in webhook_items(conn, data):
        for webhook in webhooks:
            if _matches(conn, webhook, bug, data, event_name):
                # The call's webhook-id, the same on every attempt.
                key = "msg_" + secrets.token_urlsafe(18)
                specs.append({"channel": outbox.WEBHOOK, "kind": event_name,
                              "webhook_id": webhook["id"], "data": dict(item, key=key)})
    # Calls of one webhook keep the event's order; webhooks follow each other.
    specs.sort(key=lambda spec: spec["webhook_id"])
    return specs
