"""The sanity check page (sanitycheck.cgi), as Bugzilla's: members of
editcomponents run the checks, which change nothing; members of admin get a
button to repair what a check found, each repair in its own transaction.
Over SanityCheck.run and SanityCheck.repair."""

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder


class SanityCheck(Page):
    """GET /sanitycheck.cgi: every check's findings; POST action=repair
    with check=NAME: repair one (the page comes back with what it fixed, or
    the refusal with its reason)."""

    @responder
    def on_get(self, call):
        require_area(call, "editcomponents")
        self._show(call)

    def _show(self, call, status=200, error=None, repaired=None):
        checks = call.read_one("SanityCheck.run", {})["checks"]
        call.render("admin/sanity_check.html", status=status, title="Sanity check",
                    checks=checks, may_repair="admin" in call.user["groups"], error=error,
                    repaired=repaired)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "admin")
        try:
            answer = call.write("SanityCheck.repair", {"check": call.field("check")})
        except ServiceError as error:
            if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                raise
            return self._show(call, status=errors.http_status(error.code),
                              error=error.message)
        self._show(call, repaired=answer)
