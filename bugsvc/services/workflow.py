"""The status workflow (Bugzilla's editworkflow.cgi; a bugsvc addition over
RPC, which the reference has only as a page). The behaviour lives in
bugsvc/catalogue/workflow.py; bugs/status.py enforces it on every change."""

from ..catalogue import workflow
from ..errors import require_group


def get(ctx, params):
    """The statuses and every allowed move between them (admin).

    params: none.
    Returns {"statuses": [{name, is_open, is_active, sort_key}],
    "transitions": [{from (null: a new bug), to, comment_required}]}.
    Errors: 410 logged out; 304 not in admin.
    """
    require_group(ctx, "admin", "see the status workflow")
    return workflow.get(ctx)


def update(ctx, params):
    """Replace the status workflow (admin).

    params: transitions (required): every allowed move, each {from (a
    status; null or "" for a new bug), to, comment_required (default
    false)}. A new bug starts only in an open status; every status may
    always move to duplicate_or_move_bug_status's status (those moves are
    kept whether given or not).
    Returns {"transitions": {status moved from ("(bug creation)" for a new
    bug): {"can_change_to" and/or "comment_required_to": {"added",
    "removed"}}}}.
    Errors: 410, 304 as get; 50 no transitions or a move without its
    status; 51 an unknown status; 53 an unknown parameter or a malformed
    move; 32000 a status moving to itself, a new bug in a closed status.
    """
    require_group(ctx, "admin", "edit the status workflow")
    return workflow.update(ctx, params)
