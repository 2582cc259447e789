"""Users and login: log in and out, check a login, create, update and read
accounts (interface "Users and login").

Who may see whom: with the parameter `usevisibilitygroups` off (the default)
every caller sees every account; when it is on, a caller sees its own
account and the accounts that share a group membership with it, and members
of editusers see all.
"""

import re
import string

from ..accounts import access, auth, membership
from ..store import audit
from .. import dates
from ..call.changes import note
from ..store.db import placeholders
from ..accounts.email import visible_email
from ..errors import (ServiceError, require_group, require_login, ACCOUNT_EXISTS, AUTH_FAILURE,
                      ILLEGAL_EMAIL_ADDRESS, INVALID_GROUP_NAME, OBJECT_DOES_NOT_EXIST,
                      OBJECT_NOT_SPECIFIED, PARAM_INVALID, PARAM_MUST_BE_NUMERIC,
                      PASSWORD_NOT_COMPLEX, PASSWORD_TOO_SHORT, USER_ACCESS_DENIED)
from ..accounts.membership import GRANT_DIRECT
from ..call.params import Params, clean_text
from ..call.fields import Shape

PASSWORD_MIN_LENGTH = 6
LOGIN_MAX_LENGTH = 127

# include/exclude shape of a user.
USER_SHAPES = {"users": Shape()}
_COLUMNS = "u.id, u.login, u.real_name, u.disabled_text, u.email_enabled"
# Update User parameters only editusers members may give; blessers may give `groups`.
_EDITUSERS_FIELDS = ("full_name", "email", "password", "email_enabled", "login_denied_text",
                     "bless_groups", "reset_failed_logins")


# Login -----------------------------------------------------------------------

def login(ctx, params):
    """Log in with a login name and password.

    params: login, password (also under any credential parameter name or
    header: Bugzilla_login/Bugzilla_password, X-BUGZILLA-LOGIN/
    X-BUGZILLA-PASSWORD ...), restrict_login (also Service_restrictlogin,
    Bugzilla_restrictlogin): the token is valid only from the caller's address.
    Returns {"id", "token"}.
    Errors: 50 login or password missing; 300 wrong login or password (or
    an account without one, or an empty login); 301 disabled; 32000 too many
    failures for this login name: the password is not checked until its
    delay has passed.
    """
    # The operation opens a deferred transaction and the password is checked
    # before this call's connection is touched, so the failure count commits
    # although the call fails.
    p = Params(params)
    login_name, password = p.str("login"), p.str("password")
    if login_name is None or password is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "The function 'login' requires the parameters 'login' and 'password'.")
    user_id = ctx.auth.check_password(login_name, password, ctx.remote_ip, ctx.now)
    bound_to = ctx.remote_ip if p.bool("restrict_login") else None
    return {"id": user_id, "token": auth.create_token(ctx.conn, user_id, bound_to, ctx.now)}


def logout(ctx, params):
    """Invalidate a login token.

    params: token (also Service_token, Bugzilla_token, X-BUGZILLA-TOKEN).
    Returns None ({"result": null}); a token that is unknown, expired,
    already logged out or missing does nothing.
    """
    token = Params(params).str("token")
    if token:
        auth.delete_token(ctx.conn, token)
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
    creds = ctx.credentials or auth.Credentials(token=p.str("token"))
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
    return row is not None and row["login"] == str(login_name)


# Visibility --------------------------------------------------------------------

# visible_users_sql and can_see_user live in access.py (bugs check logins too).
visible_users_sql = access.visible_users_sql
can_see_user = access.can_see_user


def _named_users(ctx, ids, names):
    """Rows of the accounts named by `ids` and `names`, in that order, each once.

    Errors: 304 an account the caller may not see, or (answered alike) one
    that does not exist unless the caller sees every account; 51 no such
    account, for a caller who sees every account.
    """
    rows, seen = [], set()
    lookups = ([("u.id = ?", user_id, "id") for user_id in ids]
               + [("lower(u.login) = lower(?)", name, "login name") for name in names])
    for condition, value, kind in lookups:
        row = ctx.conn.execute(f"SELECT {_COLUMNS} FROM users u WHERE {condition}",
                               (value,)).fetchone()
        if row is None and access.sees_every_user(ctx):
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no user with the {kind} '{value}'.")
        if row is None or not can_see_user(ctx, row["id"]):
            raise ServiceError(AUTH_FAILURE,
                               f"You are not authorized to access the user '{value}'.")
        if row["id"] not in seen:
            seen.add(row["id"])
            rows.append(row)
    return rows


# Get -------------------------------------------------------------------------

def _escape_like(text):
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _match(ctx, text, limit, include_disabled):
    """Visible accounts for one match string, at most `limit` (None: no cap).

    As the reference: `*` is a wildcard over the whole login or real name;
    without one, an exact login wins alone (disabled or not), otherwise
    logins and real names containing the text match (case-insensitive),
    enabled accounts only unless include_disabled.
    """
    text = text.strip()
    if not text:
        return []
    visible, visible_args = visible_users_sql(ctx, "u.id")
    if "*" in text:
        pattern = _escape_like(text.lower()).replace("*", "%")
    else:
        exact = ctx.conn.execute(f"SELECT {_COLUMNS} FROM users u WHERE lower(u.login) = lower(?)"
                                 f" AND {visible}", [text] + visible_args).fetchone()
        if exact is not None:
            return [exact]
        pattern = "%" + _escape_like(text.lower()) + "%"
    sql = (f"SELECT {_COLUMNS} FROM users u WHERE (lower(u.login) LIKE ? ESCAPE '\\'"
           f" OR lower(u.real_name) LIKE ? ESCAPE '\\') AND {visible}")
    args = [pattern, pattern] + visible_args
    if not include_disabled:
        sql += " AND u.disabled_text = ''"
    sql += " ORDER BY lower(u.login)"
    if limit:
        sql += " LIMIT ?"
        args.append(limit)
    return ctx.conn.execute(sql, args).fetchall()


def _match_limit(ctx, p):
    """Matches per string: min(limit, maxusermatches), 0 meaning no cap.
    Errors: 52 a negative limit."""
    limit = p.int("limit") or 0
    if limit < 0:
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           "The parameter 'limit' must be a positive number.")
    cap = int(ctx.param("maxusermatches") or 0)
    return min(limit, cap) if limit and cap else (limit or cap or None)


def _group_filter(ctx, p):
    """Ids of the groups named by group_ids and groups; None when neither.

    A caller may filter by a group it is a member of or may bless.
    Errors: 804 unknown group name, or a group the caller may not filter
    by; 51 unknown group id for members of creategroups or editusers (who
    see every group), else 804 like a group it may not use.
    """
    sees_all = ctx.caller.in_group("creategroups") or ctx.caller.in_group("editusers")
    group_ids, group_names = p.int_list("group_ids"), p.str_list("groups")
    if not group_ids and not group_names:
        return None
    wanted = set()
    for value, condition in ([(gid, "id = ?") for gid in group_ids]
                             + [(name, "lower(name) = lower(?)") for name in group_names]):
        row = ctx.conn.execute(f"SELECT id FROM groups WHERE {condition}", (value,)).fetchone()
        if row is None and condition == "id = ?" and sees_all:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no group with the id '{value}'.")
        if row is None or not (ctx.caller.in_group_id(row["id"])
                               or ctx.caller.can_bless(row["id"])):
            raise ServiceError(INVALID_GROUP_NAME, f"The group you specified, '{value}', is not "
                                                   "valid here.")
        wanted.add(row["id"])
    return wanted


def _members_of_any(ctx, user_ids, group_ids):
    """The subset of `user_ids` that are members of at least one of `group_ids`."""
    if not user_ids:
        return set()
    users, groups = sorted(user_ids), sorted(group_ids)
    rows = ctx.conn.execute(
        f"SELECT DISTINCT user_id FROM user_groups WHERE is_bless = 0"
        f" AND user_id IN ({placeholders(users)}) AND group_id IN ({placeholders(groups)})",
        users + groups)
    return {row[0] for row in rows}


def _groups_of(ctx, user_id, all_groups):
    """Group summaries ({id, name, description}) of the account's memberships,
    by name; only the groups the caller may bless unless `all_groups`."""
    rows = ctx.conn.execute(
        "SELECT g.id, g.name, g.description FROM groups g WHERE EXISTS (SELECT 1"
        " FROM user_groups ug WHERE ug.group_id = g.id AND ug.user_id = ? AND ug.is_bless = 0)"
        " ORDER BY lower(g.name)", (user_id,))
    return [{"id": row["id"], "name": row["name"], "description": row["description"]}
            for row in rows if all_groups or ctx.caller.can_bless(row["id"])]


def _searches(ctx, table, user_id):
    rows = ctx.conn.execute(f"SELECT id, name, query FROM {table} WHERE user_id = ? ORDER BY id",
                            (user_id,))
    return [{"id": row["id"], "name": row["name"], "query": row["query"]} for row in rows]


def _user_object(ctx, row):
    """The User object of `row` as this caller may see it: names only when logged
    out; all groups for editusers and oneself; admin fields for editusers; saved
    searches for oneself."""
    user = {"id": row["id"], "real_name": row["real_name"],
            "name": visible_email(ctx, row["login"])}
    if not ctx.caller.is_logged_in:
        return user
    is_admin = ctx.caller.in_group("editusers")
    own = row["id"] == ctx.caller.id
    user["email"] = visible_email(ctx, row["login"] + ctx.param("emailsuffix"))
    user["can_login"] = not row["disabled_text"]
    if is_admin:
        user["email_enabled"] = bool(row["email_enabled"])
        user["login_denied_text"] = row["disabled_text"]
    if ctx.fields.wants("groups"):
        user["groups"] = _groups_of(ctx, row["id"], own or is_admin)
    if own:
        if ctx.fields.wants("saved_searches"):
            user["saved_searches"] = _searches(ctx, "saved_searches", row["id"])
        if ctx.fields.wants("saved_reports"):
            user["saved_reports"] = _searches(ctx, "saved_reports", row["id"])
    return user


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
    p = Params(params)
    given = {name: p.get(name) is not None for name in ("ids", "names", "match")}
    if not any(given.values()):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function 'User.get' requires one of the "
                                                 "parameters 'ids', 'names' or 'match'.")
    if not ctx.caller.is_logged_in and (given["ids"] or given["match"]):
        what = "by id" if given["ids"] else "by matching"
        raise ServiceError(USER_ACCESS_DENIED, f"Logged-out users cannot look up accounts {what}.")
    rows = _named_users(ctx, p.int_list("ids"), p.str_list("names"))
    seen = {row["id"] for row in rows}
    limit = _match_limit(ctx, p)
    for text in p.str_list("match"):
        for row in _match(ctx, text, limit, p.bool("include_disabled")):
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
    groups = _group_filter(ctx, p)
    if groups is not None:
        members = _members_of_any(ctx, seen, groups)
        rows = [row for row in rows if row["id"] in members]
    return {"users": [_user_object(ctx, row) for row in rows]}


# Create ------------------------------------------------------------------------

def check_login_name(ctx, login_name, user_id=None):
    """Refuse a login (e-mail address) that is not valid or not free.

    user_id: the account being renamed (its own login, in any case, is free).
    Errors: 501 not an acceptable address (emailregexp, ASCII, at most 127
    characters, no spaces); 500 another account has it (any case).
    """
    try:
        acceptable = re.search(ctx.param("emailregexp"), login_name) is not None
    except re.error:
        acceptable = False
    if (not acceptable or len(login_name) > LOGIN_MAX_LENGTH or not login_name.isascii()
            or any(c.isspace() or not c.isprintable() for c in login_name)):
        raise ServiceError(ILLEGAL_EMAIL_ADDRESS, f"The e-mail address '{login_name}' is not valid "
                                                  f"here. {ctx.param('emailregexpdesc')}")
    row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                           (login_name,)).fetchone()
    if row is not None and row["id"] != user_id:
        raise ServiceError(ACCOUNT_EXISTS, f"There is already an account with the login name "
                                           f"'{login_name}'.")


def check_password_rules(ctx, password):
    """Refuse a password that is too short or not complex enough for the
    parameter password_complexity. Errors: 502 shorter than 6; 305 not complex."""
    if len(password) < PASSWORD_MIN_LENGTH:
        raise ServiceError(PASSWORD_TOO_SHORT, f"The password must be at least "
                                               f"{PASSWORD_MIN_LENGTH} characters long.")
    has_lower = any(c.islower() for c in password)
    has_upper = any(c.isupper() for c in password)
    has_digit = any(c.isdigit() for c in password)
    needs = {
        "mixed_letters": (has_lower and has_upper, "lowercase and uppercase letters"),
        "letters_numbers": (has_lower and has_upper and has_digit,
                            "lowercase and uppercase letters and a digit"),
        "letters_numbers_specialchars": (
            any(c.isalpha() for c in password) and has_digit
            and any(c in string.punctuation for c in password),
            "a letter, a digit and a special character"),
    }
    satisfied, description = needs.get(ctx.param("password_complexity"), (True, ""))
    if not satisfied:
        raise ServiceError(PASSWORD_NOT_COMPLEX, f"The password must contain {description}.")


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
    check_login_name(ctx, login_name)
    if password:
        check_password_rules(ctx, password)
    cur = ctx.conn.execute(
        "INSERT INTO users (login, real_name, password_hash, disabled_text, email_enabled,"
        " created_at) VALUES (?, ?, ?, '', 1, ?) RETURNING id",
        (login_name, clean_text(real_name),
         ctx.auth.hash_password(password) if password else None, dates.to_db(ctx.now)))
    user_id = cur.fetchone()[0]
    membership.refresh_for_user(ctx.conn, user_id)
    audit.record(ctx, "User", user_id)
    return {"id": user_id}


# Update ------------------------------------------------------------------------

def _blessable_group(ctx, value):
    """The id of the group `value` (id or name) if the caller may bless it.
    Errors: 304 otherwise, also for a group that does not exist (as the
    reference, so a blesser learns nothing about other groups)."""
    text = (str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool)
            else "")
    condition = "id = ?" if text.isdigit() else "lower(name) = lower(?)"
    row = ctx.conn.execute(f"SELECT id FROM groups WHERE {condition}",
                           (int(text) if text.isdigit() else text,)).fetchone()
    if row is None or not ctx.caller.can_bless(row["id"]):
        raise ServiceError(AUTH_FAILURE, f"You may not grant or revoke membership of the group "
                                         f"'{text}'.")
    return row["id"]


def _group_request(ctx, p, name):
    """Parse a `groups`/`bless_groups` object into {"set"|"add"|"remove": [ids]}.
    None when not given. Errors: 53 not an object of arrays; 304 (see
    _blessable_group)."""
    if p.get(name) is None:
        return None
    request = {}
    for key, values in p.dict(name).items():
        if key not in ("set", "add", "remove") or values is None:
            continue
        if not isinstance(values, list):
            raise ServiceError(PARAM_INVALID, f"'{name}.{key}' must be an array of groups.")
        request[key] = [_blessable_group(ctx, value) for value in values]
    return request


def _group_names(ctx, group_ids):
    if not group_ids:
        return []
    ids = sorted(group_ids)
    rows = ctx.conn.execute(f"SELECT name FROM groups WHERE id IN ({placeholders(ids)})"
                            " ORDER BY lower(name)", ids)
    return [row[0] for row in rows]


def _apply_group_request(ctx, user_id, request, is_bless):
    """Change the direct grants of one account; regexp memberships stay.

    `set` wins over add/remove and keeps the groups the caller may not
    bless; a group both added and removed ends up added.
    Returns (names removed, names added).
    """
    current = {row[0] for row in ctx.conn.execute(
        "SELECT group_id FROM user_groups WHERE user_id = ? AND is_bless = ? AND grant_type = ?",
        (user_id, is_bless, GRANT_DIRECT))}
    if "set" in request:
        wanted = set(request["set"]) | {g for g in current if not ctx.caller.can_bless(g)}
    else:
        wanted = (current - set(request.get("remove", []))) | set(request.get("add", []))
    removed, added = current - wanted, wanted - current
    for group_id in removed:
        ctx.conn.execute("DELETE FROM user_groups WHERE user_id = ? AND group_id = ?"
                         " AND is_bless = ? AND grant_type = ?",
                         (user_id, group_id, is_bless, GRANT_DIRECT))
    for group_id in added:
        ctx.conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, ?, ?)", (user_id, group_id, is_bless, GRANT_DIRECT))
    return _group_names(ctx, removed), _group_names(ctx, added)


def _new_values(ctx, p, users):
    """The checked new field values of an update ({} entries only when given).
    Errors: 500, 501 (email; 500 also when given for several accounts),
    502, 305 (password)."""
    values = {}
    if p.get("full_name") is not None:
        values["full_name"] = clean_text(p.str("full_name"))
    if p.get("email") is not None:
        login_name = p.str("email").strip()
        if len(users) > 1:
            raise ServiceError(ACCOUNT_EXISTS, "Several accounts cannot get the same login name: "
                                               "change 'email' one account at a time.")
        check_login_name(ctx, login_name, users[0]["id"] if users else None)
        values["email"] = login_name
    if p.get("password") is not None:
        password = p.str("password").strip()
        check_password_rules(ctx, password)
        values["password_hash"] = ctx.auth.hash_password(password)
    if p.get("email_enabled") is not None:
        values["email_enabled"] = p.bool("email_enabled")
    if p.get("login_denied_text") is not None:
        values["login_denied_text"] = p.str("login_denied_text").strip()
    if p.bool("reset_failed_logins"):
        values["reset_failed_logins"] = True
    return values


def _update_one(ctx, row, values, groups, bless_groups):
    """Store the new values of one account; returns its `changes`."""
    user_id, changes = row["id"], {}
    ends_sessions = False
    columns = (("full_name", "real_name"), ("email", "login"),
               ("email_enabled", "email_enabled"), ("login_denied_text", "disabled_text"))
    for field, column in columns:
        if field not in values:
            continue
        old = bool(row[column]) if field == "email_enabled" else row[column]
        if note(changes, field, old, values[field]):
            ctx.conn.execute(f"UPDATE users SET {column} = ? WHERE id = ?",
                             (int(values[field]) if field == "email_enabled" else values[field],
                              user_id))
            ends_sessions |= field in ("email", "login_denied_text")
    if "email" in changes:
        membership.refresh_for_user(ctx.conn, user_id)
    for name, request, is_bless in (("groups", groups, 0), ("bless_groups", bless_groups, 1)):
        if request is not None:
            note(changes, name, *_apply_group_request(ctx, user_id, request, is_bless))
    audit.record_changes(ctx, "User", user_id, changes)
    if "password_hash" in values:
        # Never in `changes` nor the audit values: only the fact is logged.
        ctx.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                         (values["password_hash"], user_id))
        audit.record(ctx, "User", user_id, "password")
        ends_sessions = True
    if ends_sessions:
        auth.delete_user_tokens(ctx.conn, user_id)
    if values.get("reset_failed_logins"):
        # Under the login the account had and the one it has now.
        cleared = sum(auth.reset_failed_logins(ctx.conn, name)
                      for name in {row["login"].lower(), values.get("email", "").lower()} if name)
        if cleared:
            audit.record(ctx, "User", user_id, "failed_logins", cleared, 0)
    return changes


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
    users = _named_users(ctx, p.int_list("ids"), p.str_list("names"))
    values = _new_values(ctx, p, users)
    groups = _group_request(ctx, p, "groups")
    bless_groups = _group_request(ctx, p, "bless_groups")
    return {"users": [{"id": row["id"], "changes": _update_one(ctx, row, values, groups,
                                                               bless_groups)}
                      for row in users]}


# The caller's own account ----------------------------------------------------------

def whoami(ctx, params):
    """The account the call runs as (bugzilla.mozilla.org's whoami).

    params: none.
    Returns {"id", "real_name", "name" (the login as shown), "login",
    "groups" (names of the groups the account is a member of),
    "is_insider" (sees and sets private comments and attachments),
    "is_timetracker" (sees and changes the time fields),
    "saved_searches" [{"id", "name", "query"}]}.
    Errors: 410 logged out.
    """
    require_login(ctx)
    row = ctx.conn.execute(f"SELECT {_COLUMNS} FROM users u WHERE u.id = ?",
                           (ctx.caller.id,)).fetchone()
    return {"id": row["id"], "real_name": row["real_name"],
            "name": visible_email(ctx, row["login"]), "login": row["login"],
            "groups": sorted(ctx.caller.group_names, key=str.lower),
            "is_insider": access.is_insider(ctx), "is_timetracker": access.is_timetracker(ctx),
            "saved_searches": _searches(ctx, "saved_searches", row["id"])}


def update_self(ctx, params):
    """Change one's own real name or password (the reference's preferences
    page; User.update needs editusers for these).

    params: full_name; password (the new one) with current_password.
    A new password ends every login token of the account, the one of this
    call included (its sessions end); API keys stay valid.
    Returns {"changes": {"full_name": {"removed", "added"}}} (the password
    never shows; that it changed is audited).
    Errors: 410 logged out; 50 password without current_password; 300 a
    wrong current password (counted like a failed sign-in of the login);
    32000 its sign-ins wait after too many failures; 502 new password
    shorter than 6; 305 not complex enough. Nothing changes on an error.
    """
    require_login(ctx)
    p = Params(params)
    changes = {}
    row = ctx.conn.execute(f"SELECT {_COLUMNS} FROM users u WHERE u.id = ?",
                           (ctx.caller.id,)).fetchone()
    new_hash = None
    if p.get("password") is not None:
        current = p.str("current_password")
        if current is None:
            raise ServiceError(OBJECT_NOT_SPECIFIED, "To change your password, give your "
                                                     "current password too "
                                                     "(current_password).")
        ctx.auth.check_current_password(ctx.conn, row["login"], current, ctx.now)
        password = p.str("password").strip()
        check_password_rules(ctx, password)
        new_hash = ctx.auth.hash_password(password)
    if p.get("full_name") is not None:
        full_name = clean_text(p.str("full_name"))
        if note(changes, "full_name", row["real_name"], full_name):
            ctx.conn.execute("UPDATE users SET real_name = ? WHERE id = ?",
                             (full_name, row["id"]))
    audit.record_changes(ctx, "User", row["id"], changes)
    if new_hash is not None:
        ctx.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                         (new_hash, row["id"]))
        audit.record(ctx, "User", row["id"], "password")
        auth.delete_user_tokens(ctx.conn, row["id"])
    return {"changes": changes}
