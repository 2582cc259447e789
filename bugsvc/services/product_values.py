"""What creating and changing a product's versions and milestones reads of
a call, shared by services/version.py and services/milestone.py (their
docstrings are the interface's; catalogue/version_milestone.py holds the
behaviour)."""

from ..call.params import Params, bounded_int, reject_unknown_keys, required_str
from ..catalogue import version_milestone
from ..catalogue.admin import SMALLINT_MAX, SMALLINT_MIN, require_product_admin
from ..catalogue.version_milestone import ValueKind
from ..errors import (
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    UNKNOWN_METHOD,
    ServiceError,
)


_CREATE_KEYS = frozenset({"product", "name", "sort_key", "is_active"})
_UPDATE_KEYS = frozenset({"ids", "name", "sort_key", "is_active"})


def create(ctx, params, kind: ValueKind):
    """Add a value of `kind` to a product; returns its id.
    Errors: those of version.create / milestone.create."""
    require_product_admin(ctx, f"add {kind.table}")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = required_str(p, "name", kind.noun)
    sort_key = bounded_int(p, "sort_key", SMALLINT_MIN, SMALLINT_MAX)
    return version_milestone.create(ctx, kind, p.get("product"), name, sort_key,
                                    p.bool("is_active", True))


def update(ctx, params, kind: ValueKind):
    """Change values of `kind`; returns [{"id", "changes"}].
    Errors: those of version.update / milestone.update."""
    require_product_admin(ctx, f"edit {kind.table}")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    ids = p.int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the {kind.table} to update "
                                                 "with 'ids'.")
    given = {}
    if p.has("name"):
        given["name"] = p.str("name")
    if p.has("sort_key"):
        given["sort_key"] = bounded_int(p, "sort_key", SMALLINT_MIN, SMALLINT_MAX)
    if p.has("is_active"):
        given["is_active"] = p.bool("is_active")
    return version_milestone.update(ctx, kind, ids, given)


def delete(ctx, params, kind: ValueKind):
    """Delete values of `kind` no bug has; returns [{"id"}].
    Errors: those of version.delete / milestone.delete."""
    require_product_admin(ctx, f"delete {kind.table}")
    reject_unknown_keys(params, frozenset({"ids"}), PARAM_INVALID)
    ids = Params(params).int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the {kind.table} to delete "
                                                 "with 'ids'.")
    return version_milestone.delete(ctx, kind, ids)
