"""What README.md and docs/*.md name exists: every path of the repository
(`bugsvc/store/db.py`, `tests/project/test_layers.py`, `bench/results/`), every path
given short within a package (`api/docs.py`, `postgres/`), every file named by
itself (`visibility.py`), every module (`bench.seed`, `bugsvc.store.convert`,
with the name it points at inside, `bugsvc.call.params.Params`), and every
link between the documents (files and the headings they point at).

The examples of docs/*.md run with the README's (tests/e2e/test_readme.py).
"""

import re

import pytest

from live_server import ROOT


DOCUMENTS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
TOP = ("bugsvc", "tests", "bench", "docs", ".ci")
TOP_FILES = ("schema.sql", "bugsvc.py", "pyproject.toml", "README.md", "LICENSE")
SKIPPED_FOLDERS = {".git", ".venv", "__pycache__", "node_modules", ".pytest_cache"}
# What the examples and the benchmark make (the benchmark's databases go to
# bench/data/, which git ignores); they are not the repository's files.
MADE_BY_EXAMPLES = {"receiver.py"}
MADE_FOLDERS = {"bench/data/"}
# File names after a dot that are no module: `bugsvc.sqlite` is a database.
NOT_MODULES = {"sqlite", "py", "toml", "sqlite-wal", "sqlite-shm", "testfile", "dump"}
# Placeholders in the names the benchmark writes (bench/results/DATE-bugsN-wW.md).
PLACEHOLDER = re.compile(r"DATE|NAME|RUN\d|\*|bugsN|-wW")

_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_REPO_PATH = re.compile(r"(?<![\w/.~:-])((?:%s)/[\w./*-]*)" % "|".join(re.escape(t) for t in TOP))
_MODULE = re.compile(r"(?<![\w/.-])((?:bugsvc|bench)(?:\.[A-Za-z_][\w-]*)+)")
_SHORT_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*(?:\.(?:py|sql|lua|md|html|toml)|/)$")
_FILE_NAME = re.compile(r"^[\w-]+\.(?:py|sql|lua)$")


def _files():
    """Every file and folder of the checkout, as POSIX paths relative to it."""
    found = set(MADE_FOLDERS)
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.name in SKIPPED_FOLDERS or entry == ROOT / "bench" / "data":
                continue
            found.add(entry.relative_to(ROOT).as_posix() + ("/" if entry.is_dir() else ""))
            if entry.is_dir():
                stack.append(entry)
    return found


FILES = _files()


def _exists(path):
    """`path` (repository-relative, a folder ending in /) exists; a name the
    benchmark writes (with a placeholder) needs its folder."""
    path = path.rstrip(".,;:")
    if any(path.startswith(folder) for folder in MADE_FOLDERS):
        return True
    if PLACEHOLDER.search(path.rpartition("/")[2]):
        return path.rpartition("/")[0] + "/" in FILES
    return path in FILES or path + "/" in FILES


def repository_paths(text):
    """Paths from the top of the repository: `bugsvc/...`, `tests/...` ..."""
    names = {match.rstrip(".,;:)") for match in _REPO_PATH.findall(text)}
    names |= {span for span in _SPAN.findall(text) if span in TOP_FILES}
    return {name.partition("::")[0] for name in names}


def short_paths(text):
    """Paths given within a package (`api/docs.py`, `postgres/`) and file
    names by themselves (`visibility.py`), from code spans."""
    found = set()
    for span in _SPAN.findall(text):
        span = span.partition("::")[0].strip()
        if span.split("/")[0] in TOP or span.startswith(("/", "~", ".")) or span in TOP_FILES:
            continue
        if "/" in span and _SHORT_PATH.match(span):
            found.add(span)
        elif _FILE_NAME.match(span) and span not in MADE_BY_EXAMPLES:
            found.add(span)
    return found


def short_path_exists(name):
    if "/" not in name:
        return any(path.rpartition("/")[2] == name for path in FILES)
    return any(path == name or path.endswith("/" + name) for path in FILES)


def modules(text):
    return {name for name in _MODULE.findall(text) if name.rsplit(".", 1)[1] not in NOT_MODULES}


def module_exists(name):
    """`name` is a module, or a module and a name defined in it."""
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        base = "/".join(parts[:cut])
        for source in (f"{base}.py", f"{base}/__init__.py"):
            if source in FILES:
                rest = parts[cut:]
                if not rest:
                    return True
                text = (ROOT / source).read_text(encoding="utf-8")
                name = re.escape(rest[0])     # defined: def, class, or assigned at the top
                return len(rest) == 1 and re.search(
                    rf"^(?:(?:async )?def |class ){name}\b|^{name}\s*[:=]", text, re.M) is not None
    return False


def headings(path):
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.match(r"#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def broken_links(path):
    found = []
    text = re.sub(r"^```.*?^```$", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        # "/README.md" is the repository's top, as GitHub reads such links.
        base = ROOT if file_part.startswith("/") else path.parent
        linked = (base / file_part.lstrip("/")).resolve() if file_part else path
        if not linked.exists():
            found.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in headings(linked):
            found.append(target)
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_and_module_named_exists(document):
    text = document.read_text(encoding="utf-8")
    missing = [name for name in sorted(repository_paths(text)) if not _exists(name)]
    missing += [name for name in sorted(short_paths(text)) if not short_path_exists(name)]
    missing += [name for name in sorted(modules(text)) if not module_exists(name)]
    assert missing == [], missing


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves(document):
    assert broken_links(document) == []


def test_the_readme_links_every_document_in_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in _LINK.findall(readme)}
    assert {f"docs/{path.name}" for path in DOCUMENTS[1:]} <= linked


def test_the_checks_find_stale_names(tmp_path):
    text = ("See `bugsvc/rest/routes.py`, `api/nothing.py`, `nowhere.py`, "
            "`bugsvc.store.nothing`, bugsvc.call.params.Nothing and bench/nothing/.")
    assert not _exists("bugsvc/rest/routes.py")
    assert {"bugsvc/rest/routes.py", "bench/nothing/"} <= repository_paths(text)
    assert {"api/nothing.py", "nowhere.py"} <= short_paths(text)
    assert not short_path_exists("api/nothing.py") and not short_path_exists("nowhere.py")
    assert not module_exists("bugsvc.store.nothing")
    assert not module_exists("bugsvc.call.params.Nothing")
    assert module_exists("bugsvc.call.params.Params") and module_exists("bench.seed")
    assert short_path_exists("postgres/") and short_path_exists("api/docs.py")
    # Markdown names formatted in, so that the repository test does not read
    # this file as pointing at files it lacks.
    md = ".md"
    assert _exists("bench/results/DATE-bugsN-wW.md") and not _exists(f"bench/nothing/DATE{md}")
    page = tmp_path / f"page{md}"
    page.write_text(f"# A title, here\n[ok](#a-title-here) [gone](#nowhere) [file](missing{md})\n"
                    "[top](/README.md#first-steps) [gone](/README.md#nowhere)\n")
    assert broken_links(page) == ["#nowhere", f"missing{md}", "/README.md#nowhere"]
