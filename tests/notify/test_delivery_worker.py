"""The delivery worker without servers: the Test method's mail file, leases
that keep other workers off until they run out, workers claiming at once
(PostgreSQL), retries after growing jittered delays, parking, forgetting old
messages."""

from datetime import datetime, timedelta, timezone

import pytest

from bug_support import file_bug, set_param, update_bug
from bugsvc.notify import mailer
from bugsvc.notify.worker import JITTER, KEEP, Deliverer
from bugsvc.store import outbox
from notify_support import deliver


T0 = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def in_the_test_folder(monkeypatch, tmp_path):
    """The Test method's file on PostgreSQL is in the working directory."""
    monkeypatch.chdir(tmp_path)


def people(services):
    services.add_user("dev@example.com", real_name="Dana Dev")
    return services


def test_the_test_method_appends_every_mail_to_a_file_beside_the_database(services):
    people(services)
    set_param(services, "mail_delivery_method", "Test")
    bug_id = file_bug(services, assigned_to="dev@example.com", summary="Readable")
    update_bug(services, bug_id, comment={"body": "Second mail"})
    deliver(services)
    text = mailer.test_file(services.config).read_text()
    assert text.count("\nTo: dev@example.com\n") == 2
    assert f"Subject: [Bug {bug_id}] New: Readable" in text
    assert "Second mail" in text and "show_bug.cgi?id=" in text


def test_mail_delivery_method_none_queues_no_mail(services):
    people(services)
    file_bug(services, assigned_to="dev@example.com")
    deliver(services)
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]
    assert services.query("SELECT expanded_at IS NOT NULL FROM outbox_events") == [(1,)]
    assert not mailer.test_file(services.config).exists()


def test_a_lease_keeps_other_workers_off_until_it_runs_out(services):
    with services.db.transaction(write=True) as conn:
        message_id = outbox.add_message(conn, outbox.MAIL, "bug", T0, user_id=1)
        taken = outbox.lease_mail(conn, "A", T0, T0 + timedelta(seconds=120), 10)
        assert [row["id"] for row in taken] == [message_id]
        assert outbox.lease_mail(conn, "B", T0 + timedelta(seconds=60),
                                 T0 + timedelta(seconds=180), 10) == []
        later = T0 + timedelta(seconds=121)
        again = outbox.lease_mail(conn, "B", later, later + timedelta(seconds=120), 10)
        assert [row["id"] for row in again] == [message_id]
        # A lost its lease: what it reports changes nothing.
        assert outbox.finish(conn, message_id, "A", outbox.SENT, later) is False
        assert outbox.finish(conn, message_id, "B", outbox.SENT, later) is True
        assert conn.execute("SELECT state, lease_owner FROM outbox_messages").fetchone()[:] == (
            "sent", None)


def test_failed_mail_is_retried_after_growing_jittered_delays_then_parked(services):
    people(services)
    set_param(services, "mail_delivery_method", "SMTP")
    set_param(services, "smtpserver", "127.0.0.1:9")          # nobody listens
    now = [T0]
    deliverer = Deliverer(services.units, clock=lambda: now[0])
    deliverer.mail_delays = (60, 600, 6000)
    file_bug(services, assigned_to="dev@example.com", now=T0)
    waits = []
    for attempt in range(1, 5):
        deliverer.run_until_idle()
        state, attempts, due, error = services.query(
            "SELECT state, attempts, next_attempt_at, last_error FROM outbox_messages"
            " WHERE user_id = 2")[0]
        assert attempts == attempt and "cannot reach 127.0.0.1:9" in error
        if attempt == 4:
            assert state == "parked"
            break
        assert state == "pending"
        due = datetime.strptime(due, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
        waits.append((due - now[0]).total_seconds())
        now[0] = due
    for wait, base in zip(waits, (60, 600, 6000), strict=True):
        assert base * (1 - JITTER) <= wait <= base * (1 + JITTER)
    assert waits[0] < waits[1] < waits[2]


def test_the_delays_are_jittered(services):
    deliverer = Deliverer(services.units)
    drawn = {round(deliverer.delay(1, (100,)), 3) for _ in range(20)}
    assert len(drawn) > 1 and all(75 <= value <= 125 for value in drawn)
    assert deliverer.delay(1, (5,), retry_after=30) == 30


def test_each_event_is_expanded_once(services):
    people(services)
    set_param(services, "mail_delivery_method", "Test")
    file_bug(services, assigned_to="dev@example.com")
    first = Deliverer(services.units)
    second = Deliverer(services.units)
    assert first.expand() == 1 and second.expand() == 0
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(2,)]


def test_old_sent_messages_and_their_events_are_forgotten(services):
    people(services)
    set_param(services, "mail_delivery_method", "Test")
    file_bug(services, assigned_to="dev@example.com", now=T0)
    deliver(services, clock=lambda: T0)
    assert services.query("SELECT COUNT(*) FROM outbox_messages WHERE state = 'sent'") == [(1,)]
    later = T0 + KEEP + timedelta(hours=1)
    deliver(services, clock=lambda: later)
    assert services.query("SELECT COUNT(*) FROM outbox_messages") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM outbox_events") == [(0,)]


def no_waiting(conn):
    """Make `conn`'s transaction fail at once instead of waiting for a row
    another transaction holds."""
    conn.execute("SET LOCAL lock_timeout = '200ms'")


@pytest.mark.engine("postgresql")
def test_workers_claiming_at_once_take_other_messages_without_waiting(services):
    """Two workers in the middle of claiming at once (PostgreSQL runs them
    side by side; SQLite one after the other): the second passes over the
    rows the first holds, and no message is taken twice."""
    with services.db.transaction(write=True) as conn:
        ids = [outbox.add_message(conn, outbox.MAIL, "bug", T0, user_id=1) for _ in range(5)]
    until = T0 + timedelta(seconds=120)
    with services.db.transaction(queue=True) as first:
        taken_first = outbox.lease_mail(first, "A", T0, until, 2)
        with services.db.transaction(queue=True) as second:
            no_waiting(second)
            taken_second = outbox.lease_mail(second, "B", T0, until, 10)
            assert outbox.hold_expansion(second, "B") is True
            with services.db.transaction(queue=True) as third:
                no_waiting(third)
                assert outbox.hold_expansion(third, "C") is False
    assert [row["id"] for row in taken_first] == ids[:2]
    assert [row["id"] for row in taken_second] == ids[2:]
    assert services.query("SELECT lease_owner, COUNT(*) FROM outbox_messages"
                          " GROUP BY lease_owner ORDER BY lease_owner") == [("A", 2), ("B", 3)]


@pytest.mark.engine("postgresql")
def test_workers_claiming_at_once_never_call_one_webhook_twice_at_a_time(services):
    with services.db.transaction(write=True) as conn:
        webhook_id = conn.execute(
            "INSERT INTO webhooks (user_id, name, url, events, product_id, component_id,"
            " enabled, disabled_reason, secret, created_at, last_error) VALUES (1, 'hook',"
            " 'http://127.0.0.1:9/', 'create', NULL, NULL, 1, '', 's', ?, '') RETURNING id",
            ("2026-05-01 12:00:00",)).fetchone()[0]
        calls = [outbox.add_message(conn, outbox.WEBHOOK, "webhook", T0, bug_id=bug_id,
                                    webhook_id=webhook_id) for bug_id in (1, 2)]
    until = T0 + timedelta(seconds=120)
    with services.db.transaction(queue=True) as first:
        taken_first = outbox.lease_webhook(first, "A", T0, until, 1)
        with services.db.transaction(queue=True) as second:
            no_waiting(second)
            assert outbox.lease_webhook(second, "B", T0, until, 1) == []
    assert [row["id"] for row in taken_first] == calls[:1]
    # Once the first call's lease is committed, the second worker still
    # waits for it: one call in flight per webhook.
    with services.db.transaction(queue=True) as second:
        assert outbox.lease_webhook(second, "B", T0, until, 1) == []


def test_each_round_moves_the_sqlite_log_into_the_database_file(services, tmp_path):
    """Commits leave their pages in SQLite's write-ahead log; the worker's
    round copies them into the database file (a copy of that file alone
    then holds them), so no call's commit has to while other writers wait."""
    if not services.db.is_file:
        pytest.skip("the database is no file of this host")
    import shutil
    import sqlite3

    def stored_in_the_file_alone(summary):
        copy = tmp_path / "alone.sqlite"
        copy.unlink(missing_ok=True)
        shutil.copyfile(services.db.path, copy)
        conn = sqlite3.connect(copy)
        try:
            return conn.execute("SELECT COUNT(*) FROM bugs WHERE summary = ?",
                                (summary,)).fetchone()[0] == 1
        finally:
            conn.close()
    file_bug(services, summary="Checkpointed by the worker")
    assert not stored_in_the_file_alone("Checkpointed by the worker")
    Deliverer(services.units).run_once()
    assert stored_in_the_file_alone("Checkpointed by the worker")
