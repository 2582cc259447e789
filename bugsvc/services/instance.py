"""Instance information: version, extensions, timezone, time, parameters,
last audit time (interface "Instance information")."""

import re

from .. import COMPATIBLE_VERSION, __version__, audit, dates, settings
from ..errors import ServiceError, require_group, OBJECT_DOES_NOT_EXIST, USER_ERROR
from ..params import Params

_CLASS_NAME = re.compile(r"^(?:Bugzilla|Service)((?:::\w+)*)$")


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
    tweakparams members every parameter."""
    values = settings.load(ctx.conn)
    if ctx.caller.in_group("tweakparams"):
        names = sorted(values)
    elif ctx.caller.is_logged_in:
        names = settings.LOGGED_IN
    else:
        names = settings.PUBLIC
    return {"parameters": {name: values[name] for name in names}}


def update_parameters(ctx, params):
    """Change parameters (tweakparams only; compat.md decision 7).

    params: {name: new value, ...}.
    Returns {"parameters": {name: {"added", "removed"}}} for those that changed.
    Errors: 410 logged out; 304 not in tweakparams; 51 unknown parameter;
    32000 a value the parameter does not accept. Nothing is stored unless
    every value is valid.
    """
    require_group(ctx, "tweakparams", "change parameters")
    current = settings.load(ctx.conn)
    updates = {}
    for name, value in params.items():
        if name in ("include_fields", "exclude_fields"):
            continue
        if name not in settings.DEFINITIONS:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no parameter named '{name}'.")
        try:
            updates[name] = settings.normalise(ctx.conn, name, value)
        except ValueError as exc:
            raise ServiceError(USER_ERROR, f"Invalid value for parameter '{name}': {exc}.") from None
    changes = {}
    for name, value in updates.items():
        if value == current[name]:
            continue
        ctx.conn.execute("UPDATE params SET value = ? WHERE name = ?", (value, name))
        if ctx.conn.execute("SELECT changes()").fetchone()[0] == 0:
            ctx.conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))
        changes[name] = {"added": value, "removed": current[name]}
        audit.record(ctx, "Param", 0, name, current[name], value)
    ctx.forget_params()
    return {"parameters": changes}


def last_audit_time(ctx, params):
    """Returns {"last_audit_time"}: the latest change of the audited classes.

    params: class (array of 'Service::X' or 'Bugzilla::X'; others ignored;
    none means every class). The value is null when nothing was audited.
    """
    classes = []
    for name in Params(params).str_list("class"):
        match = _CLASS_NAME.match(name)
        if match and match.group(1):
            classes.append(audit.CLASS_PREFIX + match.group(1)[2:])
    if Params(params).has("class") and not classes:
        when = None
    elif classes:
        marks = ", ".join("?" for _ in classes)
        when = ctx.conn.execute(f"SELECT MAX(at_time) FROM audit_log WHERE class IN ({marks})",
                                classes).fetchone()[0]
    else:
        when = ctx.conn.execute("SELECT MAX(at_time) FROM audit_log").fetchone()[0]
    return {"last_audit_time": dates.from_db(when)}
