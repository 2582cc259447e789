"""The guard of drop-in compatibility: a default installation, tried as a new
user tries it, answers Bugzilla's own clients as Bugzilla 5.2 does.

One real server (`python bugsvc.py`) on a new database, with no parameter
changed, ever: nothing here calls PUT /rest/parameters or `bugsvc
parameters`, and the last test checks that the parameters are still those
of a first start (and that no parameter change was ever audited). The
administrator makes what any team makes first (two accounts, a keyword, two
flag types); then the real clients work bugs the way scripts do:
python-bugzilla over REST and over XML-RPC, its `bugzilla` command over
both, JSON-RPC and plain HTTP. Each files a bug with a status whiteboard,
See Also, keywords and CC, sets and requests flags, updates, comments,
attaches, searches and reads the history.

A test that needs a parameter changed to make a client's call pass is a bug
of bugsvc, not of the test.
"""

import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xmlrpc.client
from pathlib import Path

import pytest

from live_server import ROOT, Server, api_key_for


pytestmark = pytest.mark.slow

bugzilla = pytest.importorskip("bugzilla")

ADMIN = "admin@example.com"
ADMIN_PASSWORD = "default-install-admin-pw"
DEV, DEV_PASSWORD = "dev@example.com", "dev password 1"
QA = "qa@example.com"
LINK = "https://github.com/o/r/issues/7"
OTHER_LINK = "https://github.com/o/r/pull/8"
# python-bugzilla's command, or what it runs when the script is not beside Python.
_SCRIPT = Path(sys.executable).with_name("bugzilla")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else \
    [sys.executable, "-c", "import sys; from bugzilla._cli import cli; sys.exit(cli())"]
ENDPOINTS = {"rest": "/rest/", "xmlrpc": "/xmlrpc.cgi"}
# Far below the minute a client waited for an answer that never came.
FAST = 5


class Installation:
    """The running default installation and the keys of its accounts."""

    def __init__(self, server, admin_key):
        self.server = server
        self.url = server.url
        self.keys = {ADMIN: admin_key}

    def rest(self, method, path, body=None, key=None, query=None, headers=None):
        """(status, decoded JSON answer) of one REST call."""
        query = dict(query or {})
        if key:
            query["Bugzilla_api_key"] = key
        status, answer, _ = self.server.call(method, "/rest" + path, query, body, headers)
        return status, answer

    def admin(self, method, path, body=None):
        status, answer = self.rest(method, path, body, self.keys[ADMIN])
        assert status in (200, 201), (method, path, status, answer)
        return answer

    def jsonrpc(self, method, params, key=None):
        """The JSON-RPC answer ({"result", "error", "id"}) of one call."""
        params = dict(params, **({"Bugzilla_api_key": key} if key else {}))
        request = urllib.request.Request(
            self.url + "/jsonrpc.cgi", method="POST",
            data=json.dumps({"method": method, "params": [params], "id": 1}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
            return json.loads(response.read())

    def page(self, path):
        """(status, content type, text) of a page a browser opens."""
        request = urllib.request.Request(self.url + path, headers={
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers["Content-Type"], response.read().decode()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.headers["Content-Type"], error.read().decode()


@pytest.fixture(scope="module")
def installation(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("default-install")
    db_path = workdir / "bugsvc.sqlite"
    server = Server([sys.executable, str(ROOT / "bugsvc.py")], db_path, workdir,
                    {"BUGSVC_ADMIN_EMAIL": ADMIN, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD},
                    "default-install")
    try:
        made = Installation(server, api_key_for(db_path, ADMIN))
        admin = made.admin
        admin("POST", "/user", {"email": DEV, "full_name": "Dana Developer",
                                "password": DEV_PASSWORD})
        admin("POST", "/user", {"email": QA, "full_name": "Quinn Tester",
                                "password": "qa password 1"})
        made.keys[DEV] = admin("POST", "/api_key", {"user": DEV, "description": "guard"})[
            "api_key"]
        admin("POST", "/keyword", {"name": "regression", "description": "It used to work"})
        admin("POST", "/flag_type", {"name": "review", "description": "Code review",
                                     "target_type": "bug", "is_requestable": True,
                                     "is_specifically_requestable": True})
        admin("POST", "/flag_type", {"name": "approval", "description": "Approved",
                                     "target_type": "attachment", "is_requestable": True})
        yield made
    finally:
        server.stop()


def connect(installation, transport, key):
    """python-bugzilla on `transport`, reading no bugzillarc and caching no token."""
    force = {"force_rest": True} if transport == "rest" else {"force_xmlrpc": True}
    return bugzilla.Bugzilla(installation.url, api_key=key, use_creds=False, **force)


def history_fields(entries):
    return {change["field_name"] for entry in entries for change in entry["changes"]}


# python-bugzilla, the library --------------------------------------------------------------

@pytest.mark.parametrize("transport", sorted(ENDPOINTS))
def test_python_bugzilla_files_and_works_a_bug(installation, transport, tmp_path):
    bz = connect(installation, transport, installation.keys[DEV])
    values = bz.build_createbug(
        product="TestProduct", component="TestComponent", version="unspecified",
        op_sys="Linux", platform="PC", summary=f"Guard bug over {transport}",
        description="Steps to reproduce", keywords=["regression"], cc=[QA])
    values.update(whiteboard="[triage]", see_also=[LINK])
    bug = bz.getbug(bz.createbug(values).id)
    assert (bug.whiteboard, bug.see_also, bug.keywords, bug.cc) == (
        "[triage]", [LINK], ["regression"], [QA])

    bz.update_bugs([bug.id], bz.build_update(
        whiteboard="[fixing]", see_also_add=[OTHER_LINK], status="IN_PROGRESS",
        cc_add=[DEV], comment="Working on it",
        flags=[{"name": "review", "status": "?", "requestee": QA}]))
    bug.refresh()
    assert (bug.whiteboard, bug.status) == ("[fixing]", "IN_PROGRESS")
    assert bug.see_also == [LINK, OTHER_LINK] and sorted(bug.cc) == sorted([QA, DEV])
    assert [(f["name"], f["status"], f["requestee"]) for f in bug.flags] == [
        ("review", "?", QA)]

    bug.addcomment("A second look")
    trace = tmp_path / "trace.log"
    trace.write_text("Traceback (most recent call last): ...\n")
    attachment_id = bz.attachfile(bug.id, str(trace), "The trace", content_type="text/plain")
    assert bz.openattachment(attachment_id).read() == trace.read_bytes()
    texts = [c["text"] for c in bug.getcomments()]
    assert texts[:3] == ["Steps to reproduce", "Working on it", "A second look"]
    assert texts[3].startswith(f"Created attachment {attachment_id}")

    found = bz.query(bz.build_query(product="TestProduct", status_whiteboard="[fixing]",
                                    status_whiteboard_type="allwordssubstr",
                                    include_fields=["id", "whiteboard"]))
    assert bug.id in [b.id for b in found]
    assert bug.id in [b.id for b in bz.query(bz.build_query(keywords=["regression"],
                                                            include_fields=["id"]))]
    history = bz.bugs_history_raw([bug.id])["bugs"][0]["history"]
    assert {"whiteboard", "see_also", "cc", "status", "flagtypes.name"} <= history_fields(
        history)


# The bugzilla command -------------------------------------------------------------------

@pytest.fixture(scope="module")
def dev_home(installation, tmp_path_factory):
    """A HOME whose bugzillarc holds the developer's API key, as users set it up."""
    home = tmp_path_factory.mktemp("home")
    rc = home / ".config" / "python-bugzilla" / "bugzillarc"
    rc.parent.mkdir(parents=True)
    rc.write_text(f"[{installation.url.removeprefix('http://')}]\n"
                  f"api_key = {installation.keys[DEV]}\n")
    return home


def run_command(url, home, *args, stdin=b"", timeout=60):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("BUGSVC_", "PYTHONBUGZILLA"))}
    env["HOME"] = str(home)
    return subprocess.run(COMMAND + ["--bugzilla", url, *map(str, args)], input=stdin,
                          capture_output=True, env=env, cwd=home, timeout=timeout)


def ok(done):
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout.decode()


@pytest.mark.parametrize("transport", sorted(ENDPOINTS))
def test_the_bugzilla_command_files_and_works_a_bug(installation, dev_home, transport):
    url = installation.url + ENDPOINTS[transport]
    out = ok(run_command(
        url, dev_home, "new", "-p", "TestProduct", "-c", "TestComponent", "-v", "unspecified",
        "--os", "Linux", "--arch", "PC", "-t", f"Command bug over {transport}",
        "-l", "Steps", "--keywords", "regression", "--cc", QA,
        "--field", "whiteboard=[cli]", "--field", f"see_also={LINK}"))
    bug_id = int(out.split()[0].lstrip("#"))
    ok(run_command(url, dev_home, "modify", bug_id, "--whiteboard", "=[cli-done]",
                   "--flag", "review?", "--status", "IN_PROGRESS", "--comment", "On it"))
    ok(run_command(url, dev_home, "attach", bug_id, "--file", "notes.txt",
                   "--description", "Notes", "--type", "text/plain", stdin=b"some notes\n"))
    shown = ok(run_command(url, dev_home, "query", "--bug_id", bug_id, "--outputformat",
                           "%{status}|%{whiteboard}|%{see_also}|%{keywords}|%{cc}|%{flags}"))
    assert shown.strip() == f"IN_PROGRESS|[cli-done]|{LINK}|regression|{QA}|review?"
    found = ok(run_command(url, dev_home, "query", "--whiteboard", "cli-done",
                           "--outputformat", "%{id}"))
    assert str(bug_id) in found.split()


# JSON-RPC and plain HTTP -------------------------------------------------------------------

def test_jsonrpc_files_and_works_a_bug(installation):
    key = installation.keys[DEV]
    answer = installation.jsonrpc("Bug.create", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "op_sys": "Linux", "platform": "PC", "summary": "Guard bug over JSON-RPC",
        "description": "Steps", "whiteboard": "[rpc]", "see_also": [LINK],
        "keywords": ["regression"], "cc": [QA],
        "flags": [{"name": "review", "status": "?", "requestee": QA}]}, key)
    assert answer["error"] is None, answer
    bug_id = answer["result"]["id"]
    answer = installation.jsonrpc("Bug.update", {
        "ids": [bug_id], "whiteboard": "[rpc-done]", "see_also": {"add": [OTHER_LINK]},
        "comment": {"body": "Done over RPC"}}, key)
    assert answer["error"] is None and answer["result"]["bugs"][0]["changes"]["whiteboard"] == {
        "removed": "[rpc]", "added": "[rpc-done]"}
    assert installation.jsonrpc("Bug.add_comment", {"id": bug_id, "comment": "More"},
                                key)["error"] is None
    answer = installation.jsonrpc("Bug.add_attachment", {
        "ids": [bug_id], "data": base64.b64encode(b"log line\n").decode(),
        "file_name": "log.txt", "summary": "The log", "content_type": "text/plain"}, key)
    assert answer["error"] is None, answer
    bug = installation.jsonrpc("Bug.get", {"ids": [bug_id]}, key)["result"]["bugs"][0]
    assert (bug["whiteboard"], bug["see_also"], bug["keywords"], bug["cc"]) == (
        "[rpc-done]", [LINK, OTHER_LINK], ["regression"], [QA])
    assert [(f["name"], f["status"]) for f in bug["flags"]] == [("review", "?")]
    found = installation.jsonrpc("Bug.search", {"whiteboard": "rpc-done"}, key)["result"]
    assert [b["id"] for b in found["bugs"]] == [bug_id]
    history = installation.jsonrpc("Bug.history", {"ids": [bug_id]}, key)["result"]
    assert {"whiteboard", "see_also"} <= history_fields(history["bugs"][0]["history"])


def test_plain_http_files_and_works_a_bug(installation):
    key = installation.keys[DEV]
    status, answer = installation.rest("POST", "/bug", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "op_sys": "Linux", "platform": "PC", "summary": "Guard bug over REST",
        "description": "Steps", "whiteboard": "[rest]", "see_also": [LINK],
        "keywords": ["regression"], "cc": [QA]}, key)
    assert status in (200, 201), answer
    bug_id = answer["id"]
    status, answer = installation.rest("PUT", f"/bug/{bug_id}", {
        "whiteboard": "[rest-done]",
        "flags": [{"name": "review", "status": "?", "requestee": QA}]}, key)
    assert status == 200 and answer["bugs"][0]["changes"]["whiteboard"]["added"] == "[rest-done]"
    status, answer = installation.rest("POST", f"/bug/{bug_id}/comment",
                                       {"comment": "Plain comment"}, key)
    assert status == 201, answer
    status, answer = installation.rest("POST", f"/bug/{bug_id}/attachment", {
        "data": base64.b64encode(b"x").decode(), "file_name": "x.txt", "summary": "x",
        "content_type": "text/plain"}, key)
    assert status == 201, answer
    status, answer = installation.rest("GET", f"/bug/{bug_id}", key=key)
    bug = answer["bugs"][0]
    assert (bug["whiteboard"], bug["see_also"], bug["keywords"]) == (
        "[rest-done]", [LINK], ["regression"])
    status, answer = installation.rest("GET", "/bug", key=key,
                                       query={"whiteboard": "rest-done", "include_fields": "id"})
    assert answer["bugs"] == [{"id": bug_id}]
    status, answer = installation.rest("GET", f"/bug/{bug_id}/history", key=key)
    assert "whiteboard" in history_fields(answer["bugs"][0]["history"])


# Instance calls ------------------------------------------------------------------------------

# The names the interface document lists for a logged-in caller.
DOCUMENTED_LOGGED_IN = {
    "allowemailchange", "attachment_base", "commentonchange_resolution", "commentonduplicate",
    "cookiepath", "defaultopsys", "defaultplatform", "defaultpriority", "defaultseverity",
    "duplicate_or_move_bug_status", "emailregexpdesc", "emailsuffix",
    "letsubmitterchoosemilestone", "letsubmitterchoosepriority", "mailfrom", "maintainer",
    "maxattachmentsize", "maxlocalattachment", "musthavemilestoneonaccept",
    "noresolveonopenblockers", "password_complexity", "rememberlogin", "requirelogin",
    "search_allow_no_criteria", "urlbase", "use_see_also", "useclassification",
    "usemenuforusers", "useqacontact", "usestatuswhiteboard", "usetargetmilestone"}


def test_the_parameters_each_caller_sees_over_rest_and_xmlrpc(installation):
    assert installation.rest("GET", "/parameters") == (200, {"parameters": {
        "maintainer": ADMIN, "requirelogin": "0"}})
    status, answer = installation.rest("GET", "/parameters", key=installation.keys[DEV])
    assert status == 200 and set(answer["parameters"]) == DOCUMENTED_LOGGED_IN
    proxy = xmlrpc.client.ServerProxy(installation.url + "/xmlrpc.cgi")
    assert proxy.Bugzilla.parameters({}) == {"parameters": {"maintainer": ADMIN,
                                                            "requirelogin": "0"}}
    shown = proxy.Bugzilla.parameters({"Bugzilla_api_key": installation.keys[DEV]})
    assert set(shown["parameters"]) == DOCUMENTED_LOGGED_IN


def test_valid_login_signs_in_with_whatever_came_over_rest_and_jsonrpc(installation):
    key = installation.keys[DEV]
    assert installation.rest("GET", "/valid_login", key=key, query={"login": DEV}) == (
        200, {"result": True})
    assert installation.rest("GET", "/valid_login", key=key, query={"login": QA}) == (
        200, {"result": False})
    assert installation.rest("GET", "/valid_login", query={
        "login": DEV, "password": DEV_PASSWORD}) == (200, {"result": True})
    for login, expected in ((DEV, True), (QA, False)):
        answer = installation.jsonrpc("User.valid_login", {"login": login}, key)
        assert (answer["result"], answer["error"]) == (expected, None)


# Addresses people are linked to ------------------------------------------------------------

@pytest.mark.parametrize("page_id", ["quicksearch.html", "fields.html", "bug-writing.html"])
def test_the_help_pages_clients_link_to_are_served(installation, page_id):
    status, content_type, text = installation.page(f"/page.cgi?id={page_id}")
    assert (status, content_type) == (200, "text/html; charset=UTF-8")
    assert "<main" in text


def test_a_bugzilla_page_bugsvc_lacks_is_a_page_for_browsers_and_rest_keeps_its_errors(
        installation):
    status, content_type, text = installation.page("/describecomponents.cgi?product=x")
    assert (status, content_type) == (404, "text/html; charset=UTF-8")
    assert "No such page" in text and 'href="/enter_bug.cgi"' in text
    assert installation.rest("GET", "/no_such_call")[1]["code"] == 32614
    status, answer, headers = installation.server.call("GET", "/votes.cgi")
    assert (status, answer["code"], headers["Content-Type"]) == (
        404, 32614, "application/json; charset=UTF-8")


# A client speaking TLS to the plain-HTTP port ------------------------------------------------

def test_a_tls_client_on_the_plain_port_fails_at_once_as_with_any_web_server(installation):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", installation.server.port), timeout=FAST) as raw:
        with pytest.raises(ssl.SSLError):
            ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
    assert time.monotonic() - started < FAST
    # The server keeps answering plain HTTP.
    assert installation.rest("GET", "/version") == (200, {"version": "5.2"})


def test_the_bugzilla_command_reports_https_to_the_plain_port_as_a_tls_problem(
        installation, tmp_path):
    # What python-bugzilla's own test of a bad TLS server expects: the
    # command's advice about certificates (exit status 4), not a minute's wait.
    https = installation.url.replace("http://", "https://") + "/rest/"
    done = run_command(https, tmp_path, "query", "--bug_id", "1", timeout=FAST * 4)
    out = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 4, out
    assert "trust the remote server" in out and "--nosslverify" in out


# Nothing was changed to make this pass ------------------------------------------------------

def test_the_parameters_are_still_those_of_a_first_start(installation):
    from bugsvc.catalogue import settings
    expected = dict(settings.defaults(), maintainer=ADMIN)
    expected = {name: settings.shown(name, value) for name, value in expected.items()}
    status, answer = installation.rest("GET", "/parameters", key=installation.keys[ADMIN])
    assert status == 200 and answer["parameters"] == expected
    # No parameter change was ever audited (over REST, the pages or the command line).
    status, answer = installation.rest("GET", "/last_audit_time", key=installation.keys[ADMIN],
                                       query={"class": "Bugzilla::Param"})
    assert (status, answer) == (200, {"last_audit_time": None})
