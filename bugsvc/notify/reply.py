"""Replying to bug mail (a bugsvc extension): the Reply-To address of a bug
mail, which carries a token signed for its bug and recipient, and reading a
reply: whether it is an automatic message (never answered: no mail loops),
which token it was sent to, its new text (quoted text and signature cut),
its `@field value` lines, and its attached files. The command `bugsvc
mail-in` acts on what is read here (bugsvc/cli/mail_in.py)."""

import email
import email.policy
import email.utils
import hashlib
import hmac
import re
from dataclasses import dataclass, field

from .. import dates
from ..store import server_secrets


# How much of a reply is read: its text, and its attached files.
MAX_TEXT_CHARS = 65_535
MAX_FILES = 10
_TOKEN = re.compile(r"^b(\d{1,9})u(\d{1,9})s([0-9a-f]{20})$")
_FIELD_LINE = re.compile(r"^@(\w+)\s*(?:[:=]\s*)?(.*)$")
_WROTE = re.compile(r"^(On .{0,200} wrote:|-{2,} ?Original Message ?-{2,}|_{10,})\s*$",
                    re.IGNORECASE)


def _signature(conn, bug_id, user_id):
    key = server_secrets.secret(conn, server_secrets.MAIL_REPLY).encode()
    return hmac.new(key, f"reply:{bug_id}:{user_id}".encode(), hashlib.sha256).hexdigest()[:20]


def reply_address(conn, mailin_address, bug_id, user_id):
    """`mailin_address` with the token of bug `bug_id` and account
    `user_id` after a '+': user+b12u3s<signature>@domain."""
    local, _, domain = mailin_address.partition("@")
    return f"{local}+b{bug_id}u{user_id}s{_signature(conn, bug_id, user_id)}@{domain}"


def token_of(conn, address, mailin_address):
    """(bug id, account id) of a reply address carrying a valid token for
    `mailin_address`; None for any other address or a token that does not
    verify."""
    local, _, domain = (address or "").partition("@")
    base_local, _, base_domain = mailin_address.partition("@")
    base, plus, token = local.partition("+")
    if not plus or base.lower() != base_local.lower() or domain.lower() != base_domain.lower():
        return None
    match = _TOKEN.match(token.lower())
    if match is None:
        return None
    bug_id, user_id = int(match.group(1)), int(match.group(2))
    if not hmac.compare_digest(match.group(3), _signature(conn, bug_id, user_id)):
        return None
    return bug_id, user_id


@dataclass
class Reply:
    message_id: str
    sender: str
    recipients: list
    automatic: bool
    subject: str = ""
    text: str = ""
    fields: dict = field(default_factory=dict)
    files: list = field(default_factory=list)   # [(file name, content type, bytes)]


def read(data):
    """The Reply of an RFC 5322 message (bytes)."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    recipients = []
    for name in ("To", "Cc", "Delivered-To", "X-Original-To"):
        recipients += [address for _, address in
                       email.utils.getaddresses([str(value) for value in
                                                 message.get_all(name, [])])]
    sender = email.utils.parseaddr(str(message.get("From", "")))[1]
    reply = Reply(message_id=str(message.get("Message-ID", "")).strip(), sender=sender,
                  recipients=recipients, automatic=is_automatic(message, sender),
                  subject=" ".join(str(message.get("Subject", "")).split()))
    if reply.automatic:
        return reply
    body = message.get_body(preferencelist=("plain",))
    text = body.get_content() if body is not None else ""
    reply.fields, reply.text = field_lines(new_text(text[:MAX_TEXT_CHARS]))
    for part in message.iter_attachments():
        if len(reply.files) >= MAX_FILES:
            break
        content = part.get_payload(decode=True) or b""
        reply.files.append((part.get_filename() or "attachment", part.get_content_type(),
                            content))
    return reply


def is_automatic(message, sender):
    """True for a message no person wrote: an auto-reply, a bounce, a list's
    or a bulk mail (RFC 3834's Auto-Submitted, Precedence, the null or
    mailer-daemon sender, delivery reports). Such mail is never answered."""
    auto = str(message.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(message.get("Precedence", "")).strip().lower()
    local = sender.partition("@")[0].lower()
    return (auto != "no" or precedence in ("bulk", "junk", "list", "auto_reply")
            or not sender or local in ("mailer-daemon", "postmaster")
            or message.get("X-Autoreply") is not None or message.get("X-Autorespond") is not None
            or message.get_content_type() == "multipart/report")


def new_text(text):
    """The reply's own text: lines quoted with '>' and everything from an
    attribution line ("On ... wrote:") or a signature separator ("-- ")
    on are cut, and blank lines at both ends."""
    kept = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.rstrip() == "--" or _WROTE.match(line.strip()):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    return "\n".join(kept).strip("\n")


def field_lines(text):
    """({field: value}, the rest) of a text whose first lines may be
    `@field value` (as Bugzilla's email_in.pl reads them)."""
    lines = text.split("\n")
    fields = {}
    while lines and (lines[0].startswith("@") or (fields and not lines[0].strip())):
        match = _FIELD_LINE.match(lines.pop(0))
        if match:
            fields[match.group(1).lower()] = match.group(2).strip()
    return fields, "\n".join(lines).strip("\n")


def taken(conn, message_id):
    """True when a message with this Message-ID was taken before."""
    return bool(message_id) and conn.execute(
        "SELECT 1 FROM mail_in_messages WHERE message_id = ?", (message_id,)).fetchone() is not None


def take(ctx, message_id):
    """Record a message as taken (in the transaction of what it did)."""
    if message_id:
        ctx.conn.execute("INSERT INTO mail_in_messages (message_id, received_at) VALUES (?, ?)",
                         (message_id[:998], dates.to_db(ctx.now)))


def account_of_sender(conn, sender, emailsuffix=""):
    """The id of the enabled account whose address (login + emailsuffix) is
    `sender`, or None."""
    login = sender
    if emailsuffix and sender.lower().endswith(emailsuffix.lower()):
        login = sender[:-len(emailsuffix)]
    row = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?) AND disabled_text = ''",
                       (login,)).fetchone()
    return row[0] if row is not None else None
