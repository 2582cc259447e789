"""A throwaway OpenID provider for the tests (tests/oidc_provider.mjs:
panva's oidc-provider under Node.js, on loopback), and a client that
walks its development login and consent pages the way a person does."""

import os
import re
import shutil
import subprocess
from html import unescape
from urllib.parse import parse_qs, urljoin, urlsplit

from live_server import ROOT, stop_process


MODULE = ROOT / ".venv" / "npm" / "node_modules" / "oidc-provider" / "lib" / "index.js"
SCRIPT = ROOT / "tests" / "oidc_provider.mjs"
CLIENT_ID = "bugsvc-test"
CLIENT_SECRET = "bugsvc-test-secret-0123456789"
START_TIMEOUT = 30
_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


def available():
    """True when Node.js and the oidc-provider package are installed."""
    return shutil.which("node") is not None and MODULE.exists()


class Provider:
    """oidc-provider on 127.0.0.1:port, its only client sending people back
    to `redirect_uri`."""

    def __init__(self, port, redirect_uri):
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self.redirect_uri = redirect_uri
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            ["node", str(SCRIPT), str(MODULE), str(self.port), CLIENT_ID, CLIENT_SECRET,
             self.redirect_uri], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "NODE_NO_WARNINGS": "1"})
        lines = []
        for line in self.process.stdout:       # ends when the process does
            lines.append(line)
            if line.strip() == "ready":
                return self
        raise RuntimeError("the OpenID provider did not start: " + "".join(lines)[-2000:])

    def stop(self):
        if self.process is not None:
            stop_process(self.process)
            self.process.stdout.close()
        self.process = None

    def setting(self, name="Example ID", **extra):
        """One provider of the parameter oidc_providers."""
        return {"name": name, "issuer": self.issuer, "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET, **extra}


def sign_in_at_provider(url, login, deny=False):
    """Open the provider's authorization `url`, sign in as `login` and
    consent (or abort, when `deny`); returns the query ({name: value}) the
    provider sends the browser back with."""
    import requests
    session = requests.Session()
    answer = session.get(url, allow_redirects=False, timeout=30)
    for _ in range(10):
        location = answer.headers.get("Location")
        if answer.status_code in (302, 303) and location:
            target = urljoin(answer.url, location)
            if not target.startswith(url.split("/auth")[0]):
                return {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
            answer = session.get(target, allow_redirects=False, timeout=30)
            continue
        abort = re.search(r'href="([^"]*/abort)"', answer.text)
        if deny and abort:
            answer = session.get(urljoin(answer.url, unescape(abort.group(1))),
                                 allow_redirects=False, timeout=30)
            continue
        forms = _FORM.findall(answer.text)
        if not forms:
            raise AssertionError("no form on the provider's page: " + answer.text[:500])
        action, body = forms[0]
        fields = {name: unescape(value) for name, value in _HIDDEN.findall(body)}
        if fields.get("prompt") == "login":
            fields.update(login=login, password="any")
        answer = session.post(urljoin(answer.url, unescape(action)), data=fields,
                              allow_redirects=False, timeout=30)
    raise AssertionError("the provider did not send the browser back")
