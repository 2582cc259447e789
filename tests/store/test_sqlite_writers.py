"""SQLite: the write transactions of a process run on one connection of its
own, passed from writer to writer with their turn (so its page cache lasts
from one write to the next); reads run on each thread's own connection."""

import threading

import pytest

from bugsvc.store import sqlite as sqlite_store
from bugsvc.store.location import open_database


pytestmark = pytest.mark.engine("sqlite")


@pytest.fixture
def database(tmp_path):
    database = open_database(tmp_path / "writers.sqlite")
    database.initialize()
    yield database
    database.close()


def in_thread(work):
    """work() on a new thread; returns what it returned (or raises what it raised)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as exc:     # noqa: BLE001 - handed to the test's thread
            outcome["error"] = exc
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def write_maintainer(database, value):
    with database.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', ?)"
                      " ON CONFLICT (name) DO UPDATE SET value = excluded.value", (value,))
        return conn


def maintainer(database):
    with database.transaction() as conn:
        return conn.execute("SELECT value FROM params WHERE name = 'maintainer'").fetchone()[0]


def test_writes_of_every_thread_share_one_connection_and_reads_keep_their_own(database):
    first = write_maintainer(database, "a@example.com")
    second = in_thread(lambda: write_maintainer(database, "b@example.com"))
    assert first is second
    with database.transaction(queue=True) as conn:
        assert conn is first
    with database.transaction() as reader:
        assert reader is not first
        assert reader is database.connection()
    assert in_thread(lambda: database.connection()) is not database.connection()
    assert maintainer(database) == in_thread(lambda: maintainer(database)) == "b@example.com"


def test_in_transaction_holds_for_the_writing_thread_alone(database):
    seen = {}
    with database.transaction(write=True):
        seen["writer"] = database.in_transaction()
        seen["other"] = in_thread(database.in_transaction)
    assert seen == {"writer": True, "other": False}
    assert database.in_transaction() is False


def test_a_rolled_back_write_leaves_nothing_and_the_next_write_goes_on(database):
    write_maintainer(database, "kept@example.com")
    with pytest.raises(RuntimeError):
        with database.transaction(write=True) as conn:
            conn.execute("UPDATE params SET value = 'lost@example.com' WHERE name = 'maintainer'")
            raise RuntimeError("the call failed")
    assert maintainer(database) == "kept@example.com"
    assert in_thread(lambda: maintainer(database)) == "kept@example.com"
    write_maintainer(database, "next@example.com")
    assert maintainer(database) == "next@example.com"


def test_a_separate_read_inside_a_write_sees_only_what_is_stored(database):
    write_maintainer(database, "stored@example.com")
    with database.transaction(write=True) as outer:
        outer.execute("UPDATE params SET value = 'outer@example.com' WHERE name = 'maintainer'")
        with database.separate_transaction() as inner:
            assert inner is not outer
            # The open write is not committed: a separate read sees the stored value.
            assert inner.execute("SELECT value FROM params WHERE name = 'maintainer'"
                                 ).fetchone()[0] == "stored@example.com"
    assert maintainer(database) == "outer@example.com"


def test_a_forked_process_opens_its_own_writers_connection(database, monkeypatch):
    parents = write_maintainer(database, "parent@example.com")
    monkeypatch.setattr(sqlite_store.os, "getpid", lambda: -1)
    childs = write_maintainer(database, "child@example.com")
    assert childs is not parents
    # The parent's connection is left to the parent: still open.
    assert parents.execute("SELECT value FROM params WHERE name = 'maintainer'"
                           ).fetchone()[0] == "child@example.com"
    database.close()
    with pytest.raises(Exception, match="closed"):
        childs.execute("SELECT 1")
    parents.close()


def test_close_closes_the_writers_connection(database):
    conn = write_maintainer(database, "x@example.com")
    database.close()
    with pytest.raises(Exception, match="closed"):
        conn.execute("SELECT 1")
    # The database opens a new one for its next write.
    write_maintainer(database, "y@example.com")
    assert maintainer(database) == "y@example.com"


class RecordedTurn:
    """A writers' turn that notes what it was given back with."""

    def __init__(self, seen):
        self.seen = seen

    def __enter__(self):
        self.seen.append("taken")

    def __exit__(self, kind, exc, tb):
        self.seen.append(("given back", kind))


def test_a_failed_commit_gives_the_writers_turn_back(database, monkeypatch):
    write_maintainer(database, "kept@example.com")
    seen = []
    monkeypatch.setattr(database, "_writer_turn", lambda mode: RecordedTurn(seen))

    def commit_fails(conn):
        conn.execute("ROLLBACK")        # as SQLite does when it cannot write the log
        raise sqlite_store.sqlite3.OperationalError("disk I/O error")
    monkeypatch.setattr(database, "_commit", commit_fails)
    with pytest.raises(sqlite_store.sqlite3.OperationalError, match="disk I/O"):
        write_maintainer(database, "lost@example.com")
    assert seen == ["taken", ("given back", sqlite_store.sqlite3.OperationalError)]
    assert database.in_transaction() is False
    monkeypatch.undo()
    write_maintainer(database, "next@example.com")
    assert maintainer(database) == "next@example.com"


def test_a_failed_call_is_rolled_back_and_gives_the_turn_back_with_its_error(database,
                                                                             monkeypatch):
    seen = []
    monkeypatch.setattr(database, "_writer_turn", lambda mode: RecordedTurn(seen))
    with pytest.raises(KeyError):
        with database.transaction(write=True) as conn:
            conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'lost')")
            raise KeyError("the call failed")
    assert seen == ["taken", ("given back", KeyError)]
    assert database.in_transaction() is False
    monkeypatch.undo()
    with database.transaction() as conn:
        assert conn.execute("SELECT COUNT(*) FROM params WHERE name = 'maintainer'"
                            ).fetchone()[0] == 0
