"""Charts over time (chart.cgi): saved series counted daily (a bugsvc
addition to the interface; Bugzilla keeps them in its web pages). The
behaviour lives in bugsvc/bugs/series.py."""


from ..bugs import series
from ..call.params import Params, as_day
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError


def get(ctx, params):
    """The series the caller may see: public ones and one's own.

    params: none.
    Returns {"series": [{"id", "category", "subcategory", "name",
    "frequency", "query", "is_public", "creator"}]}.
    """
    return {"series": series.series_list(ctx)}


def data(ctx, params):
    """The daily counts of series.

    params: ids (series ids), datefrom, dateto (YYYY-MM-DD, optional).
    Returns {"data": {id: [{"date", "count"}]}}, oldest first.
    Errors: 50 no ids; 51 a series that does not exist or the caller may
    not see; 56 a bad date; 32000 more than ten years of days.
    """
    p = Params(params)
    ids = p.int_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Name the series to chart (ids).")
    first, last = (as_day(p.str(name)) for name in ("datefrom", "dateto"))
    found = series.data(ctx, ids, first, last)
    return {"data": {str(series_id): [{"date": day, "count": value} for day, value in rows]
                     for series_id, rows in found.items()}}


def create(ctx, params):
    """Save a search as a series counted every `frequency` days.

    params: category, subcategory, name, query (a bug list's query
    string), frequency (days, default 1), is_public (administrators only).
    Returns {"id"}.
    Errors: 410 logged out; 50 a missing part; 32000 too long, a bad
    frequency, a public series by someone not in admin, a name already
    used; and those of Bug.search for its query.
    """
    p = Params(params)
    frequency = p.int("frequency", 1)
    return {"id": series.create(ctx, p.str("category"), p.str("subcategory"), p.str("name"),
                                p.str("query"), frequency, p.bool("is_public"))}


def delete(ctx, params):
    """Delete a series and its counts.

    params: id.
    Returns {"ids": [id]}.
    Errors: 410 logged out; 50 no id; 51 no such series the caller may
    see; 32000 someone else's (administrators may delete any).
    """
    p = Params(params)
    series_id = p.int("id")
    if series_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Name the series to delete (id).")
    series.delete(ctx, series_id)
    return {"ids": [series_id]}
