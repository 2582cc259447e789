"""Signing in with a login and password (and the second factor's code) for
a login token, the web pages' sign-in in steps (the password, then the code
or the enrolment of a second factor), signing out, and whether a call's
credentials sign in as a given login (the checks of passwords, codes, keys
and tokens and their throttling are auth.py's and second_factor.py's)."""

from ..errors import ACCOUNT_DISABLED, ServiceError, require_login
from . import auth, second_factor


def sign_in(ctx, login_name, password, bound_to_address, code=None):
    """Check the password and, for an account with a second factor, `code`,
    and make a login token (valid only from the caller's address when
    `bound_to_address`). Returns (account id, token).
    Errors: 300 wrong login or password (or an account without one, or an
    empty login); 301 disabled; 330 no code for an account with a second
    factor; 331 a wrong or used code; 332 the account must enrol a second
    factor first; 32000 too many failures for this login name.
    """
    # The operation opens a deferred transaction and the password is checked
    # before this call's connection is touched, so the failure count commits
    # although the call fails.
    user_id = ctx.auth.check_password(login_name, password, ctx.remote_ip, ctx.now, code)
    bound_to = ctx.remote_ip if bound_to_address else None
    return user_id, auth.create_token(ctx.conn, user_id, bound_to, ctx.now)


def start_page_sign_in(ctx, login_name, password, restrict, remember):
    """The first step of a sign-in on the pages: check the password, then
    go on as page_sign_in_after_first_factor says.

    Returns and errors: those of page_sign_in_after_first_factor, and of
    Authenticator.check_first_factor (300, 301, 32000).
    """
    user_id, subject = ctx.auth.check_first_factor(login_name, password, ctx.remote_ip, ctx.now)
    return page_sign_in_after_first_factor(ctx, user_id, subject, restrict, remember)


def page_sign_in_after_first_factor(ctx, user_id, subject, restrict, remember):
    """What a page sign-in of account `user_id` does once its first factor
    (a password, or whatever else proved who signs in) was right: an
    account with a second factor (or that must enrol one) gets a waiting
    sign-in instead of a login token, to complete with finish_page_sign_in
    (or enrol_at_sign_in) within second_factor.PENDING_MAX_AGE; any other
    is signed in (Authenticator.complete_sign_in). Call it before anything
    touches the call's own connection.

    subject: the throttling subject of the account's sign-ins; restrict:
    the token works only from the caller's address; remember: the visitor
    asked to stay signed in.
    Returns {"id", "token"} when signed in, else {"pending": its secret,
    "enrol": whether it waits for an enrolment}.
    """
    due = ctx.auth.second_factor_due(user_id)
    if due is None:
        ctx.auth.complete_sign_in(user_id, subject, None, ctx.now)
        bound_to = ctx.remote_ip if restrict else None
        return {"id": user_id, "token": auth.create_token(ctx.conn, user_id, bound_to, ctx.now)}
    # The call's own connection is touched only now (see sign_in).
    pending = second_factor.begin_pending(ctx.conn, user_id, ctx.remote_ip, restrict, remember,
                                          due == "enrol", ctx.now)
    return {"pending": pending, "enrol": due == "enrol"}


def finish_page_sign_in(ctx, pending, code):
    """The second step of a sign-in on the pages: the code for the waiting
    sign-in `pending`. Returns {"id", "token", "remember"}.
    Errors: 32000 `pending` unknown, used, expired or from another address
    (or the login name waits after too many failures); 330 no code; 331 a
    wrong or used code (counted like a wrong password).
    """
    row = ctx.auth.waiting_sign_in(pending, ctx.remote_ip, ctx.now, enrol=False)
    ctx.auth.complete_sign_in(row["user_id"], auth.login_subject(row["login"]), code, ctx.now,
                              counted=False, pending=pending)
    return _signed_in(ctx, row)


def enrolment_at_sign_in(ctx, pending):
    """What a member of mfa_group without a second factor needs to enrol
    one during its waiting sign-in `pending`: {"login", "secret", "uri",
    "qr_code"} (second_factor.enrolment_link).
    Errors: 32000 `pending` unknown, used, expired, from another address,
    or not waiting for an enrolment."""
    row = ctx.auth.waiting_sign_in(pending, ctx.remote_ip, ctx.now, enrol=True)
    secret = ctx.auth.begin_enrolment(row["user_id"], ctx.now)
    # The call's connection is read only after the enrolment was stored.
    return {"login": row["login"], **second_factor.enrolment_link(ctx.conn, secret, row["login"])}


def enrol_at_sign_in(ctx, pending, code):
    """Confirm the enrolment of the waiting sign-in `pending` with the
    app's first `code` and complete the sign-in. Returns {"id", "token",
    "remember", "recovery_codes"} (the codes shown once).
    Errors: as enrolment_at_sign_in; 331 a code that is not the app's
    current one (not counted: the secret was just shown to its owner)."""
    row = ctx.auth.waiting_sign_in(pending, ctx.remote_ip, ctx.now, enrol=True)
    codes = ctx.auth.confirm_enrolment(row["user_id"], code, ctx.now, pending=pending)
    ctx.auth.clear_failures(auth.login_subject(row["login"]))
    return {**_signed_in(ctx, row), "recovery_codes": codes}


def _signed_in(ctx, row):
    bound_to = ctx.remote_ip if row["restrict_login"] else None
    return {"id": row["user_id"], "remember": bool(row["remember"]),
            "token": auth.create_token(ctx.conn, row["user_id"], bound_to, ctx.now)}


def start_external_sign_in(ctx, user_id):
    """A page sign-in of account `user_id`, whom another check (an OpenID
    provider) proved, inside the call's own transaction: an account with a
    second factor (or that must enrol one) still gives its code, exactly as
    after a right password (page_sign_in_after_first_factor's answers).

    Returns {"id", "token"} when signed in, else {"pending", "enrol"}.
    Errors: 301 the account is disabled.
    """
    row = ctx.conn.execute("SELECT disabled_text FROM users WHERE id = ?", (user_id,)).fetchone()
    if row["disabled_text"]:
        raise ServiceError(ACCOUNT_DISABLED,
                           "Your account has been disabled: " + row["disabled_text"])
    due = second_factor.due(ctx.conn, user_id)
    if due is None:
        return {"id": user_id, "token": auth.create_token(ctx.conn, user_id, None, ctx.now)}
    pending = second_factor.begin_pending(ctx.conn, user_id, ctx.remote_ip, False, False,
                                          due == "enrol", ctx.now)
    return {"pending": pending, "enrol": due == "enrol"}


def sign_out(ctx, token):
    """End login token `token`; one missing, unknown, expired or ended does
    nothing."""
    if token:
        auth.delete_token(ctx.conn, token)


def signs_in_as(ctx, login_name, token=None):
    """True when the call's presented credentials (or, without any, `token`)
    sign in as `login_name`, compared exactly. A token is checked (false
    when not valid); an API key, or a login and password, signs in.
    Errors: 306 an API key that is not valid; 300 a wrong login or
    password; 301 a disabled account; 330, 331, 332 the second factor of a
    login and password; 410 no credentials while requirelogin
    is on; 32000 a throttled attempt.
    """
    creds = ctx.credentials or auth.Credentials(token=token)
    if creds.token:
        user_id = ctx.auth.token_owner(ctx.conn, creds.token, ctx.remote_ip, ctx.now)
    elif creds.api_key:
        caller, use = ctx.auth.identify(ctx.conn, auth.Credentials(api_key=creds.api_key),
                                        ctx.remote_ip, ctx.now)
        if use is not None:
            ctx.auth.record_use(use, ctx.remote_ip, ctx.now)
        user_id = caller.id
    elif creds.login is not None:
        user_id = ctx.auth.check_password(creds.login, creds.password, ctx.remote_ip, ctx.now,
                                          creds.totp)
    else:
        if ctx.param_is_on("requirelogin"):
            require_login(ctx)
        return False
    if user_id is None:
        return False
    row = ctx.conn.execute("SELECT login FROM users WHERE id = ?", (user_id,)).fetchone()
    return row is not None and row["login"] == login_name
