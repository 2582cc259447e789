"""A forgotten password from end to end: a real bugsvc server (delivering
its own mail) and a real SMTP server on loopback. A visitor asks for a link
on the sign-in page, the mail arrives, its link opens the form, the new
password is set, the visitor signs in with it, and the session the account
had elsewhere has ended."""

import http.cookiejar
import re
import sys
import urllib.parse
import urllib.request
from html import unescape

import pytest

from live_server import ROOT
from notify_support import SmtpSink, wait_for


pytestmark = pytest.mark.slow

ADMIN, ADMIN_PASSWORD = "admin@example.com", "live admin password 1"
DEV, OLD, NEW = "dev@example.com", "the old password 1", "the new password 2"
HTML = "text/html"


class Visitor:
    """A browser's part that matters here: cookies, following redirects,
    and sending a page's form with its form token."""

    def __init__(self, base):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.page = ""

    def open(self, path, fields=None):
        url = path if path.startswith("http") else self.base + path
        data = None
        if fields is not None:
            fields = dict(fields, csrf_token=self.form_token())
            data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(url, data=data, headers={"Accept": HTML})
        try:
            with self.opener.open(request, timeout=30) as response:
                status, self.page = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            with error:
                status, self.page = error.code, error.read().decode()
        return status, self.page

    def form_token(self):
        return unescape(re.search(r'name="csrf_token" value="([^"]+)"', self.page).group(1))

    def sign_in(self, login, password):
        self.open("/login")
        return self.open("/login", {"Bugzilla_login": login, "Bugzilla_password": password,
                                    "target": "/"})


def signed_in_as(page):
    found = re.search(r'<span class="who">([^<]+)</span>', page)
    return found.group(1) if found else None


@pytest.fixture
def smtp():
    sink = SmtpSink()
    yield sink
    sink.stop()


def test_a_forgotten_password_by_mail_from_end_to_end(start, tmp_path, smtp):
    server = start(tmp_path / "live.sqlite", {"BUGSVC_ADMIN_EMAIL": ADMIN,
                                              "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD},
                   command=[sys.executable, str(ROOT / "bugsvc.py")])
    admin = {"Bugzilla_login": ADMIN, "Bugzilla_password": ADMIN_PASSWORD}
    status, body, _ = server.call("PUT", "/rest/parameters", admin, {
        "mail_delivery_method": "SMTP", "smtpserver": f"127.0.0.1:{smtp.port}",
        "urlbase": server.url + "/"})
    assert status == 200, body
    status, body, _ = server.call("POST", "/rest/user", admin, {"email": DEV, "password": OLD})
    assert status == 201, body

    elsewhere = Visitor(server.url)
    assert signed_in_as(elsewhere.sign_in(DEV, OLD)[1]) == DEV

    visitor = Visitor(server.url)
    visitor.open("/login")
    status, page = visitor.open("/token.cgi", {"a": "reqpw", "loginname": DEV})
    assert status == 200 and "a mail with a link to choose a new password" in page
    [mail] = wait_for(lambda: smtp.to(DEV), what="the password mail")
    found = re.search(r"(http://127\.0\.0\.1:\d+/token\.cgi\?t=\w+&a=cfmpw)\s",
                      mail.get_content())
    assert found, mail.get_content()
    link = found.group(1)

    status, page = visitor.open(link)
    assert status == 200 and DEV in page and 'name="matchpassword"' in page
    secret = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["t"][0]
    status, page = visitor.open("/token.cgi", {"a": "chgpw", "t": secret, "password": NEW,
                                               "matchpassword": NEW})
    assert status == 200 and "Your new password is set" in page

    status, page = visitor.sign_in(DEV, OLD)
    assert status == 401 and signed_in_as(page) is None
    status, page = visitor.sign_in(DEV, NEW)
    assert status == 200 and signed_in_as(page) == DEV
    status, page = elsewhere.open("/")
    assert signed_in_as(page) is None and "Your session has ended" in page
    status, page = visitor.open(link)                          # the link worked once
    assert status == 400
