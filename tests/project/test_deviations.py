"""The list of deliberate differences from Bugzilla 5.2 (docs/deviations.md)
stays true to the tests: every entry says what Bugzilla 5.2 does, what
bugsvc does, why, and names tests that exist; the README points to it."""

import ast
import re

from live_server import ROOT


LIST = ROOT / "docs" / "deviations.md"
_TEST = re.compile(r"`(tests/\w+/test_\w+\.py)::(test_\w+)`")
_PARTS = ("**Bugzilla 5.2:**", "**bugsvc:**", "**Why:**", "**Tests:**")


def entries():
    """{title: text} of the list's entries (its ### sections)."""
    found = {}
    for block in LIST.read_text(encoding="utf-8").split("\n### ")[1:]:
        title, _, body = block.partition("\n")
        found[title] = body.split("\n## ", 1)[0]
    return found


def test_every_entry_says_what_bugzilla_does_what_bugsvc_does_why_and_its_tests():
    found = entries()
    assert len(found) >= 30
    for title, body in found.items():
        for part in _PARTS:
            assert part in body, f"{title}: no {part}"
        tests = body.split("**Tests:**", 1)[1]
        assert _TEST.search(tests), f"{title}: names no test"


def test_every_test_named_exists():
    named = _TEST.findall(LIST.read_text(encoding="utf-8"))
    assert named
    defined = {}
    missing = []
    for path, name in named:
        if path not in defined:
            source = ROOT / path
            tree = ast.parse(source.read_text(encoding="utf-8")) if source.is_file() else None
            defined[path] = {node.name for node in ast.walk(tree)
                             if isinstance(node, ast.FunctionDef)} if tree else set()
        if name not in defined[path]:
            missing.append(f"{path}::{name}")
    assert not missing, missing


def test_the_readmes_compatibility_section_points_to_the_list():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Compatibility", 1)[1].split("\n## ", 1)[0]
    assert "docs/deviations.md" in section
