"""Rules shared by the catalogue's admin (products, components, versions,
milestones, keywords, classifications, groups, flag types, fields): which
product a caller administers, and how a name or description is checked."""

from ..call.params import clean_text
from ..errors import (
    AUTH_FAILURE,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    PRODUCT_ACCESS_DENIED,
    USER_ERROR,
    ServiceError,
    require_login,
)
from . import catalog, group_control


NAME_MAX_LENGTH = 64              # products, components, versions, milestones, ...
SMALLINT_MIN, SMALLINT_MAX = -32768, 32767    # sort keys


def require_product_admin(ctx, action):
    """Raise 410 when logged out, 304 when the caller is neither in
    editcomponents nor holds it on some product through its group controls
    (Bugzilla's gate of its product, component, version and milestone
    admin); which products it may change is administered_product's."""
    require_login(ctx)
    if not group_control.may_admin_some_product(ctx):
        raise ServiceError(AUTH_FAILURE, "Sorry, you aren't a member of the 'editcomponents' "
                                         f"group, and only users with that membership may "
                                         f"{action}.")


def check_can_admin(ctx, product):
    """Errors: 32000 when the caller may see `product` (a catalog dict) but
    holds editcomponents neither globally nor on it (Bugzilla's
    product_admin_denied)."""
    if not group_control.in_group_for_product(ctx, "editcomponents", product["id"]):
        raise ServiceError(USER_ERROR, "You are not allowed to edit properties of product "
                                       f"'{product['name']}'.")


def administered_product(ctx, value, name="product", by_name=False):
    """The product named by `value` (an id or a name; only a name when
    `by_name`) that the caller may administer: it exists, the caller may
    see it and holds editcomponents globally or on it.

    Errors: 50 no value; 106 unknown or hidden product (the same answer, so a
    hidden product's existence does not show); 32000 a product the caller
    may not administer.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the '{name}' parameter.")
    if isinstance(value, (list, dict)):
        raise ServiceError(PARAM_INVALID, f"The parameter '{name}' must be a single value.")
    if by_name:
        product = catalog.product_by_name(ctx.conn, str(value).strip())
    else:
        product = catalog.product_by_id_or_name(ctx.conn, value if isinstance(value, int)
                                                else str(value).strip())
    if product is None or not group_control.can_see_product(ctx, product["id"]):
        raise ServiceError(PRODUCT_ACCESS_DENIED,
                           f"Either the product '{value}' does not exist or you don't have "
                           "access to it.")
    check_can_admin(ctx, product)
    return product


def checked_name(text, noun):
    """`text` cleaned (clean_text). Errors: 32000 blank or longer than 64
    characters."""
    return checked_text(text, noun, one_line=True)


def checked_text(text, noun, field="name", blank_code=USER_ERROR, long_code=USER_ERROR,
                 max_length=NAME_MAX_LENGTH, one_line=False):
    """The trimmed `field` (a name, a description ...) of a `noun` (a
    component ...), as every catalogue object checks it; the codes are the
    object's own.

    max_length: None for no limit. one_line: control characters become
    spaces (clean_text), as in names. Errors: `blank_code` when empty after
    trimming; `long_code` when longer than max_length.
    """
    text = clean_text(text) if one_line else (text or "").strip()
    if not text:
        raise ServiceError(blank_code, f"You must enter a {field} for the {noun}.")
    if max_length is not None and len(text) > max_length:
        raise ServiceError(long_code, f"The {noun} {field} '{text}' is longer than "
                                      f"{max_length} characters.")
    return text
