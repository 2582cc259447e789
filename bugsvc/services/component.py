"""Components: create as Bugzilla 5.2 does, update and delete as its development branch does.
The behaviour lives in bugsvc/catalogue/component.py."""

from ..call.params import Params, reject_unknown_keys
from ..catalogue import component
from ..catalogue.admin import require_product_admin
from ..errors import (
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    ServiceError,
)


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


def _named(p):
    """(ids, [(product name, component name)]) of the components a call
    names. Errors: 50 neither given; 53 a malformed names entry."""
    ids = p.int_list("ids")
    names = p.list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the components with 'ids' "
                                                 "or 'names'.")
    pairs = []
    for entry in names:
        if not (isinstance(entry, dict) and isinstance(entry.get("product"), str)
                and isinstance(entry.get("component"), str)):
            raise ServiceError(PARAM_INVALID, "Each entry of 'names' must be an object with "
                                              "'product' and 'component'.")
        pairs.append((entry["product"], entry["component"]))
    return ids, pairs


# Create ---------------------------------------------------------------------------------

def create(ctx, params):
    """Add a component to a product (editcomponents, or editcomponents on
    the product through its group controls).

    params: product, name, description, default_assignee (required);
    default_qa_contact (stored only while useqacontact is on), default_cc
    (logins: an array or a comma-separated string), is_open (default true;
    alias is_active), create_series (accepted; no charts). python-bugzilla's
    initialowner, initialqacontact, initialcclist are accepted, and
    `component` for name.
    Returns {"id"}.
    Errors: 410; 304 neither in editcomponents nor holding it on
    a product; 32000 a product the caller may see but not administer; 53 unknown key; 50 no product;
    106 unknown or hidden product; 32000 blank name, description or
    assignee; 105 name too long; 1200 name taken; 51 unknown assignee or QA
    contact; 504 unknown login in default_cc.
    """
    require_product_admin(ctx, "add components")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    values = _canonical(params)
    if "name" not in values and "component" in values:
        values["name"] = values.pop("component")
    p = Params(values)
    component_id = component.create(
        ctx, p.get("product"), p.str("name", ""), p.str("description", ""),
        p.str("default_assignee", ""), p.get("default_qa_contact"), p.get("default_cc"),
        p.bool("is_open", True))
    return {"id": component_id}


# Update -------------------------------------------------------------------------------

def update(ctx, params):
    """Change one or more components (editcomponents, or editcomponents on
    the product through its group controls).

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
    require_product_admin(ctx, "edit components")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    updates = p.dict("updates")
    reject_unknown_keys(updates, _FIELDS, UNKNOWN_METHOD)
    values = Params({**_canonical({k: v for k, v in params.items() if k in _FIELDS}),
                     **_canonical(updates)})
    ids, names = _named(p)
    given = {name: values.str(name) for name in ("name", "description", "default_assignee")
             if values.has(name)}
    given.update({name: values.get(name) for name in ("default_qa_contact", "default_cc")
                  if values.has(name)})
    if values.get("is_open") is not None:
        given["is_open"] = values.bool("is_open")
    return {"components": component.update(ctx, ids, names, given)}


# Delete -------------------------------------------------------------------------------

def delete(ctx, params):
    """Delete one or more components that no bug uses (editcomponents, or editcomponents on
    the product through its group controls).

    params: ids, names ([{"product", "component"}]; the path gives the
    first). The component's default CC list and its flag type inclusions
    and exclusions go with it.
    Returns {"components": [{"id"}]}.
    Errors: 410; 304; 50 neither ids nor names; 51 unknown component; 106
    unknown or hidden product; 1202 bugs use the component; 1201 it is the
    last component of its product. Nothing is deleted unless all can be.
    """
    require_product_admin(ctx, "delete components")
    return {"components": component.delete(ctx, *_named(Params(params)))}
