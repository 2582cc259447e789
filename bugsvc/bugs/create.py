"""Filing a bug: every parameter checked, defaults from
the parameters and the component, then the bug, its description (comment 0),
its flags and its effects on the bugs it names are written."""

from .. import dates
from ..call.params import Params
from ..catalogue import bug_fields
from ..errors import (
    INVALID_USERNAME,
    MISSING_RESOLUTION,
    PARAM_INVALID,
    RESOLUTION_NOT_ALLOWED,
    USER_ERROR,
    USER_NOT_INSIDER,
    ServiceError,
)
from . import (
    activity,
    comments,
    custom_fields,
    dependencies,
    groups,
    isolation,
    see_also,
    store,
    values,
    visibility,
)
from .flags import FlagEditor, types_for
from .permissions import can_confirm, has_editbugs
from .record import BugRecord
from .status import initial_status, workflow as status_workflow
from .update import save_mirror


# The parameters of the description (comment 0) by Bugzilla's names.
# is_markdown: bugzilla.mozilla.org's name for a Markdown description.
_DESCRIPTION_NAMES = {"comment": "description", "commentprivacy": "comment_is_private",
                      "is_markdown": "comment_is_markdown"}
# The bug-object names of the fields filing sets and of the description's
# parameters, and the Bugzilla names it takes for them (as the reference's
# Bug.create maps them).
_KNOWN = frozenset(field.bug_key for field in bug_fields.STANDARD if field.on_create) | set(
    _DESCRIPTION_NAMES.values())
_INTERNAL_NAMES = {name: field.api for field in bug_fields.STANDARD if field.on_create
                   for name in field.bugzilla_names if name != field.api} | _DESCRIPTION_NAMES


def _named(ctx, params):
    """The parameters under their bug-object names. Errors: 53 unknown key."""
    custom = {field["name"]: field for field in custom_fields.active_fields(ctx)}
    named = {}
    for key, value in params.items():
        name = _INTERNAL_NAMES.get(key, key)
        if name not in _KNOWN and name not in custom:
            raise ServiceError(PARAM_INVALID, f"The parameter '{key}' is not valid for filing "
                                              "a bug.")
        # The bug-object name wins over an internal one, unless it is null.
        if name not in named or named[name] is None or (key == name and value is not None):
            named[name] = value
    return named, custom


def create(ctx, params):
    """File a bug as the caller; returns its id (see services.bug.create)."""
    named, custom = _named(ctx, params)
    p = Params(named)
    bug = _checked_record(ctx, p, custom)
    description = comments.normalise(values.text(p.get("description"), "description"))
    private = p.bool("comment_is_private")
    if private and not visibility.is_insider(ctx):
        raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make comments private.")
    see_also_targets = []
    for value in values.split(p.get("see_also")):
        url, target = see_also.check(ctx, value)
        if url.lower() not in (u.lower() for u in bug.see_also):
            bug.see_also.append(url)
            if target is not None:
                see_also_targets.append((target, "add"))
    stamp = dates.to_db(ctx.now)
    bug.creation_time = bug.last_change_time = stamp
    bug_id = store.insert(ctx, bug)
    ctx.events.created(bug_id)
    comments.add(ctx, bug_id, description, is_private=private,
                 is_markdown=p.bool("comment_is_markdown"))
    for other, field, removed, added in store.dependency_effects(BugRecord(id=bug_id), bug):
        activity.log(ctx, other, field, removed, added)
        activity.touch(ctx.conn, other, ctx.now)
    save_mirror(ctx, bug_id, see_also_targets)
    if p.get("flags"):
        before = bug.copy()
        FlagEditor(ctx, bug, bug.flags, types_for(ctx.conn, bug.product_id,
                                                  bug.component_id)).apply(p.get("flags"))
        store.save(ctx, before, bug, ctx.now)
    return bug_id


def _checked_record(ctx, p, custom):
    """A new BugRecord from the parameters, every value checked."""
    conn = ctx.conn
    product = values.enterable_product(ctx, p.get("product"))
    component = values.component(ctx, product, p.get("component"))
    bug = BugRecord(product_id=product["id"], component_id=component["id"],
                    reporter=ctx.caller.id)
    bug.summary = values.summary(p.get("summary"))
    bug.version = values.version(ctx, product, p.get("version"))
    bug.op_sys = values.select(ctx, "op_sys", _or_default(ctx, p, "op_sys", "defaultopsys"),
                               api_name="op_sys")
    bug.platform = values.select(ctx, "rep_platform",
                                 _or_default(ctx, p, "platform", "defaultplatform"),
                                 api_name="platform")
    priority = (_or_default(ctx, p, "priority", "defaultpriority")
                if ctx.param_is_on("letsubmitterchoosepriority") else ctx.param("defaultpriority"))
    bug.priority = values.select(ctx, "priority", priority, api_name="priority")
    bug.severity = values.select(ctx, "bug_severity",
                                 _or_default(ctx, p, "severity", "defaultseverity"),
                                 api_name="severity")
    workflow = status_workflow(ctx)
    bug.status = initial_status(ctx, workflow, p.get("status"), product["has_unconfirmed"],
                                can_confirm(ctx, product["id"]))
    bug.is_confirmed = bug.status != "UNCONFIRMED"
    bug.resolution = _resolution(ctx, workflow, bug.status, p.get("resolution"))
    bug.aliases = values.aliases(ctx, values.split(p.get("alias")))
    editbugs = has_editbugs(ctx, product["id"])
    assignee = values.text(p.get("assigned_to"), "assigned_to").strip()
    bug.assigned_to = (values.user(ctx, assignee)["id"] if editbugs and assignee
                       else component["default_assignee"])
    if ctx.param_is_on("useqacontact"):
        qa_contact = values.text(p.get("qa_contact"), "qa_contact").strip()
        bug.qa_contact = (values.user(ctx, qa_contact)["id"] if editbugs and qa_contact
                          else component["default_qa_contact"])
    for login in values.split(p.get("cc"), r"[\s,;]+"):
        user_id = values.user(ctx, login, INVALID_USERNAME)["id"]
        if user_id not in bug.cc:
            bug.cc.append(user_id)
    for (user_id,) in conn.execute("SELECT user_id FROM component_cc WHERE component_id = ?",
                                   (component["id"],)):
        if user_id not in bug.cc:
            bug.cc.append(user_id)
    names = values.split(p.get("groups"), r",\s*") if p.get("groups") is not None else None
    bug.groups = groups.for_new_bug(ctx, product, names)
    bug.keywords = [k["id"] for k in values.keywords(ctx, values.split(p.get("keywords")))]
    if editbugs:
        bug.depends_on = sorted(dependencies.bug_ids(ctx, values.split(p.get("depends_on"))))
        bug.blocks = sorted(dependencies.bug_ids(ctx, values.split(p.get("blocks"))))
        isolation.check_dependencies(ctx, "depends_on", bug.depends_on)
        isolation.check_dependencies(ctx, "blocks", bug.blocks)
        dependencies.check_loops(conn, None, bug.depends_on, bug.blocks)
    milestone = p.get("target_milestone")
    bug.target_milestone = values.milestone(
        ctx, product, milestone if milestone is not None else product["default_milestone"])
    url = values.text(p.get("url"), "url").strip()
    bug.url = "" if url == "http://" else url
    bug.whiteboard = values.text(p.get("whiteboard"), "whiteboard").strip()
    if visibility.is_timetracker(ctx):
        bug.deadline = values.deadline(p.get("deadline"))
        bug.estimated_time = values.time_value(p.get("estimated_time"), "estimated_time")
        bug.remaining_time = bug.estimated_time
    bug.is_cc_accessible = p.bool("is_cc_accessible", True)
    bug.is_creator_accessible = p.bool("is_creator_accessible", True)
    for name, field in custom.items():
        if p.has(name):
            bug.custom[name] = custom_fields.check_value(ctx, field, p.get(name), [])
    for field in custom.values():
        custom_fields.require_mandatory(conn, field, bug)
    isolation.check_people(ctx, product, bug.cc + [bug.assigned_to, bug.qa_contact], must_see=True)
    return bug


def _or_default(ctx, p, name, parameter):
    value = p.get(name)
    return ctx.param(parameter) if value is None else value


def _resolution(ctx, workflow, status, requested):
    """The resolution of a new bug: only with a closed initial status, and
    never DUPLICATE. Errors: 122 with an open status; 121 missing with a
    closed one; 51 unknown; 32000 DUPLICATE."""
    name = values.text(requested, "resolution").strip()
    if workflow.is_open(status):
        if name:
            raise ServiceError(RESOLUTION_NOT_ALLOWED, "A new bug with an open status cannot have "
                                                       "a resolution.")
        return ""
    if not name:
        raise ServiceError(MISSING_RESOLUTION, f"A valid resolution is required to file a bug as "
                                               f"{status}."
                           + values.legal_values(ctx.conn, "resolution"))
    name = values.select(ctx, "resolution", name, api_name="resolution")
    if name == "DUPLICATE":
        raise ServiceError(USER_ERROR, "A bug cannot be filed as a duplicate.")
    return name
