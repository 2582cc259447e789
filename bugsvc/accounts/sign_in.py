"""Signing in with a login and password for a login token, signing out, and
whether a call's credentials sign in as a given login (the checks of
passwords, keys and tokens and their throttling are auth.py's)."""

from ..errors import ACCOUNT_DISABLED, ServiceError, require_login
from . import auth


def sign_in(ctx, login_name, password, bound_to_address):
    """Check the password and make a login token (valid only from the
    caller's address when `bound_to_address`). Returns (account id, token).
    Errors: 300 wrong login or password (or an account without one, or an
    empty login); 301 disabled; 32000 too many failures for this login name.
    """
    # The operation opens a deferred transaction and the password is checked
    # before this call's connection is touched, so the failure count commits
    # although the call fails.
    user_id = ctx.auth.check_password(login_name, password, ctx.remote_ip, ctx.now)
    bound_to = ctx.remote_ip if bound_to_address else None
    return user_id, auth.create_token(ctx.conn, user_id, bound_to, ctx.now)


def start(ctx, user_id):
    """A login token for account `user_id`, whom another check (an OpenID
    provider) signed in. Errors: 301 the account is disabled."""
    row = ctx.conn.execute("SELECT disabled_text FROM users WHERE id = ?", (user_id,)).fetchone()
    if row["disabled_text"]:
        raise ServiceError(ACCOUNT_DISABLED,
                           "Your account has been disabled: " + row["disabled_text"])
    return auth.create_token(ctx.conn, user_id, None, ctx.now)


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
    password; 301 a disabled account; 410 no credentials while requirelogin
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
        user_id = ctx.auth.check_password(creds.login, creds.password, ctx.remote_ip, ctx.now)
    else:
        if ctx.param_is_on("requirelogin"):
            require_login(ctx)
        return False
    if user_id is None:
        return False
    row = ctx.conn.execute("SELECT login FROM users WHERE id = ?", (user_id,)).fetchone()
    return row is not None and row["login"] == login_name
