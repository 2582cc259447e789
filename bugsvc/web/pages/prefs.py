"""userprefs.cgi: the visitor's own account (real name, password), its mail
preferences (the reference's tab=email: the role and event matrix, flag
mail, user watching, ignored bugs), its webhooks (bugzilla.mozilla.org's
tab), its API keys (create, revoke) and its saved searches, as the
reference's tabs. Each tab reads and writes through its operations
(User.get_email_settings / update_email_settings, Webhooks.*, ApiKey.*):
what may be chosen and who may register a webhook is theirs to decide.
"""

import re

from markupsafe import Markup

from ... import errors
from ...accounts.auth import CredentialsRefused
from ...errors import ServiceError
from .base import Page, require_user, responder
from .site import url


TABS = (("account", "Account"), ("mfa", "Two-factor"), ("email", "Email"),
        ("webhooks", "Webhooks"), ("apikey", "API keys"), ("saved-searches", "Saved searches"))
# How the preferences name the roles and events of User.get_email_settings,
# in the reference's words.
ROLES = {"assignee": "Assignee", "reporter": "Reporter", "cc": "CC", "qa_contact": "QA contact",
         "mentioned": "Mentioned in a comment"}
EVENTS = {
    "added_removed": "I'm added to or removed from this role",
    "bug_created": "A new bug is created",
    "opened_closed": "The bug is resolved or reopened",
    "component": "The product or component changes",
    "project_management": "The priority, status, severity or milestone changes",
    "comment": "New comments are added",
    "attachment": "New attachments are added",
    "attachment_data": "Some attachment data changes",
    "keywords": "The keywords field changes",
    "cc": "The CC field changes",
    "dependency": "The dependency tree changes",
    "other": "Any field not mentioned above changes",
    "unconfirmed": "Also while the bug is UNCONFIRMED",
    "changed_by_me": "Also when I made the change myself",
}
FLAG_EVENTS = {"flag_requested": "Someone asks me to set a flag",
               "requested_flag": "Someone sets a flag I asked for"}
WEBHOOK_EVENTS = ("create", "change", "comment", "attachment", "attachment_change", "mention")
_LIST_SPLIT = re.compile(r"[\s,]+")


class Preferences(Page):
    """GET /userprefs.cgi?tab=...: the tab; POST: save it."""

    @responder
    def on_get(self, call):
        require_user(call)
        self._show(call, call.query.get("tab") or "account")

    def _show(self, call, tab, status=200, error=None, new_key=None, form=None,
              enrolment=None, recovery_codes=None):
        if tab not in dict(TABS):
            tab = "account"
        keys, settings, webhooks, mfa = [], None, [], None
        if tab == "mfa":
            mfa = call.read_one("SecondFactor.get", {})
        elif tab == "apikey":
            keys = call.read_one("ApiKey.get", {})["api_keys"]
        elif tab == "email":
            settings = call.read_one("User.get_email_settings", {})["email_settings"]
        elif tab == "webhooks":
            webhooks = call.read_one("Webhooks.list", {})["webhooks"]
        call.render("prefs.html", status=status, title="Preferences", tab=tab, tabs=TABS,
                    keys=keys, error=error, new_key=new_key, settings=settings, roles=ROLES,
                    events=EVENTS, flag_events=FLAG_EVENTS, webhooks=webhooks,
                    webhook_events=WEBHOOK_EVENTS, form=form or {}, mfa=mfa,
                    enrolment=enrolment, recovery_codes=recovery_codes,
                    qr_code=Markup(enrolment["qr_code"]) if enrolment else None)

    @responder
    def on_post(self, call):
        call.check_csrf()
        user = require_user(call)
        tab = call.field("tab") or "account"
        try:
            if tab == "account":
                return self._account(call, user)
            if tab == "appearance":
                return self._appearance(call, user)
            if tab == "apikey":
                return self._api_keys(call)
            if tab == "email":
                return self._email(call)
            if tab == "webhooks":
                return self._webhooks(call)
            if tab == "mfa":
                return self._second_factor(call)
        except CredentialsRefused as refused:
            return self._show(call, tab, status=401, error=refused.message)
        except ServiceError as error:
            # A refused webhook form comes back as it was typed.
            form = {name: call.field(name) for name in ("name", "url", "product", "component")}
            form["events"] = call.fields("events")
            return self._show(call, tab, status=errors.http_status(error.code),
                              error=error.message, form=form)
        call.redirect(url("/userprefs.cgi", tab=tab))

    def _appearance(self, call, user):
        """Save the account tab's appearance: the colours of the pages."""
        chosen = call.field("color_scheme")
        if chosen != user["settings"]["color_scheme"]:
            call.write("User.update_self", {"settings": {"color_scheme": chosen}})
        call.redirect(url("/userprefs.cgi", tab="account"), notice="prefs_saved")

    def _account(self, call, user):
        """Save the account tab: the real name, whether comments start as
        Markdown, a new password, and (while
        allowemailchange is on) a new e-mail address, mailed to be
        confirmed."""
        params = {}
        if call.field("realname").strip() != (user.get("real_name") or ""):
            params["full_name"] = call.field("realname")
        if call.field("comment_markdown_shown"):
            markdown = bool(call.field("comment_markdown"))
            if markdown != bool(user.get("comment_markdown")):
                params["comment_markdown"] = markdown
        if call.field("new_password1") or call.field("new_password2"):
            if call.field("new_password1") != call.field("new_password2"):
                return self._show(call, "account", status=400,
                                  error="The two new passwords are not the same.")
            params["password"] = call.field("new_password1")
            params["current_password"] = call.field("old_password")
        new_email = call.field("new_login_name").strip()
        if new_email and new_email != user["login"] and call.setting_is_on("allowemailchange"):
            call.write("User.request_email_change", {
                "new_email": new_email, "current_password": call.field("old_password")})
        if params:
            call.write("User.update_self", params)
        if new_email and new_email != user["login"] and "password" not in params:
            call.redirect(url("/userprefs.cgi", tab="account"), notice="email_change_mailed")
            return
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

    def _second_factor(self, call):
        """Set up the second factor (begin: the QR code and secret; confirm:
        the app's first code, then the recovery codes, shown once), or turn
        it off with a current code or the password."""
        action = call.field("action")
        if action == "begin":
            return self._show(call, "mfa", enrolment=call.write("SecondFactor.begin", {}))
        if action == "confirm":
            try:
                answer = call.write("SecondFactor.confirm", {"code": call.field("code")})
            except ServiceError as error:
                if error.code != errors.SECOND_FACTOR_INVALID:
                    raise
                # The same secret again, while it waits for its first code.
                return self._show(call, "mfa", status=401, error=error.message,
                                  enrolment=call.write("SecondFactor.begin", {}))
            return self._show(call, "mfa", recovery_codes=answer["recovery_codes"])
        if action == "disable":
            call.write("SecondFactor.disable", {"code": call.field("code"),
                                                "password": call.field("password")})
            return call.redirect(url("/userprefs.cgi", tab="mfa"), notice="second_factor_off")
        raise ServiceError(errors.OBJECT_NOT_SPECIFIED, "Choose what to do with two-factor "
                                                        "sign-in.")

    def _email(self, call):
        """Save the whole tab: every choice the settings offer (a box left
        unticked is a choice too), and the watched accounts and ignored
        bugs when their text changed."""
        current = call.read_one("User.get_email_settings", {})["email_settings"]
        params = {
            "flags": {name: bool(call.field(f"flag-{name}")) for name in current["flags"]},
            "relationships": {
                role: {event: bool(call.field(f"rel-{role}-{event}")) for event in choices}
                for role, choices in current["relationships"].items()},
        }
        # A text box, or a menu of people with several chosen.
        watching = [name for value in call.fields("watching")
                    for name in _LIST_SPLIT.split(value) if name]
        if sorted(watching, key=str.lower) != current["watching"]:
            params["watching"] = watching
        ignored = [value for value in _LIST_SPLIT.split(call.field("ignored_bugs")) if value]
        if ignored != [str(bug_id) for bug_id in current["ignored_bugs"]]:
            params["ignored_bugs"] = ignored
        call.write("User.update_email_settings", params)
        call.redirect(url("/userprefs.cgi", tab="email"), notice="prefs_saved")

    def _webhooks(self, call):
        action = call.field("action")
        if action == "create":
            answer = call.write("Webhooks.create", {
                "name": call.field("name"), "url": call.field("url"),
                "events": call.fields("events"), "product": call.field("product"),
                "component": call.field("component") or None})
            return self._show(call, "webhooks", new_key=answer["secret"])
        ids = [call.field("webhook_id")]
        if action == "delete":
            call.write("Webhooks.delete", {"ids": ids})
            return call.redirect(url("/userprefs.cgi", tab="webhooks"), notice="saved")
        if action == "rotate":
            answer = call.write("Webhooks.update", {"ids": ids, "rotate_secret": True})
            return self._show(call, "webhooks", new_key=answer["secret"])
        if action in ("enable", "disable"):
            call.write("Webhooks.update", {"ids": ids, "enabled": action == "enable"})
            return call.redirect(url("/userprefs.cgi", tab="webhooks"), notice="saved")
        raise ServiceError(errors.OBJECT_NOT_SPECIFIED, "Choose what to do with the webhook.")
