"""Groups: create, update and read user groups (interface "Groups"). The
behaviour lives in bugsvc/catalogue/group.py."""

from ..call.fields import Shape
from ..call.params import Params
from ..catalogue import group
from ..errors import (
    GROUP_CANNOT_VIEW,
    OBJECT_NOT_SPECIFIED,
    ServiceError,
    require_group,
    require_login,
)


# include/exclude shape of a group and its members.
GROUP_SHAPES = {"groups": Shape(children={"membership": Shape()})}


def create(ctx, params):
    """Create a bug group.

    params: name, description (required), user_regexp, is_active (omitted ⇒
    false), icon_url. Accounts whose login matches user_regexp become members
    at once; members of `admin` become members and blessers of the group.
    Returns {"id"}.
    Errors: 410 logged out; 304 not in creategroups; 800 empty name; 801 name
    exists; 804 unusable name; 802 empty description; 803 invalid regexp;
    53 a value given as a list or object.
    """
    require_group(ctx, "creategroups", "add groups")
    p = Params(params)
    group_id = group.create(ctx, p.str("name", ""), p.str("description", ""),
                            p.str("user_regexp", ""), p.bool("is_active", False),
                            p.str("icon_url", ""))
    return {"id": group_id}


def update(ctx, params):
    """Change one or more groups.

    params: ids, names (the groups; at least one), and new values name (one
    group only), description, user_regexp (re-applied to every account),
    is_active, icon_url.
    Returns {"groups": [{"id", "changes": {field: {"added", "removed"}}}]};
    booleans in changes are "1"/"0".
    Errors: 410 logged out; 304 not in creategroups; 50 neither ids nor
    names; 51 unknown group; 801 a name for several groups, or a name taken;
    800, 802, 803, 804 as in create; 32000 renaming a system group. Nothing
    is stored unless every value is valid.
    """
    require_group(ctx, "creategroups", "edit groups")
    p = Params(params)
    ids, names = p.int_list("ids"), p.str_list("names")
    # Also when ids and names held only nulls or empty strings.
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "You must specify the groups to update with 'ids' or 'names'.")
    given = {name: p.str(name, "") for name in ("name", "description", "user_regexp", "icon_url")
             if p.has(name)}
    if p.has("is_active"):
        given["is_active"] = p.bool("is_active")
    return {"groups": group.update(ctx, ids, names, given)}


def get(ctx, params):
    """Read groups.

    params: ids, names (neither: every group for creategroups/editusers
    members, else the groups the caller may bless), membership (boolean:
    add each group's members).
    Returns {"groups": [{"id", "name", "description", and for creategroups
    members "is_active", "is_bug_group", "user_regexp"; "membership": [User]
    when asked}]}; a User is {"id", "real_name", "name", "email", "can_login",
    "email_enabled", "login_denied_text"}.
    Errors: 410 logged out; 805 neither in creategroups/editusers nor a
    blesser of some group, or naming a group the caller may not bless (also
    when it does not exist, so nothing is disclosed); 51 unknown group
    (creategroups/editusers members).
    """
    require_login(ctx)
    caller = ctx.caller
    sees_all = caller.in_group("creategroups") or caller.in_group("editusers")
    if not sees_all and not caller.can_bless_any:
        raise ServiceError(GROUP_CANNOT_VIEW, "You are not allowed to view groups.")
    p = Params(params)
    groups = group.visible(ctx, p.int_list("ids"), p.str_list("names"), p.bool("membership"))
    return {"groups": groups}


def inheritance(ctx, params):
    """The groups whose members are members of a group (editgroups.cgi's
    inheritance; Bugzilla 5.2 has no WebService call for it).

    params: ids (group ids). Returns {"groups": [{"id", "name",
    "member_groups", "member_of", "bless_groups", "visible_to"}]} (names).
    Errors: 410 logged out; 304 not in creategroups; 50 no ids; 51 unknown
    group.
    """
    require_group(ctx, "creategroups", "edit group inheritance")
    p = Params(params)
    ids = p.int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name a group with 'ids'.")
    return {"groups": group.member_groups(ctx, ids)}


def update_inheritance(ctx, params):
    """Set the groups whose members are members of a group, and those whose
    members may bless it or see its members (Bugzilla's grants).

    params: id (the group), member_groups (names; every other such group
    is removed), bless_groups and visible_to (names; absent: unchanged).
    Returns {"id", "changes"}; audited as Bugzilla::Group.
    Errors: 410 logged out; 304 not in creategroups; 50 no id; 51 unknown
    group; 32000 the group named as its own member.
    """
    require_group(ctx, "creategroups", "edit group inheritance")
    p = Params(params)
    group_id = p.int("id")
    if group_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name a group with 'id'.")
    return group.set_member_groups(
        ctx, group_id, p.str_list("member_groups") or [],
        bless=p.str_list("bless_groups") if p.get("bless_groups") is not None else None,
        visible=p.str_list("visible_to") if p.get("visible_to") is not None else None)
