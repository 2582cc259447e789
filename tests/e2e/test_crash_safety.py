"""Crash safety: a server is killed (SIGKILL, no cleanup) in the middle of
a write load, twice, and started again on the same database (alone, or
beside a second server that keeps serving). Every write
acknowledged before a kill is there; the writes in flight are there whole or
not at all (no bug without its description, comment 0; no comment without its
bug's change time; no summary change without its history, nor history
without the change); the engine's integrity check is ok.

Figures are recorded as test properties and printed (pytest -s shows them).
"""

import pytest

from write_load import (
    ADMIN_ENV,
    Ledger,
    WriteLoad,
    check_acknowledged,
    check_summary_history,
    check_whole,
    history_reader,
    integrity,
    open_read_only,
    report,
    wait_for_writes,
    writer_keys,
)


pytestmark = pytest.mark.slow

KILLS = 2
WRITES_BEFORE_KILL = 60


@pytest.mark.parametrize("layout", ["one server", "two servers"])
def test_sigkill_during_writes_loses_no_acknowledged_write(start, new_db, layout, backend,
                                                           record_property):
    """One server killed and started again, twice; with two servers sharing
    the database (as on two hosts), the other one serves on meanwhile."""
    db_path = new_db("crash")
    servers = [start(db_path, ADMIN_ENV)]
    if layout == "two servers":
        servers.append(start(db_path, name="steady"))
    keys = writer_keys(servers[0])
    ledger = Ledger()
    kills = []
    for cycle in range(KILLS):
        load = WriteLoad(servers, keys, threads=8, seed=100 * (cycle + 1), ledger=ledger).start()
        wait_for_writes(ledger, ledger.acknowledged() + WRITES_BEFORE_KILL)
        acknowledged_at_kill = ledger.acknowledged()
        kills.append(servers[0].kill())
        if len(servers) > 1:
            # The other server goes on taking writes while one is dead.
            wait_for_writes(ledger, ledger.acknowledged() + WRITES_BEFORE_KILL // 2)
        load.stop()
        assert ledger.acknowledged() >= acknowledged_at_kill
        with open_read_only(db_path) as conn:     # before any recovery by a new server
            assert check_acknowledged(conn, ledger) == []
        servers[0] = start(db_path, name=f"restart{cycle}")
    server = servers[0]

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

    for running in servers:
        exit_status, _, stderr = running.stop()
        assert exit_status == 0 and "Traceback" not in stderr
    landed = sum(1 for kind, tag, _ in ledger.in_flight if kind == "bug"
                 and any(s.startswith(f"load {tag}") for s in summaries.values()))
    report(record_property, f"crash safety ({layout}, {backend})", {
        **ledger.figures(), "kills": KILLS, "writes acknowledged": ledger.acknowledged(),
        "acknowledged writes found": ledger.acknowledged(), "bugs stored": len(summaries),
        "in-flight bug creations that landed whole": landed})
