"""Many clients writing at once through the real server, for a bounded time:
every acknowledged write is stored exactly once, the counts add up, no
"database is locked" (or any other error) reaches a client, no two bugs share
an id, and every `changes` answer matches the bug's history.

Figures (requests tried, writes acknowledged and found, answers by status)
are recorded as test properties and printed (pytest -s shows them).
"""

import pytest

from live_server import start  # noqa: F401 (fixture)
from write_load import (ADMIN_ENV, WriteLoad, check_acknowledged, check_summary_history,
                        check_whole, history_reader, integrity, open_read_only, report,
                        writer_keys)

pytestmark = pytest.mark.slow

LOAD_SECONDS = 4
WRITERS = 12


@pytest.mark.parametrize("workers", [1, 2], ids=["one process", "two worker processes"])
def test_many_writers_at_once_lose_nothing_and_see_no_lock(start, tmp_path, workers,
                                                           record_property):
    db_path = tmp_path / "load.sqlite"
    server = start(db_path, {**ADMIN_ENV, "BUGSVC_WORKERS": str(workers)})
    keys = writer_keys(server)

    ledger = WriteLoad(server, keys, threads=WRITERS).run_for(LOAD_SECONDS)

    assert ledger.errors == [], ledger.errors[:5]      # "database is locked" would be here
    assert ledger.in_flight == [], ledger.in_flight[:5]
    assert ledger.duplicate_ids == []
    assert len(ledger.bugs) >= 20 and len(ledger.comments) >= 10 and len(ledger.updates) >= 10, \
        ledger.figures()

    with open_read_only(db_path) as conn:
        assert check_whole(conn) == []
        assert check_acknowledged(conn, ledger) == []
        stored_bugs = conn.execute("SELECT COUNT(*) FROM bugs").fetchone()[0]
        stored_comments = conn.execute("SELECT COUNT(*) FROM comments").fetchone()[0]
        ids = [row[0] for row in conn.execute("SELECT id FROM bugs")]
        summaries = {row[0]: row[1] for row in conn.execute("SELECT id, summary FROM bugs")}
    # The counts add up: nothing but the acknowledged writes was stored.
    assert stored_bugs == len(ledger.bugs) and sorted(ids) == sorted(ledger.bugs)
    assert stored_comments == len(ledger.bugs) + len(ledger.comments)
    assert check_summary_history(history_reader(server, keys[0]), ledger, ids, summaries) == []

    status, stdout, stderr = server.stop()
    assert status == 0
    assert "Traceback" not in stderr and "database is locked" not in stderr
    assert integrity(db_path) == [("ok",)]
    figures = {**ledger.figures(), "writes acknowledged": ledger.acknowledged(),
               "bugs found": stored_bugs, "comments found": stored_comments - stored_bugs,
               "workers": workers}
    report(record_property, f"concurrency ({workers} process(es))", figures)
