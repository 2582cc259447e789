"""A small browser over falcon's TestClient for the page tests: it keeps
cookies, reads the form token from the page it last saw, and posts forms
the way a browser does (URL-encoded, or multipart with files)."""

import re
import uuid
from html import unescape
from urllib.parse import urlencode

import pytest
from falcon import testing

from accounts import ADMIN, ADMIN_PASSWORD


HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


class Browser:
    def __init__(self, app):
        self.client = testing.TestClient(app)
        self.cookies = {}
        self.last = None

    def _remember(self, result):
        for cookie in result.cookies.values():
            if cookie.max_age == 0 or cookie.value == "" or (
                    cookie.expires is not None and cookie.expires.year < 2000):
                self.cookies.pop(cookie.name, None)
            else:
                self.cookies[cookie.name] = cookie.value
        return result

    def get(self, path, follow=True, headers=None, **params):
        path = path.split("#", 1)[0]        # a browser keeps the fragment to itself
        result = self._remember(self.client.simulate_get(
            path, params=params or None, cookies=dict(self.cookies),
            headers={"Accept": HTML, **(headers or {})}))
        location = result.headers.get("Location", "")
        if follow and result.status_code in (302, 303) and location.startswith("/"):
            return self.get(location)
        self.last = result
        return result

    def token(self, page=None):
        found = _TOKEN.search((page or self.last).text)
        return unescape(found.group(1)) if found else None

    def post(self, path, fields, files=None, follow=True, token=True, headers=None):
        fields = dict(fields)
        if token and "csrf_token" not in fields:
            fields["csrf_token"] = self.token()
        if files:
            body, content_type = _multipart(fields, files)
        else:
            body, content_type = urlencode(fields, doseq=True), "application/x-www-form-urlencoded"
        result = self._remember(self.client.simulate_post(
            path, body=body, cookies=dict(self.cookies),
            headers={"Content-Type": content_type, "Accept": HTML, **(headers or {})}))
        if follow and result.status_code in (302, 303):
            return self.get(result.headers["Location"])
        self.last = result
        return result

    def login(self, login, password):
        self.get("/login")
        result = self.post("/login", {"Bugzilla_login": login, "Bugzilla_password": password,
                                      "target": "/"})
        assert "bugsvc_session" in self.cookies, result.text
        return result


def signed_in(app, who):
    """A Browser of `app` signed in as `who`: the administrator or an
    account of PASSWORDS."""
    browser = Browser(app)
    browser.login(who, ADMIN_PASSWORD if who == ADMIN else PASSWORDS[who])
    return browser


def _multipart(fields, files):
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                         .encode() + str(item).encode() + b"\r\n")
    for name, (file_name, content_type, data) in files.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                     f'filename="{file_name}"\r\nContent-Type: {content_type}\r\n\r\n'.encode()
                     + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def text_of(html):
    """The page's text without tags, whitespace collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


# The people and bugs of the page tests ----------------------------------------------

PLAIN, INSIDER = "plain@example.com", "insider@example.com"
PASSWORDS = {PLAIN: "plain-password-1", INSIDER: "insider-password-1"}


class World:
    """A public bug with a public and a private comment and a public and a
    private attachment, a bug restricted to the group `secret` (which only
    the administrator is in), a plain user and an insider (group `staff`,
    the insidergroup)."""

    def __init__(self, services):
        import base64

        from accounts import ADMIN
        from bug_support import NA, SHOWN, add_bug_group, control, file_bug, set_param
        from bugsvc.services import attachment, comment
        services.add_user(PLAIN, password=PASSWORDS[PLAIN], real_name="Pat Plain")
        services.add_user(INSIDER, password=PASSWORDS[INSIDER], real_name="Ida Insider")
        add_bug_group(services, "staff", members=[INSIDER])
        set_param(services, "insidergroup", "staff")
        self.secret_group = add_bug_group(services, "secret", members=[])
        control(services, self.secret_group, SHOWN, NA)
        self.bug = file_bug(services, summary="Public crash on start",
                            description="It crashes when it starts.")
        services.call(comment.add, {"id": self.bug, "comment": "A public note"}, as_user=ADMIN)
        services.call(comment.add, {"id": self.bug, "comment": "The customer is ACME",
                                    "is_private": True}, as_user=INSIDER)

        def attach(name, private, data, content_type="text/plain"):
            return services.call(attachment.create, {
                "ids": [self.bug], "data": base64.b64encode(data).decode(), "file_name": name,
                "summary": f"File {name}", "content_type": content_type,
                "is_private": private}, as_user=INSIDER if private else ADMIN)["ids"][0]
        self.public_file = attach("trace.txt", False, b"Traceback: boom")
        self.private_file = attach("contract.txt", True, b"ACME contract terms")
        self.secret = file_bug(services, summary="Secret hole in the login",
                               groups=["secret"])


def csp(result):
    """The page's Content-Security-Policy as {directive: value}."""
    policy = {}
    for part in result.headers["Content-Security-Policy"].split(";"):
        name, _, value = part.strip().partition(" ")
        if name:
            policy[name] = value.strip()
    return policy


def form_fields(html, form_id="changeform"):
    """The fields a browser would send from the form: inputs with their
    value (checked boxes only), selected options, textareas."""
    start = html.index(f'id="{form_id}"')
    form = html[start:html.index("</form>", start)]
    fields = []
    for tag in re.findall(r"<input[^>]*>", form):
        name = re.search(r'name="([^"]+)"', tag)
        if not name:
            continue
        kind = (re.search(r'type="([^"]+)"', tag) or [None, "text"])[1]
        if kind in ("checkbox", "radio") and " checked" not in tag:
            continue
        value = re.search(r'value="([^"]*)"', tag)
        fields.append((name.group(1), unescape(value.group(1) if value else "")))
    for name, body in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', form, re.S):
        chosen = re.findall(r"<option([^>]*)>([^<]*)</option>", body)
        picked = [(attrs, text) for attrs, text in chosen if " selected" in attrs] or chosen[:1]
        for attrs, text in picked:
            value = re.search(r'value="([^"]*)"', attrs)
            fields.append((name, unescape(value.group(1) if value else text)))
    for name, text in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form,
                                 re.S):
        fields.append((name, unescape(text)))
    return fields


def submit(browser, path, fields, **changes):
    """Post the form's fields with `changes` (None removes a field)."""
    values = {}
    for name, value in fields:
        values.setdefault(name, []).append(value)
    for name, value in changes.items():
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value if isinstance(value, list) else [value]
    return browser.post(path, values, token=False)


def menu(page, name):
    """The options of the <select> named `name`: [(value, label, selected)];
    None when the field is no menu."""
    found = re.search(rf'<select id="{re.escape(name)}" name="{re.escape(name)}"[^>]*>(.*?)'
                      r'</select>', page, re.S)
    if found is None:
        return None
    return [(unescape(value), unescape(label), " selected" in attrs) for value, attrs, label in
            re.findall(r'<option value="([^"]*)"([^>]*)>([^<]*)</option>', found.group(1))]


# The accounts of the people menus and pickers (usemenuforusers, user_match.cgi).
DEV, GONE = "dev@example.com", "gone@example.com"


@pytest.fixture
def plain(services):
    """The plain account, with its password (a fixture of this plugin)."""
    return services.add_user(PLAIN, password=PASSWORDS[PLAIN], real_name="Pat Plain")


@pytest.fixture
def people(services, plain):
    """The plain account, a developer and a disabled account."""
    services.add_user(DEV, real_name="Dana Developer")
    services.add_user(GONE, real_name="Gone Person", disabled_text="Left")
    return services
