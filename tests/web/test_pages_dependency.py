"""A bug's dependency tree (showdependencytree.cgi: depth, resolved bugs
hidden) and graph (showdependencygraph.cgi: an SVG picture drawn by
Graphviz's dot on the server, with the same bugs listed as text): a bug
the visitor may not see never appears, not even as a number."""

import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import file_bug, update_bug
from bugsvc.web.pages import dependency
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, text_of


@pytest.fixture
def web(services):
    """root depends on one and two; one on done (resolved); two on the
    secret bug, which depends on beyond; root blocks top."""
    world = World(services)
    bugs = {name: file_bug(services, summary=f"The {name} bug")
            for name in ("root", "one", "two", "done", "beyond", "top")}
    update_bug(services, bugs["done"], status="RESOLVED", resolution="FIXED")
    update_bug(services, bugs["root"], depends_on={"add": [bugs["one"], bugs["two"]]},
               blocks={"add": [bugs["top"]]})
    update_bug(services, bugs["one"], depends_on={"add": [bugs["done"]]})
    update_bug(services, bugs["two"], depends_on={"add": [world.secret]})
    update_bug(services, world.secret, depends_on={"add": [bugs["beyond"]]})
    bugs["secret"] = world.secret
    return bugs


def as_(app, who):
    browser = Browser(app)
    if who is not None:
        browser.login(who, ADMIN_PASSWORD if who == ADMIN else PASSWORDS[who])
    return browser


def linked(page):
    return {int(n) for n in re.findall(r'show_bug\.cgi\?id=(\d+)', page.text)}


def mentions(page, bug_id):
    """True when the page names bug `bug_id` anywhere (a link, a node, text)."""
    return bool(re.search(rf"\b[Bb]ug {bug_id}\b|>{bug_id}<|\bb{bug_id}\b", page.text)
                or f"id={bug_id}\"" in page.text or f"id={bug_id}&" in page.text)


@pytest.mark.parametrize("who", [None, PLAIN, INSIDER, ADMIN])
def test_the_tree_shows_what_the_visitor_may_see(app, web, who):
    page = as_(app, who).get(f"/showdependencytree.cgi?id={web['root']}")
    assert page.status_code == 200
    shown = linked(page)
    for name in ("root", "one", "two", "done", "top"):
        assert web[name] in shown, name
    sees_secret = who == ADMIN
    assert (web["secret"] in shown) == sees_secret
    assert (web["beyond"] in shown) == sees_secret        # reached only through the secret bug
    if not sees_secret:
        assert not mentions(page, web["secret"]) and "Secret hole" not in page.text
    text = text_of(page.text)
    assert f"Bug {web['root']} depends on" in text and f"Bug {web['root']} blocks" in text


def test_the_tree_to_a_depth_and_without_resolved_bugs(app, web):
    browser = as_(app, PLAIN)
    shallow = browser.get(f"/showdependencytree.cgi?id={web['root']}&maxdepth=1")
    assert web["one"] in linked(shallow) and web["done"] not in linked(shallow)
    open_only = browser.get(f"/showdependencytree.cgi?id={web['root']}&hide_resolved=1")
    assert web["one"] in linked(open_only) and web["done"] not in linked(open_only)
    assert 'name="hide_resolved" value="1" checked' in open_only.text


def test_the_tree_of_a_hidden_or_missing_bug_is_refused(app, web):
    for reference in (web["secret"], 999999):
        page = as_(app, PLAIN).get(f"/showdependencytree.cgi?id={reference}")
        assert page.status_code == 401 and "Secret hole" not in page.text
    assert as_(app, PLAIN).get("/showdependencytree.cgi").status_code == 400


@pytest.mark.skipif(dependency.find_dot() is None, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("who", [None, PLAIN, ADMIN])
def test_the_graph_is_an_svg_picture_drawn_on_the_server(app, web, who):
    page = as_(app, who).get(f"/showdependencygraph.cgi?id={web['root']}")
    assert page.status_code == 200
    svg = re.search(r"<svg\b.*?</svg>", page.text, re.S).group(0)
    assert 'role="group" aria-labelledby="graph-caption"' in svg
    assert "<script" not in svg.lower()
    for name in ("root", "one", "two", "done", "top"):
        assert f'href="/show_bug.cgi?id={web[name]}"' in svg, name
    sees_secret = who == ADMIN
    assert (f"id={web['secret']}\"" in svg) == sees_secret
    assert (f"id={web['beyond']}\"" in svg) == sees_secret
    if not sees_secret:
        assert not mentions(page, web["secret"]) and "Secret hole" not in page.text
    # The same bugs and arrows as a table, for screen readers.
    table = page.text.split('id="h-graph-bugs"', 1)[1]
    assert f'<a href="/show_bug.cgi?id={web["one"]}">{web["one"]}</a>' in table


def test_the_graph_says_when_dot_is_missing_and_keeps_the_lists(app, web, monkeypatch):
    monkeypatch.setattr(dependency, "find_dot", lambda: None)
    page = as_(app, PLAIN).get(f"/showdependencygraph.cgi?id={web['root']}&display=web")
    assert page.status_code == 200 and "<svg" not in page.text
    assert "Graphviz (its dot program) is not installed" in text_of(page.text)
    assert {web["root"], web["one"], web["done"], web["top"]} <= linked(page)
    assert not mentions(page, web["secret"])


def test_a_summary_cannot_break_out_of_the_picture(app, web, services):
    update_bug(services, web["one"], summary='Quote " and \\ and </svg><script>x</script>')
    page = as_(app, None).get(f"/showdependencygraph.cgi?id={web['root']}")
    assert page.status_code == 200
    assert "<script>x" not in page.text
