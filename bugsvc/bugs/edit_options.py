"""What the caller may do to a bug now: the statuses it may move the bug
to (the workflow's transitions, narrowed by its rights), the fields it may
change, whether it may comment, and the resolutions it may choose. A form
that offers exactly these never offers a change the update would refuse
for want of a right (the values themselves are still checked then)."""

from . import custom_fields, groups as bug_groups, values as bug_values, visibility
from .permissions import TIME_FIELDS, can_edit_product
from .status import StatusChanger, workflow as status_workflow
from .update import BugUpdate


# Fields a form may offer to change, under their API names.
FIELDS = ("summary", "alias", "product", "component", "version", "target_milestone",
          "platform", "op_sys", "priority", "severity", "assigned_to", "qa_contact", "url",
          "whiteboard", "keywords", "depends_on", "blocks", "see_also", "dupe_of", "groups",
          "deadline", "estimated_time", "remaining_time", "is_cc_accessible",
          "is_creator_accessible", "resolution")


class _AnyOtherValue:
    """A new value equal to no stored one: asks whether a field may change at all."""

    def __str__(self):
        return "\0another value"


_ANOTHER = _AnyOtherValue()


def edit_options(ctx, bug_id, product=None):
    """{"id", "can_comment", "can_remove_cc", "statuses": [{"name", "is_open",
    "comment_required"}], "fields": [names], "resolutions": [names]} for
    visible bug `bug_id` and the caller. A logged-out caller, and one who may
    not edit the bug's product, may change nothing. product: the name of a
    product the bug would move to; its "groups" are then those of the bug
    moved there (Errors: 106 a product the caller may not file bugs in)."""
    workflow = status_workflow(ctx)
    state = BugUpdate(ctx, workflow, bug_id)
    bug = state.new
    current = {"name": bug.status, "is_open": workflow.is_open(bug.status),
               "comment_required": False}
    if not ctx.caller.is_logged_in or not can_edit_product(ctx, bug.product_id):
        return {"id": bug_id, "can_comment": False, "can_remove_cc": False,
                "statuses": [current], "fields": [], "resolutions": [], "groups": []}
    statuses = []
    for name in StatusChanger(ctx, workflow, state).available():
        statuses.append({"name": name, "is_open": workflow.is_open(name),
                         "comment_required": (name != bug.status
                                              and (bug.status, name) in workflow.comment_required)})
    timetracker = visibility.is_timetracker(ctx)
    names = list(FIELDS) + [field["name"] for field in custom_fields.active_fields(ctx)]
    allowed = []
    for name in names:
        if name in TIME_FIELDS and not timetracker:
            continue
        if name in bug.custom or name.startswith("cf_"):
            old = bug.custom.get(name, [])
        else:
            old = bug.aliases if name == "alias" else getattr(bug, name, None)
        if state.rights.can_change(name, old, [_ANOTHER] if isinstance(old, list) else _ANOTHER,
                                   bug):
            allowed.append(name)
    resolutions = []
    if "resolution" in allowed:
        resolutions = [row[0] for row in ctx.conn.execute(
            "SELECT v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
            " WHERE f.name = 'resolution' AND v.is_active = 1 AND v.value <> ''"
            " ORDER BY v.sort_key, v.value")]
    return {"id": bug_id, "can_comment": True, "can_remove_cc": state.rights.can_edit(bug),
            "statuses": statuses, "fields": allowed, "resolutions": resolutions,
            "groups": (_groups(ctx, bug) if product is None else _moved_groups(
                ctx, bug, bug_values.enterable_product(ctx, product)["id"]))
            if "groups" in allowed else []}


def _groups(ctx, bug):
    """[{"id", "name", "description", "is_on", "can_change"}]: the groups the bug
    is in or the caller could restrict it to, and whether the caller may
    add or remove each (the update's rules, with the product unchanged)."""
    control = bug_groups.controls(ctx.conn, bug.product_id)
    mandatory = bug_groups.mandatory(ctx, bug.product_id)
    valid = bug_groups.valid(ctx.conn, bug.product_id)
    candidates = set(bug.groups) | {group_id for group_id in bug_groups.available(
        ctx, bug.product_id) if ctx.caller.in_group_id(group_id)}
    result = []
    for row in ctx.conn.execute("SELECT id, name, description, is_active FROM groups"
                                " ORDER BY lower(name)").fetchall():
        group_id = row["id"]
        if group_id not in candidates:
            continue
        is_on = group_id in bug.groups
        if is_on:
            settings = control.get(group_id, {})
            can_change = not (group_id in valid and (
                (settings.get("membercontrol") == bug_groups.MANDATORY and row["is_active"])
                or not ctx.caller.in_group_id(group_id)))
        else:
            can_change = (bug_groups.settable(ctx, bug.product_id, group_id)
                          and group_id not in mandatory)
        result.append({"id": group_id, "name": row["name"],
                       "description": row["description"], "is_on": is_on,
                       "can_change": can_change})
    return result


def _moved_groups(ctx, bug, product_id):
    """The groups of bug `bug` moved to product `product_id`, as _groups
    lists them: those it keeps (it is in them and they are valid there),
    those it must be in there, and those the caller may add there; is_on
    says what a move keeps or adds by itself (the update's rules for a
    changed product: a non-member may add or remove a group the product
    leaves to others)."""
    if product_id == bug.product_id:
        return _groups(ctx, bug)
    control = bug_groups.controls(ctx.conn, product_id)
    mandatory = bug_groups.mandatory(ctx, product_id)
    valid = bug_groups.valid(ctx.conn, product_id)
    available = bug_groups.available(ctx, product_id)
    kept = {group_id for group_id in bug.groups if group_id in valid}
    candidates = kept | mandatory | set(available)
    result = []
    for row in ctx.conn.execute("SELECT id, name, description FROM groups"
                                " ORDER BY lower(name)").fetchall():
        group_id = row["id"]
        if group_id not in candidates:
            continue
        settings = control.get(group_id, {})
        is_on = group_id in kept or group_id in mandatory or (
            available.get(group_id, False) and group_id not in bug.groups)
        if group_id in mandatory:
            can_change = False
        elif group_id in kept:
            can_change = ctx.caller.in_group_id(group_id) or (
                settings.get("othercontrol") != bug_groups.MANDATORY)
        else:
            can_change = group_id in available
        result.append({"id": group_id, "name": row["name"],
                       "description": row["description"], "is_on": is_on,
                       "can_change": can_change})
    return result
