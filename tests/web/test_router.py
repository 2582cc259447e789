"""LiteralFirstRouter answers every path as falcon's own router does."""

import falcon
import pytest
from falcon import testing
from falcon.routing.compiled import UnacceptableRouteError

from bugsvc.web.router import LiteralFirstRouter


class Page:
    """A resource that names itself in its answers."""

    def __init__(self, name):
        self.name = name

    def on_get(self, req, resp, **fields):
        resp.media = {"page": self.name, "fields": fields}

    def on_post(self, req, resp, **fields):
        resp.media = {"page": self.name, "posted": True}


class ReadOnly:
    def on_get(self, req, resp):
        resp.media = {"page": "read-only"}


class Assigned:
    """Its GET responder is set on the instance, not the class."""

    def __init__(self):
        self.on_get = self._answer

    def _answer(self, req, resp):
        resp.media = {"page": "assigned"}


ROUTES = [("/", Page("root")), ("/show_bug.cgi", Page("show_bug")),
          ("/static/{name}", Page("static")), ("/{anything}.cgi", Page("any cgi")),
          ("/oidc/login", Page("oidc login")), ("/read", ReadOnly()), ("/assigned", Assigned())]
PATHS = ["/", "/show_bug.cgi", "/show_bug.cgi/", "/SHOW_BUG.cgi", "/static/site.css",
         "/static/", "/other.cgi", "/oidc/login", "/oidc", "/read", "/assigned", "/nowhere"]


def _client(router):
    app = falcon.App(router=router)
    for path, resource in ROUTES:
        app.add_route(path, resource)
    return testing.TestClient(app)


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "OPTIONS"])
def test_every_path_gets_what_falcon_own_router_gives(method):
    ours, falcons = _client(LiteralFirstRouter()), _client(falcon.routing.CompiledRouter())
    for path in PATHS:
        mine, theirs = (client.simulate_request(method, path) for client in (ours, falcons))
        assert (path, mine.status, mine.text, mine.headers.get("allow")) == \
               (path, theirs.status, theirs.text, theirs.headers.get("allow"))


def test_a_literal_path_is_found_without_the_tree_and_a_method_it_lacks_is_405():
    client = _client(LiteralFirstRouter())
    assert client.simulate_get("/show_bug.cgi").json == {"page": "show_bug", "fields": {}}
    refused = client.simulate_post("/read")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, OPTIONS"
    assert client.simulate_get("/assigned").json == {"page": "assigned"}


def test_a_literal_path_added_twice_is_refused():
    router = LiteralFirstRouter()
    router.add_route("/show_bug.cgi", Page("first"))
    with pytest.raises(ValueError, match="added twice"):
        router.add_route("/show_bug.cgi", Page("second"))


def test_falcon_refusals_still_apply():
    class Coroutine:
        async def on_get(self, req, resp):
            pass

    router = LiteralFirstRouter()
    with pytest.raises(TypeError):
        router.add_route("/async", Coroutine())
    with pytest.raises(UnacceptableRouteError):
        router.add_route("/with space", Page("space"))
