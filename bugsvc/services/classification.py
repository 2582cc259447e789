"""Classifications: get, and create and update (a bugsvc extension in the
reference's style)."""

from ..accounts import access
from ..store import audit
from ..catalogue import catalog
from ..catalogue.admin import (
    SMALLINT_MAX, check_sort_key, checked_name, reject_unknown_keys, required_text,
)
from ..call.changes import note
from ..errors import (
    ServiceError, require_group, OBJECT_NOT_SPECIFIED, OBJECT_DOES_NOT_EXIST, PARAM_INVALID,
    USER_ERROR, CLASSIFICATIONS_DISABLED, UNKNOWN_METHOD,
)
from ..call.params import Params
from ..call.fields import Shape


# include/exclude shape of a classification and its products.
CLASSIFICATION_SHAPES = {"classifications": Shape(children={"products": Shape()})}
_CREATE_KEYS = frozenset({"name", "description", "sort_key"})
_UPDATE_KEYS = frozenset({"ids", "names", "name", "description", "sort_key"})


def _find(ctx, p):
    """The classifications named by ids and names, each once, in the order
    given. Errors: 50 neither given; 51 unknown id or name."""
    ids, names = p.int_list("ids"), p.str_list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify classifications with 'ids' "
                                                 "or 'names'.")
    found = []
    for classification_id in ids:
        classification = catalog.classification_by_id(ctx.conn, classification_id)
        if classification is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no classification with the id "
                                                      f"'{classification_id}'.")
        found.append(classification)
    for name in names:
        classification = catalog.classification_by_name(ctx.conn, name)
        if classification is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no classification named "
                                                      f"'{name}'.")
        found.append(classification)
    unique, seen = [], set()
    for classification in found:
        if classification["id"] not in seen:
            seen.add(classification["id"])
            unique.append(classification)
    return unique


def get(ctx, params):
    """Classifications by ids and names, with their products.

    Callers outside editclassifications see only classifications holding a
    product they may search, and only those products.
    Returns {"classifications": [{"id", "name", "description", "sort_key",
    "products": [{"id", "name", "description"}]}]}.
    Errors: 900 useclassification is off and the caller is not in
    editclassifications; 50 neither ids nor names; 51 unknown id or name.
    """
    admin = ctx.caller.in_group("editclassifications")
    if not (admin or ctx.param_is_on("useclassification")):
        raise ServiceError(CLASSIFICATIONS_DISABLED, "Classifications are not enabled on this "
                                                     "installation.")
    classifications = _find(ctx, Params(params))
    visible = None if admin else set(access.selectable_product_ids(ctx))
    result = []
    for classification in classifications:
        products = [{"id": row["id"], "name": row["name"], "description": row["description"]}
                    for row in ctx.conn.execute(
                        "SELECT id, name, description FROM products WHERE classification_id = ?"
                        " ORDER BY lower(name), id", (classification["id"],))
                    if visible is None or row["id"] in visible]
        if products or admin:
            result.append({**classification, "products": products})
    return {"classifications": result}


def _check_name(ctx, name, classification_id=None):
    """Errors: 32000 blank, longer than 64 characters, or taken (any case)."""
    name = checked_name(name, "classification")
    existing = catalog.classification_by_name(ctx.conn, name)
    if existing is not None and existing["id"] != classification_id:
        raise ServiceError(USER_ERROR, f"A classification named '{existing['name']}' already "
                                       "exists.")
    return name


def create(ctx, params):
    """Create a classification (editclassifications). Products join it
    through product create/update `classification`.

    params: name (required), description (default ""), sort_key (0..32767,
    default 0). Returns {"id"}.
    Errors: 410; 304 not in editclassifications; 53 unknown key; 50 no name;
    32000 blank, too long or taken name; 52/54/55 bad sort_key.
    """
    require_group(ctx, "editclassifications", "add classifications")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = _check_name(ctx, required_text(p, "name", "classification"))
    description = (p.str("description", "") or "").strip()
    sort_key = check_sort_key(p, low=0, high=SMALLINT_MAX)
    cur = ctx.conn.execute("INSERT INTO classifications (name, description, sort_key)"
                           " VALUES (?, ?, ?) RETURNING id", (name, description, sort_key))
    classification_id = cur.fetchone()[0]
    audit.record(ctx, "Classification", classification_id)
    return {"id": classification_id}


def update(ctx, params):
    """Change classifications (editclassifications).

    params: ids, names (the path gives the first), and new values name (one
    classification only), description, sort_key.
    Returns {"classifications": [{"id", "changes"}]}.
    Errors: 410; 304; -32601 unknown key; 50 neither ids nor names; 51
    unknown classification; 32000 a name for several classifications, or a
    blank, too long or taken name; 52/54/55 bad sort_key.
    """
    require_group(ctx, "editclassifications", "edit classifications")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    classifications = _find(ctx, p)
    new = {}
    if p.has("name"):
        if len(classifications) > 1:
            raise ServiceError(USER_ERROR, "Classification names are unique: 'name' can only be "
                                           "set when updating one classification.")
        new["name"] = _check_name(ctx, p.str("name"), classifications[0]["id"])
    if p.has("description"):
        new["description"] = (p.str("description", "") or "").strip()
    if p.has("sort_key"):
        new["sort_key"] = check_sort_key(p, low=0, high=SMALLINT_MAX)
    answers = []
    for classification in classifications:
        changes = {}
        for field, value in new.items():
            if note(changes, field, classification[field], value):
                ctx.conn.execute(f"UPDATE classifications SET {field} = ? WHERE id = ?",
                                 (value, classification["id"]))
        audit.record_changes(ctx, "Classification", classification["id"], changes)
        answers.append({"id": classification["id"], "changes": changes})
    return {"classifications": answers}
