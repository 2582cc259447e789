"""A source for the import tests: a real bugsvc server on loopback, filled
over its REST interface with what a team's tracker holds (restricted bugs,
private comments and attachments, flags on bugs and attachments, custom
fields of every kind, history, aliases, dependencies and duplicates that
point both ways, comment tags, time tracking, accounts on no bug, a group
whose regular expression grants its members, personal tags, group
controls, See Also links between its own bugs), then its times moved a day
back, so that a change made during a test is the only recent one.
"""

import base64
import io
import re
import sqlite3
import sys
import threading

from bugsvc.importer.client import Client
from bugsvc.store.location import open_database
from live_server import ROOT, api_key_for


ADMIN = "admin@example.com"
ADMIN_PASSWORD = "source-admin-password"
DEV, QA, PLAIN, INSIDER, OUTSIDER = ("dev@example.com", "qa@example.com", "plain@example.com",
                                     "insider@example.com", "outsider@example.com")
# Accounts on no bug: a manager, someone who only reads, one a regexp grants "crew".
MANAGER, READS, SAM = "manager@example.com", "reads@example.com", "sam@crew.example.com"
# Tables and their time columns, moved back by `age`.
TIME_COLUMNS = {"bugs": ("creation_time", "last_change_time"), "comments": ("created_at",),
                "bug_activity": ("changed_at",),
                "attachments": ("created_at", "last_change_time"),
                "flags": ("created_at", "modified_at")}


class Api:
    """REST calls to a server with one account's key; every answer must succeed."""

    def __init__(self, server, key):
        self.server, self.key = server, key

    def __call__(self, method, path, body=None, query=None, expect=None):
        status, answer, _ = self.server.call(method, "/rest" + path, query=query, body=body,
                                             headers={"X-BUGZILLA-API-KEY": self.key})
        if expect is None:
            assert status < 400, (method, path, body, status, answer)
        else:
            assert status == expect, (method, path, status, answer)
        return answer


def start_source(start, tmp_path, name="source"):
    """A running, empty bugsvc source and its admin's Api."""
    db_path = tmp_path / f"{name}.sqlite"
    server = start(db_path, env_extra={"BUGSVC_ADMIN_EMAIL": ADMIN,
                                       "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD,
                                       "BUGSVC_PIN_CORES": "no"}, name=name)
    return server, db_path, Api(server, api_key_for(db_path, ADMIN))


def seed(server, db_path, admin, bugs_extra=0):
    """Fill the source; returns {"keys": {login: key}, "bugs": {name: id}, ...}."""
    for login, name in ((DEV, "Dana Developer"), (QA, "Quinn Tester"), (PLAIN, "Pat Plain"),
                        (INSIDER, "Ines Insider"), (OUTSIDER, "Olaf Outsider")):
        admin("POST", "/user", {"email": login, "full_name": name,
                                "password": "a long password 1"})
    admin("POST", "/group", {"name": "staff", "description": "Our own staff", "is_active": True})
    admin("POST", "/group", {"name": "security", "description": "Security team",
                             "is_active": True})
    admin("PUT", f"/user/{INSIDER}", {"groups": {"add": ["staff", "security"]}})
    admin("PUT", f"/user/{DEV}", {"groups": {"add": ["security"]}})
    for login, name in ((MANAGER, "Mia Manager"), (READS, "Rob Reads"), (SAM, "Sam Crew")):
        admin("POST", "/user", {"email": login, "full_name": name})
    admin("POST", "/group", {"name": "crew", "description": "Everyone at crew.example.com",
                             "is_active": True, "user_regexp": r"@crew\.example\.com$"})
    admin("PUT", f"/user/{MANAGER}", {"groups": {"add": ["editcomponents", "security"]}})
    admin("POST", "/group", {"name": "watchers", "description": "Keep an eye on things",
                             "is_active": True})
    admin("PUT", f"/user/{PLAIN}", {"groups": {"add": ["watchers"]}})
    admin("PUT", f"/user/{READS}", {"login_denied_text": "Moved on.", "email_enabled": False})
    admin("PUT", "/parameters", {"insidergroup": "staff", "usestatuswhiteboard": True,
                                 "useclassification": True, "usetargetmilestone": True,
                                 "comment_taggers_group": "editbugs", "useqacontact": True,
                                 "urlbase": server.url + "/"})
    admin("POST", "/classification", {"name": "Hardware", "description": "Things",
                                      "sort_key": 10})
    admin("POST", "/product", {"name": "Router", "description": "Home routers", "version": "1.0",
                               "classification": "Hardware"})
    admin("POST", "/component", {"product": "Router", "name": "WiFi", "description": "Wireless",
                                 "default_assignee": DEV, "default_qa_contact": QA})
    admin("POST", "/component", {"product": "Router", "name": "Ethernet",
                                 "description": "Cables", "default_assignee": DEV})
    admin("POST", "/version", {"product": "Router", "name": "2.0"})
    admin("POST", "/milestone", {"product": "Router", "name": "R2", "sort_key": 20})
    admin("PUT", "/product/Router", {"group_controls": {
        "security": {"membercontrol": "Shown", "othercontrol": "NA"}}})
    admin("POST", "/keyword", {"name": "regression", "description": "It used to work"})
    admin("POST", "/keyword", {"name": "crash", "description": "It falls over"})
    admin("POST", "/flag_type", {"name": "review", "description": "Code review",
                                 "target_type": "bug"})
    admin("POST", "/flag_type", {"name": "approval", "description": "Release approval",
                                 "target_type": "attachment", "inclusions": ["Router"]})
    admin("POST", "/field/bug", {"name": "cf_os_detail", "display_name": "OS detail", "type": 2,
                                 "values": ["Ubuntu", "Fedora", "Debian"]})
    admin("POST", "/field/bug", {"name": "cf_areas", "display_name": "Areas", "type": 3,
                                 "values": ["ui", "network", "storage"]})
    admin("POST", "/field/bug", {"name": "cf_notes", "display_name": "Notes", "type": 1})
    admin("POST", "/field/bug", {"name": "cf_due", "display_name": "Due", "type": 5})
    admin("POST", "/field/bug", {"name": "cf_regressed_by", "display_name": "Regressed by",
                                 "type": 7})
    keys = {login: api_key_for(db_path, login) for login in (DEV, QA, PLAIN, INSIDER, OUTSIDER)}
    keys[ADMIN] = admin.key
    dev, insider = Api(server, keys[DEV]), Api(server, keys[INSIDER])
    bugs = {}

    def file(name, api=admin, **fields):
        body = {"product": "Router", "component": "WiFi", "version": "1.0", "op_sys": "Linux",
                "platform": "PC", "summary": name, "description": f"Steps for {name}"}
        body.update(fields)
        bugs[name] = api("POST", "/bug", body)["id"]
        return bugs[name]

    first = file("It breaks", alias=["it-breaks"], cc=[QA, PLAIN], keywords=["regression"],
                 cf_os_detail="Ubuntu", cf_areas=["ui", "network"], cf_notes="see the logs",
                 cf_due="2025-03-01 12:00:00", estimated_time=8, deadline="2025-04-01")
    blocked = file("Needs the fix", component="Ethernet", target_milestone="R2", cc=[PLAIN])
    hidden = file("Secret hole", groups=["security"], cc=[OUTSIDER])
    private_only = file("Quiet one", api=dev)
    later = file("Comes later", alias=["later-one", "second-alias"])
    dupe = file("Same as the first")
    other = file("Other product bug", product="TestProduct", component="TestComponent",
                 version="unspecified")
    for number in range(bugs_extra):
        file(f"Extra bug {number}", api=dev)
    # History: changes of many fields, one after another.
    admin("PUT", f"/bug/{first}", {"status": "IN_PROGRESS", "assigned_to": DEV,
                                   "whiteboard": "[triaged]", "priority": "High",
                                   "see_also": {"add": [
                                       "https://bugs.example.org/show_bug.cgi?id=123"]},
                                   "cf_regressed_by": later,
                                   "flags": [{"name": "review", "status": "?",
                                              "requestee": QA}]})
    admin("PUT", f"/bug/{blocked}", {"depends_on": {"add": [first, later]},
                                     "blocks": {"add": [other]}, "keywords": {"add": ["crash"]}})
    admin("PUT", f"/bug/{dupe}", {"status": "RESOLVED", "resolution": "DUPLICATE",
                                  "dupe_of": first})
    admin("PUT", f"/bug/{private_only}", {"status": "RESOLVED", "resolution": "DUPLICATE",
                                          "dupe_of": later})
    admin("PUT", f"/bug/{hidden}", {"depends_on": {"add": [first]}})
    # Comments: public, private (insiders), with time worked, tagged.
    admin("POST", f"/bug/{first}/comment", {"comment": "Reproduced on 1.0", "work_time": 1.5})
    secret = insider("POST", f"/bug/{first}/comment", {"comment": "Customer is ACME.",
                                                       "is_private": True})["id"]
    public = dev("POST", f"/bug/{first}/comment", {"comment": "Fix is coming"})["id"]
    admin("PUT", f"/bug/comment/{public}/tags", {"add": ["spam", "needinfo"]})
    insider("PUT", f"/bug/{first}", {"comment_is_private": {str(public): True}})
    insider("PUT", f"/bug/{first}", {"comment_is_private": {str(public): False}})
    # Attachments: a patch, a private log, an obsolete one; flags on them.
    patch = admin("POST", f"/bug/{first}/attachment", {
        "data": base64.b64encode(b"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n").decode(),
        "file_name": "fix.patch", "summary": "The fix", "content_type": "text/plain",
        "is_patch": True, "comment": "Here it is",
        "flags": [{"name": "approval", "status": "?", "requestee": DEV}]})["ids"][0]
    log = insider("POST", f"/bug/{first}/attachment", {
        "data": base64.b64encode(b"secret log\n" * 20).decode(), "file_name": "server.log",
        "summary": "Server log", "content_type": "text/plain", "is_private": True})["ids"][0]
    image = admin("POST", f"/bug/{blocked}/attachment", {
        "data": base64.b64encode(bytes(range(256)) * 4).decode(), "file_name": "shot.png",
        "summary": "Screenshot", "content_type": "image/png"})["ids"][0]
    admin("PUT", f"/bug/attachment/{image}", {"is_obsolete": True, "summary": "Old screenshot"})
    admin("PUT", f"/bug/attachment/{patch}", {
        "flags": [{"name": "approval", "status": "+"}]})
    admin("PUT", f"/bug/{first}", {"status": "RESOLVED", "resolution": "FIXED",
                                   "remaining_time": 2,
                                   "comment": {"body": "Verified on Linux"}})
    # A See Also link to another bug of the source (mirrored on that bug).
    admin("PUT", f"/bug/{blocked}", {"see_also": {"add": [str(later)]}})
    # Personal tags: the administrator's and the plain account's own.
    tag(server, keys[ADMIN], [first, blocked], "triage")
    tag(server, keys[ADMIN], [first], "mine")
    tag(server, keys[PLAIN], [first], "plains-own")
    return {"keys": keys, "bugs": bugs, "comments": {"secret": secret, "public": public},
            "attachments": {"patch": patch, "log": log, "image": image}}


def tag(server, key, ids, name):
    """Add a personal tag (Bug.update_tags: JSON-RPC, as at the reference)."""
    status, answer, _ = server.call("POST", "/jsonrpc.cgi", body={
        "method": "Bug.update_tags", "id": 1,
        "params": [{"Bugzilla_api_key": key, "ids": ids, "tags": {"add": [name]}}]})
    assert status == 200 and answer.get("error") is None, answer


def age(db_path, days=1):
    """Move every time of the source's bugs `days` back (a tracker's past)."""
    conn = sqlite3.connect(db_path, timeout=30)
    try:
        with conn:
            for table, columns in TIME_COLUMNS.items():
                for column in columns:
                    conn.execute(f"UPDATE {table} SET {column} ="
                                 f" datetime({column}, '-{int(days)} days')"
                                 f" WHERE {column} IS NOT NULL")
    finally:
        conn.close()


def run_import(*args, timeout=300, env=None):
    """`python bugsvc.py import ...` to the end; returns the CompletedProcess."""
    import os
    import subprocess
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith("BUGSVC_")}
    environ.update(env or {})
    return subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), "import", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=environ)


def options(url, target, key=None, login=None, **extra):
    """Options of an import run in the test's own process (fast hashing,
    short delays between retries)."""
    from bugsvc.importer.run import Options
    from conftest import FAST_COST
    values = dict(url=url, db_path=str(target), api_key=key, login=login,
                  password_cost=FAST_COST, admin_password="target-admin-password",
                  base_delay=0.01, retries=2)
    values.update(extra)
    return Options(**values)


def dump(path, exclude=("import_state", "server_secrets", "catalog_generation",
                         "credential_generation", "bug_generation", "bug_revisions")):
    """Every row of every table of the database at `path` (a comparable
    picture), less `exclude` (secrets, and the counters of writes, which
    count how the rows were written), the account columns a run stamps and the row
    ids of history, See Also, aliases and custom values (rows a run writes
    anew)."""
    database = open_database(path)
    try:
        with database.transaction() as conn:
            tables = [table for table in conn.dialect.tables(conn) if table not in exclude]
            picture = {}
            for table in tables:
                columns = [column for column in conn.dialect.columns(conn, table)
                           if (table, column) not in (("users", "created_at"),
                                                      ("users", "password_hash"),
                                                      ("bug_activity", "id"),
                                                      ("bug_see_also", "id"),
                                                      ("bug_aliases", "id"),
                                                      ("bug_custom_values", "id"))]
                picture[table] = sorted(
                    (tuple(row) for row in conn.execute(
                        f"SELECT {', '.join(columns)} FROM {table}")), key=repr)
            return picture
    finally:
        database.close()


class PageWritten(io.StringIO):
    """A run's progress stream: `written` is set once the first page of
    bugs is in the target (the progress line says 1 of `total` bugs)."""

    def __init__(self, total):
        super().__init__()
        self.written = threading.Event()
        self.mark = re.compile(rf"\b1/{total} bugs")

    def write(self, text):
        if self.mark.search(text):
            self.written.set()
        return super().write(text)


class RacingClient(Client):
    """Makes the first two pages, read at once, race for one account
    (`racer`) the worst way round: the second page asks for it first, and
    its answer comes only after the first page is written (`written`, a
    PageWritten's). One request of the first page (`hold`, a path) waits
    until then: one thread of the pool, so the second page's reads still
    get through at concurrency 1. The account is one made after the
    accounts were listed (the listing does not show it), so the pages are
    where it is read."""

    def __init__(self, *args, written, racer, hold, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked, self.written = threading.Event(), written
        self.racer, self.hold = racer, hold
        self.held = False
        self.lock = threading.Lock()

    def get(self, path, params=None):
        params = params or {}
        if path == self.hold:
            self.asked.wait(10)
        if path == "/user" and self.racer in (params.get("names") or []):
            with self.lock:
                first, self.held = not self.held, True
            if first:
                self.asked.set()
                self.written.wait(10)
            return super().get(path, params)
        answer = super().get(path, params)
        if path == "/user":
            answer["users"] = [user for user in answer["users"] if user["name"] != self.racer]
        if path == "/group":
            for group in answer["groups"]:
                if "membership" in group:
                    group["membership"] = [user for user in group["membership"]
                                           if user["name"] != self.racer]
        return answer
