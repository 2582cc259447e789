"""Rules shared by the catalogue's admin calls (products, components,
versions, milestones, keywords, classifications): which product a caller
administers, unknown keys, sort keys, and the create/update of a product's
versions and milestones."""

from dataclasses import dataclass

from ..accounts import access
from ..store import audit
from . import catalog
from ..call.changes import note
from ..errors import (
    ServiceError, require_group, OBJECT_NOT_SPECIFIED, OBJECT_DOES_NOT_EXIST, PARAM_INVALID,
    NUMBER_TOO_LARGE, NUMBER_TOO_SMALL, USER_ERROR, PRODUCT_ACCESS_DENIED, UNKNOWN_METHOD,
)
from ..call.params import Params, clean_text

NAME_MAX_LENGTH = 64              # products, components, versions, milestones, ...
SMALLINT_MIN, SMALLINT_MAX = -32768, 32767
# Keys every call may carry besides its own parameters.


def administered_product(ctx, value, name="product", by_name=False):
    """The product named by `value` (an id or a name; only a name when
    `by_name`) that the caller may administer: it exists and the caller may
    see it.

    Errors: 50 no value; 106 unknown or hidden product (the same answer, so a
    hidden product's existence does not show).
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
    if product is None or not access.can_see_product(ctx, product["id"]):
        raise ServiceError(PRODUCT_ACCESS_DENIED,
                           f"Either the product '{value}' does not exist or you don't have "
                           "access to it.")
    return product


def reject_unknown_keys(params, allowed, code):
    """Raise `code` (53 on creates, -32601 on updates, as the reference) when
    `params` holds a key that is neither in `allowed` nor a common key."""
    unknown = sorted(key for key in params if key not in allowed)
    if unknown:
        raise ServiceError(code, f"The parameter '{unknown[0]}' is not valid here.")


def check_sort_key(p, name="sort_key", low=SMALLINT_MIN, high=SMALLINT_MAX, default=0):
    """`name` as an int within [low, high]. Errors: 52 not a number; 54/55 out of range."""
    value = p.int(name, default)
    if value > high:
        raise ServiceError(NUMBER_TOO_LARGE, f"The {name} {value} is larger than {high}.")
    if value < low:
        raise ServiceError(NUMBER_TOO_SMALL, f"The {name} {value} is smaller than {low}.")
    return value


def required_text(p, name, noun):
    """The trimmed value of a required text parameter of a create.

    Errors: 50 missing; 32000 blank; 32000 longer than 64 characters.
    """
    if p.get(name) is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the '{name}' of the {noun}.")
    return checked_name(p.str(name), noun)


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


# Versions and milestones -------------------------------------------------------

@dataclass(frozen=True)
class ValueKind:
    """A per-product value: versions or milestones.

    table: its table; noun: 'version'; answer_key: 'versions'; audit_class:
    'Version'; bug_column: the bugs column holding the value by name.
    """
    table: str
    noun: str
    answer_key: str
    audit_class: str
    bug_column: str


VERSION = ValueKind("versions", "version", "versions", "Version", "version")
MILESTONE = ValueKind("milestones", "milestone", "milestones", "Milestone", "target_milestone")

_VALUE_KEYS = frozenset({"product", "name", "sort_key", "is_active"})
_UPDATE_KEYS = frozenset({"ids", "name", "sort_key", "is_active"})


def _value_by_name(ctx, kind, product_id, name):
    row = ctx.conn.execute(f"SELECT id FROM {kind.table} WHERE product_id = ? AND"
                           " lower(name) = lower(?)", (product_id, name)).fetchone()
    return None if row is None else row[0]


def _value_by_id(ctx, kind, value_id):
    if kind is VERSION:
        return catalog.version_by_id(ctx.conn, value_id)
    return catalog.milestone_by_id(ctx.conn, value_id)


def create_value(ctx, params, kind):
    """Add a version or milestone to a product (editcomponents).

    params: product (id or name), name, sort_key (default 0), is_active
    (default true). Returns {"id"}.
    Errors: 410, 304; 53 unknown key; 50 product or name missing; 106 unknown
    or hidden product; 32000 blank, too long, or already in the product;
    52/54/55 bad sort_key.
    """
    require_group(ctx, "editcomponents", f"add {kind.answer_key}")
    reject_unknown_keys(params, _VALUE_KEYS, PARAM_INVALID)
    p = Params(params)
    product = administered_product(ctx, p.get("product"))
    name = required_text(p, "name", kind.noun)
    if _value_by_name(ctx, kind, product["id"], name) is not None:
        raise ServiceError(USER_ERROR, f"The {kind.noun} '{name}' already exists for product "
                                       f"'{product['name']}'.")
    sort_key = check_sort_key(p)
    is_active = p.bool("is_active", True)
    cur = ctx.conn.execute(f"INSERT INTO {kind.table} (product_id, name, sort_key, is_active)"
                           " VALUES (?, ?, ?, ?) RETURNING id",
                           (product["id"], name, sort_key, int(is_active)))
    new_id = cur.fetchone()[0]
    audit.record(ctx, kind.audit_class, new_id)
    return {"id": new_id}


def update_value(ctx, params, kind):
    """Change versions or milestones (editcomponents).

    params: ids (the values; the path gives the first), name (one value per
    product only), sort_key, is_active. A rename follows onto the bugs that
    carry the value (and, for milestones, the product's default milestone).
    Returns {"<answer_key>": [{"id", "changes"}]}; booleans "1"/"0".
    Errors: 410, 304; -32601 unknown key; 50 no ids; 51 unknown id, or the
    value's product is hidden from the caller (alike); 32000 blank, too long or
    taken name, two values of one product renamed, the default milestone
    deactivated; 52/54/55 bad sort_key. Nothing is stored unless all is valid.
    """
    require_group(ctx, "editcomponents", f"edit {kind.answer_key}")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    ids = p.int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the {kind.answer_key} to "
                                                 "update with 'ids'.")
    values, seen = [], set()
    for value_id in ids:
        value = _value_by_id(ctx, kind, value_id)
        # A value of a hidden product answers like a missing one.
        if value is None or not access.can_see_product(ctx, value["product_id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {kind.noun} with the id "
                                                      f"'{value_id}'.")
        if value["id"] not in seen:
            seen.add(value["id"])
            values.append(value)
    new = {}
    if p.has("name"):
        new["name"] = checked_name(p.str("name"), kind.noun)
        products = [v["product_id"] for v in values]
        if len(set(products)) != len(products):
            raise ServiceError(USER_ERROR, f"Only one {kind.noun} per product can be renamed "
                                           "at a time.")
        for value in values:
            other = _value_by_name(ctx, kind, value["product_id"], new["name"])
            if other is not None and other != value["id"]:
                raise ServiceError(USER_ERROR, f"The {kind.noun} '{new['name']}' already exists "
                                               "in this product.")
    if p.has("sort_key"):
        new["sort_key"] = check_sort_key(p)
    if p.has("is_active"):
        new["is_active"] = p.bool("is_active")
        if kind is MILESTONE and not new["is_active"]:
            for value in values:
                default = ctx.conn.execute("SELECT default_milestone FROM products WHERE id = ?",
                                           (value["product_id"],)).fetchone()[0]
                if default.lower() == value["name"].lower():
                    raise ServiceError(USER_ERROR, f"The milestone '{value['name']}' is the "
                                                   "default milestone of its product and "
                                                   "cannot be deactivated.")
    answers = []
    for value in values:
        changes = {}
        for field in ("name", "sort_key", "is_active"):
            if field in new and note(changes, field, value[field], new[field]):
                ctx.conn.execute(f"UPDATE {kind.table} SET {field} = ? WHERE id = ?",
                                 (int(new[field]) if field == "is_active" else new[field],
                                  value["id"]))
        if "name" in changes:
            _follow_rename(ctx, kind, value, new["name"])
        audit.record_changes(ctx, kind.audit_class, value["id"], changes)
        answers.append({"id": value["id"], "changes": changes})
    return {kind.answer_key: answers}


def _follow_rename(ctx, kind, value, new_name):
    """Bugs store versions and milestones by name: carry a rename over."""
    ctx.conn.execute(f"UPDATE bugs SET {kind.bug_column} = ? WHERE product_id = ? AND"
                     f" {kind.bug_column} = ?", (new_name, value["product_id"], value["name"]))
    if kind is MILESTONE:
        ctx.conn.execute("UPDATE products SET default_milestone = ? WHERE id = ? AND"
                         " default_milestone = ?", (new_name, value["product_id"], value["name"]))
