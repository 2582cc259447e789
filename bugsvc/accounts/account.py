"""Accounts: finding them and reading them as the caller may see them,
creating and changing them (login names, passwords, group grants), and the
caller's own account.

Who may see whom: with the parameter `usevisibilitygroups` off (the default)
every caller sees every account; when it is on, a caller sees its own
account and the accounts that share a group membership with it, and members
of editusers see all.
"""

import string

from ..bugs import visibility
from ..call.changes import note
from ..call.params import clean_text
from ..errors import (
    ACCOUNT_EXISTS,
    AUTH_FAILURE,
    INVALID_GROUP_NAME,
    OBJECT_DOES_NOT_EXIST,
    PARAM_INVALID,
    PASSWORD_NOT_COMPLEX,
    PASSWORD_TOO_SHORT,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from ..store.db import placeholders
from . import auth, external, membership, new_account
from .email import visible_email
from .membership import GRANT_DIRECT
from .new_account import check_login_name
from .visibility import administered_users_sql, can_see_user, sees_every_user, visible_users_sql


PASSWORD_MIN_LENGTH = 6
_COLUMNS = "u.id, u.login, u.real_name, u.disabled_text, u.email_enabled"
# The settings each account chooses for itself: {name: (default, choices)}.
# color_scheme: the pages' colours (system: as the browser prefers).
SETTINGS = {"color_scheme": ("system", ("system", "light", "dark"))}
# Each setting of the account read with its row (one query for the lot).
_SETTING_COLUMNS = "".join(
    f", (SELECT s.value FROM user_settings s WHERE s.user_id = u.id AND s.name = ?)"
    f" AS setting_{name}" for name in SETTINGS)


# Visibility --------------------------------------------------------------------

def _named_users(ctx, ids, names, administering=False):
    """Rows of the accounts named by `ids` and `names`, in that order, each
    once; visible by administered_users_sql's rule when `administering`.

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
        if row is None and sees_every_user(ctx, administering):
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no user with the {kind} '{value}'.")
        if row is None or not can_see_user(ctx, row["id"], administering):
            raise ServiceError(AUTH_FAILURE,
                               f"You are not authorized to access the user '{value}'.")
        if row["id"] not in seen:
            seen.add(row["id"])
            rows.append(row)
    return rows


# Get -------------------------------------------------------------------------

def _escape_like(text):
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _match(ctx, text, limit, include_disabled, administering=False):
    """Visible accounts for one match string, at most `limit` (None: no cap);
    by administered_users_sql's rule when `administering`.

    As the reference: `*` is a wildcard over the whole login or real name;
    without one, an exact login wins alone (disabled or not), otherwise
    logins and real names containing the text match (case-insensitive),
    enabled accounts only unless include_disabled.
    """
    text = text.strip()
    if not text:
        return []
    rule = administered_users_sql if administering else visible_users_sql
    visible, visible_args = rule(ctx, "u.id")
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


def _match_limit(ctx, limit):
    """Matches per string: min(limit, maxusermatches), 0 meaning no cap."""
    cap = int(ctx.param("maxusermatches") or 0)
    return min(limit, cap) if limit and cap else (limit or cap or None)


def _group_filter(ctx, group_ids, group_names):
    """Ids of the groups named by `group_ids` and `group_names`; None when
    neither.

    A caller may filter by a group it is a member of or may bless.
    Errors: 804 unknown group name, or a group the caller may not filter
    by; 51 unknown group id for members of creategroups or editusers (who
    see every group), else 804 like a group it may not use.
    """
    sees_all = ctx.caller.in_group("creategroups") or ctx.caller.in_group("editusers")
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


def find(ctx, ids, names, matches, limit, include_disabled, group_ids, group_names,
         administering=False):
    """User objects (see _user_object) of the accounts named by `ids` and
    `names`, then of those matching each of `matches` (see _match; at most
    `limit` each, 0 for no limit of its own, capped by maxusermatches;
    disabled ones only with `include_disabled`), each once; only the
    members of at least one of `group_ids`/`group_names` when any is given.
    `administering`: editusers.cgi's rule of who is visible (members of
    editusers see every account; see administered_users_sql).
    Errors: 304, 51 (see _named_users); 804, 51 (see _group_filter).
    """
    rows = _named_users(ctx, ids, names, administering)
    seen = {row["id"] for row in rows}
    limit = _match_limit(ctx, limit)
    for text in matches:
        for row in _match(ctx, text, limit, include_disabled, administering):
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
    groups = _group_filter(ctx, group_ids, group_names)
    if groups is not None:
        members = _members_of_any(ctx, seen, groups)
        rows = [row for row in rows if row["id"] in members]
    return [_user_object(ctx, row) for row in rows]


# Create ------------------------------------------------------------------------

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


def create(ctx, login_name, real_name, password):
    """Store a new account; it joins the groups whose user_regexp matches.
    password: "" for none (the account cannot sign in with a password).
    Returns its id. Errors: 501, 500 (check_login_name); 502, 305
    (check_password_rules).
    """
    check_login_name(ctx, login_name)
    if password:
        check_password_rules(ctx, password)
    return new_account.insert(ctx, login_name, real_name,
                              ctx.auth.hash_password(password) if password else None)


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


def _blessable_groups(ctx, request):
    """`request` ({"set"|"add"|"remove": [group ids or names]}, or None)
    with group ids. Errors: 304 (see _blessable_group)."""
    if request is None:
        return None
    return {key: [_blessable_group(ctx, value) for value in values]
            for key, values in request.items()}


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
    if not is_bless and (removed or added):
        membership.refresh_derived(ctx.conn, [user_id])
    return _group_names(ctx, removed), _group_names(ctx, added)


def _new_values(ctx, given, users):
    """The checked new field values of an update, from `given` ({field: new
    value} of the fields given). Errors: 500, 501 (email; 500 also when
    given for several accounts), 502, 305 (password)."""
    values = {}
    if "full_name" in given:
        values["full_name"] = clean_text(given["full_name"])
    if "email" in given:
        login_name = given["email"].strip()
        if len(users) > 1:
            raise ServiceError(ACCOUNT_EXISTS, "Several accounts cannot get the same login name: "
                                               "change 'email' one account at a time.")
        check_login_name(ctx, login_name, users[0]["id"] if users else None)
        values["email"] = login_name
    if "password" in given:
        password = given["password"].strip()
        check_password_rules(ctx, password)
        values["password_hash"] = ctx.auth.hash_password(password)
    if "email_enabled" in given:
        values["email_enabled"] = given["email_enabled"]
    if "login_denied_text" in given:
        values["login_denied_text"] = given["login_denied_text"].strip()
    if given.get("reset_failed_logins"):
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


def update(ctx, ids, names, given, groups, bless_groups):
    """Change the accounts named by `ids` and `names`.

    given: {field: new value} of the fields given: full_name, email (one
    account only), password, email_enabled, login_denied_text (non-empty
    disables), reset_failed_logins (true: forget the failed sign-ins
    counted against the account). groups, bless_groups: {"set"|"add"|
    "remove": [group ids or names]} or None (see _apply_group_request).
    Only direct grants change; user_regexp memberships follow the login. A
    new login, password or login_denied_text ends the account's login
    tokens. Returns [{"id", "changes"}]; the password never shows.
    Errors: 304, 51 (see _named_users); 500, 501, 502, 305 (see
    _new_values); 304 a group the caller may not bless. Nothing changes
    when a check fails.
    """
    users = _named_users(ctx, ids, names, administering=True)
    values = _new_values(ctx, given, users)
    groups = _blessable_groups(ctx, groups)
    bless_groups = _blessable_groups(ctx, bless_groups)
    return [{"id": row["id"], "changes": _update_one(ctx, row, values, groups, bless_groups)}
            for row in users]


# The caller's own account ----------------------------------------------------------

def own_account(ctx):
    """The caller's own account: {"id", "real_name", "name", "login",
    "groups" (names), "is_insider", "is_timetracker", "saved_searches",
    "settings" (SETTINGS' values), "comment_markdown" (its comments start
    as Markdown)}."""
    row = ctx.conn.execute(f"SELECT {_COLUMNS}{_SETTING_COLUMNS}, u.comment_markdown"
                           " FROM users u WHERE u.id = ?", (*SETTINGS, ctx.caller.id)).fetchone()
    return {"id": row["id"], "real_name": row["real_name"],
            "name": visible_email(ctx, row["login"]), "login": row["login"],
            "groups": sorted(ctx.caller.group_names, key=str.lower),
            "is_insider": visibility.is_insider(ctx),
            "is_timetracker": visibility.is_timetracker(ctx),
            "saved_searches": _searches(ctx, "saved_searches", row["id"]),
            "settings": {name: row[f"setting_{name}"] or default
                         for name, (default, _) in SETTINGS.items()},
            "comment_markdown": bool(row["comment_markdown"])}


def check_settings(settings):
    """Refuse settings (a {name: value} dict) that are not SETTINGS' names
    and choices. Errors: 53 an unknown name or value."""
    if not isinstance(settings, dict):
        raise ServiceError(PARAM_INVALID, "The parameter 'settings' must be an object of "
                                          "setting names and values.")
    for name, value in settings.items():
        if name not in SETTINGS:
            raise ServiceError(PARAM_INVALID, f"There is no setting '{name}'; the settings "
                                              f"are: {', '.join(SETTINGS)}.")
        if value not in SETTINGS[name][1]:
            raise ServiceError(PARAM_INVALID, f"The setting '{name}' is one of "
                                              f"{', '.join(SETTINGS[name][1])}.")


def _change_settings(ctx, user_id, settings, changes):
    """Store `settings` (checked) for account `user_id`, noting each that
    changes in `changes`; the default value is stored as no row."""
    current = {row["name"]: row["value"] for row in ctx.conn.execute(
        "SELECT name, value FROM user_settings WHERE user_id = ?", (user_id,))}
    for name, value in sorted(settings.items()):
        default = SETTINGS[name][0]
        if not note(changes, name, current.get(name, default), value):
            continue
        ctx.conn.execute("DELETE FROM user_settings WHERE user_id = ? AND name = ?",
                         (user_id, name))
        if value != default:
            ctx.conn.execute("INSERT INTO user_settings (user_id, name, value) VALUES (?, ?, ?)",
                             (user_id, name, value))


def update_own(ctx, full_name=None, password=None, current_password=None, settings=None,
               comment_markdown=None):
    """Change the caller's own real name, its password (checked against
    `current_password`, which must be given with it), its settings
    ({name: value} of SETTINGS), or whether its comments start as Markdown
    (comment_markdown, a bool). A new password ends every login token of
    the account; API keys stay valid. None leaves a value as it is. Returns
    the `changes` (the password never shows; that it changed is audited).
    Errors: 53 an unknown setting or value; 300 a wrong current password
    (counted like a failed sign-in); 32000 its sign-ins wait after too many
    failures, or a directory (LDAP) keeps its password; 502, 305 (see
    check_password_rules). Nothing changes on an error.
    """
    changes = {}
    if settings is not None:
        check_settings(settings)
    row = ctx.conn.execute(f"SELECT {_COLUMNS}, u.comment_markdown FROM users u WHERE u.id = ?",
                           (ctx.caller.id,)).fetchone()
    new_hash = None
    if password is not None:
        if external.signs_in_through_directory(ctx.conn, row["id"]):
            raise ServiceError(USER_ERROR, external.DIRECTORY_KEEPS_PASSWORD)
        ctx.auth.check_current_password(ctx.conn, row["login"], current_password, ctx.now)
        password = password.strip()
        check_password_rules(ctx, password)
        new_hash = ctx.auth.hash_password(password)
    if full_name is not None:
        full_name = clean_text(full_name)
        if note(changes, "full_name", row["real_name"], full_name):
            ctx.conn.execute("UPDATE users SET real_name = ? WHERE id = ?",
                             (full_name, row["id"]))
    if settings:
        _change_settings(ctx, row["id"], settings, changes)
    if comment_markdown is not None:
        was = bool(row["comment_markdown"])
        if was != comment_markdown:
            changes["comment_markdown"] = {"removed": str(int(was)),
                                           "added": str(int(comment_markdown))}
            ctx.conn.execute("UPDATE users SET comment_markdown = ? WHERE id = ?",
                             (int(comment_markdown), row["id"]))
    audit.record_changes(ctx, "User", row["id"], changes)
    if new_hash is not None:
        ctx.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                         (new_hash, row["id"]))
        audit.record(ctx, "User", row["id"], "password")
        auth.delete_user_tokens(ctx.conn, row["id"])
    return changes
