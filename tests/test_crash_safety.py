"""Crash safety: the server is killed (SIGKILL, no cleanup) in the middle of
a write load, twice, and started again on the same file. Every write
acknowledged before a kill is there; the writes in flight are there whole or
not at all (no bug without its description, comment 0; no comment without its
bug's change time; no summary change without its history, nor history
without the change); `PRAGMA integrity_check` is ok.

Figures are recorded as test properties and printed (pytest -s shows them).
"""

import pytest

from live_server import start  # noqa: F401 (fixture)
from write_load import (ADMIN_ENV, Ledger, WriteLoad, check_acknowledged, check_summary_history,
                        check_whole, history_reader, integrity, open_read_only, report,
                        wait_for_writes, writer_keys)

pytestmark = pytest.mark.slow

KILLS = 2
WRITES_BEFORE_KILL = 60


def test_sigkill_during_writes_loses_no_acknowledged_write(start, tmp_path, record_property):
    db_path = tmp_path / "crash.sqlite"
    server = start(db_path, ADMIN_ENV)
    keys = writer_keys(server)
    ledger = Ledger()
    kills = []
    for cycle in range(KILLS):
        load = WriteLoad(server, keys, threads=8, seed=100 * (cycle + 1), ledger=ledger).start()
        wait_for_writes(ledger, ledger.acknowledged() + WRITES_BEFORE_KILL)
        acknowledged_at_kill = ledger.acknowledged()
        kills.append(server.kill())
        load.stop()
        assert ledger.acknowledged() >= acknowledged_at_kill
        with open_read_only(db_path) as conn:     # before any recovery by a new server
            assert check_acknowledged(conn, ledger) == []
        server = start(db_path, name=f"restart{cycle}")

    assert kills == [-9] * KILLS
    assert ledger.errors == [], ledger.errors[:5]
    assert ledger.duplicate_ids == []
    assert integrity(db_path) == [("ok",)]
    with open_read_only(db_path) as conn:
        assert check_whole(conn) == []
        assert check_acknowledged(conn, ledger) == []
        summaries = {row[0]: row[1] for row in conn.execute("SELECT id, summary FROM bugs")}
        descriptions = {row[0]: row[1] for row in conn.execute(
            "SELECT bug_id, body FROM comments WHERE count = 0")}
    # A bug created in flight is there whole, with the description sent with it.
    for kind, tag, _ in ledger.in_flight:
        if kind == "bug":
            for bug_id, summary in summaries.items():
                if summary.startswith(f"load {tag}"):
                    assert descriptions[bug_id] == f"description {tag}"
    assert check_summary_history(history_reader(server, keys[0]), ledger, list(summaries),
                                 summaries) == []
    # The restarted server takes writes again.
    status, body, _ = server.call("POST", "/rest/bug", {"Bugzilla_api_key": keys[0]},
                                  {"product": "TestProduct", "component": "TestComponent",
                                   "version": "unspecified", "op_sys": "All", "platform": "All",
                                   "summary": "after the crashes"})
    assert status == 201, body

    exit_status, _, stderr = server.stop()
    assert exit_status == 0 and "Traceback" not in stderr
    landed = sum(1 for kind, tag, _ in ledger.in_flight if kind == "bug"
                 and any(s.startswith(f"load {tag}") for s in summaries.values()))
    report(record_property, "crash safety", {
        **ledger.figures(), "kills": KILLS, "writes acknowledged": ledger.acknowledged(),
        "acknowledged writes found": ledger.acknowledged(), "bugs stored": len(summaries),
        "in-flight bug creations that landed whole": landed})
