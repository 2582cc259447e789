"""The table of operations: every call of the interface, once, with its rules.

REST routes (web/rest/routes.py) map paths to these names; RPC serves them
under the same names; the OpenAPI description and the docs page describe them.
`writes` opens a write transaction; login rules are those of
api/operation.py; each answer's shapes live beside the code that builds it.
"""

from ..bugs.attachments import ATTACHMENT_SHAPES
from ..bugs.comments import COMMENT_SHAPES
from ..bugs.view import BUG_SHAPES
from ..services import (
    account,
    api_key,
    attachment,
    bug,
    bug_search,
    chart,
    classification,
    comment,
    component,
    field,
    field_value,
    flagtype,
    forge_repository,
    group,
    instance,
    keyword,
    last_visit,
    milestone,
    notification,
    product,
    report,
    sanity_check,
    saved_search,
    second_factor,
    sudo,
    user,
    version,
    webhook,
    whine,
    workflow,
)
from .operation import EXEMPT, OPTIONAL, REQUIRED, SELF, Operation, Operations


def _read(name, service, **rules):
    """An operation that only reads (login optional unless given)."""
    return Operation(name, service, **rules)


def _write(name, service, login=REQUIRED, **rules):
    """An operation that writes (login required unless given)."""
    return Operation(name, service, login=login, writes=True, **rules)


OPERATIONS = Operations([
    # Instance information (version, timezone, parameters stay open when
    # requirelogin is on, as in the reference; the others do not)
    _read("Bugzilla.version", instance.version, login=EXEMPT),
    _read("Bugzilla.extensions", instance.extensions),
    _read("Bugzilla.timezone", instance.timezone, login=EXEMPT),
    _read("Bugzilla.time", instance.time),
    _read("Bugzilla.parameters", instance.parameters, login=EXEMPT),
    _write("Bugzilla.update_parameters", instance.update_parameters),
    _read("Bugzilla.parameter_definitions", instance.parameter_definitions, login=REQUIRED),
    _read("Bugzilla.last_audit_time", instance.last_audit_time),
    _read("Bugzilla.audit_log", instance.audit_log, login=REQUIRED),
    # Users and login. Login checks the password itself, inside a deferred
    # transaction (see services/user.py login), so it does not write here;
    # valid_login checks its token itself (false, not an error, when it is
    # not valid). None of these three is reachable by GET, as in the
    # reference: their parameters are secrets that would end up in URLs.
    # User create answers 304, not 410, to a logged-out caller.
    _read("User.login", user.login, login=SELF, read_only=False, keeps_credentials=True),
    _write("User.logout", user.logout, login=SELF, keeps_credentials=True),
    # Signing in with an OpenID Connect provider (bugsvc's own): the provider
    # is called before the transaction is written to, as login does.
    _read("User.oidc_providers", user.oidc_providers, login=EXEMPT),
    _read("User.oidc_authorization", user.oidc_authorization, login=EXEMPT,
          read_only=False),
    _read("User.login_oidc", user.login_oidc, login=SELF, read_only=False),
    _read("User.valid_login", user.valid_login, login=SELF, read_only=False,
          keeps_credentials=True),
    _write("User.create", user.create, login=OPTIONAL),
    _write("User.update", user.update),
    _read("User.get", user.get, shapes=user.USER_SHAPES),
    # editusers.cgi's list and account page (its members see every account)
    _read("User.find_to_edit", user.find_to_edit, login=REQUIRED, shapes=user.USER_SHAPES),
    # The caller's own account (whoami as bugzilla.mozilla.org; update_self
    # is a bugsvc addition: the reference changes these in its web pages)
    _read("User.whoami", user.whoami, login=REQUIRED),
    _write("User.update_self", user.update_self, not_while_acting=True),
    # Saved searches (a bugsvc addition)
    _read("SavedSearch.get", saved_search.get, login=REQUIRED,
          shapes=saved_search.SAVED_SEARCH_SHAPES),
    _write("SavedSearch.create", saved_search.create),
    _write("SavedSearch.delete", saved_search.delete),
    # Accounts by mail: self-registration and password reset. Exempt from
    # login (they serve people who cannot log in), as the reference exempts
    # offer_account_by_email; none is reachable by GET (their tokens and
    # passwords would end up in URLs).
    _write("User.offer_account_by_email", account.offer_account_by_email, login=EXEMPT),
    _write("User.create_account", account.create_account, login=EXEMPT),
    _write("User.request_password_reset", account.request_password_reset, login=EXEMPT),
    _write("User.reset_password", account.reset_password, login=EXEMPT),
    _read("User.check_token", account.check_token, login=EXEMPT, read_only=False),
    _write("User.cancel_token", account.cancel_token, login=EXEMPT),
    _read("User.can_create_account", account.can_create_account, login=EXEMPT),
    # One's own e-mail address, changed once the new address confirms it
    # (the reference's preferences page and token.cgi): asked for by the
    # account; confirmed with the mailed link, also by someone not signed in.
    _write("User.request_email_change", account.request_email_change,
           not_while_acting=True),
    _write("User.change_email", account.change_email, login=EXEMPT),
    # Mail preferences (bugsvc addition: the reference's preferences page)
    _read("User.get_email_settings", notification.get_email_settings, login=REQUIRED),
    _write("User.update_email_settings", notification.update_email_settings),
    # The delivery queue (bugsvc addition, administrators)
    _read("Notification.list", notification.list_messages, login=REQUIRED),
    _write("Notification.resend", notification.resend),
    # Webhooks (bugzilla.mozilla.org's list; the rest a bugsvc addition)
    _read("Webhooks.list", webhook.list_webhooks, login=REQUIRED),
    _write("Webhooks.create", webhook.create),
    _write("Webhooks.update", webhook.update),
    _write("Webhooks.delete", webhook.delete),
    # Code forge repositories whose webhooks are received (bugsvc addition, administrators)
    _read("ForgeRepository.get", forge_repository.get, login=REQUIRED),
    _write("ForgeRepository.create", forge_repository.create),
    _write("ForgeRepository.update", forge_repository.update),
    _write("ForgeRepository.delete", forge_repository.delete),
    # API keys (bugsvc addition)
    _read("ApiKey.get", api_key.get, login=REQUIRED, shapes=api_key.API_KEY_SHAPES),
    _write("ApiKey.create", api_key.create, not_while_acting=True),
    _write("ApiKey.update", api_key.update, not_while_acting=True),
    # Groups
    _write("Group.create", group.create),
    _write("Group.update", group.update),
    _read("Group.get", group.get, login=REQUIRED, shapes=group.GROUP_SHAPES),
    # Flag types
    _read("FlagType.get", flagtype.get),
    _write("FlagType.create", flagtype.create),
    _write("FlagType.update", flagtype.update),
    _read("FlagType.list_all", flagtype.list_all, login=REQUIRED),
    _write("FlagType.delete", flagtype.delete),
    # Bug fields, and custom fields (bugsvc addition)
    _read("Bug.fields", field.fields, shapes=field.FIELD_SHAPES),
    _read("Bug.legal_values", field.legal_values),
    _write("Field.create", field.create),
    _write("Field.update", field.update),
    # Values of select fields and the status workflow (bugsvc additions over
    # RPC: the reference edits them in editvalues.cgi and editworkflow.cgi)
    _read("FieldValue.get", field_value.get, login=REQUIRED),
    _write("FieldValue.create", field_value.create),
    _write("FieldValue.update", field_value.update),
    _write("FieldValue.delete", field_value.delete),
    _read("Workflow.get", workflow.get, login=REQUIRED),
    _write("Workflow.update", workflow.update),
    # The sanity check (a bugsvc addition over RPC: the reference's
    # sanitycheck.cgi)
    _read("SanityCheck.run", sanity_check.run, login=REQUIRED),
    _write("SanityCheck.repair", sanity_check.repair),
    # Products, components, versions, milestones, classifications, keywords
    _read("Product.get_selectable_products", product.selectable),
    _read("Product.get_enterable_products", product.enterable),
    _read("Product.get_accessible_products", product.accessible),
    _read("Product.get", product.get, shapes=product.PRODUCT_SHAPES),
    _write("Product.create", product.create),
    _write("Product.update", product.update),
    _write("Product.delete", product.delete),
    _write("Component.create", component.create),
    _write("Component.update", component.update),
    _write("Component.delete", component.delete),
    _write("Version.create", version.create),
    _write("Version.update", version.update),
    _write("Version.delete", version.delete),
    _write("Milestone.create", milestone.create),
    _write("Milestone.update", milestone.update),
    _write("Milestone.delete", milestone.delete),
    _read("Classification.get", classification.get,
          shapes=classification.CLASSIFICATION_SHAPES),
    _write("Classification.create", classification.create),
    _write("Classification.update", classification.update),
    _write("Classification.delete", classification.delete),
    _read("Keyword.get", keyword.get, shapes=keyword.KEYWORD_SHAPES),
    _write("Keyword.create", keyword.create),
    _write("Keyword.update", keyword.update),
    # Bugs
    _read("Bug.get", bug.get, shapes=BUG_SHAPES),
    _read("Bug.search", bug_search.search, shapes=BUG_SHAPES, from_replica=True),
    _write("Bug.create", bug.create),
    _write("Bug.update", bug.update),
    _read("Bug.history", bug.history),
    _read("Bug.edit_options", bug.edit_options),
    _read("Bug.flag_requests", bug.flag_requests, login=REQUIRED),
    _read("Bug.request_queue", bug.request_queue, login=REQUIRED),
    _read("Bug.request_types", bug.request_types, login=REQUIRED),
    _read("Bug.possible_duplicates", bug.possible_duplicates, shapes=BUG_SHAPES),
    _write("Bug.update_see_also", bug.update_see_also),
    _write("Bug.update_tags", bug.update_tags),
    # Reports: bugs counted by field values (a bugsvc addition: the
    # reference draws them in report.cgi only)
    _read("Report.axes", report.axes, from_replica=True),
    _read("Report.get", report.get, from_replica=True),
    _read("Report.duplicates", report.duplicates, from_replica=True),
    _read("Report.time_summary", report.time_summary, login=REQUIRED, from_replica=True),
    # Charts over time: saved series counted daily (a bugsvc addition: the
    # reference keeps them in chart.cgi only)
    _read("Series.get", chart.get),
    _read("Series.data", chart.data, from_replica=True),
    _write("Series.create", chart.create),
    _write("Series.delete", chart.delete),
    # Scheduled searches mailed (whining: a bugsvc addition; the reference
    # keeps them in editwhines.cgi only), for members of bz_canusewhines
    _read("Whine.get", whine.get, login=REQUIRED),
    _write("Whine.create_event", whine.create_event),
    _write("Whine.update_event", whine.update_event),
    _write("Whine.delete_event", whine.delete_event),
    # Comments and comment tags
    _read("Bug.comments", comment.comments, shapes=COMMENT_SHAPES),
    _write("Bug.add_comment", comment.add),
    _read("Bug.search_comment_tags", comment.search_tags, login=REQUIRED),
    _write("Bug.update_comment_tags", comment.update_tags),
    _read("Bug.render_comment", comment.render_comment),
    # Editing one's own comments (bugzilla.mozilla.org's EditComments; the
    # earlier texts are a bugsvc addition)
    _write("EditComments.update_comment", comment.update_comment),
    _read("EditComments.comment_revisions", comment.comment_revisions, login=REQUIRED),
    # Attachments
    _read("Bug.attachments", attachment.get, shapes=ATTACHMENT_SHAPES, file_answer=("data",)),
    _write("Bug.add_attachment", attachment.create, file_params=("data",)),
    _write("Bug.update_attachment", attachment.update),
    # Last visits
    _write("BugUserLastVisit.update", last_visit.update, shapes=last_visit.LAST_VISIT_SHAPES),
    _read("BugUserLastVisit.get", last_visit.get, login=REQUIRED,
          shapes=last_visit.LAST_VISIT_SHAPES),
])


# Operations only the web pages run (served by neither REST nor RPC, and not
# in the interface's description): the sign-in page's steps, the second
# factor in one's preferences, an administrator's reset of one. Bugzilla 5.2
# has no second factor; API clients give User.login its `totp` parameter.
PAGE_OPERATIONS = Operations([
    # The sign-in steps check their credentials themselves, as User.login.
    _read("SignIn.begin", second_factor.begin_sign_in, login=SELF, read_only=False,
          keeps_credentials=True),
    _read("SignIn.finish", second_factor.finish_sign_in, login=SELF, read_only=False),
    _read("SignIn.enrolment", second_factor.sign_in_enrolment, login=SELF, read_only=False),
    _read("SignIn.enrol", second_factor.enrol_at_sign_in, login=SELF, read_only=False),
    _read("SecondFactor.get", second_factor.get, login=REQUIRED),
    _write("SecondFactor.begin", second_factor.begin, not_while_acting=True),
    _write("SecondFactor.confirm", second_factor.confirm, not_while_acting=True),
    _write("SecondFactor.disable", second_factor.disable, not_while_acting=True),
    _write("SecondFactor.reset", second_factor.reset),
    # The pages' whoami (with who acts as the account) and acting as another
    # account (relogin.cgi's sudo), whose beginning and end find the page's
    # session themselves.
    _read("Session.whoami", sudo.whoami, login=REQUIRED, from_replica=True),
    _read("Sudo.prepare", sudo.prepare, login=REQUIRED),
    _write("Sudo.begin", sudo.begin, login=SELF),
    _write("Sudo.end", sudo.end, login=SELF),
    # The question before deleting a product or component (how many bugs
    # would go with it); Bugzilla 5.2 asks it on its pages only.
    _read("Product.deletion", product.deletion, login=REQUIRED),
    # The parameters the pages follow, read with a page's other reads (one
    # snapshot, no transaction of their own); never shown as they are.
    _read("Site.settings", instance.page_settings, login=EXEMPT),
    # Group inheritance in editgroups.cgi (Bugzilla 5.2 has no call for it).
    _read("Group.inheritance", group.inheritance, login=REQUIRED),
    _write("Group.update_inheritance", group.update_inheritance),
    # The groups of a bug with their ids, as Bugzilla's bug XML shows them
    # to whoever sees the bug (Bugzilla 5.2 has no call for it).
    _read("Bug.groups_in", bug.groups_in),
    # The groups the new-bug form offers (Bugzilla 5.2 has no call for it).
    _read("Bug.new_bug_groups", bug.new_bug_groups, login=REQUIRED),
    # A bug list's page and how many bugs its search selects in all, from
    # one statement where it can (the bug list page).
    _read("Bug.search_counted", bug_search.search_counted, shapes=BUG_SHAPES,
          from_replica=True),
])
