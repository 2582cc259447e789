"""Scheduled searches mailed ("whining", editwhines.cgi), as Bugzilla's
whine events, schedules and queries.

A member of bz_canusewhines keeps events: a subject, a body text and
whether the mail goes out when the searches find nothing. Each event has
schedules (a day, a time, a recipient) and queries (saved searches of the
owner's, by name, with a title, an order and "one mail per bug"). A
schedule's recipient is the owner; with bz_canusewhineatothers also
another account or the members of a group.

Days (run_day) are Bugzilla's: 'All', 'MF' (Monday to Friday), a weekday
('Mon' ... 'Sun'), a day of the month ('1' ... '31'; a day the month does
not have runs on its last day) or 'last'. Times (run_time) are an hour
('0' ... '23') or an interval through the day ('15min', '30min', '60min').
Times are the instance's, which works in UTC (Bugzilla.timezone answers
+0000).

Running (run_due: the delivery worker of every server process, and
`bugsvc whine`): a schedule whose run_next has come is claimed by moving
run_next on with an UPDATE that names the value it read, in the same
transaction that queues its mail in the outbox; of several processes one
claims it, and a run that rolled back is claimed again. Unlike Bugzilla
(which waits for the next day), a schedule saved during its hour runs
at once. The searches run as the recipient (a bug the recipient may not
see is never listed), and the delivery worker checks each bug again when
it renders the mail.
"""

import calendar
import dataclasses
from datetime import datetime, time, timedelta, timezone
from urllib.parse import parse_qsl

from ..accounts.caller import load_caller
from ..errors import (
    OBJECT_DOES_NOT_EXIST,
    USER_ERROR,
    ServiceError,
    require_group,
)
from ..store import audit, outbox
from . import saved_search, search, visibility


WHINERS = "bz_canusewhines"
WHINE_AT_OTHERS = "bz_canusewhineatothers"
MAILTO_USER, MAILTO_GROUP = 0, 1
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAYS = ("All", "MF") + WEEKDAYS + tuple(str(n) for n in range(1, 32)) + ("last",)
INTERVALS = {"15min": 15, "30min": 30, "60min": 60}
TIMES = tuple(str(hour) for hour in range(24)) + tuple(INTERVALS)
# The instance's time zone (Bugzilla.timezone): schedules are read in it.
ZONE = timezone.utc
MOST_EVENTS = 50
MOST_SCHEDULES = 20
MOST_QUERIES = 20
MOST_SUBJECT = 128
MOST_BODY = 10000
MOST_RECIPIENTS = 1000          # members of a recipient group mailed per run
MOST_BUGS = 1000                # bugs listed per query in one mail
MOST_BUG_MAILS = 100            # mails per query and recipient with "one mail per bug"
MOST_RUNS = 200                 # schedules one run_due claims


# Schedules ------------------------------------------------------------------------------

def runs_on(run_day, day):
    """True when a schedule of `run_day` runs on date `day`."""
    last = calendar.monthrange(day.year, day.month)[1]
    if run_day == "All":
        return True
    if run_day == "MF":
        return day.weekday() < 5
    if run_day in WEEKDAYS:
        return day.weekday() == WEEKDAYS.index(run_day)
    if run_day == "last":
        return day.day == last
    return day.day == min(int(run_day), last)


def _next_day(run_day, day):
    """The first date after `day` on which `run_day` runs."""
    for step in range(1, 400):
        if runs_on(run_day, day + timedelta(days=step)):
            return day + timedelta(days=step)
    raise ValueError(run_day)                          # every run_day runs within a year


def next_run(run_day, run_time, now, first=False):
    """When a schedule runs next (aware UTC) after `now` (aware). first:
    for a schedule just saved, whose current slot still counts: an hour
    schedule saved during its hour, or an interval schedule saved on one
    of its days, runs at once."""
    local = now.astimezone(ZONE)
    today = local.date()
    interval = INTERVALS.get(run_time)
    if interval is not None:
        if first and runs_on(run_day, today):
            return now
        midnight = datetime.combine(today, time(0), ZONE)
        minutes = (local.hour * 60 + local.minute) // interval * interval + interval
        slot = midnight + timedelta(minutes=minutes)
        if slot.date() == today and runs_on(run_day, today):
            return slot.astimezone(timezone.utc)
        return datetime.combine(_next_day(run_day, today), time(0),
                                ZONE).astimezone(timezone.utc)
    at = datetime.combine(today, time(int(run_time)), ZONE)
    if runs_on(run_day, today) and (at > local or (first and at + timedelta(hours=1) > local)):
        return at.astimezone(timezone.utc)
    day = _next_day(run_day, today)
    return datetime.combine(day, time(int(run_time)), ZONE).astimezone(timezone.utc)


# Reading and editing ----------------------------------------------------------------------

def _require_whiner(ctx):
    require_group(ctx, WHINERS, "schedule searches to be mailed")


def events(ctx):
    """The caller's events: [{"id", "subject", "body", "mailifnobugs",
    "schedules": [{"id", "day", "time", "mailto_type", "mailto",
    "run_next"}], "queries": [{"id", "name", "title", "sortkey",
    "onemailperbug"}]}], by id. Errors: 410 logged out; 304 not in
    bz_canusewhines."""
    _require_whiner(ctx)
    found = []
    for row in ctx.conn.execute("SELECT id, subject, body, mailifnobugs FROM whine_events"
                                " WHERE owner_id = ? ORDER BY id", (ctx.caller.id,)).fetchall():
        schedules = [{
            "id": s["id"], "day": s["run_day"], "time": s["run_time"],
            "mailto_type": s["mailto_type"], "mailto": s["mailto"] or "",
            "run_next": s["run_next"][:16] + "Z"}
            for s in ctx.conn.execute(
                "SELECT s.id, s.run_day, s.run_time, s.mailto_type, s.run_next,"
                " CASE WHEN s.mailto_type = 1 THEN (SELECT g.name FROM groups g"
                " WHERE g.id = s.mailto_id) ELSE (SELECT u.login FROM users u"
                " WHERE u.id = s.mailto_id) END AS mailto"
                " FROM whine_schedules s WHERE s.event_id = ? ORDER BY s.id", (row["id"],))]
        queries = [{"id": q["id"], "name": q["query_name"], "title": q["title"],
                    "sortkey": q["sortkey"], "onemailperbug": bool(q["onemailperbug"])}
                   for q in ctx.conn.execute(
                       "SELECT id, query_name, title, sortkey, onemailperbug FROM whine_queries"
                       " WHERE event_id = ? ORDER BY sortkey, id", (row["id"],))]
        found.append({"id": row["id"], "subject": row["subject"], "body": row["body"],
                      "mailifnobugs": bool(row["mailifnobugs"]), "schedules": schedules,
                      "queries": queries})
    return found


def create_event(ctx):
    """A new, empty event of the caller's (as Bugzilla's "Add a new
    event"); returns its id. Errors: 410; 304; 32000 more than 50 events."""
    _require_whiner(ctx)
    count = ctx.conn.execute("SELECT COUNT(*) FROM whine_events WHERE owner_id = ?",
                             (ctx.caller.id,)).fetchone()[0]
    if count >= MOST_EVENTS:
        raise ServiceError(USER_ERROR, f"You may keep at most {MOST_EVENTS} events.")
    event_id = ctx.conn.execute(
        "INSERT INTO whine_events (owner_id, subject, body, mailifnobugs) VALUES (?, '', '', 0)"
        " RETURNING id", (ctx.caller.id,)).fetchone()[0]
    audit.record(ctx, "User", ctx.caller.id, "whine_event", "", str(event_id))
    return event_id


def _own_event(ctx, event_id):
    _require_whiner(ctx)
    row = ctx.conn.execute("SELECT id FROM whine_events WHERE id = ? AND owner_id = ?",
                           (event_id, ctx.caller.id)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"You have no event with the id {event_id}.")


def delete_event(ctx, event_id):
    """Delete an event of the caller's with its schedules and queries.
    Errors: 410; 304; 51 no such event of the caller's."""
    _own_event(ctx, event_id)
    for table in ("whine_schedules", "whine_queries"):
        ctx.conn.execute(f"DELETE FROM {table} WHERE event_id = ?", (event_id,))
    ctx.conn.execute("DELETE FROM whine_events WHERE id = ?", (event_id,))
    audit.record(ctx, "User", ctx.caller.id, "whine_event", str(event_id), "")


def _recipient(ctx, mailto_type, mailto):
    """The id of a schedule's recipient (an account's login, or a group's
    name). Errors: 304 someone other than oneself without
    bz_canusewhineatothers; 51 no such account or group; 32000 a bad type."""
    mailto = str(mailto or "").strip()
    if mailto_type == MAILTO_USER:
        if not mailto or mailto.lower() == ctx.caller.login.lower():
            return ctx.caller.id
        require_group(ctx, WHINE_AT_OTHERS, "mail scheduled searches to others")
        row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                               (mailto,)).fetchone()
        if row is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no account '{mailto}'.")
        return row["id"]
    if mailto_type == MAILTO_GROUP:
        require_group(ctx, WHINE_AT_OTHERS, "mail scheduled searches to a group")
        row = ctx.conn.execute("SELECT id FROM groups WHERE lower(name) = lower(?)",
                               (mailto,)).fetchone()
        if row is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no group '{mailto}'.")
        return row["id"]
    raise ServiceError(USER_ERROR, "A schedule mails an account (0) or a group (1).")


def update_event(ctx, event_id, subject, body, mailifnobugs, schedules, queries):
    """Set an event of the caller's: its subject, body and mailifnobugs,
    and its whole lists of schedules and queries (those left out are
    removed). schedules: [{"id" (None: new), "day", "time", "mailto_type",
    "mailto" (a login or group name; empty: oneself)}]; a new schedule, or
    one whose day or time changed, runs first as next_run(first=True) says.
    queries: [{"id" (None: new), "name" (a saved search of the caller's),
    "title", "sortkey", "onemailperbug"}].
    Errors: 410; 304 not in bz_canusewhines, or another recipient without
    bz_canusewhineatothers; 51 no such event, schedule, query, account,
    group or saved search; 32000 a bad day or time, too long a text, too
    many schedules or queries. Nothing is changed when one is refused."""
    _own_event(ctx, event_id)
    subject, body = str(subject or ""), str(body or "")
    if len(subject) > MOST_SUBJECT or "\n" in subject or "\r" in subject:
        raise ServiceError(USER_ERROR, f"A subject is one line of at most {MOST_SUBJECT} "
                                       "characters.")
    if len(body) > MOST_BODY:
        raise ServiceError(USER_ERROR, f"A body has at most {MOST_BODY} characters.")
    if len(schedules) > MOST_SCHEDULES or len(queries) > MOST_QUERIES:
        raise ServiceError(USER_ERROR, f"An event has at most {MOST_SCHEDULES} schedules and "
                                       f"{MOST_QUERIES} searches.")
    existing = {row["id"]: row for row in ctx.conn.execute(
        "SELECT id, run_day, run_time, run_next FROM whine_schedules WHERE event_id = ?",
        (event_id,)).fetchall()}
    rows = []
    for item in schedules:
        day, at = str(item.get("day") or ""), str(item.get("time") or "")
        if day not in DAYS:
            raise ServiceError(USER_ERROR, f"'{day}' is not a day a schedule runs on.")
        if at not in TIMES:
            raise ServiceError(USER_ERROR, f"'{at}' is not a time a schedule runs at.")
        schedule_id = item.get("id")
        if schedule_id is not None and schedule_id not in existing:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"The event has no schedule "
                                                      f"{schedule_id}.")
        mailto_type = int(item.get("mailto_type") or 0)
        recipient = _recipient(ctx, mailto_type, item.get("mailto"))
        old = existing.get(schedule_id)
        if old is not None and (old["run_day"], old["run_time"]) == (day, at):
            run_next = old["run_next"]
        else:
            run_next = outbox.stamp(next_run(day, at, ctx.now, first=True))
        rows.append((schedule_id, day, at, run_next, mailto_type, recipient))
    names = {row["name"].lower() for row in saved_search.saved_searches(ctx)}
    known_queries = {row[0] for row in ctx.conn.execute(
        "SELECT id FROM whine_queries WHERE event_id = ?", (event_id,))}
    query_rows = []
    for item in queries:
        name = str(item.get("name") or "").strip()
        if name.lower() not in names:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"You have no saved search '{name}'.")
        title = str(item.get("title") or "").strip()
        if len(title) > MOST_SUBJECT:
            raise ServiceError(USER_ERROR, f"A title has at most {MOST_SUBJECT} characters.")
        query_id = item.get("id")
        if query_id is not None and query_id not in known_queries:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"The event has no search {query_id}.")
        sortkey = int(item.get("sortkey") or 0)
        if not -1000000 <= sortkey <= 1000000:
            raise ServiceError(USER_ERROR, "A search's sort key is from -1000000 to 1000000.")
        query_rows.append((query_id, name, title, sortkey,
                           1 if item.get("onemailperbug") else 0))
    ctx.conn.execute("UPDATE whine_events SET subject = ?, body = ?, mailifnobugs = ?"
                     " WHERE id = ?", (subject, body, 1 if mailifnobugs else 0, event_id))
    kept = [row[0] for row in rows if row[0] is not None]
    for schedule_id in set(existing) - set(kept):
        ctx.conn.execute("DELETE FROM whine_schedules WHERE id = ?", (schedule_id,))
    for schedule_id, day, at, run_next, mailto_type, recipient in rows:
        if schedule_id is None:
            ctx.conn.execute(
                "INSERT INTO whine_schedules (event_id, run_day, run_time, run_next, mailto_type,"
                " mailto_id) VALUES (?, ?, ?, ?, ?, ?)",
                (event_id, day, at, run_next, mailto_type, recipient))
        else:
            ctx.conn.execute(
                "UPDATE whine_schedules SET run_day = ?, run_time = ?, run_next = ?,"
                " mailto_type = ?, mailto_id = ? WHERE id = ?",
                (day, at, run_next, mailto_type, recipient, schedule_id))
    kept = [row[0] for row in query_rows if row[0] is not None]
    for query_id in known_queries - set(kept):
        ctx.conn.execute("DELETE FROM whine_queries WHERE id = ?", (query_id,))
    for query_id, name, title, sortkey, onemailperbug in query_rows:
        if query_id is None:
            ctx.conn.execute(
                "INSERT INTO whine_queries (event_id, query_name, title, sortkey, onemailperbug)"
                " VALUES (?, ?, ?, ?, ?)", (event_id, name, title, sortkey, onemailperbug))
        else:
            ctx.conn.execute(
                "UPDATE whine_queries SET query_name = ?, title = ?, sortkey = ?,"
                " onemailperbug = ? WHERE id = ?", (name, title, sortkey, onemailperbug, query_id))
    audit.record(ctx, "User", ctx.caller.id, "whine_event", "", str(event_id))


# Running --------------------------------------------------------------------------------

def run_due(units, now=None):
    """Run every schedule whose time has come (at most MOST_RUNS), each in a
    transaction of its own that claims it and queues its mail. Safe in
    several processes at once: each run is claimed once. Returns how many
    messages were queued."""
    queued = 0
    for _ in range(MOST_RUNS):
        done = units.run(_run_next, write=True, now=now, events=False, catalog=False)
        if done is None:
            break
        queued += done
    return queued


def _run_next(ctx):
    """Claim the schedule due first and queue its mail; returns how many
    messages were queued (0 when another process claimed it first), or
    None when none is due."""
    row = ctx.conn.execute(
        "SELECT s.id, s.event_id, s.run_day, s.run_time, s.run_next, s.mailto_type, s.mailto_id,"
        " e.owner_id, e.subject, e.body, e.mailifnobugs FROM whine_schedules s"
        " JOIN whine_events e ON e.id = s.event_id WHERE s.run_next <= ?"
        " ORDER BY s.run_next, s.id LIMIT 1", (outbox.stamp(ctx.now),)).fetchone()
    if row is None:
        return None
    following = outbox.stamp(next_run(row["run_day"], row["run_time"], ctx.now))
    claimed = ctx.conn.execute("UPDATE whine_schedules SET run_next = ? WHERE id = ?"
                               " AND run_next = ?", (following, row["id"], row["run_next"]))
    if claimed.rowcount != 1:
        return 0
    owner = load_caller(ctx.conn, row["owner_id"])
    if owner is None or not owner.in_group(WHINERS):
        return 0                       # as Bugzilla: the schedule moves on, nothing is sent
    recipients = _recipients(ctx, owner, row["mailto_type"], row["mailto_id"])
    queries = ctx.conn.execute(
        "SELECT q.query_name, q.title, q.onemailperbug, n.query FROM whine_queries q"
        " LEFT JOIN saved_searches n ON n.user_id = ? AND lower(n.name) = lower(q.query_name)"
        " WHERE q.event_id = ? ORDER BY q.sortkey, q.id",
        (row["owner_id"], row["event_id"])).fetchall()
    queued = 0
    base = {"event_id": row["event_id"], "schedule_id": row["id"], "subject": row["subject"],
            "body": row["body"], "run_at": row["run_next"]}
    for recipient_id in recipients:
        caller = load_caller(ctx.conn, recipient_id)
        if caller is None:
            continue
        as_recipient = dataclasses.replace(ctx, caller=caller, memo=None)
        sections = []
        for query in queries:
            if query["query"] is None:
                continue                        # a saved search since forgotten, as Bugzilla
            found, note = _search(as_recipient, query["query"])
            title = query["title"] or query["query_name"]
            if query["onemailperbug"]:
                for bug_id in found[:MOST_BUG_MAILS]:
                    queued += _queue(ctx, recipient_id, dict(
                        base, sections=[{"title": title, "bug_ids": [bug_id], "more": 0,
                                         "note": ""}], bug_id=bug_id))
                continue
            sections.append({"title": title, "bug_ids": found[:MOST_BUGS],
                             "more": max(len(found) - MOST_BUGS, 0), "note": note})
        if any(section["bug_ids"] for section in sections) or (
                row["mailifnobugs"] and (sections or not queries)):
            queued += _queue(ctx, recipient_id, dict(base, sections=sections))
    return queued


def _queue(ctx, recipient_id, data):
    outbox.add_message(ctx.conn, outbox.MAIL, "whine", ctx.now, user_id=recipient_id, data=data)
    return 1


def _recipients(ctx, owner, mailto_type, mailto_id):
    """The account ids a schedule mails, as its owner may now: oneself;
    another account or a group's members only with bz_canusewhineatothers.
    Disabled accounts are left out."""
    if mailto_type == MAILTO_USER:
        if mailto_id != owner.id and not owner.in_group(WHINE_AT_OTHERS):
            return []
        ids = [mailto_id]
    elif owner.in_group(WHINE_AT_OTHERS):
        ids = [r[0] for r in ctx.conn.execute(
            "SELECT DISTINCT user_id FROM user_groups WHERE group_id = ? AND is_bless = 0"
            f" ORDER BY user_id LIMIT {MOST_RECIPIENTS}", (mailto_id,))]
    else:
        return []
    return [user_id for user_id in ids if ctx.conn.execute(
        "SELECT 1 FROM users WHERE id = ? AND disabled_text = ''", (user_id,)).fetchone()]


def _search(ctx, query):
    """(bug ids in the saved search's order, "" or why it could not run) of
    a saved search's query string, as the caller of `ctx` sees the bugs."""
    params = saved_search.query_params(query)
    order = [value for key, value in parse_qsl(query, errors="replace") if key == "order"]
    if order:
        params["order"] = order[-1]
    params["limit"] = MOST_BUGS + 1
    params.pop("offset", None)
    try:
        return search.find(ctx, params), ""
    except ServiceError as error:
        return [], f"This search could not run: {error.message}"


# Rendering (the delivery worker, as the recipient) -------------------------------------

def listed_bugs(ctx, bug_ids):
    """[{"id", "status", "resolution", "summary", "priority", "severity",
    "product", "component", "assignee"}] of those of `bug_ids` the caller
    may see now, in the order given."""
    visible = visibility.visible_bug_ids(ctx, bug_ids)
    rows = {}
    for bug_id in [bug_id for bug_id in bug_ids if bug_id in visible]:
        row = ctx.conn.execute(
            "SELECT b.id, b.status, b.resolution, b.summary, b.priority, b.severity,"
            " p.name AS product, c.name AS component, u.login AS assignee FROM bugs b"
            " JOIN products p ON p.id = b.product_id JOIN components c ON c.id = b.component_id"
            " LEFT JOIN users u ON u.id = b.assigned_to WHERE b.id = ?", (bug_id,)).fetchone()
        if row is not None:
            rows[bug_id] = {"id": row["id"], "status": row["status"],
                            "resolution": row["resolution"], "summary": row["summary"],
                            "priority": row["priority"], "severity": row["severity"],
                            "product": row["product"], "component": row["component"],
                            "assignee": row["assignee"] or ""}
    return [rows[bug_id] for bug_id in bug_ids if bug_id in rows]
