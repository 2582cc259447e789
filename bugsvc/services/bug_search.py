"""Bug search: GET /rest/bug."""

from ..bugs import answer_cache, search as bug_search
from ..bugs.view import bug_objects
from ..call.params import Params


def search(ctx, params):
    """Bugs matching the criteria, as Bug objects (no update_token).

    params: any simple field parameter (API or internal names, with
    `<field>_type` operators), f/o/v/n/j custom search with OP/CP and j_top,
    legacy boolean charts, email*, chfield*, deadlinefrom/to, quicksearch,
    limit (default and maximum: max_search_results; 0 = the maximum),
    offset (needs limit), order ("column [ASC|DESC], ..."; ties by bug id),
    count_only (answer {"bug_count": n} instead).
    Parameters that name no search field are ignored.
    Returns {"bugs": [Bug, ...]}. Only bugs the caller can see are found,
    and nothing hidden from the caller decides which (no regular expression
    of the caller's is evaluated on it).
    Errors: 50 offset without limit; 52 non-numeric limit/offset; 56 bad
    date; 108 unknown field; 32000 bad operator, regular expression or
    quicksearch, or regular expressions that take too long to match; 1000
    no criterion while search_allow_no_criteria is off, or an empty
    quicksearch.
    """
    criteria = dict(params or {})
    if Params(criteria).bool("count_only"):
        return {"bug_count": bug_search.find(ctx, criteria, count_only=True)}
    # The same search by the same caller at the same generations: the
    # answer kept by the process (bugs/answer_cache.py).
    return answer_cache.answer(ctx, criteria, lambda: {
        "bugs": bug_objects(ctx, bug_search.find(ctx, criteria))})


def search_counted(ctx, params):
    """search's answer with "bug_count", how many bugs the search selects
    past its limit and offset (a bug list's page and its number, from one
    statement where the search reads every match anyway). params and
    errors: as search's; count_only is ignored. Returns {"bugs": [Bug,
    ...], "bug_count": n}."""
    criteria = {key: value for key, value in (params or {}).items() if key != "count_only"}
    ids, total = bug_search.find_counted(ctx, criteria)
    return {"bugs": bug_objects(ctx, ids), "bug_count": total}
