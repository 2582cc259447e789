"""Editing one's own comment (editcomment.cgi: bugzilla.mozilla.org edits
in place with script; this form works without it) and the earlier texts of
an edited comment (page.cgi?id=comment-revisions.html, bugzilla.mozilla.org's
address). Who may do either is EditComments.update_comment's and
EditComments.comment_revisions' to decide."""

from ... import errors
from ...errors import ServiceError
from .base import Page, require_user, responder
from .site import url


def _comment(call, comment_id):
    """The comment object of `comment_id` as the visitor sees it (errors as
    Bug.comments answers them: 110/111, 52)."""
    found = call.read_one("Bug.comments", {"comment_ids": [comment_id]})["comments"]
    return next(iter(found.values()))


class EditComment(Page):
    """GET /editcomment.cgi?comment_id=N: the form; POST: save the new text."""

    @responder
    def on_get(self, call):
        require_user(call)
        comment = _comment(call, call.field("comment_id"))
        self._show(call, comment, comment["text"], comment["is_markdown"])

    @staticmethod
    def _show(call, comment, text, markdown, status=200, error=None, preview=None):
        call.render("comment_edit.html", status=status, title=f"Edit comment {comment['count']}"
                    f" of bug {comment['bug_id']}", comment=comment, text=text,
                    markdown=markdown, error=error, preview=preview)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        comment = _comment(call, call.field("comment_id"))
        text, markdown = call.field("comment"), bool(call.field("comment_is_markdown"))
        if call.field("preview"):
            return self._show(call, comment, text, markdown,
                              preview={"text": text, "is_markdown": markdown})
        try:
            call.write("EditComments.update_comment", {
                "comment_id": comment["id"], "new_comment": text, "is_markdown": markdown})
        except ServiceError as error:
            return self._show(call, comment, text, markdown,
                              status=errors.http_status(error.code), error=error.message)
        call.redirect(url("/show_bug.cgi", id=comment["bug_id"]) + f"#c{comment['count']}",
                      notice="changed")


def comment_revisions(call):
    """page.cgi?id=comment-revisions.html&comment_id=N: a comment now and
    the texts it had before, oldest first."""
    require_user(call)
    found = call.read_one("EditComments.comment_revisions",
                          {"comment_id": call.field("comment_id")})
    comment = found["comment"]
    call.render("comment_revisions.html",
                title=f"Earlier texts of comment {comment['count']} of bug {comment['bug_id']}",
                comment=comment, revisions=found["revisions"])
