"""A product's group controls (editproducts.cgi?action=editgroupcontrols&
product=X), for the members of editcomponents, as Bugzilla's page: for each
bug group, whether bugs of the product may, must or by default are
restricted to it, for the group's members and for everyone else (NA,
Shown, Default, Mandatory), whether filing bugs (entry) or editing them
(canedit) needs membership, and whether members hold editcomponents,
editbugs or canconfirm on this product alone. Over Product.get and Product.update's
group_controls, which check the combinations; a refusal comes back on the
form as typed, with the reason."""

from ... import errors
from ...errors import ServiceError
from .site import url


CONTROLS = ("NA", "Shown", "Default", "Mandatory")
# The boxes of each group: membership needed to file or edit bugs, and the
# rights its members hold on this product alone.
FLAGS = ("entry", "canedit", "editcomponents", "editbugs", "canconfirm")
_UNCONTROLLED = {"membercontrol": "NA", "othercontrol": "NA", **{flag: False for flag in FLAGS}}


def _refusal(error):
    if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
        raise error
    return errors.http_status(error.code), error.message


def _product(call, name):
    found = call.read_one("Product.get", {"names": [name],
                                          "include_fields": "name,group_controls"})
    if not found["products"]:
        raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                           f"There is no product '{name}' you may see.")
    return found["products"][0]


def _bug_groups(call, controlled):
    """The active bug groups the form offers: every one when the visitor may
    list groups (creategroups, editusers), else those that control the
    product now."""
    try:
        groups = call.read_one("Group.get", {})["groups"]
    except ServiceError as error:
        if error.code != errors.GROUP_CANNOT_VIEW:
            raise
        return sorted(controlled, key=str.lower)
    return [g["name"] for g in groups if g.get("is_bug_group") and g.get("is_active")
            or g["name"] in controlled]


def show(call, name, typed=None, status=200, error=None):
    """Render the form of product `name`; typed: {group: settings} as sent."""
    product = _product(call, name)
    controls = product.get("group_controls") or {}
    rows = []
    for group in _bug_groups(call, controls):
        settings = (typed or controls).get(group) or dict(_UNCONTROLLED)
        rows.append(dict(settings, group=group))
    call.render("admin/group_controls.html", status=status,
                title=f"Group controls of {product['name']}", product=product, rows=rows,
                controls=CONTROLS, error=error)


def save(call):
    """POST action=updategroupcontrols: the form's rows, each group's four
    controls (a group left NA/NA with no box ticked stops controlling it)."""
    name = call.field("product")
    typed = {}
    for group in call.fields("group"):
        settings = {"membercontrol": call.field(f"membercontrol_{group}", "NA"),
                    "othercontrol": call.field(f"othercontrol_{group}", "NA")}
        for flag in FLAGS:
            settings[flag] = bool(call.field(f"{flag}_{group}"))
        typed[group] = settings
    requested = {group: (None if settings == _UNCONTROLLED else settings)
                 for group, settings in typed.items()}
    try:
        call.write("Product.update", {"names": [name], "group_controls": requested})
    except ServiceError as error:
        status, message = _refusal(error)
        return show(call, name, typed=typed, status=status, error=message)
    call.redirect(url("/editproducts.cgi", action="editgroupcontrols", product=name),
                  notice="saved")
