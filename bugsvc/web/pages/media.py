"""Images and short videos attached to a bug, shown inline in the comment
that added them. Only the attachments the visitor's Bug.attachments lists
are shown (a private one to those who may see it, to nobody else), and
each is fetched from attachment.cgi, which serves it by the same rules
(through the attachment_base origin when that parameter is set). SVG is
never shown inline (it may carry script): it stays a link, as every other
type does."""

import html

from markupsafe import Markup


# The types shown inline: raster images and the videos browsers play.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
VIDEO_TYPES = ("video/mp4", "video/webm")


def kind_of(content_type):
    """"image", "video" or None for an attachment's stated content type."""
    base = (content_type or "").split(";")[0].strip().lower()
    if base in IMAGE_TYPES:
        return "image"
    if base in VIDEO_TYPES:
        return "video"
    return None


def inline_media(comments, attachments):
    """{comment id: markup} of the images and videos among `attachments`
    (Bug.attachments as the visitor, without data), each under the first of
    `comments` (Bug.comments) that names it: the one that added it. Patches
    and obsolete attachments are left as links."""
    first = {}
    for comment in comments:
        attachment_id = comment.get("attachment_id")
        if attachment_id is not None and attachment_id not in first:
            first[attachment_id] = comment["id"]
    shown = {}
    for attachment in attachments:
        kind = kind_of(attachment.get("content_type"))
        comment_id = first.get(attachment["id"])
        if kind is None or comment_id is None or attachment.get("is_patch") \
                or attachment.get("is_obsolete"):
            continue
        source = f"/attachment.cgi?id={int(attachment['id'])}"
        summary = html.escape(str(attachment.get("summary") or attachment.get("file_name")
                                  or f"Attachment {attachment['id']}"), quote=True)
        if kind == "image":
            element = (f'<img src="{source}" alt="{summary}" loading="lazy" decoding="async"'
                       f' width="480" height="320">')
        else:
            element = (f'<video src="{source}" controls preload="none" width="480"'
                       f' height="270" aria-label="{summary}"></video>')
        shown[comment_id] = shown.get(comment_id, "") + (
            f'<figure class="inline-media"><a href="{source}">{element}</a>'
            f'<figcaption>{summary}</figcaption></figure>'
            if kind == "image" else
            f'<figure class="inline-media">{element}<figcaption><a href="{source}">'
            f'{summary}</a></figcaption></figure>')
    return {key: Markup(value) for key, value in shown.items()}
