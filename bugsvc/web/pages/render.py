"""Template helpers: filters that turn values into text or into markup
built only from escaped parts (comment text with its links), reading
posted forms, and the types of the static files."""

import html
import io
import re
import sys

import falcon
from falcon.media.multipart import MultipartFormHandler
from markupsafe import Markup

from ... import errors
from ...catalogue import bug_fields
from ...errors import ServiceError
from .media import inline_media
from .memo import BoundedMemo


STATIC_TYPES = {"css": "text/css; charset=UTF-8", "js": "text/javascript; charset=UTF-8"}
_FIELD_NAME = re.compile(r"^[\w.\-]+$")
# What becomes a link in comment text, as the reference's quoteUrls does:
# web addresses, "bug N" (with "comment M"), "comment M", "attachment N".
_LINKS = re.compile(
    # The lookahead lets the engine skip at once the places where no link
    # can start (a comment is scanned at every character).
    r"(?=[hbcaBCA])(?:(?P<url>\bhttps?://[^\s<>\"]+[^\s<>\".,;:!?)\]'])"
    r"|(?P<bug>\b[Bb]ug[\s#]*(?P<bug_id>\d{1,9})(?:,?\s*[Cc]omment\s*#?(?P<bug_comment>\d{1,6}))?)"
    r"|(?P<comment>\b[Cc]omment\s*#?(?P<comment_no>\d{1,6}))"
    r"|(?P<attachment>\b[Aa]ttachment\s*#?(?P<attachment_id>\d{1,9})))")


# A quick test: text with none of these cannot hold a link.
_MAY_LINK = re.compile(r"https?://|[Bb]ug|[Cc]omment|[Aa]ttachment")


def install(env):
    """Add the filters and globals the templates use to Jinja environment `env`."""
    env.filters.update(when=when, day=day, comment_html=comment_html, person=person,
                       size=size, hours=hours)
    env.globals.update(comment_list=comment_list)
    env.globals.update(inline_media=inline_media)
    env.globals.update(field_label=field_label)
    env.filters.update(labelled=labelled)


def when(value):
    """'2026-04-05 06:07 UTC' for an API time ('2026-04-05T06:07:08Z')."""
    text = str(value or "")
    if len(text) != 20 or text[10] != "T" or text[19] != "Z":
        return text
    return f"{text[:10]} {text[11:16]} UTC"


def day(value):
    """'2026-04-05' for an API time."""
    return str(value or "")[:10]


def person(detail, fallback=""):
    """A person as people read it: 'Real Name <login>' or the login."""
    if not detail:
        return fallback
    if isinstance(detail, str):
        return detail
    name, login = detail.get("real_name") or "", detail.get("name") or detail.get("email") or ""
    return f"{name} <{login}>" if name and login else (name or login)


def size(count):
    """A byte count as people read it."""
    count = int(count or 0)
    for unit in ("bytes", "KB", "MB"):
        if count < 1024 or unit == "MB":
            return f"{count} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return str(count)


def hours(value):
    return f"{float(value or 0):.1f}"


# Comments as markup, by their text (a bug page with a thousand comments
# would otherwise build them all for every visitor).
COMMENTS = BoundedMemo(16 * 1024 * 1024)


def comment_html(text, bug_id=None):
    """Comment text as markup: every character escaped, then web addresses,
    bug, comment and attachment references made links. (Built as one string
    from escaped parts, and kept in COMMENTS.)"""
    text = str(text or "")
    key = (text, bug_id)
    markup = COMMENTS.get(key)
    if markup is None:
        markup = _comment_html(text, bug_id)
        COMMENTS.put(key, markup, sys.getsizeof(text) + sys.getsizeof(markup))
    return markup


def _comment_html(text, bug_id):
    if not _MAY_LINK.search(text):
        return Markup(html.escape(text, quote=False))
    parts, last = [], 0
    for match in _LINKS.finditer(text):
        parts.append(html.escape(text[last:match.start()], quote=False))
        last = match.end()
        shown = html.escape(match.group(0), quote=False)
        if match.group("url"):
            href = html.escape(match.group("url"), quote=True)
            parts.append(f'<a href="{href}" rel="nofollow noopener noreferrer">{shown}</a>')
        elif match.group("bug"):
            target = f"/show_bug.cgi?id={match.group('bug_id')}"
            if match.group("bug_comment"):
                target += f"#c{match.group('bug_comment')}"
            parts.append(f'<a href="{target}">{shown}</a>')
        elif match.group("comment"):
            target = f"#c{match.group('comment_no')}"
            if bug_id is not None:
                target = f"/show_bug.cgi?id={int(bug_id)}" + target
            parts.append(f'<a href="{target}">{shown}</a>')
        else:
            target = f"/attachment.cgi?id={match.group('attachment_id')}&amp;action=edit"
            parts.append(f'<a href="{target}">{shown}</a>')
    parts.append(html.escape(text[last:], quote=False))
    return Markup("".join(parts))


def comment_list(comments, bug_id, private_boxes, media=None):
    """The items of a bug's comment list, as markup (the bug page's one
    loop that runs a thousand times on a long bug, so it is built here, from
    escaped parts, rather than by the template engine). private_boxes: add
    each comment's private switch (for insiders, inside the bug's form).
    media: {comment id: markup} shown after a comment's text (its inline
    images and videos, see media.inline_media)."""
    items = []
    media = media or {}
    escape = html.escape
    for comment in comments:
        count = int(comment["count"])
        private = bool(comment["is_private"])
        label = "Description" if count == 0 else f"Comment {count}"
        head = [f'<a href="#c{count}">{label}</a>',
                f'<span>{escape(str(comment["creator"]), quote=False)}</span>',
                f'<span>{when(comment["creation_time"])}</span>']
        if private:
            head.append('<span class="tag-private">Private</span>')
        if private_boxes:
            comment_id = int(comment["id"])
            head.append(f'<input type="hidden" name="comment_private_shown" value="{comment_id}">'
                        f'<span class="check"><input type="checkbox" id="private-{comment_id}"'
                        f' name="comment_private" value="{comment_id}"'
                        f'{" checked" if private else ""}> <label for="private-{comment_id}">'
                        f'Private</label></span>')
        items.append(
            f'<li id="c{count}" class="comment{" private" if private else ""}">'
            f'<article aria-labelledby="c{count}-head"><header id="c{count}-head">'
            f'{"".join(head)}</header><pre class="comment-text">'
            f'{comment_html(str(comment["text"] or ""), bug_id)}</pre>'
            f'{media.get(comment["id"], "")}</article></li>\n')
    return Markup("".join(items))


def _labels():
    """{name: label} of the standard fields, under each name a page may use:
    Bugzilla's, the interface's, the bug object's key, the bug-list column's."""
    labels = {}
    for field in bug_fields.STANDARD:
        if field.label:
            labels.update((name, field.label) for name in (
                field.name, field.api, field.bug_key, field.list_name) if name)
    return labels


_LABELS = _labels()


def field_label(name, custom=None):
    """The label people know a field by."""
    if custom and name in custom:
        return custom[name]
    return _LABELS.get(name, name.replace("_", " ").capitalize())


def labelled(columns, custom=None):
    """[(column, its label as markup)] of a list's `columns`, made once per
    list (a 500-bug list labels every cell for narrow screens)."""
    return [(column, Markup(html.escape(field_label(column, custom), quote=True)))
            for column in columns]


def parse_multipart(data, content_type):
    """({name: text or [texts]}, {name: (file name, content type, bytes)})
    of a multipart/form-data body. Errors: 32000 when it is not one."""
    fields, files = {}, {}
    try:
        for part in MultipartFormHandler().deserialize(io.BytesIO(data), content_type, len(data)):
            name = part.name or ""
            if not _FIELD_NAME.match(name):
                continue
            if part.filename is not None:
                content = part.data
                if part.filename or content:
                    files[name] = (part.filename, part.content_type or "", content)
                continue
            value = part.data.decode("utf-8", errors="replace")
            if name in fields:
                existing = fields[name]
                fields[name] = (existing if isinstance(existing, list) else [existing]) + [value]
            else:
                fields[name] = value
    except (falcon.MediaMalformedError, falcon.HTTPError, ValueError) as exc:
        raise ServiceError(errors.USER_ERROR, f"Could not read the form: {exc}") from None
    return fields, files
