"""Products: finding them as the caller may, the Product object, creating
them with their first version and milestone (and, with makeproductgroups,
their bug group), and changing them, their group controls included (which
products a caller may search or file bugs in is group_control.py's)."""

from ..accounts import membership
from ..accounts.email import visible_email
from ..bugs import groups as bug_groups, removal
from ..call.changes import note
from ..call.fields import Shape
from ..call.params import Params
from ..errors import (
    OBJECT_DOES_NOT_EXIST,
    PRODUCT_BLANK_NAME,
    PRODUCT_NAME_IN_USE,
    PRODUCT_NAME_TOO_LONG,
    PRODUCT_NEEDS_DEFAULT_MILESTONE,
    PRODUCT_NEEDS_DESCRIPTION,
    PRODUCT_NEEDS_VERSION,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from . import catalog, flag_rules, group_control
from .admin import NAME_MAX_LENGTH, administered_product, checked_text


UNCLASSIFIED_ID = 1

# include/exclude shape of a product: group_controls only on request.
PRODUCT_SHAPE = Shape(types={"group_controls": ("extra",)},
                      children={"components": Shape(), "versions": Shape(),
                                "milestones": Shape()})

# The sets of products a caller may ask for by type.
TYPES = {
    "accessible": group_control.accessible_product_ids,
    "selectable": group_control.selectable_product_ids,
    "enterable": group_control.enterable_product_ids,
}


def find(ctx, types, ids=None, names=None):
    """Product objects (see product_object), by name: those of `ids` and
    `names` (any case) among the products of `types` (keys of TYPES: the
    union; none: the accessible products), or, when both are None, the
    whole set. Unknown or hidden products are left out silently."""
    if types:
        candidate_ids = set()
        for kind in types:
            candidate_ids.update(TYPES[kind](ctx))
    else:
        candidate_ids = set(group_control.accessible_product_ids(ctx))
    candidates = sorted(catalog.products_by_ids(ctx.conn, candidate_ids).values(),
                        key=lambda product: (product["name"].lower(), product["id"]))
    if ids is not None or names is not None:
        wanted_ids = set(ids or ())
        wanted_names = {name.lower() for name in names or ()}
        chosen = [product for product in candidates if product["id"] in wanted_ids]
        chosen += [product for product in candidates if product["name"].lower() in wanted_names
                   and product["id"] not in wanted_ids]
    else:
        chosen = candidates
    return [product_object(ctx, product) for product in chosen]


def product_object(ctx, product):
    """The interface's Product object for catalog product dict `product`,
    computing only the parts the caller's include/exclude choice wants."""
    def wants(name):
        return ctx.fields.wants(name, PRODUCT_SHAPE)
    classification = catalog.classification_by_id(ctx.conn, product["classification_id"])
    result = {
        "id": product["id"], "name": product["name"], "description": product["description"],
        "is_active": product["is_active"], "default_milestone": product["default_milestone"],
        "has_unconfirmed": product["has_unconfirmed"],
        "classification": classification["name"] if classification else "",
    }
    if wants("components"):
        result["components"] = _components(ctx, product)
    if wants("versions"):
        result["versions"] = [{"id": v["id"], "name": v["name"], "sort_key": v["sort_key"],
                               "is_active": v["is_active"]}
                              for v in catalog.versions_of(ctx.conn, product["id"])]
    if wants("milestones"):
        result["milestones"] = [{"id": m["id"], "name": m["name"], "sort_key": m["sort_key"],
                                 "is_active": m["is_active"]}
                                for m in catalog.milestones_of(ctx.conn, product["id"])]
    if wants("group_controls") and group_control.in_group_for_product(
            ctx, "editcomponents", product["id"]):
        result["group_controls"] = group_control.controls_of(ctx.conn, product["id"])
    return result


def _components(ctx, product):
    components = catalog.components_of(ctx.conn, product["id"])
    logins = catalog.logins_of(ctx.conn, {c["default_assignee"] for c in components}
                               | {c["default_qa_contact"] for c in components})
    with_flags = ctx.fields.wants("flag_types", prefix="components")
    result = []
    for component in components:
        item = {
            "id": component["id"], "name": component["name"],
            "description": component["description"],
            "default_assigned_to": visible_email(ctx, logins.get(component["default_assignee"],
                                                                 "")),
            "default_qa_contact": visible_email(ctx, logins.get(component["default_qa_contact"],
                                                                "")),
            "sort_key": 0,
            "is_active": component["is_active"],
        }
        if with_flags:
            item["flag_types"] = flag_rules.flag_types_for_component(ctx.conn, product["id"],
                                                                     component["id"])
        result.append(item)
    return result


# Create ------------------------------------------------------------------------------

def _check_name(ctx, name, product_id=None):
    """The trimmed product name. Errors: 700 blank; 701 too long; 702 taken
    by another product (any case)."""
    name = checked_text(name, "product", blank_code=PRODUCT_BLANK_NAME,
                        long_code=PRODUCT_NAME_TOO_LONG, one_line=True)
    existing = catalog.product_by_name(ctx.conn, name)
    if existing is not None and existing["id"] != product_id:
        raise ServiceError(PRODUCT_NAME_IN_USE, f"The product name '{existing['name']}' is "
                                                "already in use.")
    return name


def _check_description(description):
    """The trimmed description. Errors: 703 blank."""
    return checked_text(description, "product", "description",
                        blank_code=PRODUCT_NEEDS_DESCRIPTION, max_length=None)


def _classification_id(ctx, value, default):
    """The classification named by `value` (as given), used only while
    useclassification is on. Errors: 51 unknown classification; 53."""
    if not ctx.param_is_on("useclassification") or value in (None, ""):
        return default
    name = Params({"classification": value}).str("classification").strip()
    classification = (catalog.classification_by_id(ctx.conn, int(name)) if name.isdigit()
                      else catalog.classification_by_name(ctx.conn, name))
    if classification is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no classification named '{name}'.")
    return classification["id"]


def create(ctx, name, description, version, default_milestone=None, classification=None,
           is_open=True, has_unconfirmed=True):
    """Store a product with its first version and milestone. The default
    milestone (as given; default "---") is used only while
    usetargetmilestone is on, the classification (as given; default
    Unclassified) only while useclassification is on. While
    makeproductgroups is on, a bug group of the product's name is created
    and set Default/NA for it. Returns its id.
    Errors: 700 blank name; 701 name too long; 702 name in use; 703 no
    description; 704 no version; 32000 a version or milestone name longer
    than 64 characters; 51 unknown classification; 53 a default milestone
    or classification that is not a single value.
    """
    name = _check_name(ctx, name)
    description = _check_description(description)
    version = (version or "").strip()
    if not version:
        raise ServiceError(PRODUCT_NEEDS_VERSION, "You must enter a version for the product.")
    milestone = "---"
    if ctx.param_is_on("usetargetmilestone"):
        milestone = (Params({"default_milestone": default_milestone}).str(
            "default_milestone", "") or "").strip() or "---"
    for noun, value in (("version", version), ("milestone", milestone)):
        if len(value) > NAME_MAX_LENGTH:
            raise ServiceError(USER_ERROR, f"The {noun} name '{value}' is longer than "
                                           f"{NAME_MAX_LENGTH} characters.")
    classification_id = _classification_id(ctx, classification, UNCLASSIFIED_ID)
    cur = ctx.conn.execute(
        "INSERT INTO products (name, classification_id, description, is_active, default_milestone,"
        " has_unconfirmed) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (name, classification_id, description, int(is_open), milestone, int(has_unconfirmed)))
    product_id = cur.fetchone()[0]
    audit.record(ctx, "Product", product_id)
    cur = ctx.conn.execute("INSERT INTO versions (product_id, name) VALUES (?, ?) RETURNING id",
                           (product_id, version))
    audit.record(ctx, "Version", cur.fetchone()[0])
    cur = ctx.conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (?, ?, 0)"
                           " RETURNING id", (product_id, milestone))
    audit.record(ctx, "Milestone", cur.fetchone()[0])
    if ctx.param_is_on("makeproductgroups"):
        _create_product_group(ctx, product_id, name)
    return product_id


def _create_product_group(ctx, product_id, product_name):
    """The reference's makeproductgroups: a bug group named like the product
    (with '_' appended while taken), Default for members, NA for others;
    the admin group is made its member, with bless and visibility grants,
    as on group create."""
    group_name = product_name
    while catalog.group_by_name(ctx.conn, group_name) is not None:
        group_name += "_"
    group_id = membership.create_bug_group(ctx.conn, group_name,
                                           f"Access to bugs in the {product_name} product")
    ctx.conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, ?, ?, 0)",
                     (group_id, product_id, group_control.DEFAULT, group_control.NA))
    audit.record(ctx, "Group", group_id)


# Update -------------------------------------------------------------------------------

def update(ctx, ids, names, given):
    """Change the products named by `ids` and `names`.

    given: {field: new value} of the fields given: name (one product only),
    description, has_unconfirmed, is_open, default_milestone (as given; an
    existing milestone of each product; ignored while usetargetmilestone is
    off), classification (as given; while useclassification is on),
    group_controls (see group_control.plan). Returns [{"id", "changes"}];
    change keys name, description, default_milestone, has_unconfirmed,
    is_open, classification and group_controls.<group>; booleans "1"/"0".
    Errors: 106 unknown or hidden product; 700, 701, 702 (also for a name
    given for several products), 703; 705 unknown default milestone; 51
    unknown classification or group; 32000 a bad group control. Nothing is
    stored unless every value is valid.
    """
    keys = [("id", value) for value in ids] + [("name", value) for value in names]
    products = []
    for kind, value in keys:
        product = administered_product(ctx, value, by_name=kind == "name")
        if all(product["id"] != known["id"] for known in products):
            products.append(product)
    new = {}
    if "name" in given:
        if len(products) > 1:
            raise ServiceError(PRODUCT_NAME_IN_USE, "Product names are unique: 'name' can only "
                                                    "be set when updating one product.")
        new["name"] = _check_name(ctx, given["name"], products[0]["id"])
    if "description" in given:
        new["description"] = _check_description(given["description"])
    for field, name in (("has_unconfirmed", "has_unconfirmed"), ("is_active", "is_open")):
        if name in given:
            new[field] = given[name]
    milestones = {}
    if given.get("default_milestone") is not None and ctx.param_is_on("usetargetmilestone"):
        wanted = (Params(given).str("default_milestone") or "").strip()
        for product in products:
            milestone = catalog.milestone_by_name(ctx.conn, product["id"], wanted)
            if milestone is None:
                raise ServiceError(PRODUCT_NEEDS_DEFAULT_MILESTONE,
                                   f"The milestone '{wanted}' is not defined for product "
                                   f"'{product['name']}'; the default milestone must be one "
                                   "of its milestones.")
            milestones[product["id"]] = milestone["name"]
    classification_id = _classification_id(ctx, given.get("classification"), None)
    planned_controls = None
    if given.get("group_controls") is not None:
        planned_controls = group_control.plan(ctx.conn, given["group_controls"])
    answers = []
    for product in products:
        changes = _store(ctx, product, new, milestones.get(product["id"]), classification_id)
        if planned_controls:
            mandatory, lifted = group_control.apply(ctx, product["id"], planned_controls,
                                                    changes)
            for group in mandatory:
                bug_groups.restrict_product_bugs(ctx, product["id"], group)
            for group in lifted:
                bug_groups.lift_product_restriction(ctx, product["id"], group)
        audit.record_changes(ctx, "Product", product["id"], changes)
        answers.append({"id": product["id"], "changes": changes})
    return answers


_COLUMNS = {"name": ("name", "name"), "description": ("description", "description"),
            "default_milestone": ("default_milestone", "default_milestone"),
            "has_unconfirmed": ("has_unconfirmed", "has_unconfirmed"),
            "is_active": ("is_active", "is_open")}


def _store(ctx, product, new, default_milestone, classification_id):
    """Write the new plain values of one product; return its changes."""
    values = dict(new)
    if default_milestone is not None:
        values["default_milestone"] = default_milestone
    changes = {}
    for field, (column, change_key) in _COLUMNS.items():
        if field in values and note(changes, change_key, product[field], values[field]):
            value = values[field]
            ctx.conn.execute(f"UPDATE products SET {column} = ? WHERE id = ?",
                             (int(value) if isinstance(value, bool) else value, product["id"]))
    if classification_id is not None and classification_id != product["classification_id"]:
        names = {cid: catalog.classification_by_id(ctx.conn, cid)["name"]
                 for cid in (product["classification_id"], classification_id)}
        note(changes, "classification", names[product["classification_id"]],
             names[classification_id])
        ctx.conn.execute("UPDATE products SET classification_id = ? WHERE id = ?",
                         (classification_id, product["id"]))
    return changes


def delete(ctx, ids, names):
    """Delete the products named by `ids` and `names`, with their
    components, versions, milestones, group controls and flag type
    inclusions and exclusions. A product with bugs is deleted only while
    the parameter allowbugdeletion is on, and its bugs with it
    (bugs/removal.py). Returns [{"id"}].
    Errors: 106 unknown or hidden product; 32000 a product bugs are filed
    in (allowbugdeletion off), one that decides where a field or a value is
    shown, or one a webhook watches. Nothing is deleted unless all can be.
    """
    keys = [("id", value) for value in ids] + [("name", value) for value in names]
    products = []
    for kind, value in keys:
        product = administered_product(ctx, value, by_name=kind == "name")
        if all(product["id"] != known["id"] for known in products):
            products.append(product)
    for product in products:
        _check_deletable(ctx, product)
    for product in products:
        removal.delete_bugs(ctx, [row[0] for row in ctx.conn.execute(
            "SELECT id FROM bugs WHERE product_id = ?", (product["id"],))])
        components = [row[0] for row in ctx.conn.execute(
            "SELECT id FROM components WHERE product_id = ?", (product["id"],))]
        for component_id in components:
            for table in ("flag_inclusions", "flag_exclusions", "component_cc"):
                ctx.conn.execute(f"DELETE FROM {table} WHERE component_id = ?", (component_id,))
        for table in ("flag_inclusions", "flag_exclusions", "group_controls", "components",
                      "versions", "milestones"):
            ctx.conn.execute(f"DELETE FROM {table} WHERE product_id = ?", (product["id"],))
        ctx.conn.execute("DELETE FROM products WHERE id = ?", (product["id"],))
        audit.record(ctx, "Product", product["id"], None, "__remove__", None,
                     name=product["name"])
    return [{"id": product["id"]} for product in products]


def deletion(ctx, value, component_name=None):
    """What deleting product `value` (or its component `component_name`)
    would take along: {"bugs": how many bugs are in it (those hidden from
    the caller too, as the reference counts them), "allowbugdeletion":
    whether bugs are deleted with it (else such a deletion is refused)}.
    Errors: 50, 106, 32000 as administered_product; 51 unknown component.
    """
    product = administered_product(ctx, value, by_name=True)
    if component_name is None:
        where, args = "product_id = ?", [product["id"]]
    else:
        component = catalog.component_by_name(ctx.conn, product["id"], component_name)
        if component is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"The product '{product['name']}' has no "
                                                      f"component named '{component_name}'.")
        where, args = "component_id = ?", [component["id"]]
    bugs = ctx.conn.execute(f"SELECT COUNT(*) FROM bugs WHERE {where}", args).fetchone()[0]
    return {"bugs": bugs, "allowbugdeletion": ctx.param_is_on("allowbugdeletion")}


def _check_deletable(ctx, product):
    """Errors: 32000 bugs (allowbugdeletion off), a field or value shown
    for it, a webhook on it."""
    bugs = ctx.conn.execute("SELECT COUNT(*) FROM bugs WHERE product_id = ?",
                            (product["id"],)).fetchone()[0]
    if bugs and not ctx.param_is_on("allowbugdeletion"):
        raise ServiceError(USER_ERROR, f"The product '{product['name']}' has {bugs} "
                                       f"bug{'s' if bugs > 1 else ''}; move them to another "
                                       "product before deleting it.")
    controls = ctx.conn.execute(
        "SELECT 1 FROM field_visibility v JOIN fields f ON f.id = v.field_id"
        " JOIN fields c ON c.id = f.visibility_field_id"
        " WHERE c.name = 'product' AND v.value_id = ? UNION ALL"
        " SELECT 1 FROM field_values v JOIN fields f ON f.id = v.field_id"
        " JOIN fields c ON c.id = f.value_field_id"
        " WHERE c.name = 'product' AND v.visibility_value_id = ?",
        (product["id"], product["id"])).fetchone()
    if controls:
        raise ServiceError(USER_ERROR, f"A field or a field value is shown only for the product "
                                       f"'{product['name']}'; change that first.")
    if ctx.conn.execute("SELECT 1 FROM webhooks WHERE product_id = ?",
                        (product["id"],)).fetchone():
        raise ServiceError(USER_ERROR, f"A webhook watches the product '{product['name']}'; "
                                       "change or delete it first.")
