"""What every page shares: the template engine, the static files, the
session cookie and form tokens, and PageCall, through which a page handler
runs operations as its visitor and answers with a rendered template.

A page is a way in like REST: the session cookie holds a login token (made
by User.login, ended by User.logout or a password change), passed to the
Runner as the token credential, so a page sees exactly what the API shows
the same caller. Pages hold no rule of their own about who may see or
change what.

Templates are Jinja2 with autoescaping on for every template: a value
reaches the page escaped unless a filter of ours built it as markup from
escaped parts (see render.py).
"""

import hashlib
import hmac
import secrets
import time
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

import jinja2
import orjson

from ... import errors
from ...accounts.auth import CredentialsRefused
from ...api.operations import OPERATIONS, PAGE_OPERATIONS
from ...errors import ServiceError
from ...store import server_secrets
from ..client_address import scheme as client_scheme
from ..http import parse_query, read_body
from . import render
from .memo import BoundedMemo


HERE = Path(__file__).resolve().parent
SESSION_COOKIE = "bugsvc_session"
VISIT_COOKIE = "bugsvc_visit"
NOTICE_COOKIE = "bugsvc_notice"
CSRF_FIELD = "csrf_token"
# How long a process keeps the attachment_base parameter it read.
ATTACHMENT_BASE_SECONDS = 5
# A session cookie that is remembered (rememberlogin) lives as long as an
# unused login token does by default (login_token_max_age); the token's own
# expiry decides in the end.
REMEMBER_SECONDS = 30 * 24 * 3600
# The Content-Security-Policy of every page: no inline script or style, no
# other origin (but the attachment_base one, for the images and videos shown
# inline), no framing; scripts may ask this site (the comment preview, the
# people pickers).
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; "
               "img-src 'self' data:{media}; media-src 'self'{media}; connect-src 'self'; "
               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
# Notices a page shows once after a redirect (the cookie carries only a key,
# never text).
NOTICES = {
    "logged_in": "You are signed in.",
    "logged_out": "You are signed out.",
    "session_ended": "Your session has ended; sign in again to continue.",
    "changed": "Your changes have been saved.",
    "filed": "The bug has been filed.",
    "attached": "The file has been attached.",
    "attachment_failed": "The bug has been filed, but the file could not be attached; "
                         "attach it again below.",
    "comment_added": "Your comment has been added.",
    "prefs_saved": "Your preferences have been saved.",
    "password_changed": "Your password has been changed and every session of your account "
                        "has ended. Sign in with the new password.",
    "search_saved": "The search has been saved.",
    "search_forgotten": "The saved search has been forgotten.",
    "key_revoked": "The API key has been revoked.",
    "second_factor_off": "Two-factor sign-in is off: your password alone signs you in.",
    "second_factor_reset": "The account's two-factor sign-in has been reset.",
    "second_factor_none": "The account had no two-factor sign-in to reset.",
    "key_restored": "The API key can be used again.",
    "saved": "Saved.",
    "password_reset": "Your new password is set and every session of your account has ended. "
                      "Sign in with the new password.",
    "password_reset_other": "The new password of that account is set and every session of "
                            "that account has ended; you are still signed in as yourself.",
    "sudo_started": "You are now acting as another user: every page acts as them, with their "
                    "rights, until you end it (for at most 6 hours) or sign out.",
    "sudo_ended": "You are no longer acting as another user.",
    "account_created": "Your account has been created and you are signed in.",
    "email_change_mailed": "A mail with a link to confirm your new e-mail address is on its "
                           "way to it; your login changes once you open that link. Your "
                           "current address gets a mail that can cancel the change.",
}


class PageRefused(Exception):
    """A request a page refuses before running anything: a form without a
    valid form token (403), or a request it does not understand (400)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class Site:
    """The pages' shared state: the Runner, the configuration, the template
    environment and the static files (served under a name that carries a
    hash of their content, so browsers keep them for good)."""

    def __init__(self, runner, config):
        self.runner = runner
        self.config = config
        self.env, self.static = _templates()
        self._key = None
        self._attachment_base = (None, 0.0)

    @property
    def key(self):
        """The server secret behind form tokens and signed attachment links
        (the same in every process serving the database)."""
        if self._key is None:
            self._key = server_secrets.load(self.runner.db, server_secrets.WEB_FORMS).encode()
        return self._key

    def attachment_base(self):
        """The parameter attachment_base, read again at most every few
        seconds (every request asks which origin it came to)."""
        value, read_at = self._attachment_base
        if value is None or time.monotonic() - read_at > ATTACHMENT_BASE_SECONDS:
            value = self.settings()["attachment_base"]
            self._attachment_base = (value, time.monotonic())
        return value

    def settings(self):
        """{name: value} of the instance parameters, as the pages follow
        them (the installation's own settings, whoever visits)."""
        return self.runner.parameters()

    def sign(self, text):
        """An HMAC of `text` with the site's key (hex, 40 characters)."""
        return hmac.new(self.key, text.encode("utf-8"), hashlib.sha256).hexdigest()[:40]


_SHARED = {}


# Pages rendered for visitors who are not signed in, by a digest of
# everything that decided them (a bug page is 5 to 20 KB, one with a
# thousand comments about 1.5 MB).
RENDERED = BoundedMemo(32 * 1024 * 1024)
_KEY_BYTES = 200           # a key's digest and the entry's bookkeeping, roughly


def _templates():
    """The template environment and the static files, made once per
    process: they never change while it runs, and compiled templates are
    kept by the environment (every Site of the process shares them)."""
    if "env" not in _SHARED:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(HERE / "templates")),
            autoescape=True, trim_blocks=True, lstrip_blocks=True, auto_reload=False,
            cache_size=-1)
        render.install(env)
        static = {}
        for path in sorted((HERE / "static").iterdir()):
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()[:12]
            stem, suffix = path.name.rsplit(".", 1)
            versioned = f"{stem}.{digest}.{suffix}"
            static[versioned] = (data, render.STATIC_TYPES[suffix], f'"{digest}"')
            env.globals[f"{stem}_{suffix}"] = "/static/" + versioned
        _SHARED["env"], _SHARED["static"] = env, static
    return _SHARED["env"], _SHARED["static"]


# The digest of the last settings seen: they are the process's one copy
# until a parameter (or the catalog) changes, so most pages find it here.
_SETTINGS_DIGEST = (None, "")


def settings_digest(settings):
    """A digest of {name: value} `settings` (hex), standing for their values
    in the keys of RENDERED."""
    global _SETTINGS_DIGEST
    known, digest = _SETTINGS_DIGEST
    if settings is not known:
        digest = hashlib.sha256(orjson.dumps(settings, option=orjson.OPT_SORT_KEYS)).hexdigest()
        _SETTINGS_DIGEST = (settings, digest)
    return digest


class PageCall:
    """One request to a page: its visitor, the operations it runs as that
    visitor, and its answer.

    user: the visitor's account as User.whoami shows it (None when logged
    out), known after the first read.
    """

    def __init__(self, site, req, resp):
        self.site = site
        self.req = req
        self.resp = resp
        self.token = req.cookies.get(SESSION_COOKIE) or None
        self.user = None
        self._known = False
        self.notice = None
        self._query = None
        self._settings = None
        self._user_menu = False
        self._form = None
        self._files = None
        notice = req.cookies.get(NOTICE_COOKIE)
        if notice in NOTICES:
            self.notice = NOTICES[notice]
            self.resp.unset_cookie(NOTICE_COOKIE, path=self.cookie_path)

    def settings(self):
        """{name: value} of the instance parameters the pages follow (read
        once per request, with its first reads when it has any; shared:
        never change it)."""
        if self._settings is None:
            self._settings = self.site.settings()
        return self._settings

    def setting(self, name):
        """The value of instance parameter `name` the pages follow."""
        return self.settings()[name]

    def setting_is_on(self, name):
        return self.setting(name) not in ("", "0", "off")

    def user_menu(self):
        """The people fields' drop-down menu while the parameter
        usemenuforusers is on: [{"login", "label"}] of the enabled accounts
        User.get shows the visitor (at most maxusermatches of them), by
        login; None while it is off or nobody is signed in (the fields are
        text boxes then)."""
        if self._user_menu is False:
            self._user_menu = None
            if self.setting_is_on("usemenuforusers") and self.whoami() is not None:
                found = self.read_one("User.get", {"match": ["*"],
                                                   "include_fields": "name,real_name"})
                self._user_menu = [
                    {"login": person["name"],
                     "label": f"{person['real_name']} <{person['name']}>"
                     if person.get("real_name") else person["name"]}
                    for person in found["users"]]
        return self._user_menu

    # Running operations ----------------------------------------------------------------

    @property
    def headers(self):
        return {"X-BUGZILLA-TOKEN": self.token} if self.token else {}

    @property
    def address(self):
        return self.req.context.client_address

    def read(self, *calls, then=None):
        """Run reading operations [(name, params)] as the visitor in one
        snapshot; returns their results. The visitor's account comes with the
        first read. A session whose token is no longer valid (logged out
        elsewhere, expired, password changed, account disabled) ends: the
        cookie is dropped and the reads run for an anonymous visitor.
        then: called with the results of `calls` in the same snapshot,
        returns more reads [(name, params)] whose results follow theirs."""
        wanted = [(_operation(name), dict(params)) for name, params in calls]
        whoami = self.token is not None and not self._known
        if whoami:
            wanted.insert(0, (PAGE_OPERATIONS["Session.whoami"], {}))
        # The parameters come with the first reads, in their snapshot,
        # rather than in a transaction of their own.
        with_settings = self._settings is None
        if with_settings:
            wanted.insert(0, (PAGE_OPERATIONS["Site.settings"], {}))
        more = None
        if then is not None:
            skipped = int(with_settings) + int(whoami)

            def more(results):
                return [(_operation(name), dict(params))
                        for name, params in then(results[skipped:])]
        try:
            results = self.site.runner.run_many(wanted, self.headers, self.address, page=True,
                                                then=more)
        except CredentialsRefused:
            return self._session_ended(calls, then)
        except ServiceError as error:
            if whoami and error.code in (errors.ACCOUNT_DISABLED, errors.USER_ERROR):
                if not self._session_valid():
                    return self._session_ended(calls, then)
            raise
        if with_settings:
            self._settings = results.pop(0)
        if whoami:
            self.user = results.pop(0)
        self._known = True
        return results

    def read_one(self, name, params=None):
        return self.read((name, params or {}))[0]

    def whoami(self):
        """Learn the visitor's account (when the page reads nothing else)."""
        if not self._known:
            self.read()
        return self.user

    def _session_valid(self):
        try:
            self.site.runner.run_many([(PAGE_OPERATIONS["Session.whoami"], {})], self.headers,
                                      self.address, page=True)
            return True
        except ServiceError:
            return False

    def _session_ended(self, calls, then=None):
        self.token = None
        self.user = None
        self.end_session()
        self.notice = NOTICES["session_ended"]
        return self.read(*calls, then=then)

    def write(self, name, params):
        """Run writing operation `name` (of the interface's, or of the pages'
        own) as the visitor; returns its result."""
        operation = _operation(name)
        return self.site.runner.run(operation, dict(params), self.headers, self.address,
                                    page=True)

    # Sessions and form tokens --------------------------------------------------------------

    @property
    def secure(self):
        """True when the visitor reached us over https (directly, or through a
        trusted proxy that says so)."""
        return client_scheme(self.req.scheme, self.req.remote_addr,
                             self.req.get_header("X-Forwarded-Proto"),
                             self.site.config.trusted_proxies) == "https"

    @property
    def cookie_path(self):
        """The path of every cookie the pages set (the parameter cookiepath,
        as the reference sets its cookies)."""
        return self.setting("cookiepath")

    def start_session(self, token, asked_to_remember=False):
        """Set the session cookie to login token `token`. It outlives the
        browser's session as the parameter rememberlogin says: always (on),
        never (off), or when the visitor ticked the box the sign-in form
        offers (defaulton, defaultoff: `asked_to_remember`)."""
        self.token = token
        mode = self.setting("rememberlogin")
        remember = mode == "on" or (mode != "off" and asked_to_remember)
        self.resp.set_cookie(SESSION_COOKIE, token, path=self.cookie_path, http_only=True,
                             secure=self.secure, same_site="Lax",
                             max_age=REMEMBER_SECONDS if remember else None)

    def end_session(self):
        self.resp.unset_cookie(SESSION_COOKIE, path=self.cookie_path)

    def set_notice(self, key):
        """Show notice `key` (of NOTICES) on the next page this visitor opens."""
        self.resp.set_cookie(NOTICE_COOKIE, key, path=self.cookie_path, http_only=True,
                             secure=self.secure, same_site="Lax", max_age=120)

    def csrf_token(self):
        """The form token of this visitor: tied to its session, or, before it
        signs in, to a random cookie of its browser (set here when missing),
        so a form on another site cannot submit in its name."""
        if self.token:
            return self.site.sign("session:" + self.token)
        visit = self.req.cookies.get(VISIT_COOKIE)
        if not visit or len(visit) != 32 or not visit.isalnum():
            visit = secrets.token_hex(16)
            self.resp.set_cookie(VISIT_COOKIE, visit, path=self.cookie_path, http_only=True,
                                 secure=self.secure, same_site="Lax")
            self.req.cookies[VISIT_COOKIE] = visit
        return self.site.sign("visit:" + visit)

    def check_csrf(self):
        """Errors: PageRefused (403) unless the form carries this visitor's
        form token and, when the browser says where the form came from, it
        came from this site. Nothing has run yet when it is refused."""
        sent = self.form.get(CSRF_FIELD)
        site = (self.req.get_header("Sec-Fetch-Site") or "").lower()
        origin = self.req.get_header("Origin")
        if site == "cross-site" or (origin and origin != "null"
                                    and origin.split("://", 1)[-1] != self.req.host
                                    and origin.split("://", 1)[-1] != self._host_with_port()):
            raise PageRefused(403, "This form was sent from another site; nothing was changed.")
        if self.token:
            expected = self.site.sign("session:" + self.token)
        else:
            visit = self.req.cookies.get(VISIT_COOKIE) or ""
            expected = self.site.sign("visit:" + visit) if visit else ""
        if not isinstance(sent, str) or not expected or not hmac.compare_digest(sent, expected):
            raise PageRefused(403, "The form has expired or did not come from this site "
                                   "(its security token is missing or wrong); nothing was "
                                   "changed. Reload the page and try again.")

    def _host_with_port(self):
        return self.req.get_header("Host") or self.req.host

    # Forms ------------------------------------------------------------------------------------

    @property
    def form(self):
        """The posted fields ({name: text}; a repeated name gives a list)."""
        if self._form is None:
            self._read_form()
        return self._form

    @property
    def files(self):
        """The posted files: {name: (file name, content type, bytes)}."""
        if self._files is None:
            self._read_form()
        return self._files

    @property
    def query(self):
        """The query string's parameters (read when first asked for, so a
        refusal of them is answered as a page). Errors: 32000 for too many
        (parse_query)."""
        if self._query is None:
            self._query = parse_query(self.req.query_string)
        return self._query

    def _read_form(self):
        self._form, self._files = {}, {}
        if self.req.method != "POST":
            return
        data = read_body(self.req, self.site.config.max_body_bytes)
        content_type = (self.req.content_type or "").split(";")[0].strip().lower()
        if content_type == "multipart/form-data":
            self._form, self._files = render.parse_multipart(data, self.req.content_type)
        else:
            self._form = parse_query(data.decode("utf-8", errors="replace"))

    def field(self, name, default=""):
        """One posted (or, for GET, queried) field's text."""
        source = self.form if self.req.method == "POST" else self.query
        value = source.get(name, default)
        if isinstance(value, list):
            value = value[0] if value else default
        return value

    def fields(self, name):
        """Every value of a posted (or queried) field, as a list."""
        source = self.form if self.req.method == "POST" else self.query
        value = source.get(name)
        if value is None:
            return []
        return value if isinstance(value, list) else [value]

    # Answers -------------------------------------------------------------------------------

    def render(self, template, status=200, same_as=None, reads=(), **values):
        """Answer with `template` rendered for this visitor.

        same_as: for a visitor who is not signed in, data that (with the
        template, the notice and the query parameters named in `reads`,
        the only ones the page reads) decides the whole page: a page
        rendered for the same is served again, as it was (a popular bug's
        page is not rendered anew for every visitor), whatever else the
        address carries, and the page links back to its address without
        the rest."""
        values.setdefault("title", "")
        key, here = None, self.here()
        if same_as is not None and self.token is None and self.user is None:
            read = {name: self.query[name] for name in reads
                    if isinstance(self.query.get(name), str)}
            here = self.req.path + url("", **read)
            # The settings decide the page too (kept as a digest: the key
            # holds no parameter's value, the SMTP password among them).
            settings = settings_digest(self.settings())
            key = hashlib.sha256(orjson.dumps([template, status, here, self.notice, same_as,
                                               settings],
                                              option=orjson.OPT_NON_STR_KEYS)).digest()
            data = RENDERED.get(key)
            if data is not None:
                return self._answer(status, data)
        page = self.site.env.get_template(template).render(
            user=self.user, notice=self.notice, csrf_token=self.csrf_token,
            quicksearch=values.pop("quicksearch_text", ""), path=self.req.path,
            here=here, setting=self.setting, setting_is_on=self.setting_is_on,
            user_menu=self.user_menu, **values)
        data = page.encode("utf-8")
        if key is not None:
            RENDERED.put(key, data, len(data) + _KEY_BYTES)
        self._answer(status, data)

    def _answer(self, status, data):
        self.resp.status = status
        self.resp.content_type = "text/html; charset=UTF-8"
        self.resp.data = data
        secure_page(self.resp, private=self.token is not None,
                    attachment_base=self.site.attachment_base())

    def here(self):
        """This page's path and query, for returning to it after signing in."""
        return self.req.path + ("?" + self.req.query_string if self.req.query_string else "")

    def redirect(self, location, notice=None):
        """Answer 303 See Other to `location` (a path of this site)."""
        if notice:
            self.set_notice(notice)
        self.resp.status = 303
        self.resp.location = location
        self.resp.content_type = "text/html; charset=UTF-8"
        self.resp.data = b""
        secure_page(self.resp, private=True)


def _operation(name):
    """The operation a page names: the interface's, or the pages' own."""
    return OPERATIONS.get(name) or PAGE_OPERATIONS[name]


def media_source(attachment_base):
    """The Content-Security-Policy source of the attachment_base origin
    (" scheme://host[:port]", the bug number in the host a wildcard), or ""
    when attachments are served by this site."""
    if not attachment_base:
        return ""
    parts = urlsplit(attachment_base)
    host = parts.netloc.lower()
    if "%bugid%" in host:
        host = "*." + host.split(".", 1)[1] if "." in host else ""
    if not parts.scheme or not host or any(c in host for c in " ;,'\"%"):
        return ""
    return f" {parts.scheme.lower()}://{host}"


def secure_page(resp, private, attachment_base=""):
    """The headers every page carries; pages of a signed-in visitor are
    never stored (a shared computer's cache keeps nothing of them).
    attachment_base: the parameter, whose origin may serve the page's
    images and videos."""
    resp.set_header("Content-Security-Policy",
                    PAGE_POLICY.format(media=media_source(attachment_base)))
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("X-Frame-Options", "DENY")
    resp.set_header("Referrer-Policy", "same-origin")
    resp.set_header("Cache-Control", "no-store" if private else "no-cache")
    resp.set_header("Vary", "Accept, Cookie")


def url(path, **params):
    """`path` with `params` as its query string (None values left out;
    lists repeat the key)."""
    items = [(key, value) for key, value in params.items() if value is not None]
    return path + ("?" + urlencode(items, doseq=True) if items else "")


def local_target(value, default="/"):
    """`value` when it is a path of this site (never another site: no
    scheme, no host, no backslash), else `default`."""
    if (isinstance(value, str) and value.startswith("/") and not value.startswith("//")
            and "\\" not in value and "\r" not in value and "\n" not in value):
        return value
    return default


def quote_path(text):
    return quote(str(text), safe="")
