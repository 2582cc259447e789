"""relogin.cgi, as Bugzilla's: signing out (no action, or action=logout),
and acting as another account (sudo) over Sudo.prepare, Sudo.begin and
Sudo.end: GET action=prepare-sudo shows the form (the account to act as, a
reason, one's own password again, and a code of one's second factor when
one has it, as bugzilla.mozilla.org asks), POST action=begin-sudo begins, POST
action=end-sudo ends (GET shows its button); the action is in the address.
A refused beginning comes back on the form as typed (never the password). Who may, and whom, is the
operations' rule (accounts/sudo.py)."""

from ... import errors
from ...errors import ServiceError
from .account import Logout
from .base import Page, responder
from .site import PageRefused


_SIGN_OUT = ("", "logout")


class Relogin(Page):
    """GET/POST /relogin.cgi?action=..."""

    def __init__(self, site):
        super().__init__(site)
        self.logout = Logout(site)

    def on_get(self, req, resp):
        action = req.get_param("action") or ""
        if action in _SIGN_OUT:
            return self.logout.on_get(req, resp)
        return self._get(req, resp)

    def on_post(self, req, resp):
        action = req.get_param("action") or ""
        if action in _SIGN_OUT:
            return self.logout.on_post(req, resp)
        return self._post(req, resp)

    @responder
    def _get(self, call):
        action = call.query.get("action")
        if action in ("prepare-sudo", "begin-sudo"):
            self._form(call, call.query.get("target_login") or "", call.query.get("reason") or "")
        elif action == "end-sudo":
            call.whoami()
            if call.user is None or not call.user.get("sudoer"):
                call.redirect("/")
                return
            call.render("sudo_end.html", title="End acting as another user")
        else:
            raise PageRefused(400, "relogin.cgi does not know that action.")

    @staticmethod
    def _form(call, target_login, reason, status=200, error=None, code=None):
        needs_code = call.read_one("Sudo.prepare")["needs_code"]
        call.render("admin/sudo.html", status=status, title="Begin sudo session",
                    target_login=target_login, reason=reason, error=error, code=code,
                    needs_code=needs_code)

    @responder
    def _post(self, call):
        call.check_csrf()
        action = call.query.get("action")
        if action == "begin-sudo":
            target_login, reason = call.field("target_login"), call.field("reason")
            try:
                call.write("Sudo.begin", {"target_login": target_login, "reason": reason,
                                          "current_password": call.field("current_password"),
                                          "code": call.field("code")})
            except ServiceError as error:
                if error.code in (errors.LOGIN_REQUIRED, errors.AUTH_FAILURE):
                    raise
                return self._form(call, target_login, reason,
                                  status=errors.http_status(error.code), error=error.message,
                                  code=error.code)
            call.redirect("/", notice="sudo_started")
        elif action == "end-sudo":
            call.write("Sudo.end", {})
            call.redirect("/", notice="sudo_ended")
        else:
            raise PageRefused(400, "relogin.cgi does not know that action.")
