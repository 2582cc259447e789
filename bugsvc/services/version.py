"""Versions of a product: create and update (a bugsvc
extension in the reference's style). Versions in use are deactivated
(is_active false), never deleted."""

from ..call.params import Params, bounded_int, reject_unknown_keys, required_str
from ..catalogue import version_milestone
from ..catalogue.admin import SMALLINT_MAX, SMALLINT_MIN
from ..catalogue.version_milestone import VERSION
from ..errors import (
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    ServiceError,
    require_group,
)


_CREATE_KEYS = frozenset({"product", "name", "sort_key", "is_active"})
_UPDATE_KEYS = frozenset({"ids", "name", "sort_key", "is_active"})


def create(ctx, params):
    """Add a version to a product (editcomponents).

    params: product (id or name), name (required), sort_key (default 0),
    is_active (default true). Returns {"id"}.
    Errors: 410; 304 not in editcomponents; 53 unknown key; 50 product or
    name missing; 106 unknown or hidden product; 32000 blank, longer than
    64 characters, or already a version of the product; 52/54/55 sort_key
    not a number or outside -32768..32767.
    """
    require_group(ctx, "editcomponents", "add versions")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = required_str(p, "name", VERSION.noun)
    sort_key = bounded_int(p, "sort_key", SMALLINT_MIN, SMALLINT_MAX)
    return {"id": version_milestone.create(ctx, VERSION, p.get("product"), name, sort_key,
                                           p.bool("is_active", True))}


def update(ctx, params):
    """Change versions (editcomponents).

    params: ids (the path gives the first), name (one version per product),
    sort_key, is_active. A rename is carried onto the bugs that have the
    version. Returns {"versions": [{"id", "changes"}]}; change keys name,
    sort_key, is_active ("1"/"0").
    Errors: 410; 304; -32601 unknown key; 50 no ids; 51 unknown version, or
    one of a product hidden from the caller (alike); 32000 bad or taken name, or two
    versions of one product renamed; 52/54/55 bad sort_key.
    """
    require_group(ctx, "editcomponents", "edit versions")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    ids = p.int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the versions to update with "
                                                 "'ids'.")
    given = {}
    if p.has("name"):
        given["name"] = p.str("name")
    if p.has("sort_key"):
        given["sort_key"] = bounded_int(p, "sort_key", SMALLINT_MIN, SMALLINT_MAX)
    if p.has("is_active"):
        given["is_active"] = p.bool("is_active")
    return {"versions": version_milestone.update(ctx, VERSION, ids, given)}
