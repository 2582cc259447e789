"""Users and login: log in and out, check a login, create, update and read
accounts (interface "Users and login"). The behaviour lives in
bugsvc.accounts (account.py, sign_in.py)."""

from ..accounts import account, oidc, sign_in
from ..call.fields import Shape
from ..call.params import Params
from ..catalogue import group_control
from ..errors import (
    AUTH_FAILURE,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    PARAM_MUST_BE_NUMERIC,
    USER_ACCESS_DENIED,
    ServiceError,
    require_group,
    require_login,
)


# include/exclude shape of a user.
USER_SHAPES = {"users": Shape()}
# Update User parameters only editusers members may give; blessers may give `groups`.
_EDITUSERS_FIELDS = ("full_name", "email", "password", "email_enabled", "login_denied_text",
                     "bless_groups", "reset_failed_logins")


# Login -----------------------------------------------------------------------

def login(ctx, params):
    """Log in with a login name and password.

    params: login, password (also under any credential parameter name or
    header: Bugzilla_login/Bugzilla_password, X-BUGZILLA-LOGIN/
    X-BUGZILLA-PASSWORD ...), restrict_login (also Service_restrictlogin,
    Bugzilla_restrictlogin): the token is valid only from the caller's
    address; totp (also Bugzilla_totp, Service_totp, X-BUGZILLA-TOTP): the
    second factor's code, for an account that has one (bugsvc's own).
    Returns {"id", "token"}.
    Errors: 50 login or password missing; 300 wrong login or password (or
    an account without one, or an empty login); 301 disabled; 330 no
    `totp` for an account with a second factor; 331 a wrong or used code;
    332 a member of mfa_group without a second factor; 32000 too many
    failures for this login name: the password is not checked until its
    delay has passed.
    """
    p = Params(params)
    login_name, password = p.str("login"), p.str("password")
    if login_name is None or password is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "The function 'login' requires the parameters 'login' and 'password'.")
    user_id, token = sign_in.sign_in(ctx, login_name, password, p.bool("restrict_login"),
                                     p.str("totp"))
    return {"id": user_id, "token": token}


def oidc_providers(ctx, params):
    """The OpenID Connect providers people may sign in with (bugsvc's own).
    Returns {"providers": [{"name"}]} (none while the extra `oidc` is not
    installed)."""
    if not oidc.available():
        return {"providers": []}
    return {"providers": [{"name": provider["name"]} for provider in
                          oidc.parse_providers(ctx.param("oidc_providers"))]}


def _oidc_params(ctx, params, *names):
    p = Params(params)
    values = [p.str(name) for name in ("provider",) + names]
    if any(not value for value in values):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "This call requires the parameters "
                           + ", ".join(f"'{n}'" for n in ("provider",) + names) + ".")
    if not oidc.available():
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Signing in with a provider is not installed.")
    return [oidc.provider_named(ctx.param("oidc_providers"), values[0])] + values[1:]


def oidc_authorization(ctx, params):
    """Start signing in with an OpenID Connect provider (bugsvc's own).

    params: provider (its name), redirect_uri (where it sends the browser
    back: this site's /oidc/callback).
    Returns {"url" (the provider's page to open), "state", "nonce",
    "code_verifier"} (kept by the client until the provider sends it back).
    Errors: 50 a parameter missing; 51 no such provider; -32000 the
    provider could not be used.
    """
    provider, redirect_uri = _oidc_params(ctx, params, "redirect_uri")
    return oidc.authorization(provider, redirect_uri)


def login_oidc(ctx, params):
    """Finish signing in with an OpenID Connect provider (bugsvc's own): the
    authorization code is exchanged and its id_token checked before this
    call's connection is touched.

    params: provider, code, redirect_uri, code_verifier, nonce (those of
    oidc_authorization's answer, and the code the provider sent back).
    Returns {"id", "token"} like login; for an account with a second
    factor (or a member of mfa_group without one), {"pending", "enrol"}
    instead, which the sign-in page's second step completes with the code.
    Errors: 50 a parameter missing; 51 no such provider; -32000 the
    provider could not be used; 32000 an id_token that is not right, no
    verified e-mail address, or no account while oidc_create_accounts is
    off; 301 disabled; 500 / 501 the address is not acceptable here.
    """
    provider, code, redirect_uri, verifier, nonce = _oidc_params(
        ctx, params, "code", "redirect_uri", "code_verifier", "nonce")
    claims = oidc.verified_claims(provider, code, redirect_uri, verifier, nonce)
    user_id = oidc.account_of(ctx, provider, claims, ctx.param_is_on("oidc_create_accounts"))
    return sign_in.start_external_sign_in(ctx, user_id)


def logout(ctx, params):
    """Invalidate a login token.

    params: token (also Service_token, Bugzilla_token, X-BUGZILLA-TOKEN).
    Returns None ({"result": null}); a token that is unknown, expired,
    already logged out or missing does nothing.
    """
    sign_in.sign_out(ctx, Params(params).str("token"))
    return None


def valid_login(ctx, params):
    """Whether the call's credentials sign in as `login`, as the reference
    answers it: a login token given (also Service_token, Bugzilla_token,
    X-BUGZILLA-TOKEN) is checked; otherwise the caller signs in with
    whatever came (an API key, or a login and password) and its own login
    is compared with `login` (exactly, as the reference compares it).

    params: login; the credentials.
    Returns True or False ({"result": ...}): false also without any
    credentials, and for a token that is unknown, expired, logged out,
    malformed, bound to another address or of a disabled account, as the
    interface document states (the reference answers 32000 there; such a
    token counts against the caller's address like one presented to any
    call).
    Errors: 50 login missing; 306 an API key that is not valid; 300 a wrong
    login or password; 301 a disabled account (key or password); 410 no
    credentials while requirelogin is on; 32000 a throttled attempt.
    """
    p = Params(params)
    login_name = p.get("login")
    if login_name is None or isinstance(login_name, (list, dict)):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'valid_login' requires 'login'.")
    token = None if ctx.credentials else p.str("token")
    return sign_in.signs_in_as(ctx, str(login_name), token)


# Get -------------------------------------------------------------------------

def get(ctx, params):
    """Read accounts.

    params: ids, names (login names), match (substrings of login or real
    name; `*` is a wildcard), limit (matches per string, capped by
    maxusermatches), include_disabled (for match only), group_ids, groups
    (keep only members of at least one of them).
    Returns {"users": [User]}: logged out id, real_name, name; logged in
    also email, can_login, groups (all of them for one's own account and
    for editusers, else those the caller may bless); editusers also
    email_enabled, login_denied_text; one's own account also saved_searches,
    saved_reports.
    Errors: 50 none of ids, names, match; 505 ids or match while logged out;
    51 unknown group id (creategroups/editusers members; others 804), or
    unknown account (for a caller who sees every account); 304 an account
    the caller may not see (or, to a caller who does not see every account,
    one that does not exist);
    804 a group name that is unknown or not the caller's; 52 a negative limit.
    """
    return _find(ctx, params, administering=False)


def find_to_edit(ctx, params):
    """Read accounts as editusers.cgi lists and opens them (a page
    operation): the params, answer and errors of User.get, except that
    members of editusers see every account while usevisibilitygroups is
    on (others see the accounts User.get shows them)."""
    return _find(ctx, params, administering=True)


def _find(ctx, params, administering):
    p = Params(params)
    given = {name: p.get(name) is not None for name in ("ids", "names", "match")}
    if not any(given.values()):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.get' requires one of the "
                                                 "parameters 'ids', 'names' or 'match'.")
    if not ctx.caller.is_logged_in and (given["ids"] or given["match"]):
        what = "by id" if given["ids"] else "by matching"
        raise ServiceError(USER_ACCESS_DENIED, f"Logged-out users cannot look up accounts {what}.")
    ids, names = p.int_list("ids"), p.str_list("names")
    limit = p.int("limit") or 0
    if limit < 0:
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           "The parameter 'limit' must be a positive number.")
    users = account.find(ctx, ids, names, p.str_list("match"), limit, p.bool("include_disabled"),
                         p.int_list("group_ids"), p.str_list("groups"), administering)
    return {"users": users}


# Create ------------------------------------------------------------------------

def create(ctx, params):
    """Create an account (editusers).

    params: email (the login, required), full_name (python-bugzilla's `name`
    is accepted for it), password (trimmed; blank or omitted: the account
    exists but cannot log in with a password).
    Returns {"id"}. The account joins the groups whose user_regexp matches.
    Errors: 304 not in editusers, also when logged out (as the reference:
    its web-service tests expect 304 there); 50 no email; 501 address not
    acceptable; 500 already taken (any case); 502 password shorter than 6;
    305 password not complex enough.
    """
    if not ctx.caller.in_group("editusers"):
        raise ServiceError(AUTH_FAILURE, "Sorry, you aren't a member of the 'editusers' group, "
                                         "and only users with that membership may create "
                                         "accounts.")
    p = Params(params)
    login_name = (p.str("email") or "").strip()
    if not login_name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.create' requires 'email'.")
    real_name = p.str("full_name") if p.get("full_name") is not None else p.str("name")
    password = (p.str("password") or "").strip()
    return {"id": account.create(ctx, login_name, real_name, password)}


# Update ------------------------------------------------------------------------

def _group_request(p, name):
    """A `groups`/`bless_groups` object as {"set"|"add"|"remove": [groups
    as given]}; None when not given. Errors: 53 not an object of arrays."""
    if p.get(name) is None:
        return None
    request = {}
    for key, values in p.dict(name).items():
        if key not in ("set", "add", "remove") or values is None:
            continue
        if not isinstance(values, list):
            raise ServiceError(PARAM_INVALID, f"'{name}.{key}' must be an array of groups.")
        request[key] = values
    return request


def update(ctx, params):
    """Change accounts.

    params: ids, names (the accounts; the path gives the first), full_name,
    email (the login; one account only), password, email_enabled,
    login_denied_text (non-empty disables the account), groups and
    bless_groups ({"add", "remove", "set"}: group ids or names; `set` wins
    and keeps the groups the caller may not bless; a group both added and
    removed is added), reset_failed_logins (true: forget the wrong passwords
    counted against the account, so its password sign-ins are checked again
    at once; audited, not in `changes`). Only direct grants change;
    user_regexp memberships follow the login. A new login, password or
    login_denied_text ends the account's login tokens.
    Members of editusers may change everything; a caller who may bless some
    groups (as the reference's user admin pages allow) only `groups`, of
    accounts it can see.
    Returns {"users": [{"id", "changes"}]}; the password never shows.
    Errors: 410 logged out; 304 not allowed, or a group the caller may not
    bless (or that does not exist), or an account the caller may not see
    (or that does not exist, unless it sees every account); 50 no ids or
    names; 51 unknown account;
    53 a groups object that is not one of arrays; 500, 501, 502, 305 as in
    create. Nothing changes when any check fails.
    """
    require_login(ctx)
    p = Params(params)
    if not ctx.caller.in_group("editusers"):
        if not ctx.caller.can_bless_any or any(p.get(f) is not None for f in _EDITUSERS_FIELDS):
            require_group(ctx, "editusers", "change these account details")
    if p.get("ids") is None and p.get("names") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.update' requires 'ids' or "
                                                 "'names'.")
    ids, names = p.int_list("ids"), p.str_list("names")
    given = {name: p.str(name) for name in ("full_name", "email", "password",
                                            "login_denied_text") if p.get(name) is not None}
    if p.get("email_enabled") is not None:
        given["email_enabled"] = p.bool("email_enabled")
    given["reset_failed_logins"] = p.bool("reset_failed_logins")
    groups, bless_groups = _group_request(p, "groups"), _group_request(p, "bless_groups")
    return {"users": account.update(ctx, ids, names, given, groups, bless_groups)}


# The caller's own account ----------------------------------------------------------

def whoami(ctx, params):
    """The account the call runs as (bugzilla.mozilla.org's whoami).

    params: none.
    Returns {"id", "real_name", "name" (the login as shown), "login",
    "groups" (names of the groups the account is a member of),
    "is_insider" (sees and sets private comments and attachments),
    "is_timetracker" (sees and changes the time fields),
    "saved_searches" [{"id", "name", "query"}],
    "settings" {"color_scheme": "system", "light" or "dark"}, "comment_markdown"
    (its comment forms start with Markdown chosen), "product_rights"
    {"editcomponents", "editbugs", "canconfirm": names of the products whose
    group controls give the account that right (beside its groups)}}.
    Errors: 410 logged out.
    """
    require_login(ctx)
    own = account.own_account(ctx)
    own["product_rights"] = group_control.product_rights(ctx)
    return own


def update_self(ctx, params):
    """Change one's own real name, password or settings (the reference's
    preferences page; User.update needs editusers for these).

    params: full_name; password (the new one) with current_password;
    settings ({"color_scheme": "system", "light" or "dark"}); comment_markdown
    (bool: the comment forms start with Markdown chosen).
    A new password ends every login token of the account, the one of this
    call included (its sessions end); API keys stay valid.
    Returns {"changes": {"full_name": {"removed", "added"}}} (the password
    never shows; that it changed is audited).
    Errors: 410 logged out; 53 an unknown setting or value; 50 password
    without current_password; 300 a
    wrong current password (counted like a failed sign-in of the login);
    32000 its sign-ins wait after too many failures; 502 new password
    shorter than 6; 305 not complex enough. Nothing changes on an error.
    """
    require_login(ctx)
    p = Params(params)
    password = current = None
    if p.get("password") is not None:
        current = p.str("current_password")
        if current is None:
            raise ServiceError(OBJECT_NOT_SPECIFIED, "To change your password, give your "
                                                     "current password too "
                                                     "(current_password).")
        password = p.str("password")
    full_name = p.str("full_name") if p.get("full_name") is not None else None
    markdown = p.bool("comment_markdown") if p.has("comment_markdown") else None
    return {"changes": account.update_own(ctx, full_name, password, current,
                                          p.get("settings"), markdown)}
