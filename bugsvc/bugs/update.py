"""Updating bugs: each parameter is checked and applied
to an in-memory copy of the bug, in the reference's order, then the
difference is written with its history and side effects on other bugs."""

from .. import dates
from ..call.params import Params, as_bool
from ..catalogue import bug_fields, catalog
from ..catalogue.field_types import BUG_ID
from ..errors import (
    COMMENT_NOT_ON_BUG,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    USER_ERROR,
    USER_NOT_INSIDER,
    ServiceError,
)
from ..store.dialect import json_items, once_per_dialect
from . import (
    activity,
    comments,
    custom_fields,
    dependencies,
    groups,
    history,
    isolation,
    record,
    see_also,
    store,
    token,
    values,
    visibility,
)
from .flags import FlagEditor, retarget, types_for, user_can_see_bug
from .lookup import visible_bug_id
from .permissions import TIME_FIELDS, FieldRights, can_edit_product, require_product_edit
from .status import StatusChanger, workflow as status_workflow


# The Bugzilla names the reference's update also understands: those of the
# fields it sets, but for the fields whose setter takes the API name only.
_INTERNAL_NAMES = {name: field.api for field in bug_fields.STANDARD
                   if field.on_update and not field.update_takes_api_name
                   for name in field.bugzilla_names if name != field.api}


def update(ctx, params):
    """Update the bugs named by `ids`; returns [{id, alias, last_change_time,
    changes}] in target order (see services.bug.update for the errors)."""
    params = dict(params)
    for internal, name in _INTERNAL_NAMES.items():
        if internal in params and name not in params:
            params[name] = params.pop(internal)
    p = Params(params)
    bug_ids = targets(ctx, p)
    if len(bug_ids) > 1:
        if p.has("dupe_of"):
            raise ServiceError(USER_ERROR, "You cannot mark several bugs as duplicates at once.")
        if p.get("alias") is not None:
            raise ServiceError(values.ALIAS_ERROR, "You cannot set aliases when changing several "
                                                   "bugs at once.")
    if p.get("update_token") not in (None, ""):
        # Mid-air collisions: the change is based on the bug as the caller
        # read it (Bug.get's update_token); if anything changed since, it is
        # not applied over what the caller has not seen.
        if len(bug_ids) > 1:
            raise ServiceError(USER_ERROR, "An update_token belongs to one bug: change one bug "
                                           "at a time with it.")
        if not token.is_current(ctx.conn, ctx.caller.id, bug_ids[0], p.str("update_token")):
            raise ServiceError(USER_ERROR, f"Mid-air collision: bug {bug_ids[0]} has changed "
                                           f"since you read it (its update_token is no longer "
                                           f"current). Read it again, then make your change.")
    workflow = status_workflow(ctx)
    all_changes = []
    for bug_id in bug_ids:
        state = BugUpdate(ctx, workflow, bug_id)
        state.apply(p)
        all_changes.append((bug_id, state.save()))
    result = []
    timetracker = visibility.is_timetracker(ctx)
    id_fields = history.bug_id_fields(ctx)
    for bug_id, changes in all_changes:
        if not timetracker:
            # A status change may zero the remaining time: not for their eyes.
            changes = {name: change for name, change in changes.items()
                       if name not in TIME_FIELDS}
        # Changes read as the bug's history shows them (a Bug ID field's old
        # value may name a bug the caller cannot see).
        for name in [name for name in changes if name in id_fields]:
            shown = {key: history.visible_value(ctx, name, changes[name][key])
                     for key in ("removed", "added")}
            if shown["removed"] or shown["added"]:
                changes[name] = shown
            else:
                del changes[name]
        changed_at, aliases = ctx.conn.execute(_answer_sql(ctx.conn.dialect),
                                               (bug_id,)).fetchone()
        result.append({"id": bug_id, "alias": json_items(aliases),
                       "last_change_time": dates.from_db(changed_at), "changes": changes})
    return result


@once_per_dialect
def _answer_sql(dialect):
    """The statement reading what an update's answer tells of a bug as the
    whole call left it: its last change time and its aliases (a JSON
    array)."""
    aliases = dialect.json_list(["alias"], "FROM bug_aliases WHERE bug_id = b.id", "id")
    return f"SELECT b.last_change_time, {aliases} FROM bugs b WHERE b.id = ?"


class BugUpdate:
    """One bug being updated: `old` as stored, `new` being changed."""

    def __init__(self, ctx, workflow, bug_id):
        self.ctx = ctx
        self.workflow = workflow
        self.old = record.load(ctx.conn, bug_id)
        self.new = self.old.copy()
        self.product = catalog.product_by_id(ctx.conn, self.new.product_id)
        self.product_changed = False
        self.rights = FieldRights(ctx, self.old, workflow.is_open)
        self.comments = []         # {body, is_private, work_time, kind, extra}
        self.privacy = {}          # comment id -> new is_private
        self.dupe_target = None
        self.add_reporter_to_dupe = False
        self.see_also_mirror = []  # (other bug id, "add" | "remove")

    # Helpers used by status.StatusChanger ------------------------------------

    def has_comment(self):
        return bool(self.comments)

    def mark_duplicate(self, target):
        self.dupe_target = target
        target_reporter = self.ctx.conn.execute("SELECT reporter FROM bugs WHERE id = ?",
                                                (target,)).fetchone()[0]
        self.add_reporter_to_dupe = (target_reporter != self.new.reporter
                                     and user_can_see_bug(self.ctx, self.new.reporter, target))

    # Applying the parameters ----------------------------------------------------

    def apply(self, p):
        """Check and apply every parameter of the update (Params `p`)."""
        if p.has("product"):
            self._product(p)
        if p.has("groups"):
            self._groups(p.get("groups"))
        if p.has("depends_on") or p.has("blocks"):
            self._dependencies(p)
        if p.has("keywords"):
            self._keywords(p.get("keywords"))
        if p.has("comment") or p.has("work_time"):
            self._comment(p)
        if not p.has("product"):
            if p.has("component"):
                self._component(p.get("component"))
            if p.has("version"):
                self._version(p.get("version"))
            if p.has("target_milestone"):
                self._milestone(p.get("target_milestone"))
        self._scalars(p)
        if p.has("comment_is_private"):
            self._comment_privacy(p)
        self._status(p)
        if p.bool("reset_assigned_to"):
            self._assignee(self._component_row()["default_assignee"])
        if p.bool("reset_qa_contact"):
            self._qa_contact(self._component_row()["default_qa_contact"])
        if p.has("see_also"):
            self._see_also(p.get("see_also"))
        for field in custom_fields.active_fields(self.ctx):
            if p.has(field["name"]):
                self._custom(field, p.get(field["name"]))
        if p.has("cc"):
            self._cc(p.get("cc"))
        if p.has("alias"):
            self._alias(p.get("alias"))
        if p.has("flags"):
            types = types_for(self.ctx.conn, self.new.product_id, self.new.component_id)
            FlagEditor(self.ctx, self.new, self.new.flags, types).apply(p.get("flags"))
        self._check_isolation()

    def _check_isolation(self):
        """strict_isolation: the people this update puts on the bug (added to
        the CC list, new assignee, new QA contact) must be able to edit its
        product, and see it when the bug moved there."""
        old, bug = self.old, self.new
        people = [user_id for user_id in bug.cc if user_id not in old.cc]
        if bug.assigned_to != old.assigned_to:
            people.append(bug.assigned_to)
        if bug.qa_contact is not None and bug.qa_contact != old.qa_contact:
            people.append(bug.qa_contact)
        isolation.check_people(self.ctx, self.product, people, bug_id=bug.id,
                               must_see=self.product_changed)

    def _check(self, field, old, new):
        self.rights.check(field, old, new, self.new)

    def _component_row(self):
        return catalog.component_by_id(self.ctx.conn, self.new.component_id)

    def _product(self, p):
        ctx, bug = self.ctx, self.new
        name = values.text(p.get("product"), "product").strip()
        if name.lower() == self.product["name"].lower():
            product = self.product
        else:
            product = values.enterable_product(ctx, name)
        changed = product["id"] != bug.product_id
        if changed:
            self._check("product", self.product["name"], product["name"])
        old_component = self._component_row()
        component_name = values.text(p.get("component"), "component") or old_component["name"]
        version_name = values.text(p.get("version"), "version") or bug.version
        milestone_name = p.get("target_milestone")
        if milestone_name is None and (ctx.param_is_on("usetargetmilestone") or not changed):
            milestone_name = bug.target_milestone
        self.product, self.product_changed = product, changed
        bug.product_id = product["id"]
        self._component(component_name)
        self._version(version_name)
        if changed and not self.rights.can_change("target_milestone", 0, 1, bug):
            bug.target_milestone = product["default_milestone"]
        else:
            self._milestone(milestone_name if milestone_name is not None
                            else product["default_milestone"])
        if changed:
            valid = groups.valid(ctx.conn, product["id"])
            bug.groups = [gid for gid in bug.groups if gid in valid]
            for group_id in sorted(groups.mandatory(ctx, product["id"])):
                if group_id not in bug.groups:
                    bug.groups.append(group_id)

    def _component(self, value):
        ctx, bug = self.ctx, self.new
        found = values.component(ctx, self.product, value, current_id=self.old.component_id)
        if found["id"] == bug.component_id:
            return
        old_name = catalog.component_by_id(ctx.conn, bug.component_id)["name"]
        self._check("component", old_name, found["name"])
        bug.component_id = found["id"]
        for (user_id,) in ctx.conn.execute("SELECT user_id FROM component_cc"
                                           " WHERE component_id = ?", (found["id"],)):
            if user_id not in bug.cc:
                bug.cc.append(user_id)
        retarget(ctx.conn, bug.flags, types_for(ctx.conn, bug.product_id, bug.component_id))

    def _version(self, value):
        current = self.old.version if not self.product_changed else None
        name = values.version(self.ctx, self.product, value, current=current)
        self._check("version", self.new.version, name)
        self.new.version = name

    def _milestone(self, value):
        current = self.old.target_milestone if not self.product_changed else None
        name = values.milestone(self.ctx, self.product, value, current=current)
        self._check("target_milestone", self.new.target_milestone, name)
        self.new.target_milestone = name

    def _groups(self, spec):
        ctx, bug, product = self.ctx, self.new, self.product
        if not isinstance(spec, dict):
            raise ServiceError(PARAM_INVALID, "The parameter 'groups' must be an object with "
                                              "add and/or remove.")
        before = list(bug.groups)
        control = groups.controls(ctx.conn, product["id"])
        for name in values.split(spec.get("add"), r",\s*"):
            group = groups.by_name(ctx, name, "add", product["name"])
            if group["id"] in bug.groups:
                continue
            if not groups.settable(ctx, product["id"], group["id"]) or (
                    not ctx.caller.in_group_id(group["id"])
                    and (not self.product_changed
                         or control.get(group["id"], {}).get("othercontrol", 0) == groups.NA)):
                raise groups.not_allowed(name, "add", product["name"])
            bug.groups.append(group["id"])
        valid = groups.valid(ctx.conn, product["id"])
        for name in values.split(spec.get("remove"), r",\s*"):
            group = groups.by_name(ctx, name, "remove", product["name"])
            if group["id"] not in bug.groups:
                raise groups.not_allowed(name, "remove", product["name"])
            if group["id"] in valid:
                settings = control[group["id"]]
                if settings["membercontrol"] == groups.MANDATORY and group["is_active"]:
                    raise groups.not_allowed(name, "remove", product["name"])
                if not ctx.caller.in_group_id(group["id"]) and (
                        not self.product_changed or settings["othercontrol"] == groups.MANDATORY
                        or not group["is_active"]):
                    raise groups.not_allowed(name, "remove", product["name"])
            bug.groups.remove(group["id"])
        self._check("groups", before, bug.groups)

    def _dependencies(self, p):
        ctx, bug = self.ctx, self.new
        result = {}
        for field in ("depends_on", "blocks"):
            current = list(getattr(bug, field))
            if not p.has(field):
                result[field] = current
                continue
            spec = p.get(field)
            if not isinstance(spec, dict):
                spec = {"set": spec}
            if "set" in spec:
                # Dependencies the caller cannot see are kept: nobody can be
                # expected to name what they are not shown.
                visible = visibility.visible_bug_ids(ctx, current)
                hidden = [b for b in current if b not in visible]
                chosen = dependencies.bug_ids(ctx, values.split(spec["set"]))
                result[field] = chosen + [b for b in hidden if b not in chosen]
                continue
            for bug_id in dependencies.bug_ids(ctx, values.split(spec.get("add"))):
                if bug_id not in current:
                    current.append(bug_id)
            for bug_id in dependencies.bug_ids(ctx, values.split(spec.get("remove"))):
                if bug_id in current:
                    current.remove(bug_id)
            result[field] = current
        for field in ("depends_on", "blocks"):
            before, after = set(getattr(bug, field)), set(result[field])
            if before != after:
                self._check(field, 0, 1)
                isolation.check_dependencies(ctx, field, before ^ after)
        dependencies.check_loops(ctx.conn, bug.id, result["depends_on"], result["blocks"])
        bug.depends_on, bug.blocks = sorted(result["depends_on"]), sorted(result["blocks"])

    def _keywords(self, spec):
        ctx, bug = self.ctx, self.new
        if not isinstance(spec, dict):
            spec = {"set": spec}
        before = list(bug.keywords)
        for action in sorted(spec):
            if action not in ("add", "remove", "set"):
                continue
            found = [k["id"] for k in values.keywords(ctx, values.split(spec[action]), before)]
            if action == "set":
                bug.keywords = found
            elif action == "add":
                bug.keywords += [kid for kid in found if kid not in bug.keywords]
            else:
                bug.keywords = [kid for kid in bug.keywords if kid not in found]
        if sorted(before) != sorted(bug.keywords):
            self._check("keywords", 0, 1)

    def _comment(self, p):
        ctx = self.ctx
        raw = p.get("comment")
        is_private = is_markdown = False
        if isinstance(raw, dict):
            body = raw.get("body", raw.get("comment"))
            is_private = as_bool(raw.get("is_private", False))
            is_markdown = as_bool(raw.get("is_markdown", False))
        else:
            body = raw
        body = comments.normalise(values.text(body, "comment"))
        work_time = values.time_value(p.get("work_time"), "work_time", allow_negative=True)
        if is_private and not visibility.is_insider(ctx):
            raise ServiceError(USER_NOT_INSIDER, "You are not allowed to make comments private.")
        if work_time:
            self._check("work_time", 0, work_time)
        if body or work_time:
            self.comments.append({"body": body, "is_private": is_private,
                                  "is_markdown": is_markdown, "work_time": work_time,
                                  "kind": comments.PLAIN, "extra": None})
        if work_time and not p.has("remaining_time"):
            self.new.remaining_time = max(0.0, self.new.remaining_time - work_time)

    def _scalars(self, p):
        ctx, bug = self.ctx, self.new
        if p.has("summary"):
            summary = values.summary(p.get("summary"))
            self._check("summary", bug.summary, summary)
            bug.summary = summary
        for api_name in ("platform", "op_sys", "priority", "severity"):
            if p.has(api_name):
                field = bug_fields.BY_API_NAME[api_name].name
                value = values.select(ctx, field, p.get(api_name), getattr(self.old, api_name),
                                      api_name)
                self._check(api_name, getattr(bug, api_name), value)
                setattr(bug, api_name, value)
        for name in ("url", "whiteboard"):
            if p.has(name):
                value = values.text(p.get(name), name).strip()
                self._check(name, getattr(bug, name), value)
                setattr(bug, name, value)
        if p.has("deadline"):
            deadline = values.deadline(p.get("deadline"))
            self._check("deadline", bug.deadline, deadline)
            bug.deadline = deadline
        for name in ("estimated_time", "remaining_time"):
            if p.has(name):
                hours = values.time_value(p.get(name), name)
                self._check(name, getattr(bug, name), hours)
                setattr(bug, name, hours)
        for name in ("is_cc_accessible", "is_creator_accessible"):
            if p.has(name) and p.get(name) is not None:
                flag = p.bool(name)
                self._check(name, int(getattr(bug, name)), int(flag))
                setattr(bug, name, flag)
        if p.has("assigned_to"):
            login = values.text(p.get("assigned_to"), "assigned_to").strip()
            if not login:
                raise ServiceError(OBJECT_NOT_SPECIFIED, "You cannot reassign a bug to nobody.")
            self._assignee(values.user(ctx, login)["id"])
        if p.has("qa_contact"):
            login = values.text(p.get("qa_contact"), "qa_contact").strip()
            self._qa_contact(values.user(ctx, login)["id"] if login else None)

    def _assignee(self, user_id):
        self._check("assigned_to", self.new.assigned_to, user_id)
        self.new.assigned_to = user_id

    def _qa_contact(self, user_id):
        self._check("qa_contact", self.new.qa_contact, user_id)
        self.new.qa_contact = user_id

    def _comment_privacy(self, p):
        ctx = self.ctx
        for key, flag in p.dict("comment_is_private").items():
            row = ctx.conn.execute("SELECT id, is_private FROM comments"
                                   " WHERE id = ? AND bug_id = ?",
                                   (str(key).strip(), self.new.id)).fetchone()
            # A private comment answers like a missing one to non-insiders.
            if row is None or (row["is_private"] and not visibility.is_insider(ctx)):
                raise ServiceError(COMMENT_NOT_ON_BUG, f"Comment {key} is not a comment of bug "
                                                       f"{self.new.id}.")
            wanted = as_bool(flag)
            if wanted != bool(row["is_private"]):
                if not visibility.is_insider(ctx):
                    raise ServiceError(USER_NOT_INSIDER, "You are not allowed to change the "
                                                         "privacy of comments.")
                self.privacy[row["id"]] = wanted

    def _status(self, p):
        changer = StatusChanger(self.ctx, self.workflow, self)
        resolution = p.get("resolution")
        dupe_of = p.get("dupe_of")
        if p.get("status") is not None:
            changer.set_status(p.get("status"), resolution=resolution, dupe_of=dupe_of)
        elif p.has("resolution"):
            changer.set_resolution(resolution, dupe_of=dupe_of)
        elif p.has("dupe_of"):
            changer.set_dupe_of(dupe_of)

    def apply_see_also(self, remove, add):
        """Remove, then add See Also links (Bug.update_see_also)."""
        self._see_also({"remove": remove})
        self._see_also({"add": add})

    def _see_also(self, spec):
        ctx, bug = self.ctx, self.new
        if not isinstance(spec, dict):
            spec = {"add": spec}
        before = list(bug.see_also)
        for value in values.split(spec.get("add")):
            url, target = see_also.check(ctx, value, bug.id)
            if url.lower() in (existing.lower() for existing in bug.see_also):
                continue
            self._check("see_also", "", url)
            bug.see_also.append(url)
            if target is not None:
                self.see_also_mirror.append((target, "add"))
        for value in values.split(spec.get("remove")):
            wanted = see_also.url_to_remove(ctx, value)
            matches = [url for url in bug.see_also if url.lower() == wanted.lower()]
            for url in matches:
                bug.see_also.remove(url)
                target = see_also.local_bug_id(ctx, url)
                if target is not None:
                    self.see_also_mirror.append((target, "remove"))
        self._check("see_also", before, bug.see_also)

    def _custom(self, field, raw):
        current = self.new.custom.get(field["name"], [])
        stored = custom_fields.check_value(self.ctx, field, raw, current)
        if field["type"] == BUG_ID and not stored and current and not visibility.visible_bug_ids(
                self.ctx, [int(current[0])]):
            # Emptying a Bug ID field that names a bug the caller cannot see
            # (and is shown as empty) keeps it, as depends_on's `set` does.
            stored = current
        self._check(field["name"], current, stored)
        self.new.custom[field["name"]] = stored
        custom_fields.require_mandatory(self.ctx.conn, field, self.new)

    def _cc(self, spec):
        ctx, bug = self.ctx, self.new
        if not isinstance(spec, dict):
            spec = {"add": spec}
        for login in values.split(spec.get("add")):
            user_id = values.user(ctx, login)["id"]
            if user_id not in bug.cc:
                bug.cc.append(user_id)
        for login in values.split(spec.get("remove")):
            user_id = values.user(ctx, login)["id"]
            if user_id != ctx.caller.id and not self.rights.can_edit(bug):
                raise ServiceError(USER_ERROR, "You may only remove yourself from the CC list "
                                               "of this bug.")
            if user_id in bug.cc:
                bug.cc.remove(user_id)

    def _alias(self, spec):
        ctx, bug = self.ctx, self.new
        if not isinstance(spec, dict):
            spec = {"set": spec if isinstance(spec, list) else [spec]}
        before = list(bug.aliases)
        if spec.get("set") is not None:
            wanted = values.aliases(ctx, values.split(spec["set"]), bug.id)
            adding = [name for name in wanted if name not in bug.aliases]
            removing = [name for name in bug.aliases if name not in wanted]
        else:
            adding = values.aliases(ctx, values.split(spec.get("add")), bug.id)
            removing = values.split(spec.get("remove"))
        for name in adding:
            existing = [a for a in bug.aliases if a.lower() == name.lower()]
            if existing:
                bug.aliases[bug.aliases.index(existing[0])] = name
            else:
                bug.aliases.append(name)
        for name in removing:
            if name in bug.aliases:
                bug.aliases.remove(name)
        if before != bug.aliases:
            self._check("alias", 0, 1)

    # Writing -----------------------------------------------------------------------

    def save(self):
        """Write the update and its side effects; returns the `changes` answer."""
        ctx, bug = self.ctx, self.new
        conn, when = ctx.conn, ctx.now
        if self.dupe_target is not None:
            plain = [c for c in self.comments if c["kind"] == comments.PLAIN]
            if plain:
                plain[-1]["kind"], plain[-1]["extra"] = comments.DUPE_OF, str(self.dupe_target)
            else:
                self.comments.append({"body": "", "is_private": False, "work_time": 0.0,
                                      "kind": comments.DUPE_OF, "extra": str(self.dupe_target)})
        changes = store.save(ctx, self.old, bug, when)
        for comment in self.comments:
            comments.add(ctx, bug.id, comment["body"], comment["is_private"],
                         comment["work_time"], comment["kind"], comment["extra"],
                         is_markdown=comment.get("is_markdown", False))
            if comment["work_time"]:
                activity.log(ctx, bug.id, "work_time", "", f"{comment['work_time']:.2f}")
        for comment_id, is_private in self.privacy.items():
            conn.execute("UPDATE comments SET is_private = ? WHERE id = ?",
                         (int(is_private), comment_id))
            activity.log(ctx, bug.id, "longdescs.isprivate", str(int(not is_private)),
                         str(int(is_private)), comment_id=comment_id)
        for other, field, removed, added in store.dependency_effects(self.old, bug):
            activity.log(ctx, other, field, removed, added)
            activity.touch(conn, other, when)
        if self.workflow.is_open(self.old.status) != self.workflow.is_open(bug.status):
            # The bugs that depend on this one hear that it was closed or reopened.
            for other in bug.blocks:
                ctx.events.blocker_changed(other, bug.id, (self.old.status, bug.status),
                                           (self.old.resolution, bug.resolution))
        self._save_duplicate()
        self._save_see_also_mirror()
        if changes or self.comments or self.privacy:
            activity.touch(conn, bug.id, when, ctx.events)
        return changes

    def _save_duplicate(self):
        if self.dupe_target is None:
            return
        ctx, conn = self.ctx, self.ctx.conn
        target = self.dupe_target
        comments.add(ctx, target, "", kind=comments.HAS_DUPE, extra=str(self.new.id))
        if self.add_reporter_to_dupe and not conn.execute(
                "SELECT 1 FROM bug_cc WHERE bug_id = ? AND user_id = ?",
                (target, self.new.reporter)).fetchone():
            conn.execute("INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
                         (target, self.new.reporter))
            login = catalog.user_by_id(conn, self.new.reporter)["login"]
            activity.log(ctx, target, "cc", "", login)
        activity.touch(conn, target, ctx.now)

    def _save_see_also_mirror(self):
        save_mirror(self.ctx, self.new.id, self.see_also_mirror)


def save_mirror(ctx, bug_id, mirror):
    """Mirror local See Also links of bug `bug_id` on the bugs they point to
    (mirror: [(other bug id, "add" | "remove")]), where the caller may
    change that bug's See Also."""
    conn = ctx.conn
    url = see_also.local_url(ctx, bug_id)
    for other, action in mirror:
        other_record = record.load(conn, other)
        rights = FieldRights(ctx, other_record, lambda name: True)
        if not (can_edit_product(ctx, other_record.product_id)
                and rights.can_change("see_also", 0, 1, other_record)):
            continue
        present = [u for u in other_record.see_also if u.lower() == url.lower()]
        if action == "add" and not present:
            conn.execute("INSERT INTO bug_see_also (bug_id, url) VALUES (?, ?)", (other, url))
            activity.log(ctx, other, "see_also", "", url)
        elif action == "remove" and present:
            conn.execute("DELETE FROM bug_see_also WHERE bug_id = ? AND url = ?",
                         (other, present[0]))
            activity.log(ctx, other, "see_also", present[0], "")
        else:
            continue
        activity.touch(conn, other, ctx.now)


def targets(ctx, p):
    """The bug ids an update names (path value, or body `ids`), each visible
    and editable. Errors: 50 none; 100/101/102; 109 product not editable."""
    return editable_bug_ids(ctx, p.list("ids"))


def editable_bug_ids(ctx, raw):
    """The ids of the bugs of `raw` (ids or aliases), each visible and
    editable. Errors: 50 none; 100/101/102; 109 product not editable."""
    if not raw:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the bugs to update (ids).")
    result = []
    for value in raw:
        bug_id = visible_bug_id(ctx, value)
        row = ctx.conn.execute("SELECT p.id, p.name FROM bugs b JOIN products p"
                               " ON p.id = b.product_id WHERE b.id = ?", (bug_id,)).fetchone()
        require_product_edit(ctx, row["id"], row["name"])
        if bug_id not in result:
            result.append(bug_id)
    return result


def change_see_also(ctx, bug_values, remove, add):
    """Remove, then add, See Also links (URLs, or bug numbers or aliases of
    this installation; unknown ones to remove are ignored) of the bugs of
    `bug_values`. Returns {bug id: {"removed": [...], "added": [...]}}.
    Errors: 50 no bugs; 100 a word that is no visible bug's number or
    alias; 101/102; 109; 112 invalid URL; 115 change not permitted.
    """
    changes = {}
    for bug_id in editable_bug_ids(ctx, bug_values):
        state = BugUpdate(ctx, status_workflow(ctx), bug_id)
        state.apply_see_also(remove, add)
        change = state.save().get("see_also", {"removed": "", "added": ""})
        changes[bug_id] = {"removed": [url for url in change["removed"].split(", ") if url],
                           "added": [url for url in change["added"].split(", ") if url]}
    return changes
