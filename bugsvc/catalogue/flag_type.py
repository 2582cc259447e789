"""Flag types: the types of a product or component as the caller may use
them, creating and changing them (which types apply to a bug and who may
set them is flag_rules.py's).

Inclusions and exclusions are given as an array of product names (every
component of each) and/or objects {product name: [component names]}, where
an empty list of components means every component of that product. The
name "__Any__" stands for every product (or every component), as the
reference writes it.
"""

import re

from ..call.changes import note
from ..errors import (
    FLAG_TYPE_CC_LIST_INVALID,
    FLAG_TYPE_DESCRIPTION_INVALID,
    FLAG_TYPE_NAME_INVALID,
    FLAG_TYPE_NOT_EDITABLE,
    FLAG_TYPE_SORTKEY_INVALID,
    ILLEGAL_EMAIL_ADDRESS,
    INTERNAL_ERROR,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    PRODUCT_ACCESS_DENIED,
    USER_ERROR,
    ServiceError,
    require_group,
)
from ..store import audit
from . import catalog, flag_rules, group_control
from .admin import checked_text


ANY = "__Any__"
NAME_MAX_LENGTH = 50
CC_LIST_MAX_LENGTH = 200
SORTKEY_MAX = 32767
_NAME_FORBIDDEN = re.compile(r"[\s,]")
# An address as the reference accepts it for cc lists: no login needed.
_ADDRESS = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+"
                      r"@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")

# A field of update -> (column, key in `changes`). The keys are the
# reference's column names.
UPDATABLE = {
    "name": ("name", "name"),
    "description": ("description", "description"),
    "cc_list": ("cc_list", "cc_list"),
    "sortkey": ("sort_key", "sortkey"),
    "is_active": ("is_active", "is_active"),
    "is_requestable": ("is_requestable", "is_requestable"),
    "is_specifically_requestable": ("is_requesteeble", "is_requesteeble"),
    "is_multiplicable": ("is_multiplicable", "is_multiplicable"),
    "grant_group": ("grant_group_id", "grant_group_id"),
    "request_group": ("request_group_id", "request_group_id"),
}
CLUSIONS = {"inclusions": "flag_inclusions", "exclusions": "flag_exclusions"}


# Read ------------------------------------------------------------------------

def types_for(ctx, product_name, component_name=None):
    """The flag types of a product, or of one of its components:
    {"bug": [...], "attachment": [...]} of Flag type objects (see
    _flag_type_object, with inclusions/exclusions: the component names of
    this product the type is limited to or kept from, when it is), sorted
    by sort key then name.
    Errors: 106 product unknown or not accessible; 51 component unknown in
    the product.
    """
    product = _accessible_product(ctx, product_name)
    component_id = None
    if component_name:
        component_id = _component_id(ctx, product, component_name)
    types = flag_rules.matching_types(ctx.conn, product["id"], component_id)
    ids = [t["id"] for t in types]
    inclusions = flag_rules.clusions(ctx.conn, "flag_inclusions", ids)
    exclusions = flag_rules.clusions(ctx.conn, "flag_exclusions", ids)
    result = {"bug": [], "attachment": []}
    for flag_type in types:
        item = _flag_type_object(ctx, flag_type)
        included = _limiting_components(ctx, inclusions[flag_type["id"]], product["id"])
        excluded = _limiting_components(ctx, exclusions[flag_type["id"]], product["id"])
        if included:
            item["inclusions"] = included
        elif excluded:
            item["exclusions"] = excluded
        result[flag_type["target"]].append(item)
    return result


def _flag_type_object(ctx, flag_type):
    values = ["X"]
    if flag_type["is_requestable"] and flag_rules.can_request_flag(ctx.caller, flag_type):
        values.append("?")
    if flag_rules.can_set_flag(ctx.caller, flag_type):
        values += ["+", "-"]
    return {
        "id": flag_type["id"],
        "name": flag_type["name"],
        "description": flag_type["description"],
        "type": flag_type["target"],
        "values": values,
        "is_active": flag_type["is_active"],
        "is_requesteeble": flag_type["is_requesteeble"],
        "is_multiplicable": flag_type["is_multiplicable"],
    }


def _limiting_components(ctx, rules, product_id):
    """Names of the components of `product_id` that `rules` name one by one;
    [] when a rule covers the whole product (or none names it)."""
    component_ids = []
    for rule_product, rule_component in rules:
        if rule_product is not None and rule_product != product_id:
            continue
        if rule_component is None:
            return []
        component_ids.append(rule_component)
    if not component_ids:
        return []
    marks = ", ".join("?" for _ in component_ids)
    rows = ctx.conn.execute(f"SELECT name FROM components WHERE id IN ({marks})"
                            " ORDER BY lower(name)", component_ids)
    return [row[0] for row in rows]


def _accessible_product(ctx, name):
    product = catalog.product_by_name(ctx.conn, name)
    if product is None or product["id"] not in group_control.accessible_product_ids(ctx):
        raise _product_denied(name)
    return product


def _product_denied(name):
    return ServiceError(PRODUCT_ACCESS_DENIED,
                        f"Either the product '{name}' does not exist or you don't have access "
                        f"to it.")


def _component_id(ctx, product, name):
    component = catalog.component_by_name(ctx.conn, product["id"], name)
    if component is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST,
                           f"There is no component named '{name}' in the '{product['name']}' "
                           f"product.")
    return component["id"]


# Who administers which flag types --------------------------------------------

def administered_products(ctx, action):
    """The ids of the products whose flag types the caller administers:
    None for a member of editcomponents (every product, and __Any__), else
    the set of products its groups hold editcomponents on through their
    group controls (Bugzilla's get_products_by_permission).
    Errors: 410 logged out; 304 neither (`action` names what was refused)."""
    if ctx.caller.is_logged_in and ctx.caller.in_group("editcomponents"):
        return None
    mine = set(group_control.products_by_permission(ctx, "editcomponents")
               if ctx.caller.is_logged_in else ())
    if not mine:
        require_group(ctx, "editcomponents", action)
    return mine


def editability(inclusions, exclusions, mine):
    """(administered, fully editable) of a type with these rules
    ([(product id | None, component id | None)]) for a caller administering
    the products `mine` (None: every one). As the reference's
    check_can_admin_flagtype: a type is fully editable when its inclusions
    name only products of `mine` (__Any__ is not one); it is administered
    when, unless it excludes every product, it is included (for every
    product, for the whole product, or for a component not excluded) in a
    product of `mine` not excluded as a whole."""
    if mine is None:
        return True, True
    full = all(product in mine for product, _ in inclusions)
    if (None, None) in exclusions:
        return False, full
    for product in mine:
        if (product, None) in exclusions:
            continue
        if ((None, None) in inclusions or (product, None) in inclusions
                or any(rule[0] == product and rule not in exclusions for rule in inclusions)):
            return True, full
    return False, full


def _rights_on(ctx, flag_type, mine):
    """True when the caller may change everything of `flag_type`, False
    when only its inclusions and exclusions of the products `mine`.
    Errors: 1105 the type applies to none of the caller's products."""
    inclusions = flag_rules.clusions(ctx.conn, "flag_inclusions", [flag_type["id"]])
    exclusions = flag_rules.clusions(ctx.conn, "flag_exclusions", [flag_type["id"]])
    administered, full = editability(inclusions[flag_type["id"]],
                                     exclusions[flag_type["id"]], mine)
    if not administered:
        raise ServiceError(FLAG_TYPE_NOT_EDITABLE,
                           f"You are not allowed to edit properties of the '{flag_type['name']}' "
                           "flag type, because this flag type is not available for the products "
                           "you can administer.")
    return full


def _check_own_products(ctx, rules, mine, param):
    """Refuse rules naming a product outside `mine` (None: any is fine).
    Errors: 106 such a product, or __Any__ (every product)."""
    if mine is None:
        return
    for product_id, _ in rules:
        if product_id is None:
            raise ServiceError(PRODUCT_ACCESS_DENIED,
                               f"Only members of the editcomponents group may name {ANY} (every "
                               f"product) in '{param}'; name the products you administer.")
        if product_id not in mine:
            name = ctx.conn.execute("SELECT name FROM products WHERE id = ?",
                                    (product_id,)).fetchone()[0]
            raise ServiceError(PRODUCT_ACCESS_DENIED,
                               f"You may not include or exclude the product '{name}': you do not "
                               "administer it (editcomponents).")


def _with_others_kept(ctx, type_id, table, rules, mine):
    """`rules` (of the caller's products) with the type's stored rules of
    the products the caller does not administer (and __Any__) brought back."""
    if mine is None:
        return rules
    kept = [rule for rule in flag_rules.clusions(ctx.conn, table, [type_id])[type_id]
            if rule[0] not in mine]
    return rules + [rule for rule in kept if rule not in rules]


# Create ----------------------------------------------------------------------

def create(ctx, name, description, target_type="bug", sortkey=None, cc_list=None,
           is_active=True, is_requestable=True, is_specifically_requestable=True,
           is_multiplicable=True, grant_group=None, request_group=None, inclusions=None,
           exclusions=None, mine=None):
    """Store a new flag type. sortkey, cc_list, grant_group, request_group,
    inclusions and exclusions as given (see their checks); inclusions None:
    every product and component; exclusions None: none; `mine`: the
    products the caller administers (administered_products), which alone
    the inclusions and exclusions may name. Returns its id.
    Errors: 1101 bad name (blank, whitespace, comma, over 50 characters);
    1102 blank description; 1103 cc list over 200 characters; 501 a cc
    address that is not an address; 1104 sortkey not in 1..32767; 51
    unknown group or component; 106 unknown product in
    inclusions/exclusions, or one (or __Any__) outside `mine`; 53 a
    malformed inclusion/exclusion; -32000 target_type neither bug nor
    attachment.
    """
    values = {
        "name": _check_name(name),
        "description": _check_description(description),
        "target_type": _check_target_type(target_type),
        "sort_key": _check_sortkey(sortkey) if sortkey is not None else 1,
        "cc_list": _check_cc_list(cc_list),
        "is_active": is_active,
        "is_requestable": is_requestable,
        "is_requesteeble": is_specifically_requestable,
        "is_multiplicable": is_multiplicable,
        "grant_group_id": _check_group(ctx, grant_group),
        "request_group_id": _check_group(ctx, request_group),
    }
    if inclusions is None:
        inclusions = [(None, None)]
    else:
        inclusions = _parse_clusions(ctx, inclusions, "inclusions")
    if exclusions is None:
        exclusions = []
    else:
        exclusions = _parse_clusions(ctx, exclusions, "exclusions")
    _check_own_products(ctx, inclusions, mine, "inclusions")
    _check_own_products(ctx, exclusions, mine, "exclusions")
    columns = list(values)
    cur = ctx.conn.execute(
        f"INSERT INTO flag_types ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        " RETURNING id",
        [int(v) if isinstance(v, bool) else v for v in values.values()])
    type_id = cur.fetchone()[0]
    _store_clusions(ctx, type_id, "flag_inclusions", inclusions)
    _store_clusions(ctx, type_id, "flag_exclusions", exclusions)
    audit.record(ctx, "FlagType", type_id)
    return type_id


# Update ----------------------------------------------------------------------

def update(ctx, ids, names, given, mine=None):
    """Change the flag types of `ids` (each must exist) and of `names`
    (every type of each name), as a caller administering the products
    `mine` (administered_products; None: every one).

    given: {field of UPDATABLE or CLUSIONS: new value (as given, except
    name and description as strings and the booleans)} of the fields
    given; inclusions and exclusions replace the whole list. Flags left on
    bugs the type no longer applies to move to an applicable type of the
    same name, or are deleted; requestees are dropped when the type stops
    being specifically requestable. Returns [{"id", "name", "changes"}] in
    the order of the types; `changes` keys are the reference's (see
    UPDATABLE), inclusions and exclusions ("Product:Component" entries
    removed/added, "__Any__" for every one).
    Outside editcomponents (`mine` a set): new inclusions and exclusions
    name only products of `mine`, and the type's rules of other products
    stay; the other fields only of a type whose inclusions are all of
    `mine` (editability).
    Errors: 51 unknown id or group; 32000 a new name for several types;
    1105 a type of none of `mine`, or another field of a type also of other
    products; 106 a product (or __Any__) outside `mine`; the validation
    errors of create.
    """
    type_ids = _type_ids(ctx, ids, names)
    if "name" in given and len(type_ids) > 1:
        raise ServiceError(USER_ERROR, "You cannot give the same new name to several flag types "
                                       "in one update.")
    new_values = _new_values(ctx, given)
    new_clusions = {param: _parse_clusions(ctx, given[param], param)
                    for param in CLUSIONS if given.get(param) is not None}
    for param, rules in new_clusions.items():
        _check_own_products(ctx, rules, mine, param)
    results = []
    for flag_type in flag_rules.load_types(ctx.conn, type_ids):
        if not _rights_on(ctx, flag_type, mine) and new_values:
            raise ServiceError(FLAG_TYPE_NOT_EDITABLE,
                               f"You may change only the inclusions and exclusions of the "
                               f"'{flag_type['name']}' flag type: it also applies to products "
                               "you do not administer.")
        own_clusions = {param: _with_others_kept(ctx, flag_type["id"], CLUSIONS[param], rules,
                                                 mine)
                        for param, rules in new_clusions.items()}
        changes = _apply_update(ctx, flag_type, new_values, own_clusions)
        name = new_values.get("name", flag_type["name"])
        audit.record_changes(ctx, "FlagType", flag_type["id"], changes)
        results.append({"id": flag_type["id"], "name": name, "changes": changes})
    order = {type_id: position for position, type_id in enumerate(type_ids)}
    results.sort(key=lambda item: order[item["id"]])
    return results


def _type_ids(ctx, ids, names):
    """The ids named by `ids` (each must exist: 51) and `names` (every type
    of each name; unknown names match nothing), without repeats."""
    type_ids = []
    for type_id in ids:
        if ctx.conn.execute("SELECT 1 FROM flag_types WHERE id = ?", (type_id,)).fetchone() is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no flag type with the id '{type_id}'.")
        if type_id not in type_ids:
            type_ids.append(type_id)
    for name in names:
        for (type_id,) in ctx.conn.execute(
                "SELECT id FROM flag_types WHERE lower(name) = lower(?) ORDER BY id", (name,)):
            if type_id not in type_ids:
                type_ids.append(type_id)
    return type_ids


def _new_values(ctx, given):
    """{field: checked new value} for the fields of UPDATABLE given."""
    checks = {
        "name": _check_name,
        "description": _check_description,
        "cc_list": _check_cc_list,
        "sortkey": _check_sortkey,
        "grant_group": lambda v: _check_group(ctx, v),
        "request_group": lambda v: _check_group(ctx, v),
    }
    values = {}
    for param in UPDATABLE:
        if param not in given:
            continue
        if param in checks:
            values[param] = checks[param](given[param])
        else:
            values[param] = given[param]
    return values


def _apply_update(ctx, flag_type, new_values, new_clusions):
    """Store the new values and clusions of one type; return its `changes`."""
    changes = {}
    assignments = {}
    for param, value in new_values.items():
        column, change_key = UPDATABLE[param]
        if note(changes, change_key, flag_type[column], value):
            assignments[column] = int(value) if isinstance(value, bool) else value
    if assignments:
        sets = ", ".join(f"{column} = ?" for column in assignments)
        ctx.conn.execute(f"UPDATE flag_types SET {sets} WHERE id = ?",
                         list(assignments.values()) + [flag_type["id"]])
    clusions_changed = False
    for param, rules in new_clusions.items():
        table = CLUSIONS[param]
        old_rules = flag_rules.clusions(ctx.conn, table, [flag_type["id"]])[flag_type["id"]]
        if set(old_rules) == set(rules):
            continue
        old_labels, new_labels = _labels(ctx, old_rules), _labels(ctx, rules)
        changes[param] = {"removed": ", ".join(sorted(old_labels - new_labels)),
                          "added": ", ".join(sorted(new_labels - old_labels))}
        ctx.conn.execute(f"DELETE FROM {table} WHERE type_id = ?", (flag_type["id"],))
        _store_clusions(ctx, flag_type["id"], table, rules)
        clusions_changed = True
    if clusions_changed:
        flag_rules.retarget_flags(ctx.conn, flag_type["id"])
    if "is_requesteeble" in changes and not new_values["is_specifically_requestable"]:
        ctx.conn.execute("UPDATE flags SET requestee_id = NULL WHERE type_id = ?",
                         (flag_type["id"],))
    return changes


# Validation ------------------------------------------------------------------

def _check_name(name):
    """The trimmed name. Errors: 1101 blank, with whitespace or a comma, or
    longer than 50 characters."""
    name = (name or "").strip()
    if not name or _NAME_FORBIDDEN.search(name) or len(name) > NAME_MAX_LENGTH:
        raise ServiceError(FLAG_TYPE_NAME_INVALID,
                           f"The flag type name '{name}' is invalid: it must be 1 to "
                           f"{NAME_MAX_LENGTH} characters long, without spaces or commas.")
    return name


def _check_description(description):
    """The trimmed description. Errors: 1102 blank."""
    return checked_text(description, "flag type", "description",
                        blank_code=FLAG_TYPE_DESCRIPTION_INVALID, max_length=None)


def _check_target_type(target):
    """'b' or 'a'. Errors: -32000 neither 'bug' nor 'attachment' (the
    reference raises an internal error here)."""
    if target not in flag_rules.TARGET_CODES:
        raise ServiceError(INTERNAL_ERROR, f"The target type '{target}' is invalid: it must be "
                                           f"'bug' or 'attachment'.")
    return flag_rules.TARGET_CODES[target]


def _check_sortkey(value):
    """The sort key as an int. Errors: 1104 not a whole number in 1..32767."""
    text = ""
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        text = str(value).strip()
    if not text.isdigit() or not text.isascii() or not 1 <= int(text) <= SORTKEY_MAX:
        raise ServiceError(FLAG_TYPE_SORTKEY_INVALID,
                           f"The sort key '{value}' must be a number between 1 and {SORTKEY_MAX}.")
    return int(text)


def _check_cc_list(value):
    """The CC list as one string ", "-joined ("" for none). Accepts an
    array of addresses or a string of them separated by commas or spaces.
    Errors: 501 a malformed address; 1103 longer than 200 characters."""
    if value is None:
        return ""
    items = value if isinstance(value, list) else [value]
    addresses = []
    for item in items:
        if not isinstance(item, str):
            raise ServiceError(ILLEGAL_EMAIL_ADDRESS, f"'{item}' is not a valid e-mail address.")
        addresses.extend(part for part in re.split(r"[,\s]+", item) if part)
    for address in addresses:
        if not _ADDRESS.match(address):
            raise ServiceError(ILLEGAL_EMAIL_ADDRESS,
                               f"The CC list entry '{address}' is not a valid e-mail address.")
    cc_list = ", ".join(addresses)
    if len(cc_list) > CC_LIST_MAX_LENGTH:
        raise ServiceError(FLAG_TYPE_CC_LIST_INVALID,
                           f"The CC list may have at most {CC_LIST_MAX_LENGTH} characters.")
    return cc_list


def _check_group(ctx, name):
    """The id of the group called `name`; None for none (absent or "").
    Errors: 51 unknown group."""
    if name is None or name == "":
        return None
    if not isinstance(name, str):
        raise ServiceError(PARAM_INVALID, "grant_group and request_group are group names.")
    group = catalog.group_by_name(ctx.conn, name.strip())
    if group is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no group named '{name}'.")
    return group["id"]


def _parse_clusions(ctx, value, param):
    """[(product_id | None, component_id | None)] from the API form: an
    array of product names and/or {product: [components]} objects (a bare
    object is accepted too); an empty component list stands for every
    component of that product. Errors: 106 unknown or hidden product; 51 unknown
    component; 53 anything else."""
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise ServiceError(PARAM_INVALID, f"The parameter '{param}' must be an array.")
    rules = []
    for item in items:
        if isinstance(item, str):
            rules.append((_clusion_product(ctx, item), None))
        elif isinstance(item, dict):
            for product_name, component_names in item.items():
                product_id = _clusion_product(ctx, product_name)
                names = component_names if isinstance(component_names, list) else [component_names]
                if not names:
                    # No component named: the whole product, like its bare name.
                    rules.append((product_id, None))
                for component_name in names:
                    if not isinstance(component_name, str):
                        raise ServiceError(PARAM_INVALID,
                                           f"Invalid component '{component_name}' in '{param}'.")
                    rules.append((product_id, _clusion_component(ctx, product_id, product_name,
                                                                 component_name, param)))
        else:
            raise ServiceError(PARAM_INVALID, f"Invalid entry '{item}' in '{param}'.")
    unique = []
    for rule in rules:
        if rule not in unique:
            unique.append(rule)
    return unique


def _clusion_product(ctx, name):
    if name == ANY:
        return None
    product = catalog.product_by_name(ctx.conn, name)
    # A product hidden from the caller answers like a missing one.
    if product is None or not group_control.can_see_product(ctx, product["id"]):
        raise _product_denied(name)
    return product["id"]


def _clusion_component(ctx, product_id, product_name, name, param):
    if name == ANY:
        return None
    if product_id is None:
        raise ServiceError(PARAM_INVALID, f"In '{param}', a component needs a product, not {ANY}.")
    return _component_id(ctx, {"id": product_id, "name": product_name}, name)


def _store_clusions(ctx, type_id, table, rules):
    ctx.conn.executemany(f"INSERT INTO {table} (type_id, product_id, component_id)"
                         " VALUES (?, ?, ?)",
                         [(type_id, product, component) for product, component in rules])


def _labels(ctx, rules):
    """{"Product:Component"} for rules, "__Any__" standing for every one."""
    labels = set()
    for product_id, component_id in rules:
        product = ANY
        component = ANY
        if product_id is not None:
            product = ctx.conn.execute("SELECT name FROM products WHERE id = ?",
                                       (product_id,)).fetchone()[0]
        if component_id is not None:
            component = ctx.conn.execute("SELECT name FROM components WHERE id = ?",
                                         (component_id,)).fetchone()[0]
        labels.add(f"{product}:{component}")
    return labels


# Administration: every type, deletion ---------------------------------------------

def every_type(ctx, mine=None):
    """The flag types as the flag types page shows them to a caller
    administering the products `mine` (administered_products; None: every
    type), in list order: id, name, description, target_type, sortkey,
    cc_list, is_active, is_requestable, is_specifically_requestable,
    is_multiplicable, grant_group, request_group (names, None for none),
    inclusions, exclusions (sorted "Product:Component" labels, "__Any__"
    for every one), flags (how many flags of the type bugs carry),
    fully_editable (False: only its inclusions and exclusions of the
    caller's products may change). Outside editcomponents (`mine` a set),
    only the types that apply to a product of `mine`, and of their rules
    only those of `mine` (as the reference's page hides the others)."""
    if mine is None:
        types = flag_rules.load_types(ctx.conn)
    else:
        ids = set()
        for product_id in mine:
            ids.update(t["id"] for t in flag_rules.matching_types(ctx.conn, product_id))
        types = flag_rules.load_types(ctx.conn, sorted(ids))
    ids = [t["id"] for t in types]
    rules = {table: flag_rules.clusions(ctx.conn, table, ids) for table in CLUSIONS.values()}
    groups = {row[0]: row[1] for row in ctx.conn.execute("SELECT id, name FROM groups")}
    counts = dict(ctx.conn.execute("SELECT type_id, COUNT(*) FROM flags GROUP BY type_id")
                  .fetchall())

    def shown(table, type_id):
        own = [rule for rule in rules[table][type_id] if mine is None or rule[0] in mine]
        return sorted(_labels(ctx, own))
    return [{
        "id": t["id"], "name": t["name"], "description": t["description"],
        "target_type": t["target"], "sortkey": t["sort_key"], "cc_list": t["cc_list"] or "",
        "is_active": t["is_active"], "is_requestable": t["is_requestable"],
        "is_specifically_requestable": t["is_requesteeble"],
        "is_multiplicable": t["is_multiplicable"],
        "grant_group": groups.get(t["grant_group_id"]),
        "request_group": groups.get(t["request_group_id"]),
        "inclusions": shown("flag_inclusions", t["id"]),
        "exclusions": shown("flag_exclusions", t["id"]),
        "flags": counts.get(t["id"], 0),
        "fully_editable": editability(rules["flag_inclusions"][t["id"]],
                                      rules["flag_exclusions"][t["id"]], mine)[1]}
        for t in types]


def product_names(ctx, mine):
    """The names of the products `mine` (ids), sorted; None when `mine` is
    None (every product)."""
    if mine is None:
        return None
    return sorted((catalog.product_by_id(ctx.conn, pid)["name"] for pid in mine), key=str.lower)


def group_choices(ctx, mine=None):
    """The names of the groups the page offers as a type's grant or request
    group, sorted: every group to members of editcomponents (`mine` None),
    the caller's own groups to others (as the reference's page)."""
    if mine is None:
        names = [row[0] for row in ctx.conn.execute("SELECT name FROM groups")]
    else:
        names = list(ctx.caller.group_names)
    return sorted(names, key=str.lower)


def delete(ctx, ids, mine=None):
    """Delete the flag types of `ids`, with every flag of them on bugs and
    attachments (as the reference's page deletes them), as a caller
    administering the products `mine` (None: every one). Returns [{"id",
    "name", "flags"}] (flags: how many went with it).
    Errors: 50 no ids; 51 an unknown id; 1105 a type of none of `mine`;
    32000 a type that also applies to products outside `mine`. Nothing is
    deleted on an error."""
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the flag types to delete.")
    removed = []
    for type_id in ids:
        found = flag_rules.load_types(ctx.conn, [type_id])
        if not found:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no flag type with the id "
                                                      f"'{type_id}'.")
        if not _rights_on(ctx, found[0], mine):
            raise ServiceError(USER_ERROR, f"Sorry, but the flag type '{found[0]['name']}' also "
                                           "applies to products you do not administer, so you "
                                           "may not delete it.")
        flags = ctx.conn.execute("DELETE FROM flags WHERE type_id = ?", (type_id,)).rowcount
        for table in CLUSIONS.values():
            ctx.conn.execute(f"DELETE FROM {table} WHERE type_id = ?", (type_id,))
        ctx.conn.execute("DELETE FROM flag_types WHERE id = ?", (type_id,))
        audit.record(ctx, "FlagType", type_id, None, "__remove__", None, name=found[0]["name"])
        removed.append({"id": type_id, "name": found[0]["name"], "flags": flags})
    return removed
