"""Checking the values of bug fields, shared by
create and update. Each check returns the value to store or raises the
documented error."""

import re
from datetime import date

from ..accounts.visibility import can_see_user
from ..catalogue import catalog, group_control
from ..errors import (
    ALIAS_ERROR,
    COMPONENT_INVALID,
    ILLEGAL_DATE,
    NUMBER_TOO_LARGE,
    NUMBER_TOO_SMALL,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PARAM_MUST_BE_NUMERIC,
    PRODUCT_ACCESS_DENIED,
    SUMMARY_REQUIRED,
    TEXT_TOO_LONG,
    USER_ERROR,
    ServiceError,
)


MAX_SUMMARY = 255
MAX_ALIAS = 40
MAX_TIME = 99999.99
MAX_LISTED_VALUES = 30          # longer lists of legal values are cut in messages
_TIME = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)$")
_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


def text(value, name):
    """A scalar parameter as a string ("" for null). Errors: 32000 for an
    array or object."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list) and len(value) == 1 and not isinstance(value[0], (list, dict)):
        return text(value[0], name)
    if isinstance(value, (list, dict)):
        raise ServiceError(USER_ERROR, f"The value of '{name}' must be a single value.")
    return str(value)


def split(value, pattern=r"[\s,]+"):
    """A list parameter as a list of non-empty trimmed strings; a string is
    split on `pattern`."""
    if value is None:
        return []
    items = value if isinstance(value, list) else re.split(pattern, text(value, "list"))
    result = []
    for item in items:
        item = text(item, "list").strip()
        if item:
            result.append(item)
    return result


def summary(value):
    """Errors: 107 empty; 104 longer than 255 characters."""
    cleaned = " ".join(_CONTROL_CHARACTERS.sub(" ", text(value, "summary")).split())
    if not cleaned:
        raise ServiceError(SUMMARY_REQUIRED, "You must enter a summary for this bug.")
    if len(cleaned) > MAX_SUMMARY:
        raise ServiceError(TEXT_TOO_LONG, f"The text you entered in the summary field is too "
                                          f"long (more than {MAX_SUMMARY} characters).")
    return cleaned


def select(ctx, field, value, current=None, api_name=None):
    """A legal value of the select field `field` (internal name: op_sys,
    rep_platform, priority, bug_severity, resolution, bug_status), matched
    case-insensitively. current: the bug's value now (may stay even when
    inactive). Errors: 50 empty; 51 unknown; 32000 inactive; each message
    lists the active values."""
    api_name = api_name or field
    name = text(value, api_name).strip()
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify a value for '{api_name}'."
                                                 + legal_values(ctx.conn, field, api_name))
    row = ctx.conn.execute(
        "SELECT v.value, v.is_active FROM field_values v JOIN fields f ON f.id = v.field_id"
        " WHERE f.name = ? AND lower(v.value) = lower(?)", (field, name)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {api_name} called '{name}'."
                                                  + legal_values(ctx.conn, field, api_name))
    if not row["is_active"] and row["value"] != current:
        raise ServiceError(USER_ERROR, f"The {api_name} '{row['value']}' is no longer active."
                                       + legal_values(ctx.conn, field, api_name))
    return row["value"]


def legal_values(conn, field, api_name=None, names=None):
    """The sentence that ends a refusal of a fixed-list value: " Legal
    values: A, B, C." with the active values of select field `field`
    (internal name) in their sort order (the empty resolution of open bugs
    left out), or the given `names`. A long list is
    cut, pointing at GET /rest/field/bug/{api_name}, which lists them all."""
    if names is None:
        names = [row[0] for row in conn.execute(
            "SELECT v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
            " WHERE f.name = ? AND v.is_active = 1 AND v.value <> ''"
            " ORDER BY v.sort_key, v.value", (field,))]
    if not names:
        return ""
    if len(names) > MAX_LISTED_VALUES:
        return (f" Legal values include: {', '.join(names[:MAX_LISTED_VALUES])} "
                f"(GET /rest/field/bug/{api_name or field} lists all {len(names)}).")
    return f" Legal values: {', '.join(names)}."


def enterable_product(ctx, value):
    """The product called `value`, which the caller must be able to file bugs
    in. Errors: 50 missing; 106 unknown, closed or not enterable."""
    name = text(value, "product").strip()
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify a product.")
    product = catalog.product_by_name(ctx.conn, name)
    if product is None or not group_control.can_enter_product(ctx, product["id"]):
        raise ServiceError(PRODUCT_ACCESS_DENIED,
                           f"Either the product '{name}' does not exist, or you don't have "
                           "access rights to enter bugs in it.")
    return product


def component(ctx, product, value, current_id=None):
    """The component called `value` in `product`. Errors: 105 missing;
    51 unknown; 32000 inactive (unless it is the bug's current one)."""
    name = text(value, "component").strip()
    if not name:
        raise ServiceError(COMPONENT_INVALID, "You must specify a component.")
    found = catalog.component_by_name(ctx.conn, product["id"], name)
    if found is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no component '{name}' in the "
                                                  f"'{product['name']}' product.")
    if not found["is_active"] and found["id"] != current_id:
        raise ServiceError(USER_ERROR, f"The component '{found['name']}' is no longer active.")
    return found


def version(ctx, product, value, current=None):
    """A version name of `product`. Errors: 50 missing; 51 unknown; 32000 inactive."""
    return _product_value(ctx, catalog.version_by_name, "version", product, value, current)


def milestone(ctx, product, value, current=None):
    """A milestone name of `product`. Errors: 50 missing; 51 unknown; 32000 inactive."""
    return _product_value(ctx, catalog.milestone_by_name, "target milestone", product, value,
                          current)


def _product_value(ctx, lookup, label, product, value, current):
    name = text(value, label).strip()
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify a {label}.")
    found = lookup(ctx.conn, product["id"], name)
    if found is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {label} '{name}' in the "
                                                  f"'{product['name']}' product.")
    if not found["is_active"] and found["name"] != current:
        raise ServiceError(USER_ERROR, f"The {label} '{found['name']}' is no longer active.")
    return found["name"]


def user(ctx, login, code=OBJECT_DOES_NOT_EXIST):
    """The account with login `login`. Errors: `code` (51 by default, 504
    for create's cc) when there is none, or none the caller may see (an account
    hidden by usevisibilitygroups answers like a missing one)."""
    name = text(login, "user").strip()
    found = catalog.user_by_login(ctx.conn, name)
    if found is None or not can_see_user(ctx, found["id"]):
        raise ServiceError(code, f"There is no user account '{name}'.")
    return found


def keywords(ctx, names, current_ids=()):
    """Keyword dicts for `names`. Errors: 51 unknown; 32000 inactive (unless
    the bug already has it)."""
    found = []
    for name in names:
        keyword = catalog.keyword_by_name(ctx.conn, name)
        if keyword is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no keyword named '{name}'.")
        if not keyword["is_active"] and keyword["id"] not in current_ids:
            raise ServiceError(USER_ERROR, f"The keyword '{keyword['name']}' is no longer active.")
        if keyword["id"] not in [k["id"] for k in found]:
            found.append(keyword)
    return found


def time_value(value, name, allow_negative=False):
    """Hours as a float. Errors: 52 not a number; 55 negative (unless
    allowed); 54 above 99999.99."""
    raw = text(value, name).strip() if not isinstance(value, (int, float)) else repr(value)
    if raw in ("", "None"):
        return 0.0
    if isinstance(value, bool) or not _TIME.match(raw):
        raise ServiceError(PARAM_MUST_BE_NUMERIC, f"'{raw}' is not a valid number of hours "
                                                  f"for '{name}'.")
    number = float(raw)
    if number < 0 and not allow_negative:
        raise ServiceError(NUMBER_TOO_SMALL, f"The value of '{name}' cannot be negative.")
    if abs(number) > MAX_TIME:
        raise ServiceError(NUMBER_TOO_LARGE, f"The value of '{name}' is above {MAX_TIME}.")
    return number


def deadline(value):
    """'YYYY-MM-DD' or None. Errors: 56 not a valid date."""
    raw = text(value, "deadline").strip()
    if not raw:
        return None
    match = _DATE.match(raw[:10] if len(raw) > 10 and raw[10] in " T" else raw)
    if match:
        try:
            return date(*(int(part) for part in match.groups())).isoformat()
        except ValueError:
            pass
    raise ServiceError(ILLEGAL_DATE, f"'{raw}' is not a legal date (YYYY-MM-DD) for 'deadline'.")


def aliases(ctx, names, bug_id=None):
    """Checked alias names (duplicates in the list dropped, any case).
    Errors: 103 longer than 40, all digits, containing a comma or space,
    or used by another bug."""
    result = []
    for name in names:
        name = name.strip()
        if not name:
            continue
        if len(name) > MAX_ALIAS:
            raise ServiceError(ALIAS_ERROR, f"Bug aliases cannot be longer than {MAX_ALIAS} "
                                            f"characters ('{name}').")
        if name.isdigit():
            raise ServiceError(ALIAS_ERROR, f"The alias '{name}' is numeric; aliases cannot be "
                                            "made only of digits.")
        if re.search(r"[,\s]", name):
            raise ServiceError(ALIAS_ERROR, f"The alias '{name}' contains a comma or a space.")
        row = ctx.conn.execute("SELECT bug_id FROM bug_aliases WHERE lower(alias) = lower(?)",
                               (name,)).fetchone()
        if row is not None and row[0] != bug_id:
            raise ServiceError(ALIAS_ERROR, f"The alias '{name}' is already in use by another "
                                            "bug.")
        if name.lower() not in [existing.lower() for existing in result]:
            result.append(name)
    return result
