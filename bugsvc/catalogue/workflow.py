"""The status workflow as an administrator edits it (Bugzilla's
editworkflow.cgi): which status a bug may move to from each status and
from its creation, and which of those moves need a comment. bugs/status.py
reads it and enforces it on every change, whatever the way in.

Bugzilla's rules: a new bug starts only in an open status; a status does not
move to itself; every status may move to the status of
duplicate_or_move_bug_status (marking a duplicate needs it), so those moves
are always kept.
"""

from ..call.params import Params
from ..errors import (
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    USER_ERROR,
    ServiceError,
)
from ..store import audit


# How the audit log names the pseudo-status of a new bug.
CREATION = "(bug creation)"


def _statuses(conn):
    return [dict(row) for row in conn.execute(
        "SELECT v.id, v.value, v.is_open, v.is_active, v.sort_key FROM field_values v"
        " JOIN fields f ON f.id = v.field_id WHERE f.name = 'bug_status'"
        " ORDER BY v.sort_key, v.value, v.id")]


def _current(conn):
    """{(old id or None, new id): require_comment}."""
    return {(row[0], row[1]): bool(row[2]) for row in conn.execute(
        "SELECT old_status_id, new_status_id, require_comment FROM status_workflow")}


def get(ctx):
    """{"statuses": [{name, is_open, is_active, sort_key}], "transitions":
    [{from (None: a new bug), to, comment_required}]}, in list order,
    inactive statuses and their moves included."""
    statuses = _statuses(ctx.conn)
    names = {status["id"]: status["value"] for status in statuses}
    order = {status["id"]: position for position, status in enumerate(statuses)}
    current = _current(ctx.conn)
    moves = sorted((key for key in current
                    if key[1] in names and (key[0] is None or key[0] in names)),
                   key=lambda key: (-1 if key[0] is None else order[key[0]], order[key[1]]))
    return {"statuses": [{"name": s["value"], "is_open": bool(s["is_open"]),
                          "is_active": bool(s["is_active"]), "sort_key": s["sort_key"]}
                         for s in statuses],
            "transitions": [{"from": None if old is None else names[old], "to": names[new],
                             "comment_required": current[(old, new)]} for old, new in moves]}


def update(ctx, params):
    """Replace the workflow with `params["transitions"]` (each {from: a
    status or null/"" for a new bug, to, comment_required}); returns
    {"transitions": {from name: {"can_change_to" and/or
    "comment_required_to": {"added", "removed"}}}} of the statuses whose
    moves changed (CREATION names a new bug's). Errors: 50 no transitions; 53 a malformed one;
    51 an unknown status; 32000 a move to itself or a new bug in a closed
    status."""
    p = Params(params)
    unknown = sorted(set(params) - {"transitions"})
    if unknown:
        raise ServiceError(PARAM_INVALID, f"The parameter '{unknown[0]}' is not valid here.")
    if p.get("transitions") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must give the transitions.")
    if not isinstance(p.get("transitions"), list):
        raise ServiceError(PARAM_INVALID, "transitions must be an array.")
    statuses = _statuses(ctx.conn)
    by_lower = {status["value"].lower(): status for status in statuses}
    wanted = {}
    for item in p.get("transitions"):
        old, new, required = _transition(item, by_lower)
        wanted[(old["id"] if old else None, new["id"])] = required
    closing = by_lower.get(ctx.param("duplicate_or_move_bug_status").lower())
    if closing is not None:
        for status in statuses:
            if status["id"] != closing["id"]:
                wanted.setdefault((status["id"], closing["id"]), False)
    return {"transitions": _apply(ctx, statuses, _current(ctx.conn), wanted)}


def _transition(item, by_lower):
    """(old status or None, new status, comment required) of one move."""
    if not isinstance(item, dict) or set(item) - {"from", "to", "comment_required"}:
        raise ServiceError(PARAM_INVALID, "Each transition is {\"from\", \"to\", "
                                          "\"comment_required\"}.")
    old = _status(item.get("from"), by_lower, allow_none=True)
    new = _status(item.get("to"), by_lower)
    if old is not None and old["id"] == new["id"]:
        raise ServiceError(USER_ERROR, f"A status cannot move to itself ({new['value']}).")
    if old is None and not new["is_open"]:
        raise ServiceError(USER_ERROR, f"A new bug cannot start in the closed status "
                                       f"{new['value']}.")
    required = item.get("comment_required", False)
    if not isinstance(required, (bool, int)):
        raise ServiceError(PARAM_INVALID, "comment_required must be true or false.")
    return old, new, bool(required)


def _status(name, by_lower, allow_none=False):
    if name is None or name == "":
        if allow_none:
            return None
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Each transition needs the status it goes to.")
    if not isinstance(name, str):
        raise ServiceError(PARAM_INVALID, "A status is named by a string.")
    status = by_lower.get(name.strip().lower())
    if status is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no status called '{name}'.")
    return status


def _apply(ctx, statuses, current, wanted):
    """Write the difference; audit each changed status's moves (class
    Status: field can_change_to, and comment_required_to for the moves that
    need a comment). Returns the changes by the name of the status moved
    from."""
    for key in current.keys() - wanted.keys():
        old, new = key
        if old is None:
            ctx.conn.execute("DELETE FROM status_workflow WHERE old_status_id IS NULL"
                             " AND new_status_id = ?", (new,))
        else:
            ctx.conn.execute("DELETE FROM status_workflow WHERE old_status_id = ?"
                             " AND new_status_id = ?", key)
    for key, required in wanted.items():
        if key not in current:
            ctx.conn.execute("INSERT INTO status_workflow (old_status_id, new_status_id,"
                             " require_comment) VALUES (?, ?, ?)", key + (int(required),))
        elif current[key] != required:
            old, new = key
            where = "old_status_id IS NULL" if old is None else "old_status_id = ?"
            ctx.conn.execute(f"UPDATE status_workflow SET require_comment = ? WHERE {where}"
                             " AND new_status_id = ?",
                             (int(required),) + ((new,) if old is None else key))
    names = {status["id"]: status["value"] for status in statuses}
    changes = {}
    for source in [None] + [status["id"] for status in statuses]:
        label = CREATION if source is None else names[source]
        for field, before, after in (
                ("can_change_to", _targets(current, source, names),
                 _targets(wanted, source, names)),
                ("comment_required_to", _targets(current, source, names, True),
                 _targets(wanted, source, names, True))):
            removed = [name for name in before if name not in after]
            added = [name for name in after if name not in before]
            if removed or added:
                changes.setdefault(label, {})[field] = {"removed": ", ".join(removed),
                                                        "added": ", ".join(added)}
                audit.record(ctx, "Status", source or 0, field, ", ".join(removed),
                             ", ".join(added), name=label)
    return changes


def _targets(moves, source, names, commented=False):
    """The names moved to from `source`, in list order (only those that need
    a comment when `commented`)."""
    return [names[new] for new in names if (source, new) in moves
            and (not commented or moves[(source, new)])]
