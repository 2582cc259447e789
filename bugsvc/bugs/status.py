"""Bug status workflow, resolutions and duplicates: the status of a new bug,
the transitions allowed on update, and the reference's rules for resolutions
and duplicates."""

from ..errors import (
    DUPE_ID_REQUIRED,
    DUPE_LOOP,
    ILLEGAL_TRANSITION,
    MISSING_RESOLUTION,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    RESOLUTION_NOT_ALLOWED,
    USER_ERROR,
    ServiceError,
)
from . import values
from .lookup import numeric_bug_id, visible_bug_id


UNCONFIRMED = "UNCONFIRMED"
DUPLICATE = "DUPLICATE"


def workflow(ctx):
    """The installation's Workflow, shared by the calls of a catalog generation
    (bugsvc/cache.py): never change it."""
    return ctx.cached("workflow", Workflow)


class Workflow:
    """The statuses and transitions of the installation."""

    def __init__(self, conn):
        rows = conn.execute(
            "SELECT v.id, v.value, v.is_open, v.is_active, v.sort_key FROM field_values v"
            " JOIN fields f ON f.id = v.field_id WHERE f.name = 'bug_status'"
            " ORDER BY v.sort_key, v.value").fetchall()
        self.statuses = [dict(row) for row in rows]
        self.by_name = {row["value"]: dict(row) for row in rows}
        self.by_lower = {row["value"].lower(): dict(row) for row in rows}
        by_id = {row["id"]: row["value"] for row in rows}
        self.transitions = {}
        self.comment_required = set()
        for old_id, new_id, required in conn.execute(
                "SELECT old_status_id, new_status_id, require_comment FROM status_workflow"):
            old, new = by_id.get(old_id), by_id.get(new_id)
            if new is None:
                continue
            self.transitions.setdefault(old, []).append(new)
            if required:
                self.comment_required.add((old, new))
        order = {row["value"]: position for position, row in enumerate(rows)}
        for targets in self.transitions.values():
            targets.sort(key=lambda name: order[name])

    def is_open(self, name):
        status = self.by_name.get(name)
        return bool(status["is_open"]) if status else True

    def find(self, name):
        """The canonical name of status `name` (any case). Errors: 50 empty, 51 unknown."""
        text = values.text(name, "status").strip()
        if not text:
            raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify a status.")
        status = self.by_lower.get(text.lower())
        if status is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no status called '{text}'."
                               + values.legal_values(None, "bug_status", "status", names=[
                                   row["value"] for row in self.statuses if row["is_active"]]))
        return status["value"]

    def targets(self, old, allows_unconfirmed):
        """Active statuses reachable from `old` (None: a new bug)."""
        names = [name for name in self.transitions.get(old, [])
                 if self.by_name[name]["is_active"]]
        if not allows_unconfirmed:
            names = [name for name in names if name != UNCONFIRMED]
        return names


def initial_status(ctx, workflow, requested, allows_unconfirmed, privileged):
    """The status of a new bug.

    Callers without editbugs/canconfirm get UNCONFIRMED when the product
    allows it (their choice is ignored), else the first allowed status.
    Others get the requested one, or the first allowed that is not
    UNCONFIRMED. Errors: 51 unknown; 123 not allowed for a new bug.
    """
    allowed = workflow.targets(None, allows_unconfirmed)
    if not privileged:
        if UNCONFIRMED in allowed:
            return UNCONFIRMED
        requested = allowed[0] if allowed else None
    elif not values.text(requested, "status").strip():
        candidates = [name for name in allowed if name != UNCONFIRMED] or allowed
        requested = candidates[0] if candidates else None
    if requested is None:
        raise ServiceError(ILLEGAL_TRANSITION, "No status is allowed for a new bug.")
    name = workflow.find(requested)
    if name not in allowed:
        raise ServiceError(ILLEGAL_TRANSITION, f"You are not allowed to file a new bug with "
                                               f"the status '{name}'. Allowed: "
                                               f"{', '.join(allowed)}.")
    return name


def resolve_ultimate_dupe(conn, bug_id, target_id):
    """Errors: 118 when marking `bug_id` a duplicate of `target_id` would
    make a loop (including marking a bug a duplicate of itself)."""
    seen = set()
    current = target_id
    while current is not None and current not in seen:
        if current == bug_id:
            raise ServiceError(DUPE_LOOP, f"Bug {bug_id} cannot be marked as a duplicate of bug "
                                          f"{target_id}: that would make a loop of duplicates.")
        seen.add(current)
        row = conn.execute("SELECT dupe_of FROM bugs WHERE id = ?", (current,)).fetchone()
        current = row[0] if row else None


def ultimate_dupe(conn, bug_id):
    """The bug at the end of `bug_id`'s chain of duplicates."""
    seen = {bug_id}
    while True:
        row = conn.execute("SELECT dupe_of FROM bugs WHERE id = ? AND resolution = ?",
                           (bug_id, DUPLICATE)).fetchone()
        if row is None or row[0] is None or row[0] in seen:
            return bug_id
        bug_id = row[0]
        seen.add(bug_id)


class StatusChanger:
    """Applies status, resolution and dupe_of to one bug being updated.

    state: the update in progress (update.BugUpdate): its `new` record,
    `rights`, `has_comment()`, `mark_duplicate(target)`, `product`.
    """

    def __init__(self, ctx, workflow, state):
        self.ctx = ctx
        self.workflow = workflow
        self.state = state

    def available(self):
        """Statuses the bug may move to now, the current one included."""
        bug = self.state.new
        names = [name for name in self.workflow.targets(bug.status,
                                                        self.state.product["has_unconfirmed"])
                 if self.state.rights.can_change("status", bug.status, name, bug)]
        if bug.status not in names:
            names.insert(0, bug.status)
        return names

    def set_status(self, requested, resolution=None, dupe_of=None):
        """Move to status `requested`. resolution/dupe_of: given with it
        (None = not given). Errors: 51, 123, 32000 (comment or milestone
        required), and those of set_resolution / set_dupe_of."""
        ctx, bug = self.ctx, self.state.new
        old_status = bug.status
        name = self.workflow.find(requested)
        available = self.available()
        if name != old_status and name not in available:
            raise ServiceError(ILLEGAL_TRANSITION, f"You are not allowed to change the status "
                                                   f"from {old_status} to {name}. Allowed: "
                                                   f"{', '.join(available)}.")
        if (name != old_status and (old_status, name) in self.workflow.comment_required
                and not self.state.has_comment()):
            raise ServiceError(USER_ERROR, f"You have to specify a comment when changing the "
                                           f"status from {old_status} to {name}.")
        product = self.state.product
        if (name == "IN_PROGRESS" and name != old_status
                and ctx.param_is_on("usetargetmilestone")
                and ctx.param_is_on("musthavemilestoneonaccept")
                and ctx.conn.execute("SELECT COUNT(*) FROM milestones WHERE product_id = ?",
                                     (product["id"],)).fetchone()[0] > 1
                and bug.target_milestone == product["default_milestone"]):
            raise ServiceError(USER_ERROR, "You must select a target milestone before accepting "
                                           "this bug.")
        bug.status = name
        if self.workflow.is_open(name):
            confirmed = name != UNCONFIRMED
            self.state.rights.check("is_confirmed", int(bug.is_confirmed), int(confirmed), bug)
            bug.is_confirmed = confirmed
            bug.resolution = ""
            bug.dupe_of = None
            return
        new_resolution = bug.resolution if resolution is None else resolution
        self.set_resolution(new_resolution, dupe_of)
        if name != old_status:
            bug.remaining_time = 0.0

    def set_resolution(self, requested, dupe_of=None):
        """Set the resolution of a closed bug. Errors: 122 the bug is open;
        121 empty; 51 unknown; 32000 inactive, comment required, open
        dependencies with FIXED; 119 DUPLICATE without a duplicate."""
        ctx, bug = self.ctx, self.state.new
        if self.workflow.is_open(bug.status):
            raise ServiceError(RESOLUTION_NOT_ALLOWED, "You cannot set a resolution on a bug "
                                                       "that is open.")
        text = values.text(requested, "resolution").strip()
        if not text:
            raise ServiceError(MISSING_RESOLUTION, f"A valid resolution is required to mark "
                                                   f"bugs as {bug.status}."
                               + values.legal_values(ctx.conn, "resolution"))
        old = bug.resolution
        name = values.select(ctx, "resolution", text, current=old, api_name="resolution")
        if (ctx.param_is_on("noresolveonopenblockers") and name == "FIXED" and name != old
                and self._open_dependencies(bug)):
            raise ServiceError(USER_ERROR, f"Bug {bug.id} has unresolved dependencies; it "
                                           "cannot be marked FIXED.")
        if (name != old and ctx.param_is_on("commentonchange_resolution")
                and not self.state.has_comment()):
            raise ServiceError(USER_ERROR, "You have to specify a comment when changing the "
                                           "resolution.")
        self.state.rights.check("resolution", old, name, bug)
        bug.resolution = name
        if name != old:
            if old == DUPLICATE:
                bug.dupe_of = None
            elif name == DUPLICATE:
                bug.remaining_time = 0.0
        if name == DUPLICATE:
            if dupe_of is not None:
                self.set_dupe_of(dupe_of)
            elif bug.dupe_of is None:
                raise ServiceError(DUPE_ID_REQUIRED, "You must specify the bug this one is a "
                                                     "duplicate of.")

    def set_dupe_of(self, value):
        """Mark the bug a duplicate of bug `value` (id or alias). Errors: 50
        empty; 100/101/102 bad, unknown or invisible bug; 118 loop; 32000
        comment required; and those of a move to duplicate_or_move_bug_status."""
        ctx, bug = self.ctx, self.state.new
        raw = values.text(value, "dupe_of").strip()
        if not raw or raw == "0":
            raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the bug this one is a "
                                                     "duplicate of.")
        # The current target may be hidden: naming it again by number changes nothing.
        if bug.dupe_of is not None and numeric_bug_id(raw) == bug.dupe_of:
            return
        target = visible_bug_id(ctx, raw)
        if target == bug.dupe_of:
            return
        resolve_ultimate_dupe(ctx.conn, bug.id, target)
        if ctx.param_is_on("commentonduplicate") and not self.state.has_comment():
            raise ServiceError(USER_ERROR, "You have to specify a comment when marking a bug as "
                                           "a duplicate.")
        self.state.rights.check("dupe_of", bug.dupe_of, target, bug)
        bug.dupe_of = target
        if bug.resolution != DUPLICATE:
            self.set_status(ctx.param("duplicate_or_move_bug_status"), resolution=DUPLICATE)
        self.state.mark_duplicate(target)

    def _open_dependencies(self, bug):
        if not bug.depends_on:
            return False
        marks = ", ".join("?" for _ in bug.depends_on)
        statuses = [row[0] for row in self.ctx.conn.execute(
            f"SELECT status FROM bugs WHERE id IN ({marks})", bug.depends_on)]
        return any(self.workflow.is_open(name) for name in statuses)
