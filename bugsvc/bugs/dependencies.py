"""Dependencies between bugs (depends_on / blocks): naming them and refusing
loops (code 116), on create and on update."""

from ..errors import DEPENDENCY_LOOP, ServiceError
from .lookup import visible_bug_id


def bug_ids(ctx, values):
    """Bug ids for `values` (ids or aliases), duplicates dropped.
    Errors: 100/101/102 as lookup.visible_bug_id."""
    result = []
    for value in values:
        bug_id = visible_bug_id(ctx, value)
        if bug_id not in result:
            result.append(bug_id)
    return result


def check_loops(conn, bug_id, depends_on, blocks):
    """Errors: 116 when a bug depends on itself, or when following the
    dependencies from `depends_on` and the blockers from `blocks` reaches a
    common bug (bug_id None: a bug being created)."""
    if bug_id is not None and (bug_id in depends_on or bug_id in blocks):
        raise ServiceError(DEPENDENCY_LOOP, "You can't make a bug block itself or depend on "
                                            "itself.")
    below = _closure(conn, depends_on, "depends_on", "blocked", bug_id)
    above = _closure(conn, blocks, "blocked", "depends_on", bug_id)
    common = sorted(below & above)
    if common:
        listed = ", ".join(str(number) for number in common)
        raise ServiceError(DEPENDENCY_LOOP, f"Dependency loop detected: the following bug(s) "
                                            f"would both block and depend on this bug: {listed}.")


def _closure(conn, start, target, me, bug_id):
    """Every bug reachable from `start` along the `me` -> `target` column
    pairs of the dependencies table, ignoring edges through `bug_id`."""
    seen = set(start)
    stack = list(start)
    while stack:
        current = stack.pop()
        for (found,) in conn.execute(f"SELECT {target} FROM dependencies WHERE {me} = ?",
                                     (current,)):
            if found != bug_id and found not in seen:
                seen.add(found)
                stack.append(found)
    return seen
