"""userprefs.cgi: the visitor's own account (real name, password), its API
keys (create, revoke) and its saved searches, as the reference's tabs.

The mail preferences tab (per role and event, as the reference's matrix)
belongs with the notification operations; it is left out until they exist.
"""

from ... import errors
from ...accounts.auth import CredentialsRefused
from ...errors import ServiceError
from .base import Page, require_user, responder
from .site import url

TABS = (("account", "Account"), ("apikey", "API keys"), ("saved-searches", "Saved searches"))


class Preferences(Page):
    """GET /userprefs.cgi?tab=...: the tab; POST: save it."""

    @responder
    def on_get(self, call):
        require_user(call)
        self._show(call, call.query.get("tab") or "account")

    def _show(self, call, tab, status=200, error=None, new_key=None):
        if tab not in dict(TABS):
            tab = "account"
        keys = []
        if tab == "apikey":
            keys = call.read_one("ApiKey.get", {})["api_keys"]
        call.render("prefs.html", status=status, title="Preferences", tab=tab, tabs=TABS,
                    keys=keys, error=error, new_key=new_key)

    @responder
    def on_post(self, call):
        call.check_csrf()
        user = require_user(call)
        tab = call.field("tab") or "account"
        try:
            if tab == "account":
                return self._account(call, user)
            if tab == "apikey":
                return self._api_keys(call)
        except CredentialsRefused as refused:
            return self._show(call, tab, status=401, error=refused.message)
        except ServiceError as error:
            return self._show(call, tab, status=errors.http_status(error.code),
                              error=error.message)
        call.redirect(url("/userprefs.cgi", tab=tab))

    def _account(self, call, user):
        params = {}
        if call.field("realname").strip() != (user.get("real_name") or ""):
            params["full_name"] = call.field("realname")
        if call.field("new_password1") or call.field("new_password2"):
            if call.field("new_password1") != call.field("new_password2"):
                return self._show(call, "account", status=400,
                                  error="The two new passwords are not the same.")
            params["password"] = call.field("new_password1")
            params["current_password"] = call.field("old_password")
        if params:
            call.write("User.update_self", params)
        if "password" in params:
            # Every session of the account ended with the password change.
            call.token = None
            call.end_session()
            call.redirect(url("/login", target="/userprefs.cgi"), notice="password_changed")
            return
        call.redirect(url("/userprefs.cgi", tab="account"), notice="prefs_saved")

    def _api_keys(self, call):
        if call.field("action") == "create":
            answer = call.write("ApiKey.create", {"description": call.field("description")})
            return self._show(call, "apikey", new_key=answer["api_key"])
        key_id = call.field("key_id")
        revoked = call.field("action") == "revoke"
        call.write("ApiKey.update", {"ids": [key_id], "revoked": revoked})
        call.redirect(url("/userprefs.cgi", tab="apikey"),
                      notice="key_revoked" if revoked else "key_restored")
