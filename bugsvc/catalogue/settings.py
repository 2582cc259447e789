"""Instance parameters: their defaults (those of the reference tracker),
who may read them, how a new value is checked, and changing them; and when
an audited object of the installation last changed (the calls are
services/instance.py's).

Values are stored and returned as strings, as the reference does.

Every parameter offered here changes what the service does (some only on
the web pages, as in the reference: cookiepath, rememberlogin,
usemenuforusers, default_search_limit, allowemailchange). The reference
has more, for parts bugsvc does not have; they are not offered (a PUT
naming one answers like any unknown name, 51).
Values stored under such names by an earlier version stay in the params
table and are ignored by `load`.

Secret parameters (the SMTP password, LDAPbinddn, the client secrets in
oidc_providers) are never shown: every reading, answer and audit record
carries a mask instead of the value.
"""

import re

from .. import dates
from ..errors import OBJECT_DOES_NOT_EXIST, USER_ERROR, ServiceError
from ..store import audit
from ..store.db import placeholders
from .setting_docs import DESCRIPTIONS, SECTIONS


BOOL = "bool"
INT = "int"
TEXT = "text"
REGEXP = "regexp"
GROUP = "group"          # a group name, or "" for none
FIELD_VALUE = "value"    # a legal value of the select field named in extra
CLOSED_STATUS = "closed"  # a closed bug status
URL = "url"              # "" or an http(s) URL ending in a slash
EMAIL = "email"          # "" or an e-mail address
SMTP_SERVER = "smtp"     # "" or host[:port]
SECRET = "secret"        # any text, never shown (SECRET_MASK instead)
COOKIE_PATH = "path"     # a URL path starting with a slash, fit for a cookie
VERIFY_CLASSES = "verify"  # an ordered list of password checkers (DB, LDAP)
LDAP_SERVERS = "ldap_servers"  # "" or LDAP servers separated by commas or spaces
OIDC_PROVIDERS = "oidc"  # "" or a JSON list of OpenID providers (secrets never shown)

# name -> (default, kind, extra). extra: allowed choices for TEXT when a
# tuple; (least, most) for INT when a tuple; the select field for FIELD_VALUE.
DEFINITIONS = {
    # Deleting a product or component that has bugs deletes its bugs (as the
    # reference; off, such a deletion is refused).
    "allowbugdeletion": ("0", BOOL, None),
    # Whether people may change their own e-mail address (login) in their
    # preferences, confirmed from the new address (as the reference).
    "allowemailchange": ("1", BOOL, None),
    # Another origin for attachment content ("" : served by this one); its
    # URL may hold %bugid%, replaced by the attachment's bug number.
    "attachment_base": ("", URL, None),
    "comment_taggers_group": ("editbugs", GROUP, None),
    # Members may edit their own comments (bugzilla.mozilla.org's parameter).
    "edit_comments_group": ("", GROUP, None),
    # Addresses that may create their own account by mail (User.offer_account_by_email).
    "createemailregexp": (".*", REGEXP, None),
    "commentonchange_resolution": ("0", BOOL, None),
    "commentonduplicate": ("0", BOOL, None),
    # The path of the web pages' cookies (the site's path behind a proxy).
    "cookiepath": ("/", COOKIE_PATH, None),
    # How many bugs a bug list page shows when its address asks for no
    # limit (0: as many as a search returns).
    "default_search_limit": ("500", INT, None),
    "defaultopsys": ("", FIELD_VALUE, "op_sys"),
    "defaultplatform": ("", FIELD_VALUE, "rep_platform"),
    "defaultpriority": ("---", FIELD_VALUE, "priority"),
    "defaultseverity": ("enhancement", FIELD_VALUE, "bug_severity"),
    "duplicate_or_move_bug_status": ("RESOLVED", CLOSED_STATUS, None),
    "emailregexp": (r"^[\w\.\+\-=']+@[\w\.\-]+\.[\w\-]+$", REGEXP, None),
    "emailregexpdesc": ("A legal address must contain exactly one '@', and at least one '.' "
                        "after the @.", TEXT, None),
    "emailsuffix": ("", TEXT, None),
    "insidergroup": ("", GROUP, None),
    "letsubmitterchoosemilestone": ("1", BOOL, None),
    "letsubmitterchoosepriority": ("1", BOOL, None),
    # Days a login token stays valid after its last use (the reference keeps
    # its login cookies 30 days after their last use).
    "login_token_max_age": ("30", INT, (1, 3650)),
    "maintainer": ("", EMAIL, None),
    "makeproductgroups": ("0", BOOL, None),
    # Members of this group must sign in with a second factor (TOTP); one
    # without it is sent to enrol at the page sign-in and refused by
    # password sign-ins of the API until then (bugzilla.mozilla.org's
    # parameter of the same name). "": nobody must.
    "mfa_group": ("", GROUP, None),
    # Mail: how it leaves (SMTP; Test appends every mail to mailer.testfile
    # beside the database; None sends nothing), who it is from, the SMTP
    # server (host[:port]), its account and whether it is reached over TLS
    # from the start (port 465 by default); everyone named in globalwatchers
    # (logins, separated by commas or spaces) gets every bug mail.
    "mail_delivery_method": ("None", TEXT, ("SMTP", "Test", "None")),
    "mailfrom": ("bugzilla-daemon", TEXT, None),
    "globalwatchers": ("", TEXT, None),
    "max_search_results": ("10000", INT, None),
    "maxattachmentsize": ("1000", INT, None),
    "maxlocalattachment": ("0", INT, None),
    "maxusermatches": ("1000", INT, None),
    "musthavemilestoneonaccept": ("0", BOOL, None),
    "noresolveonopenblockers": ("0", BOOL, None),
    # The sign-in form's "stay signed in": on (always), off (never: the
    # session ends with the browser's), defaulton / defaultoff (a box,
    # ticked or not).
    "rememberlogin": ("on", TEXT, ("on", "defaulton", "defaultoff", "off")),
    "password_complexity": ("no_constraints", TEXT,
                            ("no_constraints", "mixed_letters", "letters_numbers",
                             "letters_numbers_specialchars")),
    "requirelogin": ("0", BOOL, None),
    "search_allow_no_criteria": ("1", BOOL, None),
    "strict_isolation": ("0", BOOL, None),
    "smtp_password": ("", SECRET, None),
    "smtp_ssl": ("0", BOOL, None),
    "smtp_username": ("", TEXT, None),
    "smtpserver": ("localhost", SMTP_SERVER, None),
    "timetrackinggroup": ("editbugs", GROUP, None),
    "urlbase": ("", URL, None),
    "use_see_also": ("1", BOOL, None),
    "useclassification": ("0", BOOL, None),
    # Lists of accounts (drop-down menus) instead of text boxes for people
    # on the web pages.
    "usemenuforusers": ("0", BOOL, None),
    "useqacontact": ("0", BOOL, None),
    "usestatuswhiteboard": ("0", BOOL, None),
    "usetargetmilestone": ("0", BOOL, None),
    "usevisibilitygroups": ("0", BOOL, None),
    "webservice_email_filter": ("0", BOOL, None),
    # Webhooks: whether they are called at all, who may register them, who
    # may register one for every product, and whether their URLs may name
    # loopback, private or link-local addresses (off: such a URL is refused,
    # so a webhook cannot reach services inside the server's network).
    "webhooks_allow_private_addresses": ("0", BOOL, None),
    "webhooks_any_product_group": ("admin", GROUP, None),
    "webhooks_enabled": ("0", BOOL, None),
    "webhooks_group": ("editbugs", GROUP, None),
}

# Self-registration (bugsvc additions): addresses and e-mail domains (each
# with its subdomains) that may not create their own account by mail,
# separated by commas or spaces; shown to tweakparams members only.
DEFINITIONS.update({
    "blocked_email_domains": ("", TEXT, None),
    "blocked_emails": ("", TEXT, None),
})

# The MCP endpoint at /mcp (bugsvc additions): whether it answers at all
# (its tools read as the API does for the same caller), and whether its
# tools that write (file, comment, update, flags) are offered to callers
# with an API key. Shown to tweakparams members only, so the documented
# answers of GET /rest/parameters to other callers stay as they are.
DEFINITIONS.update({
    "mcp_allow_write": ("0", BOOL, None),
    "mcp_enabled": ("1", BOOL, None),
})

# Replying to bug mail (a bugsvc addition): the address `bugsvc mail-in`
# receives mail at; when set, every bug mail's Reply-To is this address with
# a token for its bug and recipient (user+token@domain), and a reply becomes
# that recipient's comment. Shown to tweakparams members only.
# mailin_new_bug_address: where mail files a new bug (its `@product` and
# `@component` lines say where) as the account whose login is the sender's
# address, as Bugzilla's email_in.pl trusts the From address: empty (off)
# unless the MTA checks senders.
DEFINITIONS.update({
    "mailin_address": ("", EMAIL, None),
    "mailin_new_bug_address": ("", EMAIL, None),
})

# Signing in against an LDAP directory (accounts/directory.py), with the
# reference's names and defaults: user_verify_class lists the password
# checkers, tried in order until one accepts (DB: the stored password; LDAP:
# the directory); LDAPbinddn holds a password ("dn:password"), so it is
# never shown. Shown to tweakparams members only, as every parameter outside
# the interface's documented lists.
DEFINITIONS.update({
    "user_verify_class": ("DB", VERIFY_CLASSES, None),
    "LDAPserver": ("", LDAP_SERVERS, None),
    "LDAPstarttls": ("0", BOOL, None),
    "LDAPbinddn": ("", SECRET, None),
    "LDAPBaseDN": ("", TEXT, None),
    "LDAPuidattribute": ("uid", TEXT, None),
    "LDAPmailattribute": ("mail", TEXT, None),
    "LDAPfilter": ("", TEXT, None),
})

# Signing in with OpenID Connect providers (accounts/oidc.py; bugsvc
# additions): the providers, as a JSON list of {name, issuer, client_id,
# client_secret} (optionally group_claim and groups), their client secrets
# never shown; whether a provider's verified address that no account has
# makes a new account. Shown to tweakparams members only.
DEFINITIONS.update({
    "oidc_providers": ("", OIDC_PROVIDERS, None),
    "oidc_create_accounts": ("0", BOOL, None),
})

SECRET_MASK = "********"
# The password checkers user_verify_class may name (the reference also has
# RADIUS, which bugsvc does not offer).
VERIFIERS = ("DB", "LDAP")

# Select-field parameters that may be empty (meaning: no default value).
_MAY_BE_EMPTY = ("defaultopsys", "defaultplatform")
_URL = re.compile(r"https?://[^\s]+/", re.IGNORECASE)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_SMTP_SERVER = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
                          r"(?::(\d{1,5}))?")

# What each tier of caller sees (interface "Parameters object").
PUBLIC = ("maintainer", "requirelogin")
LOGGED_IN = (
    "allowemailchange", "attachment_base", "commentonchange_resolution", "commentonduplicate",
    "cookiepath", "defaultopsys", "defaultplatform", "defaultpriority", "defaultseverity",
    "duplicate_or_move_bug_status", "emailregexpdesc", "emailsuffix",
    "letsubmitterchoosemilestone", "letsubmitterchoosepriority", "mailfrom", "maintainer",
    "maxattachmentsize", "maxlocalattachment", "musthavemilestoneonaccept",
    "noresolveonopenblockers", "password_complexity", "rememberlogin", "requirelogin",
    "search_allow_no_criteria", "urlbase", "use_see_also", "useclassification",
    "usemenuforusers", "useqacontact", "usestatuswhiteboard", "usetargetmilestone",
)
_COOKIE_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+=:@%/-]*")


def defaults():
    """{name: default value} for every parameter."""
    return {name: definition[0] for name, definition in DEFINITIONS.items()}


def shown(name, value):
    """The value of parameter `name` as any reader is shown it: secrets are
    masked (SECRET_MASK when set, empty when not)."""
    kind = DEFINITIONS.get(name, (None, None))[1]
    if kind == SECRET:
        return SECRET_MASK if value else ""
    if kind == OIDC_PROVIDERS and value:
        from ..accounts.oidc import shown_providers
        return shown_providers(value)
    return value


def load(conn):
    """{name: value} of every parameter, stored values over defaults."""
    values = defaults()
    for name, value in conn.execute("SELECT name, value FROM params"):
        if name in values:
            values[name] = value
    return values


def normalise(conn, name, value):
    """Check a new value for parameter `name`; return its stored string form.

    Raises ValueError with a message saying what is wrong.
    """
    default, kind, extra = DEFINITIONS[name]
    if isinstance(value, bool):
        text = "1" if value else "0"
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(int(value)) if float(value).is_integer() else str(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise ValueError(f"the value of '{name}' must be a string, a number or a boolean")
    if kind == BOOL:
        if text.lower() in ("1", "on", "true", "yes"):
            return "1"
        if text.lower() in ("0", "off", "false", "no", ""):
            return "0"
        raise ValueError(f"'{name}' must be 0 or 1")
    if kind == INT:
        if not re.fullmatch(r"\d{1,12}", text):
            raise ValueError(f"'{name}' must be a non-negative integer")
        if isinstance(extra, tuple) and not extra[0] <= int(text) <= extra[1]:
            raise ValueError(f"'{name}' must be a number from {extra[0]} to {extra[1]}")
        return str(int(text))
    if kind == REGEXP:
        try:
            re.compile(text)
        except re.error as exc:
            raise ValueError(f"'{name}' is not a valid regular expression: {exc}") from None
        return text
    if kind == GROUP:
        if not text:
            return text
        row = conn.execute("SELECT name FROM groups WHERE lower(name) = lower(?)",
                           (text,)).fetchone()
        if row is None:
            raise ValueError(f"'{text}' is not the name of a group")
        return row[0]
    if kind == FIELD_VALUE:
        if not text and name in _MAY_BE_EMPTY:
            return text
        if conn.execute(
                "SELECT 1 FROM field_values v JOIN fields f ON f.id = v.field_id"
                " WHERE f.name = ? AND v.value = ?", (extra, text)).fetchone() is None:
            raise ValueError(f"'{text}' is not a legal value of {extra}")
        return text
    if kind == CLOSED_STATUS:
        if conn.execute(
                "SELECT 1 FROM field_values v JOIN fields f ON f.id = v.field_id"
                " WHERE f.name = 'bug_status' AND v.value = ? AND v.is_open = 0",
                (text,)).fetchone() is None:
            raise ValueError(f"'{text}' is not a closed bug status")
        return text
    if kind == URL:
        if text and not _URL.fullmatch(text):
            raise ValueError(f"'{name}' must be empty or a URL starting with http:// or https:// "
                             "and ending with a slash")
        pages = _origin(_stored(conn, "urlbase"))
        if name == "attachment_base" and text and _origin(text) == pages:
            # That origin serves attachments and nothing else: it cannot be
            # the one of the pages.
            raise ValueError("'attachment_base' must name another host than 'urlbase'")
        return text
    if kind == EMAIL:
        if text and not _EMAIL.fullmatch(text):
            raise ValueError(f"'{name}' must be empty or an e-mail address")
        return text
    if kind == SMTP_SERVER:
        match = _SMTP_SERVER.fullmatch(text)
        if text and (match is None or (match.group(1) is not None
                                       and not 1 <= int(match.group(1)) <= 65535)):
            raise ValueError(f"'{name}' must be empty or a host name with an optional port "
                             "(host or host:port, the port from 1 to 65535)")
        return text
    if kind == COOKIE_PATH:
        if not _COOKIE_PATH.fullmatch(text):
            raise ValueError(f"'{name}' must be a path starting with a slash, without spaces, "
                             "commas or semicolons")
        return text
    if kind == SECRET:
        return value if isinstance(value, str) else text
    if kind == VERIFY_CLASSES:
        return _verify_classes(text)
    if kind == OIDC_PROVIDERS:
        from ..accounts import oidc
        kept = oidc.keep_secrets(text, _stored(conn, name))
        if kept and not oidc.available():
            raise ValueError("OpenID Connect needs Authlib: install bugsvc with its extra "
                             "'oidc' (pip install 'bugsvc[oidc]')")
        return kept
    if kind == LDAP_SERVERS:
        from ..accounts.directory import parse_servers
        parse_servers(text)
        return text
    if isinstance(extra, tuple) and text not in extra:
        raise ValueError(f"'{name}' must be one of: {', '.join(extra)}")
    return text


def verify_classes(text):
    """The password checkers of a user_verify_class value, in order."""
    return [name.strip() for name in re.split(r"[\s,]+", text or "") if name.strip()]


def _verify_classes(text):
    """The stored form of a user_verify_class value: checkers from
    VERIFIERS, each once, separated by commas; LDAP only while its library
    is installed."""
    names = verify_classes(text)
    if not names:
        raise ValueError("'user_verify_class' must name at least one of: " + ", ".join(VERIFIERS))
    for name in names:
        if name not in VERIFIERS:
            raise ValueError(f"'{name}' is not a password checker (choose from "
                             f"{', '.join(VERIFIERS)})")
    if len(set(names)) != len(names):
        raise ValueError("'user_verify_class' names a checker twice")
    from ..accounts.directory import available
    if "LDAP" in names and not available():
        raise ValueError("LDAP needs the ldap3 library: install bugsvc with its extra "
                         "'ldap' (pip install 'bugsvc[ldap]')")
    return ",".join(names)


def _origin(url):
    """scheme://host[:port] of a URL, in lower case ("" for none)."""
    parts = (url or "").split("/")
    return "/".join(parts[:3]).lower() if len(parts) >= 3 else ""


def _stored(conn, name):
    row = conn.execute("SELECT value FROM params WHERE name = ?", (name,)).fetchone()
    return row[0] if row is not None else DEFINITIONS[name][0]


# How each parameter is offered for change --------------------------------------------

def _choices(conn, name, kind, extra, current):
    """The values parameter `name` may take, when they are a closed list
    (None otherwise); the current value is always among them."""
    if kind == GROUP:
        found = [""] + [row[0] for row in conn.execute("SELECT name FROM groups ORDER BY name")]
    elif kind == FIELD_VALUE:
        found = ([""] if name in _MAY_BE_EMPTY else []) + [row[0] for row in conn.execute(
            "SELECT v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
            " WHERE f.name = ? AND v.is_active = 1 ORDER BY v.sort_key, v.value", (extra,))]
    elif kind == CLOSED_STATUS:
        found = [row[0] for row in conn.execute(
            "SELECT v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
            " WHERE f.name = 'bug_status' AND v.is_open = 0 AND v.is_active = 1"
            " ORDER BY v.sort_key, v.value")]
    elif kind == TEXT and isinstance(extra, tuple):
        found = list(extra)
    else:
        return None
    if current not in found:
        found.append(current)
    return found


def _control(name, kind):
    """The kind of form control that edits parameter `name`."""
    if kind == BOOL:
        return "bool"
    if kind == INT:
        return "number"
    if kind == SECRET:
        return "secret"
    if name in ("emailregexpdesc", "oidc_providers"):
        return "long_text"
    return "text"


def described(ctx):
    """Every parameter as its page offers it, in the reference's sections:
    [{"name", "title", "description", "parameters": [{"name", "description",
    "control" ("bool", "number", "choice", "secret", "text", "long_text"),
    "value" (as shown: a secret masked), "default", "choices" (a list, or
    None), "min", "max" (numbers only)}]}]."""
    conn = ctx.conn
    values = load(conn)
    sections = []
    for key, title, about, names in SECTIONS:
        shown_params = []
        for name in names:
            default, kind, extra = DEFINITIONS[name]
            choices = _choices(conn, name, kind, extra, values[name])
            bounds = extra if kind == INT and isinstance(extra, tuple) else (0, None)
            shown_params.append({
                "name": name, "description": DESCRIPTIONS[name],
                "control": "choice" if choices is not None else _control(name, kind),
                "value": shown(name, values[name]), "default": shown(name, default),
                "choices": choices, "min": bounds[0] if kind == INT else None,
                "max": bounds[1] if kind == INT else None})
        sections.append({"name": key, "title": title, "description": about,
                         "parameters": shown_params})
    return sections


# What the installation tells a caller, and changes ---------------------------------

# The reference accepts ^Bugzilla(::\w+)*$; Service:: is our neutral twin.
_CLASS_NAME = re.compile(r"(?:Bugzilla|Service)((?:::[A-Za-z0-9_]+)*)", re.ASCII)
_REFERENCE_ROOT = audit.CLASS_PREFIX.rstrip(":")


def visible(ctx):
    """{name: value as shown} of the parameters the caller may read:
    logged-out callers maintainer and requirelogin, logged-in callers the
    documented set, tweakparams members every parameter."""
    values = load(ctx.conn)
    if ctx.caller.in_group("tweakparams"):
        names = sorted(values)
    elif ctx.caller.is_logged_in:
        names = LOGGED_IN
    else:
        names = PUBLIC
    return {name: shown(name, values[name]) for name in names}


def change(ctx, values):
    """Validate and store `values` ({name: new value}), auditing each change
    as class Param. No permission check: callers do that (the command line
    needs none). Returns {name: {"added", "removed"}} of the changed ones.
    A secret parameter's values are masked in the answer and the audit log,
    and its mask as the new value leaves it unchanged.
    Errors: 51 unknown parameter; 32000 invalid value (nothing stored).
    """
    current = load(ctx.conn)
    updates = {}
    for name, value in values.items():
        if name not in DEFINITIONS:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no parameter named '{name}'.")
        if value == SECRET_MASK and shown(name, "x") == SECRET_MASK:
            continue
        try:
            updates[name] = normalise(ctx.conn, name, value)
        except ValueError as exc:
            raise ServiceError(USER_ERROR,
                               f"Invalid value for parameter '{name}': {exc}.") from None
    changes = {}
    for name, value in updates.items():
        if value == current[name]:
            continue
        cur = ctx.conn.execute("UPDATE params SET value = ? WHERE name = ?", (value, name))
        if cur.rowcount == 0:
            ctx.conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))
        added, removed = shown(name, value), shown(name, current[name])
        changes[name] = {"added": added, "removed": removed}
        audit.record(ctx, "Param", 0, name, removed, added)
    ctx.forget_params()
    return changes


def last_audit_time(ctx, class_names):
    """When an audited object of one of `class_names` (names 'Service::X'
    or 'Bugzilla::X'; others are ignored, and when none is left every class
    counts) last changed; None when nothing matching was audited."""
    classes = []
    for name in class_names:
        match = _CLASS_NAME.fullmatch(name)
        class_name = match and _REFERENCE_ROOT + match.group(1)
        if class_name and class_name not in classes:
            classes.append(class_name)
    sql = "SELECT MAX(at_time) FROM audit_log"
    if classes:
        sql += f" WHERE class IN ({placeholders(classes)})"
    return dates.from_db(ctx.conn.execute(sql, classes).fetchone()[0])


# The most entries one reading of the audit log answers.
AUDIT_LOG_MAX = audit.MAX_ENTRIES


def audit_log(ctx, words, who, class_names, since, until, limit, offset):
    """The audit log's entries (store/audit.py's `entries`), newest first,
    with the total that match and every class the log holds. class_names:
    'Bugzilla::X', 'Service::X' or 'X'. No permission check: callers do
    that. Returns (entries, total, classes)."""
    classes = []
    for name in class_names:
        short = name.split("::", 1)[1] if name.startswith(("Bugzilla::", "Service::")) else name
        classes.append(audit.CLASS_PREFIX + short)
    found, total = audit.entries(ctx.conn, words, who, classes, since, until, limit, offset)
    return found, total, audit.classes(ctx.conn)
