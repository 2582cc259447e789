"""The values of select fields (editvalues.cgi) and the status workflow
(editworkflow.cgi), for the members of admin, as Bugzilla's pages: the
fields whose values are edited; one field's values with a form to add one,
to change one (name, sort key, active) and a button to delete one that no
bug has; the matrix of moves between statuses, from a new bug's creation
on, and (?action=edit_comment) the moves that need a comment. Over
FieldValue.* and Workflow.*, which decide who may do what; a refusal comes
back on the form as typed, with the reason."""

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder
from .site import url


# Select fields whose values are not a list of their own (their own pages
# and calls edit them).
_CATALOGUE_SELECTS = ("product", "component", "classification", "version",
                      "target_milestone", "keywords")
_SELECT_KINDS = (2, 3)


def _refusal(error):
    if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
        raise error
    return errors.http_status(error.code), error.message


class Values(Page):
    """GET /editvalues.cgi: the fields with values; ?field=X: its values;
    ?field=X&action=add: a new value; ?field=X&action=edit&value=V: one.
    POST action=new (also add), update, delete; remove (custom fields: a
    value that bugs have is deactivated, else deleted)."""

    @responder
    def on_get(self, call):
        require_area(call, "admin")
        name, action = call.field("field"), call.field("action")
        if not name:
            fields = call.read_one("Bug.fields", {})["fields"]
            call.render("admin/value_fields.html", title="Field values", fields=[
                f for f in fields if f["type"] in _SELECT_KINDS
                and f["name"] not in _CATALOGUE_SELECTS])
            return
        if action == "add":
            return self._form(call, name, {"name": "", "sort_key": "", "is_open": True,
                                           "visibility_value": ""}, new=True)
        if action == "edit":
            current = self._value(call, name, call.field("value"))
            return self._form(call, name, dict(current, old=current["name"]), new=False)
        self._list(call, name)

    def _field(self, call, name):
        found = call.read_one("Bug.fields", {"names": [name]})["fields"]
        return found[0]

    def _value(self, call, name, value):
        answer = call.read_one("FieldValue.get", {"field": name})
        for item in answer["values"]:
            if item["name"] == value:
                return item
        raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                           f"There is no value '{value}' of the field '{name}'.")

    def _list(self, call, name, status=200, error=None):
        answer = call.read_one("FieldValue.get", {"field": name})
        call.render("admin/values.html", status=status, title=f"Values of {answer['field']}",
                    field=self._field(call, answer["field"]), values=answer["values"],
                    error=error)

    def _form(self, call, name, value, new, status=200, error=None):
        answer = call.read_one("FieldValue.get", {"field": name})
        field = self._field(call, answer["field"])
        controllers = []
        if field.get("value_field") and field["is_custom"]:
            controller = call.read_one("Bug.fields", {"names": [field["value_field"]]})
            controllers = [v["name"] for v in controller["fields"][0].get("values") or []
                           if v.get("name")]
        title = (f"Add a value to {field['name']}" if new
                 else f"Value '{value['old']}' of {field['name']}")
        call.render("admin/value.html", status=status, title=title, field=field, value=value,
                    new=new, controllers=controllers, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "admin")
        name, action = call.field("field"), call.field("action")
        if action == "add":
            action = "new"
        typed = {"name": call.field("value") if action == "new" else call.field("name"),
                 "sort_key": call.field("sort_key").strip(),
                 "is_open": call.field("is_open", "1") == "1",
                 "is_active": bool(call.field("is_active")),
                 "visibility_value": call.field("visibility_value"),
                 "old": call.field("value")}
        try:
            if action == "new":
                params = {"field": name, "value": typed["name"]}
                if typed["sort_key"]:
                    params["sort_key"] = typed["sort_key"]
                if call.field("is_open"):
                    params["is_open"] = typed["is_open"]
                if typed["visibility_value"]:
                    params["visibility_value"] = typed["visibility_value"]
                call.write("FieldValue.create", params)
            elif action == "update":
                params = {"field": name, "value": typed["old"], "name": typed["name"],
                          "is_active": typed["is_active"]}
                if typed["sort_key"]:
                    params["sort_key"] = typed["sort_key"]
                call.write("FieldValue.update", params)
            elif action == "delete":
                call.write("FieldValue.delete", {"field": name, "value": call.field("value")})
            elif action == "remove":
                call.write("Field.update", {"names": [name],
                                            "values": {"remove": [call.field("value")]}})
            else:
                raise ServiceError(errors.USER_ERROR, f"There is no action '{action}' here.")
        except ServiceError as error:
            status, message = _refusal(error)
            if action in ("new", "update"):
                return self._form(call, name, typed, new=action == "new", status=status,
                                  error=message)
            return self._list(call, name, status=status, error=message)
        call.redirect(url("/editvalues.cgi", field=name), notice="saved")


class Workflow(Page):
    """GET /editworkflow.cgi: the matrix of moves between statuses;
    ?action=edit_comment: the moves that need a comment. POST action=update
    or update_comment. A move is named by the positions of its two statuses
    in the list the form was made from (0: a new bug), sent with the form,
    so a status renamed meanwhile is not mistaken for another."""

    @responder
    def on_get(self, call):
        require_area(call, "admin")
        workflow = call.read_one("Workflow.get", {})
        moves = {(t["from"] or "", t["to"]): t["comment_required"]
                 for t in workflow["transitions"]}
        self._show(call, workflow, moves, comments=call.field("action") == "edit_comment")

    def _show(self, call, workflow, moves, comments, status=200, error=None):
        statuses = workflow["statuses"]
        closing = call.setting("duplicate_or_move_bug_status")
        call.render("admin/workflow.html", status=status,
                    title=("Comments required on status changes" if comments
                           else "Status workflow"),
                    statuses=statuses, sources=[{"name": "", "is_open": True}] + statuses,
                    moves=moves, comments=comments, closing=closing, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "admin")
        comments = call.field("action") == "update_comment"
        names = [""] + call.fields("status")
        current = call.read_one("Workflow.get", {})
        now = {(t["from"] or "", t["to"]): t["comment_required"]
               for t in current["transitions"]}
        moves = now
        try:
            if comments:
                flagged = self._pairs(call, names, "comment")
                moves = {move: move in flagged for move in now}
            else:
                moves = {move: now.get(move, False) for move in self._pairs(call, names, "move")}
            call.write("Workflow.update", {"transitions": [
                {"from": old or None, "to": new, "comment_required": required}
                for (old, new), required in moves.items()]})
        except ServiceError as error:
            status, message = _refusal(error)
            return self._show(call, current, moves, comments,
                              status=status, error=message)
        call.redirect("/editworkflow.cgi" + ("?action=edit_comment" if comments else ""),
                      notice="saved")

    @staticmethod
    def _pairs(call, names, key):
        """The (from, to) status names of the checked boxes called `key`.
        Errors: 32000 a box that names no status of the form."""
        pairs = set()
        for value in call.fields(key):
            old, _, new = value.partition("_")
            if not (old.isdigit() and new.isdigit() and int(old) < len(names)
                    and 0 < int(new) < len(names)):
                raise ServiceError(errors.USER_ERROR,
                                   "The form names a status it does not list; open the page "
                                   "again.")
            pairs.add((names[int(old)], names[int(new)]))
        return pairs
