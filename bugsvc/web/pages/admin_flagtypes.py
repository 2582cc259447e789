"""The flag types page (editflagtypes.cgi, for the members of
editcomponents and, as Bugzilla's, the administrators of a product, whose
groups hold editcomponents on it through its group controls: they see the
types of their products, change only those types' inclusions and
exclusions of their products when a type also covers other products, and
create types for their products alone): list the bug and attachment flag types,
create one (or a copy of one), change one (its inclusions and exclusions
per product and component, grant and request groups, CC list, sort key,
requestable / specifically requestable / multiplicable, active), delete
one with its flags, or deactivate it, after a confirmation. Over
FlagType.list_all, create, update and delete; a refusal is shown on the
form as typed, with the reason."""

from ... import errors
from ...errors import ServiceError
from .admin import require_product_area
from .base import Page, responder
from .site import url


ANY = "__Any__"
_NOT_FULLY_YOURS = ("Sorry, but the flag type '{}' also applies to products you do not "
                    "administer, so you may not delete it.")
_BOOLEANS = ("is_active", "is_requestable", "is_specifically_requestable", "is_multiplicable")


class FlagTypes(Page):
    """GET /editflagtypes.cgi: the list; ?action=enter&target_type=bug|
    attachment: a new type; ?action=edit&id=N; ?action=copy&id=N: a new type
    filled from type N; ?action=confirmdelete&id=N. POST action=insert,
    update, delete or deactivate."""

    @responder
    def on_get(self, call):
        require_product_area(call)
        action = call.field("action")
        found = call.read_one("FlagType.list_all", {})
        types = found["flagtypes"]
        if action in ("edit", "copy", "confirmdelete"):
            chosen = _chosen(types, call.field("id"))
            if action == "confirmdelete":
                if not chosen["fully_editable"]:
                    call.render("error.html", status=400, title="Not deleted",
                                message=_NOT_FULLY_YOURS.format(chosen["name"]),
                                code=errors.USER_ERROR, back="/editflagtypes.cgi")
                    return
                call.render("admin/flagtype_delete.html", title="Delete the flag type",
                            flag_type=chosen)
                return
            if action == "copy":
                chosen = dict(chosen, id=None, name="", flags=0, fully_editable=True)
            return self._form(call, chosen)
        if action == "enter":
            target = "attachment" if call.field("target_type") == "attachment" else "bug"
            return self._form(call, {
                "id": None, "name": "", "description": "", "target_type": target, "sortkey": 1,
                "cc_list": "", "is_active": True, "is_requestable": True,
                "is_specifically_requestable": True, "is_multiplicable": True,
                "grant_group": None, "request_group": None,
                # Only members of editcomponents may make a type for every product.
                "inclusions": [f"{ANY}:{ANY}"] if found["products"] is None else [],
                "exclusions": [], "flags": 0, "fully_editable": True})
        call.render("admin/flagtypes.html", title="Flag types",
                    bug_types=[t for t in types if t["target_type"] == "bug"],
                    attachment_types=[t for t in types if t["target_type"] == "attachment"])

    def _form(self, call, flag_type, status=200, error=None):
        products, listed = call.read(
            ("Product.get", {"type": "accessible", "include_fields": "name,components.name"}),
            ("FlagType.list_all", {}))
        mine = listed["products"]
        places = [f"{ANY}:{ANY}"] if mine is None else []
        if mine is not None:
            own = {name.lower() for name in mine}
            products["products"] = [p for p in products["products"] if p["name"].lower() in own]
        for product in sorted(products["products"], key=lambda p: p["name"].lower()):
            places.append(f"{product['name']}:{ANY}")
            places.extend(f"{product['name']}:{c['name']}" for c in product["components"])
        for label in flag_type["inclusions"] + flag_type["exclusions"]:
            if label not in places:
                places.append(label)
        # A type's own groups stay offered, so that saving it keeps them.
        groups = listed["groups"] + [flag_type[key] for key in ("grant_group", "request_group")
                                     if flag_type[key] and flag_type[key] not in listed["groups"]]
        title = "Edit the flag type" if flag_type["id"] else "New flag type"
        call.render("admin/flagtype.html", status=status, title=title, flag_type=flag_type,
                    places=places, groups=groups, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_product_area(call)
        action = call.field("action")
        if action in ("delete", "deactivate"):
            try:
                if action == "delete":
                    call.write("FlagType.delete", {"ids": [call.field("id")]})
                else:
                    call.write("FlagType.update", {"ids": [call.field("id")],
                                                   "is_active": False})
            except ServiceError as error:
                if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                    raise
                call.render("error.html", status=errors.http_status(error.code),
                            title="Not deleted" if action == "delete" else "Not deactivated",
                            message=error.message, code=error.code,
                            back="/editflagtypes.cgi")
                return
            call.redirect("/editflagtypes.cgi", notice="saved")
            return
        typed = {
            "id": call.field("id") or None, "name": call.field("name").strip(),
            "description": call.field("description"),
            "target_type": "attachment" if call.field("target_type") == "attachment" else "bug",
            "sortkey": call.field("sortkey").strip(), "cc_list": call.field("cc_list"),
            "grant_group": call.field("grant_group") or None,
            "request_group": call.field("request_group") or None,
            "inclusions": call.fields("inclusions"), "exclusions": call.fields("exclusions"),
            "flags": 0, "fully_editable": True}
        typed.update({name: bool(call.field(name)) for name in _BOOLEANS})
        params = {
            "name": typed["name"], "description": typed["description"],
            "sortkey": typed["sortkey"] or 1,
            "cc_list": [a for a in typed["cc_list"].replace(",", " ").split() if a],
            "grant_group": typed["grant_group"] or "",
            "request_group": typed["request_group"] or "",
            "inclusions": _clusions(typed["inclusions"]),
            "exclusions": _clusions(typed["exclusions"])}
        params.update({name: typed[name] for name in _BOOLEANS})
        try:
            if action == "insert":
                call.write("FlagType.create", dict(params, target_type=typed["target_type"]))
            else:
                stored = next((t for t in call.read_one("FlagType.list_all", {})["flagtypes"]
                               if str(t["id"]) == str(typed["id"])), None)
                if stored is not None and not stored["fully_editable"]:
                    # Its other fields are shown, not sent: only the
                    # inclusions and exclusions of one's products change.
                    typed = dict(stored, inclusions=typed["inclusions"],
                                 exclusions=typed["exclusions"])
                    params = {key: params[key] for key in ("inclusions", "exclusions")}
                call.write("FlagType.update", dict(params, ids=[typed["id"]]))
        except ServiceError as error:
            if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                raise
            return self._form(call, typed, status=errors.http_status(error.code),
                              error=error.message)
        call.redirect(url("/editflagtypes.cgi"), notice="saved")


def _chosen(types, value):
    found = next((t for t in types if str(t["id"]) == str(value)), None)
    if found is None:
        raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                           f"There is no flag type with the id '{value}'.")
    return found


def _clusions(labels):
    """The API form of "Product:Component" labels: ["__Any__"] for every
    product, a product's name for all its components, {product: [components]}."""
    whole, parts = [], {}
    for label in labels:
        product, _, component = label.partition(":")
        if product == ANY:
            whole.append(ANY)
        elif component in ("", ANY):
            whole.append(product)
        else:
            parts.setdefault(product, []).append(component)
    return whole + ([parts] if parts else [])
