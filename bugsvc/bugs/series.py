"""Charts over time (chart.cgi) as Bugzilla keeps them: a series is a saved
search (a bug list's query string) under a category, a subcategory and a
name, counted every `frequency` days into series_data by the collection
(`bugsvc collectstats`, or the delivery worker once a day), as Bugzilla's
collectstats.pl does.

Who counts decides what is counted, as for reports, so a restricted bug
never counts for someone who may not see it: a public series is counted as
an anonymous visitor sees the bugs (whoever looks at it sees only counts
of bugs anyone may see), a private one as its creator sees them (only its
creator sees it). A day's count is stored once (series_data's primary
key), whichever process collects first; the others' are ignored.

Each product gets the default series Bugzilla's products get, public:
under the product and "-All-", one per status, "All Open" and "All
Closed"; under the product and each component, "All Open" and "All Closed".
"""

from datetime import date, timedelta
from urllib.parse import parse_qs, urlencode

from ..errors import (
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    USER_ERROR,
    ServiceError,
    require_login,
)
from ..store import audit
from . import search


ALL = "-All-"
MOST_NAME = 64
MOST_QUERY = 65535
# The most days one chart shows (ten years); a chart of more is refused.
MOST_DAYS = 3660


def visible_sql(ctx, alias="s"):
    """(SQL, args): series `alias` is one the caller may see (public, or its own)."""
    if ctx.caller.id is None:
        return f"{alias}.is_public = 1", []
    return f"({alias}.is_public = 1 OR {alias}.creator_id = ?)", [ctx.caller.id]


def series_list(ctx):
    """[{"id", "category", "subcategory", "name", "frequency", "query",
    "is_public", "creator"}] of the series the caller may see, by category,
    subcategory and name."""
    condition, args = visible_sql(ctx)
    rows = ctx.conn.execute(
        "SELECT s.id, c.name, sc.name, s.name, s.frequency, s.query, s.is_public,"
        " (SELECT u.login FROM users u WHERE u.id = s.creator_id)"
        " FROM series s JOIN series_categories c ON c.id = s.category"
        " JOIN series_categories sc ON sc.id = s.subcategory"
        f" WHERE {condition} ORDER BY lower(c.name), c.name, sc.name <> ?, lower(sc.name),"
        " lower(s.name), s.id", args + [ALL]).fetchall()
    return [{"id": row[0], "category": row[1], "subcategory": row[2], "name": row[3],
             "frequency": row[4], "query": row[5], "is_public": bool(row[6]),
             "creator": row[7]} for row in rows]


def data(ctx, ids, first=None, last=None):
    """{series id: [(YYYY-MM-DD, count)]} of series `ids` between dates
    `first` and `last` (strings, either may be None), oldest first.
    Errors: 51 a series that does not exist or the caller may not see."""
    condition, args = visible_sql(ctx)
    found = {}
    for series_id in ids:
        known = ctx.conn.execute(f"SELECT 1 FROM series s WHERE s.id = ? AND {condition}",
                                 [series_id] + args).fetchone()
        if known is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no series with the id "
                                                      f"{series_id}.")
        sql = "SELECT series_date, series_value FROM series_data WHERE series_id = ?"
        params = [series_id]
        if first:
            sql += " AND series_date >= ?"
            params.append(first)
        if last:
            sql += " AND series_date <= ?"
            params.append(last)
        found[series_id] = [(row[0], row[1]) for row in ctx.conn.execute(
            sql + f" ORDER BY series_date LIMIT {MOST_DAYS + 1}", params)]
        if len(found[series_id]) > MOST_DAYS:
            raise ServiceError(USER_ERROR, f"A chart shows at most {MOST_DAYS} days; choose "
                                           "datefrom and dateto closer together.")
    return found


def _category(ctx, name):
    ctx.conn.execute("INSERT INTO series_categories (name) VALUES (?)"
                     " ON CONFLICT DO NOTHING", (name,))
    return ctx.conn.execute("SELECT id FROM series_categories WHERE name = ?",
                            (name,)).fetchone()[0]


def create(ctx, category, subcategory, name, query, frequency=1, is_public=False):
    """Save a new series of the caller's; returns its id.
    Errors: 410 logged out; 50 a missing name or query; 32000 too long,
    a frequency not from 1 to 365, a public series by someone not in
    admin, the name already used in its category and subcategory; and the
    errors of the search its query makes."""
    require_login(ctx)
    names = [str(value or "").strip() for value in (category, subcategory, name)]
    query = str(query or "").strip().lstrip("?")
    if not all(names) or not query:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "A series needs a category, a subcategory, "
                                                 "a name and a search.")
    if any(len(value) > MOST_NAME for value in names) or len(query) > MOST_QUERY:
        raise ServiceError(USER_ERROR, f"Names of a series have at most {MOST_NAME} "
                                       "characters, its search 65535.")
    if not 1 <= int(frequency) <= 365:
        raise ServiceError(USER_ERROR, "A series is counted every 1 to 365 days.")
    if is_public and not ctx.caller.in_group("admin"):
        raise ServiceError(USER_ERROR, "Only administrators make public series.")
    search.visible_where(ctx, criteria(query))     # a search that cannot run is refused now
    category_id, subcategory_id = _category(ctx, names[0]), _category(ctx, names[1])
    if ctx.conn.execute("SELECT 1 FROM series WHERE category = ? AND subcategory = ?"
                        " AND name = ?", (category_id, subcategory_id, names[2])).fetchone():
        raise ServiceError(USER_ERROR, f"There is already a series '{names[2]}' in "
                                       f"{names[0]} / {names[1]}.")
    series_id = ctx.conn.execute(
        "INSERT INTO series (creator_id, category, subcategory, name, frequency, query,"
        " is_public) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (ctx.caller.id, category_id, subcategory_id, names[2], int(frequency), query,
         1 if is_public else 0)).lastrowid
    audit.record(ctx, "User", ctx.caller.id, "series", "", " / ".join(names))
    return series_id


def delete(ctx, series_id):
    """Delete a series with its counts. Errors: 410 logged out; 51 none
    the caller may see; 32000 someone else's series (administrators may
    delete any)."""
    require_login(ctx)
    condition, args = visible_sql(ctx)
    row = ctx.conn.execute(
        "SELECT s.creator_id, c.name, sc.name, s.name FROM series s"
        " JOIN series_categories c ON c.id = s.category"
        " JOIN series_categories sc ON sc.id = s.subcategory"
        f" WHERE s.id = ? AND {condition}", [series_id] + args).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no series with the id {series_id}.")
    if row[0] != ctx.caller.id and not ctx.caller.in_group("admin"):
        raise ServiceError(USER_ERROR, "Only its creator or an administrator deletes a series.")
    ctx.conn.execute("DELETE FROM series_data WHERE series_id = ?", (series_id,))
    ctx.conn.execute("DELETE FROM series WHERE id = ?", (series_id,))
    audit.record(ctx, "User", row[0], "series", " / ".join(row[1:]), "")


def criteria(query):
    """The search parameters of a series' query string."""
    parsed = parse_qs(query, keep_blank_values=False)
    return {key: values if len(values) > 1 else values[0] for key, values in parsed.items()
            if key not in ("columnlist", "order", "limit", "offset", "ctype", "format")}


# Collecting -----------------------------------------------------------------------------

def add_default_series(ctx):
    """Add the default series of every product and component that lacks
    them (see the module's docstring). Returns how many were added."""
    statuses = [row[0] for row in ctx.conn.execute(
        "SELECT fv.value FROM field_values fv JOIN fields f ON f.id = fv.field_id"
        " WHERE f.name = 'bug_status' ORDER BY fv.sort_key, fv.value")]
    added = 0
    for product_id, product in ctx.conn.execute(
            "SELECT id, name FROM products ORDER BY id").fetchall():
        wanted = [(ALL, status, {"product": product, "bug_status": status})
                  for status in statuses]
        wanted += [(ALL, "All Open", {"product": product, "bug_status": "__open__"}),
                   (ALL, "All Closed", {"product": product, "bug_status": "__closed__"})]
        for (component,) in ctx.conn.execute(
                "SELECT name FROM components WHERE product_id = ? ORDER BY name",
                (product_id,)).fetchall():
            for name, status in (("All Open", "__open__"), ("All Closed", "__closed__")):
                wanted.append((component, name, {"product": product, "component": component,
                                                 "bug_status": status}))
        category = _category(ctx, product)
        for subcategory, name, query in wanted:
            added += ctx.conn.execute(
                "INSERT INTO series (creator_id, category, subcategory, name, frequency,"
                " query, is_public) VALUES (NULL, ?, ?, ?, 1, ?, 1) ON CONFLICT DO NOTHING",
                (category, _category(ctx, subcategory), name, urlencode(query))).rowcount
    return added


def due(ctx, day):
    """[(series id, creator id or None for public, query)] of the series to
    count on `day` (a date) that have no count for it yet."""
    number = (day - date(1970, 1, 1)).days
    rows = ctx.conn.execute(
        "SELECT s.id, s.creator_id, s.is_public, s.query, s.frequency FROM series s"
        " WHERE NOT EXISTS (SELECT 1 FROM series_data d WHERE d.series_id = s.id"
        " AND d.series_date = ?) ORDER BY s.id", (day.isoformat(),)).fetchall()
    return [(row[0], None if row[2] else row[1], row[3]) for row in rows
            if number % max(int(row[4]), 1) == 0]


def count(ctx, query):
    """The number of bugs series query `query` finds for the caller of
    `ctx`; None when its search cannot run any more (a field or value
    gone): that day has no count."""
    try:
        return search.find(ctx, criteria(query), count_only=True)
    except ServiceError:
        return None


def store(ctx, series_id, day, value):
    """Store a day's count, unless one is stored already (True: stored)."""
    return ctx.conn.execute(
        "INSERT INTO series_data (series_id, series_date, series_value) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING", (series_id, day.isoformat(), value)).rowcount == 1


def collect(units, today):
    """Count every series due `today` (a date) and store the counts, each
    counted as its viewers see the bugs (public: anonymous; private: its
    creator). Returns how many counts were stored. Safe to run in several
    processes at once: each day's count is stored once, and a write that
    meets another process's (PostgreSQL's serialization failures) is run
    again."""
    units.run(add_default_series, write=True, events=False, catalog=False)
    with units.context() as ctx:
        pending = due(ctx, today)
    stored = 0
    by_counter = {}
    for series_id, counter, query in pending:
        by_counter.setdefault(counter, []).append((series_id, query))
    for counter, wanted in by_counter.items():
        with units.context(counter) as ctx:
            counts = [(series_id, count(ctx, query)) for series_id, query in wanted]
        stored += units.run(lambda ctx, counts=counts: sum(
            store(ctx, series_id, today, value) for series_id, value in counts
            if value is not None), write=True, events=False, catalog=False)
    return stored


def days_between(first, last):
    """The dates from `first` to `last` (date objects), both included."""
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]
