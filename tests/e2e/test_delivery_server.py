"""Delivery by real server processes, to a real SMTP server and a real HTTP
receiver on loopback: changes committed by a server that is then killed
(SIGKILL) are delivered after a restart, each message exactly once; several
server processes and a `bugsvc deliver` process working on one database
send each message exactly once; on either engine."""

import collections
import os
import signal
import subprocess
import sys

import pytest

from live_server import ROOT, run_cli
from notify_support import Receiver, SmtpSink, wait_for
from write_load import ADMIN, ADMIN_ENV, ADMIN_PASSWORD, open_read_only


pytestmark = pytest.mark.slow


@pytest.fixture
def sinks():
    smtp, receiver = SmtpSink(), Receiver()
    yield smtp, receiver
    smtp.stop()
    receiver.stop()


def admin_key(server):
    status, body, _ = server.call("POST", "/rest/api_key", {"Bugzilla_login": ADMIN,
                                                            "Bugzilla_password": ADMIN_PASSWORD},
                                  {"description": "delivery test"})
    assert status == 201, body
    return body["api_key"]


def set_up(server, key, smtp, receiver):
    """Mail to `smtp`, a webhook to `receiver`, two people on the CC list."""
    status, body, _ = server.call("PUT", "/rest/parameters", {"Bugzilla_api_key": key}, {
        "mail_delivery_method": "SMTP", "smtpserver": f"127.0.0.1:{smtp.port}",
        "webhooks_enabled": "1", "webhooks_allow_private_addresses": "1"})
    assert status == 200, body
    for login in ("dev@example.com", "qa@example.com"):
        status, body, _ = server.call("POST", "/rest/user", {"Bugzilla_api_key": key},
                                      {"email": login})
        assert status == 201, body
    status, body, _ = server.call("POST", "/rest/webhooks", {"Bugzilla_api_key": key}, {
        "name": "all", "url": receiver.url, "events": ["create", "change", "comment"],
        "product": "TestProduct"})
    assert status == 201, body


def changes(server, key, count, tag):
    """File `count` bugs (CC dev and qa) and comment on each: 4 mails and 2
    webhook calls per bug. Returns the bug ids."""
    bug_ids = []
    for n in range(count):
        status, body, _ = server.call("POST", "/rest/bug", {"Bugzilla_api_key": key}, {
            "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
            "summary": f"{tag} {n}", "op_sys": "Linux", "platform": "PC",
            "cc": ["dev@example.com", "qa@example.com"]})
        assert status == 201, body
        bug_ids.append(body["id"])
        status, body, _ = server.call("POST", f"/rest/bug/{body['id']}/comment",
                                      {"Bugzilla_api_key": key}, {"comment": f"note {n}"})
        assert status == 201, body
    return bug_ids


def outbox_states(db_path):
    """{state: messages} as the database holds them now."""
    with open_read_only(db_path) as conn:
        return {row[0]: row[1] for row in conn.execute(
            "SELECT state, COUNT(*) FROM outbox_messages GROUP BY state")}


def delivered_once(smtp, receiver, mails, calls):
    """Every mail and call arrived exactly once (by Message-ID and webhook-id)."""
    mail_ids = collections.Counter(mail["Message-ID"] for _, _, mail in smtp.mails)
    call_ids = collections.Counter(call["headers"]["webhook-id"] for call in receiver.calls)
    assert len(mail_ids) == mails and set(mail_ids.values()) == {1}, mail_ids
    assert len(call_ids) == calls and set(call_ids.values()) == {1}, call_ids


def test_sigkill_between_commit_and_delivery_loses_and_repeats_nothing(start, new_db, sinks):
    smtp, receiver = sinks
    db_path = new_db("kill")
    server = start(db_path, dict(ADMIN_ENV, BUGSVC_DELIVER="no"))
    key = admin_key(server)
    set_up(server, key, smtp, receiver)
    bug_ids = changes(server, key, 5, "before the kill")
    assert server.kill() == -9
    assert smtp.mails == [] and receiver.calls == []          # committed, not delivered

    server = start(db_path, name="restart")
    wait_for(lambda: len(smtp.mails) >= 20 and len(receiver.calls) >= 10, timeout=60,
             what="the mail and calls of the changes made before the kill")
    wait_for(lambda: outbox_states(db_path).get("pending", 0) == 0, timeout=60,
             what="an empty queue")
    delivered_once(smtp, receiver, mails=20, calls=10)
    assert outbox_states(db_path).get("parked", 0) == 0
    # Per bug, the receiver got the creation before the comment.
    for bug_id in bug_ids:
        keys = [call["json"]["event"]["routing_key"] for call in receiver.calls
                if call["json"]["bug"]["id"] == bug_id]
        assert keys == ["bug.create", "comment.create"]
    server.stop()


def test_several_processes_deliver_each_message_once(start, new_db, tmp_path, sinks):
    smtp, receiver = sinks
    db_path = new_db("many")
    server = start(db_path, dict(ADMIN_ENV, BUGSVC_WORKERS="2", BUGSVC_DELIVER="yes",
                                 BUGSVC_PIN_CORES="no"))
    key = admin_key(server)
    set_up(server, key, smtp, receiver)
    # A second server on the same database (as on another host), delivering too.
    second = start(db_path, dict(BUGSVC_DELIVER="yes"), name="second")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUGSVC_")}
    printed = tmp_path / "deliver.out"
    with open(printed, "wb") as out:
        apart = subprocess.Popen([sys.executable, str(ROOT / "bugsvc.py"), "--db",
                                  str(db_path), "deliver"], cwd=tmp_path, env=env, stdout=out,
                                 stderr=subprocess.PIPE)
    try:
        wait_for(lambda: "delivering" in printed.read_text(), timeout=60,
                 what="the deliver process to start")
        changes(server, key, 10, "busy")
        changes(second, key, 5, "busy elsewhere")
        wait_for(lambda: len(smtp.mails) >= 60 and len(receiver.calls) >= 30, timeout=90,
                 what="every mail and call")
        wait_for(lambda: outbox_states(db_path).get("pending", 0) == 0, timeout=60,
                 what="an empty queue")
        delivered_once(smtp, receiver, mails=60, calls=30)
    finally:
        apart.send_signal(signal.SIGTERM)
        _, err = apart.communicate(timeout=30)
    assert apart.returncode == 0, err.decode()
    assert outbox_states(db_path).get("parked", 0) == 0
    # No worker met another one's claim as an error (PostgreSQL: claims never
    # fail as serialization failures, they pass over rows taken meanwhile).
    for stopped in (server.stop(), second.stop()):
        assert "delivery round failed" not in stopped[2], stopped[2]
    assert b"delivery round failed" not in err, err.decode()


def test_deliver_once_sends_what_is_due_and_exits(start, new_db, sinks):
    smtp, receiver = sinks
    db_path = new_db("once")
    server = start(db_path, dict(ADMIN_ENV, BUGSVC_DELIVER="no"))
    key = admin_key(server)
    set_up(server, key, smtp, receiver)
    changes(server, key, 2, "once")
    done = run_cli("--db", db_path, "deliver", "--once")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Delivered what was due")
    delivered_once(smtp, receiver, mails=8, calls=4)
    server.stop()
