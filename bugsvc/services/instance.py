"""Instance information: version, extensions, timezone, time, parameters,
last audit time (interface "Instance information"). The parameters and
the audit log's time are bugsvc/catalogue/settings.py's."""

from .. import COMPATIBLE_VERSION, __version__, dates
from ..call.params import Params
from ..catalogue import settings
from ..errors import require_group


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
    return {"parameters": {name: value for name, value in settings.visible(ctx).items()
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
    return {"parameters": settings.change(ctx, params)}


def last_audit_time(ctx, params):
    """Returns {"last_audit_time"}: when an audited object last changed.

    params: class (array of class names 'Service::X' or 'Bugzilla::X', e.g.
    Bugzilla::Product; other names are ignored, and when none is left every
    class counts). The value is null when nothing matching was audited.
    Errors: 53 when a class name is not a string.
    """
    return {"last_audit_time": settings.last_audit_time(ctx, Params(params).str_list("class"))}
