"""Bug fields as the fields table holds them: their definitions with their
legal values (Bug.fields, Bug.legal_values), and custom fields, which
admins create and change (a bugsvc extension). What each standard field is
comes from the one list of bug fields (bug_fields.py).

A select field's values live in field_values, except those of product,
classification and component, which are the catalogue's own rows; a
field's visibility values (field_visibility) and a value's visibility value
are ids of rows of the controlling field's value source.
"""

import re

from ..call.changes import note
from ..call.params import Params
from ..errors import (
    INVALID_FIELD_NAME,
    NUMBER_TOO_SMALL,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    PRODUCT_ACCESS_DENIED,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from . import bug_fields, catalog, group_control
from .admin import checked_text


SELECT_TYPES = tuple(code for code, kind in bug_fields.CUSTOM_KINDS.items() if kind.is_select)
CUSTOM_TYPES = tuple(bug_fields.CUSTOM_KINDS)
PRODUCT_SPECIFIC = tuple(field.name for field in bug_fields.STANDARD if field.per_product)
# Selects whose values are not field_values rows (the reference's "abnormal" selects).
CATALOGUE_SELECTS = tuple(field.name for field in bug_fields.STANDARD if field.catalogue_values)
DEFAULT_VALUE = "---"
NAME_MAX_LENGTH = 64
DISPLAY_NAME_MAX_LENGTH = 255
VALUE_MAX_LENGTH = 64
_CUSTOM_NAME = re.compile(r"^cf_[a-z0-9_]+$")
_FIELD_COLUMNS = ("id, name, display_name, type, is_custom, is_mandatory, is_on_bug_entry,"
                  " is_obsolete, sort_key, visibility_field_id, value_field_id")
_SETTABLE = ("display_name", "is_mandatory", "is_on_bug_entry", "sort_key", "visibility_field",
             "visibility_values", "value_field", "values")


def field_dict(row):
    """A fields row as a dict with booleans."""
    return {"id": row["id"], "name": row["name"], "display_name": row["display_name"],
            "type": row["type"], "is_custom": bool(row["is_custom"]),
            "is_mandatory": bool(row["is_mandatory"]),
            "is_on_bug_entry": bool(row["is_on_bug_entry"]),
            "is_obsolete": bool(row["is_obsolete"]), "sort_key": row["sort_key"],
            "visibility_field_id": row["visibility_field_id"],
            "value_field_id": row["value_field_id"]}


def _all_fields(conn):
    """{id: field dict} of every field."""
    return {row["id"]: field_dict(row)
            for row in conn.execute(f"SELECT {_FIELD_COLUMNS} FROM fields")}


def field_by_name(conn, name):
    row = conn.execute(f"SELECT {_FIELD_COLUMNS} FROM fields WHERE lower(name) = lower(?)",
                       (name,)).fetchone()
    return field_dict(row) if row else None


def field_by_id(conn, field_id):
    row = conn.execute(f"SELECT {_FIELD_COLUMNS} FROM fields WHERE id = ?", (field_id,)).fetchone()
    return field_dict(row) if row else None


def is_select(field):
    return field["type"] in SELECT_TYPES


def has_values(field):
    """True for the fields whose object carries value_field and values."""
    return ((is_select(field) and field["name"] != "product")
            or field["name"] in PRODUCT_SPECIFIC or field["name"] == "keywords")


# Value sources -------------------------------------------------------------------

def choices(conn, field):
    """[(id, name)] of a select field's values, in list order."""
    name = field["name"]
    if name == "product":
        sql, args = "SELECT id, name FROM products ORDER BY lower(name), id", ()
    elif name == "classification":
        sql, args = "SELECT id, name FROM classifications ORDER BY sort_key, lower(name), id", ()
    elif name == "component":
        sql, args = "SELECT id, name FROM components ORDER BY lower(name), id", ()
    else:
        sql, args = ("SELECT id, value FROM field_values WHERE field_id = ?"
                     " ORDER BY sort_key, value, id", (field["id"],))
    return [(row[0], row[1]) for row in conn.execute(sql, args)]


def _visible_choice_ids(ctx, field):
    """Ids of the controlling values the caller may learn about: products
    and components only of products the caller can see; None: all."""
    if field["name"] == "product":
        return set(group_control.selectable_product_ids(ctx))
    if field["name"] == "component":
        products = group_control.selectable_product_ids(ctx)
        if not products:
            return set()
        marks = ", ".join("?" for _ in products)
        return {row[0] for row in ctx.conn.execute(
            f"SELECT id FROM components WHERE product_id IN ({marks})", products)}
    return None


def choice_id(conn, field, value_name):
    """The id of the value called `value_name` of select `field`. Errors: 51."""
    for choice_id, name in choices(conn, field):
        if name.lower() == str(value_name).lower():
            return choice_id
    raise ServiceError(OBJECT_DOES_NOT_EXIST,
                       f"There is no value '{value_name}' of the field '{field['name']}'.")


# Read ------------------------------------------------------------------------

def definitions(ctx, params):
    """The definitions (Bug.fields' objects) of the fields `params` choose
    by ids and names, or of every field not obsolete. Errors: 52 a bad id;
    51 an unknown id or name."""
    p = Params(params)
    all_fields = _all_fields(ctx.conn)
    chosen = []
    for field_id in p.id_list("ids"):
        if field_id not in all_fields:
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no field with the id '{field_id}'.")
        chosen.append(all_fields[field_id])
    for name in p.str_list("names"):
        field = field_by_name(ctx.conn, name)
        if field is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no field named '{name}'.")
        if all(f["id"] != field["id"] for f in chosen):
            chosen.append(field)
    if p.get("ids") is None and p.get("names") is None:
        chosen = sorted((f for f in all_fields.values() if not f["is_obsolete"]),
                        key=lambda f: (f["sort_key"], f["name"]))
    return [_field_object(ctx, field, all_fields) for field in chosen]


def _field_object(ctx, field, all_fields):
    visibility_field = all_fields.get(field["visibility_field_id"])
    value_field = all_fields.get(field["value_field_id"])
    item = {
        "id": field["id"],
        "type": field["type"],
        "is_custom": field["is_custom"],
        "name": field["name"],
        "display_name": field["display_name"],
        "is_mandatory": field["is_mandatory"],
        "is_on_bug_entry": field["is_on_bug_entry"],
        "visibility_field": visibility_field["name"] if visibility_field else None,
        "visibility_values": _visibility_values(ctx, field, visibility_field),
    }
    if has_values(field):
        if field["name"] in PRODUCT_SPECIFIC:
            item["value_field"] = "product"
        else:
            item["value_field"] = value_field["name"] if value_field else None
        item["values"] = _values(ctx, field, value_field)
    return item


def _visibility_values(ctx, field, visibility_field):
    if visibility_field is None:
        return []
    chosen = {row[0] for row in ctx.conn.execute(
        "SELECT value_id FROM field_visibility WHERE field_id = ?", (field["id"],))}
    visible = _visible_choice_ids(ctx, visibility_field)
    return [name for choice_id, name in choices(ctx.conn, visibility_field)
            if choice_id in chosen and (visible is None or choice_id in visible)]


def _values(ctx, field, value_field):
    name = field["name"]
    if name in PRODUCT_SPECIFIC:
        return _product_specific_values(ctx, name)
    if name == "bug_status":
        return _status_values(ctx, field)
    if name == "keywords":
        return [{"name": keyword["name"], "description": keyword["description"]}
                for keyword in catalog.all_keywords(ctx.conn)]
    if name == "classification":
        return [{"name": row["name"], "sort_key": row["sort_key"], "sortkey": row["sort_key"],
                 "visibility_values": []}
                for row in ctx.conn.execute("SELECT name, sort_key FROM classifications"
                                            " ORDER BY sort_key, lower(name), id")]
    controlling = dict(choices(ctx.conn, value_field)) if value_field else {}
    visible = _visible_choice_ids(ctx, value_field) if value_field else None
    result = []
    for row in ctx.conn.execute(
            "SELECT value, sort_key, is_active, visibility_value_id FROM field_values"
            " WHERE field_id = ? ORDER BY sort_key, value, id", (field["id"],)):
        controller = row["visibility_value_id"]
        if controller is not None and visible is not None and controller not in visible:
            continue
        value = {"name": row["value"], "sort_key": row["sort_key"], "sortkey": row["sort_key"],
                 "visibility_values": [controlling[controller]] if controller in controlling
                 else []}
        if field["is_custom"]:
            # bugsvc addition: a custom value that bugs still use is kept inactive.
            value["is_active"] = bool(row["is_active"])
        result.append(value)
    return result


def _product_specific_values(ctx, name):
    """One entry per component/version/milestone of each product the caller
    can see, with the product as visibility value."""
    result = []
    product_ids = group_control.selectable_product_ids(ctx)
    products = catalog.products_by_ids(ctx.conn, product_ids)
    for product in (products[product_id] for product_id in product_ids):
        if name == "component":
            rows = catalog.components_of(ctx.conn, product["id"])
        elif name == "version":
            rows = catalog.versions_of(ctx.conn, product["id"])
        else:
            rows = catalog.milestones_of(ctx.conn, product["id"])
        for row in rows:
            sort_key = row["sort_key"] if name == "target_milestone" else 0
            result.append({"name": row["name"], "sort_key": sort_key, "sortkey": sort_key,
                           "visibility_values": [product["name"]],
                           "is_active": row["is_active"]})
    return result


def _status_values(ctx, field):
    """The statuses with their allowed transitions, after the pseudo-status
    "" of a new bug."""
    statuses = ctx.conn.execute(
        "SELECT id, value, sort_key, is_open FROM field_values WHERE field_id = ?"
        " ORDER BY sort_key, value, id", (field["id"],)).fetchall()
    result = [{"name": "", "is_open": True, "sort_key": 0, "sortkey": 0,
               "can_change_to": _transitions(ctx, None), "visibility_values": []}]
    for status in statuses:
        result.append({"name": status["value"], "is_open": bool(status["is_open"]),
                       "sort_key": status["sort_key"], "sortkey": status["sort_key"],
                       "can_change_to": _transitions(ctx, status["id"]),
                       "visibility_values": []})
    return result


def _transitions(ctx, old_status_id):
    if old_status_id is None:
        condition, args = "w.old_status_id IS NULL", ()
    else:
        condition, args = "w.old_status_id = ? AND w.new_status_id <> ?", (old_status_id,) * 2
    rows = ctx.conn.execute(
        "SELECT v.value, w.require_comment FROM status_workflow w"
        " JOIN field_values v ON v.id = w.new_status_id"
        f" WHERE {condition} AND v.is_active = 1 ORDER BY v.sort_key, v.value", args)
    return [{"name": row[0], "comment_required": bool(row[1])} for row in rows]


def legal_values(ctx, params):
    """The legal values of the field `params` name (`field`, and `product_id`
    for a per-product field). Errors: 50, 106, 108."""
    p = Params(params)
    name = p.str("field")
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The function Bug.legal_values requires a field.")
    standard = bug_fields.BY_API_NAME.get(name)
    field = field_by_name(ctx.conn, standard.name if standard else name)
    if field is not None and is_select(field) and field["name"] not in CATALOGUE_SELECTS:
        rows = ctx.conn.execute("SELECT value FROM field_values WHERE field_id = ?"
                                " AND is_active = 1 ORDER BY sort_key, value, id", (field["id"],))
        return [row[0] for row in rows]
    if field is not None and field["name"] in PRODUCT_SPECIFIC:
        product_id = p.get("product_id")
        if product_id is None or product_id == "":
            raise ServiceError(OBJECT_NOT_SPECIFIED,
                               "The function Bug.legal_values requires a product_id.")
        accessible = {str(pid): pid for pid in group_control.accessible_product_ids(ctx)}
        if str(product_id).strip() not in accessible:
            raise ServiceError(PRODUCT_ACCESS_DENIED,
                               f"Either the product '{product_id}' does not exist or you don't "
                               f"have access to it.")
        product_id = accessible[str(product_id).strip()]
        if field["name"] == "component":
            rows = catalog.components_of(ctx.conn, product_id)
        elif field["name"] == "version":
            rows = catalog.versions_of(ctx.conn, product_id)
        else:
            rows = catalog.milestones_of(ctx.conn, product_id)
        return [row["name"] for row in rows]
    raise ServiceError(INVALID_FIELD_NAME, f"Can't use '{p.str('field')}' as a field name.")


# Custom fields: create -------------------------------------------------------------

def create_custom(ctx, params):
    """Create the custom field `params` describe; returns its id.
    Errors: 53, 50, 52, 51, 32000 (services/field.create says which)."""
    p = Params(params)
    _reject_unknown(params, ("name", "type") + _SETTABLE)
    for required in ("name", "display_name", "type"):
        if p.get(required) is None or p.get(required) == "":
            raise ServiceError(OBJECT_NOT_SPECIFIED, f"A custom field needs a {required}.")
    name = _check_new_name(ctx, p.str("name"))
    field_type = p.int("type")
    if field_type not in CUSTOM_TYPES:
        raise ServiceError(USER_ERROR,
                           f"'{field_type}' is not a custom field type (1 to "
                           f"{max(CUSTOM_TYPES)}).")
    field = {"id": None, "name": name, "type": field_type}
    display_name = _check_display_name(p.str("display_name"))
    sort_key = _check_sort_key(p) if p.get("sort_key") is not None else _next_sort_key(ctx)
    visibility_field, visibility_ids = None, []
    if p.get("visibility_field"):
        visibility_field = _check_controller(ctx, field, p.str("visibility_field"))
    if p.get("visibility_values") is not None:
        visibility_ids = _check_visibility_values(ctx, visibility_field, p)
    value_field = None
    if p.get("value_field"):
        if not is_select(field):
            raise ServiceError(USER_ERROR, "Only select fields can have a value_field.")
        value_field = _check_controller(ctx, field, p.str("value_field"))
    additions, removals = _value_changes(p)
    if (additions or removals) and not is_select(field):
        raise ServiceError(USER_ERROR, "Only select fields (types 2 and 3) have values.")
    if removals:
        raise ServiceError(USER_ERROR, "A new field has no values to remove.")
    cur = ctx.conn.execute(
        "INSERT INTO fields (name, display_name, type, is_custom, is_mandatory, is_on_bug_entry,"
        " is_obsolete, sort_key, visibility_field_id, value_field_id)"
        " VALUES (?, ?, ?, 1, ?, ?, 0, ?, ?, ?) RETURNING id",
        (name, display_name, field_type, int(p.bool("is_mandatory")),
         int(p.bool("is_on_bug_entry")), sort_key,
         visibility_field["id"] if visibility_field else None,
         value_field["id"] if value_field else None))
    field["id"] = cur.fetchone()[0]
    ctx.conn.executemany("INSERT INTO field_visibility (field_id, value_id) VALUES (?, ?)",
                         [(field["id"], value_id) for value_id in visibility_ids])
    if is_select(field):
        ctx.conn.execute("INSERT INTO field_values (field_id, value, sort_key) VALUES (?, ?, 0)",
                         (field["id"], DEFAULT_VALUE))
        _add_values(ctx, field, value_field, additions)
    audit.record(ctx, "Field", field["id"])
    return field["id"]


# Custom fields: update -------------------------------------------------------------

def update_custom(ctx, params):
    """Change the custom fields `params` name; returns [{"id", "changes"}].
    Errors: 53, 50, 52, 51, 32000 (services/field.update says which)."""
    p = Params(params)
    _reject_unknown(params, ("ids", "names", "name", "type", "is_obsolete") + _SETTABLE)
    if p.get("ids") is None and p.get("names") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Field updates require ids or names.")
    targets = _update_targets(ctx, p)
    results = []
    for field in targets:
        changes = _update_one(ctx, field, p)
        audit.record_changes(ctx, "Field", field["id"], changes)
        results.append({"id": field["id"], "changes": changes})
    return results


def _update_targets(ctx, p):
    targets = []
    for field_id in p.id_list("ids"):
        field = field_by_id(ctx.conn, field_id)
        if field is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST,
                               f"There is no field with the id '{field_id}'.")
        targets.append(field)
    for name in p.str_list("names"):
        field = field_by_name(ctx.conn, name)
        if field is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no field named '{name}'.")
        targets.append(field)
    unique = []
    for field in targets:
        if not field["is_custom"]:
            raise ServiceError(USER_ERROR, f"'{field['name']}' is not a custom field; only custom "
                                           f"fields can be changed.")
        if all(f["id"] != field["id"] for f in unique):
            unique.append(field)
    return unique


def _update_one(ctx, field, p):
    """Apply the changes of `p` to one custom field; return its `changes`."""
    if p.has("name") and p.str("name", "").strip().lower() != field["name"]:
        raise ServiceError(USER_ERROR, "A field's name cannot be changed.")
    if p.has("type") and p.int("type") != field["type"]:
        raise ServiceError(USER_ERROR, "A field's type cannot be changed.")
    all_fields = _all_fields(ctx.conn)
    changes, columns = {}, {}
    if p.has("display_name"):
        columns["display_name"] = _check_display_name(p.str("display_name"))
    for flag in ("is_mandatory", "is_on_bug_entry", "is_obsolete"):
        if p.has(flag):
            columns[flag] = p.bool(flag)
    if p.has("sort_key"):
        columns["sort_key"] = _check_sort_key(p)
    old_visibility = all_fields.get(field["visibility_field_id"])
    new_visibility = old_visibility
    if p.has("visibility_field"):
        new_visibility = (_check_controller(ctx, field, p.str("visibility_field"))
                          if p.get("visibility_field") else None)
        columns["visibility_field_id"] = new_visibility["id"] if new_visibility else None
    old_value_field = all_fields.get(field["value_field_id"])
    new_value_field = old_value_field
    if p.has("value_field"):
        if p.get("value_field") and not is_select(field):
            raise ServiceError(USER_ERROR, "Only select fields can have a value_field.")
        new_value_field = (_check_controller(ctx, field, p.str("value_field"))
                           if p.get("value_field") else None)
        columns["value_field_id"] = new_value_field["id"] if new_value_field else None
    additions, removals = _value_changes(p)
    if (additions or removals) and not is_select(field):
        raise ServiceError(USER_ERROR, "Only select fields (types 2 and 3) have values.")

    for column, value in columns.items():
        old = field[column]
        if column == "visibility_field_id":
            note(changes, "visibility_field", old_visibility["name"] if old_visibility else "",
                 new_visibility["name"] if new_visibility else "")
        elif column == "value_field_id":
            note(changes, "value_field", old_value_field["name"] if old_value_field else "",
                 new_value_field["name"] if new_value_field else "")
        else:
            note(changes, column, old, value)
    if columns:
        sets = ", ".join(f"{column} = ?" for column in columns)
        ctx.conn.execute(f"UPDATE fields SET {sets} WHERE id = ?",
                         [int(v) if isinstance(v, bool) else v for v in columns.values()]
                         + [field["id"]])

    visibility_changed = _id_of(new_visibility) != _id_of(old_visibility)
    if p.get("visibility_values") is not None or visibility_changed:
        old_names = _visibility_values(ctx, field, old_visibility)
        new_ids = (_check_visibility_values(ctx, new_visibility, p)
                   if p.get("visibility_values") is not None else [])
        ctx.conn.execute("DELETE FROM field_visibility WHERE field_id = ?", (field["id"],))
        ctx.conn.executemany("INSERT INTO field_visibility (field_id, value_id) VALUES (?, ?)",
                             [(field["id"], value_id) for value_id in new_ids])
        new_names = _visibility_values(ctx, field, new_visibility)
        note(changes, "visibility_values", old_names, new_names)
    if _id_of(new_value_field) != _id_of(old_value_field):
        ctx.conn.execute("UPDATE field_values SET visibility_value_id = NULL WHERE field_id = ?",
                         (field["id"],))

    removed = _remove_values(ctx, field, removals)
    added = _add_values(ctx, field, new_value_field, additions)
    if removed or added:
        changes["values"] = {"added": ", ".join(added), "removed": ", ".join(removed)}
    return changes


def _id_of(field):
    return field["id"] if field else None


# Validation ------------------------------------------------------------------

def _reject_unknown(params, allowed):
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ServiceError(PARAM_INVALID, f"The parameter '{unknown[0]}' is not valid here.")


def _check_new_name(ctx, name):
    """The lower-cased name. Errors: 32000 not cf_ plus letters, digits, _;
    longer than 64; or in use."""
    name = (name or "").strip().lower()
    if not _CUSTOM_NAME.match(name) or len(name) > NAME_MAX_LENGTH:
        raise ServiceError(USER_ERROR,
                           f"The field name '{name}' is invalid: a custom field's name starts "
                           f"with 'cf_' followed by letters, digits or '_', at most "
                           f"{NAME_MAX_LENGTH} characters.")
    if field_by_name(ctx.conn, name) is not None:
        raise ServiceError(USER_ERROR, f"A field named '{name}' already exists.")
    return name


def _check_display_name(display_name):
    """The trimmed display name. Errors: 50 blank; 32000 too long."""
    return checked_text(display_name, "custom field", "display_name",
                        blank_code=OBJECT_NOT_SPECIFIED, max_length=DISPLAY_NAME_MAX_LENGTH)


def _check_sort_key(p):
    sort_key = p.int("sort_key", 0)
    if sort_key < 0:
        raise ServiceError(NUMBER_TOO_SMALL, "sort_key may not be negative.")
    return sort_key


def _next_sort_key(ctx):
    highest = ctx.conn.execute("SELECT MAX(sort_key) FROM fields").fetchone()[0]
    return (highest or 0) + 100


def _check_controller(ctx, field, name):
    """The select field called `name` that may control `field`'s
    visibility or values. Errors: 51 unknown; 32000 itself or not a select."""
    controller = field_by_name(ctx.conn, name)
    if controller is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no field named '{name}'.")
    if controller["id"] == field["id"] or controller["name"] == field["name"]:
        raise ServiceError(USER_ERROR, f"The field '{name}' cannot control itself.")
    if not is_select(controller):
        raise ServiceError(USER_ERROR, f"The field '{name}' is not a select field, so it cannot "
                                       f"control another field.")
    return controller


def _check_visibility_values(ctx, visibility_field, p):
    """Ids of the named values of `visibility_field`. Errors: 32000 values
    without a visibility_field; 51 an unknown value."""
    names = p.str_list("visibility_values")
    if names and visibility_field is None:
        raise ServiceError(USER_ERROR, "visibility_values need a visibility_field.")
    ids = []
    for name in names:
        value_id = choice_id(ctx.conn, visibility_field, name)
        if value_id not in ids:
            ids.append(value_id)
    return ids


def _value_changes(p):
    """(additions, removals) from `values`: an array (all additions) or
    {"add": [...], "remove": [...]}. Errors: 53 any other form."""
    values = p.get("values")
    if values is None:
        return [], []
    if isinstance(values, list):
        return values, []
    if isinstance(values, dict) and set(values) <= {"add", "remove"}:
        add, remove = values.get("add") or [], values.get("remove") or []
        add = add if isinstance(add, list) else [add]
        remove = remove if isinstance(remove, list) else [remove]
        return add, remove
    raise ServiceError(PARAM_INVALID, 'values must be an array or {"add": [...], "remove": [...]}.')


def _value_name(value):
    name = value.get("name") if isinstance(value, dict) else value
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise ServiceError(PARAM_INVALID, f"'{value}' is not a field value.")
    name = str(name).strip()
    if not name:
        raise ServiceError(USER_ERROR, "A field value may not be blank.")
    if len(name) > VALUE_MAX_LENGTH:
        raise ServiceError(USER_ERROR, f"The value '{name}' is longer than {VALUE_MAX_LENGTH} "
                                       f"characters.")
    return name


def _add_values(ctx, field, value_field, additions):
    """Add (or reactivate) values; return the names added. Errors: 32000
    an active value of that name exists; 51 an unknown visibility_value."""
    added = []
    for value in additions:
        name = _value_name(value)
        sort_key, controller = None, None
        if isinstance(value, dict):
            if value.get("sort_key") is not None:
                sort_key = Params(value).int("sort_key")
            if value.get("visibility_value"):
                if value_field is None:
                    raise ServiceError(USER_ERROR, "A visibility_value needs a value_field.")
                controller = choice_id(ctx.conn, value_field, value["visibility_value"])
        row = ctx.conn.execute("SELECT id, is_active FROM field_values"
                               " WHERE field_id = ? AND lower(value) = lower(?)",
                               (field["id"], name)).fetchone()
        if row is not None and row["is_active"]:
            raise ServiceError(USER_ERROR, f"The value '{name}' already exists for the field "
                                           f"'{field['name']}'.")
        if row is not None:
            ctx.conn.execute("UPDATE field_values SET is_active = 1,"
                             " sort_key = COALESCE(?, sort_key),"
                             " visibility_value_id = COALESCE(?, visibility_value_id) WHERE id = ?",
                             (sort_key, controller, row["id"]))
        else:
            if sort_key is None:
                highest = ctx.conn.execute("SELECT MAX(sort_key) FROM field_values"
                                           " WHERE field_id = ?", (field["id"],)).fetchone()[0]
                sort_key = (highest or 0) + 100
            ctx.conn.execute("INSERT INTO field_values (field_id, value, sort_key, is_active,"
                             " visibility_value_id) VALUES (?, ?, ?, 1, ?)",
                             (field["id"], name, sort_key, controller))
        added.append(name)
    return added


def _remove_values(ctx, field, removals):
    """Delete values, or deactivate those bugs still have; return the names
    removed. Errors: 51 unknown value; 32000 "---" or a value that controls
    another field's visibility or values."""
    removed = []
    for value in removals:
        name = _value_name(value)
        row = ctx.conn.execute("SELECT id, value, is_active FROM field_values"
                               " WHERE field_id = ? AND lower(value) = lower(?)",
                               (field["id"], name)).fetchone()
        if row is None or not row["is_active"]:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no value '{name}' of the field "
                                                      f"'{field['name']}'.")
        if row["value"] == DEFAULT_VALUE:
            raise ServiceError(USER_ERROR, f"'{DEFAULT_VALUE}' is the default value of a select "
                                           f"field and cannot be removed.")
        if controls_others(ctx, field, row["id"]):
            raise ServiceError(USER_ERROR, f"The value '{row['value']}' controls the visibility "
                                           f"of another field or value; change that first.")
        used = ctx.conn.execute("SELECT 1 FROM bug_custom_values WHERE field_id = ? AND value = ?"
                                " LIMIT 1", (field["id"], row["value"])).fetchone()
        if used:
            ctx.conn.execute("UPDATE field_values SET is_active = 0 WHERE id = ?", (row["id"],))
        else:
            ctx.conn.execute("DELETE FROM field_values WHERE id = ?", (row["id"],))
        removed.append(row["value"])
    return removed


def controls_others(ctx, field, value_id):
    """True when value `value_id` of `field` is a visibility value of a
    field, or the visibility value of a value of a field it controls."""
    if ctx.conn.execute("SELECT 1 FROM field_visibility fv JOIN fields f ON f.id = fv.field_id"
                        " WHERE f.visibility_field_id = ? AND fv.value_id = ? LIMIT 1",
                        (field["id"], value_id)).fetchone():
        return True
    return ctx.conn.execute("SELECT 1 FROM field_values v JOIN fields f ON f.id = v.field_id"
                            " WHERE f.value_field_id = ? AND v.visibility_value_id = ? LIMIT 1",
                            (field["id"], value_id)).fetchone() is not None
