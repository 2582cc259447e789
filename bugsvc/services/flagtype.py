"""Flag types: read the types of a product or component, create and update
them (interface "Flag types").

Inclusions and exclusions are given as an array of product names (every
component of each) and/or objects {product name: [component names]}, where
an empty list of components means every component of that product. The
name "__Any__" stands for every product (or every component), as the
reference writes it.

The behaviour lives in bugsvc/catalogue/flag_type.py.
"""

from ..call.params import Params
from ..catalogue import flag_type
from ..errors import OBJECT_NOT_SPECIFIED, UNKNOWN_METHOD, ServiceError


# Update parameters that name the flag types rather than change them.
_NOT_VALUES = {"ids", "names"}
# Update parameters read as text, and as booleans; the others are checked as given.
_TEXTS = ("name", "description")
_BOOLEANS = ("is_active", "is_requestable", "is_specifically_requestable", "is_multiplicable")


# Read ------------------------------------------------------------------------

def get(ctx, params):
    """The flag types of a product, or of one of its components.

    params: product (name, required), component (name, optional).
    Returns {"bug": [...], "attachment": [...]} of Flag type objects (id,
    name, description, type, values, is_active, is_requesteeble,
    is_multiplicable, and inclusions/exclusions: the component names of this
    product the type is limited to or kept from, when it is), sorted by
    sort key then name. `values` lists what the caller may set: X always, ?
    when requestable and the caller may request, + and - when the caller may
    grant. Errors: 50 no product; 106 product unknown or not accessible;
    51 component unknown in the product.
    """
    p = Params(params)
    product_name = p.str("product")
    if not product_name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function FlagType.get requires a product.")
    return flag_type.types_for(ctx, product_name, p.str("component"))


# Create ----------------------------------------------------------------------

def create(ctx, params):
    """Create a flag type (editcomponents; or a product's administrators,
    whose groups hold editcomponents on it through its group controls: for
    their products alone).

    params: name, description (required); target_type ('bug' (default) or
    'attachment'); inclusions (default: every product and component),
    exclusions (default none); sortkey (1..32767, default 1); is_active,
    is_requestable, is_specifically_requestable, is_multiplicable (default
    true); cc_list (array of e-mail addresses); grant_group, request_group
    (group names, default none).
    Returns {"id"}. Errors: 410 logged out; 304 neither in editcomponents
    nor a product's administrator; 50 name or description missing; 1101
    bad name (blank, whitespace, comma, over 50 characters); 1102 blank
    description; 1103 cc list over 200 characters; 501 a cc address that
    is not an address; 1104 sortkey not in 1..32767; 51 unknown group or
    component; 106 unknown product in inclusions/exclusions, or (outside
    editcomponents) one the caller does not administer or __Any__, which
    is also the default of inclusions; 53 a malformed inclusion/exclusion;
    -32000 target_type neither bug nor attachment.
    """
    mine = flag_type.administered_products(ctx, "add flag types")
    p = Params(params)
    if not p.get("name"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function FlagType.create requires a name.")
    if not p.get("description"):
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "The function FlagType.create requires a description.")
    type_id = flag_type.create(
        ctx, p.str("name"), p.str("description"), target_type=p.str("target_type", "bug"),
        sortkey=p.get("sortkey"), cc_list=p.get("cc_list"),
        **{name: p.bool(name, True) for name in _BOOLEANS},
        grant_group=p.get("grant_group"), request_group=p.get("request_group"),
        inclusions=p.get("inclusions"), exclusions=p.get("exclusions"), mine=mine)
    return {"id": type_id}


# Update ----------------------------------------------------------------------

def update(ctx, params):
    """Change flag types (editcomponents; or, as Bugzilla 5.2, a product's
    administrators: the inclusions and exclusions of their products of a
    type that applies to one of them, and its other fields when every
    product it includes is theirs).

    params: ids (array of int), names (array; every type of each name), and
    new values: name, description, inclusions, exclusions, sortkey,
    is_active, is_requestable, cc_list, is_specifically_requestable,
    is_multiplicable, grant_group, request_group (as in create; inclusions
    and exclusions replace the whole list).
    Returns {"flagtypes": [{"id", "name", "changes"}]}; `changes` keys are
    the reference's: name, description, cc_list, sortkey, is_active,
    is_requestable, is_requesteeble, is_multiplicable, grant_group_id,
    request_group_id (group ids), inclusions, exclusions ("Product:Component"
    entries removed/added, "__Any__" for every one). Flags left on bugs the
    type no longer applies to move to an applicable type of the same name,
    or are deleted; requestees are dropped when the type stops being
    specifically requestable.
    Errors: 410, 304 as create; 50 neither ids nor names; 52 an id that
    is not a whole number of 0 or more; 51 unknown id or group; 32000 a new
    name for several types; -32601 a parameter that is not a changeable
    field; 1105 a type of none of the caller's products, or a field other
    than inclusions and exclusions of a type that also includes products
    the caller does not administer; 106 inclusions or exclusions naming a
    product the caller does not administer (or __Any__); the validation
    errors of create.
    """
    mine = flag_type.administered_products(ctx, "edit flag types")
    p = Params(params)
    if p.get("ids") is None and p.get("names") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED,
                           "The function FlagType.update requires ids or names.")
    unknown = sorted(set(params) - set(flag_type.UPDATABLE) - set(flag_type.CLUSIONS)
                     - _NOT_VALUES)
    if unknown:
        raise ServiceError(UNKNOWN_METHOD,
                           f"'{unknown[0]}' is not a flag type field that can be changed.")
    ids, names = p.id_list("ids"), p.str_list("names")
    given = {}
    for name in list(flag_type.UPDATABLE) + list(flag_type.CLUSIONS):
        if p.has(name):
            given[name] = (p.str(name) if name in _TEXTS else p.bool(name) if name in _BOOLEANS
                           else p.get(name))
    return {"flagtypes": flag_type.update(ctx, ids, names, given, mine)}


# Administration (bugsvc calls) -----------------------------------------------

def list_all(ctx, params):
    """Every flag type with everything its page edits (editcomponents; a
    bugsvc call: Bugzilla 5.2 shows this only on editflagtypes.cgi). To a
    product's administrator outside editcomponents, the types that apply to
    its products, with only their rules of its products.

    Returns {"flagtypes": [{"id", "name", "description", "target_type",
    "sortkey", "cc_list", "is_active", "is_requestable",
    "is_specifically_requestable", "is_multiplicable", "grant_group",
    "request_group", "inclusions", "exclusions", "flags"}]}: inclusions and
    exclusions as "Product:Component" labels ("__Any__" for every one),
    flags the number of flags of the type, fully_editable (false: only its
    inclusions and exclusions of the caller's products may change); "groups":
    the names of the groups the page offers as grant or request group (the
    caller's own outside editcomponents); "products": the names of the
    products whose flag types the caller administers (null: every one).
    Errors: 410 logged out; 304 neither in editcomponents nor a product's
    administrator.
    """
    mine = flag_type.administered_products(ctx, "edit flag types")
    return {"flagtypes": flag_type.every_type(ctx, mine),
            "groups": flag_type.group_choices(ctx, mine),
            "products": flag_type.product_names(ctx, mine)}


def delete(ctx, params):
    """Delete flag types and every flag of them (editcomponents; a bugsvc
    call: Bugzilla 5.2 deletes them only on editflagtypes.cgi).

    A product's administrator outside editcomponents deletes only a type
    whose inclusions are all of its products.
    params: ids (array of int). Returns {"flagtypes": [{"id", "name",
    "flags"}]}: flags is how many flags were deleted with the type.
    Errors: 410 logged out; 304 neither in editcomponents nor a product's
    administrator; 50 no ids; 52 an id that is not a whole number of 0 or
    more; 51 unknown id; 1105 a type of none of the caller's products;
    32000 a type that also applies to products it does not administer.
    """
    mine = flag_type.administered_products(ctx, "delete flag types")
    return {"flagtypes": flag_type.delete(ctx, Params(params).id_list("ids"), mine)}
