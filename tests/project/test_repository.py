"""Nothing in the repository points at files outside it.

Every text file git tracks is read line by line. A line fails when it names a
numbered part of a document (a section, a decision, the section sign), an
issue by number, a path that climbs out of the repository or into the
project's shared folder beside it, or a Markdown file the repository does not
hold. Such pointers cannot be followed by a reader of the repository: the
rule they point at belongs in the sentence itself.
"""

import re
import subprocess
from pathlib import PurePosixPath

from live_server import ROOT


# Written with escapes and classes so that this file does not match itself.
POINTER = re.compile(
    r"\bsections? \d|\bdecisions? \d|\u00a7"     # numbered parts of a document
    r"|\bissues? \d"                             # issues by number
    r"|(?<!\.)\.\.[/]"                           # a path leaving the repository (not "...")
    r"|\bshared[/]",                             # the folder of notes beside the repository
    re.IGNORECASE)
MARKDOWN_NAME = re.compile(r"[\w./-]*\w\.md\b")
# Markdown files the benchmark writes (names and placeholders of its outputs).
WRITTEN = {"NAME.md", "RESULTS.md", "smoke.md", "paired.md", "pages.md", "ab.md", "scale.md"}


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout
    return [name for name in listed.decode("utf-8").split("\0") if name]


def text_of(path):
    """The file's text, or None for a binary file."""
    data = (ROOT / path).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def markdown_name_is_here(name, files, folders):
    """True when the Markdown file `name` is one the repository holds or writes."""
    if ".." in name.split("/"):
        return False
    path = PurePosixPath(name.removeprefix("./").lstrip("/"))   # "/README.md": a route
    if str(path) in files:
        return True
    if len(path.parts) > 1:
        return str(path.parent) in folders       # e.g. bench/results/DATE-...md
    return path.name in WRITTEN or any(f.rsplit("/", 1)[-1] == path.name for f in files)


def outside_pointers(text, files, folders):
    """[(line number, pointer)] of the pointers outside the repository in
    `text` (the patterns match within a line, so the whole text is searched
    at once and a line is counted only for a finding)."""
    found = [(match.start(), match.group()) for match in POINTER.finditer(text)]
    found += [(match.start(), match.group()) for match in MARKDOWN_NAME.finditer(text)
              if not markdown_name_is_here(match.group(), files, folders)]
    return [(text.count("\n", 0, start) + 1, pointer) for start, pointer in sorted(found)]


def test_no_tracked_file_points_outside_the_repository():
    files = set(tracked_files())
    folders = {str(parent) for f in files for parent in PurePosixPath(f).parents}
    failures = []
    for path in sorted(files):
        text = text_of(path)
        if text is not None:
            failures += [f"{path}:{number}: {pointer}"
                         for number, pointer in outside_pointers(text, files, folders)]
    assert not failures, "pointers outside the repository:\n" + "\n".join(failures)


def test_the_check_finds_each_kind_of_pointer():
    files, folders = {"README.md", "bench/results/x.md"}, {"bench", "bench/results"}
    # The digits and slashes are formatted in so that this file does not match itself.
    for text in (f"as the notes say (section {9})", f"Decision {4}: parameters win",
                 "see \u00a72", f"fixed in Issue {7}", f"open .{'.'}/other/file",
                 f"in shared{'/'}spec", f"see compat{'.md'}", f"DESIGN{'.md'}",
                 f"docs/guide{'.md'}", f"bench/.{'.'}/notes{'.md'}"):
        assert outside_pointers(text, files, folders), text
    for text in ("see README.md", "bench/results/DATE-bugsN-w1.md", "or .../xmlrpc.cgi",
                 "writes NAME.md", "two sections of the page", "an issue with 7 bugs"):
        assert outside_pointers(text, files, folders) == [], text


def test_no_tracked_file_is_a_symbolic_link():
    """A link names a path that may not exist in a reader's clone (a
    virtual environment, a folder of the machine it was made on) and is a
    plain text file on Windows checkouts; the repository holds none."""
    staged = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode("utf-8")
    links = [entry.split("\t", 1)[1] for entry in staged.split("\0")
             if entry.startswith("120000 ")]
    assert links == [], f"symbolic links tracked: {links}"
