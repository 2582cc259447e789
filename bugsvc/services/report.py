"""Reports (report.cgi): bugs counted by field values (a bugsvc addition
to the interface; Bugzilla draws them in its web pages only). The counting
lives in bugsvc/bugs/report.py."""

from datetime import timedelta

from ..bugs import report, team_reports, visibility
from ..call.params import Params, as_day
from ..dates import to_db
from ..errors import USER_ERROR, ServiceError, require_login


AXES = ("x_axis_field", "y_axis_field", "z_axis_field")
# Parameters of Bug.search that say how to show a list, not which bugs.
_NOT_CRITERIA = ("limit", "offset", "order", "count_only") + AXES


def axes(ctx, params):
    """The fields the caller may count bugs by.

    params: none.
    Returns {"fields": [{"name", "display_name"}]}: name is Bugzilla's
    (what x_axis_field takes), in the order Bug.fields lists them.
    """
    return {"fields": [{"name": name, "display_name": label}
                       for name, label in report.axis_fields(ctx)]}


def get(ctx, params):
    """The bugs a search finds, counted by the values of up to three fields.

    params: x_axis_field, y_axis_field, z_axis_field (Bugzilla's field
    names, as report.cgi's; at least one), and the parameters of Bug.search
    that choose the bugs (limit, offset and order are ignored).
    Returns {"x_axis_field", "y_axis_field", "z_axis_field" (the fields, ""
    for an axis not asked for), "x_labels", "y_labels", "z_labels" (each
    axis's values in the field's order, "" for bugs without a value; []
    for an axis not asked for), "tables": [{"z": value or null, "rows":
    [[count for each x value] for each y value]}] (one row when there is
    no y axis, one count per row when there is no x axis), "total"}. Only
    bugs the caller may see are counted; a bug counts under each of its
    values of a field with several.
    Errors: 108 a field that is no report axis for the caller; 32000 no
    axis, one field on two axes, more cells than a report holds; and those
    of Bug.search.
    """
    p = Params(params)
    chosen = {name: (p.str(name) or "").strip() for name in AXES}
    if not any(chosen.values()):
        raise ServiceError(USER_ERROR, "Choose at least one field to count the bugs by "
                                       "(x_axis_field, y_axis_field or z_axis_field).")
    named = [value for value in chosen.values() if value]
    if len(set(named)) != len(named):
        raise ServiceError(USER_ERROR, "Each axis of a report needs a different field.")
    axes_used = [(name, report.axis(ctx, chosen[name], name[0] + "ax"))
                 for name in AXES if chosen[name]]
    labels, counts, totals = report.tabulate(
        ctx, {key: value for key, value in (params or {}).items() if key not in _NOT_CRITERIA},
        [axis for _, axis in axes_used])
    used = [name for name, _ in axes_used]
    by_name = dict(zip(used, labels, strict=True))
    x_labels, y_labels, z_labels = (by_name.get(name, []) for name in AXES)

    def kept(*names):
        return tuple(used.index(name) for name in names if name in used)
    row_totals = totals(kept("y_axis_field", "z_axis_field"))
    column_totals = totals(kept("x_axis_field", "z_axis_field"))
    table_totals = totals(kept("z_axis_field"))
    tables = []
    for z in z_labels or [None]:
        rows = []
        for y in y_labels or [None]:
            rows.append([counts.get(_cell(chosen, x, y, z), 0) for x in x_labels or [None]])
        tables.append({
            "z": z, "rows": rows,
            "row_totals": [row_totals.get(_cell(chosen, None, y, z), 0)
                           for y in y_labels or [None]],
            "column_totals": [column_totals.get(_cell(chosen, x, None, z), 0)
                              for x in x_labels or [None]],
            "total": table_totals.get(_cell(chosen, None, None, z), 0)})
    return {"x_axis_field": chosen["x_axis_field"], "y_axis_field": chosen["y_axis_field"],
            "z_axis_field": chosen["z_axis_field"], "x_labels": x_labels,
            "y_labels": y_labels, "z_labels": z_labels, "tables": tables,
            "total": totals(()).get((), 0)}


def _cell(chosen, x, y, z):
    """The key of a cell (None: summed over that axis)."""
    return tuple(value for name, value in zip(AXES, (x, y, z), strict=True)
                 if chosen[name] and value is not None)


def duplicates(ctx, params):
    """The most duplicated bugs, as Bugzilla's duplicates.cgi counts them,
    among the duplicates and bugs the caller may see.

    params: product (names), bug_id (ids, comma-separated or repeated),
    changedsince (days, default 7: "delta" counts the duplicates marked in
    them), openonly, sortby (dup_count, delta, bug_id, component,
    bug_severity, op_sys, target_milestone, short_desc, bug_status,
    resolution, product), reverse, maxrows (default 20, at most a thousand).
    Returns {"bugs": [{"id", "count", "delta", "product", "component",
    "severity", "op_sys", "target_milestone", "summary", "status",
    "resolution"}], "changedsince"}.
    Errors: 32000 a bad sortby or number of days or rows.
    """
    p = Params(params)
    days = bounded(p, "changedsince", 7, 0, 36500)
    since = ctx.now - timedelta(days=days)
    ids = [int(part) for value in p.str_list("bug_id") for part in str(value).split(",")
           if part.strip().isdigit()]
    found = team_reports.most_duplicated(
        ctx, products=p.str_list("product"), bug_ids=ids, since=to_db(since),
        open_only=p.bool("openonly"), sort=p.str("sortby") or "dup_count",
        reverse=p.bool("reverse"), limit=bounded(p, "maxrows", 20, 1, team_reports.MOST_ROWS))
    return {"bugs": found, "changedsince": days}


def time_summary(ctx, params):
    """Hours worked per bug and person (Bugzilla's summarize_time.cgi), for
    the members of the time-tracking group only, on the bugs they may see.

    params: id (bug ids, comma-separated or repeated), do_depends (add the
    bugs they depend on), start_date, end_date (YYYY-MM-DD, both days
    included).
    Returns {"bugs": [ids counted], "hours": [{"bug_id", "summary",
    "login", "real_name", "hours"}], "total"}.
    Errors: 410 logged out; 32000 not in the time-tracking group, or more
    than a thousand bugs; 56 a bad date.
    """
    require_login(ctx)
    if not visibility.is_timetracker(ctx):
        raise ServiceError(USER_ERROR, "Only the members of the time-tracking group "
                                       "(timetrackinggroup) see time summaries.")
    p = Params(params)
    ids = list(dict.fromkeys(int(part) for value in p.str_list("id")
                             for part in str(value).replace(" ", ",").split(",")
                             if part.strip().isdigit()))
    if len(ids) > team_reports.MOST_BUGS:
        raise ServiceError(USER_ERROR, "A time summary covers at most "
                                       f"{team_reports.MOST_BUGS} bugs.")
    if p.bool("do_depends"):
        ids = team_reports.with_dependencies(ctx, ids)
    start, end = as_day(p.str("start_date")), as_day(p.str("end_date"))
    hours = team_reports.hours_worked(ctx, ids, start and f"{start} 00:00:00",
                                      end and f"{end} 23:59:59")
    return {"bugs": sorted({row["bug_id"] for row in hours}), "hours": hours,
            "total": round(sum(row["hours"] for row in hours), 2)}


def bounded(p, name, default, least, most):
    """A whole-number parameter within bounds. Errors: 32000 otherwise."""
    value = (p.str(name) or "").strip()
    if not value:
        return default
    if not value.isdigit() or not least <= int(value) <= most:
        raise ServiceError(USER_ERROR, f"{name} must be a whole number from {least} to {most}.")
    return int(value)
