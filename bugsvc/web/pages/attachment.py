"""attachment.cgi: an attachment's content, its details and edit form
(&action=edit), and the form to attach a file (&action=enter).

Content is served so that it cannot act as a page of this site: every
answer says nosniff and carries a sandboxing Content-Security-Policy;
only plain text and raster images are shown inline, everything else
(HTML, SVG, unknown types) is a download. When the parameter
attachment_base names another origin, content is served only there: this
site answers with a redirect to a link signed for the visitor and that
attachment, valid for a few minutes, and the other origin serves nothing
but such content (the session cookie never reaches it).
"""

import base64
import hmac
import time
from urllib.parse import quote, urlsplit

import falcon

from ... import errors
from ...api.operations import OPERATIONS
from ...errors import ServiceError
from .base import Page, require_user, responder
from .bug import attachment_params, existing_flag_changes, new_flag
from .site import secure_page, url


# Shown in the browser; anything else is downloaded.
INLINE_TYPES = ("text/plain", "image/png", "image/jpeg", "image/gif", "image/webp",
                "image/bmp", "image/avif", "video/mp4", "video/webm")
# Text types shown as plain text (never interpreted).
_TEXT_AS_PLAIN = ("text/x-", "text/csv", "text/markdown", "text/x-diff", "text/x-patch",
                  "text/x-log")
CONTENT_POLICY = ("default-src 'none'; img-src 'self' data:; media-src 'self'; "
                  "style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'; "
                  "form-action 'none'; base-uri 'none'")
LINK_SECONDS = 300
_CONTENT_TYPES_OFFERED = ("text/plain", "text/html", "application/xml", "image/gif",
                          "image/jpeg", "image/png", "application/pdf", "application/zip",
                          "application/octet-stream")


def served_type(content_type):
    """(the Content-Type to send, True when shown inline) for an
    attachment's stated type."""
    base = (content_type or "").split(";")[0].strip().lower()
    if base in INLINE_TYPES:
        return (base + "; charset=UTF-8" if base.startswith("text/") else base), True
    if base.startswith(_TEXT_AS_PLAIN):
        return "text/plain; charset=UTF-8", True
    return "application/octet-stream", False


def disposition(inline, file_name):
    """Content-Disposition with the file name in a form every browser reads
    and no header can be broken by."""
    name = (file_name or "attachment").replace("\\", "_").replace("/", "_")
    plain = "".join(c if 32 <= ord(c) < 127 and c not in '"%;' else "_" for c in name)
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def serve(resp, attachment, embedded_elsewhere=False):
    """Fill `resp` with an attachment's content, safely.

    embedded_elsewhere: served on the attachment_base origin, where the
    pages of this site (another origin) show its images and videos inline;
    the link is signed for one visitor and expires in minutes."""
    content_type, inline = served_type(attachment["content_type"])
    resp.status = 200
    resp.content_type = content_type
    resp.set_header("Content-Disposition", disposition(inline, attachment["file_name"]))
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Content-Security-Policy", CONTENT_POLICY)
    resp.set_header("Cross-Origin-Resource-Policy",
                    "cross-origin" if embedded_elsewhere else "same-origin")
    resp.set_header("Referrer-Policy", "no-referrer")
    resp.set_header("Cache-Control", "private, no-store")
    resp.data = base64.b64decode(attachment["data"])


def base_url(attachment_base, bug_id):
    return attachment_base.replace("%bugid%", str(bug_id))


def on_attachment_host(req, attachment_base):
    """True when `req` came to the origin attachment_base names (with
    %bugid% standing for any bug number)."""
    if not attachment_base:
        return False
    host = urlsplit(attachment_base.replace("%bugid%", "0")).netloc.lower()
    pattern = urlsplit(attachment_base).netloc.lower()
    asked = (req.get_header("Host") or req.host or "").lower()
    if "%bugid%" in pattern:
        head, _, tail = pattern.partition("%bugid%")
        middle = asked[len(head):len(asked) - len(tail)] if tail else asked[len(head):]
        return asked.startswith(head) and asked.endswith(tail) and middle.isdigit()
    return asked == host


class Attachment(Page):
    """GET /attachment.cgi: content (id=N), details (id=N&action=edit), the
    form to attach (bugid=N&action=enter); POST: attach, or save details."""

    @responder
    def on_get(self, call):
        action = call.query.get("action") or "view"
        if action == "enter":
            return self._enter_form(call)
        reference = call.query.get("id") or ""
        if action == "edit":
            return self._details(call, reference)
        return self._content(call, reference)

    def _content(self, call, reference):
        base = self.site.attachment_base()
        if base:
            found = call.read_one("Bug.attachments", {"attachment_ids": [reference],
                                                      "exclude_fields": "data"})
            attachment = found["attachments"][str(reference).strip()]
            expires = int(time.time()) + LINK_SECONDS
            user_id = (call.user or {}).get("id") or 0
            signature = self.site.sign(f"attachment:{attachment['id']}:{user_id}:{expires}")
            call.resp.status = 302
            call.resp.location = (base_url(base, attachment["bug_id"])
                                  + url("attachment.cgi", id=attachment["id"],
                                        t=f"{expires}-{user_id}-{signature}"))
            secure_page(call.resp, private=True)
            return
        found = call.read_one("Bug.attachments", {"attachment_ids": [reference]})
        serve(call.resp, found["attachments"][str(reference).strip()])

    def _details(self, call, reference):
        found = call.read_one("Bug.attachments", {"attachment_ids": [reference],
                                                  "exclude_fields": "data"})
        attachment = found["attachments"][str(reference).strip()]
        bug, flag_types = call.read(
            ("Bug.get", {"ids": [attachment["bug_id"]],
                         "include_fields": "id,summary,product,component"}),
            ("Bug.edit_options", {"ids": [attachment["bug_id"]]}))
        bug = bug["bugs"][0]
        types = []
        if call.user:
            types = call.read_one("FlagType.get", {"product": bug["product"],
                                                   "component": bug["component"]})["attachment"]
        call.render("attachment_edit.html", title=f"Attachment {attachment['id']}",
                    attachment=attachment, bug=bug, flag_types=types,
                    can_comment=flag_types["bugs"][0]["can_comment"],
                    offered_types=_CONTENT_TYPES_OFFERED)

    def _enter_form(self, call, status=200, error=None):
        require_user(call)
        bug_ref = call.query.get("bugid") or call.field("bugid")
        bug, listed = call.read(("Bug.get", {"ids": [bug_ref],
                                             "include_fields": "id,summary,product,component"}),
                                ("Bug.attachments", {"ids": [bug_ref],
                                                     "exclude_fields": "data"}))
        bug = bug["bugs"][0]
        types = call.read_one("FlagType.get", {"product": bug["product"],
                                               "component": bug["component"]})["attachment"]
        call.render("attachment_enter.html", status=status, title=f"Attach a file to bug "
                                                                  f"{bug['id']}",
                    bug=bug, attachments=listed["bugs"][str(bug["id"])], flag_types=types,
                    error=error, offered_types=_CONTENT_TYPES_OFFERED)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        action = call.field("action")
        if action == "insert":
            bug_id = call.field("bugid")
            upload = call.files.get("data")
            if upload is None:
                return self._enter_form(call, status=400, error="Choose a file to attach.")
            params = attachment_params(call, bug_id, upload)
            flags = _new_flags(call)
            if flags:
                params["flags"] = flags
            try:
                call.write("Bug.add_attachment", params)
            except ServiceError as error:
                return self._enter_form(call, status=errors.http_status(error.code),
                                        error=error.message)
            call.redirect(url("/show_bug.cgi", id=bug_id), notice="attached")
            return
        attachment_id = call.field("id")
        found = call.read_one("Bug.attachments", {"attachment_ids": [attachment_id],
                                                  "exclude_fields": "data"})
        attachment = found["attachments"][str(attachment_id).strip()]
        params = {"ids": [attachment["id"]]}
        for name in ("summary", "file_name", "content_type"):
            value = call.field(name).strip()
            if value and value != attachment[name]:
                params[name] = value
        for name in ("is_patch", "is_obsolete", "is_private"):
            if f"defined_{name}" in call.form:
                wanted = bool(call.field(name))
                if wanted != attachment[name]:
                    params[name] = wanted
        flags = existing_flag_changes(call, attachment.get("flags", [])) + _new_flags(call)
        if flags:
            params["flags"] = flags
        if call.field("comment").strip():
            params["comment"] = call.field("comment")
        if len(params) > 1:
            call.write("Bug.update_attachment", params)
        call.redirect(url("/attachment.cgi", id=attachment["id"], action="edit"),
                      notice="saved")


def _new_flags(call):
    return [new_flag(call, name.split("-", 1)[1], value)
            for name, value in call.form.items()
            if name.startswith("flag_type-") and value in ("?", "+", "-")
            and name.split("-", 1)[1].isdigit()]


class AttachmentOrigin:
    """Falcon middleware: a request to the attachment_base origin is
    answered there and then (see AttachmentHost); the pages and the API are
    not served on that origin."""

    def __init__(self, site):
        self.host = AttachmentHost(site)
        self.site = site

    def process_request(self, req, resp):
        base = self.site.attachment_base()
        if base and on_attachment_host(req, base):
            self.host.serve(req, resp)
            resp.complete = True


class AttachmentHost:
    """The only page of the attachment_base origin: attachment.cgi with a
    link signed for one attachment and one visitor; everything else there
    is not found. It runs Bug.attachments as the visitor the link was
    signed for, so what it serves is what that visitor may see."""

    def __init__(self, site):
        self.site = site

    def serve(self, req, resp):
        query = falcon.uri.parse_query_string(req.query_string or "")
        reference, signed = str(query.get("id") or ""), str(query.get("t") or "")
        parts = signed.split("-")
        if req.path != "/attachment.cgi" or len(parts) != 3 or not all(parts):
            return _not_found(resp)
        expires, user_id, signature = parts
        expected = self.site.sign(f"attachment:{reference}:{user_id}:{expires}")
        if (not expires.isdigit() or not user_id.isdigit() or int(expires) < time.time()
                or not hmac.compare_digest(signature, expected)):
            return _not_found(resp)
        try:
            found = self.site.runner.call(OPERATIONS["Bug.attachments"],
                                          {"attachment_ids": [reference]},
                                          user_id=int(user_id) or None,
                                          remote_ip=req.context.client_address)
        except ServiceError:
            return _not_found(resp)
        serve(resp, found["attachments"][reference], embedded_elsewhere=True)


def _not_found(resp):
    resp.status = 404
    resp.content_type = "text/plain; charset=UTF-8"
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Content-Security-Policy", CONTENT_POLICY)
    resp.data = b"Not found.\n"
