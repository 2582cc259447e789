"""The values of select fields (Bugzilla's editvalues.cgi; a bugsvc
addition over RPC, which the reference has only as a page): Bugzilla's own
selects (status, resolution, priority, severity, OS, platform) and custom
select fields. The behaviour lives in bugsvc/catalogue/field_value.py."""

from ..catalogue import field_value
from ..errors import require_group


def get(ctx, params):
    """Every value of one field, inactive ones too (admin).

    params: field (its name or interface name).
    Returns {"field": name, "values": [{id, name, sort_key, is_active,
    is_open (statuses; else null), visibility_value, bug_count, is_default,
    is_static}]}. is_default: a parameter names it the default of new bugs;
    is_static: the code relies on it (neither can be deactivated or
    deleted; a static one cannot be renamed).
    Errors: 410 logged out; 304 not in admin; 50 no field; 51 unknown
    field; 32000 a field whose values are not edited as field values.
    """
    require_group(ctx, "admin", "edit field values")
    field = field_value.editable_field(ctx, params.get("field"))
    return {"field": field["name"], "values": field_value.values(ctx, field)}


def create(ctx, params):
    """Add a value to a field (admin).

    params: field (required), value (required: its name, at most 64
    characters), sort_key (0 to 32767; default after the others), is_open
    (statuses only, default true; fixed once made), visibility_value (the
    value of the field's value_field it is shown for).
    Returns {"id"}. Errors: 410, 304 as get; 50 no field or value; 51
    unknown field or visibility_value; 52 sort_key not a number; 53 an
    unknown parameter; 55 a negative sort_key; 32000 a name in use (active
    or not), too long or reserved (none, duplicate, change_resolution,
    clearresolution for a status), is_open on another field, a sort_key
    above 32767.
    """
    require_group(ctx, "admin", "add field values")
    return {"id": field_value.create(ctx, params)}


def update(ctx, params):
    """Rename, move or (de)activate one value of a field (admin).

    params: field, value (its name now), and the new name, sort_key,
    is_active. Bugs with the value keep it under its new name, and so does
    the parameter that names it the default for new bugs.
    Returns {"id", "changes"}; changes keys: name, sort_key, is_active.
    Errors: 410, 304 as get; 50 no field or value; 51 unknown field or
    value; 52, 55 as create; 53 an unknown parameter; 32000 renaming a
    value the code relies on, deactivating it or the default of new bugs,
    and the name rules of create.
    """
    require_group(ctx, "admin", "edit field values")
    return field_value.update(ctx, params)


def delete(ctx, params):
    """Delete one value of a field that no bug has (admin).

    params: field, value. A deleted status leaves the workflow too.
    Returns {"id"}. Errors: 410, 304 as get; 50 no field or value; 51
    unknown field or value; 53 an unknown parameter; 32000 the default of
    new bugs, a value the code relies on, a value bugs have (deactivate it
    instead), a value that decides where another field or value is shown.
    """
    require_group(ctx, "admin", "delete field values")
    return field_value.delete(ctx, params)
