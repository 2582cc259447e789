"""Acting as another account on the web pages (relogin.cgi's sudo):
operations the pages run (api/operations.py's PAGE_OPERATIONS), served by
neither REST nor RPC, as Bugzilla keeps sudo to its pages' session. The
behaviour lives in bugsvc.accounts.sudo."""

from ..accounts import account, sudo
from ..call.params import Params
from ..errors import require_login


def whoami(ctx, params):
    """The pages' User.whoami: the account the page runs as, and while a
    member of bz_sudoers acts as it, "sudoer": that member's login (else
    None).

    params: none. Returns User.whoami's keys and "sudoer".
    Errors: 410 logged out.
    """
    require_login(ctx)
    return {**account.own_account(ctx), "sudoer": ctx.caller.sudoer_login}


def prepare(ctx, params):
    """Whether the caller may begin acting as another account (the form of
    relogin.cgi?action=prepare-sudo). params: none. Returns {"needs_code":
    whether Sudo.begin asks for a code of the caller's second factor}.
    Errors: 410 logged out; 32000 acting already; 304 not in bz_sudoers.
    """
    sudo.check_may_begin(ctx.caller)
    return {"needs_code": sudo.needs_code(ctx)}


def begin(ctx, params):
    """Make the page session act as another account.

    params: target_login, reason, current_password (the caller's own), code
    (of the caller's second factor, when it has one).
    Returns {"target": the login acted as}.
    Errors: those of accounts.sudo.begin (410, 32000, 304, 300, 330, 331, 51).
    """
    p = Params(params)
    token = ctx.credentials.token if ctx.credentials is not None else None
    return sudo.begin(ctx, token, p.str("target_login") or "", p.str("reason") or "",
                      p.str("current_password") or "", p.str("code") or "")


def end(ctx, params):
    """End the page session's acting as another account. params: none.
    Returns {"ended": the login it acted as, or None}. Errors: 410 no
    valid session."""
    token = ctx.credentials.token if ctx.credentials is not None else None
    return sudo.end(ctx, token)
