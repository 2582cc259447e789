"""Versions and milestones of a product: one code for both kinds (a
bugsvc extension in the reference's style). Bugs carry them by name, so a
rename follows onto the bugs; values in use are deactivated (is_active
false), and only values no bug has are deleted."""

from dataclasses import dataclass

from ..call.changes import note
from ..errors import OBJECT_DOES_NOT_EXIST, USER_ERROR, ServiceError
from ..store import audit
from . import catalog, group_control
from .admin import administered_product, check_can_admin, checked_name


@dataclass(frozen=True)
class ValueKind:
    """A per-product value: versions or milestones.

    table: its table; noun: 'version'; audit_class: 'Version'; bug_column:
    the bugs column holding the value by name.
    """
    table: str
    noun: str
    audit_class: str
    bug_column: str


VERSION = ValueKind("versions", "version", "Version", "version")
MILESTONE = ValueKind("milestones", "milestone", "Milestone", "target_milestone")


def _value_by_name(ctx, kind, product_id, name):
    row = ctx.conn.execute(f"SELECT id FROM {kind.table} WHERE product_id = ? AND"
                           " lower(name) = lower(?)", (product_id, name)).fetchone()
    return None if row is None else row[0]


def _value_by_id(ctx, kind, value_id):
    if kind is VERSION:
        return catalog.version_by_id(ctx.conn, value_id)
    return catalog.milestone_by_id(ctx.conn, value_id)


def create(ctx, kind, product, name, sort_key=0, is_active=True):
    """Add a version or milestone (`kind`) to `product` (an id or name).
    Returns its id.
    Errors: 50 no product; 106 unknown or hidden product; 32000 a name that
    is blank, too long, or already the product's.
    """
    product = administered_product(ctx, product)
    name = checked_name(name, kind.noun)
    if _value_by_name(ctx, kind, product["id"], name) is not None:
        raise ServiceError(USER_ERROR, f"The {kind.noun} '{name}' already exists for product "
                                       f"'{product['name']}'.")
    cur = ctx.conn.execute(f"INSERT INTO {kind.table} (product_id, name, sort_key, is_active)"
                           " VALUES (?, ?, ?, ?) RETURNING id",
                           (product["id"], name, sort_key, int(is_active)))
    new_id = cur.fetchone()[0]
    audit.record(ctx, kind.audit_class, new_id)
    return new_id


def update(ctx, kind, ids, given):
    """Change versions or milestones (`kind`).

    given: {field: new value} of the fields given: name (one value per
    product only), sort_key, is_active. A rename follows onto the bugs that
    carry the value (and, for milestones, the product's default milestone).
    Returns [{"id", "changes"}]; booleans "1"/"0".
    Errors: 51 unknown id, or the value's product is hidden from the caller
    (alike); 32000 blank, too long or taken name, two values of one product
    renamed, the default milestone deactivated. Nothing is stored unless
    all is valid.
    """
    values, seen = [], set()
    for value_id in ids:
        value = _value_by_id(ctx, kind, value_id)
        # A value of a hidden product answers like a missing one.
        if value is None or not group_control.can_see_product(ctx, value["product_id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {kind.noun} with the id "
                                                      f"'{value_id}'.")
        check_can_admin(ctx, catalog.product_by_id(ctx.conn, value["product_id"]))
        if value["id"] not in seen:
            seen.add(value["id"])
            values.append(value)
    new = {}
    if "name" in given:
        new["name"] = checked_name(given["name"], kind.noun)
        products = [v["product_id"] for v in values]
        if len(set(products)) != len(products):
            raise ServiceError(USER_ERROR, f"Only one {kind.noun} per product can be renamed "
                                           "at a time.")
        for value in values:
            other = _value_by_name(ctx, kind, value["product_id"], new["name"])
            if other is not None and other != value["id"]:
                raise ServiceError(USER_ERROR, f"The {kind.noun} '{new['name']}' already exists "
                                               "in this product.")
    if "sort_key" in given:
        new["sort_key"] = given["sort_key"]
    if "is_active" in given:
        new["is_active"] = given["is_active"]
        if kind is MILESTONE and not new["is_active"]:
            for value in values:
                default = ctx.conn.execute("SELECT default_milestone FROM products WHERE id = ?",
                                           (value["product_id"],)).fetchone()[0]
                if default.lower() == value["name"].lower():
                    raise ServiceError(USER_ERROR, f"The milestone '{value['name']}' is the "
                                                   "default milestone of its product and "
                                                   "cannot be deactivated.")
    answers = []
    for value in values:
        changes = {}
        for field in ("name", "sort_key", "is_active"):
            if field in new and note(changes, field, value[field], new[field]):
                ctx.conn.execute(f"UPDATE {kind.table} SET {field} = ? WHERE id = ?",
                                 (int(new[field]) if field == "is_active" else new[field],
                                  value["id"]))
        if "name" in changes:
            _follow_rename(ctx, kind, value, new["name"])
        audit.record_changes(ctx, kind.audit_class, value["id"], changes)
        answers.append({"id": value["id"], "changes": changes})
    return answers


def _follow_rename(ctx, kind, value, new_name):
    """Bugs store versions and milestones by name: carry a rename over."""
    ctx.conn.execute(f"UPDATE bugs SET {kind.bug_column} = ? WHERE product_id = ? AND"
                     f" {kind.bug_column} = ?", (new_name, value["product_id"], value["name"]))
    if kind is MILESTONE:
        ctx.conn.execute("UPDATE products SET default_milestone = ? WHERE id = ? AND"
                         " default_milestone = ?", (new_name, value["product_id"], value["name"]))


def delete(ctx, kind, ids):
    """Delete versions or milestones (`kind`) that no bug has; returns
    [{"id"}]. Errors: 51 unknown id, or of a product hidden from the caller
    (alike); 32000 a value bugs have (deactivate it instead), a product's
    default milestone, or a product's last version or milestone. Nothing
    is deleted unless all may be."""
    values = []
    for value_id in ids:
        value = _value_by_id(ctx, kind, value_id)
        if value is None or not group_control.can_see_product(ctx, value["product_id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {kind.noun} with the id "
                                                      f"'{value_id}'.")
        check_can_admin(ctx, catalog.product_by_id(ctx.conn, value["product_id"]))
        if all(v["id"] != value["id"] for v in values):
            values.append(value)
    for value in values:
        used = ctx.conn.execute(f"SELECT COUNT(*) FROM bugs WHERE product_id = ?"
                                f" AND {kind.bug_column} = ?",
                                (value["product_id"], value["name"])).fetchone()[0]
        if used:
            raise ServiceError(USER_ERROR, f"The {kind.noun} '{value['name']}' cannot be "
                                           f"deleted: {used} bug{'s have' if used > 1 else ' has'}"
                                           f" it. Deactivate it instead.")
        if kind is MILESTONE and ctx.conn.execute(
                "SELECT 1 FROM products WHERE id = ? AND lower(default_milestone) = lower(?)",
                (value["product_id"], value["name"])).fetchone():
            raise ServiceError(USER_ERROR, f"The milestone '{value['name']}' is the default "
                                           "milestone of its product and cannot be deleted.")
        left = ctx.conn.execute(f"SELECT COUNT(*) FROM {kind.table} WHERE product_id = ?",
                                (value["product_id"],)).fetchone()[0]
        going = sum(1 for v in values if v["product_id"] == value["product_id"])
        if left <= going:
            raise ServiceError(USER_ERROR, f"The {kind.noun} '{value['name']}' is the last of "
                                           f"its product and cannot be deleted.")
    for value in values:
        ctx.conn.execute(f"DELETE FROM {kind.table} WHERE id = ?", (value["id"],))
        audit.record(ctx, kind.audit_class, value["id"], "name", value["name"], "",
                     name=value["name"])
    return [{"id": value["id"]} for value in values]
