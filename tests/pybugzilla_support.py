"""A real bugsvc server seeded through its own REST interface, shared by the
python-bugzilla, `bugzilla` command line and JSON-RPC end-to-end tests.

`seeded_server(tmp_path_factory)` is a generator for a module-scoped fixture:
it starts `python bugsvc.py` on a free loopback port, creates the data below
with plain HTTP calls as the administrator, yields a Seeded, and stops the
server afterwards.

Data: product Widgets (versions 1.0 and 2.0; components Engine owned by
dev@example.com and Wheels owned by qa@example.com), keyword `regression`,
bug flag type `review` and attachment flag type `approval` (both
requestable of a named person), accounts dev, qa and plain (no special
groups), and insidergroup = admin, so the administrator is the only insider.
"""

import sys

from accounts import ADMIN
from live_server import ROOT, Server, api_key_for


ADMIN_PASSWORD = "admin-password-e2e"
DEV = "dev@example.com"
QA = "qa@example.com"
PLAIN = "plain@example.com"
PLAIN_PASSWORD = "plain-password-e2e"
PRODUCT = "Widgets"


class Seeded:
    """The running server and what was made in it."""

    def __init__(self, server, admin_key):
        self.server = server
        self.url = server.url
        self.admin_key = admin_key
        self.keys = {ADMIN: admin_key}
        self.product_id = None

    def rest(self, method, path, body=None, key=None, query=None):
        """(status, JSON body) of one REST call with `key` (None: anonymous)."""
        query = dict(query or {})
        if key:
            query["Bugzilla_api_key"] = key
        status, answer, _ = self.server.call(method, "/rest" + path, query, body)
        return status, answer

    def admin(self, method, path, body=None, expect=(200, 201)):
        status, answer = self.rest(method, path, body, self.admin_key)
        assert status in expect, (method, path, status, answer)
        return answer


def _seed(seeded):
    admin = seeded.admin
    admin("PUT", "/parameters", {"insidergroup": "admin"})
    for login, name in ((DEV, "Dev Eloper"), (QA, "Quinn Assurance")):
        admin("POST", "/user", {"email": login, "full_name": name, "password": login + "-pw1"})
    admin("POST", "/user", {"email": PLAIN, "full_name": "Plain User", "password": PLAIN_PASSWORD})
    seeded.keys[PLAIN] = admin("POST", "/api_key", {"user": PLAIN, "description": "e2e"})["api_key"]
    seeded.product_id = admin("POST", "/product", {"name": PRODUCT, "version": "1.0",
                                                   "description": "Things that turn"})["id"]
    admin("POST", "/version", {"product": PRODUCT, "name": "2.0"})
    admin("POST", "/component", {"product": PRODUCT, "name": "Engine", "description": "Makes it go",
                                 "default_assignee": DEV})
    admin("POST", "/component", {"product": PRODUCT, "name": "Wheels",
                                 "description": "Round things", "default_assignee": QA})
    admin("POST", "/keyword", {"name": "regression", "description": "It used to work"})
    for name, target in (("review", "bug"), ("approval", "attachment")):
        admin("POST", "/flag_type", {"name": name, "description": f"{name} wanted",
                                     "target_type": target, "is_requestable": True,
                                     "is_specifically_requestable": True})


def seeded_server(tmp_path_factory, name="e2e"):
    """Generator for a module-scoped fixture: start, seed, yield Seeded, stop."""
    workdir = tmp_path_factory.mktemp(name)
    db_path = workdir / "bugsvc.sqlite"
    server = Server([sys.executable, str(ROOT / "bugsvc.py")], db_path, workdir,
                    {"BUGSVC_ADMIN_EMAIL": ADMIN, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD}, name)
    try:
        seeded = Seeded(server, api_key_for(db_path, ADMIN))
        _seed(seeded)
        yield seeded
    finally:
        server.stop()
