"""When the caller last visited bugs (interface "Bug last visited"). The
behaviour lives in bugsvc/bugs/last_visit.py."""

from ..bugs import last_visit
from ..call.fields import Shape
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login


# include/exclude shape of the answer: a list of last visits.
LAST_VISIT_SHAPES = {"*": Shape()}


def update(ctx, params):
    """Record now as the caller's last visit of each bug.

    params: ids (bug ids or aliases; from the path or the body).
    Returns a bare array of Last-visit records ({id, last_visit_ts}) in the
    order asked.
    Errors: 410 logged out; 50 no ids; 100/101/102 a bug; 32000 the caller
    is not involved in a bug (reporter, assignee, QA contact, CC). Nothing
    is stored unless every bug is accepted.
    """
    require_login(ctx)
    values = Params(params).list("ids")
    if not values:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The parameter 'ids' is required.")
    return last_visit.record_visits(ctx, values)


def get(ctx, params):
    """The caller's last visits, most recent first.

    params: ids (optional bug ids or aliases). Without ids: the 20 most
    recent visits; with ids: the visits of those bugs. Bugs the caller cannot
    see, unknown ids and bugs never visited are left out.
    Returns a bare array of Last-visit records ({id, last_visit_ts}).
    Errors: 410 logged out.
    """
    require_login(ctx)
    p = Params(params)
    return last_visit.visits(ctx, p.list("ids") if p.get("ids") is not None else None)
