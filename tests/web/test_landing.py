"""What a newcomer's browser finds at `/rest`: a small page linking the web
pages, the documentation, the OpenAPI description and the README (at `/` it
finds the web pages' home); programs asking for JSON keep getting the JSON
error object at both."""

import base64
import hashlib
import re

import pytest

from bugsvc.web import landing


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.mark.parametrize("path", ["/rest", "/rest/", "/rest.cgi", "/rest.cgi/"])
def test_a_browser_gets_the_landing_page(client, path):
    resp = client.simulate_get(path, headers={"Accept": BROWSER})
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert resp.headers["Vary"] == "Accept"
    links = re.findall(r'<a href="([^"]+)">', resp.text)
    assert links == ["/", "/rest/docs", "/rest/openapi.json", "/README.md"]
    assert "Bugzilla 5.x" in resp.text and "First steps" in resp.text
    for link in links:
        assert client.simulate_get(link, headers={"Accept": BROWSER}).status_code == 200


def test_a_browser_at_the_root_gets_the_home_page(client):
    resp = client.simulate_get("/", headers={"Accept": BROWSER})
    assert resp.status_code == 200 and "<h1>Welcome to bugsvc</h1>" in resp.text
    assert "Accept" in resp.headers["Vary"]


def test_the_landing_page_has_a_strict_content_security_policy(client):
    resp = client.simulate_get("/rest", headers={"Accept": BROWSER})
    policy = dict(part.strip().split(" ", 1) for part in
                  resp.headers["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["base-uri"] == "'none'" and policy["form-action"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in resp.headers["Content-Security-Policy"]
    assert "script-src" not in policy and "<script" not in resp.text
    (style,) = re.findall(r"<style>(.*?)</style>", resp.text, flags=re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert policy["style-src"] == f"'sha256-{digest}'"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_the_version_on_the_page_is_escaped():
    page = landing.page("1.0<script>alert(1)</script>").decode()
    assert "<script>" not in page and "1.0&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
@pytest.mark.parametrize("path", ["/", "/rest"])
def test_json_clients_still_get_the_json_error(client, path, accept):
    headers = {"Accept": accept} if accept else {}
    resp = client.simulate_get(path, headers=headers)
    assert resp.status_code == 404
    assert resp.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert resp.json["code"] == 32614 and resp.json["error"] is True


def test_other_verbs_on_the_root_are_unknown_resources(client):
    resp = client.simulate_post("/", headers={"Accept": BROWSER})
    assert resp.status_code == 404
    assert client.simulate_post("/", body="{}").json["code"] == 32614
    assert client.simulate_head("/rest/").status_code == 200      # python-bugzilla's probe


def test_the_readme_is_served_as_plain_text(client):
    resp = client.simulate_get("/README.md")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/plain; charset=UTF-8"
    assert resp.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert resp.text.startswith("# bugsvc\n") and "## First steps" in resp.text


def test_a_page_is_public_while_requirelogin_is_on(client, admin_key):
    client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                        json={"requirelogin": 1})
    assert client.simulate_get("/rest", headers={"Accept": BROWSER}).status_code == 200
    assert client.simulate_get("/rest/version").status_code == 200
    assert client.simulate_get("/rest/product_accessible").status_code == 401
