"""Acting as another account (Bugzilla's sudo, relogin.cgi): a member of
bz_sudoers, asked for its password again, makes its page session act as
another account for at most MAX_AGE, with a reason. While it acts, every
page runs as that account with that account's rights; the API keeps
answering as whoever its credentials name (sudo is the pages' session's
only, as Bugzilla keeps it in a cookie of its own). Members of
bz_sudo_protect are never acted as. The account acted as is mailed (the
outbox's "sudo_begun" mail); the beginning and the end are in the audit
log, as changes of the account acted as, made by the real account.

The session's login token keeps its own account (the real one) and notes
whom it acts as and since when; signing out ends the token and with it the
acting. A session whose real account left bz_sudoers, or whose account
acted as joined bz_sudo_protect, acts as its real account again.
"""

from dataclasses import replace
from datetime import timedelta

from .. import dates, errors
from ..errors import ServiceError
from ..store import audit, outbox
from . import second_factor
from .caller import load_caller
from .visibility import can_see_user


SUDOERS = "bz_sudoers"
PROTECTED = "bz_sudo_protect"
# How long a sudo session lasts at most (Bugzilla's MAX_SUDO_TOKEN_AGE).
MAX_AGE = timedelta(hours=6)
# A reason is kept to this many characters (as Bugzilla keeps it).
REASON_MAX = 200


def acting_caller(conn, real, acting, now):
    """The Caller of the account a page session of `real` (a Caller) acts
    as, with `sudoer_id`/`sudoer_login` naming `real`; None when it acts
    as nobody any more (older than MAX_AGE, `real` no longer in
    bz_sudoers, the account gone or in bz_sudo_protect).

    acting: (account id acted as, when it began as stored)."""
    target_id, started = acting
    if not started or started <= dates.to_db(now - MAX_AGE) or not real.in_group(SUDOERS):
        return None
    target = load_caller(conn, target_id)
    if target is None or target.in_group(PROTECTED):
        return None
    return replace(target, sudoer_id=real.id, sudoer_login=real.login)


def check_may_begin(caller):
    """Errors: 410 logged out; 32000 a sudo session in progress already
    (Bugzilla's sudo_in_progress); 304 `caller` is not in bz_sudoers."""
    if not caller.is_logged_in:
        raise ServiceError(errors.LOGIN_REQUIRED, "You must sign in to act as another user.")
    if caller.sudoer_id is not None:
        raise ServiceError(errors.USER_ERROR, f"You are already acting as {caller.login}; end "
                           "that session before you begin another.")
    if not caller.in_group(SUDOERS):
        raise ServiceError(errors.AUTH_FAILURE, "Only members of the group bz_sudoers may "
                           "act as another user.")


def _session(ctx, token):
    """(real Caller, token row) of page session `token`. Errors: 410 no
    valid session."""
    row = ctx.auth.token_session(ctx.conn, token, ctx.remote_ip, ctx.now) if token else None
    real = load_caller(ctx.conn, row["user_id"]) if row is not None else None
    if real is None:
        raise ServiceError(errors.LOGIN_REQUIRED, "You must sign in to act as another user.")
    return real, row


def needs_code(ctx):
    """True when beginning to act as another account asks the caller for
    a code of its second factor (it has one)."""
    return second_factor.is_enrolled(ctx.conn, ctx.caller.id)


def begin(ctx, token, target_login, reason, current_password, code=""):
    """Make page session `token` act as the account `target_login` (any
    case), for `reason` (kept to REASON_MAX characters), once the session's
    own account gave `current_password` and, when it has a second factor,
    its current `code` (or a recovery code), as bugzilla.mozilla.org asks
    before a sudo session. Mails the account acted as and
    records the beginning in the audit log. ctx.caller becomes the real
    account. Returns {"target": its login}.

    Errors: 410 no valid session; 32000 a sudo session in progress; 304 not
    in bz_sudoers; 32000 no password given (Bugzilla's
    sudo_password_required); 300 a wrong password (counted like a failed
    sign-in); 330 no code from an account with a second factor; 331 a wrong
    code (counted likewise); 51 no account `target_login` the caller may see; 32000 the
    account is in bz_sudo_protect (Bugzilla's sudo_protected). Nothing is
    stored on an error.
    """
    real, row = _session(ctx, token)
    acting = None
    if row["sudo_target_id"] is not None:
        acting = acting_caller(ctx.conn, real, (row["sudo_target_id"], row["sudo_started"]),
                               ctx.now)
    check_may_begin(acting or real)
    ctx.caller = real
    if not current_password:
        raise ServiceError(errors.USER_ERROR, "To act as another user you must enter your "
                           "own password again.")
    ctx.auth.check_current_password(ctx.conn, real.login, current_password, ctx.now)
    if second_factor.is_enrolled(ctx.conn, real.id):
        if not (code or "").strip():
            raise ServiceError(errors.SECOND_FACTOR_REQUIRED, "To act as another user, give "
                               "the current code of your authenticator app (or a recovery "
                               "code) too.")
        ctx.auth.check_current_code(ctx.conn, real.id, real.login, code, ctx.now)
    found = ctx.conn.execute("SELECT id, login FROM users WHERE lower(login) = lower(?)",
                             ((target_login or "").strip(),)).fetchone()
    if found is None or not can_see_user(ctx, found["id"]):
        raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                           f"There is no user named '{target_login}'.")
    target = load_caller(ctx.conn, found["id"])
    if target.in_group(PROTECTED):
        raise ServiceError(errors.USER_ERROR, f"The user {target.login} may not be "
                           "impersonated by sudoers.")
    reason = (reason or "").strip()[:REASON_MAX]
    ctx.conn.execute("UPDATE login_tokens SET sudo_target_id = ?, sudo_started = ?"
                     " WHERE token_hash = ?", (target.id, dates.to_db(ctx.now), row["token_hash"]))
    audit.record(ctx, "User", target.id, "sudo_session", None,
                 "began: " + reason if reason else "began")
    outbox.add_message(ctx.conn, outbox.MAIL, "sudo_begun", ctx.now, user_id=target.id,
                       data={"sudoer": real.login, "sudoer_name": real.real_name,
                             "reason": reason, "hours": int(MAX_AGE.total_seconds() // 3600)})
    return {"target": target.login}


def end(ctx, token):
    """End the acting of page session `token`, if it acts as someone (or
    did until MAX_AGE passed), recording the end in the audit log; the
    session goes on as its own account. ctx.caller becomes the real
    account. Returns {"ended": login of the account it acted as, or None}.
    Errors: 410 no valid session."""
    real, row = _session(ctx, token)
    ctx.caller = real
    if row["sudo_target_id"] is None:
        return {"ended": None}
    ctx.conn.execute("UPDATE login_tokens SET sudo_target_id = NULL, sudo_started = NULL"
                     " WHERE token_hash = ?", (row["token_hash"],))
    audit.record(ctx, "User", row["sudo_target_id"], "sudo_session", "began", "ended")
    login = ctx.conn.execute("SELECT login FROM users WHERE id = ?",
                             (row["sudo_target_id"],)).fetchone()
    return {"ended": login["login"] if login else None}
