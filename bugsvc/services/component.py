"""Components: create as Bugzilla 5.2 does, update and delete as its development branch does."""

from ..accounts import access
from ..store import audit
from ..catalogue import catalog
from ..catalogue.admin import checked_text, administered_product, reject_unknown_keys
from ..call.changes import note
from ..errors import (
    ServiceError, require_group, OBJECT_NOT_SPECIFIED, OBJECT_DOES_NOT_EXIST, PARAM_INVALID,
    INVALID_USERNAME, USER_ERROR, COMPONENT_EXISTS, COMPONENT_HAS_BUGS, COMPONENT_IS_LAST,
    COMPONENT_RENAME_NOT_UNIQUE, COMPONENT_INVALID, UNKNOWN_METHOD,
)
from ..call.params import Params, as_list


# python-bugzilla's names (addcomponent/editcomponent) and the reference's is_active.
_ALIASES = {"initialowner": "default_assignee", "initialqacontact": "default_qa_contact",
            "initialcclist": "default_cc", "is_active": "is_open"}
_FIELDS = frozenset({"name", "description", "default_assignee", "default_qa_contact",
                     "default_cc", "is_open"}) | frozenset(_ALIASES)
# python-bugzilla's own tests name a new component `component` (Red Hat's format).
_CREATE_KEYS = _FIELDS | {"product", "create_series", "component"}
_UPDATE_KEYS = _FIELDS | {"ids", "names", "updates"}


def _canonical(values):
    """`values` with python-bugzilla's names renamed; the canonical name wins
    when both are given."""
    result = {_ALIASES.get(key, key): value for key, value in values.items()
              if key in _ALIASES}
    result.update({key: value for key, value in values.items() if key not in _ALIASES})
    return result


# Checks --------------------------------------------------------------------------------

def _check_name(ctx, product, name, component_id=None):
    """Errors: 32000 blank; 105 longer than 64; 1200 taken in the product."""
    name = checked_text(name, "component", long_code=COMPONENT_INVALID, one_line=True)
    existing = catalog.component_by_name(ctx.conn, product["id"], name)
    if existing is not None and existing["id"] != component_id:
        raise ServiceError(COMPONENT_EXISTS, f"The product '{product['name']}' already has a "
                                             f"component named '{existing['name']}'.")
    return name


def _check_description(description):
    """The trimmed description. Errors: 32000 blank."""
    return checked_text(description, "component", "description", max_length=None)


def _user_id(ctx, login, field):
    user = catalog.user_by_login(ctx.conn, login)
    if user is None or not access.can_see_user(ctx, user["id"]):
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{login}' "
                                                  f"(given as {field}).")
    return user["id"]


def _check_assignee(ctx, p):
    login = (p.str("default_assignee", "") or "").strip()
    if not login:
        raise ServiceError(USER_ERROR, "A component needs a default assignee.")
    return _user_id(ctx, login, "default_assignee")


def _check_qa_contact(ctx, p):
    """The QA contact's id or None ("" clears it). Errors: 51 unknown login."""
    login = (p.str("default_qa_contact", "") or "").strip()
    return _user_id(ctx, login, "default_qa_contact") if login else None


def _check_cc(ctx, value):
    """User ids of a default CC list given as an array of logins or as a
    comma-separated string. Errors: 504 unknown login."""
    logins = []
    for item in as_list(value):
        if not isinstance(item, str):
            raise ServiceError(PARAM_INVALID, "The default_cc list must hold logins.")
        logins.extend(part.strip() for part in item.split(",") if part.strip())
    ids = []
    for login in logins:
        user = catalog.user_by_login(ctx.conn, login)
        if user is None or not access.can_see_user(ctx, user["id"]):
            raise ServiceError(INVALID_USERNAME, f"There is no user account '{login}' "
                                                 "(given in default_cc).")
        if user["id"] not in ids:
            ids.append(user["id"])
    return ids


# Create ---------------------------------------------------------------------------------

def create(ctx, params):
    """Add a component to a product (editcomponents).

    params: product, name, description, default_assignee (required);
    default_qa_contact (stored only while useqacontact is on), default_cc
    (logins: an array or a comma-separated string), is_open (default true;
    alias is_active), create_series (accepted; no charts). python-bugzilla's
    initialowner, initialqacontact, initialcclist are accepted, and
    `component` for name.
    Returns {"id"}.
    Errors: 410; 304 not in editcomponents; 53 unknown key; 50 no product;
    106 unknown or hidden product; 32000 blank name, description or
    assignee; 105 name too long; 1200 name taken; 51 unknown assignee or QA
    contact; 504 unknown login in default_cc.
    """
    require_group(ctx, "editcomponents", "add components")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    values = _canonical(params)
    if "name" not in values and "component" in values:
        values["name"] = values.pop("component")
    p = Params(values)
    product = administered_product(ctx, p.get("product"))
    name = _check_name(ctx, product, p.str("name", ""))
    description = _check_description(p.str("description", ""))
    assignee = _check_assignee(ctx, p)
    qa_contact = _check_qa_contact(ctx, p) if ctx.param_is_on("useqacontact") else None
    cc_ids = _check_cc(ctx, p.get("default_cc"))
    p.bool("create_series", False)
    cur = ctx.conn.execute(
        "INSERT INTO components (product_id, name, description, default_assignee,"
        " default_qa_contact, is_active) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (product["id"], name, description, assignee, qa_contact, int(p.bool("is_open", True))))
    component_id = cur.fetchone()[0]
    for user_id in cc_ids:
        ctx.conn.execute("INSERT INTO component_cc (component_id, user_id) VALUES (?, ?)",
                         (component_id, user_id))
    audit.record(ctx, "Component", component_id)
    return {"id": component_id}


# Finding the components of an update or delete -------------------------------------

def _components(ctx, p):
    """The components named by ids and names ({product, component}), each
    once, in the order given.

    Errors: 50 neither given; 53 a malformed names entry; 51 unknown
    component (also an id of a component of a hidden product); 106 unknown
    or hidden product.
    """
    ids = p.int_list("ids")
    names = p.list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the components with 'ids' "
                                                 "or 'names'.")
    found = []
    for component_id in ids:
        component = catalog.component_by_id(ctx.conn, component_id)
        # A component of a hidden product answers like a missing one.
        if component is None or not access.can_see_product(ctx, component["product_id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no component with the id "
                                                      f"'{component_id}'.")
        product = administered_product(ctx, component["product_id"])
        found.append((product, component))
    for entry in names:
        if not (isinstance(entry, dict) and isinstance(entry.get("product"), str)
                and isinstance(entry.get("component"), str)):
            raise ServiceError(PARAM_INVALID, "Each entry of 'names' must be an object with "
                                              "'product' and 'component'.")
        product = administered_product(ctx, entry["product"], by_name=True)
        component = catalog.component_by_name(ctx.conn, product["id"], entry["component"])
        if component is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"The product '{product['name']}' has no "
                                                      f"component named '{entry['component']}'.")
        found.append((product, component))
    unique, seen = [], set()
    for product, component in found:
        if component["id"] not in seen:
            seen.add(component["id"])
            unique.append((product, component))
    return unique


# Update -------------------------------------------------------------------------------

def update(ctx, params):
    """Change one or more components (editcomponents).

    params: ids, names ([{"product", "component"}]; the path gives the
    first), and new values name (one component per product), description,
    default_assignee, default_qa_contact ("" clears; only while useqacontact
    is on), default_cc (replaces the list), is_open (alias is_active) — at
    the top level or inside `updates` (python-bugzilla), which wins.
    Returns {"components": [{"id", "changes"}]}; change keys name,
    description, default_assignee, default_qa_contact, default_cc (removed
    and added logins) and is_open ("1"/"0").
    Errors: 410; 304; -32601 unknown key; 50 neither ids nor names; 51
    unknown component, assignee or QA contact; 106 unknown or hidden
    product; 1212 two components of one product renamed; 1200, 105, 32000
    as in create; 504 unknown login in default_cc. Nothing is stored unless
    every value is valid.
    """
    require_group(ctx, "editcomponents", "edit components")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    updates = p.dict("updates")
    reject_unknown_keys(updates, _FIELDS, UNKNOWN_METHOD)
    values = Params({**_canonical({k: v for k, v in params.items() if k in _FIELDS}),
                     **_canonical(updates)})
    components = _components(ctx, p)
    if values.has("name"):
        products = [product["id"] for product, _ in components]
        if len(set(products)) != len(products):
            raise ServiceError(COMPONENT_RENAME_NOT_UNIQUE, "Component names are unique in a "
                                                            "product: only one component per "
                                                            "product can be renamed at a time.")
    new = _new_values(ctx, values)
    names = {product["id"]: _check_name(ctx, product, values.str("name"), component["id"])
             for product, component in components if values.has("name")}
    answers = []
    for product, component in components:
        if values.has("name"):
            new["name"] = names[product["id"]]
        changes = _store(ctx, component, new)
        audit.record_changes(ctx, "Component", component["id"], changes)
        answers.append({"id": component["id"], "changes": changes})
    return {"components": answers}


def _new_values(ctx, values):
    """The checked new values other than the name."""
    new = {}
    if values.has("description"):
        new["description"] = _check_description(values.str("description"))
    if values.has("default_assignee"):
        new["default_assignee"] = _check_assignee(ctx, values)
    if values.has("default_qa_contact") and ctx.param_is_on("useqacontact"):
        new["default_qa_contact"] = _check_qa_contact(ctx, values)
    if values.has("default_cc"):
        new["default_cc"] = _check_cc(ctx, values.get("default_cc"))
    if values.get("is_open") is not None:
        new["is_active"] = values.bool("is_open")
    return new


def _store(ctx, component, new):
    """Write the new values of one component; return its changes."""
    changes = {}
    logins = catalog.logins_of(ctx.conn, [component["default_assignee"],
                                          component["default_qa_contact"],
                                          new.get("default_assignee"),
                                          new.get("default_qa_contact")])
    for field in ("name", "description", "default_assignee", "default_qa_contact", "is_active"):
        if field not in new:
            continue
        old, value = component[field], new[field]
        if field in ("default_assignee", "default_qa_contact"):
            shown_old, shown_new = logins.get(old, ""), logins.get(value, "")
        else:
            shown_old, shown_new = old, value
        if note(changes, "is_open" if field == "is_active" else field, shown_old, shown_new):
            ctx.conn.execute(f"UPDATE components SET {field} = ? WHERE id = ?",
                             (int(value) if isinstance(value, bool) else value, component["id"]))
    if "default_cc" in new:
        old_ids = [row[0] for row in ctx.conn.execute(
            "SELECT user_id FROM component_cc WHERE component_id = ?", (component["id"],))]
        removed = [uid for uid in old_ids if uid not in new["default_cc"]]
        added = [uid for uid in new["default_cc"] if uid not in old_ids]
        if removed or added:
            cc_logins = catalog.logins_of(ctx.conn, removed + added)
            changes["default_cc"] = {
                "removed": ", ".join(sorted(cc_logins[uid] for uid in removed)),
                "added": ", ".join(sorted(cc_logins[uid] for uid in added))}
            for uid in removed:
                ctx.conn.execute("DELETE FROM component_cc WHERE component_id = ? AND"
                                 " user_id = ?", (component["id"], uid))
            for uid in added:
                ctx.conn.execute("INSERT INTO component_cc (component_id, user_id)"
                                 " VALUES (?, ?)", (component["id"], uid))
    return changes


# Delete -------------------------------------------------------------------------------

def delete(ctx, params):
    """Delete one or more components that no bug uses (editcomponents).

    params: ids, names ([{"product", "component"}]; the path gives the
    first). The component's default CC list and its flag type inclusions
    and exclusions go with it.
    Returns {"components": [{"id"}]}.
    Errors: 410; 304; 50 neither ids nor names; 51 unknown component; 106
    unknown or hidden product; 1202 bugs use the component; 1201 it is the
    last component of its product. Nothing is deleted unless all can be.
    """
    require_group(ctx, "editcomponents", "delete components")
    components = _components(ctx, Params(params))
    answers = []
    for product, component in components:
        bugs = ctx.conn.execute("SELECT COUNT(*) FROM bugs WHERE component_id = ?",
                                (component["id"],)).fetchone()[0]
        if bugs:
            raise ServiceError(COMPONENT_HAS_BUGS, f"The component '{component['name']}' has "
                                                   f"{bugs} bug(s); move them to another "
                                                   "component before deleting it.")
        others = ctx.conn.execute("SELECT COUNT(*) FROM components WHERE product_id = ? AND"
                                  " id <> ?", (product["id"], component["id"])).fetchone()[0]
        if not others:
            raise ServiceError(COMPONENT_IS_LAST, f"The component '{component['name']}' is the "
                                                  f"last one of product '{product['name']}' "
                                                  "and cannot be deleted.")
        for table in ("flag_inclusions", "flag_exclusions", "component_cc"):
            ctx.conn.execute(f"DELETE FROM {table} WHERE component_id = ?", (component["id"],))
        ctx.conn.execute("DELETE FROM components WHERE id = ?", (component["id"],))
        audit.record(ctx, "Component", component["id"], None, "__remove__", None)
        answers.append({"id": component["id"]})
    return {"components": answers}
