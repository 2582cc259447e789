"""The REST route table: one line per call of the interface.

Order matters only where two templates match the same path: the first
route with the request's verb wins, so specific templates come first.
"""

from .routing import Route, EXEMPT, REQUIRED, SELF, id_or_name, id_list, name_pair, scalars
from ..fields import Shape
from ..bugs.view import BUG_SHAPES
from ..bugs.attachments import ATTACHMENT_SHAPES

# Products with their subfields (compat.md section 7); group_controls only on request.
PRODUCT_SHAPES = {"products": Shape(types={"group_controls": ("extra",)},
                                    children={"components": Shape(), "versions": Shape(),
                                              "milestones": Shape()})}
CLASSIFICATION_SHAPES = {"classifications": Shape(children={"products": Shape()})}
COMMENT_SHAPES = {"bugs.*.comments": Shape(), "comments.*": Shape()}

ROUTES = [
    # Instance information (version, timezone, parameters stay open when
    # requirelogin is on, as in the reference; the others do not)
    Route("GET", "/version", "instance.version", login=EXEMPT),
    Route("GET", "/extensions", "instance.extensions"),
    Route("GET", "/timezone", "instance.timezone", login=EXEMPT),
    Route("GET", "/time", "instance.time"),
    Route("GET", "/parameters", "instance.parameters", login=EXEMPT),
    Route("PUT", "/parameters", "instance.update_parameters", login=REQUIRED),
    Route("GET", "/last_audit_time", "instance.last_audit_time"),
    # Groups
    Route("POST", "/group", "group.create", status=201, login=REQUIRED),
    Route("PUT", "/group/{group}", "group.update", path_params=id_or_name("group"), login=REQUIRED),
    Route("GET", "/group", "group.get", login=REQUIRED,
          shapes={"groups": Shape(children={"membership": Shape()})}),
    Route("GET", "/group/{group}", "group.get", path_params=id_or_name("group"), login=REQUIRED,
          shapes={"groups": Shape(children={"membership": Shape()})}),
    # Flag types
    Route("GET", "/flag_type/{product}/{component}", "flagtype.get",
          path_params=scalars(product="product", component="component")),
    Route("GET", "/flag_type/{product}", "flagtype.get", path_params=scalars(product="product")),
    Route("POST", "/flag_type", "flagtype.create", status=201, login=REQUIRED),
    Route("PUT", "/flag_type/{flag_type}", "flagtype.update", path_params=id_or_name("flag_type"),
          login=REQUIRED),
    # Bug fields (and custom fields, admin.md section 4)
    Route("GET", "/field/bug", "field.fields", shapes={"fields": Shape()}),
    Route("GET", "/field/bug/{field}", "field.fields", path_params=id_or_name("field"),
          shapes={"fields": Shape()}),
    Route("GET", "/field/bug/{field}/values", "field.legal_values",
          path_params=scalars(field="field")),
    Route("GET", "/field/bug/{field}/{product_id}/values", "field.legal_values",
          path_params=scalars(field="field", product_id="product_id")),
    Route("POST", "/field/bug", "field.create", status=201, login=REQUIRED),
    Route("PUT", "/field/bug/{field}", "field.update", path_params=id_or_name("field"),
          login=REQUIRED),
    # Products
    Route("GET", "/product_selectable", "product.selectable"),
    Route("GET", "/product_enterable", "product.enterable"),
    Route("GET", "/product_accessible", "product.accessible"),
    Route("GET", "/product", "product.get", shapes=PRODUCT_SHAPES),
    Route("GET", "/product/{product}", "product.get", path_params=id_or_name("product"),
          shapes=PRODUCT_SHAPES),
    Route("POST", "/product", "product.create", status=201, login=REQUIRED),
    Route("PUT", "/product/{product}", "product.update", path_params=id_or_name("product"),
          login=REQUIRED),
    # Components (admin.md section 2)
    Route("POST", "/component", "component.create", status=201, login=REQUIRED),
    Route("PUT", "/component/{component}", "component.update", path_params=id_list("component"),
          login=REQUIRED),
    Route("DELETE", "/component/{component}", "component.delete",
          path_params=id_list("component"), login=REQUIRED),
    Route("PUT", "/component/{product}/{component}", "component.update",
          path_params=name_pair(product="product", component="component"), login=REQUIRED),
    Route("DELETE", "/component/{product}/{component}", "component.delete",
          path_params=name_pair(product="product", component="component"), login=REQUIRED),
    # Versions, milestones, keywords, classifications (admin.md section 4)
    Route("POST", "/version", "version.create", status=201, login=REQUIRED),
    Route("PUT", "/version/{version}", "version.update", path_params=id_list("version"),
          login=REQUIRED),
    Route("POST", "/milestone", "milestone.create", status=201, login=REQUIRED),
    Route("PUT", "/milestone/{milestone}", "milestone.update", path_params=id_list("milestone"),
          login=REQUIRED),
    Route("GET", "/keyword", "keyword.get", shapes={"keywords": Shape()}),
    Route("GET", "/keyword/{keyword}", "keyword.get", path_params=id_or_name("keyword"),
          shapes={"keywords": Shape()}),
    Route("POST", "/keyword", "keyword.create", status=201, login=REQUIRED),
    Route("PUT", "/keyword/{keyword}", "keyword.update", path_params=id_or_name("keyword"),
          login=REQUIRED),
    Route("GET", "/classification/{classification}", "classification.get",
          path_params=id_or_name("classification"), shapes=CLASSIFICATION_SHAPES),
    Route("POST", "/classification", "classification.create", status=201, login=REQUIRED),
    Route("PUT", "/classification/{classification}", "classification.update",
          path_params=id_or_name("classification"), login=REQUIRED),
    # Users and login. Login checks the password itself, inside a deferred
    # transaction (see services/user.py login), so its route is not a write;
    # valid_login checks its token itself (false, not an error, when it is
    # not valid). User create answers 304, not 410, to a logged-out caller.
    Route("GET", "/login", "user.login", login=SELF, write=False, keeps_credentials=True),
    Route("GET", "/logout", "user.logout", login=SELF, write=True, keeps_credentials=True),
    Route("GET", "/valid_login", "user.valid_login", login=SELF, keeps_credentials=True),
    Route("POST", "/user", "user.create", status=201),
    Route("PUT", "/user/{user}", "user.update", path_params=id_or_name("user"), login=REQUIRED),
    Route("GET", "/user", "user.get", shapes={"users": Shape()}),
    Route("GET", "/user/{user}", "user.get", path_params=id_or_name("user"),
          shapes={"users": Shape()}),
    # API keys (admin.md section 4)
    Route("GET", "/api_key", "api_key.get", login=REQUIRED, shapes={"api_keys": Shape()}),
    Route("POST", "/api_key", "api_key.create", status=201, login=REQUIRED),
    Route("PUT", "/api_key/{key}", "api_key.update", path_params=id_list("key"), login=REQUIRED),
    # Bug search
    Route("GET", "/bug", "bug_search.search", shapes=BUG_SHAPES),
    # Comments and comment tags (the id-free templates first)
    Route("GET", "/bug/comment/tags/{query}", "comment.search_tags",
          path_params=scalars(query="query"), login=REQUIRED),
    Route("PUT", "/bug/comment/{comment_id}/tags", "comment.update_tags",
          path_params=scalars(comment_id="comment_id"), login=REQUIRED),
    Route("GET", "/bug/comment/{comment_id}", "comment.comments",
          path_params=id_list("comment_id", key="comment_ids"), shapes=COMMENT_SHAPES),
    Route("GET", "/bug/{bug}/comment", "comment.comments",
          path_params=id_list("bug", strip_hash=True), shapes=COMMENT_SHAPES),
    Route("POST", "/bug/{bug}/comment", "comment.add", path_params=scalars(id="bug"), status=201,
          login=REQUIRED),
    # Attachments (the id-free template first)
    Route("GET", "/bug/attachment/{attachment_id}", "attachment.get",
          path_params=id_list("attachment_id", key="attachment_ids"), shapes=ATTACHMENT_SHAPES),
    Route("PUT", "/bug/attachment/{attachment_id}", "attachment.update",
          path_params=id_list("attachment_id"), login=REQUIRED),
    Route("GET", "/bug/{bug}/attachment", "attachment.get",
          path_params=id_list("bug", strip_hash=True), shapes=ATTACHMENT_SHAPES),
    Route("POST", "/bug/{bug}/attachment", "attachment.create",
          path_params=id_list("bug", strip_hash=True), status=201, login=REQUIRED),
    # Bugs (possible_duplicates before /bug/{bug}, which would read it as an alias)
    Route("GET", "/bug/possible_duplicates", "bug.possible_duplicates", shapes=BUG_SHAPES),
    Route("POST", "/bug", "bug.create", status=201, login=REQUIRED),
    Route("GET", "/bug/", "bug.get", shapes=BUG_SHAPES),
    Route("GET", "/bug/{bug}", "bug.get", path_params=id_list("bug", strip_hash=True),
          shapes=BUG_SHAPES),
    Route("PUT", "/bug/{bug}", "bug.update", path_params=id_list("bug", strip_hash=True),
          login=REQUIRED),
    Route("GET", "/bug/{bug}/history", "bug.history", path_params=id_list("bug", strip_hash=True)),
    # Last visits (compat.md decision 3: the id-less forms too)
    Route("POST", "/bug_user_last_visit", "last_visit.update", login=REQUIRED),
    Route("POST", "/bug_user_last_visit/{bug}", "last_visit.update", path_params=id_list("bug"),
          login=REQUIRED),
    Route("GET", "/bug_user_last_visit", "last_visit.get", login=REQUIRED),
    Route("GET", "/bug_user_last_visit/{bug}", "last_visit.get", path_params=id_list("bug"),
          login=REQUIRED),
]
