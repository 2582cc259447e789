"""Administration pages, for the members of editcomponents (products,
components, versions, milestones), editusers (accounts), creategroups
(groups), tweakparams (parameters) and editkeywords (keywords): forms over
the same operations as `Administration over REST`, which decide who may do
what (a visitor outside the group gets their refusal).
"""

from ... import errors
from ...errors import ServiceError
from .base import Page, require_user, responder
from .site import url


ADMIN_AREAS = (
    ("editcomponents", "/editproducts.cgi", "Products",
     "Products with their components, versions and milestones."),
    ("editusers", "/editusers.cgi", "Users", "Accounts: create them, their groups, disable them."),
    ("editcomponents", "/editflagtypes.cgi", "Flag types",
     "Flags for review, approval and the like: where they apply, who may request and grant "
     "them."),
    ("admin", "/editfields.cgi", "Custom fields",
     "Fields of your own on bugs, and the values of drop-down fields."),
    ("creategroups", "/editgroups.cgi", "Groups", "Groups that restrict bugs or give rights."),
    ("tweakparams", "/editparams.cgi", "Parameters", "How this installation behaves."),
    ("tweakparams", "/editoidc.cgi", "Single sign-on",
     "OpenID Connect providers people may sign in with."),
    ("editkeywords", "/editkeywords.cgi", "Keywords", "Keywords bugs may carry."),
    ("admin", "/auditlog.cgi", "Audit log",
     "Who changed which setting, account or catalogue object, and when."),
    ("admin", "/editforges.cgi", "Code forges",
     "Repositories of GitHub, GitLab and Gitea whose commits and pull requests reach bugs."),
)


def require_area(call, group):
    """The visitor's account, when it is in `group`: these pages offer the
    forms of that group's operations, which refuse everyone else. Others get
    the same refusal the operations give (304), before any form is shown.
    Errors: 410 logged out; 304 not in the group."""
    user = require_user(call)
    if group not in user["groups"]:
        raise ServiceError(errors.AUTH_FAILURE, f"Sorry, you aren't a member of the '{group}' "
                                                f"group, and only users with that membership "
                                                f"may use this page.")
    return user


def _flag(call, name):
    return bool(call.field(name))


def _failed(call, error, back):
    call.render("error.html", status=errors.http_status(error.code), title="Not saved",
                message=error.message, code=error.code, back=back)


class AdminIndex(Page):
    """GET /admin.cgi: the administration areas the visitor's groups open."""

    @responder
    def on_get(self, call):
        user = require_user(call)
        groups = set(user["groups"])
        areas = [area for area in ADMIN_AREAS if area[0] in groups or "admin" in groups]
        call.render("admin/index.html", title="Administration", areas=areas)


# Products, components, versions, milestones ----------------------------------------------

class Products(Page):
    """GET /editproducts.cgi: the products; ?action=add: the new product
    form; ?action=edit&product=X: one product with its components, versions
    and milestones. POST: create or change a product."""

    @responder
    def on_get(self, call):
        require_area(call, "editcomponents")
        action, name = call.query.get("action"), call.query.get("product")
        if action == "add":
            call.render("admin/product_new.html", title="New product")
            return
        if name:
            found = call.read_one("Product.get", {"names": [name]})
            if not found["products"]:
                raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                                   f"There is no product '{name}' you may see.")
            call.render("admin/product.html", title=f"Product {name}",
                        product=found["products"][0])
            return
        found = call.read_one("Product.get", {"type": "accessible",
                                              "include_fields": "name,description,is_active,"
                                                                "components.name"})
        call.render("admin/products.html", title="Products", products=found["products"])

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "editcomponents")
        action = call.field("action")
        name = call.field("product")
        try:
            if action == "new":
                call.write("Product.create", {
                    "name": call.field("name"), "description": call.field("description"),
                    "version": call.field("version") or "unspecified",
                    "is_open": True, "has_unconfirmed": _flag(call, "has_unconfirmed")})
                name = call.field("name")
            else:
                params = {"names": [name], "name": call.field("name"),
                          "description": call.field("description"),
                          "is_open": _flag(call, "is_open"),
                          "has_unconfirmed": _flag(call, "has_unconfirmed")}
                if call.field("default_milestone"):
                    params["default_milestone"] = call.field("default_milestone")
                call.write("Product.update", params)
                name = call.field("name") or name
        except ServiceError as error:
            return _failed(call, error, url("/editproducts.cgi", product=name or None,
                                            action=None if name else "add"))
        call.redirect(url("/editproducts.cgi", product=name), notice="saved")


class Components(Page):
    """GET /editcomponents.cgi?product=X&component=Y: a component's form
    (?action=add: a new one); POST: create, change or delete one."""

    @responder
    def on_get(self, call):
        require_area(call, "editcomponents")
        product, component = call.query.get("product"), call.query.get("component")
        if not product:
            call.redirect("/editproducts.cgi")
            return
        found = call.read_one("Product.get", {"names": [product]})
        if not found["products"]:
            raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                               f"There is no product '{product}' you may see.")
        product = found["products"][0]
        current = next((c for c in product["components"] if c["name"] == component), None)
        if component and current is None:
            raise ServiceError(errors.OBJECT_DOES_NOT_EXIST,
                               f"There is no component '{component}' in '{product['name']}'.")
        call.render("admin/component.html", title="Component", product=product,
                    component=current)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "editcomponents")
        product, action = call.field("product"), call.field("action")
        back = url("/editproducts.cgi", product=product)
        fields = {"description": call.field("description"),
                  "default_assignee": call.field("default_assignee"),
                  "default_qa_contact": call.field("default_qa_contact"),
                  # A text box, or a menu of people with several chosen.
                  "default_cc": [login for value in call.fields("default_cc")
                                 for login in value.replace(",", " ").split()]}
        try:
            if action == "new":
                call.write("Component.create", dict(fields, product=product,
                                                    name=call.field("name")))
            elif action == "delete":
                call.write("Component.delete", {"names": [{"product": product,
                                                           "component": call.field("component")}]})
            else:
                call.write("Component.update", dict(
                    fields, names=[{"product": product, "component": call.field("component")}],
                    name=call.field("name"), is_open=_flag(call, "is_open")))
        except ServiceError as error:
            return _failed(call, error, back)
        call.redirect(back, notice="saved")


class Versions(Page):
    """POST /editversions.cgi (and /editmilestones.cgi): add or change a
    version (milestone) of a product; GET goes to the product."""

    kind = "Version"

    @responder
    def on_get(self, call):
        call.redirect(url("/editproducts.cgi", product=call.query.get("product")))

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "editcomponents")
        product = call.field("product")
        back = url("/editproducts.cgi", product=product)
        params = {"name": call.field("name")}
        if call.field("sort_key").strip():
            params["sort_key"] = call.field("sort_key").strip()
        try:
            if call.field("action") == "new":
                call.write(f"{self.kind}.create", dict(params, product=product))
            else:
                call.write(f"{self.kind}.update", dict(params, ids=[call.field("id")],
                                                       is_active=_flag(call, "is_active")))
        except ServiceError as error:
            return _failed(call, error, back)
        call.redirect(back, notice="saved")


class Milestones(Versions):
    kind = "Milestone"


# Users ------------------------------------------------------------------------------

class Users(Page):
    """GET /editusers.cgi: find accounts (?matchstr=...), the new account
    form (?action=add), one account (?action=edit&userid=N); POST: create
    or change one."""

    @responder
    def on_get(self, call):
        require_area(call, "editusers")
        action = call.query.get("action")
        if action == "add":
            call.render("admin/user_new.html", title="New user")
            return
        if action == "edit":
            user_id = call.query.get("userid") or ""
            found, groups = call.read(("User.get", {"ids": [user_id]}), ("Group.get", {}))
            call.render("admin/user.html", title="Edit user", account=found["users"][0],
                        groups=groups["groups"])
            return
        text = (call.query.get("matchstr") or "").strip()
        found = call.read_one("User.get", {"match": [text or "*"], "include_disabled": True,
                                           "limit": 200})
        call.render("admin/users.html", title="Users", accounts=found["users"], matchstr=text)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "editusers")
        action = call.field("action")
        try:
            if action == "new":
                created = call.write("User.create", {
                    "email": call.field("login"), "full_name": call.field("name"),
                    "password": call.field("password")})
                call.redirect(url("/editusers.cgi", action="edit", userid=created["id"]),
                              notice="saved")
                return
            user_id = call.field("userid")
            params = {"ids": [user_id], "full_name": call.field("name"),
                      "email": call.field("login"),
                      "login_denied_text": call.field("disabledtext"),
                      "email_enabled": _flag(call, "email_enabled")}
            if call.field("password"):
                params["password"] = call.field("password")
            shown = call.fields("groups_shown")
            if shown:
                chosen = set(call.fields("groups"))
                params["groups"] = {"add": [g for g in shown if g in chosen],
                                    "remove": [g for g in shown if g not in chosen]}
            call.write("User.update", params)
        except ServiceError as error:
            return _failed(call, error, url("/editusers.cgi", action="edit" if action != "new"
                                            else "add", userid=call.field("userid") or None))
        call.redirect(url("/editusers.cgi", action="edit", userid=user_id), notice="saved")


# Groups -----------------------------------------------------------------------------

class Groups(Page):
    """GET /editgroups.cgi: the groups (?action=add: a new one;
    ?action=changeform&group=N: one); POST: create or change one."""

    @responder
    def on_get(self, call):
        require_area(call, "creategroups")
        action = call.query.get("action")
        if action == "add":
            call.render("admin/group.html", title="New group", group=None)
            return
        if action == "changeform":
            found = call.read_one("Group.get", {"ids": [call.query.get("group") or ""]})
            call.render("admin/group.html", title="Edit group", group=found["groups"][0])
            return
        found = call.read_one("Group.get", {})
        call.render("admin/groups.html", title="Groups", groups=found["groups"])

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "creategroups")
        params = {"name": call.field("name"), "description": call.field("desc"),
                  "user_regexp": call.field("regexp"), "is_active": _flag(call, "isactive")}
        try:
            if call.field("action") == "new":
                group_id = call.write("Group.create", params)["id"]
            else:
                group_id = call.field("group")
                call.write("Group.update", dict(params, ids=[group_id]))
        except ServiceError as error:
            return _failed(call, error, "/editgroups.cgi")
        call.redirect(url("/editgroups.cgi", action="changeform", group=group_id),
                      notice="saved")


# Keywords ---------------------------------------------------------------------------

class Keywords(Page):
    """GET /editkeywords.cgi: the keywords and a form for a new one
    (?action=edit&id=N: one); POST: create or change one."""

    @responder
    def on_get(self, call):
        user = require_user(call)
        if call.query.get("action") == "edit":
            require_area(call, "editkeywords")
            found = call.read_one("Keyword.get", {"ids": [call.query.get("id") or ""]})
            call.render("admin/keyword.html", title="Edit keyword",
                        keyword=found["keywords"][0])
            return
        found = call.read_one("Keyword.get", {})
        call.render("admin/keywords.html", title="Keywords", keywords=found["keywords"],
                    may_edit="editkeywords" in user["groups"])

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "editkeywords")
        params = {"name": call.field("name"), "description": call.field("description")}
        try:
            if call.field("action") == "new":
                call.write("Keyword.create", params)
            else:
                call.write("Keyword.update", dict(params, ids=[call.field("id")],
                                                  is_active=_flag(call, "is_active")))
        except ServiceError as error:
            return _failed(call, error, "/editkeywords.cgi")
        call.redirect("/editkeywords.cgi", notice="saved")


# Code forge repositories (a bugsvc addition) ------------------------------------------

class Forges(Page):
    """GET /editforges.cgi: the registered code forge repositories, a form
    to change or remove each and one for a new one; POST: create, change
    (an empty secret keeps the old one) or remove one."""

    @responder
    def on_get(self, call):
        require_area(call, "admin")
        found = call.read_one("ForgeRepository.get", {})
        call.render("admin/forges.html", title="Code forges",
                    repositories=found["forge_repositories"])

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "admin")
        action = call.field("action")
        params = {"branches": call.field("branches") or "",
                  "bot_account": call.field("bot_account") or "",
                  "hash_references": _flag(call, "hash_references")}
        if call.field("secret"):
            params["secret"] = call.field("secret")
        try:
            if action == "new":
                call.write("ForgeRepository.create",
                           dict(params, forge=call.field("forge"),
                                repository=call.field("repository"),
                                secret=call.field("secret")))
            elif action == "delete":
                call.write("ForgeRepository.delete", {"ids": [call.field("id")]})
            else:
                call.write("ForgeRepository.update", dict(params, ids=[call.field("id")]))
        except ServiceError as error:
            return _failed(call, error, "/editforges.cgi")
        call.redirect("/editforges.cgi", notice="saved")
