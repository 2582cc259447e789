"""A bug's dependencies: the tree (showdependencytree.cgi: what it depends
on and what it blocks, to a depth, resolved bugs hidden or not) and the
graph (showdependencygraph.cgi: a picture drawn on the server).

Both walk Bug.get's depends_on and blocks, which name only bugs the
visitor may see: a hidden bug never appears, not even as a number, and
what lies beyond it is not reached through it.

The picture is laid out by Graphviz's `dot` (the OS package; the
reference's own dependency graph uses it too) as SVG, set in the page with
its links; the page lists the same bugs and dependencies as text for
screen readers. Without `dot` on the server the page says so and keeps the
lists.
"""

import re
import shutil
import subprocess

from ... import errors
from ...errors import ServiceError
from .base import Page, responder
from .site import url


# The most bugs a tree or a graph shows (a larger web is cut, and the page
# says so), and the longest a drawing may take.
MOST_BUGS = 300
DOT_SECONDS = 10
_FIELDS = "id,summary,status,resolution,is_open,depends_on,blocks,assigned_to"
_SVG_START = re.compile(r"<svg\b")


def find_dot():
    """The path of Graphviz's dot program, or None."""
    return shutil.which("dot")


def _first(value):
    return value[0] if isinstance(value, list) else value


def _number(value, default):
    try:
        return max(0, int(str(_first(value)).strip()))
    except (TypeError, ValueError):
        return default


class Walk:
    """The bugs reached from one bug along depends_on or blocks, level by
    level, as the visitor sees them (Bug.get)."""

    def __init__(self, call, reference):
        self.call = call
        root = call.read_one("Bug.get", {"ids": [str(reference).strip().lstrip("#")],
                                         "include_fields": _FIELDS})["bugs"][0]
        self.bugs = {root["id"]: root}
        self.root = root
        self.cut = False

    def read(self, ids):
        """Read the bugs `ids` not read yet (at most MOST_BUGS in all)."""
        wanted = [bug_id for bug_id in dict.fromkeys(ids) if bug_id not in self.bugs]
        room = MOST_BUGS - len(self.bugs)
        if len(wanted) > room:
            wanted, self.cut = wanted[:max(room, 0)], True
        if wanted:
            found = self.call.read_one("Bug.get", {"ids": wanted, "permissive": True,
                                                   "include_fields": _FIELDS})
            self.bugs.update((bug["id"], bug) for bug in found["bugs"])

    def follow(self, relation, depth, hide_resolved):
        """The ids reached from the root along `relation` to `depth` levels
        (0: all), each level read at once."""
        level, seen = [self.root["id"]], {self.root["id"]}
        steps = 0
        while level and (not depth or steps < depth):
            following = [other for bug_id in level if bug_id in self.bugs
                         for other in self.bugs[bug_id][relation] if other not in seen]
            self.read(following)
            following = [other for other in dict.fromkeys(following) if other in self.bugs
                         and (self.bugs[other]["is_open"] or not hide_resolved)]
            seen.update(following)
            level = following
            steps += 1
        return seen


def tree_of(walk, bug_id, relation, depth, hide_resolved, shown, level=1):
    """[(bug, children, repeated)] under `bug_id` along `relation`: a bug
    shown already is listed again without its own children."""
    items = []
    for other in walk.bugs[bug_id][relation]:
        bug = walk.bugs.get(other)
        if bug is None or (hide_resolved and not bug["is_open"]):
            continue
        repeated = other in shown
        shown.add(other)
        children = [] if repeated or (depth and level >= depth) else tree_of(
            walk, other, relation, depth, hide_resolved, shown, level + 1)
        items.append((bug, children, repeated))
    return items


class DependencyTree(Page):
    """GET /showdependencytree.cgi?id=N[&maxdepth=D][&hide_resolved=1]."""

    @responder
    def on_get(self, call):
        reference = _first(call.query.get("id"))
        if not reference or not str(reference).strip():
            raise ServiceError(errors.OBJECT_NOT_SPECIFIED, "Which bug? Give its number as id.")
        depth = _number(call.query.get("maxdepth"), 0)
        hide_resolved = bool(_number(call.query.get("hide_resolved"), 0))
        walk = Walk(call, reference)
        for relation in ("depends_on", "blocks"):
            walk.follow(relation, depth, hide_resolved)
        root = walk.root
        trees = {relation: tree_of(walk, root["id"], relation, depth, hide_resolved,
                                   {root["id"]})
                 for relation in ("depends_on", "blocks")}
        call.render("dependency_tree.html", title=f"Dependency tree for bug {root['id']}",
                    bug=root, trees=trees, maxdepth=depth, hide_resolved=hide_resolved,
                    cut=walk.cut,
                    graph_url=url("/showdependencygraph.cgi", id=root["id"]))


def dot_text(walk, edges):
    """The graph in Graphviz's language: a node per bug (its number and
    summary, a link to it; closed ones drawn dashed), an edge from each
    bug to the bug it blocks."""
    def quoted(text):
        return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace(
            "\n", " ").replace("\r", " ") + '"'
    lines = ["digraph dependencies {", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
             'fontname="sans-serif", fontsize=11];']
    for bug in walk.bugs.values():
        summary = bug["summary"] if len(bug["summary"]) <= 40 else bug["summary"][:39] + "…"
        label = f"{bug['id']}: {summary}"
        style = ', style="rounded,dashed", fontcolor="#555555"' if not bug["is_open"] else ""
        if bug["id"] == walk.root["id"]:
            style += ', fillcolor="#fff3c4", penwidth=2'
        number = int(bug["id"])
        state = bug["status"] + (" " + bug["resolution"] if bug.get("resolution") else "")
        lines.append(f"  b{number} [label={quoted(label)},"
                     f" URL={quoted(f'/show_bug.cgi?id={number}')},"
                     f" tooltip={quoted(f'Bug {number} ({state})')}{style}];")
    for blocker, blocked in sorted(edges):
        lines.append(f"  b{int(blocker)} -> b{int(blocked)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(text):
    """The SVG element dot makes of graph `text`, or (None, why)."""
    dot = find_dot()
    if dot is None:
        return None, ("The picture cannot be drawn: Graphviz (its dot program) is not "
                      "installed on this server. The lists below show the same dependencies.")
    try:
        done = subprocess.run([dot, "-Tsvg"], input=text.encode("utf-8"), capture_output=True,
                              timeout=DOT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None, "The picture could not be drawn in time; the lists below show the graph."
    svg = done.stdout.decode("utf-8", errors="replace")
    start = _SVG_START.search(svg)
    if done.returncode != 0 or start is None:
        return None, "The picture could not be drawn; the lists below show the graph."
    # A group named by the figure's caption: its links stay reachable.
    return ('<svg role="group" aria-labelledby="graph-caption"'
            + svg[start.end():]), None


class DependencyGraph(Page):
    """GET /showdependencygraph.cgi?id=N[&display=tree|web]: the bug's
    dependencies as a picture (display=tree, the default: what it depends
    on and what it blocks, all the way; web: every bug linked to those too)."""

    @responder
    def on_get(self, call):
        reference = _first(call.query.get("id"))
        if not reference or not str(reference).strip():
            raise ServiceError(errors.OBJECT_NOT_SPECIFIED, "Which bug? Give its number as id.")
        display = "web" if _first(call.query.get("display")) == "web" else "tree"
        walk = Walk(call, reference)
        if display == "web":
            level = [walk.root["id"]]
            seen = set(level)
            while level and not walk.cut:
                following = [other for bug_id in level for relation in ("depends_on", "blocks")
                             for other in walk.bugs[bug_id][relation] if other not in seen]
                walk.read(following)
                level = [other for other in dict.fromkeys(following) if other in walk.bugs]
                seen.update(level)
        else:
            for relation in ("depends_on", "blocks"):
                walk.follow(relation, 0, False)
        edges = {(other, bug["id"]) for bug in walk.bugs.values()
                 for other in bug["depends_on"] if other in walk.bugs}
        edges |= {(bug["id"], other) for bug in walk.bugs.values()
                  for other in bug["blocks"] if other in walk.bugs}
        svg, why = draw(dot_text(walk, edges))
        root = walk.root
        bugs = sorted(walk.bugs.values(), key=lambda bug: bug["id"])
        call.render("dependency_graph.html", title=f"Dependency graph for bug {root['id']}",
                    bug=root, bugs=bugs, edges=sorted(edges), svg=svg, why=why,
                    display=display, cut=walk.cut,
                    tree_url=url("/showdependencytree.cgi", id=root["id"]))
