"""Components of products: creating them as Bugzilla 5.2 does, changing
and deleting them as its development branch does."""

from ..accounts.visibility import can_see_user
from ..bugs import removal
from ..call.changes import note
from ..call.params import Params, as_list
from ..errors import (
    COMPONENT_EXISTS,
    COMPONENT_HAS_BUGS,
    COMPONENT_INVALID,
    COMPONENT_IS_LAST,
    COMPONENT_RENAME_NOT_UNIQUE,
    INVALID_USERNAME,
    OBJECT_DOES_NOT_EXIST,
    PARAM_INVALID,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from . import catalog, group_control
from .admin import administered_product, checked_text


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
    if user is None or not can_see_user(ctx, user["id"]):
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{login}' "
                                                  f"(given as {field}).")
    return user["id"]


def _check_assignee(ctx, login):
    """The default assignee's id. Errors: 32000 blank; 51 unknown login."""
    login = (login or "").strip()
    if not login:
        raise ServiceError(USER_ERROR, "A component needs a default assignee.")
    return _user_id(ctx, login, "default_assignee")


def _check_qa_contact(ctx, value):
    """The QA contact's id or None ("" clears it; `value` as given).
    Errors: 51 unknown login."""
    login = (_text(value, "default_qa_contact") or "").strip()
    return _user_id(ctx, login, "default_qa_contact") if login else None


def _text(value, name):
    """A value given for parameter `name`, read as a string: the QA contact
    is read only while useqacontact is on. Errors: 53."""
    return Params({name: value}).str(name, "")


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
        if user is None or not can_see_user(ctx, user["id"]):
            raise ServiceError(INVALID_USERNAME, f"There is no user account '{login}' "
                                                 "(given in default_cc).")
        if user["id"] not in ids:
            ids.append(user["id"])
    return ids


# Create ---------------------------------------------------------------------------------

def create(ctx, product, name, description, assignee, qa_contact, cc, is_open):
    """Add a component to `product` (an id or name). The QA contact (as
    given) is stored only while useqacontact is on; cc: logins, an array or
    a comma-separated string. Returns its id.
    Errors: 50 no product; 106 unknown or hidden product; 32000 blank name,
    description or assignee; 105 name too long; 1200 name taken; 51
    unknown assignee or QA contact; 504 unknown login in cc.
    """
    product = administered_product(ctx, product)
    name = _check_name(ctx, product, name)
    description = _check_description(description)
    assignee = _check_assignee(ctx, assignee)
    qa_contact = _check_qa_contact(ctx, qa_contact) if ctx.param_is_on("useqacontact") else None
    cc_ids = _check_cc(ctx, cc)
    cur = ctx.conn.execute(
        "INSERT INTO components (product_id, name, description, default_assignee,"
        " default_qa_contact, is_active) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (product["id"], name, description, assignee, qa_contact, int(is_open)))
    component_id = cur.fetchone()[0]
    for user_id in cc_ids:
        ctx.conn.execute("INSERT INTO component_cc (component_id, user_id) VALUES (?, ?)",
                         (component_id, user_id))
    audit.record(ctx, "Component", component_id)
    return component_id


# Finding the components of an update or delete -------------------------------------

def _components(ctx, ids, names):
    """(product, component) of the components named by `ids` and `names`
    ([(product name, component name)]), each once, in the order given.

    Errors: 51 unknown component (also an id of a component of a hidden
    product); 106 unknown or hidden product.
    """
    found = []
    for component_id in ids:
        component = catalog.component_by_id(ctx.conn, component_id)
        # A component of a hidden product answers like a missing one.
        if component is None or not group_control.can_see_product(ctx, component["product_id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no component with the id "
                                                      f"'{component_id}'.")
        product = administered_product(ctx, component["product_id"])
        found.append((product, component))
    for product_name, component_name in names:
        product = administered_product(ctx, product_name, by_name=True)
        component = catalog.component_by_name(ctx.conn, product["id"], component_name)
        if component is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"The product '{product['name']}' has no "
                                                      f"component named '{component_name}'.")
        found.append((product, component))
    return catalog.each_once(found, key=lambda pair: pair[1]["id"])


# Update -------------------------------------------------------------------------------

def update(ctx, ids, names, given):
    """Change the components named by `ids` and `names` (see _components).

    given: {field: new value} of the fields given: name (one component per
    product), description, default_assignee, default_qa_contact (as given;
    "" clears; only while useqacontact is on), default_cc (replaces the
    list), is_open. Returns [{"id", "changes"}]; change keys name,
    description, default_assignee, default_qa_contact, default_cc (removed
    and added logins) and is_open ("1"/"0").
    Errors: 51 unknown component, assignee or QA contact; 106 unknown or
    hidden product; 1212 two components of one product renamed; 1200, 105,
    32000 as in create; 504 unknown login in default_cc. Nothing is stored
    unless every value is valid.
    """
    components = _components(ctx, ids, names)
    if "name" in given:
        products = [product["id"] for product, _ in components]
        if len(set(products)) != len(products):
            raise ServiceError(COMPONENT_RENAME_NOT_UNIQUE, "Component names are unique in a "
                                                            "product: only one component per "
                                                            "product can be renamed at a time.")
    new = _new_values(ctx, given)
    names = {product["id"]: _check_name(ctx, product, given["name"], component["id"])
             for product, component in components if "name" in given}
    answers = []
    for product, component in components:
        if "name" in given:
            new["name"] = names[product["id"]]
        changes = _store(ctx, component, new)
        audit.record_changes(ctx, "Component", component["id"], changes)
        answers.append({"id": component["id"], "changes": changes})
    return answers


def _new_values(ctx, given):
    """The checked new values other than the name."""
    new = {}
    if "description" in given:
        new["description"] = _check_description(given["description"])
    if "default_assignee" in given:
        new["default_assignee"] = _check_assignee(ctx, given["default_assignee"])
    if "default_qa_contact" in given and ctx.param_is_on("useqacontact"):
        new["default_qa_contact"] = _check_qa_contact(ctx, given["default_qa_contact"])
    if "default_cc" in given:
        new["default_cc"] = _check_cc(ctx, given["default_cc"])
    if "is_open" in given:
        new["is_active"] = given["is_open"]
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

def delete(ctx, ids, names):
    """Delete the components named by `ids` and `names` (see _components),
    with their default CC lists and flag type inclusions and exclusions.
    A component with bugs is deleted only while the parameter
    allowbugdeletion is on, and its bugs with it (bugs/removal.py).
    Returns [{"id"}].
    Errors: 51 unknown component; 106 unknown or hidden product; 1202 bugs
    use the component (allowbugdeletion off); 1201 it is the last component
    of its product. Nothing is deleted unless all can be.
    """
    components = _components(ctx, ids, names)
    answers = []
    for product, component in components:
        others = ctx.conn.execute("SELECT COUNT(*) FROM components WHERE product_id = ? AND"
                                  " id <> ?", (product["id"], component["id"])).fetchone()[0]
        if not others:
            raise ServiceError(COMPONENT_IS_LAST, f"The component '{component['name']}' is the "
                                                  f"last one of product '{product['name']}' "
                                                  "and cannot be deleted.")
        bug_ids = [row[0] for row in ctx.conn.execute(
            "SELECT id FROM bugs WHERE component_id = ?", (component["id"],))]
        if bug_ids and not ctx.param_is_on("allowbugdeletion"):
            raise ServiceError(COMPONENT_HAS_BUGS, f"The component '{component['name']}' has "
                                                   f"{len(bug_ids)} bug(s); move them to "
                                                   "another component before deleting it.")
        removal.delete_bugs(ctx, bug_ids)
        for table in ("flag_inclusions", "flag_exclusions", "component_cc"):
            ctx.conn.execute(f"DELETE FROM {table} WHERE component_id = ?", (component["id"],))
        ctx.conn.execute("DELETE FROM components WHERE id = ?", (component["id"],))
        audit.record(ctx, "Component", component["id"], None, "__remove__", None,
                     name=component["name"])
        answers.append({"id": component["id"]})
    return answers
