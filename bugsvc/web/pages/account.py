"""Signing in and out. Signing in is the operation User.login (throttled
like every sign-in of the API); the session cookie holds the login token it
gives. Signing out is User.logout of that token."""

from ... import errors
from ...errors import ServiceError
from .base import Page, responder
from .site import local_target, url


class Login(Page):
    """GET /login: the sign-in form; POST: sign in and go back to `target`."""

    @responder
    def on_get(self, call):
        call.whoami()
        target = local_target(call.query.get("target"))
        if call.user is not None:
            call.redirect(target)
            return
        call.render("login.html", title="Sign in", target=target, message=None, login="")

    @responder
    def on_post(self, call):
        call.check_csrf()
        target = local_target(call.field("target"))
        login = call.field("Bugzilla_login").strip()
        params = {"login": login, "password": call.field("Bugzilla_password"),
                  "restrict_login": bool(call.field("Bugzilla_restrictlogin"))}
        try:
            answer = call.write("User.login", params)
        except ServiceError as error:
            status = 401 if error.code != errors.OBJECT_NOT_SPECIFIED else 400
            call.render("login.html", status=status, title="Sign in", target=target,
                        message=error.message, login=login)
            return
        if call.token:
            call.write("User.logout", {"token": call.token})
        call.start_session(answer["token"], remember=bool(call.field("remember")))
        call.redirect(target, notice="logged_in")


class Logout(Page):
    """GET /logout (and relogin.cgi): a button to sign out; POST: sign out."""

    @responder
    def on_get(self, call):
        call.whoami()
        if call.user is None:
            call.redirect("/")
            return
        call.render("logout.html", title="Sign out")

    @responder
    def on_post(self, call):
        call.check_csrf()
        if call.token:
            call.write("User.logout", {"token": call.token})
        call.token = None
        call.end_session()
        call.redirect("/", notice="logged_out")


class Token(Page):
    """GET /token.cgi?t=TOKEN&a=ACTION: the pages a mailed link opens
    (a=cfmpw: choose a new password; a=request_new_account: confirm a new
    account). They call the operations of password reset and account
    confirmation by mail, which belong to the notifications work; until
    those operations exist, the page says that this installation sends no
    such mail."""

    @responder
    def on_get(self, call):
        call.whoami()
        call.render("token.html", status=404, title="Link not valid",
                    action=call.query.get("a") or "")

    on_post = on_get


def login_url(target):
    return url("/login", target=target)
