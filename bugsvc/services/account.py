"""Accounts by mail: self-registration, password reset and one's own
e-mail address changed through mailed links (interface "Users and login";
see the account of it in bugsvc/accounts/self_service.py, where the
behaviour lives)."""

from ..accounts import self_service, tokens
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login


# The parameter naming each kind of mailed link's token.
_TOKEN_PARAMS = (("reset_token", tokens.PASSWORD), ("account_token", tokens.ACCOUNT),
                 ("email_token", self_service.EMAIL))


def offer_account_by_email(ctx, params):
    """Mail an address a link to create its account (self-registration).

    params: email (the address, which becomes the login).
    Returns null. When an account already has this login, its owner gets a
    notice instead, and the answer is the same.
    Errors: 50 no email; 501 self-registration is off (createemailregexp
    empty), or the address does not match createemailregexp, is blocked
    (blocked_emails, blocked_email_domains) or is no acceptable login (as
    User.create checks it: emailregexp, length, ASCII); 32000 more than
    ACCOUNT_REQUESTS_PER_ADDRESS requests from the client's address, or
    ACCOUNT_REQUESTS_PER_DOMAIN for addresses of one domain, in an hour
    (counting the requests that mail someone; see accounts/self_service.py).
    """
    p = Params(params)
    address = (p.str("email") or "").strip()
    if not address:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.offer_account_by_email' "
                                                 "requires 'email'.")
    self_service.offer_account(ctx, address)
    return None


def create_account(ctx, params):
    """Create the account a mailed link offered (see offer_account_by_email).

    params: account_token (the link's t), password, full_name.
    Returns {"id", "login"}; the token is used up. The account joins the
    groups whose user_regexp matches, like any new account.
    Errors: 50 token or password missing; 32000 a token that does not
    exist, expired or was used; 502 password shorter than 6; 305 password
    not complex enough; 501 the address no longer matches
    createemailregexp; 500 an account got the address meanwhile.
    """
    p = Params(params)
    secret, password = p.str("account_token"), p.str("password")
    if not secret or not password:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.create_account' requires "
                                                 "'account_token' and 'password'.")
    user_id, login = self_service.create_offered_account(ctx, secret, password,
                                                         p.str("full_name"))
    return {"id": user_id, "login": login}


def request_password_reset(ctx, params):
    """Mail an account a link to choose a new password.

    params: login.
    Returns null, whether or not an account has this login (nothing is sent
    when none has, or when it is disabled).
    Errors: 50 no login.
    """
    login = (Params(params).str("login") or "").strip()
    if not login:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.request_password_reset' "
                                                 "requires 'login'.")
    self_service.request_password_reset(ctx, login)
    return None


def reset_password(ctx, params):
    """Choose a new password with a mailed link's token.

    params: reset_token (the link's t), password.
    Returns {"id", "login"}. The token and every other password token of the
    account are used up, and the account's login tokens end (its sessions
    elsewhere are logged out). Audited like a password change.
    Errors: 50 token or password missing; 32000 a token that does not
    exist, expired or was used (or whose account was disabled); 502
    password shorter than 6; 305 password not complex enough.
    """
    p = Params(params)
    secret, password = p.str("reset_token"), p.str("password")
    if not secret or not password:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.reset_password' requires "
                                                 "'reset_token' and 'password'.")
    user_id, login = self_service.reset_password(ctx, secret, password)
    return {"id": user_id, "login": login}


def _token(params, order=_TOKEN_PARAMS):
    """(kind, secret) of the first token parameter of `order` given; None
    when none is."""
    p = Params(params)
    for name, kind in order:
        if p.str(name):
            return kind, p.str(name)
    return None


def check_token(ctx, params):
    """What a mailed token is for, before its page asks for more (the web
    pages show the form only for a token that works).

    params: reset_token, account_token or email_token.
    Returns {"type": "password" | "account", "login"} (the account's login,
    or the address the account would get); for an email_token {"type":
    "emailnew" | "emailold", "login": the account's login now, "email": the
    address the token was mailed to (the new one, or the one changed
    from)}.
    Errors: 50 none given; 32000 a token that does not exist, expired or
    was used.
    """
    token = _token(params)
    if token is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Give reset_token, account_token or email_token.")
    return self_service.token_purpose(ctx, *token)


def cancel_token(ctx, params):
    """Cancel what a mailed link offers (the reference's token.cgi actions
    cxlpw, cancel_new_account and cxlem): the token, and every other token
    of its kind for the same account or address, stop working; the password
    or the missing account stay as they are. An e-mail address change is
    cancelled from either address, as the reference does it: no link of it
    works any more, and when the link mailed to the address changed from
    cancels a change that was made already, the account gets that address
    back (while no other account took it) and its sessions end.

    params: reset_token, account_token or email_token (the link's t).
    Returns {"type", "login"} as check_token (the login it has afterwards).
    Errors: 50 none given; 32000 a token that does not exist, expired or
    was used.
    """
    token = _token(params, _TOKEN_PARAMS[2:] + _TOKEN_PARAMS[:2])
    if token is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Give reset_token, account_token or "
                                                 "email_token.")
    return self_service.cancel_token(ctx, *token)


# Changing one's own e-mail address ---------------------------------------------------

def request_email_change(ctx, params):
    """Ask to change one's own e-mail address, which is one's login (the
    reference's preferences page, while the parameter allowemailchange is
    on).

    params: new_email, current_password.
    Returns null. Nothing changes yet: the new address is mailed a link to
    confirm the change (`{urlbase}token.cgi?t=TOKEN&a=cfmem`, or
    User.change_email with the token and the password), and the current one
    a notice with a link that cancels it (`&a=cxlem`, or User.cancel_token
    with email_token), which also takes the address back for three days
    after the change was made. Giving one's own address again changes
    nothing.
    Errors: 410 logged out; 50 new_email or current_password missing; 32000
    changing one's address is turned off here (allowemailchange), or a
    change of the account's address is under way already (until it is
    confirmed and three days have passed, or it is cancelled); 300 a wrong
    current password (counted like a failed sign-in of the login); 501 an
    address that is not valid here (emailregexp); 500 another account has
    it.
    """
    require_login(ctx)
    self_service.require_email_change_allowed(ctx)
    p = Params(params)
    new_email, password = (p.str("new_email") or "").strip(), p.str("current_password")
    if not new_email or password is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "To change your e-mail address, give the new "
                                                 "one (new_email) and your current password "
                                                 "(current_password).")
    self_service.request_email_change(ctx, new_email, password)
    return None


def change_email(ctx, params):
    """Confirm a change of e-mail address with the link mailed to the new
    address (the reference's token.cgi action chgem): the account's login
    becomes the new address; its sessions, API keys and the link mailed to
    the old address (which can still take the old address back) stay.
    Audited as a change of the account's email.

    params: email_token (the link's t), password (the account's).
    Returns {"id", "login"}.
    Errors: 50 token or password missing; 32000 a token that does not
    exist, expired, was used or cancelled (or whose account was disabled);
    300 a wrong password (counted like a failed sign-in of the login); 500
    another account got the address meanwhile; 501 the address is no
    longer valid here (emailregexp).
    """
    p = Params(params)
    secret, password = p.str("email_token"), p.str("password")
    if not secret or password is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.change_email' requires "
                                                 "'email_token' and 'password'.")
    user_id, login = self_service.confirm_email_change(ctx, secret, password)
    return {"id": user_id, "login": login}


def can_create_account(ctx, params):
    """Whether people may create their own account by mail here (the
    parameter createemailregexp is not empty), so a sign-in page knows to
    offer it, as the reference's does; the pattern itself stays private.

    params: none.
    Returns {"can_create_account": bool}.
    Errors: none.
    """
    return {"can_create_account": self_service.self_registration_open(ctx)}
