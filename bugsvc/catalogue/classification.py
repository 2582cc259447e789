"""Classifications of products: reading them with the products the caller
may search, creating and changing them (a bugsvc extension in the
reference's style). Products join one through their own `classification`."""

from ..call.changes import note
from ..errors import USER_ERROR, ServiceError
from ..store import audit
from . import catalog, group_control
from .admin import checked_name


# The classification of products that have none (Unclassified).
DEFAULT_ID = 1


def _find(ctx, ids, names):
    """The classifications named by `ids` and `names`, each once, in the
    order given. Errors: 51 unknown id or name."""
    return catalog.named(ctx.conn, ids, names, catalog.classification_by_id,
                         catalog.classification_by_name, "classification")


def with_products(ctx, ids, names):
    """The classifications named by `ids` and `names`, each with its products
    [{"id", "name", "description"}]: callers outside editclassifications see
    only the products they may search, and only classifications holding one.
    Errors: 51 unknown id or name.
    """
    admin = ctx.caller.in_group("editclassifications")
    classifications = _find(ctx, ids, names)
    visible = None if admin else set(group_control.selectable_product_ids(ctx))
    result = []
    for classification in classifications:
        products = [{"id": row["id"], "name": row["name"], "description": row["description"]}
                    for row in ctx.conn.execute(
                        "SELECT id, name, description FROM products WHERE classification_id = ?"
                        " ORDER BY lower(name), id", (classification["id"],))
                    if visible is None or row["id"] in visible]
        if products or admin:
            result.append({**classification, "products": products})
    return result


def _check_name(ctx, name, classification_id=None):
    """Errors: 32000 blank, longer than 64 characters, or taken (any case)."""
    name = checked_name(name, "classification")
    existing = catalog.classification_by_name(ctx.conn, name)
    if existing is not None and existing["id"] != classification_id:
        raise ServiceError(USER_ERROR, f"A classification named '{existing['name']}' already "
                                       "exists.")
    return name


def create(ctx, name, description, sort_key):
    """Store a new classification. Returns its id.
    Errors: 32000 a name that is blank, too long or taken."""
    name = _check_name(ctx, name)
    cur = ctx.conn.execute("INSERT INTO classifications (name, description, sort_key)"
                           " VALUES (?, ?, ?) RETURNING id",
                           (name, (description or "").strip(), sort_key))
    classification_id = cur.fetchone()[0]
    audit.record(ctx, "Classification", classification_id)
    return classification_id


def update(ctx, ids, names, given):
    """Change the classifications named by `ids` and `names`; given: {field:
    new value} of the fields given: name (one classification only),
    description, sort_key. Returns [{"id", "changes"}].
    Errors: 51 unknown classification; 32000 a name for several
    classifications, or a blank, too long or taken name.
    """
    classifications = _find(ctx, ids, names)
    new = {}
    if "name" in given:
        if len(classifications) > 1:
            raise ServiceError(USER_ERROR, "Classification names are unique: 'name' can only be "
                                           "set when updating one classification.")
        new["name"] = _check_name(ctx, given["name"], classifications[0]["id"])
    if "description" in given:
        new["description"] = (given["description"] or "").strip()
    if "sort_key" in given:
        new["sort_key"] = given["sort_key"]
    answers = []
    for classification in classifications:
        changes = {}
        for field, value in new.items():
            if note(changes, field, classification[field], value):
                ctx.conn.execute(f"UPDATE classifications SET {field} = ? WHERE id = ?",
                                 (value, classification["id"]))
        audit.record_changes(ctx, "Classification", classification["id"], changes)
        answers.append({"id": classification["id"], "changes": changes})
    return answers


def delete(ctx, ids, names):
    """Delete the classifications named by `ids` and `names`; returns
    [{"id"}]. Errors: 51 unknown classification; 32000 the default one
    (Unclassified, id 1) or one that still holds products (move them
    first)."""
    answers = []
    for classification in _find(ctx, ids, names):
        if classification["id"] == DEFAULT_ID:
            raise ServiceError(USER_ERROR, f"'{classification['name']}' is the default "
                                           "classification and cannot be deleted.")
        held = ctx.conn.execute("SELECT COUNT(*) FROM products WHERE classification_id = ?",
                                (classification["id"],)).fetchone()[0]
        if held:
            raise ServiceError(USER_ERROR, f"The classification '{classification['name']}' still "
                                           f"holds {held} product{'s' if held > 1 else ''}; "
                                           "move them to another classification first.")
        ctx.conn.execute("DELETE FROM classifications WHERE id = ?", (classification["id"],))
        audit.record(ctx, "Classification", classification["id"], "name",
                     classification["name"], "", name=classification["name"])
        answers.append({"id": classification["id"]})
    return answers
