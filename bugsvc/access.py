"""Who may see and use which product: the reference's per-product group
controls (admin.md section 4), in one place for every area.

membercontrol / othercontrol values: 0 NA, 1 Shown, 2 Default, 3 Mandatory.
"""

from .db import placeholders

NA, SHOWN, DEFAULT, MANDATORY = 0, 1, 2, 3
CONTROL_NAMES = {NA: "NA", SHOWN: "Shown", DEFAULT: "Default", MANDATORY: "Mandatory"}
CONTROL_VALUES = {name: value for value, name in CONTROL_NAMES.items()}


def _not_in_groups(caller, column):
    """SQL condition '<column> NOT IN (caller's groups)' and its arguments."""
    groups = sorted(caller.group_ids)
    if not groups:
        return "1 = 1", []
    return f"{column} NOT IN ({placeholders(groups)})", groups


def selectable_product_ids(ctx):
    """Ids of the products the caller may search: those with no Mandatory
    group control for a group the caller is not in."""
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})"
        " ORDER BY lower(p.name)", args)
    return [row[0] for row in rows]


def enterable_product_ids(ctx):
    """Ids of the active products the caller may file bugs in: member of every
    entry group, with at least one active component and one active version."""
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    rows = ctx.conn.execute(
        "SELECT p.id FROM products p WHERE p.is_active = 1"
        " AND EXISTS (SELECT 1 FROM components c WHERE c.product_id = p.id AND c.is_active = 1)"
        " AND EXISTS (SELECT 1 FROM versions v WHERE v.product_id = p.id AND v.is_active = 1)"
        " AND NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.entry <> 0 AND {condition})"
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
    condition, args = _not_in_groups(ctx.caller, "gc.group_id")
    row = ctx.conn.execute(
        "SELECT 1 FROM products p WHERE p.id = ? AND NOT EXISTS (SELECT 1 FROM group_controls gc"
        f" WHERE gc.product_id = p.id AND gc.membercontrol = {MANDATORY} AND {condition})",
        [product_id] + args).fetchone()
    return row is not None


def can_enter_product(ctx, product_id):
    """True when the caller may file bugs in product `product_id` right now."""
    return product_id in enterable_product_ids(ctx)
