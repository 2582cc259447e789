"""Groups of accounts: creating and changing them, and reading them as the
caller may (their members as accounts are shown).

A group is a bug group (is_bug_group true: bugs may be restricted to it) or
one of the 14 system groups that carry permissions by name. Who is a member
is accounts/membership.py's.
"""

import re

from ..accounts import membership
from ..accounts.email import visible_email
from ..call.changes import note
from ..errors import (
    EMPTY_GROUP_DESCRIPTION,
    EMPTY_GROUP_NAME,
    GROUP_CANNOT_VIEW,
    GROUP_EXISTS,
    INVALID_GROUP_NAME,
    INVALID_REGEXP,
    OBJECT_DOES_NOT_EXIST,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from ..store.db import placeholders
from . import settings
from .admin import checked_text


NAME_MAX_LENGTH = 255

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]+")
_COLUMNS = "id, name, description, is_bug_group, user_regexp, is_active, icon_url"
# Parameters whose value is a group name; they follow a rename (as the reference).
_GROUP_PARAMS = tuple(name for name, (_, kind, _) in settings.DEFINITIONS.items()
                      if kind == settings.GROUP)
_MANDATORY = 3


# Validation ------------------------------------------------------------------

def _check_name(ctx, name, group_id=None):
    """The trimmed new group name. Errors: 800 empty; 804 not a usable name
    (a comma, only digits, control characters, too long); 801 taken by
    another group (any case)."""
    name = checked_text(name, "group", blank_code=EMPTY_GROUP_NAME, max_length=None)
    if ("," in name or name.isdigit() or _CONTROL_CHARS.search(name)
            or len(name) > NAME_MAX_LENGTH):
        raise ServiceError(INVALID_GROUP_NAME,
                           f"The group name '{name}' is not valid: it may not contain commas or "
                           f"control characters, may not be only digits and may have at most "
                           f"{NAME_MAX_LENGTH} characters.")
    row = ctx.conn.execute("SELECT id FROM groups WHERE lower(name) = lower(?)", (name,)).fetchone()
    if row is not None and row["id"] != group_id:
        raise ServiceError(GROUP_EXISTS, f"The group '{name}' already exists.")
    return name


def _check_description(description):
    """The trimmed description. Errors: 802 empty."""
    return checked_text(description, "group", "description",
                        blank_code=EMPTY_GROUP_DESCRIPTION, max_length=None)


def _check_regexp(pattern):
    """The trimmed regexp ("" for none). Errors: 803 not a valid expression."""
    pattern = (pattern or "").strip()
    try:
        re.compile(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        raise ServiceError(INVALID_REGEXP,
                           f"The regular expression '{pattern}' is not valid.") from None
    return pattern


def _clean_icon_url(url):
    """The icon URL with control characters folded to spaces, trimmed."""
    return _CONTROL_CHARS.sub(" ", url or "").strip()


# Create ----------------------------------------------------------------------

def create(ctx, name, description, user_regexp, is_active, icon_url):
    """Store a new bug group. Accounts whose login matches user_regexp
    become members at once; the admin group becomes a member of it, with
    bless and visibility grants, so members of `admin` are its members and
    blessers for as long as they are admins. Returns its id.
    Errors: 800 empty name; 801 name exists; 804 unusable name; 802 empty
    description; 803 invalid regexp.
    """
    name = _check_name(ctx, name)
    description = _check_description(description)
    user_regexp = _check_regexp(user_regexp)
    icon_url = _clean_icon_url(icon_url)
    group_id = membership.create_bug_group(ctx.conn, name, description, user_regexp, is_active,
                                           icon_url)
    audit.record(ctx, "Group", group_id)
    return group_id


# Update ----------------------------------------------------------------------

def update(ctx, ids, names, given):
    """Change the groups named by `ids` and `names`; given: {field: new
    value} of the fields given: name (one group only), description,
    user_regexp (re-applied to every account), is_active, icon_url.
    Returns [{"id", "changes"}]; booleans in changes are "1"/"0".
    Errors: 51 unknown group; 801 a name for several groups, or a name
    taken; 800, 802, 803, 804 as in create; 32000 renaming a system group.
    Nothing is stored unless every value is valid.
    """
    groups = _find(ctx, ids, names)
    new = {}
    if "name" in given:
        if len(groups) > 1:
            raise ServiceError(GROUP_EXISTS, "Group names must be unique: you cannot give one "
                                             "name to several groups.")
        group = groups[0]
        new["name"] = _check_name(ctx, given["name"], group["id"])
        if new["name"] != group["name"] and not group["is_bug_group"]:
            raise ServiceError(USER_ERROR, f"The group '{group['name']}' is a system group; "
                                           f"its name cannot be changed.")
    if "description" in given:
        new["description"] = _check_description(given["description"])
    if "user_regexp" in given:
        new["user_regexp"] = _check_regexp(given["user_regexp"])
    if "is_active" in given:
        new["is_active"] = given["is_active"]
    if "icon_url" in given:
        new["icon_url"] = _clean_icon_url(given["icon_url"])
    return [{"id": group["id"], "changes": _apply(ctx, group, new)} for group in groups]


def _apply(ctx, group, new):
    """Store the new values of one group; return its `changes`."""
    changes = {}
    for field, value in new.items():
        old = bool(group[field]) if field == "is_active" else group[field]
        if note(changes, field, old, value):
            ctx.conn.execute(f"UPDATE groups SET {field} = ? WHERE id = ?",
                             (int(value) if field == "is_active" else value, group["id"]))
    if "name" in changes:
        _rename_in_params(ctx, group["name"], new["name"])
    if "user_regexp" in changes:
        membership.refresh_for_group(ctx.conn, group["id"])
    if changes.get("is_active", {}).get("added") == "1":
        _enforce_mandatory(ctx, group["id"])
    audit.record_changes(ctx, "Group", group["id"], changes)
    return changes


def _rename_in_params(ctx, old_name, new_name):
    """Parameters naming the renamed group now name it by its new name."""
    values = settings.load(ctx.conn)
    for param in _GROUP_PARAMS:
        if values[param] and values[param].lower() == old_name.lower():
            ctx.conn.execute("DELETE FROM params WHERE name = ?", (param,))
            ctx.conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (param, new_name))
            audit.record(ctx, "Param", 0, param, values[param], new_name)
    ctx.forget_params()


def _enforce_mandatory(ctx, group_id):
    """A group made active again restricts the bugs of the products where it is
    Mandatory that were filed while it was inactive."""
    ctx.conn.execute(
        "INSERT INTO bug_groups (bug_id, group_id) SELECT b.id, gc.group_id FROM bugs b"
        " JOIN group_controls gc ON gc.product_id = b.product_id"
        " WHERE gc.group_id = ? AND gc.membercontrol = ? AND NOT EXISTS"
        " (SELECT 1 FROM bug_groups bg WHERE bg.bug_id = b.id AND bg.group_id = gc.group_id)",
        (group_id, _MANDATORY))


# Get -------------------------------------------------------------------------

def visible(ctx, ids, names, with_members):
    """The groups named by `ids` and `names` (neither: every group for
    creategroups/editusers members, else the groups the caller may bless),
    as {"id", "name", "description", and for creategroups members
    "is_active", "is_bug_group", "user_regexp"; "membership": [User] with
    `with_members`}; a User is {"id", "real_name", "name", "email",
    "can_login", "email_enabled", "login_denied_text"}.
    Errors: 805 naming a group the caller may not bless (also when it does
    not exist, so nothing is disclosed); 51 unknown group
    (creategroups/editusers members).
    """
    caller = ctx.caller
    sees_all = caller.in_group("creategroups") or caller.in_group("editusers")
    if ids or names:
        try:
            groups = _find(ctx, ids, names)
        except ServiceError:
            if sees_all:
                raise
            raise ServiceError(GROUP_CANNOT_VIEW,
                               "You are not allowed to view that group.") from None
        if not sees_all and any(not caller.can_bless(g["id"]) for g in groups):
            raise ServiceError(GROUP_CANNOT_VIEW, "You are not allowed to view that group.")
    elif sees_all:
        groups = _rows(ctx, "1 = 1", [])
    else:
        blessed = sorted(caller.bless_group_ids)
        groups = _rows(ctx, f"id IN ({placeholders(blessed)})", blessed)
    groups.sort(key=lambda g: (g["is_bug_group"], g["name"].lower()))
    full = caller.in_group("creategroups")
    return [_group_object(ctx, group, full, with_members) for group in groups]


def _group_object(ctx, group, full, with_members):
    result = {"id": group["id"], "name": group["name"], "description": group["description"]}
    if full:
        result["is_active"] = bool(group["is_active"])
        result["is_bug_group"] = bool(group["is_bug_group"])
        result["user_regexp"] = group["user_regexp"]
    if with_members:
        result["membership"] = _members(ctx, group["id"])
    return result


def _members(ctx, group_id):
    """The accounts in the group, directly or through its regexp, by login;
    `email` is the login plus the emailsuffix parameter, as for users."""
    suffix = ctx.param("emailsuffix")
    rows = ctx.conn.execute(
        "SELECT u.id, u.login, u.real_name, u.disabled_text, u.email_enabled FROM users u"
        " WHERE EXISTS (SELECT 1 FROM user_groups ug WHERE ug.user_id = u.id"
        " AND ug.group_id = ? AND ug.is_bless = 0) ORDER BY lower(u.login)", (group_id,))
    return [{"id": row["id"], "real_name": row["real_name"], "name": row["login"],
             "email": visible_email(ctx, row["login"] + suffix),
             "can_login": row["disabled_text"] == "",
             "email_enabled": bool(row["email_enabled"]),
             "login_denied_text": row["disabled_text"]} for row in rows]


# Inheritance -----------------------------------------------------------------

# Bugzilla's grant types between groups kept in group_grants (its
# membership grant, 0, is group_group_map's).
GRANT_BLESS, GRANT_VISIBLE = membership.GRANT_BLESS, membership.GRANT_VISIBLE
# The lists of groups editgroups.cgi sets, each with where it is kept.
GRANT_LISTS = {"member_groups": None, "bless_groups": GRANT_BLESS,
               "visible_to": GRANT_VISIBLE}


def member_groups(ctx, ids):
    """For each group of `ids`: {"id", "name", "member_groups": names of the
    groups whose members are members of it (Bugzilla's group_group_map
    "members" grant), "member_of": names of the groups its members are
    members of, "bless_groups": names of the groups whose members may add
    and remove its members (the bless grant), "visible_to": names of the
    groups whose members see its members while usevisibilitygroups is on
    (the visibility grant)}, by name. Errors: 51 unknown group."""
    result = []
    for group in _find(ctx, ids, []):
        result.append({"id": group["id"], "name": group["name"],
                       "member_groups": _map_names(ctx, "member_id", "grantor_id", group["id"]),
                       "member_of": _map_names(ctx, "grantor_id", "member_id", group["id"]),
                       "bless_groups": _granted_to(ctx, group["id"], GRANT_BLESS),
                       "visible_to": _granted_to(ctx, group["id"], GRANT_VISIBLE)})
    return result


def _map_names(ctx, other, this, group_id):
    # `other` and `this` are column names of group_group_map, never input.
    return [row[0] for row in ctx.conn.execute(
        f"SELECT g.name FROM group_group_map m JOIN groups g ON g.id = m.{other}"
        f" WHERE m.{this} = ? ORDER BY lower(g.name)", (group_id,))]


def _granted_to(ctx, group_id, grant_type):
    return [row[0] for row in ctx.conn.execute(
        "SELECT g.name FROM group_grants m JOIN groups g ON g.id = m.member_id"
        " WHERE m.grantor_id = ? AND m.grant_type = ? ORDER BY lower(g.name)",
        (group_id, grant_type))]


def set_member_groups(ctx, group_id, names, bless=None, visible=None):
    """Make the groups named `names` (and no other) the groups whose members
    are members of group `group_id`, and derive every account's memberships
    again; likewise, when given (not None), the groups named `bless` whose
    members may bless it and those named `visible` whose members see its
    members. Returns {"id", "changes": {"member_groups" / "bless_groups" /
    "visible_to": {"removed", "added"}}} (names joined by ", "; only what
    changed). Audited as Bugzilla::Group.
    Errors: 51 unknown group (or name); 32000 the group itself named as its
    own member. Nothing is stored on an error."""
    group = _find(ctx, [group_id], [])[0]
    wanted = {g["id"]: g["name"] for g in _find(ctx, [], names)}
    if group["id"] in wanted:
        raise ServiceError(USER_ERROR, f"The group '{group['name']}' cannot be a member of "
                                       "itself.")
    grants = {}
    for key, given in (("bless_groups", bless), ("visible_to", visible)):
        if given is not None:
            grants[key] = {g["id"]: g["name"] for g in _find(ctx, [], given)}
    changes = {}
    current = {row[0]: row[1] for row in ctx.conn.execute(
        "SELECT m.member_id, g.name FROM group_group_map m JOIN groups g ON g.id = m.member_id"
        " WHERE m.grantor_id = ?", (group["id"],))}
    for member_id in current.keys() - wanted.keys():
        ctx.conn.execute("DELETE FROM group_group_map WHERE member_id = ? AND grantor_id = ?",
                         (member_id, group["id"]))
    ctx.conn.executemany("INSERT INTO group_group_map (member_id, grantor_id) VALUES (?, ?)",
                         [(member_id, group["id"])
                          for member_id in sorted(wanted.keys() - current.keys())])
    _note(changes, "member_groups", current, wanted)
    if "member_groups" in changes:
        membership.refresh_derived(ctx.conn)
    for key, chosen in grants.items():
        grant_type = GRANT_LISTS[key]
        held = {row[0]: row[1] for row in ctx.conn.execute(
            "SELECT m.member_id, g.name FROM group_grants m JOIN groups g ON g.id = m.member_id"
            " WHERE m.grantor_id = ? AND m.grant_type = ?", (group["id"], grant_type))}
        for member_id in held.keys() - chosen.keys():
            ctx.conn.execute("DELETE FROM group_grants WHERE member_id = ? AND grantor_id = ?"
                             " AND grant_type = ?", (member_id, group["id"], grant_type))
        ctx.conn.executemany("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                             " VALUES (?, ?, ?)",
                             [(member_id, group["id"], grant_type)
                              for member_id in sorted(chosen.keys() - held.keys())])
        _note(changes, key, held, chosen)
    if changes:
        audit.record_changes(ctx, "Group", group["id"], changes)
    return {"id": group["id"], "changes": changes}


def _note(changes, key, before, after):
    """Add `key`'s change (names removed and added) when {id: name} `before`
    and `after` differ."""
    removed = sorted((before[i] for i in before.keys() - after.keys()), key=str.lower)
    added = sorted((after[i] for i in after.keys() - before.keys()), key=str.lower)
    if removed or added:
        changes[key] = {"removed": ", ".join(removed), "added": ", ".join(added)}


# Lookup ----------------------------------------------------------------------

def _rows(ctx, condition, args):
    return [dict(row) for row in ctx.conn.execute(
        f"SELECT {_COLUMNS} FROM groups WHERE {condition}", args)]


def _find(ctx, ids, names):
    """The groups named by `ids` and `names`, each once, in request order.
    Errors: 51 when one does not exist."""
    found, seen = [], set()
    for group_id in ids:
        rows = _rows(ctx, "id = ?", [group_id])
        if not rows:
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no group with the id '{group_id}'.")
        if rows[0]["id"] not in seen:
            seen.add(rows[0]["id"])
            found.append(rows[0])
    for name in names:
        rows = _rows(ctx, "lower(name) = lower(?)", [name])
        if not rows:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no group named '{name}'.")
        if rows[0]["id"] not in seen:
            seen.add(rows[0]["id"])
            found.append(rows[0])
    return found
