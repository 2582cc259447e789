"""Which groups a bug in a product may, must or does by default belong to,
from the product's group controls (the reference's
groups_available / groups_mandatory / group_is_settable / groups_valid)."""

from ..catalogue import catalog
from ..catalogue.group_control import DEFAULT, MANDATORY, NA, SHOWN
from ..errors import GROUP_NOT_ALLOWED, ServiceError
from ..store.db import placeholders
from . import activity


def controls(conn, product_id):
    """{group id: control row dict with the group's name, is_active,
    is_bug_group} of the product."""
    rows = conn.execute(
        "SELECT gc.group_id, gc.membercontrol, gc.othercontrol, gc.entry, gc.canedit, g.name,"
        " g.is_active, g.is_bug_group FROM group_controls gc JOIN groups g ON g.id = gc.group_id"
        " WHERE gc.product_id = ?", (product_id,))
    return {row["group_id"]: dict(row) for row in rows}


def available(ctx, product_id):
    """{group id: is_default} of the active bug groups the caller may put
    bugs of the product in: the member control for groups the caller is in
    (when Shown or Default), else the other control."""
    result = {}
    for group_id, control in controls(ctx.conn, product_id).items():
        if not (control["is_active"] and control["is_bug_group"]):
            continue
        member_control = control["membercontrol"]
        if ctx.caller.in_group_id(group_id) and member_control in (SHOWN, DEFAULT):
            result[group_id] = member_control == DEFAULT
        elif control["othercontrol"] in (SHOWN, DEFAULT):
            result[group_id] = control["othercontrol"] == DEFAULT
    return result


def mandatory(ctx, product_id):
    """Ids of the active groups every bug of the product must be in (for the
    caller): Mandatory for members, or Mandatory for others and the caller
    is not a member."""
    return {group_id for group_id, control in controls(ctx.conn, product_id).items()
            if control["is_active"]
            and (control["membercontrol"] == MANDATORY
                 or (control["othercontrol"] == MANDATORY
                     and not ctx.caller.in_group_id(group_id)))}


def valid(conn, product_id):
    """Ids of the bug groups bugs of the product may be in at all (a control
    other than NA)."""
    return {group_id for group_id, control in controls(conn, product_id).items()
            if control["is_bug_group"]
            and (control["membercontrol"] != NA or control["othercontrol"] != NA)}


def settable(ctx, product_id, group_id):
    """True when the caller may restrict bugs of the product to the group."""
    return group_id in mandatory(ctx, product_id) or group_id in available(ctx, product_id)


def by_name(ctx, name, action, product_name):
    """The group called `name`, without revealing whether it exists.
    Errors: 120 unknown."""
    group = catalog.group_by_name(ctx.conn, str(name).strip()) if name is not None else None
    if group is None:
        raise not_allowed(name, action, product_name)
    return group


def not_allowed(name, action, product_name):
    """The 120 error for `action` ('add' or 'remove') of group `name`."""
    if action == "remove":
        return ServiceError(GROUP_NOT_ALLOWED, f"You tried to remove the group '{name}' from a bug "
                                               f"in '{product_name}', but that is not allowed.")
    return ServiceError(GROUP_NOT_ALLOWED, f"You tried to restrict a bug in '{product_name}' to "
                                           f"the group '{name}', but that is not allowed.")


def for_new_bug(ctx, product, names):
    """Group ids of a new bug. names: None = the product's default groups;
    a list = exactly those. Mandatory groups are always added.
    Errors: 120 a group that does not exist or may not be used."""
    if names is None:
        chosen = [group_id for group_id, is_default in available(ctx, product["id"]).items()
                  if is_default]
    else:
        chosen = []
        for name in names:
            group = by_name(ctx, name, "add", product["name"])
            if not settable(ctx, product["id"], group["id"]):
                raise not_allowed(name, "add", product["name"])
            chosen.append(group["id"])
    for group_id in sorted(mandatory(ctx, product["id"])):
        if group_id not in chosen:
            chosen.append(group_id)
    return sorted(set(chosen))


def of_bugs(ctx, bug_ids):
    """{bug id: [{"id", "name"}] of the groups it is in, by name} of each
    of `bug_ids` (whoever asks must be allowed to see them)."""
    found = {bug_id: [] for bug_id in bug_ids}
    if not found:
        return found
    for row in ctx.conn.execute("SELECT bg.bug_id, g.id, g.name FROM bug_groups bg JOIN groups g"
                                " ON g.id = bg.group_id"
                                f" WHERE bg.bug_id IN ({placeholders(found)})", list(found)):
        found[row[0]].append({"id": row[1], "name": row[2]})
    for groups in found.values():
        groups.sort(key=lambda group: group["name"].lower())
    return found


def offered_for_new_bug(ctx, product):
    """What the new-bug form of `product` (a product dict) offers the
    caller, as Bugzilla 5.2's enter_bug.cgi: {"groups": [{"id", "name",
    "description", "is_default"}] the groups the caller may tick (Shown or
    Default for the caller: the member control for a member, else the other
    control; Default ones ticked at first), "mandatory": [{"id", "name",
    "description"}] those every new bug of the caller's is put in}, each
    by name. Bug.create's groups apply the same rules (for_new_bug)."""
    available_ids = available(ctx, product["id"])
    mandatory_ids = mandatory(ctx, product["id"]) - set(available_ids)
    wanted = set(available_ids) | mandatory_ids
    offered = {"groups": [], "mandatory": []}
    if not wanted:
        return offered
    rows = ctx.conn.execute("SELECT id, name, description FROM groups"
                            f" WHERE id IN ({placeholders(wanted)})", sorted(wanted)).fetchall()
    for row in sorted(rows, key=lambda row: row["name"].lower()):
        group = {"id": row["id"], "name": row["name"], "description": row["description"]}
        if row["id"] in available_ids:
            offered["groups"].append(dict(group, is_default=available_ids[row["id"]]))
        else:
            offered["mandatory"].append(group)
    return offered


def restrict_product_bugs(ctx, product_id, group):
    """Put every bug of the product into `group` (a group dict, now
    Mandatory for the product), each change in the bug's history."""
    bug_ids = [row[0] for row in ctx.conn.execute(
        "SELECT b.id FROM bugs b WHERE b.product_id = ? AND NOT EXISTS (SELECT 1 FROM"
        " bug_groups bg WHERE bg.bug_id = b.id AND bg.group_id = ?) ORDER BY b.id",
        (product_id, group["id"]))]
    for bug_id in bug_ids:
        ctx.conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                         (bug_id, group["id"]))
        activity.record(ctx.conn, bug_id, ctx.caller.id, ctx.now, "groups", "", group["name"])


def lift_product_restriction(ctx, product_id, group):
    """Take every bug of the product out of `group` (a group dict, now NA
    for the product), each change in the bug's history."""
    bug_ids = [row[0] for row in ctx.conn.execute(
        "SELECT bg.bug_id FROM bug_groups bg JOIN bugs b ON b.id = bg.bug_id"
        " WHERE b.product_id = ? AND bg.group_id = ? ORDER BY bg.bug_id",
        (product_id, group["id"]))]
    for bug_id in bug_ids:
        ctx.conn.execute("DELETE FROM bug_groups WHERE bug_id = ? AND group_id = ?",
                         (bug_id, group["id"]))
        activity.record(ctx.conn, bug_id, ctx.caller.id, ctx.now, "groups", group["name"], "")
