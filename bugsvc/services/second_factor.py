"""The second factor (TOTP) and the web pages' sign-in in steps: operations
the web pages run (api/operations.py's PAGE_OPERATIONS), served by neither
REST nor RPC, since Bugzilla 5.2 has none of them. API clients sign in with
User.login and its `totp` parameter, or use API keys. The behaviour lives
in bugsvc.accounts (second_factor.py, sign_in.py)."""

from ..accounts import second_factor, sign_in
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError


# The sign-in page's steps ----------------------------------------------------------------

def begin_sign_in(ctx, params):
    """The sign-in page's first step.

    params: login, password, restrict_login (the token works only from the
    caller's address), remember (the visitor asked to stay signed in).
    Returns {"id", "token"} when signed in, or {"pending", "enrol"}: the
    secret of the sign-in that waits for the second factor's code (or, when
    enrol, for the enrolment of one), for the next step.
    Errors: 50 login or password missing; 300, 301, 32000 as User.login.
    """
    p = Params(params)
    login_name, password = p.str("login"), p.str("password")
    if login_name is None or password is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "The function 'login' requires the parameters 'login' and 'password'.")
    return sign_in.start_page_sign_in(ctx, login_name, password, p.bool("restrict_login"),
                                      p.bool("remember"))


def finish_sign_in(ctx, params):
    """The sign-in page's second step.

    params: pending (the first step's secret), code.
    Returns {"id", "token", "remember"}.
    Errors: 32000 a pending sign-in unknown, expired, completed, or sent
    from another address (or a throttled login name); 330 no code; 331 a
    wrong or used code.
    """
    p = Params(params)
    return sign_in.finish_page_sign_in(ctx, p.str("pending"), p.str("code"))


def sign_in_enrolment(ctx, params):
    """What the enrolment page of a waiting sign-in shows.

    params: pending. Returns {"login", "secret", "uri", "qr_code"}.
    Errors: 32000 a pending sign-in that does not wait for an enrolment.
    """
    return sign_in.enrolment_at_sign_in(ctx, Params(params).str("pending"))


def enrol_at_sign_in(ctx, params):
    """Confirm the enrolment of a waiting sign-in and sign in.

    params: pending, code. Returns {"id", "token", "remember",
    "recovery_codes"}.
    Errors: as sign_in_enrolment; 331 not the app's current code.
    """
    p = Params(params)
    return sign_in.enrol_at_sign_in(ctx, p.str("pending"), p.str("code"))


# One's own second factor, and an administrator's reset -----------------------------------

def get(ctx, params):
    """The caller's second factor, or (editusers) another account's.

    params: user_id (optional). Returns {"enabled", "recovery_codes_left",
    "required"}; never its secret.
    Errors: 304 another account's, outside editusers.
    """
    return second_factor.status(ctx, Params(params).int("user_id"))


def begin(ctx, params):
    """Start setting up a second factor (or show the waiting one again).

    Returns {"secret", "uri", "qr_code"}, shown while it waits for the
    first code only.
    Errors: 32000 the caller has one already.
    """
    return second_factor.start(ctx)


def confirm(ctx, params):
    """Confirm the second factor being set up with the app's first code.

    params: code. Returns {"recovery_codes"} (shown once).
    Errors: 331 not the app's current code.
    """
    return {"recovery_codes": second_factor.confirm(ctx, Params(params).str("code"))}


def disable(ctx, params):
    """Remove one's second factor.

    params: code (a current or recovery code) or password.
    Returns {}. Errors: 50 neither; 331 a wrong code, 300 a wrong password
    (both counted like a wrong password); 332 a member of mfa_group;
    32000 the login name waits.
    """
    p = Params(params)
    second_factor.disable(ctx, p.str("code"), p.str("password"))
    return {}


def reset(ctx, params):
    """An administrator removes another account's second factor (audited).

    params: user_id. Returns {"reset": whether it had one}.
    Errors: 304 not in editusers; 51 no such account; 50 no user_id.
    """
    user_id = Params(params).int("user_id")
    if user_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Name the account whose second factor to reset.")
    return {"reset": second_factor.reset(ctx, user_id)}
