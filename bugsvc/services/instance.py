"""Instance information: version, extensions, timezone, time, parameters,
last audit time (interface "Instance information"), and the audit log's
entries. The parameters and the audit log's time are
bugsvc/catalogue/settings.py's, its entries bugsvc/store/audit.py's."""

from datetime import timedelta

from .. import COMPATIBLE_VERSION, __version__, dates
from ..call.params import Params, bounded_int, reject_unknown_keys
from ..catalogue import settings
from ..errors import PARAM_INVALID, ServiceError, require_group


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


def page_settings(ctx, params):
    """Every instance parameter as stored (secrets included), for the web
    pages, which follow them themselves (cookie path, sign-in choices, user
    menus ...): an operation only the pages run, in the snapshot of their
    other reads, whose answer no caller is shown. Returns {name: string},
    the process's copy at the call's catalog generation (never change it).
    """
    return ctx.cached("params", ctx.load_parameters)


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


def parameter_definitions(ctx, params):
    """Every parameter as the parameters page offers it (tweakparams only; a
    bugsvc call): its section, description, kind of control, value (a
    secret masked), default, and the values it may take when they are a
    closed list (groups, a field's values, a list of choices).

    Returns {"sections": [{"name", "title", "description", "parameters":
    [{"name", "description", "control", "value", "default", "choices",
    "min", "max"}]}]}, in the sections of Bugzilla's parameters page.
    Errors: 410 logged out; 304 not in tweakparams.
    """
    require_group(ctx, "tweakparams", "see how parameters are set")
    return {"sections": settings.described(ctx)}


def last_audit_time(ctx, params):
    """Returns {"last_audit_time"}: when an audited object last changed.

    params: class (array of class names 'Service::X' or 'Bugzilla::X', e.g.
    Bugzilla::Product; other names are ignored, and when none is left every
    class counts). The value is null when nothing matching was audited.
    Errors: 53 when a class name is not a string.
    """
    return {"last_audit_time": settings.last_audit_time(ctx, Params(params).str_list("class"))}


_AUDIT_PARAMS = ("object", "user", "class", "since", "until", "limit", "offset")


def audit_log(ctx, params):
    """Read the audit log (admin only; a bugsvc call: Bugzilla 5.2 keeps
    its audit_log without a way to read it).

    params: object (words that must all occur in the changed object's name,
    e.g. a product, a group, a parameter or an account's login), user (the
    login of who made the changes; "" for changes made without an account:
    the command line, a visitor's own sign-up), class (class names
    Bugzilla::X, Service::X or X, any of them), since / until (dates or
    datetimes, both included; a date alone as `until` counts its whole day),
    limit (default 100, at most 1000), offset.
    Returns {"entries": [{id, user, class, object_id, object_name, field,
    removed, added, at_time}], "total_matches", "classes"} newest first;
    `classes`: every class the log holds.
    Errors: 410 logged out; 304 not in admin; 53 a parameter of the wrong
    kind or unknown; 56 an unreadable date; 54/55 limit or offset out of
    range.
    """
    require_group(ctx, "admin", "read the audit log")
    p = Params(params)
    reject_unknown_keys(params, _AUDIT_PARAMS, PARAM_INVALID)
    words = (p.str("object") or "").split()
    if len(words) > 20 or any(len(word) > 255 for word in words):
        raise ServiceError(PARAM_INVALID, "The parameter 'object' takes at most 20 words "
                                          "of at most 255 characters.")
    who = p.str("user")
    since = p.str("since") or None
    until = p.str("until") or None
    since = since and dates.parse_datetime(since, "since")
    if until:
        whole_day = len(until.strip()) == 10
        until = dates.parse_datetime(until, "until")
        if whole_day:
            until += timedelta(days=1) - timedelta(seconds=1)
    found, total, classes = settings.audit_log(
        ctx, words, who, p.str_list("class"), since, until,
        limit=bounded_int(p, "limit", 1, settings.AUDIT_LOG_MAX, 100),
        offset=bounded_int(p, "offset", 0, 10**9, 0))
    return {"entries": found, "total_matches": total, "classes": classes}
