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
from ...bugs import markup
from ...catalogue import bug_fields
from ...errors import ServiceError
from .media import inline_media
from .memo import BoundedMemo


STATIC_TYPES = {"css": "text/css; charset=UTF-8", "js": "text/javascript; charset=UTF-8"}
_FIELD_NAME = re.compile(r"^[\w.\-]+$")


def install(env):
    """Add the filters and globals the templates use to Jinja environment `env`."""
    env.filters.update(when=when, day=day, comment_html=comment_html, person=person,
                       size=size, hours=hours)
    env.globals.update(comment_list=comment_list, comment_text_html=comment_text_html,
                       bug_links=bug_links)
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


# Comments as markup, and the names a Markdown comment @mentions, by their
# text (a bug page with a thousand comments would otherwise build them all,
# or parse its Markdown ones, for every visitor).
COMMENTS = BoundedMemo(16 * 1024 * 1024)


def mention_names(text, is_markdown=False):
    """The names a comment's `text` @mentions (markup.mention_names), those
    of a Markdown comment kept in COMMENTS: finding them parses it."""
    if not is_markdown or "@" not in text:
        return markup.mention_names(text, bool(is_markdown))
    key = ("mentions", text)
    names = COMMENTS.get(key)
    if names is None:
        names = tuple(markup.mention_names(text, True))
        COMMENTS.put(key, names, sys.getsizeof(text) + sum(map(sys.getsizeof, names)) + 64)
    return list(names)


def comment_html(text, bug_id=None, is_markdown=False, people=None):
    """Comment text as markup (bugs/markup.py): Markdown rendered and
    cleaned, or plain text escaped, with web addresses, bug, comment and
    attachment references made links, and the @mentions of `people` ({name:
    (login, real name)}, those the visitor may see). (Kept in COMMENTS.)"""
    text = str(text or "")
    mentioned = ()
    if people and "@" in text:
        mentioned = tuple(sorted((name, people[name]) for name in
                                 mention_names(text, is_markdown) if name in people))
    key = (text, bug_id, bool(is_markdown), mentioned)
    html_text = COMMENTS.get(key)
    if html_text is None:
        html_text = Markup(markup.comment_html(text, bool(is_markdown), bug_id,
                                               dict(mentioned)))
        COMMENTS.put(key, html_text, sys.getsizeof(text) + sys.getsizeof(html_text))
    return html_text


def bug_links(bug_ids):
    """Bug numbers `bug_ids` as links to their pages, separated by commas,
    or "None" shown as empty (markup built here: a bug's relations are on
    every bug page)."""
    if not bug_ids:
        return Markup('<span class="empty">None</span>')
    return Markup(", ".join(f'<a href="/show_bug.cgi?id={int(bug_id)}">{int(bug_id)}</a>'
                            for bug_id in bug_ids))


def comment_text_html(comment, bug_id, people=None):
    """The text of comment object `comment` as the bug page shows it: a
    Markdown comment's blocks, or plain text kept as typed (people: see
    comment_html)."""
    text = comment_html(str(comment["text"] or ""), bug_id, comment.get("is_markdown"), people)
    if comment.get("is_markdown"):
        return Markup(f'<div class="comment-text markdown">{text}</div>')
    return Markup(f'<pre class="comment-text">{text}</pre>')


def comment_list(comments, bug_id, private_boxes, revisions=False, editor=None, people=None,
                 media=None):
    """The items of a bug's comment list, as markup (the bug page's one
    loop that runs a thousand times on a long bug, so it is built here, from
    escaped parts, rather than by the template engine). private_boxes: add
    each comment's private switch (for insiders, inside the bug's form).
    revisions: an edited comment's mark links to its earlier texts (for
    those who may read them). editor: the name of the visitor, when it may
    edit its own comments (each of them gets an Edit link). people: the
    @mentioned accounts the visitor may see (see comment_html).
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
        if comment.get("edits"):
            mark = "Edited"
            if revisions:
                mark = (f'<a href="/page.cgi?id=comment-revisions.html&amp;comment_id='
                        f'{int(comment["id"])}">Edited</a>')
            head.append(f'<span class="edited">{mark}</span>')
        if editor is not None and comment["creator"] == editor:
            head.append(f'<a href="/editcomment.cgi?comment_id={int(comment["id"])}">Edit'
                        f'<span class="sr-only"> {label.lower()}</span></a>')
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
            f'{"".join(head)}</header>{comment_text_html(comment, bug_id, people)}'
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
