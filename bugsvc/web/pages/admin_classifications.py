"""The classifications page (editclassifications.cgi), for the members of
editclassifications while the parameter useclassification is on, as
Bugzilla's: the classifications with their products; add one, change its
name, description and sort key, delete one that holds no product (never
Unclassified), and reclassify (?action=reclassify: move products into it,
or back to Unclassified). Over Classification.* and Product.update; a
refusal comes back on the form as typed, with the reason."""

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder
from .site import url


DEFAULT = "Unclassified"


def _refusal(error):
    if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
        raise error
    return errors.http_status(error.code), error.message


def _require(call):
    """The visitor, in editclassifications, while classifications are used.
    Errors: 410, 304; 900 useclassification is off (Bugzilla's page is
    closed then too)."""
    require_area(call, "editclassifications")
    if not call.setting_is_on("useclassification"):
        raise ServiceError(errors.CLASSIFICATIONS_DISABLED,
                           "Classifications are not in use: turn the parameter "
                           "useclassification on first.")


def _all(call):
    """Every classification with its products, in list order."""
    field = call.read_one("Bug.fields", {"names": ["classification"]})["fields"][0]
    names = [value["name"] for value in field.get("values") or []]
    if not names:
        return []
    found = call.read_one("Classification.get", {"names": names})["classifications"]
    order = {name: position for position, name in enumerate(names)}
    return sorted(found, key=lambda c: order.get(c["name"], len(order)))


def _one(call, name):
    for classification in _all(call):
        if classification["name"] == name:
            return classification
    raise ServiceError(errors.OBJECT_DOES_NOT_EXIST, f"There is no classification '{name}'.")


class Classifications(Page):
    """GET /editclassifications.cgi: the list; ?action=add: a new one;
    ?action=edit&classification=X: one; ?action=reclassify&classification=X:
    its products. POST action=new, update, delete, reclassify."""

    @responder
    def on_get(self, call):
        _require(call)
        action, name = call.field("action"), call.field("classification")
        if action == "add":
            return self._form(call, {"name": "", "description": "", "sort_key": ""}, new=True)
        if action == "edit":
            current = _one(call, name)
            return self._form(call, dict(current, old=current["name"]), new=False)
        if action == "reclassify":
            return self._reclassify(call, name)
        self._list(call)

    def _list(self, call, status=200, error=None):
        call.render("admin/classifications.html", status=status, title="Classifications",
                    classifications=_all(call), default=DEFAULT, error=error)

    def _form(self, call, classification, new, status=200, error=None):
        call.render("admin/classification.html", status=status,
                    title=("New classification" if new
                           else f"Classification {classification['old']}"),
                    classification=classification, new=new, error=error)

    def _reclassify(self, call, name, status=200, error=None):
        everything = _all(call)
        this = next((c for c in everything if c["name"] == name), None)
        if this is None:
            raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                               f"There is no classification '{name}'.")
        others = [(c["name"], p["name"]) for c in everything if c["name"] != name
                  for p in c["products"]]
        call.render("admin/reclassify.html", status=status, title=f"Reclassify {name}",
                    classification=this, others=others, default=DEFAULT, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        _require(call)
        action = call.field("action")
        typed = {"name": call.field("name"), "description": call.field("description"),
                 "sort_key": call.field("sort_key").strip(),
                 "old": call.field("classification")}
        try:
            params = {"name": typed["name"], "description": typed["description"]}
            if typed["sort_key"]:
                params["sort_key"] = typed["sort_key"]
            if action == "new":
                call.write("Classification.create", params)
            elif action == "update":
                call.write("Classification.update", dict(params, names=[typed["old"]]))
            elif action == "delete":
                call.write("Classification.delete", {"names": [typed["old"]]})
            elif action == "reclassify":
                self._move(call, typed["old"])
                call.redirect(url("/editclassifications.cgi", action="reclassify",
                                  classification=typed["old"]), notice="saved")
                return
            else:
                raise ServiceError(errors.USER_ERROR, f"There is no action '{action}' here.")
        except ServiceError as error:
            status, message = _refusal(error)
            if action in ("new", "update"):
                return self._form(call, typed, new=action == "new", status=status,
                                  error=message)
            if action == "reclassify":
                return self._reclassify(call, typed["old"], status=status, error=message)
            return self._list(call, status=status, error=message)
        call.redirect("/editclassifications.cgi", notice="saved")

    @staticmethod
    def _move(call, name):
        """Move the products chosen in `prodlist` into classification `name`
        and those chosen in `myprodlist` back to Unclassified."""
        into, out = call.fields("prodlist"), call.fields("myprodlist")
        if not into and not out:
            raise ServiceError(errors.OBJECT_NOT_SPECIFIED, "Choose the products to move.")
        if into:
            call.write("Product.update", {"names": into, "classification": name})
        if out:
            call.write("Product.update", {"names": out, "classification": DEFAULT})
