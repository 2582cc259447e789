"""The RPC method table: one line per method of the reference's XML-RPC and
JSON-RPC interface.

Most methods name the REST call they are ("GET /bug/{}"): they run the
service function that REST route runs, under its login rule, transaction
mode and include/exclude shapes, so both transports keep the same rules.
Placeholder names do not matter ("/bug/{}" matches "/bug/{id_or_alias}").
Methods that REST does not serve name their service function and rules.

No service is imported here: a method is resolved when it is called, and
one whose route or service does not exist (yet) answers the unknown-method
fault (-32601) then.
"""

from dataclasses import dataclass

from ..rest.routing import OPTIONAL, REQUIRED, EXEMPT


@dataclass(frozen=True)
class Method:
    """One RPC method.

    name: 'Class.method' as clients call it.
    rest: 'VERB /template' of the REST route whose service and rules it
    shares; or, when None, the method's own:
      service: 'module.function' in bugsvc.services; login: a login rule of
      rest.routing; write: opens a write transaction.
    via_get: may be called by JSON-RPC over GET (it only reads; the
    reference's READ_ONLY list). Every other method is POST only (32610).
    binary_in: parameters that carry file content; XML-RPC sends them as
    <base64> (a plain <string> is taken as the content itself).
    binary_out: result keys sent as <base64> over XML-RPC.
    """
    name: str
    rest: str | None = None
    service: str | None = None
    login: str = OPTIONAL
    write: bool = True
    via_get: bool = False
    binary_in: tuple = ()
    binary_out: tuple = ()


def _read(name, rest, **options):
    return Method(name, rest=rest, via_get=True, **options)


def _write(name, rest, **options):
    return Method(name, rest=rest, **options)


METHODS = [
    # Instance information
    _read("Bugzilla.version", "GET /version"),
    _read("Bugzilla.extensions", "GET /extensions"),
    _read("Bugzilla.timezone", "GET /timezone"),
    _read("Bugzilla.time", "GET /time"),
    _read("Bugzilla.parameters", "GET /parameters"),
    _read("Bugzilla.last_audit_time", "GET /last_audit_time"),
    # Bugs
    _read("Bug.get", "GET /bug/{}"),
    _read("Bug.search", "GET /bug"),
    _write("Bug.create", "POST /bug"),
    _write("Bug.update", "PUT /bug/{}"),
    _read("Bug.history", "GET /bug/{}/history"),
    _read("Bug.possible_duplicates", "GET /bug/possible_duplicates"),
    _read("Bug.fields", "GET /field/bug"),
    _read("Bug.legal_values", "GET /field/bug/{}/values"),
    _read("Bug.comments", "GET /bug/{}/comment"),
    _write("Bug.add_comment", "POST /bug/{}/comment"),
    _read("Bug.search_comment_tags", "GET /bug/comment/tags/{}"),
    _write("Bug.update_comment_tags", "PUT /bug/comment/{}/tags"),
    _read("Bug.attachments", "GET /bug/{}/attachment", binary_out=("data",)),
    _write("Bug.add_attachment", "POST /bug/{}/attachment", binary_in=("data",)),
    _write("Bug.update_attachment", "PUT /bug/attachment/{}"),
    Method("Bug.update_see_also", service="bug.update_see_also", login=REQUIRED),
    Method("Bug.update_tags", service="bug.update_tags", login=REQUIRED),
    # Last visits
    _read("BugUserLastVisit.get", "GET /bug_user_last_visit"),
    _write("BugUserLastVisit.update", "POST /bug_user_last_visit"),
    # Products, components, classifications
    _read("Product.get", "GET /product"),
    _read("Product.get_accessible_products", "GET /product_accessible"),
    _read("Product.get_enterable_products", "GET /product_enterable"),
    _read("Product.get_selectable_products", "GET /product_selectable"),
    _write("Product.create", "POST /product"),
    _write("Product.update", "PUT /product/{}"),
    _write("Component.create", "POST /component"),
    _write("Component.update", "PUT /component/{}"),
    _write("Component.delete", "DELETE /component/{}"),
    _read("Classification.get", "GET /classification/{}"),
    # Groups, flag types
    _read("Group.get", "GET /group"),
    _write("Group.create", "POST /group"),
    _write("Group.update", "PUT /group/{}"),
    _read("FlagType.get", "GET /flag_type/{}"),
    _write("FlagType.create", "POST /flag_type"),
    _write("FlagType.update", "PUT /flag_type/{}"),
    # Users (the reference lets JSON-RPC GET reach User.get only: login and
    # token checks would put secrets into URLs)
    _write("User.login", "GET /login"),
    _write("User.logout", "GET /logout"),
    _write("User.valid_login", "GET /valid_login"),
    _read("User.get", "GET /user"),
    _write("User.create", "POST /user"),
    _write("User.update", "PUT /user/{}"),
    Method("User.offer_account_by_email", service="user.offer_account_by_email", login=EXEMPT),
]
