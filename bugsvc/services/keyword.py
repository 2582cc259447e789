"""Keywords: list, create, update (a bugsvc extension in
the reference's style). Keywords in use are deactivated, never deleted. The
behaviour lives in bugsvc/catalogue/keyword.py."""

from ..call.fields import Shape
from ..call.params import Params, reject_unknown_keys, required_str
from ..catalogue import keyword
from ..errors import (
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    ServiceError,
    require_group,
)


# include/exclude shape of a keyword.
KEYWORD_SHAPES = {"keywords": Shape()}
_CREATE_KEYS = frozenset({"name", "description", "is_active"})
_UPDATE_KEYS = frozenset({"ids", "names", "name", "description", "is_active"})


def get(ctx, params):
    """The keywords: all of them, or those named by ids and names.

    Returns {"keywords": [{"id", "name", "description", "is_active"}]}, by name.
    Errors: 51 an unknown id or name.
    """
    p = Params(params)
    if p.list("ids") or p.list("names"):
        return {"keywords": keyword.find(ctx, p.int_list("ids"), p.str_list("names"))}
    return {"keywords": keyword.all_keywords(ctx)}


def create(ctx, params):
    """Create a keyword (editkeywords).

    params: name, description (required), is_active (default true).
    Returns {"id"}.
    Errors: 410; 304 not in editkeywords; 53 unknown key; 50 name or
    description missing; 32000 blank, longer than 64 characters, holding a
    comma or white space, or taken (any case); 32000 blank description.
    """
    require_group(ctx, "editkeywords", "add keywords")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = required_str(p, "name", "keyword")
    if p.get("description") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the 'description' of the "
                                                 "keyword.")
    return {"id": keyword.create(ctx, name, p.str("description"), p.bool("is_active", True))}


def update(ctx, params):
    """Change keywords (editkeywords).

    params: ids, names (the path gives the first), and new values name (one
    keyword only), description, is_active.
    Returns {"keywords": [{"id", "changes"}]}; booleans "1"/"0".
    Errors: 410; 304; -32601 unknown key; 50 neither ids nor names; 51
    unknown keyword; 32000 a name for several keywords, or a bad name or
    description as in create.
    """
    require_group(ctx, "editkeywords", "edit keywords")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    if not p.list("ids") and not p.list("names"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the keywords to update with "
                                                 "'ids' or 'names'.")
    ids, names = p.int_list("ids"), p.str_list("names")
    given = {name: p.str(name) for name in ("name", "description") if p.has(name)}
    if p.get("is_active") is not None:
        given["is_active"] = p.bool("is_active")
    return {"keywords": keyword.update(ctx, ids, names, given)}
