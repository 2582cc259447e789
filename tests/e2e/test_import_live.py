"""Importing from a real source: a second bugsvc server on loopback, seeded
over REST with a team's kind of data (tests/import_support.py); the import
runs as the command a person types (or in this process, where a test
needs to break the source, or through tests/hostile_answers.py's Proxy,
which closes kept-alive connections as Apache does and misbehaves on
request), then --verify compares."""

import copy
import io
import shutil
import sqlite3
import sys

import pytest

import hostile_answers
import import_support as support
from bugsvc.importer.client import Client, Limits, SourceError
from bugsvc.importer.run import run_import as import_now
from import_support import ADMIN, INSIDER, MANAGER, OUTSIDER, PLAIN, READS, SAM, run_import
from live_server import ROOT, Server, run_cli


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """(database file, what seed returned, the administrator's key) of a
    source seeded once for the module, by a server stopped since."""
    folder = tmp_path_factory.mktemp("seeded")
    servers = []

    def start_once(db_path, env_extra=None, name="server"):
        servers.append(Server([sys.executable, str(ROOT / "bugsvc.py")], db_path, folder,
                              env_extra, name))
        return servers[-1]
    try:
        server, db_path, admin = support.start_source(start_once, folder)
        data = support.seed(server, db_path, admin)
    finally:
        for server in servers:
            server.stop()
    support.age(db_path)
    return db_path, data, admin.key


@pytest.fixture
def source(seeded, start, tmp_path):
    """The seeded source, a copy of its own served for the test (what the
    test changes there, another test never sees)."""
    seeded_path, data, admin_key = seeded
    db_path = tmp_path / "source.sqlite"
    shutil.copyfile(seeded_path, db_path)
    server = start(db_path, env_extra={"BUGSVC_PIN_CORES": "no"}, name="source")
    data = copy.deepcopy(data)
    data.update(server=server, db_path=db_path, admin=support.Api(server, admin_key),
                url=server.url)
    return data


def rows(path, sql, args=()):
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql, args)]
    finally:
        conn.close()


def imported(source, target, login, *extra):
    done = run_import(source["url"], "--db", target, "--login", login, *extra,
                      env={"BUGSVC_IMPORT_API_KEY": source["keys"][login]})
    assert done.returncode == 0, done.stderr + done.stdout
    return done


def name_insiders(target):
    """What the report asks for when the key may not read the insider group."""
    done = run_cli("--db", target, "parameters", "insidergroup=staff")
    assert done.returncode == 0, done.stderr


def verified(source, target, login):
    checked = run_import(source["url"], "--db", target, "--verify", "--login", login,
                         env={"BUGSVC_IMPORT_API_KEY": source["keys"][login]})
    return checked.returncode, checked.stdout


# What --verify says to a key that may not see products' group controls.
CONTROLS_BY_HAND = "".join(f"Not compared: product '{name}': group controls (the source does not "
                           "show them to the key: set by hand)\n"
                           for name in ("Router", "TestProduct"))
NO_DIFFERENCE = (0, "0 differences.\n" + CONTROLS_BY_HAND)


def memberships(target, login):
    return rows(target, "SELECT g.name, ug.grant_type FROM user_groups ug JOIN groups g"
                        " ON g.id = ug.group_id JOIN users u ON u.id = ug.user_id"
                        " WHERE u.login = ? AND ug.is_bless = 0 ORDER BY g.name, ug.grant_type",
                (login,))


def test_an_administrator_key_carries_everything_and_verify_finds_no_difference(
        source, tmp_path):
    target = tmp_path / "target.sqlite"
    done = imported(source, target, ADMIN, "--urlbase", "https://bugs.new.example")
    assert "Not carried: nothing." in done.stdout
    assert "Its password, shown only this once:" in done.stdout
    assert verified(source, target, ADMIN) == (0, "0 differences.\n")
    # Accounts on no bug, with their memberships; a regexp grant stays one.
    assert rows(target, "SELECT login, real_name, disabled_text, email_enabled FROM users"
                        " WHERE login IN (?, ?, ?) ORDER BY login", (MANAGER, READS, SAM)) == [
        (MANAGER, "Mia Manager", "", 1), (READS, "Rob Reads", "Moved on.", 0),
        (SAM, "Sam Crew", "", 1)]
    # (bz_canusewhines through editbugs, as both installations make it.)
    assert memberships(target, MANAGER) == [("bz_canusewhines", 1), ("editbugs", 2),
                                            ("editcomponents", 0), ("security", 0)]
    assert memberships(target, SAM) == [("bz_canusewhines", 1), ("crew", 2), ("editbugs", 2)]
    assert memberships(target, READS) == [("bz_canusewhines", 1), ("editbugs", 2)]
    # The key's personal tags (the plain account's stay its own), the
    # products' group controls, See Also links to the source's own bugs.
    sql = ("SELECT u.login, bt.bug_id, t.name FROM bug_tags bt JOIN personal_tags t"
           " ON t.id = bt.tag_id JOIN users u ON u.id = t.user_id ORDER BY 2, 3")
    assert rows(target, sql) == [row for row in rows(source["db_path"], sql) if row[0] == ADMIN]
    assert len(rows(target, sql)) == 3
    sql = ("SELECT p.name, g.name, gc.entry, gc.membercontrol, gc.othercontrol, gc.canedit"
           " FROM group_controls gc JOIN groups g ON g.id = gc.group_id JOIN products p"
           " ON p.id = gc.product_id ORDER BY 1, 2")
    assert rows(target, sql) == rows(source["db_path"], sql) != []
    blocked, later = source["bugs"]["Needs the fix"], source["bugs"]["Comes later"]
    assert rows(target, "SELECT bug_id, url FROM bug_see_also WHERE url LIKE"
                        " 'https://bugs.new.example/%' ORDER BY bug_id") == [
        (blocked, f"https://bugs.new.example/show_bug.cgi?id={later}"),
        (later, f"https://bugs.new.example/show_bug.cgi?id={blocked}")]
    # Ids are kept: bugs, comments, attachments, flags and flag types.
    for table in ("bugs", "comments", "attachments", "flags", "flag_types"):
        query = f"SELECT id FROM {table} ORDER BY id"
        assert rows(target, query) == rows(source["db_path"], query), table
    # Accounts have no password (the target's administrator keeps its own).
    assert rows(target, "SELECT login FROM users WHERE password_hash IS NOT NULL") == [(ADMIN,)]
    # The data came over whole: attachments' bytes, private marks, comment tags, time worked.
    for sql in ("SELECT id, data FROM attachment_data ORDER BY attachment_id",
                "SELECT id, is_private, body, work_time FROM comments ORDER BY id",
                "SELECT c.id, t.tag FROM comment_tags t JOIN comments c ON c.id = t.comment_id"
                " ORDER BY c.id, t.tag",
                "SELECT bug_id, alias FROM bug_aliases ORDER BY alias",
                "SELECT blocked, depends_on FROM dependencies ORDER BY 1, 2",
                "SELECT id, dupe_of, estimated_time, remaining_time, deadline FROM bugs"):
        if sql.startswith("SELECT id, data"):
            sql = "SELECT attachment_id, data FROM attachment_data ORDER BY attachment_id"
        assert rows(target, sql) == rows(source["db_path"], sql), sql
    # Imported data raised no notification: no event, no message in the outbox.
    for table in ("outbox_events", "outbox_messages"):
        assert rows(target, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_a_plain_key_carries_only_what_it_may_see(source, tmp_path):
    target = tmp_path / "target.sqlite"
    done = imported(source, target, PLAIN)
    assert verified(source, target, PLAIN) == NO_DIFFERENCE
    bugs = source["bugs"]
    ids = {row[0] for row in rows(target, "SELECT id FROM bugs")}
    assert bugs["Secret hole"] not in ids and bugs["It breaks"] in ids
    comments = {row[0] for row in rows(target, "SELECT id FROM comments")}
    assert source["comments"]["secret"] not in comments
    assert source["comments"]["public"] in comments
    assert rows(target, "SELECT COUNT(*) FROM comments WHERE is_private = 1") == [(0,)]
    attachments = {row[0] for row in rows(target, "SELECT id FROM attachments")}
    assert source["attachments"]["log"] not in attachments
    assert source["attachments"]["patch"] in attachments
    # Nothing of the hidden bug: no dependency on it, no history naming it.
    assert bugs["Secret hole"] not in {row[0] for row in rows(
        target, "SELECT blocked FROM dependencies UNION SELECT depends_on FROM dependencies")}
    assert not rows(target, "SELECT 1 FROM bug_activity WHERE bug_id = ?",
                    (bugs["Secret hole"],))
    # The insider group is not shown to a plain key: the report says what to do.
    assert "insidergroup" in done.stdout


def test_a_key_that_sees_a_restricted_bug_as_cc_carries_it_and_its_group(source, tmp_path):
    target = tmp_path / "target.sqlite"
    imported(source, target, OUTSIDER)
    assert verified(source, target, OUTSIDER) == NO_DIFFERENCE
    hidden = source["bugs"]["Secret hole"]
    assert rows(target, "SELECT g.name FROM bug_groups bg JOIN groups g ON g.id = bg.group_id"
                        " WHERE bg.bug_id = ?", (hidden,)) == [("security",)]
    # ... and an account outside the group, not on its CC list, does not see it
    # there. What differs for it is what the outsider could not see: the
    # plain account's own group and its personal tag.
    assert verified(source, target, PLAIN) == (1, (
        "account plain@example.com: groups: source ['bz_canusewhines', 'editbugs', 'watchers'],"
        " target ['bz_canusewhines', 'editbugs']\nbug 1: tags: source ['plains-own'], target []\n"
        "2 differences.\n"
        + CONTROLS_BY_HAND))


def test_verify_lists_every_difference(source, tmp_path):
    target = tmp_path / "target.sqlite"
    done = imported(source, target, INSIDER)
    assert "insidergroup" in done.stdout
    name_insiders(target)
    first = source["bugs"]["It breaks"]
    conn = sqlite3.connect(target)
    with conn:
        conn.execute("UPDATE bugs SET summary = 'Changed here' WHERE id = ?", (first,))
        conn.execute("UPDATE comments SET is_private = 0 WHERE id = ?",
                     (source["comments"]["secret"],))
        conn.execute("DELETE FROM flags WHERE attachment_id = ?", (source["attachments"]["patch"],))
        conn.execute("DELETE FROM bug_activity WHERE bug_id = ? AND field = 'priority'", (first,))
    conn.close()
    status, out = verified(source, target, INSIDER)
    assert status == 1
    lines = out.splitlines()
    assert f"bug {first}: summary: source 'It breaks', target 'Changed here'" in lines
    secret, patch = source["comments"]["secret"], source["attachments"]["patch"]
    assert f"bug {first} comment {secret}: is_private: source True, target False" in lines
    assert any(line.startswith(f"bug {first} attachment {patch}: flags:") for line in lines)
    assert any(line.startswith(f"bug {first} history ") and "'priority'" in line
               for line in lines)
    assert lines[-3:] == ["4 differences."] + CONTROLS_BY_HAND.splitlines()
    # As a plain account the private comment, now public in the target, is one too many.
    assert f"bug {first} comment {secret}: comment: source 'not visible', target 'visible'" \
        in verified(source, target, PLAIN)[1]


def test_a_dry_run_reads_and_reports_but_writes_nothing(source, tmp_path):
    target = tmp_path / "target.sqlite"
    done = imported(source, target, ADMIN, "--dry-run")
    assert not target.exists()
    assert "Would carry:" in done.stdout and "  bugs: 7" in done.stdout
    assert "shown only this once" not in done.stdout


class FailingClient(Client):
    """A source that stops answering after `fail_after` requests (its
    network went away): every later request fails after the retries."""

    def __init__(self, *args, fail_after, **kwargs):
        super().__init__(*args, **kwargs)
        self.fail_after = fail_after

    def get(self, path, params=None):
        if self.requests >= self.fail_after:
            self.requests += 1
            raise SourceError("gave up after 3 attempts: ConnectionRefusedError", path=path)
        return super().get(path, params)


def test_a_stopped_import_continues_where_it_stopped_with_the_same_result(source, tmp_path):
    key = source["keys"][ADMIN]
    whole = tmp_path / "whole.sqlite"
    client = Client(source["url"], key)
    assert import_now(support.options(source["url"], whole, key, ADMIN, page_size=2),
                      io.StringIO(), io.StringIO(), client=client) == 0
    # Near the end: the last pages are read after the first ones are written.
    halfway = client.requests - 6
    target = tmp_path / "target.sqlite"
    failing = FailingClient(source["url"], key, fail_after=halfway)
    err = io.StringIO()
    assert import_now(support.options(source["url"], target, key, ADMIN, page_size=2),
                      io.StringIO(), err, client=failing) == 1
    assert "run the same command again to continue" in err.getvalue()
    written = rows(target, "SELECT COUNT(*) FROM bugs")[0][0]
    cursor = dict(rows(target, "SELECT name, value FROM import_state"))["run.cursor"]
    assert 0 < written < 7 and int(cursor) > 0
    out = io.StringIO()
    assert import_now(support.options(source["url"], target, key, ADMIN, page_size=2),
                      out, io.StringIO()) == 0
    assert "bugs: " + str(7 - written) in out.getvalue()
    assert support.dump(target) == support.dump(whole)
    assert verified(source, target, ADMIN) == (0, "0 differences.\n")


def test_a_second_run_carries_exactly_the_changes_made_since(source, tmp_path):
    target = tmp_path / "target.sqlite"
    imported(source, target, INSIDER)
    name_insiders(target)
    bugs, api = source["bugs"], support.Api(source["server"], source["keys"][ADMIN])
    first, later, quiet = bugs["It breaks"], bugs["Comes later"], bugs["Quiet one"]
    api("POST", f"/bug/{first}/comment", {"comment": "One more thing"})
    api("PUT", f"/bug/{later}", {"alias": {"remove": ["second-alias"]}, "cc": {"add": [PLAIN]},
                                 "status": "CONFIRMED"})
    api("PUT", f"/bug/{quiet}", {"alias": {"add": ["second-alias"]}})
    new = api("POST", "/bug", {"product": "Router", "component": "Ethernet", "version": "2.0",
                               "op_sys": "Linux", "platform": "PC", "summary": "Brand new",
                               "description": "Just filed", "depends_on": [later]})["id"]
    insider = support.Api(source["server"], source["keys"][INSIDER])
    insider("PUT", f"/bug/{first}", {"comment_is_private": {str(source["comments"]["public"]):
                                                            True}})
    done = imported(source, target, INSIDER)
    assert "  bugs: 4\n" in done.stdout               # first, later, quiet and the new one
    assert "Listing the bugs changed since" in done.stderr
    assert verified(source, target, INSIDER) == NO_DIFFERENCE
    assert rows(target, "SELECT bug_id FROM bug_aliases WHERE alias = 'second-alias'") == \
        [(quiet,)]
    assert rows(target, "SELECT blocked, depends_on FROM dependencies WHERE blocked = ?",
                (new,)) == [(new, later)]
    # A third run with nothing changed reads again only what the overlap
    # covers (the bugs changed in the last five minutes), and changes nothing.
    before = support.dump(target)
    assert "  bugs: 4\n" in imported(source, target, INSIDER).stdout
    assert support.dump(target) == before


@pytest.mark.parametrize("concurrency", [1, 2, 4])
def test_an_account_two_pages_read_at_once_keeps_its_memberships(source, tmp_path, concurrency):
    """The plain account is on the first two bugs, each a page read at the
    same time: the second page asks for it first (see RacingClient)."""
    key = source["keys"][ADMIN]
    target = tmp_path / "target.sqlite"
    err = support.PageWritten(total=7)
    client = support.RacingClient(source["url"], key, concurrency=concurrency, retries=1,
                                  written=err.written, racer=PLAIN, hold="/bug/1/history")
    assert import_now(support.options(source["url"], target, key, ADMIN, page_size=1,
                                      concurrency=concurrency), io.StringIO(), err,
                      client=client) == 0, err.getvalue()
    assert err.written.is_set() and client.held
    assert memberships(target, PLAIN) == [("bz_canusewhines", 1), ("editbugs", 2),
                                          ("watchers", 0)]


def test_through_apaches_kept_alive_connections_and_hostile_answers_nothing_is_lost(
        source, tmp_path):
    """Through a proxy that closes every kept-alive connection after two
    answers without a word: each hostile answer in turn, on the second page's
    comments, stops the run with one line saying what the source did; the
    next run, the source sane again, completes quietly, and --verify finds
    the result whole."""
    key = source["keys"][ADMIN]
    proxy = hostile_answers.Proxy(source["url"], keepalive_max=2).start()
    third = source["bugs"]["Secret hole"]                 # the first bug of the second page
    said = {"endless": "the source sent more than 1 MB in one answer",
            "huge_length": "the source announced an answer of 3,221,225,472 bytes",
            "bomb": f"the source sent {len(hostile_answers.gzip_bomb()):,} bytes of gzip that "
                    "inflate to more than 1 MB",
            "deep": "the source answered JSON nested 200,000 deep (at most 64 is read)",
            "retry_years": "the source asks to wait 3.0 years before trying again",
            "drip": "the source took more than 2 s to answer one request"}
    try:
        limits = Limits(max_bytes=1024 * 1024, deadline=2.0)
        options = support.options(proxy.url, tmp_path / "target.sqlite", key, ADMIN,
                                  page_size=2, limits=limits)
        for kind in hostile_answers.KINDS:
            proxy.misbehave(kind, f"/bug/{third}/comment", drip_every=0.1)
            err = io.StringIO()
            assert import_now(options, io.StringIO(), err) == 1, kind
            stopped = [line for line in err.getvalue().splitlines()
                       if line.startswith("bugsvc")]
            assert len(stopped) == 1 and stopped[0].startswith(
                f"bugsvc import: stopped: {said[kind]}"), (kind, err.getvalue())
            assert stopped[0].endswith(f"(/bug/{third}/comment)")
            assert rows(options.db_path, "SELECT COUNT(*) FROM bugs") == [(2,)]
            proxy.behave()
        client = Client(proxy.url, key, concurrency=2, limits=limits)
        out, err = io.StringIO(), io.StringIO()
        assert import_now(options, out, err, client=client) == 0
        assert "trying again" not in err.getvalue() and "failed" not in err.getvalue()
        assert client.reconnected > 0 and client.retried == 0
        assert rows(options.db_path, "SELECT COUNT(*) FROM bugs") == [(7,)]
        checked = io.StringIO()
        from bugsvc.importer.verify import verify_command
        assert verify_command(options, checked, io.StringIO()) == 0, checked.getvalue()
    finally:
        proxy.stop()
