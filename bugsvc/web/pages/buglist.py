"""The bug list (buglist.cgi) and the advanced search form (query.cgi).

A bug list is Bug.search run with the query string as it is (Bugzilla's
parameters: field=value, email*, chfield*, boolean charts, f1/o1/v1,
quicksearch), plus what only says how to show it: `columnlist`, `order`,
`limit` and `offset`, and `ctype=csv` for a download. The query stays in the
URL, so a list can be bookmarked, mailed and saved under a name.
"""

import csv
import io
from urllib.parse import urlencode

from ... import errors
from ...bugs.saved_search import query_params
from ...catalogue import bug_fields
from ...errors import ServiceError
from . import feeds
from .base import Page, require_user, responder
from .bulk import bulk_form
from .site import url


_COLUMN_FIELDS = sorted((field for field in bug_fields.STANDARD if field.list_column),
                        key=lambda field: field.list_column.order)
# Bug-list columns, in the order the column chooser offers them: the
# reference's column names -> the bug object's field.
COLUMNS = {field.list_name: field.bug_key for field in _COLUMN_FIELDS}
# The bug object's names are understood in columnlist too.
_BY_FIELD = {field: column for column, field in COLUMNS.items()
             if not field.endswith("_detail")}
# Columns the column chooser offers only while a parameter is on (a list
# whose address names one still shows it, as the reference's).
COLUMN_PARAMETERS = {field.list_name: field.parameter for field in _COLUMN_FIELDS
                     if field.parameter and field.pages_follow_parameter}
DEFAULT_COLUMNS = ("product", "component", "assigned_to", "bug_status", "resolution",
                   "short_desc", "changeddate")
DEFAULT_ORDER = "bug_status,priority,assigned_to,bug_id"
# The most bugs one page of a list shows, whatever its address or the
# parameter default_search_limit (which sets how many it shows when the
# address names no limit) ask.
MOST_PER_PAGE = 10000
# Query-string keys that show a list rather than choose its bugs, and keys
# that are credentials: never passed to the search.
_DISPLAY_KEYS = ("columnlist", "order", "limit", "offset", "ctype", "format", "cmdtype", "title",
                 "tweak",
                 "namedcmd", "list_id", "query_format", "query_based_on", "known_name",
                 "remaction", "newqueryname", "sharer_id", "csrf_token")
_CREDENTIAL_ENDINGS = ("api_key", "password", "token", "login", "restrictlogin")
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def search_params(query):
    """The Bug.search parameters of a bug list's query string."""
    return {key: value for key, value in query.items()
            if key not in _DISPLAY_KEYS and not key.lower().endswith(_CREDENTIAL_ENDINGS)}


def columnlist_text(value):
    """One comma-separated `columnlist` of the query's: the column chooser
    sends the key once per ticked box, a bookmark may carry one
    comma-separated value; both (and a mix) are the same list."""
    values = value if isinstance(value, list) else [value or ""]
    return ",".join(item for item in values if item)


def chosen_columns(value, custom):
    """The reference's names of the columns a `columnlist` asks for (a
    text or the list of a repeated key; known ones only, in order, each
    once); the default list when none is known."""
    names = []
    for item in columnlist_text(value).replace(" ", ",").split(","):
        name = item.strip()
        name = _BY_FIELD.get(name, name)
        if (name in COLUMNS or name in custom) and name != "bug_id" and name not in names:
            names.append(name)
    return names or list(DEFAULT_COLUMNS)


def field_of(column):
    return COLUMNS.get(column, column)


def cell_text(bug, column):
    """The text of one cell (for the page and the CSV file)."""
    value = bug.get(field_of(column))
    if column in ("assigned_to_realname", "reporter_realname"):
        return (value or {}).get("real_name") or (value or {}).get("name") or ""
    if column == "flagtypes.name":
        return ", ".join(f"{f['name']}{f['status']}" + (f" ({f['requestee']})"
                                                        if f.get("requestee") else "")
                         for f in value or [])
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def _single(value):
    return value[-1] if isinstance(value, list) else value


def _number(value, default, least=0, most=None):
    try:
        number = int(_single(value))
    except (TypeError, ValueError):
        return default
    number = max(number, least)
    return min(number, most) if most is not None else number


class BugList(Page):
    """GET /buglist.cgi: the bugs a search finds, with the chosen columns,
    sort, paging and count, or as CSV; POST: save the search under a name."""

    @responder
    def on_get(self, call):
        query = call.query
        if _single(query.get("cmdtype")) == "runnamed" and query.get("namedcmd"):
            return self._run_named(call, _single(query["namedcmd"]))
        quick = _single(query.get("quicksearch"))
        if isinstance(quick, str) and quick.strip().lstrip("#").isdigit() and len(query) == 1:
            call.redirect(url("/show_bug.cgi", id=quick.strip().lstrip("#")))
            return
        params = search_params(query)
        custom = {}
        columns = chosen_columns(query.get("columnlist"), custom)
        order = _single(query.get("order")) or DEFAULT_ORDER
        ctype = _single(query.get("ctype"))
        csv_wanted = ctype == "csv"
        # The reference answers ctype=rss with its Atom feed.
        feed_wanted = ctype in ("atom", "rss")
        limit = _number(query.get("limit"), _number(call.setting("default_search_limit"), 0),
                        least=0, most=MOST_PER_PAGE) or MOST_PER_PAGE
        offset = _number(query.get("offset"), 0)
        tweak = bool(_single(query.get("tweak"))) and not csv_wanted and not feed_wanted
        if tweak:
            require_user(call)
        wanted = ["id", "is_open"] + [field_of(column) for column in columns]
        if tweak:
            wanted += ["product", "summary"]
        if feed_wanted:
            wanted += feeds.FEED_FIELDS
        search = dict(params, order=order, limit=limit, offset=offset,
                      include_fields=",".join(dict.fromkeys(wanted)))
        found = call.read_one("Bug.search_counted", search)
        bugs, total = found["bugs"], found["bug_count"]
        if csv_wanted:
            return self._csv(call, bugs, columns)
        if feed_wanted:
            title = _single(query.get("title")) or "Bugzilla Bugs"
            return feeds.atom(call, bugs, urlencode(_listed(query), doseq=True), title)
        base = {key: value for key, value in query.items()
                if key not in ("offset", "order", "csrf_token")}
        bulk = bulk_form(call, bugs) if tweak and bugs else None
        call.render(
            "buglist.html", title="Bug list", bugs=bugs, columns=columns, total=total,
            offset=offset, limit=limit, order=order,
            quicksearch_text=quick if isinstance(quick, str) else "",
            sort_url=lambda column: _sort_url(base, order, column),
            page_url=lambda start: url("/buglist.cgi",
                                       **dict(base, order=order, offset=start)),
            csv_url=url("/buglist.cgi", **dict(query, ctype="csv")),
            edit_url=url("/query.cgi", **search_params(query)),
            report_url=url("/report.cgi", **dict(search_params(query), action="menu")),
            series_url=url("/chart.cgi", **dict(search_params(query), action="convert_search")),
            query_string=urlencode(_listed(query), doseq=True),
            hidden=_hidden(query, ("columnlist",)),
            all_columns=[c for c in COLUMNS if c != "bug_id" and (
                c not in COLUMN_PARAMETERS or call.setting_is_on(COLUMN_PARAMETERS[c]))],
            cell=cell_text, bulk=bulk,
            tweak_url=url("/buglist.cgi", **dict(_listed(query), tweak=1)))

    def _run_named(self, call, name):
        user = require_user(call)
        for saved in user["saved_searches"]:
            if saved["name"].lower() == name.lower():
                call.redirect("/buglist.cgi?" + saved["query"])
                return
        raise ServiceError(errors.OBJECT_DOES_NOT_EXIST, f"You have no saved search '{name}'.")

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        action = call.field("action")
        if action == "forget":
            call.write("SavedSearch.delete", {"names": [call.field("name")]})
            call.redirect("/userprefs.cgi?tab=saved-searches", notice="search_forgotten")
            return
        query = call.field("query")
        call.write("SavedSearch.create", {"name": call.field("newqueryname"), "query": query})
        call.redirect("/buglist.cgi?" + query, notice="search_saved")

    @staticmethod
    def _csv(call, bugs, columns):
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["bug_id"] + columns)
        for bug in bugs:
            writer.writerow([bug["id"]] + [_csv_safe(cell_text(bug, c)) for c in columns])
        call.resp.content_type = "text/csv; charset=UTF-8"
        call.resp.set_header("Content-Disposition", 'attachment; filename="bugs.csv"')
        call.resp.set_header("X-Content-Type-Options", "nosniff")
        call.resp.set_header("Cache-Control", "no-store" if call.token else "no-cache")
        call.resp.data = out.getvalue().encode("utf-8")


def _csv_safe(text):
    """A cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + text if text.startswith(CSV_FORMULA_STARTS) else text


def _listed(query):
    """The query string worth saving: what the list shows, not where it starts."""
    return {key: value for key, value in query.items()
            if key not in ("offset", "ctype", "csrf_token", "cmdtype", "namedcmd")
            and not key.lower().endswith(_CREDENTIAL_ENDINGS)}


def _hidden(query, leave_out):
    """(name, value) pairs that carry a query through a form."""
    pairs = []
    for key, value in _listed(query).items():
        if key in leave_out:
            continue
        for item in value if isinstance(value, list) else [value]:
            pairs.append((key, item))
    return pairs


def _sort_url(base, order, column):
    """The list sorted by `column` first (descending when it already is
    ascending first), keeping the other sort columns after it."""
    current = [part.strip() for part in order.split(",") if part.strip()]
    first = current[0].split() if current else []
    if first and first[0] == column and (len(first) == 1 or first[1].upper() == "ASC"):
        new_first = f"{column} DESC"
    else:
        new_first = column
    rest = [part for part in current if part.split()[0] != column]
    return url("/buglist.cgi", **dict(base, order=",".join([new_first] + rest[:3])))


class Query(Page):
    """GET /query.cgi: the advanced search form, filled in from its query
    string (Edit search on a bug list comes back here with the list's)."""

    @responder
    def on_get(self, call):
        selectable, field_list = call.read(
            ("Product.get", {"type": "selectable",
                             "include_fields": "name,components.name,versions.name,"
                                               "milestones.name"}),
            ("Bug.fields", {"include_fields": "name,display_name,type,is_custom,values.name,"
                                              "values.is_active"}))
        products = selectable["products"]
        fields = {field["name"]: field for field in field_list["fields"]}

        def values_of(name):
            return [value["name"] for value in fields.get(name, {}).get("values", [])
                    if value.get("is_active", True) and value["name"] != ""]

        def union(kind):
            names = []
            for product in products:
                for item in product.get(kind, []):
                    if item["name"] not in names:
                        names.append(item["name"])
            return sorted(names, key=str.lower)

        custom = [field for field in field_list["fields"] if field["is_custom"]]
        chosen = {key: value if isinstance(value, list) else [value]
                  for key, value in search_params(call.query).items()}
        call.render("query.html", title="Search", products=[p["name"] for p in products],
                    components=union("components"), versions=union("versions"),
                    milestones=union("milestones"), values_of=values_of, custom=custom,
                    chosen=chosen, columns=columnlist_text(call.query.get("columnlist")),
                    order=_single(call.query.get("order")) or "")


__all__ = ["BugList", "Query", "query_params"]
