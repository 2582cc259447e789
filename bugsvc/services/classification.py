"""Classifications: get, and create, update and delete (a bugsvc extension in the
reference's style). The behaviour lives in bugsvc/catalogue/classification.py."""

from ..call.fields import Shape
from ..call.params import Params, bounded_int, reject_unknown_keys, required_str
from ..catalogue import classification
from ..catalogue.admin import SMALLINT_MAX
from ..errors import (
    CLASSIFICATIONS_DISABLED,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    ServiceError,
    require_group,
)


# include/exclude shape of a classification and its products.
CLASSIFICATION_SHAPES = {"classifications": Shape(children={"products": Shape()})}
_CREATE_KEYS = frozenset({"name", "description", "sort_key"})
_UPDATE_KEYS = frozenset({"ids", "names", "name", "description", "sort_key"})


def _named(p):
    """(ids, names) of the classifications a call names. Errors: 50 none."""
    ids, names = p.int_list("ids"), p.str_list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify classifications with 'ids' "
                                                 "or 'names'.")
    return ids, names


def get(ctx, params):
    """Classifications by ids and names, with their products.

    Callers outside editclassifications see only classifications holding a
    product they may search, and only those products.
    Returns {"classifications": [{"id", "name", "description", "sort_key",
    "products": [{"id", "name", "description"}]}]}.
    Errors: 900 useclassification is off and the caller is not in
    editclassifications; 50 neither ids nor names; 51 unknown id or name.
    """
    if not (ctx.caller.in_group("editclassifications") or ctx.param_is_on("useclassification")):
        raise ServiceError(CLASSIFICATIONS_DISABLED, "Classifications are not enabled on this "
                                                     "installation.")
    return {"classifications": classification.with_products(ctx, *_named(Params(params)))}


def create(ctx, params):
    """Create a classification (editclassifications). Products join it
    through product create/update `classification`.

    params: name (required), description (default ""), sort_key (0..32767,
    default 0). Returns {"id"}.
    Errors: 410; 304 not in editclassifications; 53 unknown key; 50 no name;
    32000 blank, too long or taken name; 52/54/55 bad sort_key.
    """
    require_group(ctx, "editclassifications", "add classifications")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = required_str(p, "name", "classification")
    description = p.str("description", "")
    sort_key = bounded_int(p, "sort_key", 0, SMALLINT_MAX)
    return {"id": classification.create(ctx, name, description, sort_key)}


def update(ctx, params):
    """Change classifications (editclassifications).

    params: ids, names (the path gives the first), and new values name (one
    classification only), description, sort_key.
    Returns {"classifications": [{"id", "changes"}]}.
    Errors: 410; 304; -32601 unknown key; 50 neither ids nor names; 51
    unknown classification; 32000 a name for several classifications, or a
    blank, too long or taken name; 52/54/55 bad sort_key.
    """
    require_group(ctx, "editclassifications", "edit classifications")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    ids, names = _named(p)
    given = {}
    if p.has("name"):
        given["name"] = p.str("name")
    if p.has("description"):
        given["description"] = p.str("description", "")
    if p.has("sort_key"):
        given["sort_key"] = bounded_int(p, "sort_key", 0, SMALLINT_MAX)
    return {"classifications": classification.update(ctx, ids, names, given)}


def delete(ctx, params):
    """Delete classifications that hold no product (editclassifications).

    params: ids, names (the path gives the first).
    Returns {"classifications": [{"id"}]}.
    Errors: 410; 304; 53 unknown key; 50 neither ids nor names; 51 unknown
    classification; 32000 the default classification (Unclassified) or one
    that still holds products.
    """
    require_group(ctx, "editclassifications", "delete classifications")
    reject_unknown_keys(params, frozenset({"ids", "names"}), PARAM_INVALID)
    return {"classifications": classification.delete(ctx, *_named(Params(params)))}
