"""What every mail shares: its envelope and headers (From the parameter
mailfrom, To the account's address with emailsuffix, Date, the threading
headers that make each bug one thread in a mail reader), the text layout of
changes, and the reasons a message is not sent."""

import email.charset
import email.utils
import re
import textwrap
from email.header import Header
from email.mime.text import MIMEText


_WIDTH = 76


class Drop(Exception):
    """The message is not sent, and why (it is kept as dropped, with the reason)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def address_of(ctx, login):
    """The mail address of an account's login (login + emailsuffix)."""
    return login + ctx.param("emailsuffix")


def envelope_sender(mailfrom):
    """The address of a mailfrom value (which may carry a name)."""
    return email.utils.parseaddr(mailfrom)[1] or mailfrom


def identity(real_name, login):
    """'Real Name <login>', or the login alone."""
    return f"{real_name} <{login}>" if real_name else login


def _site(ctx):
    """The part after '@' of message ids: the installation's address, as the
    reference makes it (its scheme as a first label, its port moved before
    the '@'), so threads started by a tracker at the same address continue."""
    base = ctx.param("urlbase")
    if not base:
        return "", "@localhost"
    site = "@" + base.replace("://", ".", 1)
    match = re.match(r"^([^:/]+):(\d+)", site)
    if match:
        return f"-{match.group(2)}", match.group(1) + site[match.end():]
    return "", site


def thread_headers(ctx, bug_id, user_id, starts_thread, unique):
    """[(name, value)]: the Message-ID of a bug's mail to one account; the
    first mail (the bug's creation) starts the thread, later ones reply to
    it. unique: what makes a later mail's id its own (the outbox message
    id, so a message sent twice has one id)."""
    port, site = _site(ctx)
    root = f"<bug-{bug_id}-{user_id or 0}{port}{site}>"
    if starts_thread:
        return [("Message-ID", root)]
    return [("Message-ID", f"<bug-{bug_id}-{user_id or 0}-{unique}{port}{site}>"),
            ("In-Reply-To", root), ("References", root)]


def unique_id(ctx, local):
    """A Message-ID of this installation for the mail whose id part is
    `local` (the same for every attempt at one message)."""
    port, site = _site(ctx)
    return f"<{local}{port}{site}>"


_UTF8_QP = email.charset.Charset("utf-8")
_UTF8_QP.header_encoding = email.charset.QP
_UTF8_QP.body_encoding = email.charset.QP


def new_mail(ctx, to, subject, when, headers, body):
    """A mail (email.message.Message): From mailfrom, To `to`, `subject`,
    Date `when` (an aware datetime), the extra `headers` [(name, value)] in
    order, a plain text body. Header values are one line each; text that is
    not ASCII is encoded (RFC 2047 in headers, quoted-printable UTF-8 in the
    body). An ASCII body with lines within the 998 characters mail allows
    stays 7bit: readable as it is in a mailbox file. (The plain Message is
    used because the email package's header objects cost most of the time
    of rendering a mail.)"""
    plain = body.isascii() and all(len(line) <= 998 for line in body.splitlines())
    mail = MIMEText(body, "plain", "us-ascii" if plain else _UTF8_QP)
    for name, value in [("From", ctx.param("mailfrom")), ("To", to), ("Subject", subject),
                        ("Date", email.utils.format_datetime(when))] + list(headers):
        text = _one_line(str(value))
        mail[name] = text if text.isascii() else Header(text, _UTF8_QP, header_name=name)
    # Content headers after the others, as mail readers show them.
    for name in ("MIME-Version", "Content-Type", "Content-Transfer-Encoding"):
        value = mail[name]
        del mail[name]
        mail[name] = value
    return mail


def _one_line(text):
    return " ".join(text.split())


def bug_url(ctx, bug_id):
    return f"{ctx.param('urlbase')}show_bug.cgi?id={bug_id}"


def columns(label, removed, added):
    """A row of the 'What | Removed | Added' table, long values wrapped."""
    left = textwrap.wrap(removed, 28) or [""]
    right = textwrap.wrap(added, _WIDTH - 19 - 28 - 2) or [""]
    lines = []
    for index in range(max(len(left), len(right))):
        name = label if index == 0 else ""
        lines.append(f"{name[-19:]:>19}|{(left[index] if index < len(left) else ''):<28}|"
                     f"{right[index] if index < len(right) else ''}".rstrip())
    return lines


def table_header():
    return [f"{'What':>19}|{'Removed':<28}|Added", "-" * _WIDTH]


def field_line(label, value):
    """A 'Label: value' row of a new bug's fields, long values wrapped."""
    parts = textwrap.wrap(str(value), _WIDTH - 20) or [""]
    lines = [f"{label[-18:]:>18}: {parts[0]}"]
    lines += [" " * 20 + part for part in parts[1:]]
    return lines


def wrap_comment(text):
    """Comment text for a mail: long lines wrapped at 80 columns, the rest kept."""
    lines = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, 80, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join(lines)
