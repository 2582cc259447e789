"""Scheduled searches mailed by real server processes to a real SMTP
server: a schedule saved by a server that is then killed (SIGKILL) before
its run is mailed after the restart; two servers (one of them with two
processes) and a `bugsvc whine` process running the schedules of one
database mail each run exactly once; on either engine."""

import collections
from datetime import datetime, timezone

import pytest

from live_server import run_cli
from notify_support import SmtpSink, wait_for
from write_load import ADMIN, ADMIN_ENV, ADMIN_PASSWORD, open_read_only


pytestmark = pytest.mark.slow
MEMBERS = ("dev@example.com", "qa@example.com")


@pytest.fixture
def smtp():
    sink = SmtpSink()
    yield sink
    sink.stop()


def whine_messages(db_path):
    """[(user_id, state)] of the whine messages the database holds."""
    with open_read_only(db_path) as conn:
        return [tuple(row) for row in conn.execute(
            "SELECT user_id, state FROM outbox_messages WHERE kind = 'whine' ORDER BY id")]


def set_up(server, smtp):
    """Mail to `smtp`; two more accounts (in editbugs, as every account); a
    saved search and an event of the administrator's mailing the members
    of editbugs this very hour. Returns the administrator's API key."""
    status, body, _ = server.call("POST", "/rest/api_key", {"Bugzilla_login": ADMIN,
                                                            "Bugzilla_password": ADMIN_PASSWORD},
                                  {"description": "whine test"})
    assert status == 201, body
    key = {"Bugzilla_api_key": body["api_key"]}
    status, body, _ = server.call("PUT", "/rest/parameters", key, {
        "mail_delivery_method": "SMTP", "smtpserver": f"127.0.0.1:{smtp.port}"})
    assert status == 200, body
    for login in MEMBERS:
        status, body, _ = server.call("POST", "/rest/user", key, {"email": login})
        assert status == 201, body
    status, body, _ = server.call("POST", "/rest/bug", key, {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Whined about", "op_sys": "Linux", "platform": "PC"})
    assert status == 201, body
    status, body, _ = server.call("POST", "/rest/saved_search", key,
                                  {"name": "Open", "query": "bug_status=__open__"})
    assert status == 201, body
    status, body, _ = server.call("POST", "/rest/whine", key, {})
    assert status == 201, body
    event = body["id"]
    hour = str(datetime.now(timezone.utc).hour)
    status, body, _ = server.call("PUT", f"/rest/whine/{event}", key, {
        "subject": "Hourly open bugs", "body": "Open now:",
        "schedules": [{"day": "All", "time": hour, "mailto_type": 1, "mailto": "editbugs"}],
        "queries": [{"name": "Open", "title": "Open bugs"}]})
    assert status == 200, body
    return key


def test_each_run_is_mailed_once_by_several_processes_and_after_a_kill(start, new_db, smtp):
    db_path = new_db("whines")
    server = start(db_path, dict(ADMIN_ENV, BUGSVC_DELIVER="no"))
    set_up(server, smtp)
    assert server.kill() == -9
    assert whine_messages(db_path) == []                # saved, not run yet

    first = start(db_path, dict(BUGSVC_WORKERS="2", BUGSVC_DELIVER="yes",
                                BUGSVC_PIN_CORES="no"), name="restart")
    second = start(db_path, dict(BUGSVC_DELIVER="yes"), name="second")
    done = run_cli("--db", db_path, "whine")
    assert done.returncode == 0, done.stderr
    wait_for(lambda: len(smtp.mails) >= 3, timeout=90, what="the mails of the run")
    wait_for(lambda: all(state == "sent" for _, state in whine_messages(db_path)), timeout=60,
             what="every whine message sent")
    # Another run of the command in the same hour queues nothing more.
    again = run_cli("--db", db_path, "whine")
    assert again.returncode == 0 and "0 mails queued" in again.stdout, again.stdout
    assert len(whine_messages(db_path)) == 3
    ids = collections.Counter(mail["Message-ID"] for _, _, mail in smtp.mails)
    assert len(ids) == 3 and set(ids.values()) == {1}, ids
    recipients = sorted(address for _, addresses, _ in smtp.mails for address in addresses)
    assert recipients == sorted((ADMIN,) + MEMBERS)
    for _, _, mail in smtp.mails:
        assert mail["Subject"] == "Hourly open bugs"
        assert "Whined about" in mail.get_content()
    for stopped in (first.stop(), second.stop()):
        assert "running the scheduled searches failed" not in stopped[2], stopped[2]
