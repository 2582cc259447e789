"""Per-product group controls, the reference's: what they mean for who may
search and file bugs in which product; reading them as `{group name:
{membercontrol, othercontrol, entry, canedit}}` (a bugsvc extension over
REST), checking a requested change, and storing it (its effect on the
product's bugs is bugs/groups.py's).

membercontrol / othercontrol values: 0 NA, 1 Shown, 2 Default, 3 Mandatory.
"""

from ..accounts.membership import not_member_sql
from ..errors import OBJECT_DOES_NOT_EXIST, USER_ERROR, ServiceError
from ..store.db import placeholders
from . import catalog


NA, SHOWN, DEFAULT, MANDATORY = 0, 1, 2, 3
CONTROL_NAMES = {NA: "NA", SHOWN: "Shown", DEFAULT: "Default", MANDATORY: "Mandatory"}
CONTROL_VALUES = {name: value for value, name in CONTROL_NAMES.items()}

# Rights members of a group may hold on one product alone (Bugzilla's
# PER_PRODUCT_PRIVILEGES); each is a column of group_controls.
PER_PRODUCT_PRIVILEGES = ("editcomponents", "editbugs", "canconfirm")
FLAGS = ("entry", "canedit") + PER_PRODUCT_PRIVILEGES
_SETTINGS = ("membercontrol", "othercontrol") + FLAGS
_NONE = {"membercontrol": NA, "othercontrol": NA, **{flag: 0 for flag in FLAGS}}
_COLUMNS = ", ".join(_SETTINGS)


# Who may search and file bugs in which product -------------------------------

def selectable_product_ids(ctx):
    """Ids of the products the caller may search: those with no Mandatory
    group control for a group the caller is not in."""
    condition, args = not_member_sql(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})"
        " ORDER BY lower(p.name)", args)
    return [row[0] for row in rows]


def enterable_product_ids(ctx):
    """Ids of the active products the caller may file bugs in: member of every
    entry group, with at least one active component and one active version.

    Searching is another right: a product with a Mandatory control for a
    group the caller is not in, but no entry group it lacks, is enterable
    without being selectable (the reference's "report a security bug here"
    product). A bug filed there gets the group, and its reporter keeps
    access to it through is_creator_accessible.
    """
    condition, args = not_member_sql(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE p.is_active = 1"
        " AND EXISTS (SELECT 1 FROM components c WHERE c.product_id = p.id AND c.is_active = 1)"
        " AND EXISTS (SELECT 1 FROM versions v WHERE v.product_id = p.id AND v.is_active = 1)"
        " AND NOT EXISTS (SELECT 1 FROM group_controls gc WHERE gc.product_id = p.id"
        f" AND gc.entry <> 0 AND {condition})"
        " ORDER BY lower(p.name)", args)
    return [row[0] for row in rows]


def accessible_product_ids(ctx):
    """Ids of the products the caller may search or file bugs in, by name."""
    selectable = selectable_product_ids(ctx)
    enterable = set(enterable_product_ids(ctx)) - set(selectable)
    ids = selectable + sorted(enterable)
    if not enterable:
        return ids
    names = dict(ctx.conn.execute(f"SELECT id, lower(name) FROM products WHERE id IN"
                                  f" ({placeholders(ids)})", ids).fetchall())
    return sorted(ids, key=lambda pid: names[pid])


def can_see_product(ctx, product_id):
    """True when the caller may search product `product_id`."""
    condition, args = not_member_sql(ctx.caller, "gc.group_id")
    row = ctx.conn.execute(
        "SELECT 1 FROM products p WHERE p.id = ? AND NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})",
        [product_id] + args).fetchone()
    return row is not None


def can_enter_product(ctx, product_id):
    """True when the caller may file bugs in product `product_id` right now."""
    return product_id in enterable_product_ids(ctx)


# Rights on one product -------------------------------------------------------

def in_group_for_product(ctx, group, product_id):
    """Bugzilla's in_group(group, product): True when the caller is a member
    of `group`, or `group` is one of PER_PRODUCT_PRIVILEGES and a group the
    caller is in holds it in the controls of product `product_id`."""
    if ctx.caller.in_group(group):
        return True
    if group not in PER_PRODUCT_PRIVILEGES or not product_id or not ctx.caller.group_ids:
        return False
    groups = sorted(ctx.caller.group_ids)
    row = ctx.conn.execute(
        f"SELECT 1 FROM group_controls WHERE product_id = ? AND {group} <> 0"
        f" AND group_id IN ({placeholders(groups)}) LIMIT 1",
        [product_id] + groups).fetchone()
    return row is not None


def products_by_permission(ctx, group):
    """Ids of the products the caller may search and holds `group` (one of
    PER_PRODUCT_PRIVILEGES) on through their group controls (Bugzilla's
    get_products_by_permission)."""
    if group not in PER_PRODUCT_PRIVILEGES or not ctx.caller.group_ids:
        return []
    groups = sorted(ctx.caller.group_ids)
    held = {row[0] for row in ctx.conn.execute(
        f"SELECT DISTINCT product_id FROM group_controls WHERE {group} <> 0"
        f" AND group_id IN ({placeholders(groups)})", groups)}
    return [pid for pid in selectable_product_ids(ctx) if pid in held] if held else []


def product_rights(ctx):
    """{right: [product names]} for each of PER_PRODUCT_PRIVILEGES: the
    products the caller may search whose group controls give it that right
    (whether or not it holds the right globally)."""
    rights = {}
    for group in PER_PRODUCT_PRIVILEGES:
        ids = products_by_permission(ctx, group)
        rights[group] = sorted((catalog.product_by_id(ctx.conn, pid)["name"] for pid in ids),
                               key=str.lower)
    return rights


def may_admin_some_product(ctx):
    """True when the caller is in editcomponents or holds it on a product."""
    return (ctx.caller.in_group("editcomponents")
            or bool(products_by_permission(ctx, "editcomponents")))


# Reading and changing a product's controls ----------------------------------


def controls_of(conn, product_id):
    """The product's controls: {group name: {"membercontrol": "Shown", ...,
    "entry", "canedit", "editcomponents", "editbugs", "canconfirm": bool}}."""
    columns = ", ".join(f"gc.{column}" for column in _SETTINGS)
    rows = conn.execute(
        f"SELECT g.name, {columns} FROM group_controls gc JOIN groups g ON g.id = gc.group_id"
        " WHERE gc.product_id = ? ORDER BY lower(g.name)", (product_id,))
    return {row["name"]: {"membercontrol": CONTROL_NAMES[row["membercontrol"]],
                          "othercontrol": CONTROL_NAMES[row["othercontrol"]],
                          **{flag: bool(row[flag]) for flag in FLAGS}}
            for row in rows}


def _stored(conn, product_id):
    """{group id: {membercontrol, othercontrol, entry, canedit, ...}} as stored (ints)."""
    rows = conn.execute(f"SELECT group_id, {_COLUMNS} FROM group_controls"
                        " WHERE product_id = ?", (product_id,))
    return {row["group_id"]: {name: row[name] for name in _SETTINGS} for row in rows}


def _control_value(value, group_name, field):
    if isinstance(value, str):
        for name, number in CONTROL_VALUES.items():
            if value.strip().lower() == name.lower():
                return number
    raise ServiceError(USER_ERROR, f"The {field} of group '{group_name}' must be one of NA, "
                                   "Shown, Default, Mandatory.")


def _flag(value, group_name, field):
    if isinstance(value, bool) or value in (0, 1):
        return int(bool(value))
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false", ""):
        return int(value.strip().lower() in ("1", "true"))
    raise ServiceError(USER_ERROR, f"The {field} of group '{group_name}' must be a boolean.")


def legal_combination(membercontrol, othercontrol):
    """The reference's rule: equal controls, or Shown for members, or Default
    for members with anything but Shown for others."""
    return (membercontrol == othercontrol or membercontrol == SHOWN
            or (membercontrol == DEFAULT and othercontrol != SHOWN))


def plan(conn, requested):
    """Check a `group_controls` parameter; return [(group, settings or None)]
    with the group as a catalog dict and the given settings as numbers.

    requested: {group name: None (remove) or {membercontrol, othercontrol,
    entry, canedit, editcomponents, editbugs, canconfirm}}; a missing
    setting keeps its current value (NA / false for a group not yet
    controlled).
    Errors: 51 unknown group; 32000 a group that is not an active bug group,
    an unknown setting, a bad value or an illegal combination.
    """
    if not isinstance(requested, dict):
        raise ServiceError(USER_ERROR, "The parameter 'group_controls' must be an object keyed "
                                       "by group name.")
    result = []
    for group_name, settings in requested.items():
        group = catalog.group_by_name(conn, group_name)
        if group is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no group named '{group_name}'.")
        if settings is None:
            result.append((group, None))
            continue
        if not isinstance(settings, dict):
            raise ServiceError(USER_ERROR, f"The controls of group '{group_name}' must be an "
                                           "object or null.")
        if not (group["is_bug_group"] and group["is_active"]):
            raise ServiceError(USER_ERROR, f"The group '{group['name']}' is not an active bug "
                                           "group; products cannot be controlled by it.")
        unknown = sorted(set(settings) - set(_SETTINGS))
        if unknown:
            raise ServiceError(USER_ERROR, f"'{unknown[0]}' is not a group control setting.")
        parsed = {}
        for field in ("membercontrol", "othercontrol"):
            if settings.get(field) is not None:
                parsed[field] = _control_value(settings[field], group["name"], field)
        for field in FLAGS:
            if settings.get(field) is not None:
                parsed[field] = _flag(settings[field], group["name"], field)
        result.append((group, parsed))
    return result


def apply(ctx, product_id, planned, changes):
    """Store `planned` (from `plan`) for product `product_id`; add a
    `group_controls.<group>` entry to `changes` for each group that changed.

    Returns (groups now Mandatory for members, groups now NA or removed):
    the first restrict every bug of the product, the second are lifted from
    them, as the reference does (bugs/groups.py applies that).
    Errors: 32000 an illegal membercontrol/othercontrol combination.
    """
    mandatory, lifted = [], []
    stored = _stored(ctx.conn, product_id)
    for group, parsed in planned:
        old = stored.get(group["id"])
        new = dict(_NONE) if parsed is None else {**(old or _NONE), **parsed}
        if not legal_combination(new["membercontrol"], new["othercontrol"]):
            raise ServiceError(USER_ERROR, f"The combination {CONTROL_NAMES[new['membercontrol']]}"
                                           f"/{CONTROL_NAMES[new['othercontrol']]} of group "
                                           f"'{group['name']}' is not allowed.")
        all_zero = not any(new.values())
        if old == new or (old is None and all_zero):
            continue
        if all_zero:
            ctx.conn.execute("DELETE FROM group_controls WHERE product_id = ? AND group_id = ?",
                             (product_id, group["id"]))
        elif old is None:
            ctx.conn.execute(f"INSERT INTO group_controls (group_id, product_id, {_COLUMNS})"
                             f" VALUES (?, ?, {placeholders(_SETTINGS)})",
                             [group["id"], product_id] + [new[name] for name in _SETTINGS])
        else:
            assignments = ", ".join(f"{name} = ?" for name in _SETTINGS)
            ctx.conn.execute(f"UPDATE group_controls SET {assignments}"
                             " WHERE product_id = ? AND group_id = ?",
                             [new[name] for name in _SETTINGS] + [product_id, group["id"]])
        changes[f"group_controls.{group['name']}"] = {
            "removed": _describe(None if old is None else old),
            "added": "" if all_zero else _describe(new)}
        if new["membercontrol"] == MANDATORY:
            mandatory.append(group)
        elif new["membercontrol"] == NA:
            lifted.append(group)
    return mandatory, lifted


def _describe(settings):
    if settings is None:
        return ""
    return (f"membercontrol: {CONTROL_NAMES[settings['membercontrol']]}, "
            f"othercontrol: {CONTROL_NAMES[settings['othercontrol']]}, "
            + ", ".join(f"{flag}: {int(bool(settings[flag]))}" for flag in FLAGS))
