"""Scheduled searches mailed ("whining", a bugsvc addition to the
interface; Bugzilla keeps them in editwhines.cgi). The behaviour lives in
bugsvc/bugs/whine.py."""

from ..bugs import whine
from ..call.params import Params, as_bool, as_int
from ..errors import OBJECT_NOT_SPECIFIED, PARAM_INVALID, ServiceError


def get(ctx, params):
    """The caller's events with their schedules and searches.

    params: none.
    Returns {"events": [{"id", "subject", "body", "mailifnobugs",
    "schedules": [{"id", "day", "time", "mailto_type", "mailto",
    "run_next"}], "queries": [{"id", "name", "title", "sortkey",
    "onemailperbug"}]}], "days": [...], "times": [...]}.
    Errors: 410 logged out; 304 not in bz_canusewhines.
    """
    return {"events": whine.events(ctx), "days": list(whine.DAYS),
            "times": list(whine.TIMES)}


def create_event(ctx, params):
    """Add an empty event.

    params: none. Returns {"id"}.
    Errors: 410; 304 not in bz_canusewhines; 32000 too many events.
    """
    return {"id": whine.create_event(ctx)}


def _event_id(p):
    event_id = p.int("id")
    if event_id is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Name the event (id).")
    return event_id


def _items(p, name, keys):
    items = []
    for item in p.list(name):
        if not isinstance(item, dict):
            raise ServiceError(PARAM_INVALID, f"Each of {name} is an object.")
        row = {key: item.get(key) for key in keys}
        if row.get("id") not in (None, ""):
            row["id"] = as_int(row["id"], f"{name}.id")
        else:
            row["id"] = None
        items.append(row)
    return items


def update_event(ctx, params):
    """Set an event: its subject, body, whether it is mailed when nothing
    is found, and its whole lists of schedules and searches (those left
    out are removed).

    params: id; subject; body; mailifnobugs; schedules: [{"id" (omitted:
    new), "day", "time", "mailto_type" (0 an account, 1 a group),
    "mailto" (login or group name; empty: oneself)}]; queries: [{"id"
    (omitted: new), "name" (one of one's saved searches), "title",
    "sortkey", "onemailperbug"}].
    Returns {"id"}.
    Errors: 410; 304 not in bz_canusewhines, or mailing someone else
    without bz_canusewhineatothers; 50 no id; 51 no such event, schedule,
    search, account or group; 52 a number that is not one; 53 a schedule
    or search that is not an object; 32000 a bad day or time, too long a
    text, too many schedules or searches.
    """
    p = Params(params)
    event_id = _event_id(p)
    schedules = _items(p, "schedules", ("id", "day", "time", "mailto_type", "mailto"))
    for item in schedules:
        item["mailto_type"] = as_int(item["mailto_type"] or 0, "mailto_type")
    queries = _items(p, "queries", ("id", "name", "title", "sortkey", "onemailperbug"))
    for item in queries:
        item["sortkey"] = as_int(item["sortkey"] or 0, "sortkey")
        item["onemailperbug"] = as_bool(item["onemailperbug"])
    whine.update_event(ctx, event_id, p.str("subject") or "", p.str("body") or "",
                       p.bool("mailifnobugs"), schedules, queries)
    return {"id": event_id}


def delete_event(ctx, params):
    """Delete an event with its schedules and searches.

    params: id. Returns {"ids": [id]}.
    Errors: 410; 304 not in bz_canusewhines; 50 no id; 51 no such event
    of the caller's.
    """
    event_id = _event_id(Params(params))
    whine.delete_event(ctx, event_id)
    return {"ids": [event_id]}
