"""Signing in and out, and the accounts by mail. Signing in is the
operation User.login (throttled like every sign-in of the API); the session
cookie holds the login token it gives. Signing out is User.logout of that
token. A forgotten password and a new account go through the operations of
accounts by mail (User.request_password_reset, reset_password,
offer_account_by_email, create_account, check_token, cancel_token): the
pages only carry the mailed link's token to them."""

from markupsafe import Markup

from ... import errors
from ...errors import ServiceError
from .base import Page, responder
from .site import local_target, url


class Login(Page):
    """GET /login: the sign-in form; POST: sign in and go back to `target`.

    An account with a second factor signs in in two steps: the password
    (SignIn.begin), then a page that asks for the code (step=code,
    SignIn.finish); a member of mfa_group without one sets it up first
    (step=enrol: SignIn.enrolment shows the QR code, SignIn.enrol confirms
    it and shows the recovery codes). Between the steps the sign-in waits
    on the server under a short-lived secret the form carries back; no
    session exists until the last step is done."""

    @responder
    def on_get(self, call):
        allowed = _can_create_account(call)
        target = local_target(call.query.get("target"))
        if call.user is not None:
            call.redirect(target)
            return
        _login_page(call, target=target, can_create_account=allowed)

    @responder
    def on_post(self, call):
        call.check_csrf()
        target = local_target(call.field("target"))
        step = call.field("step")
        if step == "code":
            return _second_step(call, target)
        if step == "enrol":
            return _enrol_step(call, target)
        login = call.field("Bugzilla_login").strip()
        params = {"login": login, "password": call.field("Bugzilla_password"),
                  "restrict_login": bool(call.field("Bugzilla_restrictlogin")),
                  "remember": bool(call.field("Bugzilla_remember"))}
        try:
            answer = call.write("SignIn.begin", params)
        except ServiceError as error:
            status = 401 if error.code != errors.OBJECT_NOT_SPECIFIED else 400
            _login_page(call, status=status, target=target, message=error.message, login=login)
            return
        _after_password(call, answer, target, params["remember"])


def _after_password(call, answer, target, remember, notice="logged_in"):
    """Go on from a right password: signed in, or the next step's page."""
    if "token" in answer:
        return _start_session(call, answer["token"], remember, target, notice)
    if answer["enrol"]:
        return _enrol_page(call, answer["pending"], target)
    _code_page(call, answer["pending"], target)


def _start_session(call, token, remember, target, notice):
    if call.token:
        call.write("User.logout", {"token": call.token})
    call.start_session(token, asked_to_remember=remember)
    call.redirect(target, notice=notice)


def _second_step(call, target):
    pending = call.field("pending")
    try:
        answer = call.write("SignIn.finish", {"pending": pending, "code": call.field("code")})
    except ServiceError as error:
        if error.code in (errors.SECOND_FACTOR_REQUIRED, errors.SECOND_FACTOR_INVALID):
            return _code_page(call, pending, target, status=401, message=error.message)
        # Expired, completed, or throttled: the sign-in starts again.
        return _login_page(call, status=error.status, target=target, message=error.message)
    _start_session(call, answer["token"], answer["remember"], target, "logged_in")


def _enrol_step(call, target):
    pending = call.field("pending")
    try:
        answer = call.write("SignIn.enrol", {"pending": pending, "code": call.field("code")})
    except ServiceError as error:
        if error.code == errors.SECOND_FACTOR_INVALID:
            return _enrol_page(call, pending, target, status=401, message=error.message)
        return _login_page(call, status=error.status, target=target, message=error.message)
    if call.token:
        call.write("User.logout", {"token": call.token})
    call.start_session(answer["token"], asked_to_remember=answer["remember"])
    call.whoami()
    # Shown once, on this page only: never through a redirect.
    call.render("login_enrol.html", title="Two-factor sign-in is set up", step="done",
                target=target, recovery_codes=answer["recovery_codes"])


def _code_page(call, pending, target, status=200, message=None):
    call.render("login_code.html", status=status, title="Two-factor sign-in", pending=pending,
                target=target, message=message)
    _no_referrer(call)


def _enrol_page(call, pending, target, status=200, message=None):
    enrolment = call.write("SignIn.enrolment", {"pending": pending})
    call.render("login_enrol.html", status=status, title="Set up two-factor sign-in",
                step="enrol", pending=pending, target=target, message=message,
                enrolment=enrolment, qr_code=Markup(enrolment["qr_code"]))
    _no_referrer(call)


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


# token.cgi's actions (the reference's names) on a password token and on an
# e-mail address change token; the others (request_new_account,
# confirm_new_account, cancel_new_account) take an account token.
_PASSWORD_ACTIONS = ("cfmpw", "chgpw", "cxlpw")
_EMAIL_ACTIONS = ("cfmem", "chgem", "cxlem")
_CANCEL_ACTIONS = ("cxlpw", "cancel_new_account", "cxlem")


class Token(Page):
    """token.cgi: the pages a mailed link opens, and the forgotten-password
    form's target, over the operations of accounts by mail.

    GET a=cfmpw&t=T: the form for a new password (POST a=chgpw sets it);
    GET a=request_new_account&t=T: the form for a new account's name and
    password (POST a=confirm_new_account creates it and signs in); GET
    a=cfmem&t=T: the form that confirms a new e-mail address with the
    account's password (POST a=chgem changes it); GET a=cxlpw /
    a=cancel_new_account / a=cxlem: a button that cancels the link (POST).
    POST a=reqpw: mail a link to choose a new password. A token that does
    not work answers the operation's error and changes nothing."""

    @responder
    def on_get(self, call):
        # The visitor first: a refused token's page still shows who is signed in.
        call.whoami()
        action, secret = call.query.get("a") or "", call.query.get("t") or ""
        if action not in ("cfmpw", "cxlpw", "request_new_account", "cancel_new_account",
                          "cfmem", "cxlem"):
            return _unknown(call, action)
        checked = call.read_one("User.check_token", _token_params(action, secret))
        if action == "cfmpw":
            return _password_form(call, secret, checked["login"])
        if action == "request_new_account":
            return _account_form(call, secret, checked["login"])
        if action == "cfmem":
            if checked["type"] != "emailnew":
                # The old address's link only cancels, as the reference's does.
                return _unknown(call, action)
            return _email_form(call, secret, checked)
        call.render("token.html", title="Cancel the link", step="cancel", action=action,
                    token=secret, login=checked["login"], kind=checked["type"],
                    email=checked.get("email"))
        _no_referrer(call)

    @responder
    def on_post(self, call):
        call.check_csrf()
        call.whoami()
        action, secret = call.field("a"), call.field("t")
        if action == "reqpw":
            return self._request_password(call)
        if action not in ("chgpw", "cxlpw", "confirm_new_account", "cancel_new_account",
                          "chgem", "cxlem"):
            return _unknown(call, action)
        params = _token_params(action, secret)
        if action in _CANCEL_ACTIONS:
            answer = call.write("User.cancel_token", params)
            return call.render("token.html", title="Link cancelled", step="cancelled",
                               kind=answer["type"], login=answer["login"])
        if action == "chgem":
            return self._change_email(call, secret)
        password, again = call.field("password"), call.field("matchpassword")
        if action == "chgpw":
            return self._change_password(call, secret, password, again)
        return self._create_account(call, secret, password, again)

    def _request_password(self, call):
        login = call.field("loginname").strip()
        try:
            call.write("User.request_password_reset", {"login": login})
        except ServiceError as error:
            _login_page(call, status=errors.http_status(error.code),
                        reset_message=error.message)
            return
        # The same page whether or not the login has an account.
        call.render("token.html", title="Check your mail", step="mailed", login=login)

    def _change_email(self, call, secret):
        try:
            answer = call.write("User.change_email", {"email_token": secret,
                                                      "password": call.field("password")})
        except ServiceError as error:
            if error.code == errors.USER_ERROR:
                raise                  # a link that does not work (or a throttled sign-in)
            checked = call.read_one("User.check_token", {"email_token": secret})
            return _email_form(call, secret, checked, status=errors.http_status(error.code),
                               message=error.message)
        call.render("token.html", title="E-mail address changed", step="email_changed",
                    login=answer["login"])

    def _change_password(self, call, secret, password, again):
        if password != again:
            checked = call.read_one("User.check_token", {"reset_token": secret})
            return _password_form(call, secret, checked["login"], status=400,
                                  message="The two passwords are not the same.")
        visitor = call.user
        try:
            answer = call.write("User.reset_password", {"reset_token": secret,
                                                        "password": password})
        except ServiceError as error:
            if error.code == errors.USER_ERROR:
                raise
            checked = call.read_one("User.check_token", {"reset_token": secret})
            return _password_form(call, secret, checked["login"],
                                  status=errors.http_status(error.code), message=error.message)
        if visitor is not None and visitor["login"] != answer["login"]:
            # Someone signed in as another account used the link: theirs stays.
            call.redirect("/", notice="password_reset_other")
            return
        # Every session of the account ended with the reset; this browser's too.
        call.token = None
        call.end_session()
        call.redirect(url("/login"), notice="password_reset")

    def _create_account(self, call, secret, password, again):
        if password != again:
            checked = call.read_one("User.check_token", {"account_token": secret})
            return _account_form(call, secret, checked["login"], status=400,
                                 message="The two passwords are not the same.",
                                 realname=call.field("realname"))
        try:
            created = call.write("User.create_account", {
                "account_token": secret, "password": password,
                "full_name": call.field("realname")})
        except ServiceError as error:
            if error.code not in (errors.OBJECT_NOT_SPECIFIED, errors.PASSWORD_TOO_SHORT,
                                  errors.PASSWORD_NOT_COMPLEX):
                raise
            checked = call.read_one("User.check_token", {"account_token": secret})
            return _account_form(call, secret, checked["login"],
                                 status=errors.http_status(error.code), message=error.message,
                                 realname=call.field("realname"))
        # Signed in with the password just chosen, as the reference does
        # (through the second factor's enrolment when a group needs one).
        answer = call.write("SignIn.begin", {"login": created["login"], "password": password})
        _after_password(call, answer, "/", False, notice="account_created")


def _token_params(action, secret):
    name = ("reset_token" if action in _PASSWORD_ACTIONS
            else "email_token" if action in _EMAIL_ACTIONS else "account_token")
    return {name: secret}


def _email_form(call, secret, checked, status=200, message=None):
    call.render("token.html", status=status, title="Confirm your new e-mail address",
                step="email", token=secret, login=checked["login"], email=checked["email"],
                message=message)
    _no_referrer(call)


def _password_form(call, secret, login, status=200, message=None):
    call.render("token.html", status=status, title="Choose a new password", step="password",
                token=secret, login=login, message=message)
    _no_referrer(call)


def _account_form(call, secret, login, status=200, message=None, realname=""):
    call.render("token.html", status=status, title="Create your account", step="account",
                token=secret, login=login, message=message, realname=realname)
    _no_referrer(call)


def _no_referrer(call):
    # The address holds the link's secret: no request from this page names it.
    call.resp.set_header("Referrer-Policy", "no-referrer")


def _unknown(call, action):
    call.render("error.html", status=400, title="Sorry", code=None,
                message=f"This link or form asks for something this site does not do "
                        f"(action '{action}').")


class CreateAccount(Page):
    """createaccount.cgi: an address asks for an account (only while the
    parameter createemailregexp lets people create their own); the link to
    finish it comes by mail."""

    @responder
    def on_get(self, call):
        allowed = call.read_one("User.can_create_account")["can_create_account"]
        if call.user is not None:
            call.redirect("/")
            return
        self._form(call, allowed)

    def _form(self, call, allowed, status=None, message=None, email=""):
        call.render("createaccount.html", status=status or (200 if allowed else 403),
                    title="Create an account", allowed=allowed, message=message, email=email)

    @responder
    def on_post(self, call):
        call.check_csrf()
        email = call.field("login").strip()
        try:
            call.write("User.offer_account_by_email", {"email": email})
        except ServiceError as error:
            allowed = call.read_one("User.can_create_account")["can_create_account"]
            return self._form(call, allowed, status=errors.http_status(error.code),
                              message=error.message, email=email)
        # The same page whether or not the address has an account already.
        call.render("token.html", title="Check your mail", step="offered", login=email)


def _can_create_account(call):
    return call.read_one("User.can_create_account")["can_create_account"]


def _login_page(call, status=200, target="/", message=None, login="", reset_message=None,
                can_create_account=None):
    """The sign-in page, with the forgotten-password form, and the link to
    create an account while people may."""
    if can_create_account is None:
        can_create_account = _can_create_account(call)
    call.render("login.html", status=status, title="Sign in", target=target, message=message,
                login=login, reset_message=reset_message, can_create_account=can_create_account)


def login_url(target):
    return url("/login", target=target)
