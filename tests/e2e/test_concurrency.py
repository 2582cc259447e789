"""Many clients writing at once through real servers, a fixed number of
writes each (so what is checked does not depend on the machine's speed):
every write is answered and stored exactly once, the counts add up, no
"database is locked" (or any other error) reaches a client, no two bugs share
an id, and every `changes` answer matches the bug's history.

Figures (requests tried, writes acknowledged and found, answers by status)
are recorded as test properties and printed (pytest -s shows them).
"""

import itertools
from collections import Counter

import pytest

from write_load import (
    ADMIN_ENV,
    WriteLoad,
    check_acknowledged,
    check_summary_history,
    check_whole,
    history_reader,
    integrity,
    kinds_of_writes,
    open_read_only,
    report,
    writer_keys,
)


pytestmark = pytest.mark.slow

WRITERS = 12
WRITES_EACH = 8         # 96 writes: 46 new bugs, 30 comments, 20 summary changes
SEED = 7


LAYOUTS = {"one process": 1, "two worker processes": 2, "two servers": None}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_many_writers_at_once_lose_nothing_and_see_no_lock(start, new_db, layout, backend,
                                                           record_property):
    """On each engine: one server process, one server with two worker
    processes, and two servers of their own (as on two hosts behind one
    address) sharing the database, the writers spread over both."""
    db_path = new_db("load")
    workers = LAYOUTS[layout]
    if workers is None:
        servers = [start(db_path, ADMIN_ENV), start(db_path, name="second")]
    else:
        servers = [start(db_path, {**ADMIN_ENV, "BUGSVC_WORKERS": str(workers)})]
    keys = writer_keys(servers[0])

    ledger = WriteLoad(servers, keys, threads=WRITERS, seed=SEED).run(WRITES_EACH)

    if ledger.errors:       # "database is locked" would be here; the servers' logs say why
        logs = [line for server in servers for line in server.stop()[2].splitlines()
                if " bugsvc.access " not in line]
        pytest.fail(f"errors: {ledger.errors[:5]}\nservers' logs:\n" + "\n".join(logs[-80:]))
    assert ledger.in_flight == [], ledger.in_flight[:5]
    assert ledger.duplicate_ids == []
    sent = Counter(kind for writer in range(WRITERS)
                   for kind in itertools.islice(kinds_of_writes(SEED + writer), WRITES_EACH))
    assert (len(ledger.bugs), len(ledger.comments), len(ledger.updates)) == (
        sent["bug"], sent["comment"], sent["update"]), ledger.figures()
    assert ledger.tried == WRITERS * WRITES_EACH

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
    assert check_summary_history(history_reader(servers[-1], keys[0]), ledger, ids,
                                 summaries) == []

    for server in servers:
        status, stdout, stderr = server.stop()
        assert status == 0
        assert "Traceback" not in stderr and "database is locked" not in stderr
    assert integrity(db_path) == [("ok",)]
    figures = {**ledger.figures(), "writes acknowledged": ledger.acknowledged(),
               "bugs found": stored_bugs, "comments found": stored_comments - stored_bugs,
               "layout": layout, "engine": backend}
    report(record_property, f"concurrency ({layout}, {backend})", figures)
