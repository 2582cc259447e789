"""Saved searches (a bugsvc addition over REST; the reference keeps them,
as "named queries", in its web pages): a name and the query string of a
bug list, per account. User get shows one's own too (`saved_searches`).
The behaviour lives in bugsvc/bugs/saved_search.py.
"""

from ..bugs import saved_search
from ..call.fields import Shape
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login


SAVED_SEARCH_SHAPES = {"saved_searches": Shape()}


def get(ctx, params):
    """The caller's saved searches, by name.

    params: none.
    Returns {"saved_searches": [{"id", "name", "query"}]}: query is the
    query string of the bug list (without "?").
    Errors: 410 logged out.
    """
    require_login(ctx)
    return {"saved_searches": saved_search.saved_searches(ctx)}


def create(ctx, params):
    """Save a search under a name; one of the caller's with the same name
    (in any case) is replaced, as the reference does once its page asked.

    params: name (at most 64 characters), query (the bug list's query
    string, with or without a leading "?"; its columnlist and order are
    kept with it).
    Returns {"id"}.
    Errors: 410 logged out; 50 no name or no query; 32000 a name over 64
    characters or a query over 65535; 108 a field the search does not know;
    32000 a bad operator or regular expression; 1000 no search terms while
    search_allow_no_criteria is off.
    """
    require_login(ctx)
    p = Params(params)
    return {"id": saved_search.save(ctx, p.str("name"), p.str("query"))}


def delete(ctx, params):
    """Forget saved searches of the caller.

    params: ids and/or names (the path gives the first).
    Returns {"ids": [ids forgotten]}.
    Errors: 410 logged out; 50 neither ids nor names; 51 no saved search
    of the caller's has that id or name (nothing is forgotten then).
    """
    require_login(ctx)
    p = Params(params)
    ids, names = p.int_list("ids"), p.str_list("names")
    if not ids and not names:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the saved searches to forget.")
    return {"ids": saved_search.forget(ctx, ids, names)}
