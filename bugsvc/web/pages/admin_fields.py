"""The custom fields page (editfields.cgi), for the members of admin, as
Bugzilla's: create every kind of custom field Bugzilla's page offers, show
it only for one value of another field, on the new-bug form or not, make it
obsolete. Their values are edited on editvalues.cgi (admin_workflow.py).
Over Bug.fields, Field.create and Field.update; a refusal is shown on the
form as typed, with the reason."""

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder


# The kinds of field the page creates (code, label), as Bugzilla's page offers them.
KINDS = ((1, "Free text"), (4, "Large text box"), (2, "Drop down"), (3, "Multiple-selection box"),
         (5, "Date/time"), (9, "Date"), (6, "Bug ID"), (10, "Integer"))
KIND_LABELS = dict(KINDS + ((7, "Bug URLs"), (8, "Keywords")))
SELECT_KINDS = (2, 3)


def _fields(call):
    return call.read_one("Bug.fields", {})["fields"]


# Fields whose values name nothing on their own (the same name in several
# products) or that cannot control another field.
_NOT_CONTROLLERS = ("keywords", "bug_status", "resolution", "component", "version",
                    "target_milestone")


def _controllers(call, fields):
    """(field name, value) pairs a field may be shown for: the products and
    the values of every other select field."""
    products = call.read_one("Product.get", {"type": "accessible", "include_fields": "name"})
    pairs = [("product", p["name"]) for p in sorted(products["products"],
                                                    key=lambda p: p["name"].lower())]
    for field in fields:
        if field.get("values") is not None and field["name"] not in _NOT_CONTROLLERS:
            pairs.extend((field["name"], value["name"]) for value in field["values"]
                         if value.get("name"))
    return pairs


def _refusal(call, error):
    if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
        raise error
    return errors.http_status(error.code), error.message


class Fields(Page):
    """GET /editfields.cgi: the custom fields; ?action=add: a new one;
    ?action=edit&name=cf_x: one. POST action=new or update."""

    @responder
    def on_get(self, call):
        require_area(call, "admin")
        fields = _fields(call)
        action = call.field("action")
        if action == "add":
            return self._form(call, fields, {
                "name": "cf_", "display_name": "", "type": 1, "sort_key": "",
                "is_on_bug_entry": False, "is_mandatory": False,
                "visibility_field": None, "visibility_values": []}, new=True)
        if action == "edit":
            name = call.field("name")
            found = call.read_one("Bug.fields", {"names": [name]})["fields"]
            if not found or not found[0]["is_custom"]:
                raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                                   f"There is no custom field named '{name}'.")
            return self._form(call, fields, dict(found[0], sort_key=""), new=False)
        call.render("admin/fields.html", title="Custom fields",
                    fields=[f for f in fields if f["is_custom"]], kinds=KIND_LABELS,
                    select_kinds=SELECT_KINDS)

    def _form(self, call, fields, field, new, status=200, error=None):
        call.render("admin/field.html", status=status,
                    title="New custom field" if new else f"Custom field {field['name']}",
                    field=field, new=new, kinds=KINDS, kind_labels=KIND_LABELS,
                    controllers=_controllers(call, [f for f in fields
                                                    if f["name"] != field["name"]]),
                    error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "admin")
        action = call.field("action")
        new = action == "new"
        if action == "obsolete":
            # Its own button: the form cannot tell whether a field is obsolete now.
            call.write("Field.update", {"names": [call.field("name")], "is_obsolete": True})
            call.redirect("/editfields.cgi", notice="saved")
            return
        shown_for = [value.partition(":") for value in call.fields("visibility")]
        typed = {
            "name": call.field("name").strip(), "display_name": call.field("display_name"),
            "type": int(call.field("type")) if call.field("type").isdigit() else 1,
            "sort_key": call.field("sort_key").strip(),
            "is_on_bug_entry": bool(call.field("is_on_bug_entry")),
            "is_mandatory": bool(call.field("is_mandatory")),
            "visibility_field": shown_for[0][0] if shown_for else None,
            "visibility_values": [value for _, _, value in shown_for]}
        params = {"display_name": typed["display_name"],
                  "is_on_bug_entry": typed["is_on_bug_entry"],
                  "is_mandatory": typed["is_mandatory"]}
        if typed["sort_key"]:
            params["sort_key"] = typed["sort_key"]
        try:
            if len({name for name, _, _ in shown_for}) > 1:
                raise ServiceError(errors.USER_ERROR, "A field can be shown for values of one "
                                                      "other field only; choose values of one.")
            if new:
                params.update(name=typed["name"], type=typed["type"])
                if shown_for:
                    params.update(visibility_field=typed["visibility_field"],
                                  visibility_values=typed["visibility_values"])
                call.write("Field.create", params)
            else:
                params.update(names=[typed["name"]],
                              visibility_field=typed["visibility_field"] or "",
                              visibility_values=typed["visibility_values"])
                call.write("Field.update", params)
        except ServiceError as error:
            status, message = _refusal(call, error)
            return self._form(call, _fields(call), typed, new, status=status, error=message)
        call.redirect("/editfields.cgi", notice="saved")
