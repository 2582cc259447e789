"""The values of select fields as an administrator edits them (Bugzilla's
editvalues.cgi): add one, rename it, move it in the list (sort key),
deactivate it, delete it while no bug has it. This covers Bugzilla's own
selects whose values are field_values rows (bug_status, resolution,
priority, bug_severity, op_sys, rep_platform) and custom select fields.

Bugzilla's rules: a value that a parameter names as the default for new bugs
(defaultpriority ...) can be neither deactivated nor deleted, and renaming
it renames the parameter's value too; the values the code itself relies on
("---", the empty resolution, FIXED, DUPLICATE, UNCONFIRMED and the status
of duplicate_or_move_bug_status) can be neither renamed, deactivated nor
deleted; a value some bug has, or that decides where another field or value
is shown, cannot be deleted. A status is open or closed from its creation
on. Bugs keep their value through a rename (their rows are renamed with it),
their history keeps the old name, as Bugzilla's.
"""

from ..call.changes import note
from ..call.params import Params, clean_text
from ..errors import (
    NUMBER_TOO_SMALL,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from . import bug_fields, field as fields, settings
from .admin import SMALLINT_MAX


# Bugzilla's own selects whose values this module edits, with the bugs
# column that holds each (from the one list of bug fields).
STANDARD_COLUMNS = {f.name: f.column for f in bug_fields.SELECTS}
# The parameter naming each field's default value for new bugs.
DEFAULT_PARAMS = {"priority": "defaultpriority", "bug_severity": "defaultseverity",
                  "rep_platform": "defaultplatform", "op_sys": "defaultopsys"}
# Names a status may not take: they are actions of the bug form.
RESERVED_STATUS_NAMES = ("none", "duplicate", "change_resolution", "clearresolution")
_STATIC_RESOLUTIONS = ("", "FIXED", "DUPLICATE")


def editable_field(ctx, name):
    """The field called `name` (its name or interface name, any case) whose
    values are edited here. Errors: 50 no name; 51 unknown field; 32000 a
    field whose values are not a list of their own (products, components,
    versions, milestones, keywords ... have their own pages and calls)."""
    text = name.strip() if isinstance(name, str) else ""
    if not text:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify a field.")
    standard = bug_fields.BY_API_NAME.get(text)
    field = fields.field_by_name(ctx.conn, standard.name if standard else text)
    if field is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no field named '{text}'.")
    if not (field["name"] in STANDARD_COLUMNS
            or (field["is_custom"] and fields.is_select(field))):
        raise ServiceError(USER_ERROR, f"The values of the field '{field['name']}' are not "
                                       f"edited as field values.")
    return field


def _row(ctx, field, value):
    """The field_values row of `field` named `value` (any case). Errors: 51."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str):
        raise ServiceError(PARAM_INVALID, "A field value is a string.")
    row = ctx.conn.execute("SELECT id, value, sort_key, is_active, is_open, visibility_value_id"
                           " FROM field_values WHERE field_id = ? AND lower(value) = lower(?)",
                           (field["id"], text)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no value '{text}' of the field "
                                                  f"'{field['name']}'.")
    return dict(row)


def is_default(ctx, field, value):
    """True when a parameter names `value` as the field's default."""
    param = DEFAULT_PARAMS.get(field["name"])
    return param is not None and ctx.param(param) == value


def is_static(ctx, field, value):
    """True for the values the code relies on by name."""
    if value in ("", fields.DEFAULT_VALUE):
        return True
    if field["name"] == "resolution":
        return value in _STATIC_RESOLUTIONS
    if field["name"] == "bug_status":
        return value in ("UNCONFIRMED", ctx.param("duplicate_or_move_bug_status"))
    return False


def bug_count(ctx, field, value):
    """How many bugs have `value` in `field`."""
    column = STANDARD_COLUMNS.get(field["name"])
    if column is not None:
        # column: from the fixed list of bug fields, never from the caller.
        return ctx.conn.execute(f"SELECT COUNT(*) FROM bugs WHERE {column} = ?",
                                (value,)).fetchone()[0]
    return ctx.conn.execute("SELECT COUNT(DISTINCT bug_id) FROM bug_custom_values"
                            " WHERE field_id = ? AND value = ?",
                            (field["id"], value)).fetchone()[0]


def values(ctx, field):
    """Every value of `field` in list order, inactive ones too: dicts of
    id, name, sort_key, is_active, is_open (statuses; else None),
    visibility_value (the name of the controlling value, or None),
    bug_count, is_default, is_static."""
    controller = fields.field_by_id(ctx.conn, field["value_field_id"])
    controlling = dict(fields.choices(ctx.conn, controller)) if controller else {}
    rows = ctx.conn.execute("SELECT id, value, sort_key, is_active, is_open, visibility_value_id"
                            " FROM field_values WHERE field_id = ?"
                            " ORDER BY sort_key, value, id", (field["id"],)).fetchall()
    return [{"id": row["id"], "name": row["value"], "sort_key": row["sort_key"],
             "is_active": bool(row["is_active"]),
             "is_open": None if row["is_open"] is None else bool(row["is_open"]),
             "visibility_value": controlling.get(row["visibility_value_id"]),
             "bug_count": bug_count(ctx, field, row["value"]),
             "is_default": is_default(ctx, field, row["value"]),
             "is_static": is_static(ctx, field, row["value"])} for row in rows]


def _audit_class(field):
    """Bugzilla's class of a field's values in its audit log."""
    return "Status" if field["name"] == "bug_status" else f"Field::Choice::{field['name']}"


def _checked_name(ctx, field, text, current_id=None):
    """A new name for a value of `field`. Errors: 50 blank; 32000 longer
    than 64 characters, a reserved status name, or the name of another
    value of the field (active or not)."""
    name = clean_text(text if isinstance(text, str) else "")
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must enter a value.")
    if len(name) > fields.VALUE_MAX_LENGTH:
        raise ServiceError(USER_ERROR, f"The value '{name}' is longer than "
                                       f"{fields.VALUE_MAX_LENGTH} characters.")
    if field["name"] == "bug_status" and name.lower() in RESERVED_STATUS_NAMES:
        raise ServiceError(USER_ERROR, f"'{name}' is a reserved word and cannot be the name "
                                       f"of a status.")
    other = ctx.conn.execute("SELECT id, is_active FROM field_values"
                             " WHERE field_id = ? AND lower(value) = lower(?)",
                             (field["id"], name)).fetchone()
    if other is not None and other["id"] != current_id:
        hint = "" if other["is_active"] else " (inactive: make it active again instead)"
        raise ServiceError(USER_ERROR, f"The value '{name}' already exists for the field "
                                       f"'{field['name']}'{hint}.")
    return name


def _checked_sort_key(p):
    """Errors: 52 not a whole number; 32000 above 32767; 55 negative."""
    sort_key = p.int("sort_key", 0)
    if sort_key < 0:
        raise ServiceError(NUMBER_TOO_SMALL, "The sort key may not be negative.")
    if sort_key > SMALLINT_MAX:
        raise ServiceError(USER_ERROR, f"The sort key must be at most {SMALLINT_MAX}.")
    return sort_key


def _reject_unknown(params, allowed):
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ServiceError(PARAM_INVALID, f"The parameter '{unknown[0]}' is not valid here.")


def create(ctx, params):
    """Add a value; returns its id. params: field, value, sort_key
    (default: after the others), is_open (bug_status only, default true),
    visibility_value (a value of the field's value_field). Errors: 53, 50,
    51, 52, 32000 (services/field_value.create says which)."""
    _reject_unknown(params, ("field", "value", "sort_key", "is_open", "visibility_value"))
    p = Params(params)
    field = editable_field(ctx, p.get("field"))
    name = _checked_name(ctx, field, p.get("value"))
    if p.get("sort_key") not in (None, ""):
        sort_key = _checked_sort_key(p)
    else:
        highest = ctx.conn.execute("SELECT MAX(sort_key) FROM field_values WHERE field_id = ?",
                                   (field["id"],)).fetchone()[0]
        sort_key = min((highest or 0) + 100, SMALLINT_MAX)
    is_open = None
    if field["name"] == "bug_status":
        is_open = int(p.bool("is_open", True))
    elif p.get("is_open") is not None:
        raise ServiceError(USER_ERROR, "Only statuses are open or closed.")
    controller = None
    if p.get("visibility_value"):
        value_field = fields.field_by_id(ctx.conn, field["value_field_id"])
        if value_field is None:
            raise ServiceError(USER_ERROR, f"The values of '{field['name']}' are not shown "
                                           f"for another field's value.")
        controller = fields.choice_id(ctx.conn, value_field, p.str("visibility_value"))
    value_id = ctx.conn.execute(
        "INSERT INTO field_values (field_id, value, sort_key, is_active, is_open,"
        " visibility_value_id) VALUES (?, ?, ?, 1, ?, ?) RETURNING id",
        (field["id"], name, sort_key, is_open, controller)).fetchone()[0]
    audit.record(ctx, _audit_class(field), value_id, name=name)
    return value_id


def update(ctx, params):
    """Rename, move or (de)activate one value; returns {"id", "changes"}.
    params: field, value (its name now); new name, sort_key, is_active.
    Errors: 53, 50, 51, 52, 32000 (services/field_value.update says which)."""
    _reject_unknown(params, ("field", "value", "name", "sort_key", "is_active"))
    p = Params(params)
    field = editable_field(ctx, p.get("field"))
    row = _row(ctx, field, p.get("value"))
    old = row["value"]
    changes = {}
    if p.has("name"):
        name = _checked_name(ctx, field, p.get("name"), current_id=row["id"])
        if name != old:
            if is_static(ctx, field, old):
                raise ServiceError(USER_ERROR, f"The value '{old}' of '{field['name']}' is "
                                               f"used by the code itself and cannot be renamed.")
            _rename(ctx, field, row["id"], old, name)
            note(changes, "name", old, name)
    if p.has("sort_key"):
        sort_key = _checked_sort_key(p)
        if sort_key != row["sort_key"]:
            ctx.conn.execute("UPDATE field_values SET sort_key = ? WHERE id = ?",
                             (sort_key, row["id"]))
            note(changes, "sort_key", row["sort_key"], sort_key)
    if p.has("is_active"):
        active = p.bool("is_active")
        if active != bool(row["is_active"]):
            if not active:
                _check_removable(ctx, field, old, "deactivated")
            ctx.conn.execute("UPDATE field_values SET is_active = ? WHERE id = ?",
                             (int(active), row["id"]))
            note(changes, "is_active", bool(row["is_active"]), active)
    for key, change in changes.items():
        audit.record(ctx, _audit_class(field), row["id"], key, change["removed"],
                     change["added"], name=changes.get("name", {}).get("added", old))
    return {"id": row["id"], "changes": changes}


def _rename(ctx, field, value_id, old, new):
    """Rename the value, on the bugs that have it and in the parameter that
    names it as the default."""
    ctx.conn.execute("UPDATE field_values SET value = ? WHERE id = ?", (new, value_id))
    column = STANDARD_COLUMNS.get(field["name"])
    if column is not None:
        ctx.conn.execute(f"UPDATE bugs SET {column} = ? WHERE {column} = ?", (new, old))
    else:
        ctx.conn.execute("UPDATE bug_custom_values SET value = ? WHERE field_id = ? AND value = ?",
                         (new, field["id"], old))
    param = DEFAULT_PARAMS.get(field["name"])
    if param is not None and ctx.param(param) == old:
        settings.change(ctx, {param: new})


def _check_removable(ctx, field, name, verb):
    """Errors: 32000 the default of new bugs or a value the code relies on."""
    if is_default(ctx, field, name):
        raise ServiceError(USER_ERROR, f"'{name}' is the default value of '{field['name']}' "
                                       f"(parameter {DEFAULT_PARAMS[field['name']]}) and "
                                       f"cannot be {verb}; choose another default first.")
    if is_static(ctx, field, name):
        raise ServiceError(USER_ERROR, f"The value '{name}' of '{field['name']}' is used by "
                                       f"the code itself and cannot be {verb}.")


def delete(ctx, params):
    """Delete one value no bug has; returns {"id"}. params: field, value.
    Errors: 53, 50, 51, 32000 (services/field_value.delete says which)."""
    _reject_unknown(params, ("field", "value"))
    p = Params(params)
    field = editable_field(ctx, p.get("field"))
    row = _row(ctx, field, p.get("value"))
    name = row["value"]
    _check_removable(ctx, field, name, "deleted")
    count = bug_count(ctx, field, name)
    if count:
        raise ServiceError(USER_ERROR, f"The value '{name}' of '{field['name']}' cannot be "
                                       f"deleted: {count} bug{'s have' if count > 1 else ' has'}"
                                       f" it. Deactivate it instead.")
    if fields.controls_others(ctx, field, row["id"]):
        raise ServiceError(USER_ERROR, f"The value '{name}' controls where another field or "
                                       f"value is shown; change that first.")
    if field["name"] == "bug_status":
        ctx.conn.execute("DELETE FROM status_workflow WHERE old_status_id = ?"
                         " OR new_status_id = ?", (row["id"], row["id"]))
    ctx.conn.execute("DELETE FROM field_values WHERE id = ?", (row["id"],))
    audit.record(ctx, _audit_class(field), row["id"], "value", name, "", name=name)
    return {"id": row["id"]}
