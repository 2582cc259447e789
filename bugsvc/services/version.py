"""Versions of a product: create and update (a bugsvc
extension in the reference's style). Versions in use are deactivated
(is_active false), never deleted."""

from ..catalogue.version_milestone import VERSION
from . import product_values


def create(ctx, params):
    """Add a version to a product (editcomponents, or editcomponents on
    the product through its group controls).

    params: product (id or name), name (required), sort_key (default 0),
    is_active (default true). Returns {"id"}.
    Errors: 410; 304 neither in editcomponents nor holding it on
    a product; 32000 a product the caller may see but not administer; 53 unknown key; 50 product or
    name missing; 106 unknown or hidden product; 32000 blank, longer than
    64 characters, or already a version of the product; 52/54/55 sort_key
    not a number or outside -32768..32767.
    """
    return {"id": product_values.create(ctx, params, VERSION)}


def update(ctx, params):
    """Change versions (editcomponents, or editcomponents on
    the product through its group controls).

    params: ids (the path gives the first), name (one version per product),
    sort_key, is_active. A rename is carried onto the bugs that have the
    version. Returns {"versions": [{"id", "changes"}]}; change keys name,
    sort_key, is_active ("1"/"0").
    Errors: 410; 304; -32601 unknown key; 50 no ids; 51 unknown version, or
    one of a product hidden from the caller (alike); 32000 bad or taken name, or two
    versions of one product renamed; 52/54/55 bad sort_key.
    """
    return {"versions": product_values.update(ctx, params, VERSION)}


def delete(ctx, params):
    """Delete versions that no bug has (editcomponents, or editcomponents on
    the product through its group controls).

    params: ids (the path gives the first). Returns {"versions": [{"id"}]}.
    Errors: 410; 304; 53 unknown key; 50 no ids; 51 unknown version, or one
    of a product hidden from the caller (alike); 32000 a version bugs have
    (deactivate it instead), or the product's last version.
    """
    return {"versions": product_values.delete(ctx, params, VERSION)}
