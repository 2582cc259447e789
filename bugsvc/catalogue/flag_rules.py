"""Which flag types apply where, and who may set or request them.

A flag type applies to a product/component when some inclusion matches it
and no exclusion does. An inclusion or exclusion row names a product (NULL:
every product) and a component (NULL: every component of that product).

Asked about a whole product (no component), a type applies when one of its
inclusions for that product survives the exclusions: an exclusion of the
whole product (or of every product) removes every inclusion, an exclusion of
one component removes only an inclusion of that same component (as the
reference's FlagType::match does).

Other areas call `flag_types_for_component` (product objects),
`applicable_type_ids` (flags on bugs and attachments), `can_set_flag` and
`can_request_flag`.
"""

from ..accounts.caller import load_caller
from ..store.db import placeholders


TARGET_CODES = {"bug": "b", "attachment": "a"}
TARGET_NAMES = {code: name for name, code in TARGET_CODES.items()}

TYPE_COLUMNS = ("id, name, description, cc_list, target_type, is_active, is_requestable,"
                " is_requesteeble, is_multiplicable, sort_key, grant_group_id, request_group_id")


def type_row_to_dict(row):
    """A flag_types row as a plain dict with booleans and `target` ('bug' or
    'attachment')."""
    return {
        "id": row["id"], "name": row["name"], "description": row["description"],
        "cc_list": row["cc_list"], "target": TARGET_NAMES.get(row["target_type"], "bug"),
        "is_active": bool(row["is_active"]), "is_requestable": bool(row["is_requestable"]),
        "is_requesteeble": bool(row["is_requesteeble"]),
        "is_multiplicable": bool(row["is_multiplicable"]), "sort_key": row["sort_key"],
        "grant_group_id": row["grant_group_id"], "request_group_id": row["request_group_id"],
    }


def sort_types(types):
    """Flag type dicts in the reference's list order: sort key, then name."""
    return sorted(types, key=lambda t: (t["sort_key"], t["name"].lower(), t["name"], t["id"]))


def load_types(conn, type_ids=None):
    """Flag type dicts (all, or those of `type_ids`), in list order."""
    sql = f"SELECT {TYPE_COLUMNS} FROM flag_types"
    args = []
    if type_ids is not None:
        type_ids = list(type_ids)
        if not type_ids:
            return []
        sql += f" WHERE id IN ({placeholders(type_ids)})"
        args = type_ids
    return sort_types(type_row_to_dict(row) for row in conn.execute(sql, args))


def clusions(conn, table, type_ids):
    """{type_id: [(product_id, component_id), ...]} from flag_inclusions or
    flag_exclusions (`table`) for `type_ids`."""
    if table not in ("flag_inclusions", "flag_exclusions"):
        raise ValueError(table)
    type_ids = list(type_ids)
    result = {type_id: [] for type_id in type_ids}
    if not type_ids:
        return result
    for type_id, product_id, component_id in conn.execute(
            f"SELECT type_id, product_id, component_id FROM {table}"
            f" WHERE type_id IN ({placeholders(type_ids)})", type_ids):
        result[type_id].append((product_id, component_id))
    return result


def _covers(rule, product_id, component_id):
    rule_product, rule_component = rule
    return ((rule_product is None or rule_product == product_id)
            and (rule_component is None or rule_component == component_id))


def applies(inclusions, exclusions, product_id, component_id=None):
    """True when a type with these inclusion/exclusion rules applies to the
    product (and component, when given)."""
    if component_id is not None:
        return (any(_covers(rule, product_id, component_id) for rule in inclusions)
                and not any(_covers(rule, product_id, component_id) for rule in exclusions))
    for included_product, included_component in inclusions:
        if included_product not in (None, product_id):
            continue
        blocked = any(
            excluded_product is None
            or (excluded_product == product_id and excluded_component is None)
            or (included_component is not None and excluded_component == included_component)
            for excluded_product, excluded_component in exclusions)
        if not blocked:
            return True
    return False


def matching_types(conn, product_id, component_id=None, target=None):
    """Flag type dicts that apply to the product (and component), in list
    order; `target` ('bug' or 'attachment') narrows the kind. Inactive types
    are included: they still apply, they only take no new flags."""
    sql = ("SELECT DISTINCT type_id FROM flag_inclusions"
           " WHERE product_id IS NULL OR product_id = ?")
    candidates = [row[0] for row in conn.execute(sql, (product_id,))]
    included = clusions(conn, "flag_inclusions", candidates)
    excluded = clusions(conn, "flag_exclusions", candidates)
    ids = [type_id for type_id in candidates
           if applies(included[type_id], excluded[type_id], product_id, component_id)]
    types = load_types(conn, ids)
    if target is not None:
        types = [t for t in types if t["target"] == target]
    return types


def product_flag_type(flag_type):
    """A type in the "Product flag type" format of component objects."""
    return {
        "id": flag_type["id"],
        "name": flag_type["name"],
        "description": flag_type["description"],
        "cc_list": flag_type["cc_list"],
        "sort_key": flag_type["sort_key"],
        "is_active": flag_type["is_active"],
        "is_requestable": flag_type["is_requestable"],
        "is_requesteeble": flag_type["is_requesteeble"],
        "is_multiplicable": flag_type["is_multiplicable"],
        "grant_group": flag_type["grant_group_id"],
        "request_group": flag_type["request_group_id"],
    }


def flag_types_for_component(conn, product_id, component_id):
    """{"bug": [...], "attachment": [...]}: the types that apply to the
    component, as "Product flag type" objects sorted by sort key then name."""
    result = {"bug": [], "attachment": []}
    for flag_type in matching_types(conn, product_id, component_id):
        result[flag_type["target"]].append(product_flag_type(flag_type))
    return result


def applicable_type_ids(conn, product_id, component_id, target_type):
    """Ids of the types of kind `target_type` ('bug' or 'attachment') that
    apply to the component, in list order (inactive ones included)."""
    return [t["id"] for t in matching_types(conn, product_id, component_id, target_type)]


def can_set_flag(caller, flag_type):
    """True when `caller` may grant or deny (+/-) flags of the type: no
    grant group, or a member of it."""
    group_id = flag_type["grant_group_id"]
    return group_id is None or caller.in_group_id(group_id)


def can_request_flag(caller, flag_type):
    """True when `caller` may request (?) flags of the type: may set them,
    or there is no request group, or a member of it."""
    group_id = flag_type["request_group_id"]
    return can_set_flag(caller, flag_type) or group_id is None or caller.in_group_id(group_id)


def retarget_flags(conn, type_id):
    """After a type's inclusions/exclusions changed: move each of its flags
    on a bug (or on an attachment of a bug) where the type no longer
    applies to another type of the same name and kind that applies there,
    is active, takes one more flag and that the flag's setter may use;
    delete the flag when there is none (as the reference does)."""
    rows = conn.execute(
        "SELECT f.id, f.status, f.bug_id, f.attachment_id, f.setter_id, b.product_id,"
        " b.component_id FROM flags f JOIN bugs b ON b.id = f.bug_id WHERE f.type_id = ?"
        " ORDER BY f.id", (type_id,)).fetchall()
    if not rows:
        return
    flag_type = load_types(conn, [type_id])[0]
    for flag in rows:
        here = matching_types(conn, flag["product_id"], flag["component_id"], flag_type["target"])
        if any(t["id"] == type_id for t in here):
            continue
        setter = load_caller(conn, flag["setter_id"])
        twin = next((t for t in here if t["name"] == flag_type["name"] and t["is_active"]
                     and _takes_another_flag(conn, t, flag)
                     and setter is not None
                     and (can_set_flag(setter, t)
                          or (flag["status"] == "?" and can_request_flag(setter, t)))), None)
        if twin is not None:
            conn.execute("UPDATE flags SET type_id = ? WHERE id = ?", (twin["id"], flag["id"]))
        else:
            conn.execute("DELETE FROM flags WHERE id = ?", (flag["id"],))


def _takes_another_flag(conn, flag_type, flag):
    if flag_type["is_multiplicable"]:
        return True
    sql = "SELECT 1 FROM flags WHERE type_id = ? AND bug_id = ?"
    args = [flag_type["id"], flag["bug_id"]]
    if flag["attachment_id"] is None:
        sql += " AND attachment_id IS NULL"
    else:
        sql += " AND attachment_id = ?"
        args.append(flag["attachment_id"])
    return conn.execute(sql, args).fetchone() is None
