"""Administration pages, for the members of editcomponents (products,
components, versions, milestones), editusers (accounts), creategroups
(groups), tweakparams (parameters) and editkeywords (keywords): forms over
the same operations as `Administration over REST`, which decide who may do
what (a visitor outside the group gets their refusal).
"""

from ... import errors
from ...errors import ServiceError
from . import admin_groupcontrols
from .base import Page, require_user, responder
from .site import url


ADMIN_AREAS = (
    ("editcomponents", "/editproducts.cgi", "Products",
     "Products with their components, versions and milestones."),
    ("editclassifications", "/editclassifications.cgi", "Classifications",
     "Groups of products (while the parameter useclassification is on)."),
    ("editusers", "/editusers.cgi", "Users", "Accounts: create them, their groups, disable them."),
    ("editcomponents", "/editflagtypes.cgi", "Flag types",
     "Flags for review, approval and the like: where they apply, who may request and grant "
     "them."),
    ("admin", "/editfields.cgi", "Custom fields",
     "Fields of your own on bugs, and the values of drop-down fields."),
    ("admin", "/editvalues.cgi", "Field values",
     "The values of status, resolution, priority, severity, platform, OS and drop-down fields."),
    ("admin", "/editworkflow.cgi", "Status workflow",
     "Which status a bug may move to from each, and the moves that need a comment."),
    ("creategroups", "/editgroups.cgi", "Groups", "Groups that restrict bugs or give rights."),
    ("tweakparams", "/editparams.cgi", "Parameters", "How this installation behaves."),
    ("tweakparams", "/editoidc.cgi", "Single sign-on",
     "OpenID Connect providers people may sign in with."),
    ("editkeywords", "/editkeywords.cgi", "Keywords", "Keywords bugs may carry."),
    ("editcomponents", "/sanitycheck.cgi", "Sanity check",
     "Checks of the database, with repairs for administrators."),
    ("admin", "/auditlog.cgi", "Audit log",
     "Who changed which setting, account or catalogue object, and when."),
    ("bz_sudoers", "/relogin.cgi?action=prepare-sudo", "Act as another user",
     "See and do what another user may, for a while, with a reason they are mailed."),
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


def require_product_area(call, product=None):
    """The visitor's account, when it may administer products: a member of
    editcomponents, or one whose groups hold editcomponents on some product
    through its group controls (then only on those: another `product` is
    refused as Bugzilla's product_admin_denied, 32000).
    Errors: 410 logged out; 304 neither; 32000 that product is not its."""
    user = call.whoami()
    if user is None or "editcomponents" in user["groups"]:
        return require_area(call, "editcomponents")
    mine = _product_rights(call)["editcomponents"]
    if not mine:
        return require_area(call, "editcomponents")
    if product and product.lower() not in {name.lower() for name in mine}:
        raise ServiceError(errors.USER_ERROR, "You are not allowed to edit properties of "
                                              f"product '{product}'.")
    return user


def _product_rights(call):
    """The products whose group controls give the visitor each right."""
    return call.read_one("User.whoami", {})["product_rights"]


def _administered(call, user, products):
    """Of `products` (dicts with a name), those `user` may administer."""
    if "editcomponents" in user["groups"]:
        return products
    mine = {name.lower() for name in _product_rights(call)["editcomponents"]}
    return [product for product in products if product["name"].lower() in mine]


def _flag(call, name):
    return bool(call.field(name))


def _refused(error):
    """(status, the reason with its code) of a refusal shown on the form;
    a refusal of the visitor themself (signed out, not in the group) goes
    to its own page."""
    if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
        raise error
    return errors.http_status(error.code), f"{error.message} (error {error.code})"


def _failed(call, error, back):
    call.render("error.html", status=errors.http_status(error.code), title="Not saved",
                message=error.message, code=error.code, back=back)


class AdminIndex(Page):
    """GET /admin.cgi: the administration areas the visitor's groups open."""

    @responder
    def on_get(self, call):
        user = require_user(call)
        groups = set(user["groups"])
        if "editcomponents" not in groups and _product_rights(call)["editcomponents"]:
            groups.add("editcomponents on products")
        areas = [area for area in ADMIN_AREAS if area[0] in groups or "admin" in groups
                 or (area[1] in ("/editproducts.cgi", "/editflagtypes.cgi")
                     and "editcomponents on products" in groups)]
        call.render("admin/index.html", title="Administration", areas=areas)


# Products, components, versions, milestones ----------------------------------------------

class Products(Page):
    """GET /editproducts.cgi: the products; ?action=add: the new product
    form; ?action=edit&product=X: one product with its components, versions
    and milestones; ?action=del&product=X: the question before deleting it;
    ?action=editgroupcontrols&product=X: its group controls. POST: create,
    change or delete a product, or change its group controls."""

    @responder
    def on_get(self, call):
        action, name = call.query.get("action"), call.query.get("product")
        user = require_product_area(call, name)
        if action == "add":
            call.render("admin/product_new.html", title="New product")
            return
        if action == "editgroupcontrols" and name:
            return admin_groupcontrols.show(call, name)
        if action == "del" and name:
            return self._confirm_delete(call, name)
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
        call.render("admin/products.html", title="Products",
                    products=_administered(call, user, found["products"]))

    def _confirm_delete(self, call, name, status=200, error=None):
        found = call.read_one("Product.get", {"names": [name]})
        if not found["products"]:
            raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                               f"There is no product '{name}' you may see.")
        impact = call.read_one("Product.deletion", {"product": name})
        call.render("admin/product_delete.html", status=status,
                    title=f"Delete the product {found['products'][0]['name']}?",
                    product=found["products"][0], impact=impact, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_product_area(call)
        action = call.field("action")
        name = call.field("product")
        if action == "updategroupcontrols":
            return admin_groupcontrols.save(call)
        if action == "delete":
            try:
                call.write("Product.delete", {"names": [name]})
            except ServiceError as error:
                if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                    raise
                return self._confirm_delete(call, name, status=errors.http_status(error.code),
                                            error=error.message)
            call.redirect("/editproducts.cgi", notice="saved")
            return
        typed = {"name": call.field("name"), "description": call.field("description"),
                 "version": call.field("version"), "is_active": _flag(call, "is_open"),
                 "has_unconfirmed": _flag(call, "has_unconfirmed"),
                 "default_milestone": call.field("default_milestone")}
        try:
            if action == "new":
                call.write("Product.create", {
                    "name": typed["name"], "description": typed["description"],
                    "version": typed["version"] or "unspecified",
                    "is_open": True, "has_unconfirmed": typed["has_unconfirmed"]})
                name = typed["name"]
            else:
                params = {"names": [name], "name": typed["name"],
                          "description": typed["description"],
                          "is_open": typed["is_active"],
                          "has_unconfirmed": typed["has_unconfirmed"]}
                if typed["default_milestone"]:
                    params["default_milestone"] = typed["default_milestone"]
                call.write("Product.update", params)
                name = typed["name"] or name
        except ServiceError as error:
            status, message = _refused(error)
            if action == "new":
                call.render("admin/product_new.html", status=status, title="New product",
                            typed=typed, error=message)
                return
            found = call.read_one("Product.get", {"names": [name]})
            if not found["products"]:
                raise
            call.render("admin/product.html", status=status, title=f"Product {name}",
                        product=dict(found["products"][0], **{
                            key: typed[key] for key in ("name", "description", "is_active",
                                                        "has_unconfirmed",
                                                        "default_milestone")}),
                        old_name=name, error=message)
            return
        call.redirect(url("/editproducts.cgi", product=name), notice="saved")


class Components(Page):
    """GET /editcomponents.cgi?product=X&component=Y: a component's form
    (?action=add: a new one); POST: create, change or delete one."""

    @responder
    def on_get(self, call):
        product, component = call.query.get("product"), call.query.get("component")
        require_product_area(call, product)
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
        if current and call.query.get("action") == "del":
            return self._confirm_delete(call, product, current)
        call.render("admin/component.html", title="Component", product=product,
                    component=current)

    def _confirm_delete(self, call, product, component, status=200, error=None):
        impact = call.read_one("Product.deletion", {"product": product["name"],
                                                    "component": component["name"]})
        call.render("admin/component_delete.html", status=status,
                    title=f"Delete the component {component['name']}?", product=product,
                    component=component, impact=impact, error=error)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_product_area(call)
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
            status, message = _refused(error)
            found = call.read_one("Product.get", {"names": [product]})
            if not found["products"]:
                raise
            current = next((c for c in found["products"][0]["components"]
                            if c["name"] == call.field("component")), None)
            if action == "delete" and current:
                return self._confirm_delete(call, found["products"][0], current, status=status,
                                            error=message)
            typed = None
            if action != "delete":
                typed = dict(current or {}, name=call.field("name"),
                             description=fields["description"],
                             default_assigned_to=fields["default_assignee"],
                             default_qa_contact=fields["default_qa_contact"],
                             default_cc=fields["default_cc"],
                             is_active=_flag(call, "is_open"))
            call.render("admin/component.html", status=status, title="Component",
                        product=found["products"][0], component=current, typed=typed,
                        error=message)
            return
        call.redirect(back, notice="saved")


class Versions(Page):
    """GET /editversions.cgi?product=X (and /editmilestones.cgi): the
    product's versions (milestones), each with a form to change it and a
    button to delete it, and a form for a new one. POST action=new, update,
    delete; a refusal comes back on the page as typed, with the reason."""

    kind = "Version"
    path = "/editversions.cgi"

    @responder
    def on_get(self, call):
        product = call.field("product")
        require_product_area(call, product)
        if not product:
            call.redirect("/editproducts.cgi")
            return
        self._show(call, product)

    def _show(self, call, name, status=200, error=None, typed=None):
        found = call.read_one("Product.get", {"names": [name]})
        if not found["products"]:
            raise ServiceError(errors.PRODUCT_ACCESS_DENIED,
                               f"There is no product '{name}' you may see.")
        product = found["products"][0]
        noun = self.kind.lower()
        items = product["versions" if self.kind == "Version" else "milestones"]
        call.render("admin/versions.html", status=status,
                    title=f"{self.kind}s of {product['name']}", product=product, kind=noun,
                    items=items, action=self.path, error=error, typed=typed or {},
                    default=product.get("default_milestone") if self.kind == "Milestone"
                    else None)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_product_area(call)
        product, action = call.field("product"), call.field("action")
        typed = {"action": action, "id": call.field("id"), "name": call.field("name"),
                 "sort_key": call.field("sort_key").strip(),
                 "is_active": _flag(call, "is_active")}
        params = {"name": typed["name"]}
        if typed["sort_key"]:
            params["sort_key"] = typed["sort_key"]
        try:
            if action == "new":
                call.write(f"{self.kind}.create", dict(params, product=product))
            elif action == "delete":
                call.write(f"{self.kind}.delete", {"ids": [typed["id"]]})
            else:
                call.write(f"{self.kind}.update", dict(params, ids=[typed["id"]],
                                                       is_active=typed["is_active"]))
        except ServiceError as error:
            if error.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                raise
            return self._show(call, product, status=errors.http_status(error.code),
                              error=error.message, typed=typed)
        call.redirect(url(self.path, product=product), notice="saved")


class Milestones(Versions):
    kind = "Milestone"
    path = "/editmilestones.cgi"


# Users ------------------------------------------------------------------------------

def _users_area(call):
    """True when the visitor is in editusers; False when it is not but may
    bless some group (Bugzilla's editusers.cgi lets it change the
    membership of those groups, nothing else of an account).
    Errors: 410 logged out; 304 neither."""
    user = require_user(call)
    if "editusers" in user["groups"]:
        return True
    try:
        blessable = call.read_one("Group.get", {})["groups"]
    except ServiceError as error:
        if error.code != errors.GROUP_CANNOT_VIEW:
            raise
        blessable = []
    if "creategroups" in user["groups"] or not blessable:
        require_area(call, "editusers")
    return False


class Users(Page):
    """GET /editusers.cgi: find accounts (?matchstr=...), the new account
    form (?action=add), one account (?action=edit&userid=N); POST: create
    or change one. Members of editusers do all of it; those who may bless
    a group find accounts and change their membership of such groups."""

    @responder
    def on_get(self, call):
        full = _users_area(call)
        action = call.query.get("action")
        if action == "add":
            if not full:
                require_area(call, "editusers")
            call.render("admin/user_new.html", title="New user")
            return
        if action == "edit":
            _account_page(call, call.query.get("userid") or "", full=full)
            return
        text = (call.query.get("matchstr") or "").strip()
        found = call.read_one("User.find_to_edit", {"match": [text or "*"],
                                                    "include_disabled": True, "limit": 200})
        call.render("admin/users.html", title="Users", accounts=found["users"], matchstr=text)

    @responder
    def on_post(self, call):
        call.check_csrf()
        full = _users_area(call)
        action = call.field("action")
        try:
            if not full and action != "update":
                require_area(call, "editusers")
            if action == "new":
                created = call.write("User.create", {
                    "email": call.field("login"), "full_name": call.field("name"),
                    "password": call.field("password")})
                call.redirect(url("/editusers.cgi", action="edit", userid=created["id"]),
                              notice="saved")
                return
            user_id = call.field("userid")
            if action == "reset_second_factor":
                answer = call.write("SecondFactor.reset", {"user_id": user_id})
                call.redirect(url("/editusers.cgi", action="edit", userid=user_id),
                              notice="second_factor_reset" if answer["reset"]
                              else "second_factor_none")
                return
            params = {"ids": [user_id]}
            if full:
                params.update({"full_name": call.field("name"), "email": call.field("login"),
                               "login_denied_text": call.field("disabledtext"),
                               "email_enabled": _flag(call, "email_enabled")})
            if full and call.field("password"):
                params["password"] = call.field("password")
            shown = call.fields("groups_shown")
            if shown:
                chosen = set(call.fields("groups"))
                params["groups"] = {"add": [g for g in shown if g in chosen],
                                    "remove": [g for g in shown if g not in chosen]}
            call.write("User.update", params)
        except ServiceError as error:
            status, message = _refused(error)
            typed = {"login": call.field("login"), "name": call.field("name"),
                     "disabledtext": call.field("disabledtext"),
                     "email_enabled": _flag(call, "email_enabled")}
            if action == "new":
                call.render("admin/user_new.html", status=status, title="New user",
                            typed=typed, error=message)
                return
            if call.fields("groups_shown"):
                typed["groups"] = call.fields("groups")
            _account_page(call, call.field("userid"), status=status, typed=typed, error=message,
                          full=full)
            return
        call.redirect(url("/editusers.cgi", action="edit", userid=user_id), notice="saved")


def _account_page(call, user_id, status=200, typed=None, error=None, full=True):
    """The page of account `user_id` (its fields, groups and second factor;
    to a blesser outside editusers (`full` false), the groups it may bless
    alone), with the values `typed` and the refusal `error` when a change
    was refused."""
    found, groups = call.read(("User.find_to_edit", {"ids": [user_id]}), ("Group.get", {}))
    account = found["users"][0]
    second_factor = (call.read_one("SecondFactor.get", {"user_id": account["id"]}) if full
                     else None)
    call.render("admin/user.html", status=status, title="Edit user", account=account,
                groups=groups["groups"], second_factor=second_factor, typed=typed, error=error,
                full=full)


# Groups -----------------------------------------------------------------------------

class Groups(Page):
    """GET /editgroups.cgi: the groups (?action=add: a new one;
    ?action=changeform&group=N: one, with the groups whose members are its
    members); POST: create or change one (action=inheritance: set the
    groups whose members are its members)."""

    @responder
    def on_get(self, call):
        require_area(call, "creategroups")
        action = call.query.get("action")
        if action == "add":
            call.render("admin/group.html", title="New group", group=None)
            return
        if action == "changeform":
            self._group_page(call, call.query.get("group") or "")
            return
        found = call.read_one("Group.get", {})
        call.render("admin/groups.html", title="Groups", groups=found["groups"])

    @staticmethod
    def _group_page(call, group_id, status=200, **values):
        """One group's page: its form and the groups whose members are its
        members (inheritance), chosen among every other group."""
        found, inherited, every = call.read(("Group.get", {"ids": [group_id]}),
                                            ("Group.inheritance", {"ids": [group_id]}),
                                            ("Group.get", {}))
        group = found["groups"][0]
        call.render("admin/group.html", status=status, title="Edit group", group=group,
                    inheritance=inherited["groups"][0],
                    others=[g["name"] for g in every["groups"] if g["id"] != group["id"]],
                    every=[g["name"] for g in every["groups"]], **values)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "creategroups")
        if call.field("action") == "inheritance":
            group_id = call.field("group")
            chosen = call.fields("member_groups")
            params = {"id": group_id, "member_groups": chosen}
            typed = {}
            if call.field("grants"):
                # The form with the bless and visibility grants sends them all.
                typed = {"chosen_bless": call.fields("bless_groups"),
                         "chosen_visible": call.fields("visible_to")}
                params.update(bless_groups=typed["chosen_bless"],
                              visible_to=typed["chosen_visible"])
            try:
                call.write("Group.update_inheritance", params)
            except ServiceError as error:
                status, message = _refused(error)
                self._group_page(call, group_id, status=status, inheritance_error=message,
                                 chosen=chosen, **typed)
                return
            call.redirect(url("/editgroups.cgi", action="changeform", group=group_id),
                          notice="saved")
            return
        params = {"name": call.field("name"), "description": call.field("desc"),
                  "user_regexp": call.field("regexp"), "is_active": _flag(call, "isactive")}
        try:
            if call.field("action") == "new":
                group_id = call.write("Group.create", params)["id"]
            else:
                group_id = call.field("group")
                call.write("Group.update", dict(params, ids=[group_id]))
        except ServiceError as error:
            status, message = _refused(error)
            group = None
            if call.field("action") != "new":
                group = {"id": call.field("group")}
            call.render("admin/group.html", status=status,
                        title="New group" if group is None else "Edit group", group=group,
                        typed=dict(params, description=params["description"]), error=message)
            return
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
            status, message = _refused(error)
            typed = dict(params, is_active=_flag(call, "is_active"))
            if call.field("action") == "new":
                found = call.read_one("Keyword.get", {})
                call.render("admin/keywords.html", status=status, title="Keywords",
                            keywords=found["keywords"], may_edit=True, typed=typed,
                            error=message)
            else:
                call.render("admin/keyword.html", status=status, title="Edit keyword",
                            keyword=dict(typed, id=call.field("id")), error=message)
            return
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
