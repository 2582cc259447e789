"""What the documentation says about each operation: its parameters, its
answer and its error codes, keyed by the operation's name. The OpenAPI
description joins this with the route table (paths, verbs, statuses, path
parameters) and the operations' rules, so a route added to routes.py appears
in the description by itself; tests/api/test_openapi.py fails while an operation
has no entry here.

An entry's `params` are the call's parameters: query parameters for GET,
properties of the JSON body otherwise. Parameters that a path template fills
are described with the path (openapi.py). The service's docstring becomes the
operation's description, so the words stay where the code is.
"""

from dataclasses import dataclass, field

from .schemas import (
    BOOL,
    DATETIME,
    DATETIME_IN,
    ID_OR_NAME,
    INT,
    NULLABLE_DATETIME,
    NUMBER,
    STR,
    arr,
    created,
    described,
    group_change_object,
    ints,
    list_change_object,
    obj,
    one_or_many,
    ref,
    strs,
    updated,
    wrapped,
)


@dataclass(frozen=True)
class Doc:
    """One service function as the description shows it.

    summary: one line. params: name -> JSON schema. required: params that
    must be given (a body without them fails with the listed error).
    answer: JSON schema of the success answer as sent (scalars wrapped in
    {"result"}). errors: the call's own error codes (authentication codes
    are added to every operation). fields: include_fields/exclude_fields
    shape the answer (also implied by a route's shapes). body_values: the
    schema of body keys other than `params` (a body of free names).
    """
    summary: str
    params: dict = field(default_factory=dict)
    required: tuple = ()
    answer: dict = field(default_factory=lambda: obj())
    errors: tuple = ()
    fields: bool = False
    body_values: dict | None = None


# Tags: one per service module, in the order the documentation page lists
# them: module -> (the name the page shows, its description).
TAGS = {
    "instance": ("Instance", "Version, time, parameters, audit time."),
    "user": ("Users", "Accounts, login and logout."),
    "saved_search": ("Saved searches", "Saved searches of the caller (a bugsvc addition: "
                                       "Bugzilla keeps them in its web pages)."),
    "account": ("Accounts by mail", "Self-registration and password reset by a mailed link."),
    "notification": ("Notifications", "Mail preferences and the delivery queue of bug mail "
                                      "and webhooks (a bugsvc addition)."),
    "webhook": ("Webhooks", "Webhooks in bugzilla.mozilla.org's format, signed as the "
                            "Standard Webhooks specification says."),
    "forge_repository": ("Code forges", "Repositories of GitHub, GitLab and Gitea/Forgejo "
                                        "whose webhooks at /hooks/<forge> link commits and "
                                        "pull requests to bugs (a bugsvc addition)."),
    "api_key": ("API keys", "API keys of accounts (a bugsvc addition: Bugzilla manages them "
                            "in its web pages)."),
    "group": ("Groups", "Groups and their members."),
    "product": ("Products", "Products with their components, versions and milestones."),
    "component": ("Components", "Components of products."),
    "version": ("Versions", "Versions of products (a bugsvc addition)."),
    "milestone": ("Milestones", "Milestones of products (a bugsvc addition)."),
    "classification": ("Classifications", "Classifications of products."),
    "keyword": ("Keywords", "Keywords (create and update are a bugsvc addition)."),
    "flagtype": ("Flag types", "Flag types of bugs and attachments."),
    "field": ("Bug fields", "Bug field definitions, custom fields and legal values."),
    "bug": ("Bugs", "Get, create, update, history, possible duplicates."),
    "bug_search": ("Bug search", "Searching bugs by field values, boolean charts or quick search."),
    "report": ("Reports", "Bugs counted by the values of up to three fields, as Bugzilla's "
                          "report.cgi (a bugsvc addition: Bugzilla has no such API)."),
    "chart": ("Charts", "Series: saved searches counted every day, as Bugzilla's chart.cgi "
                        "(a bugsvc addition)."),
    "comment": ("Comments", "Comments and comment tags."),
    "attachment": ("Attachments", "Attachments of bugs."),
    "last_visit": ("Last visits", "When the caller last visited bugs."),
}

_IDS = ints("ids (a repeated query key gives several)")
_NAMES = strs("names")
_TYPE = one_or_many({"type": "string", "enum": ["accessible", "selectable", "enterable"]},
                    "which products: one of the kinds or several (their union)")
_USERS_LOGINS = one_or_many(STR, "logins: an array or a comma-separated string")
_FLAG_CHANGES = arr(ref("FlagChange"), "flag changes")
_INCLUSIONS = {"anyOf": [strs(None), obj(values=strs(None))],
               "description": "product names (every component), or product name -> component "
                              "names (an empty list: every component)"}
_SELECT_VALUES = {"anyOf": [arr(ID_OR_NAME), obj({"add": arr({}), "remove": strs(None)})],
                  "description": "values of a select field: an array, or {\"add\", \"remove\"}; "
                                 "each a name or {name, sort_key, visibility_value}"}
_LIST_CHANGE = obj({"added": strs(None), "removed": strs(None)})
_ID_LIST_ANSWER = obj({"ids": ints(None)}, required=["ids"])
_WHINE_EVENT = obj({
    "id": INT, "subject": STR, "body": STR, "mailifnobugs": BOOL,
    "schedules": arr(obj({"id": INT, "day": STR, "time": STR, "mailto_type": INT,
                          "mailto": STR, "run_next": STR})),
    "queries": arr(obj({"id": INT, "name": STR, "title": STR, "sortkey": INT,
                        "onemailperbug": BOOL}))})
_SAVED_SEARCH = obj({"id": INT, "name": STR, "query": STR})
_COMMENT_MAP = obj({
    "bugs": obj(values=obj({"comments": arr(ref("Comment"))}),
                description="bug id -> its comments, oldest first"),
    "comments": obj(values=ref("Comment"), description="comment id -> comment")})
_ATTACHMENT_MAP = obj({
    "bugs": obj(values=arr(ref("Attachment")), description="bug id -> its attachments"),
    "attachments": obj(values=ref("Attachment"), description="attachment id -> attachment")})
_BUG_FIELDS = {
    "summary": STR, "platform": STR, "severity": STR, "priority": STR, "op_sys": STR,
    "version": STR, "component": STR, "target_milestone": STR, "url": STR, "whiteboard": STR,
    "deadline": described(STR, "YYYY-MM-DD"), "product": STR, "status": STR,
    "resolution": STR, "assigned_to": STR, "qa_contact": STR, "estimated_time": NUMBER,
    "is_cc_accessible": BOOL, "is_creator_accessible": BOOL, "flags": _FLAG_CHANGES,
}
_SEARCH_PARAMS = {
    "id": one_or_many(INT, "bug ids"), "alias": one_or_many(STR, "aliases"),
    "product": one_or_many(STR, "product names"), "component": one_or_many(STR, "components"),
    "status": one_or_many(STR, "statuses (also __open__, __closed__, __all__)"),
    "resolution": one_or_many(STR, "resolutions (--- for open bugs)"),
    "summary": one_or_many(STR, "words that must all occur in the summary"),
    "assigned_to": one_or_many(STR, "assignee logins (substring)"),
    "creator": one_or_many(STR, "reporter logins (substring)"),
    "keywords": one_or_many(STR, "keywords (all of them)"),
    "creation_time": DATETIME_IN, "last_change_time": DATETIME_IN,
    "quicksearch": described(STR, "quick search text, as in Bugzilla's search box: words, "
                                  "field:value, OPEN/ALL, #summary, @assignee ..."),
    "limit": described(INT, "at most this many bugs (0: the maximum)"),
    "offset": described(INT, "skip this many (needs limit)"),
    "order": described(STR, "columns, each optionally ASC or DESC, comma-separated"),
    "count_only": described(BOOL, "answer {\"bug_count\"} instead of the bugs"),
}

DOCS = {
    # Instance information
    "Bugzilla.version": Doc("The compatibility version (X.X or X.X.X).",
                            answer=obj({"version": STR}, required=["version"])),
    "Bugzilla.extensions": Doc("Installed extensions.",
                               answer=obj({"extensions": obj(values=obj({"version": STR}))})),
    "Bugzilla.timezone": Doc("The service's time zone (+0000).",
                             answer=obj({"timezone": STR}, required=["timezone"])),
    "Bugzilla.time": Doc("The service's clock.", answer=obj({
        "db_time": DATETIME, "web_time": DATETIME, "web_time_utc": DATETIME, "tz_name": STR,
        "tz_short_name": STR, "tz_offset": STR})),
    "Bugzilla.parameters": Doc(
        "The instance parameters the caller may see (values are strings).", fields=True,
        answer=obj({"parameters": obj(values=STR)})),
    "Bugzilla.update_parameters": Doc(
        "Change instance parameters (tweakparams); the body maps names to new values.",
        body_values={"type": ["string", "integer", "boolean"]},
        answer=obj({"parameters": ref("Changes")}), errors=(304, 51, 32000)),
    "Bugzilla.parameter_definitions": Doc(
        "bugsvc extension: every parameter as the parameters page offers it (tweakparams): "
        "sections, descriptions, controls, values (secrets masked), defaults and choices.",
        answer=obj({"sections": arr(obj({
            "name": STR, "title": STR, "description": STR, "parameters": arr(obj({
                "name": STR, "description": STR,
                "control": described(STR, "bool, number, choice, secret, text or long_text"),
                "value": STR, "default": STR, "choices": {"type": ["array", "null"],
                                                          "items": STR},
                "min": {"type": ["integer", "null"]}, "max": {"type": ["integer", "null"]}}))}))}),
        errors=(304,)),
    "Bugzilla.last_audit_time": Doc(
        "When an audited object last changed.",
        params={"class": one_or_many(STR, "class names Bugzilla::X or Service::X")},
        answer=obj({"last_audit_time": NULLABLE_DATETIME}), errors=(53,)),
    "Bugzilla.audit_log": Doc(
        "bugsvc extension: the audit log's entries, newest first (admin): who changed which "
        "setting, account or catalogue object, when, through any way in.",
        params={"object": described(STR, "words that must all occur in the object's name"),
                "user": described(STR, "login of who changed it; empty: no account (the "
                                       "command line, a visitor's own sign-up)"),
                "class": one_or_many(STR, "class names Bugzilla::X, Service::X or X"),
                "since": DATETIME_IN, "until": DATETIME_IN,
                "limit": described(INT, "at most this many (default 100, at most 1000)"),
                "offset": described(INT, "skip this many")},
        answer=obj({"entries": arr(obj({
            "id": INT, "user": {"type": ["string", "null"]}, "class": STR, "object_id": INT,
            "object_name": STR, "field": {"type": ["string", "null"]},
            "removed": {"type": ["string", "null"]}, "added": {"type": ["string", "null"]},
            "at_time": DATETIME})), "total_matches": INT, "classes": strs(None)}),
        errors=(304, 53, 54, 55, 56)),
    # Users and login
    "User.login": Doc(
        "Log in with a login name and password; answers a token.",
        params={"login": STR, "password": described(STR, "sent in the query string; prefer "
                                                         "API keys"),
                "restrict_login": described(BOOL, "the token works only from this address")},
        required=("login", "password"),
        answer=obj({"id": INT, "token": STR}, required=["id", "token"]),
        errors=(50, 300, 301, 32000)),
    "User.oidc_providers": Doc(
        "The OpenID Connect providers people may sign in with (bugsvc's own).",
        answer=obj({"providers": {"type": "array", "items": obj({"name": STR})}},
                   required=["providers"])),
    "User.oidc_authorization": Doc(
        "Start signing in with an OpenID Connect provider (bugsvc's own): the provider's "
        "page to open, and the state, nonce and PKCE verifier to keep until it sends the "
        "browser back.",
        params={"provider": STR, "redirect_uri": STR}, required=("provider", "redirect_uri"),
        answer=obj({"url": STR, "state": STR, "nonce": STR, "code_verifier": STR},
                   required=["url", "state", "nonce", "code_verifier"]),
        errors=(50, 51, -32000)),
    "User.login_oidc": Doc(
        "Finish signing in with an OpenID Connect provider (bugsvc's own): the code it sent "
        "back is exchanged and its id_token checked; answers a token like login, or, for an "
        "account with a second factor, the secret of a sign-in that waits for its code on "
        "the sign-in page.",
        params={"provider": STR, "code": STR, "redirect_uri": STR, "code_verifier": STR,
                "nonce": STR},
        required=("provider", "code", "redirect_uri", "code_verifier", "nonce"),
        answer=obj({"id": INT, "token": STR, "pending": STR, "enrol": BOOL}),
        errors=(50, 51, 301, 500, 501, 32000, -32000)),
    "User.logout": Doc("Invalidate a login token.", params={"token": STR},
                       answer=wrapped({"type": "null"})),
    "User.valid_login": Doc("Whether the credentials sign in as a login: the token given, "
                            "else the API key or the login and password of the call.",
                            params={"login": STR, "token": STR}, required=("login",),
                            answer=wrapped(BOOL), errors=(50, 300, 301, 306, 410, 32000)),
    "User.create": Doc(
        "Create an account (editusers).",
        params={"email": STR, "full_name": STR, "password": STR}, required=("email",),
        answer=created(), errors=(304, 50, 501, 500, 502, 305)),
    "User.update": Doc(
        "Change accounts (editusers; blessers may change group membership).",
        params={"ids": _IDS, "names": _NAMES, "full_name": STR, "email": STR, "password": STR,
                "email_enabled": BOOL, "login_denied_text": STR,
                "reset_failed_logins": described(BOOL, "forget the wrong passwords counted "
                                                       "against the account"),
                "groups": group_change_object("group ids or names to add, remove or set"),
                "bless_groups": group_change_object("the same, for the right to bless")},
        answer=updated("users"), errors=(304, 50, 51, 53, 500, 501, 502, 305)),
    "User.get": Doc(
        "Accounts by ids, login names or matching text.",
        params={"ids": _IDS, "names": _NAMES,
                "match": strs("substrings of login or real name"),
                "limit": described(INT, "matches per string"),
                "include_disabled": BOOL, "group_ids": _IDS, "groups": _NAMES},
        answer=obj({"users": arr(ref("User"))}), errors=(50, 505, 51, 304, 804, 52)),
    "User.find_to_edit": Doc(
        "Accounts as editusers.cgi finds them: User.get, except that members of editusers"
        " see every account while usevisibilitygroups is on.",
        params={"ids": _IDS, "names": _NAMES,
                "match": strs("substrings of login or real name"),
                "limit": described(INT, "matches per string"),
                "include_disabled": BOOL, "group_ids": _IDS, "groups": _NAMES},
        answer=obj({"users": arr(ref("User"))}), errors=(50, 410, 51, 304, 804, 52)),
    "User.whoami": Doc(
        "The account the call runs as, with its saved searches.",
        answer=obj({"id": INT, "real_name": STR, "name": STR, "login": STR,
                    "groups": strs("groups the account is a member of"),
                    "is_insider": described(BOOL, "sees private comments and attachments"),
                    "is_timetracker": described(BOOL, "sees the time fields"),
                    "saved_searches": arr(_SAVED_SEARCH),
                    "settings": described(obj({"color_scheme": STR}),
                                          "how the account chose the pages to look"),
                    "comment_markdown": described(BOOL, "comment forms start as Markdown"),
                    "product_rights": described(
                        obj({"editcomponents": _NAMES, "editbugs": _NAMES,
                             "canconfirm": _NAMES}),
                        "products whose group controls give the account each right")}),
        errors=(410,)),
    "User.update_self": Doc(
        "Change one's own real name, password (ends one's login tokens) or settings.",
        params={"full_name": STR, "password": described(STR, "the new password"),
                "current_password": described(STR, "needed with password"),
                "comment_markdown": described(BOOL, "comment forms start as Markdown"),
                "settings": described(obj({"color_scheme": STR}),
                                      "color_scheme: system, light or dark")},
        answer=obj({"changes": ref("Changes")}), errors=(410, 53, 50, 300, 32000, 502, 305)),
    # Saved searches
    "SavedSearch.get": Doc("The caller's saved searches.",
                           answer=obj({"saved_searches": arr(_SAVED_SEARCH)}), errors=(410,)),
    "SavedSearch.create": Doc(
        "Save a bug list's query under a name (replacing one of the same name).",
        params={"name": STR, "query": described(STR, "the bug list's query string")},
        required=("name", "query"), answer=created(),
        errors=(410, 50, 32000, 108, 1000)),
    "SavedSearch.delete": Doc(
        "Forget saved searches.", params={"ids": _IDS, "names": _NAMES},
        answer=_ID_LIST_ANSWER, errors=(410, 50, 51)),
    # Accounts by mail
    "User.offer_account_by_email": Doc(
        "Mail an address a link to create its account (createemailregexp).",
        params={"email": STR}, required=("email",), answer=wrapped({"type": "null"}),
        errors=(50, 501)),
    "User.create_account": Doc(
        "Create the account a mailed link offered.",
        params={"account_token": described(STR, "the t of the mailed link"), "password": STR,
                "full_name": STR},
        required=("account_token", "password"),
        answer=obj({"id": INT, "login": STR}, required=["id", "login"]),
        errors=(50, 32000, 502, 305, 501, 500)),
    "User.request_password_reset": Doc(
        "Mail an account a link to choose a new password (the answer is the same for every "
        "login).", params={"login": STR}, required=("login",),
        answer=wrapped({"type": "null"}), errors=(50,)),
    "User.reset_password": Doc(
        "Choose a new password with a mailed link's token.",
        params={"reset_token": described(STR, "the t of the mailed link"), "password": STR},
        required=("reset_token", "password"),
        answer=obj({"id": INT, "login": STR}, required=["id", "login"]),
        errors=(50, 32000, 502, 305)),
    "User.check_token": Doc(
        "What a mailed token is for.",
        params={"reset_token": STR, "account_token": STR, "email_token": STR},
        answer=obj({"type": {"type": "string",
                             "enum": ["password", "account", "emailnew", "emailold"]},
                    "login": STR,
                    "email": described(STR, "email_token: the address it was mailed to")},
                   required=["type", "login"]),
        errors=(50, 32000)),
    "User.cancel_token": Doc(
        "Cancel what a mailed link offers: its token stops working (an e-mail address change: "
        "every link of it; the old address's link also takes the old address back).",
        params={"reset_token": STR, "account_token": STR, "email_token": STR},
        answer=obj({"type": {"type": "string",
                             "enum": ["password", "account", "emailnew", "emailold"]},
                    "login": STR}, required=["type", "login"]),
        errors=(50, 32000)),
    "User.request_email_change": Doc(
        "Ask to change one's own e-mail address (login): the new address gets a link that "
        "confirms it, the current one a notice with a link that cancels it "
        "(allowemailchange).",
        params={"new_email": STR, "current_password": STR},
        required=("new_email", "current_password"), answer=wrapped({"type": "null"}),
        errors=(50, 32000, 300, 501, 500)),
    "User.change_email": Doc(
        "Confirm a change of e-mail address with the link mailed to the new address.",
        params={"email_token": described(STR, "the t of the mailed link"), "password": STR},
        required=("email_token", "password"),
        answer=obj({"id": INT, "login": STR}, required=["id", "login"]),
        errors=(50, 32000, 300, 500, 501)),
    "User.can_create_account": Doc(
        "Whether people may create their own account by mail (createemailregexp is set).",
        answer=obj({"can_create_account": BOOL}, required=["can_create_account"])),
    # Mail preferences
    "User.get_email_settings": Doc(
        "An account's mail preferences.",
        params={"user": described(ID_OR_NAME, "another account (editusers)")},
        answer=obj({"email_settings": ref("EmailSettings")}), errors=(304, 51)),
    "User.update_email_settings": Doc(
        "Change an account's mail preferences.",
        params={"user": described(ID_OR_NAME, "another account (editusers)"),
                "flags": obj(values=BOOL, description="flag_requested, requested_flag"),
                "relationships": obj(values=obj(values=BOOL), description=(
                    "assignee, reporter, cc, qa_contact -> event -> wanted")),
                "watching": {"anyOf": [strs(None), obj({"add": strs(None),
                                                        "remove": strs(None),
                                                        "set": strs(None)})],
                             "description": "logins to watch: a list (set) or add/remove"},
                "ignored_bugs": {"anyOf": [arr(ID_OR_NAME),
                                           obj({"add": arr(ID_OR_NAME),
                                                "remove": arr(ID_OR_NAME),
                                                "set": arr(ID_OR_NAME)})],
                                 "description": "bugs to get no mail about"}},
        answer=obj({"email_settings": ref("EmailSettings")}),
        errors=(304, 51, 53, 100, 101, 102, 32000)),
    # The delivery queue
    "Notification.list": Doc(
        "The delivery queue (admin): parked messages by default.",
        params={"state": one_or_many({"type": "string",
                                      "enum": ["pending", "sent", "dropped", "parked"]},
                                     "states"),
                "channel": {"type": "string", "enum": ["mail", "webhook"]},
                "after": described(INT, "only messages with a larger id"),
                "limit": described(INT, "at most this many (default 100, at most 1000)")},
        answer=obj({"messages": arr(ref("OutboxMessage")),
                    "counts": obj(values=INT, description="messages by state")}),
        errors=(304, 52, 53)),
    "Notification.resend": Doc(
        "Send parked or dropped messages again (admin).",
        params={"ids": ints("message ids")}, required=("ids",),
        answer=obj({"resent": ints("the ids queued again")}), errors=(304, 50, 52)),
    # Webhooks
    "Webhooks.list": Doc(
        "The caller's webhooks, with their state.",
        params={"all": described(BOOL, "every account's (admin)"),
                "user": described(STR, "this account's (admin)")},
        answer=obj({"webhooks": arr(ref("Webhook"))}), errors=(304,)),
    "Webhooks.create": Doc(
        "Register a webhook; its signing secret is answered this once.",
        params={"name": STR, "url": STR,
                "events": one_or_many({"type": "string", "enum": [
                    "create", "change", "comment", "attachment", "attachment_change",
                    "mention"]},
                    "events: an array or a comma-separated string"),
                "product": described(STR, "a product name, or Any"),
                "component": described(STR, "a component name (optional)")},
        required=("name", "url", "events", "product"),
        answer=obj({"id": INT, "secret": STR}, required=["id", "secret"]),
        errors=(304, 50, 51, 106, 32000)),
    "Webhooks.update": Doc(
        "Change webhooks: their fields, enable them again, replace their secret.",
        params={"ids": _IDS, "name": STR, "url": STR,
                "events": one_or_many(STR, "events"), "product": STR, "component": STR,
                "enabled": BOOL,
                "rotate_secret": described(BOOL, "a new secret, answered once; the old one "
                                                 "signs too for 24 hours"),
                "drop_previous_secret": described(BOOL, "the old secret stops at once")},
        answer=obj({"webhooks": arr(obj({"id": INT, "changes": ref("Changes")})),
                    "secret": STR}),
        errors=(304, 50, 51, 52, 106, 32000)),
    "Webhooks.delete": Doc(
        "Remove webhooks; their waiting calls are dropped.",
        params={"ids": _IDS}, answer=obj({"webhooks": arr(obj({"id": INT}))}),
        errors=(50, 51, 52)),
    # Code forge repositories
    "ForgeRepository.get": Doc(
        "The registered code forge repositories (administrators).",
        answer=obj({"forge_repositories": arr(obj({
            "id": INT, "forge": STR, "repository": STR, "branches": strs("branch names"),
            "hash_references": BOOL, "bot_account": {"type": ["string", "null"]},
            "hook": STR, "created": DATETIME}))}),
        errors=(304,)),
    "ForgeRepository.create": Doc(
        "Register a repository whose webhook deliveries link commits and requests to bugs.",
        params={"forge": {"type": "string", "enum": ["github", "gitlab", "gitea"]},
                "repository": described(STR, "its full name, as its events give it"),
                "secret": described(STR, "the webhook's secret (8 to 255 characters)"),
                "branches": one_or_many(STR, "branches where Fixes bug N resolves it"),
                "bot_account": described(STR, "login acting for unknown committers"),
                "hash_references": described(BOOL, "#N names bug N")},
        required=("forge", "repository", "secret"),
        answer=obj({"id": INT}, required=["id"]), errors=(304, 50, 51, 32000)),
    "ForgeRepository.update": Doc(
        "Change registered repositories.",
        params={"ids": _IDS, "repository": STR, "secret": STR,
                "branches": one_or_many(STR, "branches"), "bot_account": STR,
                "hash_references": BOOL},
        answer=obj({"forge_repositories": arr(obj({"id": INT, "changes": ref("Changes")}))}),
        errors=(304, 50, 51, 52, 32000)),
    "ForgeRepository.delete": Doc(
        "Remove registered repositories.",
        params={"ids": _IDS}, answer=obj({"forge_repositories": arr(obj({"id": INT}))}),
        errors=(304, 50, 51, 52)),
    # API keys
    "ApiKey.get": Doc("The caller's API keys (never their secrets).",
                      params={"user": described(ID_OR_NAME, "another account (editusers)")},
                      answer=obj({"api_keys": arr(ref("ApiKey"))}), errors=(304, 51)),
    "ApiKey.create": Doc(
        "Create an API key; the secret is shown only in this answer.",
        params={"description": STR, "user": described(ID_OR_NAME, "another account "
                                                                  "(editusers)")},
        answer=obj({"id": INT, "api_key": STR}, required=["id", "api_key"]),
        errors=(304, 51)),
    "ApiKey.update": Doc("Describe or revoke API keys.",
                         params={"ids": _IDS, "description": STR, "revoked": BOOL},
                         answer=updated("api_keys"), errors=(50, 51)),
    # Groups
    "Group.create": Doc(
        "Create a group (creategroups).",
        params={"name": STR, "description": STR, "user_regexp": STR, "is_active": BOOL,
                "icon_url": STR},
        required=("name", "description"), answer=created(),
        errors=(304, 800, 801, 802, 803, 804, 53)),
    "Group.update": Doc(
        "Change groups (creategroups).",
        params={"ids": _IDS, "names": _NAMES, "name": STR, "description": STR,
                "user_regexp": STR, "is_active": BOOL, "icon_url": STR},
        answer=updated("groups"), errors=(304, 50, 51, 800, 801, 802, 803, 804, 32000)),
    "Group.get": Doc(
        "Groups, optionally with their members.",
        params={"ids": _IDS, "names": _NAMES, "membership": BOOL},
        answer=obj({"groups": arr(ref("Group"))}), errors=(805, 51)),
    # Products, components, versions, milestones, classifications, keywords
    "Product.get_selectable_products": Doc(
        "Ids of the products the caller may search.",
        answer=_ID_LIST_ANSWER),
    "Product.get_enterable_products": Doc(
        "Ids of the products the caller may file bugs in.",
        answer=_ID_LIST_ANSWER),
    "Product.get_accessible_products": Doc(
        "Ids of the products the caller may search or file bugs in.",
        answer=_ID_LIST_ANSWER),
    "Product.get": Doc(
        "Products by kind, ids and names; unknown or hidden ones are left out.",
        params={"type": _TYPE, "ids": _IDS, "names": _NAMES},
        answer=obj({"products": arr(ref("Product"))}), errors=(50, 52, 32000)),
    "Product.create": Doc(
        "Create a product with its first version and milestone (editcomponents).",
        params={"name": STR, "description": STR, "version": STR, "default_milestone": STR,
                "has_unconfirmed": BOOL, "is_open": BOOL, "classification": STR,
                "create_series": BOOL},
        required=("name", "description", "version"), answer=created(),
        errors=(304, 700, 701, 702, 703, 704, 51, 32000)),
    "Product.delete": Doc(
        "Delete products that have no bug (editcomponents).",
        params={"ids": _IDS, "names": _NAMES},
        answer=obj({"products": arr(obj({"id": INT}, required=["id"]))}, required=["products"]),
        errors=(304, 53, 50, 106, 32000)),
    "Product.update": Doc(
        "Change products (editcomponents).",
        params={"ids": _IDS, "names": _NAMES, "name": STR, "description": STR,
                "default_milestone": STR, "has_unconfirmed": BOOL, "is_open": BOOL,
                "classification": STR,
                "group_controls": obj(values={"anyOf": [ref("GroupControl"), {"type": "null"}]},
                                      description="group name -> controls, null removes")},
        answer=updated("products"),
        errors=(304, -32601, 50, 106, 700, 701, 702, 703, 705, 51, 32000)),
    "Component.create": Doc(
        "Add a component to a product (editcomponents).",
        params={"product": STR, "name": STR, "description": STR, "default_assignee": STR,
                "default_qa_contact": STR, "default_cc": _USERS_LOGINS, "is_open": BOOL,
                "create_series": BOOL},
        required=("product", "name", "description", "default_assignee"), answer=created(),
        errors=(304, 53, 50, 106, 32000, 105, 1200, 51, 504)),
    "Component.update": Doc(
        "Change components (editcomponents); fields may also come inside `updates`.",
        params={"ids": _IDS,
                "names": arr(obj({"product": STR, "component": STR}), "product and component"),
                "name": STR, "description": STR, "default_assignee": STR,
                "default_qa_contact": STR, "default_cc": _USERS_LOGINS, "is_open": BOOL,
                "updates": obj(description="the same fields (python-bugzilla)")},
        answer=updated("components"),
        errors=(304, -32601, 50, 51, 106, 1212, 1200, 105, 32000, 504)),
    "Component.delete": Doc(
        "Delete components no bug uses (editcomponents).",
        params={"ids": _IDS,
                "names": arr(obj({"product": STR, "component": STR}), "product and component")},
        answer=obj({"components": arr(obj({"id": INT}))}),
        errors=(304, 50, 51, 106, 1201, 1202)),
    "Version.create": Doc(
        "Add a version to a product (editcomponents).",
        params={"product": ID_OR_NAME, "name": STR, "sort_key": INT, "is_active": BOOL},
        required=("product", "name"), answer=created(),
        errors=(304, 53, 50, 106, 32000, 52, 54, 55)),
    "Version.update": Doc(
        "Change versions (editcomponents).",
        params={"ids": _IDS, "name": STR, "sort_key": INT, "is_active": BOOL},
        answer=updated("versions"), errors=(304, -32601, 50, 51, 106, 32000, 52, 54, 55)),
    "Version.delete": Doc(
        "Delete versions that no bug has (editcomponents).", params={"ids": _IDS},
        answer=obj({"versions": arr(obj({"id": INT}, required=["id"]))}, required=["versions"]),
        errors=(304, 53, 50, 51, 32000)),
    "Milestone.create": Doc(
        "Add a milestone to a product (editcomponents).",
        params={"product": ID_OR_NAME, "name": STR, "sort_key": INT, "is_active": BOOL},
        required=("product", "name"), answer=created(),
        errors=(304, 53, 50, 106, 32000, 52, 54, 55)),
    "Milestone.update": Doc(
        "Change milestones (editcomponents).",
        params={"ids": _IDS, "name": STR, "sort_key": INT, "is_active": BOOL},
        answer=updated("milestones"), errors=(304, -32601, 50, 51, 106, 32000, 52, 54, 55)),
    "Milestone.delete": Doc(
        "Delete milestones that no bug has (editcomponents).", params={"ids": _IDS},
        answer=obj({"milestones": arr(obj({"id": INT}, required=["id"]))}, required=["milestones"]),
        errors=(304, 53, 50, 51, 32000)),
    "Classification.get": Doc(
        "Classifications with their products.", params={"ids": _IDS, "names": _NAMES},
        answer=obj({"classifications": arr(ref("Classification"))}), errors=(900, 50, 51)),
    "Classification.create": Doc(
        "Create a classification (editclassifications).",
        params={"name": STR, "description": STR, "sort_key": INT}, required=("name",),
        answer=created(), errors=(304, 53, 50, 32000, 52, 54, 55)),
    "Classification.update": Doc(
        "Change classifications (editclassifications).",
        params={"ids": _IDS, "names": _NAMES, "name": STR, "description": STR, "sort_key": INT},
        answer=updated("classifications"), errors=(304, -32601, 50, 51, 32000, 52, 54, 55)),
    "Classification.delete": Doc(
        "Delete classifications that hold no product (editclassifications).",
        params={"ids": _IDS, "names": _NAMES},
        answer=obj({"classifications": arr(obj({"id": INT}, required=["id"]))},
                   required=["classifications"]),
        errors=(304, 53, 50, 51, 32000)),
    "Keyword.get": Doc("Keywords: all, or those named.", params={"ids": _IDS, "names": _NAMES},
                       answer=obj({"keywords": arr(ref("Keyword"))}), errors=(51,)),
    "Keyword.create": Doc(
        "Create a keyword (editkeywords).",
        params={"name": STR, "description": STR, "is_active": BOOL},
        required=("name", "description"), answer=created(), errors=(304, 53, 50, 32000)),
    "Keyword.update": Doc(
        "Change keywords (editkeywords).",
        params={"ids": _IDS, "names": _NAMES, "name": STR, "description": STR,
                "is_active": BOOL},
        answer=updated("keywords"), errors=(304, -32601, 50, 51, 32000)),
    # Flag types and fields
    "FlagType.get": Doc(
        "The flag types of a product or one of its components.",
        params={"product": STR, "component": STR},
        answer=obj({"bug": arr(ref("FlagType")), "attachment": arr(ref("FlagType"))}),
        errors=(50, 106, 51)),
    "FlagType.create": Doc(
        "Create a flag type (editcomponents; a product's administrators for their products).",
        params={"name": STR, "description": STR,
                "target_type": {"type": "string", "enum": ["bug", "attachment"]},
                "inclusions": _INCLUSIONS, "exclusions": _INCLUSIONS,
                "sortkey": {"type": "integer", "minimum": 1, "maximum": 32767},
                "is_active": BOOL, "is_requestable": BOOL, "is_specifically_requestable": BOOL,
                "is_multiplicable": BOOL, "cc_list": strs("e-mail addresses"),
                "grant_group": STR, "request_group": STR},
        required=("name", "description"), answer=created(),
        errors=(304, 50, 1101, 1102, 1103, 501, 1104, 51, 106, 53, -32000)),
    "FlagType.update": Doc(
        "Change flag types (editcomponents; a product's administrators: the inclusions and"
        " exclusions of their products, the rest of a type only theirs).",
        params={"ids": _IDS, "names": _NAMES, "name": STR, "description": STR,
                "inclusions": _INCLUSIONS, "exclusions": _INCLUSIONS,
                "sortkey": {"type": "integer", "minimum": 1, "maximum": 32767},
                "is_active": BOOL, "is_requestable": BOOL, "is_specifically_requestable": BOOL,
                "is_multiplicable": BOOL, "cc_list": strs("e-mail addresses"),
                "grant_group": STR, "request_group": STR},
        answer=obj({"flagtypes": arr(obj({"id": INT, "name": STR, "changes": ref("Changes")}))}),
        errors=(304, 50, 52, 51, 32000, -32601, 1101, 1102, 1103, 501, 1104, 106, 53, 1105)),
    "FlagType.list_all": Doc(
        "bugsvc extension: every flag type with everything its page edits (editcomponents;"
        " a product's administrators: the types of their products).",
        answer=obj({"flagtypes": arr(obj({
            "id": INT, "name": STR, "description": STR, "target_type": STR, "sortkey": INT,
            "cc_list": STR, "is_active": BOOL, "is_requestable": BOOL,
            "is_specifically_requestable": BOOL, "is_multiplicable": BOOL,
            "grant_group": {"type": ["string", "null"]},
            "request_group": {"type": ["string", "null"]},
            "inclusions": strs("Product:Component, __Any__ for every one"),
            "exclusions": strs("Product:Component, __Any__ for every one"),
            "flags": INT, "fully_editable": BOOL})),
            "groups": strs("group names a type may name"),
            "products": {"type": ["array", "null"], "items": STR}}), errors=(304,)),
    "FlagType.delete": Doc(
        "bugsvc extension: delete flag types with every flag of them (editcomponents; a"
        " product's administrators: types of their products alone).",
        params={"ids": _IDS},
        answer=obj({"flagtypes": arr(obj({"id": INT, "name": STR, "flags": INT}))}),
        errors=(304, 50, 52, 51, 1105, 32000)),
    "Bug.fields": Doc(
        "Bug field definitions (all that are not obsolete, or those named).",
        params={"ids": _IDS, "names": _NAMES},
        answer=obj({"fields": arr(ref("BugField"))}), errors=(52, 51)),
    "Bug.legal_values": Doc(
        "Legal values of a field (deprecated: use the field definitions).",
        params={"field": STR, "product_id": INT},
        answer=obj({"values": strs(None)}), errors=(50, 106, 108)),
    "Field.create": Doc(
        "Create a custom field (admin).",
        params={"name": described(STR, "cf_ then lower-case letters, digits, _"),
                "display_name": STR, "type": {"type": "integer", "minimum": 1, "maximum": 10},
                "is_mandatory": BOOL, "is_on_bug_entry": BOOL, "sort_key": INT,
                "visibility_field": STR, "visibility_values": strs(None), "value_field": STR,
                "values": _SELECT_VALUES},
        required=("name", "display_name", "type"), answer=created(),
        errors=(304, 50, 52, 51, 53, 32000)),
    "Field.update": Doc(
        "Change custom fields (admin).",
        params={"ids": _IDS, "names": _NAMES, "display_name": STR, "is_mandatory": BOOL,
                "is_on_bug_entry": BOOL, "is_obsolete": BOOL, "sort_key": INT,
                "visibility_field": {"type": ["string", "null"]},
                "visibility_values": strs(None), "value_field": {"type": ["string", "null"]},
                "values": _SELECT_VALUES},
        answer=updated("fields"), errors=(304, 50, 52, 51, 53, 32000)),
    "FieldValue.get": Doc(
        "Every value of a select field, inactive ones too (admin).",
        params={"field": STR}, required=("field",),
        answer=obj({"field": STR, "values": arr(obj({
            "id": INT, "name": STR, "sort_key": INT, "is_active": BOOL,
            "is_open": {"type": ["boolean", "null"]},
            "visibility_value": {"type": ["string", "null"]}, "bug_count": INT,
            "is_default": BOOL, "is_static": BOOL}))}),
        errors=(304, 50, 51, 32000)),
    "FieldValue.create": Doc(
        "Add a value to a select field (admin).",
        params={"field": STR, "value": STR, "sort_key": INT, "is_open": BOOL,
                "visibility_value": STR},
        required=("field", "value"), answer=created(), errors=(304, 50, 51, 52, 53, 55, 32000)),
    "FieldValue.update": Doc(
        "Rename, move or (de)activate a value of a select field (admin).",
        params={"field": STR, "value": STR, "name": STR, "sort_key": INT, "is_active": BOOL},
        required=("field", "value"),
        answer=obj({"id": INT, "changes": obj({})}, required=["id", "changes"]),
        errors=(304, 50, 51, 52, 53, 55, 32000)),
    "FieldValue.delete": Doc(
        "Delete a value of a select field that no bug has (admin).",
        params={"field": STR, "value": STR}, required=("field", "value"),
        answer=obj({"id": INT}, required=["id"]), errors=(304, 50, 51, 53, 32000)),
    "Workflow.get": Doc(
        "The statuses and the moves allowed between them (admin).",
        answer=obj({"statuses": arr(obj({"name": STR, "is_open": BOOL, "is_active": BOOL,
                                         "sort_key": INT})),
                    "transitions": arr(obj({"from": {"type": ["string", "null"]}, "to": STR,
                                            "comment_required": BOOL}))}),
        errors=(304,)),
    "Workflow.update": Doc(
        "Replace the status workflow (admin).",
        params={"transitions": arr(obj({"from": {"type": ["string", "null"]}, "to": STR,
                                        "comment_required": BOOL}))},
        required=("transitions",), answer=obj({"transitions": obj({})}),
        errors=(304, 50, 51, 53, 32000)),
    "SanityCheck.run": Doc(
        "Run every sanity check, changing nothing (editcomponents).",
        answer=obj({"checks": arr(obj({"name": STR, "title": STR, "count": INT,
                                       "samples": arr(INT), "samples_are": STR,
                                       "repairable": BOOL, "advice": STR}))}),
        errors=(304,)),
    "SanityCheck.repair": Doc(
        "Repair what one sanity check finds (admin).", params={"check": STR},
        required=("check",), answer=obj({"check": STR, "repaired": INT}), errors=(304, 51)),
    # Bugs
    "Bug.get": Doc(
        "Bugs by id or alias.",
        params={"ids": arr(ID_OR_NAME, "bug ids or aliases"),
                "permissive": described(BOOL, "skip failing ids, report them in faults")},
        answer=obj({"bugs": arr(ref("Bug")),
                    "faults": arr(obj({"id": ID_OR_NAME, "faultString": STR,
                                       "faultCode": INT}))}),
        errors=(50, 100, 101, 102)),
    "Bug.search": Doc(
        "Search bugs. Any field name (API or internal) is a criterion; also "
        "f1/o1/v1 custom search, email1..., chfield...",
        params=_SEARCH_PARAMS,
        answer=obj({"bugs": arr(ref("Bug")), "bug_count": INT}),
        errors=(50, 52, 56, 108, 1000, 32000)),
    "Report.axes": Doc(
        "The fields the caller may count bugs by.",
        answer=obj({"fields": arr(obj({"name": STR, "display_name": STR}))})),
    "Report.get": Doc(
        "Count the bugs a search finds by the values of up to three fields (only bugs the "
        "caller may see are counted).",
        params={**_SEARCH_PARAMS,
                "x_axis_field": described(STR, "the field along the horizontal axis"),
                "y_axis_field": described(STR, "the field along the vertical axis"),
                "z_axis_field": described(STR, "the field whose values make separate tables")},
        answer=obj({"x_axis_field": STR, "y_axis_field": STR, "z_axis_field": STR,
                    "x_labels": strs(None), "y_labels": strs(None), "z_labels": strs(None),
                    "tables": arr(obj({"z": {"type": ["string", "null"]},
                                       "rows": arr(ints(None)), "row_totals": ints(None),
                                       "column_totals": ints(None), "total": INT})),
                    "total": INT}),
        errors=(56, 108, 1000, 32000)),
    "Report.duplicates": Doc(
        "The most duplicated bugs (duplicates.cgi), counting only duplicates and bugs the "
        "caller may see.",
        params={"product": strs("product names"), "bug_id": one_or_many(STR, "bug ids"),
                "changedsince": described(INT, "days counted in delta (default 7)"),
                "openonly": BOOL, "sortby": STR, "reverse": BOOL,
                "maxrows": described(INT, "default 20, at most 1000")},
        answer=obj({"bugs": arr(obj({
            "id": INT, "count": INT, "delta": INT, "product": STR, "component": STR,
            "severity": STR, "op_sys": STR, "target_milestone": STR, "summary": STR,
            "status": STR, "resolution": STR})), "changedsince": INT}),
        errors=(32000,)),
    "Report.time_summary": Doc(
        "Hours worked per bug and person (summarize_time.cgi), for the time-tracking group.",
        params={"id": one_or_many(STR, "bug ids"), "do_depends": BOOL,
                "start_date": described(STR, "YYYY-MM-DD"),
                "end_date": described(STR, "YYYY-MM-DD")},
        answer=obj({"bugs": ints(None), "hours": arr(obj({
            "bug_id": INT, "summary": STR, "login": STR, "real_name": STR,
            "hours": NUMBER})), "total": NUMBER}),
        errors=(410, 56, 32000)),
    "Series.get": Doc(
        "The series the caller may see (public ones and one's own).",
        answer=obj({"series": arr(obj({
            "id": INT, "category": STR, "subcategory": STR, "name": STR, "frequency": INT,
            "query": STR, "is_public": BOOL, "creator": {"type": ["string", "null"]}}))})),
    "Series.data": Doc(
        "The daily counts of series.",
        params={"ids": _IDS, "datefrom": described(STR, "YYYY-MM-DD"),
                "dateto": described(STR, "YYYY-MM-DD")},
        answer=obj({"data": obj(values=arr(obj({"date": STR, "count": INT})),
                                description="series id -> its counts, oldest first")}),
        errors=(50, 51, 56, 32000)),
    "Series.create": Doc(
        "Save a search as a series counted every `frequency` days.",
        params={"category": STR, "subcategory": STR, "name": STR,
                "query": described(STR, "a bug list's query string"),
                "frequency": described(INT, "days (default 1)"),
                "is_public": described(BOOL, "administrators only")},
        required=("category", "subcategory", "name", "query"), answer=created(),
        errors=(410, 50, 108, 1000, 32000)),
    "Series.delete": Doc(
        "Delete a series and its counts.", params={"id": INT}, required=("id",),
        answer=_ID_LIST_ANSWER, errors=(410, 50, 51, 32000)),
    "Whine.get": Doc(
        "One's scheduled searches (editwhines.cgi): events with their schedules and "
        "searches, and the days and times a schedule may name. Members of bz_canusewhines.",
        answer=obj({"events": arr(_WHINE_EVENT), "days": arr(STR), "times": arr(STR)}),
        errors=(410, 304)),
    "Whine.create_event": Doc(
        "Add an empty scheduled-search event.", answer=created(), errors=(410, 304, 32000)),
    "Whine.update_event": Doc(
        "Set an event's subject, body, mailifnobugs and its whole lists of schedules "
        "(day, time, mailto_type 0 account / 1 group, mailto) and searches (a saved search "
        "by name, title, sortkey, onemailperbug); those left out are removed. Mailing "
        "anyone but oneself needs bz_canusewhineatothers.",
        params={"id": INT, "subject": STR, "body": STR, "mailifnobugs": BOOL,
                "schedules": arr(obj({"id": INT, "day": STR, "time": STR,
                                      "mailto_type": INT, "mailto": STR})),
                "queries": arr(obj({"id": INT, "name": STR, "title": STR, "sortkey": INT,
                                    "onemailperbug": BOOL}))},
        required=("id",), answer=created("The event's id."),
        errors=(410, 304, 50, 51, 52, 53, 32000)),
    "Whine.delete_event": Doc(
        "Delete an event with its schedules and searches.", params={"id": INT},
        required=("id",), answer=_ID_LIST_ANSWER, errors=(410, 304, 50, 51)),
    "Bug.create": Doc(
        "File a bug; the caller is its reporter.",
        params={**_BUG_FIELDS, "description": STR, "comment_is_private": BOOL,
                "is_markdown": described(BOOL, "the description is Markdown"),
                "alias": one_or_many(STR, "aliases"), "cc": one_or_many(STR, "logins"),
                "groups": strs("group names"), "keywords": one_or_many(STR, "keywords"),
                "depends_on": arr(ID_OR_NAME), "blocks": arr(ID_OR_NAME),
                "see_also": one_or_many(STR, "URLs, or numbers or aliases of bugs here")},
        required=("product", "component", "summary", "version"), answer=created(),
        errors=(50, 51, 53, 56, 100, 101, 102, 103, 104, 105, 106, 107, 112, 113, 114, 116,
                120, 121, 122, 123, 129, 130, 131, 132, 133, 134, 504, 32000)),
    "Bug.update": Doc(
        "Change bugs.",
        params={**_BUG_FIELDS, "ids": arr(ID_OR_NAME, "bugs (replace the path value)"),
                "dupe_of": ID_OR_NAME, "reset_assigned_to": BOOL, "reset_qa_contact": BOOL,
                "remaining_time": NUMBER, "work_time": NUMBER,
                "comment": obj({"body": STR, "is_private": BOOL, "is_markdown": BOOL}),
                "comment_is_private": obj(values=BOOL, description="comment id -> private"),
                "update_token": described(STR, "Bug.get's update_token: refused (32000) when "
                                               "the bug changed since"),
                "alias": list_change_object(STR, "aliases to add, remove or set"),
                "blocks": list_change_object(ID_OR_NAME, "bugs"),
                "depends_on": list_change_object(ID_OR_NAME, "bugs"),
                "cc": list_change_object(STR, "logins (no set)"),
                "groups": list_change_object(STR, "group names (no set)"),
                "keywords": list_change_object(STR, "keywords"),
                "see_also": list_change_object(STR, "URLs, or numbers or aliases of bugs "
                                                    "here (no set)")},
        answer=obj({"bugs": arr(obj({"id": INT, "alias": strs(None),
                                     "last_change_time": DATETIME,
                                     "changes": ref("Changes")}))}),
        errors=(50, 51, 100, 101, 102, 103, 104, 106, 109, 112, 113, 115, 116, 117, 118, 119,
                120, 121, 122, 123, 129, 130, 131, 132, 133, 134, 504, 32000)),
    "Bug.update_see_also": Doc(
        "Add and remove See Also links of bugs (RPC only, as in the reference).",
        params={"ids": arr(ID_OR_NAME, "bugs"), "add": arr(ID_OR_NAME, "URLs or bug ids"),
                "remove": strs("URLs")},
        required=("ids",),
        answer=obj({"changes": obj(values=obj({"see_also": _LIST_CHANGE}))}),
        errors=(50, 100, 101, 102, 109, 112, 115)),
    "Bug.update_tags": Doc(
        "Add and remove the caller's personal tags on bugs (RPC only, as in the reference).",
        params={"ids": arr(ID_OR_NAME, "bugs"),
                "tags": obj({"add": strs(None), "remove": strs(None)})},
        required=("ids", "tags"),
        answer=obj({"changes": obj(values=obj({"tags": _LIST_CHANGE}))}),
        errors=(50, 100, 101, 102, 32000)),
    "Bug.history": Doc(
        "The change history of bugs.",
        params={"ids": arr(ID_OR_NAME, "more bugs"), "new_since": DATETIME_IN},
        answer=obj({"bugs": arr(obj({
            "id": INT, "alias": strs(None),
            "history": arr(obj({"when": DATETIME, "who": STR, "changes": arr(obj({
                "field_name": STR, "removed": STR, "added": STR, "attachment_id": INT,
                "comment_id": described(INT, "the comment a change is about (its privacy, "
                                             "time worked)")}))}))}))}),
        errors=(50, 56, 100, 101, 102)),
    "Bug.edit_options": Doc(
        "What the caller may change on bugs now: statuses, fields, comments.",
        params={"ids": arr(ID_OR_NAME, "more bugs"),
                "product": described(STR, "a product the bugs would move to: groups are "
                                          "then those they would have there")},
        answer=obj({"bugs": arr(obj({
            "id": INT, "can_comment": BOOL, "can_remove_cc": BOOL,
            "statuses": arr(obj({"name": STR, "is_open": BOOL, "comment_required": BOOL})),
            "fields": strs("fields the caller may change"),
            "resolutions": strs("resolutions the caller may choose"),
            "groups": arr(obj({"id": INT, "name": STR, "description": STR, "is_on": BOOL,
                               "can_change": BOOL}))}))}),
        errors=(50, 100, 101, 102, 106)),
    "Bug.flag_requests": Doc(
        "The flags requested of the caller, newest first.",
        params={"limit": described(INT, "at most this many (default and most 100)")},
        answer=obj({"requests": arr(obj({
            "id": INT, "name": STR, "type_id": INT, "status": STR, "bug_id": INT,
            "attachment_id": {"type": ["integer", "null"]}, "setter": STR, "requestee": STR,
            "creation_date": DATETIME, "modification_date": DATETIME}))}),
        errors=(410, 52)),
    "Bug.request_queue": Doc(
        "The request queue: flags by requester, requestee, product, component, type, status.",
        params={"requester": described(STR, "login the flags were set by"),
                "requestee": described(STR, "login the flags were asked of; -: asked of "
                                            "nobody in particular"),
                "do_union": described(BOOL, "flags of the requester or the requestee"),
                "product": STR, "component": STR,
                "type": described(STR, "a flag type's name; all or empty: any"),
                "status": described(STR, "?, +, -, +- (granted or denied) or all "
                                         "(default ?)"),
                "limit": described(INT, "at most this many (default and most 1000)")},
        answer=obj({"requests": arr(obj({
            "id": INT, "name": STR, "type_id": INT, "status": STR, "bug_id": INT,
            "bug_summary": STR, "product": STR, "component": STR,
            "attachment_id": {"type": ["integer", "null"]},
            "attachment_summary": {"type": ["string", "null"]}, "requester": STR,
            "requestee": STR, "creation_date": DATETIME, "modification_date": DATETIME}))}),
        errors=(410, 52, 32000)),
    "Bug.request_types": Doc(
        "The flag types the request queue may be filtered by: those some flag has.",
        answer=obj({"types": strs("flag type names")}), errors=(410,)),
    "Bug.possible_duplicates": Doc(
        "Bugs whose summaries resemble a summary.",
        params={"summary": STR, "products": strs("product names"),
                "limit": {"type": "integer", "maximum": 25}},
        required=("summary",), answer=obj({"bugs": arr(ref("Bug"))}), errors=(50, 52, 106)),
    # Comments
    "Bug.search_comment_tags": Doc(
        "Comment tags containing a text.", params={"query": STR, "limit": INT},
        answer=strs("tags"), errors=(125, 304, 50, 52)),
    "Bug.update_comment_tags": Doc(
        "Add and remove tags of a comment.",
        params={"comment_id": INT, "add": strs("tags"), "remove": strs("tags")},
        answer=strs("the comment's tags"),
        errors=(125, 304, 50, 52, 102, 110, 126, 127, 128)),
    "Bug.comments": Doc(
        "Comments of bugs, and comments by id.",
        params={"ids": arr(ID_OR_NAME, "more bugs"), "comment_ids": ints("comment ids"),
                "new_since": DATETIME_IN},
        answer=_COMMENT_MAP, errors=(50, 100, 101, 102, 52, 111, 110, 56)),
    "Bug.add_comment": Doc(
        "Add a comment to a bug.",
        params={"comment": STR, "is_private": BOOL, "work_time": NUMBER,
                "is_markdown": described(BOOL, "the comment is Markdown")},
        required=("comment",), answer=created("The new comment's id."),
        errors=(50, 100, 101, 102, 109, 114, 113, 52, 54)),
    "Bug.render_comment": Doc(
        "A text as a bug's comment would show it on the pages (nothing is stored).",
        params={"text": STR, "id": described(ID_OR_NAME, "the bug its references are of"),
                "is_markdown": described(BOOL, "render it as Markdown")},
        required=("text",), answer=obj({"html": STR}), errors=(50, 100, 101, 102, 114)),
    "EditComments.update_comment": Doc(
        "Replace the text of one's own comment (members of edit_comments_group); the text it "
        "replaces is kept.",
        params={"comment_id": INT, "new_comment": STR,
                "is_markdown": described(BOOL, "the new text is Markdown (default: as it was)")},
        required=("comment_id", "new_comment"),
        answer=obj({"text": STR, "html": described(STR, "the text as the pages show it"),
                    "is_markdown": BOOL, "count": described(INT, "earlier texts kept")}),
        errors=(410, 50, 52, 304, 110, 111, 114, 32000)),
    "EditComments.comment_revisions": Doc(
        "The earlier texts of an edited comment (insiders and administrators).",
        params={"comment_id": INT}, required=("comment_id",),
        answer=obj({"comment": ref("Comment"), "revisions": arr(obj({
            "time": DATETIME, "editor": STR, "text": STR, "is_markdown": BOOL}))}),
        errors=(410, 50, 52, 110, 111, 304)),
    # Attachments
    "Bug.attachments": Doc(
        "Attachments of bugs, and attachments by id.",
        params={"ids": arr(ID_OR_NAME, "more bugs"), "attachment_ids": ints("attachment ids")},
        answer=_ATTACHMENT_MAP, errors=(50, 100, 101, 102, 52, 304)),
    "Bug.add_attachment": Doc(
        "Attach a file to bugs.",
        params={"ids": arr(ID_OR_NAME, "bugs (replace the path value)"),
                "data": {"type": "string", "contentEncoding": "base64"}, "file_name": STR,
                "summary": STR, "content_type": STR, "is_patch": BOOL, "is_private": BOOL,
                "comment": STR, "flags": _FLAG_CHANGES, "obsoletes": ints("attachment ids")},
        required=("data", "file_name", "summary"), answer=_ID_LIST_ANSWER,
        errors=(50, 100, 101, 102, 109, 606, 600, 604, 603, 113, 601, 114, 51, 52, 129,
                130, 131, 132, 133, 134, 32000)),
    "Bug.update_attachment": Doc(
        "Change attachments.",
        params={"ids": ints("attachments (replace the path value)"), "summary": STR,
                "file_name": STR, "content_type": STR, "is_patch": BOOL, "is_private": BOOL,
                "is_obsolete": BOOL, "comment": STR, "flags": _FLAG_CHANGES},
        answer=obj({"attachments": arr(obj({"id": INT, "last_change_time": DATETIME,
                                            "changes": ref("Changes")}))}),
        errors=(50, 52, 32000, 604, 601, 113, 114, 51, 129, 130, 131, 132, 133, 134)),
    # Last visits
    "BugUserLastVisit.update": Doc(
        "Record now as the caller's last visit of bugs.",
        params={"ids": arr(ID_OR_NAME, "bugs")}, answer=arr(ref("LastVisit")),
        errors=(50, 100, 101, 102, 32000)),
    "BugUserLastVisit.get": Doc(
        "The caller's last visits (the 20 most recent without ids).",
        params={"ids": arr(ID_OR_NAME, "bugs")}, answer=arr(ref("LastVisit"))),
}
