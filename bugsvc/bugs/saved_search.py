"""Saved searches (a bugsvc addition; the reference keeps them, as "named
queries", in its web pages): a name and the query string of a bug list,
per account, saved, read and forgotten (the calls are
services/saved_search.py's).
"""

from urllib.parse import parse_qsl

from ..errors import (
    BUGLIST_PARAMETERS_REQUIRED,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    USER_ERROR,
    ServiceError,
)
from ..store import audit
from . import search
from .search_sql import Compiler


NAME_MAX_LENGTH = 64
QUERY_MAX_LENGTH = 65535
# Keys of a bug list's query string that say how to show it, not what to find.
_DISPLAY_KEYS = ("columnlist", "order", "limit", "offset", "list_id", "query_format", "ctype",
                 "format", "query_based_on", "known_name", "remaction", "cmdtype", "namedcmd",
                 "newqueryname", "sharer_id", "title", "tweak")


def _object(row):
    return {"id": row["id"], "name": row["name"], "query": row["query"]}


def saved_searches(ctx):
    """The caller's saved searches, by name: [{"id", "name", "query"}]."""
    rows = ctx.conn.execute("SELECT id, name, query FROM saved_searches WHERE user_id = ?"
                            " ORDER BY lower(name), id", (ctx.caller.id,))
    return [_object(row) for row in rows]


def query_params(query):
    """The search parameters of a bug list's query string (a repeated key
    gives a list), without the keys that only say how to show the list."""
    params = {}
    for key, value in parse_qsl(query or "", keep_blank_values=True, errors="replace"):
        if key in _DISPLAY_KEYS:
            continue
        if key in params:
            existing = params[key]
            params[key] = (existing if isinstance(existing, list) else [existing]) + [value]
        else:
            params[key] = value
    return params


def save(ctx, name, query):
    """Save the caller's search `query` (a bug list's query string, with or
    without a leading "?") under `name`; one of the caller's with the same
    name (in any case) is replaced. Returns its id.
    Errors: 50 no name or no query; 32000 a name over 64 characters or a
    query over 65535; 108 a field the search does not know; 32000 a bad
    operator or regular expression; 1000 no search terms while
    search_allow_no_criteria is off.
    """
    name = (name or "").strip()
    query = (query or "").strip().lstrip("?")
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must give the saved search a name.")
    if len(name) > NAME_MAX_LENGTH or any(not c.isprintable() for c in name):
        raise ServiceError(USER_ERROR, f"The name of a saved search must be printable and at "
                                       f"most {NAME_MAX_LENGTH} characters long.")
    if not query:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must give the query of the saved search.")
    if len(query) > QUERY_MAX_LENGTH:
        raise ServiceError(USER_ERROR, f"The query of a saved search must be at most "
                                       f"{QUERY_MAX_LENGTH} characters long.")
    compiler = Compiler(ctx)
    parsed = search.parse(ctx, compiler, query_params(query))
    _, _, criteria = compiler.where(parsed.criteria)
    if not criteria and not ctx.param_is_on("search_allow_no_criteria"):
        raise ServiceError(BUGLIST_PARAMETERS_REQUIRED, "You may not search, or create saved "
                                                        "searches, without any search terms.")
    row = ctx.conn.execute("SELECT id, query FROM saved_searches WHERE user_id = ?"
                           " AND lower(name) = lower(?)", (ctx.caller.id, name)).fetchone()
    if row is not None:
        ctx.conn.execute("UPDATE saved_searches SET name = ?, query = ? WHERE id = ?",
                         (name, query, row["id"]))
        if row["query"] != query:
            audit.record(ctx, "User", ctx.caller.id, "saved_search", row["query"], query)
        return row["id"]
    search_id = ctx.conn.execute("INSERT INTO saved_searches (user_id, name, query)"
                                 " VALUES (?, ?, ?) RETURNING id",
                                 (ctx.caller.id, name, query)).fetchone()[0]
    audit.record(ctx, "User", ctx.caller.id, "saved_search", "", name)
    return search_id


def forget(ctx, ids, names):
    """Forget the caller's saved searches of `ids` and `names`. Returns the
    ids forgotten. Errors: 51 no saved search of the caller's has that id
    or name (nothing is forgotten then)."""
    wanted = [(value, "id = ?") for value in ids]
    wanted += [(value, "lower(name) = lower(?)") for value in names]
    rows = []
    for value, condition in wanted:
        row = ctx.conn.execute(f"SELECT id, name FROM saved_searches WHERE user_id = ?"
                               f" AND {condition}", (ctx.caller.id, value)).fetchone()
        if row is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"You have no saved search '{value}'.")
        if row["id"] not in [r["id"] for r in rows]:
            rows.append(row)
    for row in rows:
        ctx.conn.execute("DELETE FROM saved_searches WHERE id = ?", (row["id"],))
        audit.record(ctx, "User", ctx.caller.id, "saved_search", row["name"], "")
    return [row["id"] for row in rows]
