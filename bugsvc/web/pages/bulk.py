"""Changing several bugs at once: the reference's "Change several bugs at
once" (buglist.cgi?...&tweak=1, a bug list with a box per bug and one form
of changes) and its post to process_bug.cgi with `id_N` boxes and the
reference's control names (`dontchange`, `bug_status`, `resolution`,
`assigned_to`, `set_default_assignee`, `qa_contact`, `set_default_qa_contact`,
`masscc` with `ccaction`, `priority`, `bug_severity`, `target_milestone`,
`keywords` with `keywordaction`, `comment`, and a `bit-N` control per
group N: 1 adds the bugs to it, 0 removes them, -1 leaves them as they
are; only groups the visitor may set on at least one listed bug are
offered, and a post naming another changes nothing).

Each ticked bug gets its own Bug.update, checked by the very rules of a
change made on its page, and committed on its own: unlike the reference,
which abandons the whole change when one bug refuses it, the bugs that may
change do, each mails its own people once, and one page lists what changed
and what was refused and why.
"""

import re

from ... import errors
from ...errors import ServiceError
from .base import require_user


DONT_CHANGE = "--do_not_change--"
# The most bugs one post changes (a bug list page shows more; a post
# naming more is refused before anything changes).
MOST_BUGS = 500
_BOX = re.compile(r"^id_(\d{1,9})$")
_GROUP_BIT = re.compile(r"^bit-(\d{1,9})$")
# A bit-N control's values, as the reference's.
ADD_GROUP, REMOVE_GROUP, KEEP_GROUP = "1", "0", "-1"
_WORDS = re.compile(r"[\s,;]+")
# The form's selects and text boxes: its name -> Bug.update's.
_PLAIN = (("priority", "priority"), ("bug_severity", "severity"),
          ("target_milestone", "target_milestone"))


def bulk_form(call, bugs):
    """What the change form under a tweak list offers: {"statuses",
    "resolutions", "priorities", "severities", "milestones",
    "dontchange"} (the legal values; milestones of the listed bugs'
    products)."""
    products = sorted({bug["product"] for bug in bugs if bug.get("product")})
    reads = [("Bug.fields", {"names": ["bug_status", "resolution", "priority", "bug_severity"],
                             "include_fields": "name,values.name,values.is_active"})]
    if products:
        reads.append(("Product.get", {"names": products,
                                      "include_fields": "name,milestones.name,"
                                                        "milestones.is_active"}))
    results = call.read(*reads)
    fields = {field["name"]: [value["name"] for value in field.get("values", [])
                              if value.get("is_active", True) and value["name"] != ""]
              for field in results[0]["fields"]}
    milestones = []
    for product in (results[1]["products"] if len(results) > 1 else []):
        for milestone in product.get("milestones", []):
            if milestone.get("is_active", True) and milestone["name"] not in milestones:
                milestones.append(milestone["name"])
    return {"statuses": fields.get("bug_status", []),
            "resolutions": fields.get("resolution", []),
            "priorities": fields.get("priority", []),
            "severities": fields.get("bug_severity", []),
            "milestones": milestones if call.setting_is_on("usetargetmilestone") else [],
            "groups": settable_groups(call, [bug["id"] for bug in bugs]),
            "dontchange": DONT_CHANGE}


def _group_options(call, bug_ids):
    """Bug.edit_options' groups of each of `bug_ids`: [[{"id", "name", ...}]]."""
    if not bug_ids:
        return []
    found = call.read_one("Bug.edit_options", {"ids": bug_ids[:MOST_BUGS],
                                               "include_fields": "id,groups"})
    return [bug.get("groups", []) for bug in found["bugs"]]


def settable_groups(call, bug_ids):
    """[{"id", "name", "description"}] of the groups the visitor may add
    to or remove from at least one of `bug_ids`, by name."""
    groups = {}
    for options in _group_options(call, bug_ids):
        for group in options:
            if group["can_change"]:
                groups[group["id"]] = {"id": group["id"], "name": group["name"],
                                       "description": group["description"]}
    return sorted(groups.values(), key=lambda group: group["name"].lower())


def is_bulk(call):
    """True for a post of the change-several-bugs form (id_N boxes, no id)."""
    return not call.field("id") and any(_BOX.match(name) for name in call.form)


def chosen_ids(call):
    """The bug ids of the ticked id_N boxes, in order. Errors: 32000 for
    more than MOST_BUGS, or none."""
    ids = sorted({int(match.group(1)) for match in map(_BOX.match, call.form) if match})
    if not ids:
        raise ServiceError(errors.USER_ERROR, "Tick at least one bug to change.")
    if len(ids) > MOST_BUGS:
        raise ServiceError(errors.USER_ERROR,
                           f"At most {MOST_BUGS} bugs can be changed at once; "
                           f"{len(ids)} were ticked.")
    return ids


def group_changes(call, bug_ids):
    """Bug.update's "groups" ({"add", "remove"} of names) of the form's
    bit-N controls, or None when they change nothing. Errors: 32000 a
    control of a group the visitor may not set on any of `bug_ids`, or a
    value not 1, 0 or -1 (nothing is changed then)."""
    wanted = {}
    for name in call.form:
        match = _GROUP_BIT.match(name)
        if not match:
            continue
        value = call.field(name).strip()
        if value not in (ADD_GROUP, REMOVE_GROUP, KEEP_GROUP):
            raise ServiceError(errors.USER_ERROR, f"{name} must be 1 (add), 0 (remove) or "
                                                  "-1 (leave as it is).")
        if value != KEEP_GROUP:
            wanted[int(match.group(1))] = value
    if not wanted:
        return None
    names = {group["id"]: group["name"] for group in settable_groups(call, bug_ids)}
    for group_id in wanted:
        if group_id not in names:
            raise ServiceError(errors.USER_ERROR, f"You may not change the group {group_id} "
                                                  "on the ticked bugs; nothing was changed.")
    changes = {}
    for action, value in (("add", ADD_GROUP), ("remove", REMOVE_GROUP)):
        chosen = sorted(names[group_id] for group_id, given in wanted.items() if given == value)
        if chosen:
            changes[action] = chosen
    return changes


def bulk_changes(call):
    """Bug.update's parameters (without ids) the form asks of every ticked
    bug: a control left at `dontchange` (or empty) changes nothing (the
    groups' bit-N controls are group_changes')."""
    dont = call.field("dontchange") or DONT_CHANGE

    def given(name):
        value = call.field(name).strip()
        return value if value and value != dont else None

    changes = {}
    for name, api_name in _PLAIN:
        if given(name) is not None:
            changes[api_name] = given(name)
    if given("bug_status") is not None:
        changes["status"] = given("bug_status")
    if given("resolution") is not None:
        changes["resolution"] = given("resolution")
    if call.field("set_default_assignee"):
        changes["reset_assigned_to"] = True
    elif given("assigned_to") is not None:
        changes["assigned_to"] = given("assigned_to")
    if call.field("set_default_qa_contact"):
        changes["reset_qa_contact"] = True
    elif given("qa_contact") is not None:
        changes["qa_contact"] = given("qa_contact")
    people = [word for word in _WORDS.split(call.field("masscc")) if word]
    if people:
        action = "remove" if call.field("ccaction") == "remove" else "add"
        changes["cc"] = {action: people}
    keywords = [word for word in _WORDS.split(call.field("keywords")) if word]
    action = call.field("keywordaction") or "add"
    if keywords or (action == "makeexact" and "keywords" in call.form):
        changes["keywords"] = {{"delete": "remove", "makeexact": "set"}.get(action, "add"):
                               keywords}
    text = call.field("comment")
    if text.strip():
        changes["comment"] = {"body": text}
    return changes


def change_several(call):
    """Apply the posted change to each ticked bug, each on its own; render
    the page of what changed and what was refused."""
    require_user(call)
    ids = chosen_ids(call)
    changes = bulk_changes(call)
    groups = group_changes(call, ids)
    if groups:
        changes["groups"] = groups
    if not changes:
        raise ServiceError(errors.USER_ERROR, "The form asks for no change.")
    changed, refused = [], []
    for bug_id in ids:
        try:
            result = call.write("Bug.update", dict(changes, ids=[bug_id]))
        except ServiceError as error:
            refused.append({"id": bug_id, "reason": error.message, "code": error.code})
            continue
        fields = sorted(result["bugs"][0]["changes"]) if result.get("bugs") else []
        changed.append({"id": bug_id, "fields": fields})
    summaries = {}
    if changed:
        found = call.read_one("Bug.get", {"ids": [item["id"] for item in changed],
                                          "permissive": True, "include_fields": "id,summary"})
        summaries = {bug["id"]: bug["summary"] for bug in found["bugs"]}
    call.render("bulk_result.html", status=200 if changed or not refused else 400,
                title="Changes to several bugs", changed=changed, refused=refused,
                summaries=summaries)
