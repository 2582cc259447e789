"""Custom `cf_*` fields on bugs:
how their values are checked, stored in bug_custom_values (one row per
value) and shown."""

import re
from datetime import date

from .. import dates
from ..catalogue import bug_fields
from ..catalogue.field_types import (
    BUG_ID,
    DATE,
    DATETIME,
    FREETEXT,
    INTEGER,
    MULTI_SELECT,
    SINGLE_SELECT,
    TEXTAREA,
)
from ..errors import (
    ILLEGAL_DATE,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    TEXT_TOO_LONG,
    USER_ERROR,
    ServiceError,
)
from ..store.db import placeholders
from .lookup import visible_bug_id
from .values import legal_values


NUMBER_TOO_LARGE, NUMBER_TOO_SMALL = 54, 55
MAX_FREETEXT = 255
UNSET_SELECT = "---"
_INT32 = 2**31
_EMPTY_DATETIME = re.compile(r"^[\s0\W_]*$")
_DATE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")
# The bug record attribute holding each standard select field's value.
_RECORD_ATTRIBUTE = {field.name: field.api for field in bug_fields.SELECTS}


def active_fields(ctx):
    """The custom fields in use (not obsolete), in field order: dicts with
    id, name, type, is_mandatory, visibility_field_id. Shared by the calls of
    a catalog generation (bugsvc/cache.py): never change them."""
    return ctx.cached("custom_fields", _read_active_fields)


def _read_active_fields(conn):
    rows = conn.execute("SELECT id, name, type, is_mandatory, visibility_field_id FROM fields"
                        " WHERE is_custom = 1 AND is_obsolete = 0 ORDER BY sort_key, name, id")
    return [{"id": row["id"], "name": row["name"], "type": row["type"],
             "is_mandatory": bool(row["is_mandatory"]),
             "visibility_field_id": row["visibility_field_id"]} for row in rows]


def display(field, stored):
    """The bug-object value of a custom field from its stored strings."""
    kind = field["type"]
    if kind == MULTI_SELECT:
        return list(stored)
    if kind == SINGLE_SELECT:
        return stored[0] if stored else UNSET_SELECT
    if kind == BUG_ID:
        return int(stored[0]) if stored else None
    if kind in (DATETIME, DATE):
        return dates.from_db(stored[0]) if stored else None
    if kind == INTEGER:
        return stored[0] if stored else "0"
    return stored[0] if stored else ""


def change_text(field, stored):
    """How a custom value reads in `changes` and history (multi-selects are
    compared value by value by the caller)."""
    kind = field["type"]
    if kind == SINGLE_SELECT:
        return stored[0] if stored else UNSET_SELECT
    if kind == INTEGER:
        return stored[0] if stored else "0"
    return ", ".join(stored)


def check_value(ctx, field, raw, current):
    """The stored strings for `raw`, a new value of custom `field`.

    current: the stored strings the bug has now ([] on create).
    Errors: 50 empty select value; 51 unknown select value; 32000 inactive
    select value, malformed integer; 54/55 integer out of range; 56 bad
    date; 104 free text too long; 100/101/102 bad bug id.
    """
    kind = field["type"]
    name = field["name"]
    if kind == MULTI_SELECT:
        values = raw if isinstance(raw, list) else ([] if raw is None else str(raw).split(","))
        result = []
        for value in values:
            text = _text(value).strip()
            if text and text not in result:
                result.append(_select_value(ctx, field, text, current))
        return result
    if isinstance(raw, list):
        raw = raw[0] if len(raw) == 1 else raw
        if isinstance(raw, list):
            raise ServiceError(USER_ERROR, f"The field '{name}' takes a single value.")
    text = _text(raw)
    if kind == SINGLE_SELECT:
        text = text.strip()
        if not text:
            raise ServiceError(OBJECT_NOT_SPECIFIED, f"A value for '{name}' is required.")
        value = _select_value(ctx, field, text, current)
        return [] if value == UNSET_SELECT else [value]
    if kind == FREETEXT:
        text = text.strip()
        if len(text) > MAX_FREETEXT:
            raise ServiceError(TEXT_TOO_LONG, f"The text of '{name}' is longer than "
                                              f"{MAX_FREETEXT} characters.")
        return [text] if text else []
    if kind == TEXTAREA:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        return [text] if text.strip() else []
    if kind == DATETIME:
        if _EMPTY_DATETIME.match(text):
            return []
        return [dates.to_db(dates.parse_datetime(text.strip(), name))]
    if kind == DATE:
        if _EMPTY_DATETIME.match(text):
            return []
        return [_date(text, name) + " 00:00:00"]
    if kind == BUG_ID:
        text = text.strip()
        if not text or text == "0":
            return []
        return [str(visible_bug_id(ctx, text))]
    if kind == INTEGER:
        text = text.strip()
        if not text:
            return []
        if not re.fullmatch(r"-?\d+", text):
            raise ServiceError(USER_ERROR, f"The value of '{name}' must be an integer.")
        number = int(text)
        if number >= _INT32:
            raise ServiceError(NUMBER_TOO_LARGE, f"The value of '{name}' is too large.")
        if number < -_INT32:
            raise ServiceError(NUMBER_TOO_SMALL, f"The value of '{name}' is too small.")
        return [str(number)]
    return [text] if text else []


def _text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (dict, list)):
        raise ServiceError(USER_ERROR, "A custom field value must be a string.")
    return str(value)


def _date(text, name):
    match = _DATE.match(text)
    if match:
        year, month, day = (int(part) for part in match.groups())
        try:
            return date(year, month, day).isoformat()
        except ValueError:
            pass
    raise ServiceError(ILLEGAL_DATE, f"'{text}' is not a legal date (YYYY-MM-DD) for '{name}'.")


def _select_value(ctx, field, text, current):
    row = ctx.conn.execute("SELECT value, is_active FROM field_values WHERE field_id = ?"
                           " AND lower(value) = lower(?)", (field["id"], text)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST,
                           f"There is no value '{text}' of the field '{field['name']}'."
                           + legal_values(ctx.conn, field["name"]))
    if not row["is_active"] and row["value"] not in current:
        raise ServiceError(USER_ERROR, f"The value '{row['value']}' of '{field['name']}' is no "
                                       "longer active." + legal_values(ctx.conn, field["name"]))
    return row["value"]


def is_visible_on_bug(conn, field, record):
    """True when the field applies to the bug: no visibility field, or the
    bug's value of that field is one of the field's visibility values."""
    if field["visibility_field_id"] is None:
        return True
    allowed = {row[0] for row in conn.execute(
        "SELECT value_id FROM field_visibility WHERE field_id = ?", (field["id"],))}
    controller = conn.execute("SELECT id, name, is_custom FROM fields WHERE id = ?",
                              (field["visibility_field_id"],)).fetchone()
    if controller is None:
        return True
    name = controller["name"]
    if name == "product":
        return record.product_id in allowed
    if name == "component":
        return record.component_id in allowed
    if name == "classification":
        row = conn.execute("SELECT classification_id FROM products WHERE id = ?",
                           (record.product_id,)).fetchone()
        return row is not None and row[0] in allowed
    if name in _RECORD_ATTRIBUTE:
        values = [getattr(record, _RECORD_ATTRIBUTE[name])]
    elif controller["is_custom"]:
        values = record.custom.get(name, []) or [UNSET_SELECT]
    else:
        return True
    if not values:
        return False
    ids = {row[0] for row in conn.execute(
        f"SELECT id FROM field_values WHERE field_id = ? AND value IN ({placeholders(values)})",
        [controller["id"]] + list(values))}
    return bool(ids & allowed)


def require_mandatory(conn, field, record):
    """Errors: 32000 when mandatory `field` applies to the bug but has no
    value (a select with a single legal value, or a multi-select without
    values, cannot be filled and is not required)."""
    if not field["is_mandatory"] or record.custom.get(field["name"]):
        return
    if not is_visible_on_bug(conn, field, record):
        return
    if field["type"] in (SINGLE_SELECT, MULTI_SELECT):
        count = conn.execute("SELECT COUNT(*) FROM field_values WHERE field_id = ?"
                             " AND is_active = 1 AND value <> ?",
                             (field["id"], UNSET_SELECT)).fetchone()[0]
        if count == 0:
            return
    raise ServiceError(USER_ERROR, f"You must enter a value for the field '{field['name']}'.")
