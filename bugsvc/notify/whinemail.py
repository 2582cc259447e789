"""The mail of a scheduled search (bugsvc/bugs/whine.py), rendered as its
recipient when it is sent: the event's body, then each search's bugs
that the recipient may see now (a bug hidden from them since the run is
left out), with links to them and to editwhines.cgi."""

from ..bugs import whine
from ..store import outbox
from . import message
from .message import Drop


def render(ctx, message_row):
    """The mail of a whine message, as ctx's caller (its recipient).
    Errors: Drop for an account gone, disabled or not taking mail."""
    user = ctx.conn.execute("SELECT login, disabled_text, email_enabled FROM users WHERE id = ?",
                            (message_row["user_id"],)).fetchone()
    if user is None:
        raise Drop("the account no longer exists")
    if user["disabled_text"]:
        raise Drop("the account is disabled")
    if not user["email_enabled"]:
        raise Drop("the account takes no mail")
    data = outbox.message_data(message_row)
    urlbase = ctx.param("urlbase")
    subject = data["subject"] or "Scheduled search"
    lines = [data["body"], ""] if data["body"] else []
    for section in data["sections"]:
        bugs = whine.listed_bugs(ctx, section["bug_ids"])
        if data.get("bug_id") is not None:
            if not bugs:
                raise Drop("the bug is no longer visible to the recipient")
            subject = f"{subject} [Bug {bugs[0]['id']}] {bugs[0]['summary']}"
        count = f"{len(bugs)} bug" + ("" if len(bugs) == 1 else "s")
        lines += [f"{section['title']} ({count})", "=" * min(len(section["title"]) + 12, 76)]
        if section.get("note"):
            lines.append(section["note"])
        for bug in bugs:
            state = " ".join(part for part in (bug["status"], bug["resolution"]) if part)
            lines.append(f"Bug {bug['id']} [{state}, {bug['priority']}, {bug['severity']}] "
                         f"{bug['summary']}")
            lines.append(f"  {bug['product']} / {bug['component']}, assigned to "
                         f"{bug['assignee']}")
            lines.append(f"  {message.bug_url(ctx, bug['id'])}")
        if section.get("more"):
            lines.append(f"... and {section['more']} more; the bug list shows them all.")
        lines.append("")
    lines += ["-- ", "This mail is a search scheduled on "
              f"{urlbase or 'the tracker'}; its schedules are kept at",
              f"{urlbase}editwhines.cgi"]
    headers = [("X-Bugzilla-Type", "whine"),
               ("Message-ID", message.unique_id(ctx, f"whine-{message_row['id']}"))]
    return message.new_mail(ctx, message.address_of(ctx, user["login"]), subject, ctx.now,
                            headers, "\n".join(lines) + "\n")
