"""Products: the id lists, get, create and update (interface "Products")
as the reference does them, and their group controls (a bugsvc extension).
The behaviour lives in bugsvc/catalogue/product.py and group_control.py."""

from ..call.params import Params, reject_unknown_keys
from ..catalogue import group_control, product
from ..catalogue.admin import require_product_admin
from ..errors import (
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    USER_ERROR,
    ServiceError,
    require_group,
)


# include/exclude shape of a product: group_controls only on request.
PRODUCT_SHAPES = {"products": product.PRODUCT_SHAPE}
_UPDATE_KEYS = frozenset({"ids", "names", "name", "description", "default_milestone",
                          "has_unconfirmed", "is_open", "classification", "group_controls"})


# The id lists --------------------------------------------------------------------

def selectable(ctx, params):
    """Returns {"ids": [int]}: the products the caller may search."""
    return {"ids": group_control.selectable_product_ids(ctx)}


def enterable(ctx, params):
    """Returns {"ids": [int]}: the products the caller may file bugs in."""
    return {"ids": group_control.enterable_product_ids(ctx)}


def accessible(ctx, params):
    """Returns {"ids": [int]}: the products the caller may search or file bugs in."""
    return {"ids": group_control.accessible_product_ids(ctx)}


# Get -------------------------------------------------------------------------------

def get(ctx, params):
    """Products by type, ids and names.

    params: type (accessible, selectable, enterable, or a list of them: the
    union), ids, names (any case). ids and names pick from the type set (the
    accessible products when no type is given); unknown or hidden products
    are left out silently. Only a type: the whole set.
    Returns {"products": [Product]}; a Product has id, name, description,
    is_active, default_milestone, has_unconfirmed, classification (name),
    components, versions, milestones, and for those who hold editcomponents
    on the product (globally or through its group controls) and ask
    for it (include_fields=group_controls or _all) group_controls.
    Errors: 50 none of type, ids, names; 32000 an unknown type; 52 an id
    that is not a number.
    """
    p = Params(params)
    given = {name: p.get(name) is not None for name in ("ids", "names", "type")}
    if not any(given.values()):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify one of 'ids', 'names' or "
                                                 "'type'.")
    types = p.str_list("type") if given["type"] else []
    for kind in types:
        if kind not in product.TYPES:
            raise ServiceError(USER_ERROR, f"'{kind}' is not a valid product type; use "
                                           "accessible, selectable or enterable.")
    if not given["ids"] and not given["names"]:
        return {"products": product.find(ctx, types)}
    return {"products": product.find(ctx, types, p.int_list("ids"), p.str_list("names"))}


# Create ------------------------------------------------------------------------------

def create(ctx, params):
    """Create a product with its first version and milestone (editcomponents).

    params: name, description, version (required); default_milestone
    (default "---"; always "---" while usetargetmilestone is off);
    has_unconfirmed, is_open (default true); classification (used while
    useclassification is on, else Unclassified); create_series (accepted;
    bugsvc keeps no charts). While makeproductgroups is on, a bug group of
    the product's name is created and set Default/NA for the product.
    Returns {"id"}.
    Errors: 410; 304 not in editcomponents; 700 blank name; 701 name too
    long; 702 name in use; 703 no description; 704 no version; 32000 a
    version or milestone name longer than 64 characters; 51 unknown
    classification.
    """
    require_group(ctx, "editcomponents", "add products")
    p = Params(params)
    product_id = product.create(
        ctx, p.str("name", ""), p.str("description", ""), p.str("version", ""),
        p.get("default_milestone"), p.get("classification"), p.bool("is_open", True),
        p.bool("has_unconfirmed", True))
    return {"id": product_id}


# Update -------------------------------------------------------------------------------

def update(ctx, params):
    """Change one or more products (editcomponents, or editcomponents on
    the product through its group controls).

    params: ids, names (the products; the path gives the first), and new
    values name (one product only), description, default_milestone (an
    existing milestone of each product; ignored while usetargetmilestone is
    off), has_unconfirmed, is_open, classification (while useclassification
    is on), group_controls ({group name: {membercontrol, othercontrol,
    entry, canedit} or null to remove}).
    Returns {"products": [{"id", "changes"}]}; change keys name,
    description, default_milestone, has_unconfirmed, is_open,
    classification and group_controls.<group>; booleans "1"/"0".
    Errors: 410; 304 neither in editcomponents nor holding it on
    a product; 32000 a product the caller may see but not administer; -32601 unknown key; 50 neither
    ids nor names; 106 unknown or hidden product; 700, 701, 702 (also for a
    name given for several products), 703; 705 unknown default milestone;
    51 unknown classification or group; 32000 a bad group control. Nothing
    is stored unless every value is valid.
    """
    require_product_admin(ctx, "edit products")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    ids, names = p.int_list("ids"), p.str_list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the products to update with "
                                                 "'ids' or 'names'.")
    given = {name: p.str(name) for name in ("name", "description") if p.has(name)}
    given.update({name: p.bool(name) for name in ("has_unconfirmed", "is_open")
                  if p.get(name) is not None})
    given.update({name: p.get(name) for name in ("default_milestone", "classification",
                                                 "group_controls")})
    return {"products": product.update(ctx, ids, names, given)}


def delete(ctx, params):
    """Delete products that have no bug (editcomponents), with their
    components, versions, milestones and group controls.

    params: ids, names (the path gives the first).
    Returns {"products": [{"id"}]}.
    Errors: 410; 304 neither in editcomponents nor holding it on
    a product; 32000 a product the caller may see but not administer; 53 unknown key; 50 neither ids
    nor names; 106 unknown or hidden product; 32000 a product with bugs,
    one a field or field value is shown for, or one a webhook watches.
    """
    require_product_admin(ctx, "delete products")
    reject_unknown_keys(params, frozenset({"ids", "names"}), PARAM_INVALID)
    p = Params(params)
    ids, names = p.int_list("ids"), p.str_list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the products to delete with "
                                                 "'ids' or 'names'.")
    return {"products": product.delete(ctx, ids, names)}


def deletion(ctx, params):
    """What deleting a product or one of its components would take along
    (the question editproducts.cgi?action=del and editcomponents.cgi?action=del
    ask before deleting).

    params: product (name), component (name; absent: the product).
    Returns {"bugs": how many bugs are in it, hidden ones included,
    "allowbugdeletion": whether they are deleted with it (else the deletion
    is refused)}.
    Errors: 410; 304 neither in editcomponents nor holding it on a product;
    50 no product; 106 unknown or hidden product; 32000 a product the
    caller may not administer; 51 unknown component.
    """
    require_product_admin(ctx, "delete products or components")
    p = Params(params)
    return product.deletion(ctx, p.get("product"), p.str("component"))
