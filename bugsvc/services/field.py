"""Bug fields: their definitions and legal values (interface "Bug fields"),
and custom fields, which admins create and change over REST (a bugsvc
extension). The behaviour lives in bugsvc/catalogue/field.py."""

from ..call.fields import Shape
from ..catalogue import field
from ..errors import require_group


# include/exclude shape of a field definition.
FIELD_SHAPES = {"fields": Shape()}


def fields(ctx, params):
    """Bug field definitions.

    params: ids (array of int), names (array of internal names); neither:
    every field that is not obsolete.
    Returns {"fields": [...]}: id, name, display_name, type, is_custom,
    is_mandatory, is_on_bug_entry, visibility_field, visibility_values, and
    for select fields (except product), component, version,
    target_milestone and keywords also value_field and values (Value
    objects: name, sort_key, sortkey, visibility_values, is_active, and
    for some fields description, is_open, can_change_to).
    Errors: 52 an id that is not a whole number of 0 or more (checked
    before anything is looked up: -1 is 52, not 51); 51 unknown id or name.
    """
    return {"fields": field.definitions(ctx, params)}


def legal_values(ctx, params):
    """The legal values of one field (deprecated form of `fields`).

    params: field (internal or bug-object name); product_id for component,
    version and target_milestone.
    Returns {"values": [names]}: the active values of a select field in
    sort order, or every component/version/milestone of the product.
    Errors: 50 no field, or no product_id for a per-product field; 106
    product unknown or not accessible; 108 not a select field.
    """
    return {"values": field.legal_values(ctx, params)}


def create(ctx, params):
    """Create a custom field (admin).

    params: name (required, cf_ then lower-case letters, digits, _; at most
    64), display_name (required), type (required: 1 free text, 2 single
    select, 3 multiple select, 4 large text, 5 date/time, 6 bug id, 7 bug
    URLs, 8 keywords, 9 date, 10 integer), is_mandatory, is_on_bug_entry
    (default false), sort_key (default after every field), visibility_field
    (a select field's name) with visibility_values (its value names),
    value_field (select fields only), values (select fields only: an array,
    or {"add": [...]}; each a name or {"name", "sort_key",
    "visibility_value"}). A select field starts with the value "---".
    Returns {"id"}. Errors: 410 logged out; 304 not in admin; 50 a
    required parameter missing; 52 type not a number; 51 unknown
    visibility_field, value_field or one of their values; 53 an unknown
    parameter; 32000 a name or type not allowed, a name in use, a rule
    broken by the visibility/value settings or the values.
    """
    require_group(ctx, "admin", "add custom fields")
    return {"id": field.create_custom(ctx, params)}


def update(ctx, params):
    """Change custom fields (admin).

    params: ids (array of int) and/or names (array); new values of
    display_name, is_mandatory, is_on_bug_entry, is_obsolete (hidden from
    the field list), sort_key, visibility_field ("" or null: none),
    visibility_values (replace the list), value_field ("" or null: none),
    values ({"add": [...], "remove": [...]}, removals first; a value that
    bugs still have is deactivated instead of deleted; adding an inactive
    value reactivates it). name and type cannot change.
    Returns {"fields": [{"id", "changes"}]}; changes keys: display_name,
    is_mandatory, is_on_bug_entry, is_obsolete, sort_key, visibility_field,
    visibility_values, value_field, values (names added/removed).
    Errors: 410, 304 as create; 50 neither ids nor names; 52 an id that
    is not a whole number of 0 or more; 51 unknown field or value; 53 an
    unknown parameter; 32000 a standard field, a new name or type, "---"
    removed, a value that controls another field's
    visibility removed, and the rules of create.
    """
    require_group(ctx, "admin", "edit custom fields")
    return {"fields": field.update_custom(ctx, params)}
