"""The delivery worker expands the waiting events in batches: each round
takes the oldest, makes their messages and marks exactly those expanded
(one statement for the batch); the others wait for the next round."""

from datetime import datetime, timezone

import pytest

from bug_support import file_bug, set_param
from bugsvc.notify import worker
from bugsvc.notify.worker import Deliverer


T0 = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def in_the_test_folder(monkeypatch, tmp_path):
    """The Test method's file on PostgreSQL is in the working directory."""
    monkeypatch.chdir(tmp_path)


def expansion(services):
    """[(bug id, expanded)] of every event, oldest first."""
    return [(bug_id, bool(expanded)) for bug_id, expanded in services.query(
        "SELECT bug_id, expanded_at IS NOT NULL FROM outbox_events ORDER BY id")]


def test_a_round_marks_its_batch_expanded_and_leaves_the_rest_for_the_next(services,
                                                                           monkeypatch):
    services.add_user("dev@example.com")
    set_param(services, "mail_delivery_method", "Test")
    bugs = [file_bug(services, assigned_to="dev@example.com", summary=f"Bug {n}")
            for n in range(3)]
    monkeypatch.setattr(worker, "EXPAND_BATCH", 2)
    deliverer = Deliverer(services.units, clock=lambda: T0)
    assert deliverer.expand() == 2
    assert expansion(services) == [(bugs[0], True), (bugs[1], True), (bugs[2], False)]
    assert sorted(row[0] for row in services.query(
        "SELECT DISTINCT bug_id FROM outbox_messages")) == bugs[:2]
    assert deliverer.expand() == 1
    assert expansion(services) == [(bug_id, True) for bug_id in bugs]
    assert services.query("SELECT DISTINCT expanded_at FROM outbox_events") == [
        ("2026-05-01 12:00:00",)]
    assert sorted(row[0] for row in services.query(
        "SELECT DISTINCT bug_id FROM outbox_messages")) == bugs
    assert deliverer.expand() == 0


def test_expanding_holds_its_lock_without_serializable_checks(services, monkeypatch):
    """The expansion writes only what its lock row's holder writes: it runs
    as a write (SQLite: in the writers' turn) in one snapshot, without the
    serializable checks that on PostgreSQL cancelled it for reading the
    bugs and events concurrent comments were writing."""
    services.add_user("dev@example.com")
    set_param(services, "mail_delivery_method", "Test")
    file_bug(services, assigned_to="dev@example.com", summary="Watched")
    seen = []
    expand = worker.recipients.expand

    def watched(ctx, row):
        conn = ctx.conn
        if conn.dialect.name == "postgresql":
            seen.append(conn.execute("SHOW transaction_isolation").fetchone()[0])
        else:
            seen.append("writers' turn" if services.db._write_depth else "no turn")
        return expand(ctx, row)
    monkeypatch.setattr(worker.recipients, "expand", watched)
    assert Deliverer(services.units, clock=lambda: T0).expand() == 1
    wanted = "repeatable read" if services.db.dialect.name == "postgresql" else "writers' turn"
    assert seen == [wanted]
    assert services.query("SELECT COUNT(*) FROM outbox_messages")[0][0] > 0
