"""The REST route table: which path and verb reach which operation, how the
path's parts become parameters, and the status of a success. The rules of
each call (login, reading or writing, answer shapes) belong to the
operation (api/operations.py), not to its route.

Order matters only where two templates match the same path: the first
route with the request's verb wins, so specific templates come first.
"""

from .routing import Route, id_list, id_or_name, name_pair, scalars


ROUTES = [
    # Instance information
    Route("GET", "/version", "Bugzilla.version"),
    Route("GET", "/extensions", "Bugzilla.extensions"),
    Route("GET", "/timezone", "Bugzilla.timezone"),
    Route("GET", "/time", "Bugzilla.time"),
    Route("GET", "/parameters", "Bugzilla.parameters"),
    Route("PUT", "/parameters", "Bugzilla.update_parameters"),
    Route("GET", "/parameter_definitions", "Bugzilla.parameter_definitions"),
    Route("GET", "/last_audit_time", "Bugzilla.last_audit_time"),
    Route("GET", "/audit_log", "Bugzilla.audit_log"),
    # Groups
    Route("POST", "/group", "Group.create", status=201),
    Route("PUT", "/group/{group}", "Group.update", path_params=id_or_name("group")),
    Route("GET", "/group", "Group.get"),
    Route("GET", "/group/{group}", "Group.get", path_params=id_or_name("group")),
    # Flag types
    Route("GET", "/flag_type/{product}/{component}", "FlagType.get",
          path_params=scalars(product="product", component="component")),
    Route("GET", "/flag_type/{product}", "FlagType.get", path_params=scalars(product="product")),
    Route("POST", "/flag_type", "FlagType.create", status=201),
    Route("PUT", "/flag_type/{flag_type}", "FlagType.update", path_params=id_or_name("flag_type")),
    Route("GET", "/flag_type", "FlagType.list_all"),
    Route("DELETE", "/flag_type/{flag_type}", "FlagType.delete", path_params=id_list("flag_type")),
    # Bug fields (and custom fields, a bugsvc extension)
    Route("GET", "/field/bug", "Bug.fields"),
    Route("GET", "/field/bug/{field}", "Bug.fields", path_params=id_or_name("field")),
    Route("GET", "/field/bug/{field}/values", "Bug.legal_values",
          path_params=scalars(field="field")),
    Route("GET", "/field/bug/{field}/{product_id}/values", "Bug.legal_values",
          path_params=scalars(field="field", product_id="product_id")),
    Route("POST", "/field/bug", "Field.create", status=201),
    Route("PUT", "/field/bug/{field}", "Field.update", path_params=id_or_name("field")),
    # Products
    Route("GET", "/product_selectable", "Product.get_selectable_products"),
    Route("GET", "/product_enterable", "Product.get_enterable_products"),
    Route("GET", "/product_accessible", "Product.get_accessible_products"),
    Route("GET", "/product", "Product.get"),
    Route("GET", "/product/{product}", "Product.get", path_params=id_or_name("product")),
    Route("POST", "/product", "Product.create", status=201),
    Route("PUT", "/product/{product}", "Product.update", path_params=id_or_name("product")),
    Route("DELETE", "/product/{product}", "Product.delete", path_params=id_or_name("product")),
    # Components
    Route("POST", "/component", "Component.create", status=201),
    Route("PUT", "/component/{component}", "Component.update", path_params=id_list("component")),
    Route("DELETE", "/component/{component}", "Component.delete",
          path_params=id_list("component")),
    Route("PUT", "/component/{product}/{component}", "Component.update",
          path_params=name_pair(product="product", component="component")),
    Route("DELETE", "/component/{product}/{component}", "Component.delete",
          path_params=name_pair(product="product", component="component")),
    # Versions, milestones, keywords, classifications (bugsvc extensions)
    Route("POST", "/version", "Version.create", status=201),
    Route("PUT", "/version/{version}", "Version.update", path_params=id_list("version")),
    Route("DELETE", "/version/{version}", "Version.delete", path_params=id_list("version")),
    Route("POST", "/milestone", "Milestone.create", status=201),
    Route("PUT", "/milestone/{milestone}", "Milestone.update", path_params=id_list("milestone")),
    Route("DELETE", "/milestone/{milestone}", "Milestone.delete",
          path_params=id_list("milestone")),
    Route("GET", "/keyword", "Keyword.get"),
    Route("GET", "/keyword/{keyword}", "Keyword.get", path_params=id_or_name("keyword")),
    Route("POST", "/keyword", "Keyword.create", status=201),
    Route("PUT", "/keyword/{keyword}", "Keyword.update", path_params=id_or_name("keyword")),
    Route("GET", "/classification/{classification}", "Classification.get",
          path_params=id_or_name("classification")),
    Route("POST", "/classification", "Classification.create", status=201),
    Route("PUT", "/classification/{classification}", "Classification.update",
          path_params=id_or_name("classification")),
    Route("DELETE", "/classification/{classification}", "Classification.delete",
          path_params=id_or_name("classification")),
    # Users and login
    Route("GET", "/login", "User.login"),
    Route("GET", "/logout", "User.logout"),
    Route("GET", "/valid_login", "User.valid_login"),
    # Accounts by mail, mail preferences (before /user/{user})
    Route("POST", "/user/offer_account_by_email", "User.offer_account_by_email"),
    Route("POST", "/user/create_account", "User.create_account", status=201),
    Route("POST", "/user/request_password_reset", "User.request_password_reset"),
    Route("POST", "/user/reset_password", "User.reset_password"),
    Route("POST", "/user/check_token", "User.check_token"),
    Route("POST", "/user/cancel_token", "User.cancel_token"),
    Route("POST", "/user/request_email_change", "User.request_email_change"),
    Route("POST", "/user/change_email", "User.change_email"),
    Route("GET", "/user/can_create_account", "User.can_create_account"),
    Route("GET", "/email_settings", "User.get_email_settings"),
    Route("PUT", "/email_settings", "User.update_email_settings"),
    # Code forge repositories (bugsvc addition)
    Route("GET", "/forge_repository", "ForgeRepository.get"),
    Route("POST", "/forge_repository", "ForgeRepository.create", status=201),
    Route("PUT", "/forge_repository/{forge_repository}", "ForgeRepository.update",
          path_params=id_list("forge_repository")),
    Route("DELETE", "/forge_repository/{forge_repository}", "ForgeRepository.delete",
          path_params=id_list("forge_repository")),
    # Webhooks
    Route("GET", "/webhooks/list", "Webhooks.list"),
    Route("POST", "/webhooks", "Webhooks.create", status=201),
    Route("PUT", "/webhooks/{webhook}", "Webhooks.update", path_params=id_list("webhook")),
    Route("DELETE", "/webhooks/{webhook}", "Webhooks.delete", path_params=id_list("webhook")),
    # The delivery queue
    Route("GET", "/notification", "Notification.list"),
    Route("POST", "/notification/resend", "Notification.resend"),
    Route("POST", "/user", "User.create", status=201),
    Route("PUT", "/user/{user}", "User.update", path_params=id_or_name("user")),
    Route("GET", "/user", "User.get"),
    Route("GET", "/user/{user}", "User.get", path_params=id_or_name("user")),
    Route("GET", "/whoami", "User.whoami"),
    Route("PUT", "/whoami", "User.update_self"),
    # Saved searches (a bugsvc extension)
    Route("GET", "/saved_search", "SavedSearch.get"),
    Route("POST", "/saved_search", "SavedSearch.create", status=201),
    Route("DELETE", "/saved_search/{search}", "SavedSearch.delete",
          path_params=id_or_name("search")),
    # API keys (a bugsvc extension)
    Route("GET", "/api_key", "ApiKey.get"),
    Route("POST", "/api_key", "ApiKey.create", status=201),
    Route("PUT", "/api_key/{key}", "ApiKey.update", path_params=id_list("key")),
    # Bug search
    Route("GET", "/bug", "Bug.search"),
    # Reports (a bugsvc addition)
    Route("GET", "/report", "Report.get"),
    Route("GET", "/report/axes", "Report.axes"),
    Route("GET", "/report/duplicates", "Report.duplicates"),
    Route("GET", "/report/time", "Report.time_summary"),
    # Charts over time (a bugsvc addition)
    Route("GET", "/series", "Series.get"),
    Route("GET", "/series/data", "Series.data"),
    Route("POST", "/series", "Series.create", status=201),
    Route("DELETE", "/series/{id}", "Series.delete", path_params=scalars(id="id")),
    Route("GET", "/whine", "Whine.get"),
    Route("POST", "/whine", "Whine.create_event", status=201),
    Route("PUT", "/whine/{id}", "Whine.update_event", path_params=scalars(id="id")),
    Route("DELETE", "/whine/{id}", "Whine.delete_event", path_params=scalars(id="id")),
    # Comments and comment tags (the id-free templates first)
    Route("GET", "/bug/comment/tags/{query}", "Bug.search_comment_tags",
          path_params=scalars(query="query")),
    Route("PUT", "/bug/comment/{comment_id}/tags", "Bug.update_comment_tags",
          path_params=scalars(comment_id="comment_id")),
    Route("GET", "/bug/comment/{comment_id}", "Bug.comments",
          path_params=id_list("comment_id", key="comment_ids")),
    # Bugzilla 5.2 serves render_comment over JSON-RPC and XML-RPC only;
    # bugzilla.mozilla.org's address (before /bug/comment/{comment_id}).
    Route("POST", "/bug/comment/render", "Bug.render_comment"),
    # Editing comments (bugzilla.mozilla.org's address), and their earlier texts
    Route("PUT", "/editcomments/comment/{comment_id}", "EditComments.update_comment",
          path_params=scalars(comment_id="comment_id")),
    Route("GET", "/editcomments/comment/{comment_id}/revisions",
          "EditComments.comment_revisions", path_params=scalars(comment_id="comment_id")),
    Route("GET", "/bug/{bug}/comment", "Bug.comments",
          path_params=id_list("bug", strip_hash=True)),
    Route("POST", "/bug/{bug}/comment", "Bug.add_comment", path_params=scalars(id="bug"),
          status=201),
    # Attachments (the id-free template first)
    Route("GET", "/bug/attachment/{attachment_id}", "Bug.attachments",
          path_params=id_list("attachment_id", key="attachment_ids")),
    Route("PUT", "/bug/attachment/{attachment_id}", "Bug.update_attachment",
          path_params=id_list("attachment_id")),
    Route("GET", "/bug/{bug}/attachment", "Bug.attachments",
          path_params=id_list("bug", strip_hash=True)),
    Route("POST", "/bug/{bug}/attachment", "Bug.add_attachment",
          path_params=id_list("bug", strip_hash=True), status=201),
    # Bugs (possible_duplicates before /bug/{bug}, which would read it as an alias)
    Route("GET", "/bug/possible_duplicates", "Bug.possible_duplicates"),
    Route("GET", "/flag_requests", "Bug.flag_requests"),
    Route("GET", "/request_queue", "Bug.request_queue"),
    Route("GET", "/request_types", "Bug.request_types"),
    Route("POST", "/bug", "Bug.create", status=201),
    Route("GET", "/bug/", "Bug.get"),
    Route("GET", "/bug/{bug}", "Bug.get", path_params=id_list("bug", strip_hash=True)),
    Route("PUT", "/bug/{bug}", "Bug.update", path_params=id_list("bug", strip_hash=True)),
    Route("GET", "/bug/{bug}/history", "Bug.history", path_params=id_list("bug", strip_hash=True)),
    Route("GET", "/bug/{bug}/edit_options", "Bug.edit_options",
          path_params=id_list("bug", strip_hash=True)),
    # Last visits (the id-less forms too, documented but not routed by Bugzilla 5.2)
    Route("POST", "/bug_user_last_visit", "BugUserLastVisit.update"),
    Route("POST", "/bug_user_last_visit/{bug}", "BugUserLastVisit.update",
          path_params=id_list("bug")),
    Route("GET", "/bug_user_last_visit", "BugUserLastVisit.get"),
    Route("GET", "/bug_user_last_visit/{bug}", "BugUserLastVisit.get",
          path_params=id_list("bug")),
]
