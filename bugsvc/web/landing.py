"""What a browser finds at `/rest`: a small page saying what this is,
linking the web pages, the documentation page, the OpenAPI description and
the README (`/` itself is the web pages' home). Programs asking for JSON
(curl's `*/*` included) keep getting the JSON error they got before; the
Accept header decides, as for every REST answer.

The page has no script and takes its style from one inline block whose hash
the Content-Security-Policy names; the only dynamic text (the version) is
escaped.
"""

import base64
import hashlib
import html
from pathlib import Path

import falcon

from .. import __version__
from .rest import render


_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 44em; margin: 40px auto;
       padding: 0 16px; color: #1d1d1f; }
h1 small { font-size: 15px; font-weight: normal; color: #666; margin-left: 6px; }
code { font-family: ui-monospace, monospace; background: #f1f1f1; padding: 0 3px; }
li { margin: 8px 0; }
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bugsvc</title>
<style>{style}</style>
</head>
<body>
<h1>bugsvc<small>{version}</small></h1>
<p>A bug tracker whose interfaces are compatible with Bugzilla 5.x. People use its
<a href="/">web pages</a>; programs, scripts and Bugzilla clients such as python-bugzilla
use its REST interface under <code>/rest</code> (Bugzilla's <code>/rest.cgi</code> too), or
XML-RPC at <code>/xmlrpc.cgi</code> and JSON-RPC at <code>/jsonrpc.cgi</code>.</p>
<ul>
<li><a href="/rest/docs">API documentation</a>: every call with its parameters, answers
and error codes; calls can be tried from the page.</li>
<li><a href="/rest/openapi.json">OpenAPI description</a>: the same, for tools.</li>
<li><a href="/README.md">README</a>: installing and running bugsvc, and its
<em>First steps</em>: the first API key, accounts, a bug, private comments and bugs
restricted to a group, with curl.</li>
</ul>
</body>
</html>
"""

_PACKAGE = Path(__file__).resolve().parent.parent
_README_PATHS = (_PACKAGE / "README.md",          # an installed wheel
                 _PACKAGE.parent / "README.md")   # a checkout


def _hash(text):
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def page(version=__version__):
    """The landing page's bytes, for this `version`."""
    return _PAGE.format(style=_STYLE, version=html.escape(version)).encode("utf-8")


PAGE = page()
POLICY = (f"default-src 'none'; style-src 'sha256-{_hash(_STYLE)}'; base-uri 'none'; "
          "form-action 'none'; frame-ancestors 'none'")
TEXT_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def wants_page(req):
    """True when the Accept header prefers HTML (a browser) to JSON."""
    return render.negotiate(req.get_header("Accept")) == render.HTML


def answer(resp):
    """Fill `resp` with the landing page."""
    resp.status = 200
    resp.content_type = "text/html; charset=UTF-8"
    _secure(resp, POLICY)
    resp.data = PAGE


def _secure(resp, policy):
    resp.set_header("Content-Security-Policy", policy)
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Referrer-Policy", "no-referrer")
    resp.set_header("Vary", "Accept")


class ReadmeResource:
    """GET /README.md: the README as plain text (a browser shows it as it
    is; nothing in it runs), for the landing page's link; 404 where the
    installation has none."""

    def __init__(self):
        self.text = next((path.read_bytes() for path in _README_PATHS if path.is_file()), None)

    def on_get(self, req, resp):
        if self.text is None:
            raise falcon.HTTPNotFound()
        resp.content_type = "text/plain; charset=UTF-8"
        _secure(resp, TEXT_POLICY)
        resp.data = self.text
