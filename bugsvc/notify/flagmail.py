"""Flag mail: a request made of someone, a request answered (granted, denied,
cancelled), and every change of a flag type's flags to the addresses on its
CC list, rendered for the recipient at send time.

An address of the CC list without an account reads as a logged-out caller:
it gets nothing about a bug restricted to groups. A flag of a private
attachment goes only to insiders. The person asked and the person whose
request was answered get it only while their preferences want it (the
reference's "someone asks me to set a flag", "someone sets a flag I asked
for").
"""

from datetime import datetime, timezone

from ..bugs import events as bug_events, visibility
from ..store import outbox
from . import bugmail, mail_settings as ms, message
from .message import Drop
from .recipients import flag_addressee


_DONE = {"+": "granted", "-": "denied", "X": "canceled"}


def _identity(conn, user_id):
    row = conn.execute("SELECT login, real_name FROM users WHERE id = ?",
                       (user_id,)).fetchone()
    return message.identity(row["real_name"], row["login"]) if row else ""


def render(ctx, message_row, event_row):
    """The mail of flag message `message_row` about event `event_row`, as the
    context's caller (the recipient, or a logged-out reader for an address
    without account) sees it. Errors: Drop."""
    conn = ctx.conn
    data = outbox.message_data(message_row)
    event = bug_events.load(event_row["data"])
    flag = event["flags"][data["flag"]]
    if message_row["user_id"] is not None:
        user = bugmail.recipient(ctx, message_row["user_id"])
        to, user_id = message.address_of(ctx, user["login"]), user["id"]
        addressee = flag_addressee(flag)
        if data["reason"] != "cc_list" and addressee is not None:
            if not ms.load(conn, user_id).wants(ms.REL_ANY, addressee[2]):
                raise Drop("the recipient's preferences")
    else:
        to, user_id = message_row["address"], None
    bug = bugmail.visible_bug(ctx, event_row["bug_id"])
    attachment = None
    if flag["attachment_id"] is not None:
        attachment = conn.execute("SELECT id, summary, is_private FROM attachments WHERE id = ?",
                                  (flag["attachment_id"],)).fetchone()
        if attachment is None:
            raise Drop("the attachment no longer exists")
        if attachment["is_private"] and not visibility.is_insider(ctx):
            raise Drop("the recipient may not see the private attachment")
    type_name = conn.execute("SELECT name FROM flag_types WHERE id = ?",
                             (flag["type_id"],)).fetchone()[0]
    old, new = flag["old"], flag["new"]
    changer = _identity(conn, event_row["changer_id"])
    if new is not None and new["status"] == "?":
        status = "requested"
        asked = _identity(conn, new["requestee_id"]) if new["requestee_id"] else ""
        action = (f"{changer} has asked {asked} for {type_name}:" if asked
                  else f"{changer} has requested {type_name}:")
    else:
        status = _DONE[new["status"] if new is not None else "X"]
        whose = (f" {_identity(conn, old['setter_id'])}'s request for"
                 if old is not None and old["status"] == "?" else "")
        action = f"{changer} has {status}{whose} {type_name}:"
    subject = f"{type_name} {status}: [Bug {bug['id']}] {bug['summary']}"
    lines = [action, "", f"Bug {bug['id']}: {bug['summary']}", message.bug_url(ctx, bug["id"])]
    if attachment is not None:
        subject += f" : [Attachment {attachment['id']}] {attachment['summary']}"
        lines += ["", f"Attachment {attachment['id']}: {attachment['summary']}",
                  f"{ctx.param('urlbase')}attachment.cgi?id={attachment['id']}&action=edit"]
    for comment in bugmail.visible_comments(ctx, event["comments"]):
        header = (f"--- Comment #{comment['count']} from "
                  f"{message.identity(comment['author_name'], comment['creator'])} ---"
                  if comment["count"] else "--- Description ---")
        lines += ["", header, message.wrap_comment(comment["text"])]
    changer_login = conn.execute("SELECT login FROM users WHERE id = ?",
                                 (event_row["changer_id"],)).fetchone()[0]
    headers = [("X-Bugzilla-Type", "request")]
    headers += bugmail.common_headers(ctx, bug, changer_login)
    headers += message.thread_headers(ctx, bug["id"], user_id, False, message_row["id"])
    when = datetime.fromisoformat(event_row["created_at"]).replace(tzinfo=timezone.utc)
    return message.new_mail(ctx, to, subject, when, headers, "\n".join(lines) + "\n")
