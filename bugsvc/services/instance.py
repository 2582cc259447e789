"""Instance information: version, extensions, timezone, time, parameters,
last audit time (interface "Instance information")."""

import re

from .. import COMPATIBLE_VERSION, __version__, dates
from ..store import audit
from ..catalogue import settings
from ..store.db import placeholders
from ..errors import ServiceError, require_group, OBJECT_DOES_NOT_EXIST, USER_ERROR
from ..call.params import Params

# The reference accepts ^Bugzilla(::\w+)*$; Service:: is our neutral twin.
_CLASS_NAME = re.compile(r"(?:Bugzilla|Service)((?:::[A-Za-z0-9_]+)*)", re.ASCII)
_REFERENCE_ROOT = audit.CLASS_PREFIX.rstrip(":")


def version(ctx, params):
    """Returns {"version"}: the compatibility level clients select features by."""
    return {"version": COMPATIBLE_VERSION}


def extensions(ctx, params):
    """Returns {"extensions": {name: {"version"}}}; bugsvc reports itself here."""
    return {"extensions": {"bugsvc": {"version": __version__}}}


def timezone(ctx, params):
    """Returns {"timezone": "+0000"}: the service works in UTC."""
    return {"timezone": "+0000"}


def time(ctx, params):
    """Returns the Time object: db_time, web_time, web_time_utc, tz_name,
    tz_short_name, tz_offset."""
    now = dates.format_datetime(ctx.now)
    return {"db_time": now, "web_time": now, "web_time_utc": now, "tz_name": "UTC",
            "tz_short_name": "UTC", "tz_offset": "+0000"}


def parameters(ctx, params):
    """Returns {"parameters": {name: string}}: logged-out callers see
    maintainer and requirelogin, logged-in callers the documented set,
    tweakparams members every parameter. include_fields/exclude_fields
    choose among the parameter names, as in the reference."""
    values = settings.load(ctx.conn)
    if ctx.caller.in_group("tweakparams"):
        names = sorted(values)
    elif ctx.caller.is_logged_in:
        names = settings.LOGGED_IN
    else:
        names = settings.PUBLIC
    return {"parameters": {name: settings.shown(name, values[name]) for name in names
                           if ctx.fields.wants(name)}}


def update_parameters(ctx, params):
    """Change parameters (tweakparams only; Bugzilla has no such call: this
    one follows its update conventions).

    params: {name: new value, ...}.
    Returns {"parameters": {name: {"added", "removed"}}} for those that changed.
    Errors: 410 logged out; 304 not in tweakparams; 51 unknown parameter;
    32000 a value the parameter does not accept. Nothing is stored unless
    every value is valid.
    """
    require_group(ctx, "tweakparams", "change parameters")
    return {"parameters": change_parameters(ctx, params)}


def change_parameters(ctx, values):
    """Validate and store `values` ({name: new value}), auditing each change
    as class Param. No permission check: callers do that (the command line
    needs none). Returns {name: {"added", "removed"}} of the changed ones.
    A secret parameter's values are masked in the answer and the audit log,
    and its mask as the new value leaves it unchanged.
    Errors: 51 unknown parameter; 32000 invalid value (nothing stored).
    """
    current = settings.load(ctx.conn)
    updates = {}
    for name, value in values.items():
        if name not in settings.DEFINITIONS:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no parameter named '{name}'.")
        if value == settings.SECRET_MASK and settings.shown(name, "x") == settings.SECRET_MASK:
            continue
        try:
            updates[name] = settings.normalise(ctx.conn, name, value)
        except ValueError as exc:
            raise ServiceError(USER_ERROR,
                               f"Invalid value for parameter '{name}': {exc}.") from None
    changes = {}
    for name, value in updates.items():
        if value == current[name]:
            continue
        cur = ctx.conn.execute("UPDATE params SET value = ? WHERE name = ?", (value, name))
        if cur.rowcount == 0:
            ctx.conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))
        added, removed = settings.shown(name, value), settings.shown(name, current[name])
        changes[name] = {"added": added, "removed": removed}
        audit.record(ctx, "Param", 0, name, removed, added)
    ctx.forget_params()
    return changes


def last_audit_time(ctx, params):
    """Returns {"last_audit_time"}: when an audited object last changed.

    params: class (array of class names 'Service::X' or 'Bugzilla::X', e.g.
    Bugzilla::Product; other names are ignored, and when none is left every
    class counts). The value is null when nothing matching was audited.
    Errors: 53 when a class name is not a string.
    """
    classes = []
    for name in Params(params).str_list("class"):
        match = _CLASS_NAME.fullmatch(name)
        class_name = match and _REFERENCE_ROOT + match.group(1)
        if class_name and class_name not in classes:
            classes.append(class_name)
    sql = "SELECT MAX(at_time) FROM audit_log"
    if classes:
        sql += f" WHERE class IN ({placeholders(classes)})"
    return {"last_audit_time": dates.from_db(ctx.conn.execute(sql, classes).fetchone()[0])}
