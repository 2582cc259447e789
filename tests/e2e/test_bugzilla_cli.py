"""The `bugzilla` command of python-bugzilla against a real bugsvc server,
run as a subprocess over XML-RPC and over REST. Each account's API key sits
in a bugzillarc of its own temporary HOME, the way users configure it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pybugzilla_support import ADMIN, DEV, PLAIN, PRODUCT, QA, seeded_server


pytestmark = pytest.mark.slow

pytest.importorskip("bugzilla")

# The console script, or what it runs when the script is not beside Python.
_SCRIPT = Path(sys.executable).with_name("bugzilla")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else \
    [sys.executable, "-c", "import sys; from bugzilla._cli import cli; sys.exit(cli())"]
ENDPOINTS = {"xmlrpc": "/xmlrpc.cgi", "rest": "/rest/"}
SERVER_ERROR = 3    # the command's exit status for a fault / error answer


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from seeded_server(tmp_path_factory, "bugzilla_cli")


@pytest.fixture(scope="module")
def homes(site, tmp_path_factory):
    """login -> a HOME whose bugzillarc holds that account's API key (None: no key)."""
    host = site.url.removeprefix("http://")
    homes = {}
    for login in (ADMIN, PLAIN, None):
        home = tmp_path_factory.mktemp("home")
        rc = home / ".config" / "python-bugzilla" / "bugzillarc"
        rc.parent.mkdir(parents=True)
        rc.write_text(f"[{host}]\napi_key = {site.keys[login]}\n" if login else "")
        homes[login] = home
    return homes


@pytest.fixture(params=sorted(ENDPOINTS))
def bugzilla(request, site, homes, tmp_path):
    """bugzilla(*args, user=ADMIN, stdin=None) -> CompletedProcess of the
    command, run in tmp_path against this transport's endpoint."""
    url = site.url + ENDPOINTS[request.param]

    def run(*args, user=ADMIN, stdin=None):
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("BUGSVC_", "PYTHONBUGZILLA"))}
        env["HOME"] = str(homes[user])
        return subprocess.run(COMMAND + ["--bugzilla", url, *map(str, args)],
                              input=stdin if stdin is not None else b"",
                              capture_output=True, cwd=tmp_path, env=env, timeout=60)
    return run


def ok(done):
    """The standard output of a command that must have succeeded."""
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout.decode()


def new_bug(bugzilla, *extra, component="Engine"):
    done = bugzilla("new", "--product", PRODUCT, "--component", component, "--version", "1.0",
                    "--os", "Linux", "--arch", "PC", "--summary", "Squeaks when turning",
                    "--comment", "It squeaks.", *extra, "--outputformat", "%{bug_id}")
    return int(ok(done).strip())


# info ---------------------------------------------------------------------------------

def test_info_products_components_versions_and_owners(bugzilla):
    assert ok(bugzilla("info", "--products")).splitlines() == ["TestProduct", PRODUCT]
    assert ok(bugzilla("info", "--components", PRODUCT)).splitlines() == ["Engine", "Wheels"]
    assert ok(bugzilla("info", "--versions", PRODUCT)).splitlines() == ["1.0", "2.0"]
    assert ok(bugzilla("info", "--component_owners", PRODUCT)).splitlines() == \
        [f"Engine: {DEV}", f"Wheels: {QA}"]


def test_info_works_anonymously(bugzilla):
    assert ok(bugzilla("info", "--components", PRODUCT, user=None)).splitlines() == \
        ["Engine", "Wheels"]


# new, query ---------------------------------------------------------------------------

def test_new_with_alias_cc_and_keywords_then_query_outputs(bugzilla, request):
    alias = "squeak-" + request.node.callspec.id
    bug_id = new_bug(bugzilla, "--alias", alias, "--cc", QA, "--keywords", "regression")

    by_id = ok(bugzilla("query", "--id", bug_id))
    assert by_id.strip() == f"#{bug_id:<6} CONFIRMED  - {DEV} - Squeaks when turning"

    oneline = ok(bugzilla("query", "--id", bug_id, "--oneline"))
    assert oneline.startswith(f"#{bug_id} CONFIRMED {DEV} Engine\t[---] ")

    full = ok(bugzilla("query", "--alias", alias, "--full"))
    assert f"#{bug_id:<6} CONFIRMED" in full
    assert "Component: Engine" in full and f"CC: {QA}" in full

    extra = ok(bugzilla("query", "--id", bug_id, "--extra"))
    assert " +Keywords: regression" in extra

    formatted = ok(bugzilla("query", "--product", PRODUCT, "--component", "Engine",
                            "--outputformat", "%{id}|%{alias}|%{summary}|%{keywords}"))
    assert f"{bug_id}|{alias}|Squeaks when turning|regression" in formatted.splitlines()

    raw = ok(bugzilla("query", "--id", bug_id, "--raw"))
    assert raw.startswith(f"Bugzilla {bug_id}: ")
    assert "ATTRIBUTE[summary]: Squeaks when turning" in raw
    assert f"ATTRIBUTE[cc]: ['{QA}']" in raw


def test_query_by_status_and_component_lists(bugzilla):
    engine = new_bug(bugzilla)
    wheels = new_bug(bugzilla, component="Wheels")
    ids = ok(bugzilla("query", "--product", PRODUCT, "--component", "Engine,Wheels",
                      "--status", "CONFIRMED", "--ids")).split()
    assert {str(engine), str(wheels)} <= set(ids)
    assert ok(bugzilla("query", "--product", PRODUCT, "--status", "VERIFIED", "--ids")) == ""


def test_new_needs_an_api_key(bugzilla):
    done = bugzilla("new", "--product", PRODUCT, "--component", "Engine", "--version", "1.0",
                    "--os", "Linux", "--arch", "PC", "--summary", "Anonymous",
                    "--comment", "x", user=None)
    assert done.returncode == SERVER_ERROR
    assert "410" in done.stdout.decode()


# modify -------------------------------------------------------------------------------

def test_modify_status_resolution_cc_keywords_flags_and_comment(bugzilla):
    bug_id = new_bug(bugzilla, "--cc", QA)
    ok(bugzilla("modify", bug_id, "--status", "IN_PROGRESS", "--cc", DEV, f"--cc=-{QA}",
                "--keywords", "regression", "--flag", "review?", "--comment", "Looking",
                "--private"))
    shown = ok(bugzilla("query", "--id", bug_id, "--outputformat",
                        "%{status}|%{cc}|%{keywords}|%{flags}"))
    assert shown.strip() == f"IN_PROGRESS|{DEV}|regression|review?"

    ok(bugzilla("modify", bug_id, "--status", "RESOLVED", "--field", "resolution=FIXED",
                "--keywords=-regression"))
    shown = ok(bugzilla("query", "--id", bug_id, "--outputformat",
                        "%{status}|%{resolution}|%{keywords}"))
    assert shown.strip() == "RESOLVED|FIXED|"


def test_modify_close_asks_for_closed_which_the_default_workflow_lacks(bugzilla):
    # --close sends status CLOSED: an unknown status is 51, as in Bugzilla 5.2.
    bug_id = new_bug(bugzilla)
    done = bugzilla("modify", bug_id, "--close", "FIXED")
    assert done.returncode == SERVER_ERROR and "51" in done.stdout.decode()
    assert ok(bugzilla("query", "--id", bug_id, "--outputformat", "%{status}")).strip() == \
        "CONFIRMED"


def test_modify_is_refused_without_a_key_and_changes_nothing(bugzilla):
    bug_id = new_bug(bugzilla)
    done = bugzilla("modify", bug_id, "--summary", "Defaced", user=None)
    assert done.returncode == SERVER_ERROR and "410" in done.stdout.decode()
    assert ok(bugzilla("query", "--id", bug_id, "--outputformat", "%{summary}")).strip() == \
        "Squeaks when turning"


# attach -------------------------------------------------------------------------------

def test_attach_upload_then_get_one_and_all(bugzilla, tmp_path):
    bug_id = new_bug(bugzilla)
    content = b"squeak squeak\n"
    # Not a terminal: the command reads the file from standard input.
    out = ok(bugzilla("attach", bug_id, "--file", "noise.txt", "--description", "The noise",
                      "--type", "text/plain", "--comment", "Recorded", stdin=content))
    match = re.fullmatch(rf"Created attachment (\d+) on bug {bug_id}\n", out)
    assert match, out
    attach_id = match.group(1)

    assert ok(bugzilla("attach", "--get", attach_id)) == "Wrote noise.txt\n"
    assert (tmp_path / "noise.txt").read_bytes() == content
    (tmp_path / "noise.txt").unlink()
    assert ok(bugzilla("attach", "--getall", bug_id, user=PLAIN)) == "Wrote noise.txt\n"
    assert (tmp_path / "noise.txt").read_bytes() == content


def test_attach_without_a_key_is_refused(bugzilla):
    bug_id = new_bug(bugzilla)
    done = bugzilla("attach", bug_id, "--file", "x.txt", "--description", "x", stdin=b"x",
                    user=None)
    assert done.returncode == SERVER_ERROR and "410" in done.stdout.decode()
