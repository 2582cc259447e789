"""A bug's page (show_bug.cgi) and its one form (process_bug.cgi), its
history (show_activity.cgi), and filing a bug (enter_bug.cgi, post_bug.cgi).

The page shows what Bug.get, Bug.comments, Bug.attachments and Bug.history
show the visitor, read in one snapshot; its form offers the changes
Bug.edit_options says the visitor may make, and sends Bug.update only what
the visitor changed, with the update_token it read. When the bug changed
meanwhile, the update is refused and the visitor sees what changed before
deciding (a mid-air collision), as in the reference.
"""

import base64
import json
import mimetypes
import re

from ... import errors
from ...bugs import markup
from ...catalogue import bug_fields
from ...errors import ServiceError
from . import bulk, feeds
from .base import Page, require_user, responder, show_error
from .render import field_label, mention_names
from .site import url


# Fields of the form that are plain text or one value, under their API names.
_SCALARS = ("summary", "product", "component", "version", "target_milestone", "platform",
            "op_sys", "priority", "severity", "assigned_to", "qa_contact", "url", "whiteboard",
            "deadline", "estimated_time", "remaining_time")
_LISTS = ("alias", "keywords", "depends_on", "blocks")
_STANDARD_SELECTS = tuple(field.name for field in bug_fields.SELECTS)
_SPLIT = re.compile(r"[\s,;]+")
INLINE_SAFE_TYPES = ("text/plain",)
# Fields the pages show and offer only while a parameter is on, as the
# reference's pages do (its API, and so ours, takes them whatever it says).
FIELD_PARAMETERS = {field.bug_key: field.parameter for field in bug_fields.STANDARD
                    if field.parameter and field.pages_follow_parameter}


def words(text):
    return [word for word in _SPLIT.split(text or "") if word]


def _same_number(a, b):
    try:
        return float(a or 0) == float(b or 0)
    except (TypeError, ValueError):
        return False


class BugView:
    """Everything the bug page shows, read as the visitor."""

    def __init__(self, call, reference, with_history=False):
        self.call = call
        reference = str(reference).strip().lstrip("#")
        if not reference.isdigit():
            found = call.read_one("Bug.get", {"ids": [reference], "include_fields": "id"})
            reference = str(found["bugs"][0]["id"])
        self.id = int(reference)
        reads = [("Bug.get", {"ids": [self.id], "include_fields": "_default,duplicates"}),
                 ("Bug.comments", {"ids": [self.id], "exclude_fields": "tags"}),
                 ("Bug.attachments", {"ids": [self.id], "exclude_fields": "data"})]
        if with_history:
            reads.append(("Bug.history", {"ids": [self.id]}))
        if call.token:
            reads.append(("Bug.edit_options", {"ids": [self.id]}))
        # The catalogue the form needs comes in the same snapshot.
        results = call.read(*reads, then=lambda found: self._catalogue_reads(
            found[0]["bugs"][0], found[-1]["bugs"][0] if call.token else None))
        self.bug = results[0]["bugs"][0]
        self.comments = results[1]["bugs"][str(self.id)]["comments"]
        self.attachments = results[2]["bugs"][str(self.id)]
        self.history = results[3]["bugs"][0]["history"] if with_history else None
        self.duplicates = self.bug.get("duplicates", [])
        self.options = results[len(reads) - 1]["bugs"][0] if call.token else None
        self.custom_names = [name for name in self.bug if name.startswith("cf_")]
        self.fields, self.product, self.flag_types, self.products = {}, None, None, []
        self._take_catalogue(results[len(reads):])

    @staticmethod
    def _catalogue_reads(bug, options):
        """The reads [(name, params)] of the catalogue the page of `bug`
        needs, given the visitor's edit `options` (None: not signed in): the
        custom fields' definitions, and for a form the standard fields'
        values, the product's components, versions and milestones, the flag
        types and the products a bug may move to."""
        custom_names = [name for name in bug if name.startswith("cf_")]
        editing = options is not None and options["can_comment"]
        if not custom_names and not editing:
            return []
        names = custom_names + (list(_STANDARD_SELECTS) if editing else [])
        reads = [("Bug.fields", {"names": names,
                                 "include_fields": "name,display_name,type,values.name,"
                                                   "values.is_active"})]
        if editing:
            reads += [("Product.get", {"names": [bug["product"]],
                                       "include_fields": "name,components.name,"
                                                         "components.is_active,versions.name,"
                                                         "versions.is_active,milestones.name,"
                                                         "milestones.is_active"}),
                      ("FlagType.get", {"product": bug["product"], "component": bug["component"]})]
            if "product" in options["fields"]:
                reads.append(("Product.get", {"type": "enterable", "include_fields": "name"}))
        return reads

    def _take_catalogue(self, results):
        """Keep the answers of _catalogue_reads."""
        if not results:
            return
        self.fields = {field["name"]: field for field in results[0]["fields"]}
        if len(results) > 1:
            products = results[1]["products"]
            self.product = products[0] if products else None
            self.flag_types = results[2]
            if len(results) > 3:
                self.products = [product["name"] for product in results[3]["products"]]

    def shows(self, name):
        """False for a field the installation's parameters hide (see
        FIELD_PARAMETERS)."""
        parameter = FIELD_PARAMETERS.get(name)
        return parameter is None or self.call.setting_is_on(parameter)

    def can(self, name):
        return name in self.editable

    @property
    def editable(self):
        """The fields the form offers: those the visitor may change and the
        page shows."""
        if not self.options:
            return frozenset()
        return frozenset(name for name in self.options["fields"] if self.shows(name))

    def detail_rows(self):
        """The rows of the Details table after the status: (name, label,
        control, value, choices, more). control is None (shown as text),
        "text", "select", "multi", "textarea", "date", "link" or "bug" (a
        bug link); more: an empty field the visitor may fill in, offered
        behind "More fields" so the form shows what the bug has first."""
        bug, rows = self.bug, []

        def add(name, label, value, control=None, choices=(), hide_empty=False):
            if control is None and hide_empty and value in (None, "", [], "---"):
                return
            more = control in ("text", "date", "textarea", "multi") and value in (
                None, "", [], 0, 0.0)
            rows.append((name, label, control, value, choices, more))

        def text(name, value, hide_empty=True):
            add(name, field_label(name), value, "text" if self.can(name) else None,
                hide_empty=hide_empty)

        def select(name, value, choices):
            add(name, field_label(name), value, "select" if self.can(name) and choices else None,
                choices=choices)

        text("alias", ", ".join(bug["alias"]))
        select("product", bug["product"], self.products)
        select("component", bug["component"], self.product_values("components", bug["component"]))
        select("version", bug["version"], self.product_values("versions", bug["version"]))
        milestones = self.product_values("milestones", bug["target_milestone"])
        if len(milestones) > 1 or bug["target_milestone"] != "---":
            select("target_milestone", bug["target_milestone"], milestones)
        for name in ("platform", "op_sys", "priority", "severity"):
            select(name, bug[name], self.values(bug_fields.BY_API_NAME[name].name, bug[name]))
        text("keywords", ", ".join(bug["keywords"]))
        if self.shows("whiteboard"):
            text("whiteboard", bug["whiteboard"])
        if self.can("url"):
            text("url", bug["url"])
        elif bug["url"]:
            add("url", field_label("url"), bug["url"], "link")
        if "deadline" in bug:
            add("deadline", field_label("deadline"), bug["deadline"] or "",
                "date" if self.can("deadline") else None, hide_empty=True)
            for name, label in (("estimated_time", "Orig. Est. (hours)"),
                                ("remaining_time", "Hours left")):
                add(name, label, bug[name], "text" if self.can(name) else None)
            add("actual_time", "Hours worked", bug.get("actual_time", 0))
        for name in self.custom_names:
            info = self.fields.get(name) or {"display_name": name, "type": None}
            value = bug[name]
            kind = bug_fields.custom_kind(info["type"])
            if self.can(name):
                add(name, info["display_name"], value, kind.control,
                    choices=self.values(name, value if kind.control == "select" else None))
            elif kind.shown == "bug" and value:
                add(name, info["display_name"], value, "bug")
            else:
                add(name, info["display_name"], ", ".join(value) if isinstance(value, list)
                    else value, hide_empty=True)
        return rows

    def values(self, name, current=None):
        """Active legal values of select field `name` (the current one kept)."""
        field = self.fields.get(name) or {}
        names = [value["name"] for value in field.get("values", [])
                 if value.get("is_active", True) or value["name"] == current]
        if current not in (None, "") and current not in names:
            names.insert(0, current)
        return names

    def product_values(self, kind, current):
        items = (self.product or {}).get(kind, [])
        names = [item["name"] for item in items if item.get("is_active", True)
                 or item["name"] == current]
        if current and current not in names:
            names.insert(0, current)
        return names

    def render(self, status=200, **extra):
        bug, call = self.bug, self.call
        closed = [s["name"] for s in (self.options or {}).get("statuses", []) if not s["is_open"]]
        flag_types = (self.flag_types or {}).get("bug", [])
        same_as = None
        if not extra and self.options is None:
            # Everything the page of a visitor not signed in shows.
            same_as = [bug, self.comments, self.attachments, self.fields]
        texts = [(comment["text"] or "", comment.get("is_markdown")) for comment in self.comments]
        if extra.get("preview"):
            texts.append((extra["preview"]["text"], extra["preview"]["is_markdown"]))
        people = mentioned_people(call, texts)
        call.render("show_bug.html", status=status, same_as=same_as, reads=("id",),
                    title=f"Bug {bug['id']} – {bug['summary']}",
                    bug=bug, view=self, comments=self.comments, attachments=self.attachments,
                    history=self.history, duplicates=self.duplicates, options=self.options,
                    closed_statuses=closed, flag_types=flag_types,
                    custom_labels={name: field["display_name"]
                                   for name, field in self.fields.items()},
                    words_of=lambda value: ", ".join(str(v) for v in value or []),
                    error=extra.pop("error", None), draft=extra.pop("draft", {}), people=people,
                    **extra)


def mentioned_people(call, texts):
    """{name: (login, real name)} of the accounts @mentioned in `texts`
    ([(text, is_markdown)]) that the visitor may see: User.get's match, as
    the people pickers use it (nobody for a visitor not signed in, who may
    not match accounts; at most markup.MAX_MENTIONS names)."""
    if not call.token:
        return {}
    names = []
    for text, is_markdown in texts:
        names += [name for name in mention_names(text, is_markdown)
                  if name not in names]
        if len(names) >= markup.MAX_MENTIONS:
            break
    if not names:
        return {}
    found = call.read_one("User.get", {"match": names[:markup.MAX_MENTIONS], "limit": 20,
                                       "include_fields": "name,real_name"})["users"]
    accounts = [{"login": user["name"], "real_name": user.get("real_name") or ""}
                for user in found]
    return {name: (account["login"], account["real_name"])
            for name, account in markup.pick_mentioned(names, accounts).items()}


class ShowBug(Page):
    """GET /show_bug.cgi?id=N (a number or an alias): the bug page."""

    @responder
    def on_get(self, call):
        if call.field("ctype") == "xml":
            return feeds.bug_xml(call)
        reference = call.query.get("id")
        if isinstance(reference, list):
            reference = reference[0]
        if not reference or not str(reference).strip():
            call.whoami()
            call.render("show_bug_form.html", title="Find a bug")
            return
        BugView(call, reference).render()


def form_changes(call, view):
    """The Bug.update parameters of the posted form: only what the visitor
    changed, and only in fields the form offered."""
    bug, options, form = view.bug, view.options, call.form
    changes = {}
    for name in _SCALARS:
        if not view.can(name) or name not in form:
            continue
        value = call.field(name).strip()
        old = bug.get(name)
        if name in ("estimated_time", "remaining_time"):
            if not _same_number(value, old):
                changes[name] = value
            continue
        if value != ("" if old is None else str(old)):
            changes[name] = value
    for name in _LISTS:
        if not view.can(name) or name not in form:
            continue
        new, old = words(call.field(name)), [str(v) for v in bug.get(name) or []]
        added = [value for value in new if value not in old]
        removed = [value for value in old if value not in new]
        if added or removed:
            changes[name] = {"add": added, "remove": removed}
    if view.can("see_also"):
        added, removed = words(call.field("see_also_add")), call.fields("see_also_remove")
        if added or removed:
            changes["see_also"] = {"add": added, "remove": removed}
    if view.can("groups") and "groups_shown" in form:
        shown = set(call.fields("groups_shown"))
        wanted = set(call.fields("groups")) & shown
        current = {group["name"] for group in options["groups"] if group["is_on"]} & shown
        if wanted != current:
            changes["groups"] = {"add": sorted(wanted - current),
                                 "remove": sorted(current - wanted)}
    for name in ("is_cc_accessible", "is_creator_accessible"):
        if view.can(name) and f"defined_{name}" in form:
            wanted = bool(call.field(name))
            if wanted != bool(bug.get(name)):
                changes[name] = wanted
    for name in view.custom_names:
        if not view.can(name) or (name not in form and f"defined_{name}" not in form):
            continue
        field = view.fields.get(name, {})
        if bug_fields.custom_kind(field.get("type")).control == "multi":
            new = [value for value in call.fields(name) if value]
            if sorted(new) != sorted(bug.get(name) or []):
                changes[name] = new
        else:
            value = call.field(name).strip()
            if value != ("" if bug.get(name) is None else str(bug.get(name))):
                changes[name] = value
    _status_changes(call, view, changes)
    _cc_changes(call, view, changes)
    flags = _flag_changes(call, view)
    if flags:
        changes["flags"] = flags
    text = call.field("comment")
    if text.strip():
        comment = {"body": text}
        if call.field("comment_is_private") and (call.user or {}).get("is_insider"):
            comment["is_private"] = True
        if call.field("comment_is_markdown"):
            comment["is_markdown"] = True
        changes["comment"] = comment
    if (call.user or {}).get("is_timetracker") and call.field("work_time").strip():
        changes["work_time"] = call.field("work_time").strip()
    return changes


def _status_changes(call, view, changes):
    bug = view.bug
    status = call.field("bug_status").strip()
    if status and status != bug["status"]:
        changes["status"] = status
    closing = status and status != bug["status"] and status in [
        s["name"] for s in view.options["statuses"] if not s["is_open"]]
    resolution = call.field("resolution").strip()
    dupe_of = call.field("dupe_of").strip()
    if closing:
        if resolution:
            changes["resolution"] = resolution
    elif (not bug["is_open"] and resolution and resolution != bug["resolution"]
          and view.can("resolution")):
        changes["resolution"] = resolution
    if dupe_of and dupe_of != str(bug.get("dupe_of") or "") and view.can("dupe_of"):
        changes["dupe_of"] = dupe_of
        if changes.get("resolution", "DUPLICATE") != "DUPLICATE":
            del changes["resolution"]


def _cc_changes(call, view, changes):
    added = [login for value in call.fields("cc_add") for login in words(value)]
    if call.field("addselfcc") and call.user:
        added.append(call.user["login"])
    removed = call.fields("cc_remove")
    added = [login for login in dict.fromkeys(added) if login not in view.bug.get("cc", [])]
    if added or removed:
        changes["cc"] = {"add": added, "remove": removed}


def existing_flag_changes(call, flags):
    """The changes the form asks of `flags` (a bug's or an attachment's),
    from its flag-ID and requestee-ID fields: a list of {id, status[,
    requestee]}, leaving out the flags the form leaves as they are."""
    changes = []
    for flag in flags:
        status = call.field(f"flag-{flag['id']}")
        if not status:
            continue
        requestee = call.field(f"requestee-{flag['id']}").strip()
        if status != flag["status"] or (status == "?" and requestee != flag.get("requestee", "")):
            change = {"id": flag["id"], "status": status}
            if status == "?" and requestee:
                change["requestee"] = requestee
            changes.append(change)
    return changes


def new_flag(call, type_id, status):
    """A new flag of type `type_id` with `status`, and, for a request, the
    requestee the form names in requestee_type-ID."""
    change = {"type_id": int(type_id), "status": status}
    requestee = call.field(f"requestee_type-{type_id}").strip()
    if status == "?" and requestee:
        change["requestee"] = requestee
    return change


def _flag_changes(call, view):
    changes = existing_flag_changes(call, view.bug.get("flags", []))
    for flag_type in (view.flag_types or {}).get("bug", []):
        status = call.field(f"flag_type-{flag_type['id']}")
        if status in ("?", "+", "-"):
            changes.append(new_flag(call, flag_type["id"], status))
    return changes


def _privacy_changes(call, view):
    """comment_is_private for the comments whose private box an insider changed."""
    if not (call.user or {}).get("is_insider"):
        return {}
    shown = set(call.fields("comment_private_shown"))
    checked = set(call.fields("comment_private"))
    result = {}
    for comment in view.comments:
        key = str(comment["id"])
        if key in shown and (key in checked) != comment["is_private"]:
            result[key] = key in checked
    return result


class ProcessBug(Page):
    """POST /process_bug.cgi: apply the bug form (or, after a mid-air
    collision, the changes the visitor chose to submit anyway)."""

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        if bulk.is_bulk(call):
            return bulk.change_several(call)
        view = BugView(call, call.field("id"))
        if call.field("preview"):
            # The page again, the comment shown as it would be: nothing is stored.
            draft = comment_draft(call)
            return view.render(draft=draft, preview={"text": draft["comment"],
                                                     "is_markdown": draft["markdown"]})
        token = call.field("update_token")
        if call.field("midair") == "force":
            changes = _forced_changes(call)
        else:
            changes = form_changes(call, view)
            privacy = _privacy_changes(call, view)
            if privacy:
                changes["comment_is_private"] = privacy
        if not changes:
            call.redirect(url("/show_bug.cgi", id=view.id))
            return
        if "product" in changes and not call.field("confirm_product_change"):
            return verify_new_product(call, view, changes["product"])
        if token != view.bug.get("update_token"):
            return self._midair(call, BugView(call, view.id, with_history=True), changes)
        try:
            call.write("Bug.update", dict(changes, ids=[view.id], update_token=token))
        except ServiceError as error:
            fresh = BugView(call, view.id, with_history=True)
            if fresh.bug.get("update_token") != token:
                return self._midair(call, fresh, changes)
            fresh.render(status=errors.http_status(error.code), error=error.message,
                         draft=comment_draft(call))
            return
        call.redirect(url("/show_bug.cgi", id=view.id) + "#bottom", notice="changed")

    @staticmethod
    def _midair(call, view, changes):
        """The collision page: what changed since the visitor's read, its own
        changes (those of fields changed meanwhile that it left as they were
        are dropped), and the choice to submit them anyway."""
        # Times have whole seconds: what happened in the second the page was
        # read is shown too (a change seen already may show again; none is
        # missed).
        seen = call.field("delta_ts")
        since = [entry for entry in view.history if not seen or entry["when"] >= seen]
        comments = [comment for comment in view.comments if not seen
                    or comment["creation_time"] >= seen]
        touched = {change["field_name"]: change["removed"] for entry in reversed(since)
                   for change in entry["changes"]}
        mine = {}
        for name, value in changes.items():
            if name in touched and isinstance(value, str) and value == touched[name]:
                continue
            mine[name] = value
        comment = (mine.pop("comment", None) or {})
        call.render("midair.html", status=409, title=f"Mid-air collision on bug {view.id}",
                    bug=view.bug, since=since, new_comments=comments, mine=mine,
                    comment=comment.get("body", ""), comment_private=comment.get("is_private"),
                    comment_markdown=comment.get("is_markdown"),
                    changes_json=json.dumps(mine, sort_keys=True))


# Fields the page that confirms a move to another product asks again; the
# rest of the form travels through it as it was posted.
_MOVE_ASKS = ("component", "version", "target_milestone", "groups", "groups_shown",
              "confirm_product_change", "csrf_token")


def verify_new_product(call, view, product_name):
    """The reference's page between a product change and its update: choose
    the new product's component, version and milestone (each preset to the
    bug's when the new product has one of that name) and its groups; every
    other change of the posted form is carried along and made with them.
    Errors: 106 a product the visitor may not file bugs in."""
    found, options = call.read(
        ("Product.get", {"names": [product_name], "type": "enterable",
                         "include_fields": "name,default_milestone,components.name,"
                                           "components.is_active,versions.name,"
                                           "versions.is_active,milestones.name,"
                                           "milestones.is_active"}),
        ("Bug.edit_options", {"ids": [view.id], "product": product_name}))
    if not found["products"]:
        raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                           f"There is no product '{product_name}' you may move bugs to.")
    product, bug = found["products"][0], view.bug

    def active(kind):
        return [item["name"] for item in product.get(kind, []) if item.get("is_active", True)]

    def preset(names, current, fallback=None):
        if current in names:
            return current
        if fallback in names:
            return fallback
        return names[0] if len(names) == 1 else None

    components, versions, milestones = (active("components"), active("versions"),
                                        active("milestones"))
    carried = []
    for name, value in call.form.items():
        if name in _MOVE_ASKS:
            continue
        for item in value if isinstance(value, list) else [value]:
            carried.append((name, item))
    call.render("verify_product.html", title=f"Verify new product details for bug {view.id}",
                bug=bug, product=product, carried=carried,
                components=components, versions=versions, milestones=milestones,
                chosen={"component": preset(components, bug["component"]),
                        "version": preset(versions, bug["version"]),
                        "target_milestone": preset(milestones, bug["target_milestone"],
                                                   product.get("default_milestone"))},
                shows_milestone=view.shows("target_milestone") and view.can("target_milestone"),
                groups=options["bugs"][0]["groups"] if view.can("groups") else [])


def _forced_changes(call):
    """The changes a visitor submits anyway after a collision (the collision
    page carries them; they are the visitor's own, checked by the update
    like any)."""
    try:
        changes = json.loads(call.field("changes") or "{}")
    except ValueError:
        changes = {}
    if not isinstance(changes, dict):
        changes = {}
    changes = {key: value for key, value in changes.items()
               if key not in ("ids", "update_token") and isinstance(key, str)}
    text = call.field("comment")
    if text.strip():
        changes["comment"] = {"body": text}
        if call.field("comment_is_private"):
            changes["comment"]["is_private"] = True
        if call.field("comment_is_markdown"):
            changes["comment"]["is_markdown"] = True
    return changes


def comment_draft(call):
    """The comment the visitor typed, as its form shows it again: its text
    and whether it is Markdown."""
    return {"comment": call.field("comment"), "markdown": bool(call.field("comment_is_markdown"))}


class ShowActivity(Page):
    """GET /show_activity.cgi?id=N: a bug's history."""

    @responder
    def on_get(self, call):
        reference = call.query.get("id") or ""
        bug, history = call.read(("Bug.get", {"ids": [reference],
                                              "include_fields": "id,summary"}),
                                 ("Bug.history", {"ids": [reference]}))
        bug = bug["bugs"][0]
        call.render("activity.html", title=f"Changes made to bug {bug['id']}", bug=bug,
                    history=history["bugs"][0]["history"])


# Filing a bug -------------------------------------------------------------------------------

_ENTRY_SHORT = ("component", "version", "summary", "description", "severity")
_ENTRY_MORE = ("platform", "op_sys", "priority", "assigned_to", "qa_contact", "cc", "keywords",
               "depends_on", "blocks", "url", "alias", "target_milestone", "whiteboard",
               "deadline", "estimated_time", "see_also")
_UA_OS = (("Windows", "Windows"), ("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iOS"),
          ("Mac OS X", "Mac OS"), ("Macintosh", "Mac OS"), ("Linux", "Linux"),
          ("CrOS", "Chrome OS"), ("FreeBSD", "FreeBSD"))
_UA_PLATFORM = (("x86_64", "PC"), ("Win64", "PC"), ("WOW64", "PC"), ("Intel Mac", "Macintosh"),
                ("Macintosh", "Macintosh"), ("Linux", "PC"), ("Windows", "PC"))


def guess(user_agent, table, legal, fallback):
    """The reference's guess of a new bug's OS or hardware from the
    browser's User-Agent, when it is a legal value; else `fallback`."""
    for marker, value in table:
        if marker in (user_agent or "") and value in legal:
            return value
    return fallback if fallback in legal else (legal[0] if legal else "")


# The form's fields under the names the reference's enter_bug.cgi takes
# in its address (a bookmarked form, a template link): its field names and
# the interface's are both understood.
_FILL_IN_NAMES = dict({field.name: field.api for field in bug_fields.STANDARD
                       if field.api in _ENTRY_SHORT + _ENTRY_MORE},
                      comment="description", **{name: name for name in _ENTRY_SHORT + _ENTRY_MORE})
_FILL_IN_LISTS = ("cc", "keywords", "depends_on", "blocks", "see_also", "alias")
CLONE_NOTE = "+++ This bug was initially created as a clone of Bug #{id} +++\n\n"
# A new flag's controls on the new-bug form, as the reference names them.
_NEW_FLAG = re.compile(r"^flag_type-(\d{1,9})$")


def fill_ins(query):
    """{form field: value} of the new-bug form the address fills in (the
    reference's names or the interface's; cf_* custom fields as they are;
    a repeated cc is one list)."""
    values = {}
    for key, value in query.items():
        name = _FILL_IN_NAMES.get(key) or (key if key.startswith("cf_") else None)
        if name is None:
            continue
        items = value if isinstance(value, list) else [value]
        if name in _FILL_IN_LISTS:
            values[name] = ", ".join(item for item in items if item)
        else:
            values[name] = items[0]
    if query.get("comment_is_private"):
        values["comment_is_private"] = True
    return values


def clone_values(call, reference):
    """The new-bug form's values for a clone of bug `reference` (as the
    reference's enter_bug.cgi fills them: its classification fields,
    summary, URL, keywords, whiteboard, deadline and estimate, custom
    fields, CC list with its reporter, depends on the bug and what it
    depends on, blocks what it blocks, and its description when the visitor
    may read it), and the bug. Errors: 100/101/102 as Bug.get."""
    found, comments = call.read(
        ("Bug.get", {"ids": [reference]}),
        ("Bug.comments", {"ids": [reference], "include_fields": "count,text,is_private"}))
    bug = found["bugs"][0]
    first = [c for c in comments["bugs"][str(bug["id"])]["comments"] if c["count"] == 0]
    values = {name: bug[name] for name in ("component", "priority", "severity", "platform",
                                           "op_sys", "summary", "url", "whiteboard")
              if bug.get(name) not in (None, "")}
    values["keywords"] = ", ".join(bug["keywords"])
    values["depends_on"] = ", ".join(str(n) for n in [bug["id"]] + bug["depends_on"])
    values["blocks"] = ", ".join(str(n) for n in bug["blocks"])
    cc = list(bug.get("cc", []))
    reporter = bug.get("creator")
    if reporter and reporter != (call.user or {}).get("login") and reporter not in cc:
        cc.insert(0, reporter)
    values["cc"] = cc
    for name in ("deadline", "estimated_time"):
        if bug.get(name):
            values[name] = str(bug[name])
    values.update((name, value) for name, value in bug.items()
                  if name.startswith("cf_") and value not in (None, "", "---", []))
    note = CLONE_NOTE.format(id=bug["id"])
    values["description"] = note + (first[0]["text"] if first else "")
    if first and first[0]["is_private"]:
        values["comment_is_private"] = True
    return values, bug


def clone_groups(call, bug, product):
    """[{"name", "description", "is_on"}] of the groups a clone of `bug`
    in `product` may be in, as its page offers them: the groups the visitor
    may set there, ticked where the cloned bug is in them (or the product
    puts every bug in them)."""
    found = call.read_one("Bug.edit_options", {"ids": [bug["id"]], "product": product})
    return [{"name": group["name"], "description": group["description"],
             "is_on": group["is_on"]}
            for group in found["bugs"][0]["groups"] if group["can_change"]]


def clone_flags(call, bug, product, component):
    """[{"type_id", "name", "requestee"}] of the cloned bug's requests
    (flags set to ?) whose type may be requested on a bug of `product` and
    `component` by the visitor: the reference's clone asks them again."""
    try:
        types = call.read_one("FlagType.get", {"product": product, "component": component})
    except ServiceError:
        return []
    requestable = {flag_type["id"]: flag_type for flag_type in types["bug"]
                   if flag_type.get("is_active", True) and "?" in flag_type.get("values", [])}
    wanted = []
    for flag in bug.get("flags", []):
        flag_type = requestable.get(flag["type_id"])
        if flag["status"] != "?" or flag_type is None:
            continue
        if any(item["type_id"] == flag["type_id"] for item in wanted) and not \
                flag_type.get("is_multiplicable"):
            continue
        wanted.append({"type_id": flag["type_id"], "name": flag["name"],
                       "requestee": flag.get("requestee") or ""
                       if flag_type.get("is_requesteeble") else ""})
    return wanted


def new_flags(call):
    """Bug.create's "flags" of the form's flag_type-N controls (? to ask,
    with requestee_type-N); [] when none is ticked."""
    flags = []
    for name in call.form:
        match = _NEW_FLAG.match(name)
        if not match:
            continue
        for index, status in enumerate(call.fields(name)):
            if status not in ("?", "+", "-"):
                continue
            flag = {"type_id": int(match.group(1)), "status": status}
            requestees = call.fields(f"requestee_type-{match.group(1)}")
            requestee = requestees[index].strip() if index < len(requestees) else ""
            if requestee:
                flag["requestee"] = requestee
            flags.append(flag)
    return flags


class EnterBug(Page):
    """GET /enter_bug.cgi: choose a product, then its short form, filled in
    from the address (the reference's fill-in parameters) or, with
    cloned_bug_id, from the bug to clone."""

    @responder
    def on_get(self, call):
        require_user(call)
        product = call.query.get("product")
        if isinstance(product, list):
            product = product[0]
        values, cloned, groups, flags = {}, None, None, []
        reference = call.query.get("cloned_bug_id")
        if isinstance(reference, list):
            reference = reference[0]
        if reference and str(reference).strip():
            values, cloned = clone_values(call, str(reference).strip())
            product = product or cloned["product"]
            if product == cloned["product"]:
                values["version"] = cloned["version"]
                values["target_milestone"] = cloned["target_milestone"]
            if call.query.get("component"):
                values["component"] = fill_ins(call.query)["component"]
            groups = clone_groups(call, cloned, product)
            flags = clone_flags(call, cloned, product,
                                values.get("component") or cloned["component"])
        else:
            values = fill_ins(call.query)
        if not product:
            return self._choose(call)
        form = EntryForm(call, product)
        if groups is None:
            # As the reference: the product's Default groups ticked, and
            # those the address names (enter_bug.cgi?groups=...).
            groups = form.new_bug_groups(call.fields("groups"), with_defaults=True)
        form.render(values=values, cloned_bug_id=cloned["id"] if cloned else None,
                    groups=groups, flags=flags)

    @staticmethod
    def _choose(call):
        found = call.read_one("Product.get", {"type": "enterable",
                                              "include_fields": "name,description,is_active"})
        products = [product for product in found["products"] if product["is_active"]]
        if len(products) == 1:
            call.redirect(url("/enter_bug.cgi", product=products[0]["name"]))
            return
        call.render("enter_bug_product.html", title="File a bug: choose a product",
                    products=products)


class EntryForm:
    """The new-bug form of one product, as the visitor may fill it."""

    def __init__(self, call, product_name):
        self.call = call
        product, fields, params = call.read(
            ("Product.get", {"names": [product_name], "type": "enterable",
                             "include_fields": "name,description,default_milestone,"
                                               "components.name,components.description,"
                                               "components.is_active,versions.name,"
                                               "versions.is_active,milestones.name,"
                                               "milestones.is_active"}),
            ("Bug.fields", {"include_fields": "name,display_name,type,is_custom,"
                                              "is_on_bug_entry,is_mandatory,values.name,"
                                              "values.is_active"}),
            ("Bugzilla.parameters", {}))
        if not product["products"]:
            raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                               f"There is no product '{product_name}' you may file bugs in.")
        self.product = product["products"][0]
        self.fields = {field["name"]: field for field in fields["fields"]}
        self.params = params["parameters"]
        self._offered = None

    def values(self, name):
        field = self.fields.get(name) or {}
        return [value["name"] for value in field.get("values", [])
                if value.get("is_active", True) and value["name"] != ""]

    def active(self, kind):
        return [item["name"] for item in self.product.get(kind, []) if item.get("is_active", True)]

    def new_bug_groups(self, ticked=(), with_defaults=False):
        """[{"name", "description", "is_on"}] of the groups the form offers
        the visitor (Bug.new_bug_groups: Bugzilla 5.2's enter_bug.cgi), ticked
        when named in `ticked` or, `with_defaults`, Default for the product."""
        if self._offered is None:
            self._offered = self.call.read_one("Bug.new_bug_groups",
                                               {"product": self.product["name"]})
        ticked = set(ticked)
        return [{"name": group["name"], "description": group["description"],
                 "is_on": group["name"] in ticked or (with_defaults and group["is_default"])}
                for group in self._offered["groups"]]

    def mandatory_groups(self):
        """[{"name", "description"}] of the groups every new bug of the
        visitor's in the product is put in."""
        self.new_bug_groups()
        return self._offered["mandatory"]

    def render(self, status=200, error=None, values=None, cloned_bug_id=None, groups=None,
               flags=(), preview=None):
        """The form, filled in with `values`; groups: [{"name",
        "description", "is_on"}] to offer (None: the product's, its Default
        ones ticked); flags: [{"type_id", "name",
        "requestee"}] requests to ask again (a clone's); preview: {"text",
        "is_markdown"} of a description to show as it would be."""
        call, params = self.call, self.params
        agent = call.req.get_header("User-Agent") or ""
        platforms, systems = self.values("rep_platform"), self.values("op_sys")
        defaults = {
            "severity": params.get("defaultseverity", ""),
            "priority": params.get("defaultpriority", ""),
            "platform": params.get("defaultplatform") or guess(agent, _UA_PLATFORM, platforms,
                                                               "All"),
            "op_sys": params.get("defaultopsys") or guess(agent, _UA_OS, systems, "All"),
            "version": (self.active("versions") or [""])[-1],
            "target_milestone": self.product.get("default_milestone", ""),
        }
        values = dict(defaults, **(values or {}))
        custom = [field for field in self.fields.values()
                  if field.get("is_custom") and field.get("is_on_bug_entry")]
        if groups is None:
            groups = self.new_bug_groups(with_defaults=True)
        call.render("enter_bug.html", status=status, title=f"File a bug in {self.product['name']}",
                    product=self.product, form=values, error=error, entry=self, custom=custom,
                    params=params, cloned_bug_id=cloned_bug_id, groups=groups,
                    mandatory_groups=self.mandatory_groups(),
                    flags=list(flags), preview=preview,
                    components=[c for c in self.product.get("components", [])
                                if c.get("is_active", True)])


class PostBug(Page):
    """POST /post_bug.cgi: file the bug (Bug.create), then attach the file
    given with it (Bug.add_attachment)."""

    @responder
    def on_post(self, call):
        call.check_csrf()
        user = require_user(call)
        product = call.field("product")
        params = {"product": product}
        for name in _ENTRY_SHORT + _ENTRY_MORE:
            if name in FIELD_PARAMETERS and not call.setting_is_on(FIELD_PARAMETERS[name]):
                continue          # a field the form did not offer
            if name == "cc":      # a text box, or a menu of people with several chosen
                value = ", ".join(call.fields(name))
            else:
                value = call.field(name).strip() if name != "description" else call.field(name)
            if value.strip():
                params[name] = value
        for name in ("keywords", "depends_on", "blocks", "cc", "alias", "see_also"):
            if name in params:
                params[name] = words(params[name])
        for name, value in call.form.items():
            if name.startswith("cf_"):
                chosen = [v for v in (value if isinstance(value, list) else [value]) if v]
                if chosen:
                    params[name] = chosen if len(chosen) > 1 else chosen[0]
        if call.field("comment_is_private") and user.get("is_insider"):
            params["comment_is_private"] = True
        chosen = posted_groups(call)
        if chosen is not None:
            params["groups"] = chosen
        flags = new_flags(call)
        if flags:
            params["flags"] = flags
        if call.field("comment_is_markdown"):
            params["is_markdown"] = True
        if call.field("preview"):
            # The form again, the description shown as it would be: nothing is stored.
            form = EntryForm(call, product)
            return form.render(values=_typed(call), groups=_groups_again(form, chosen), preview={
                "text": call.field("description"),
                "is_markdown": bool(call.field("comment_is_markdown"))})
        upload = call.files.get("data")
        try:
            bug_id = call.write("Bug.create", params)["id"]
        except ServiceError as error:
            form = EntryForm(call, product)
            form.render(status=errors.http_status(error.code), error=error.message,
                        values=_typed(call), groups=_groups_again(form, chosen))
            return
        notice = "filed"
        if upload is not None:
            try:
                call.write("Bug.add_attachment", attachment_params(call, bug_id, upload))
            except ServiceError:
                notice = "attachment_failed"
        call.redirect(url("/show_bug.cgi", id=bug_id), notice=notice)


def posted_groups(call):
    """The groups a new-bug form asks for: the names ticked, when the form
    says it offered groups (Bugzilla's defined_groups, or groups_shown) or
    names one; None otherwise, and Bug.create then applies the product's
    defaults (as the reference's post_bug.cgi)."""
    if not (call.field("defined_groups") or call.field("groups_shown") or "groups" in call.form):
        return None
    return [name for name in call.fields("groups") if name]


def _groups_again(form, chosen):
    """The form's groups as the visitor left them (`chosen`, or the defaults)."""
    if chosen is None:
        return None
    return form.new_bug_groups(chosen)


def _typed(call):
    """The new-bug form's values as the visitor typed them."""
    return {key: call.field(key) for key in call.form if isinstance(call.form[key], str)}


def attachment_params(call, bug_id, upload):
    """Bug.add_attachment's parameters for a file posted with a form."""
    file_name, sent_type, content = upload
    is_patch = bool(call.field("ispatch"))
    chosen = call.field("contenttypeentry").strip() or call.field("contenttypeselection")
    if not chosen or chosen == "auto":
        chosen = sent_type if sent_type and sent_type != "application/octet-stream" else (
            mimetypes.guess_type(file_name or "")[0] or "application/octet-stream")
    params = {"ids": [bug_id], "data": base64.b64encode(content).decode("ascii"),
              "file_name": (file_name or "file").replace("\\", "/").rsplit("/", 1)[-1],
              "summary": call.field("attachment_description").strip() or file_name or "file",
              "content_type": chosen, "is_patch": is_patch}
    if call.field("attachment_is_private") and (call.user or {}).get("is_insider"):
        params["is_private"] = True
    comment = call.field("attachment_comment")
    if comment.strip():
        params["comment"] = comment
    obsoletes = [value for value in call.fields("obsolete") if value.isdigit()]
    if obsoletes:
        params["obsoletes"] = [int(value) for value in obsoletes]
    return params


__all__ = ["ShowBug", "ProcessBug", "ShowActivity", "EnterBug", "PostBug", "show_error"]
