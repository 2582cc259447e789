"""Backups: `python bugsvc.py backup PATH` copies the database with SQLite's
backup API while the server runs; the copy is consistent (one moment of the
database), self-contained and checked; restoring it is starting the server on
the copied file (README, Backups)."""

import shutil
import sqlite3
from contextlib import closing

import pytest

import bug_rows
from bugsvc.store.backup import BackupError, backup
from live_server import run_cli
from write_load import (
    ADMIN_ENV,
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


# SQLite's backup API and its files; PostgreSQL's backups are pg_dump's
# (tests/store/test_postgresql.py).
pytestmark = pytest.mark.engine("sqlite")


def rows(path, sql):
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql).fetchall()


def test_backup_copies_every_row_into_one_checked_self_contained_file(services, db_path,
                                                                      tmp_path):
    services.add_user("someone@example.com")
    bug_id = bug_rows.add_bug(services, summary="kept in the backup", description="first words")
    target = tmp_path / "copy.sqlite"

    result = backup(db_path, target)

    assert result.path == target and result.bugs == 1 and result.schema_version >= 1
    assert result.size == target.stat().st_size
    assert rows(target, "PRAGMA integrity_check") == [("ok",)]
    assert rows(target, "PRAGMA journal_mode") == [("delete",)]     # no -wal needed beside it
    with open(target, "rb") as copy:
        assert copy.read(16) == b"SQLite format 3\x00"
    for table in ("users", "bugs", "comments", "params", "groups", "products"):
        assert rows(target, f"SELECT * FROM {table} ORDER BY 1") == \
            rows(db_path, f"SELECT * FROM {table} ORDER BY 1"), table
    assert rows(target, f"SELECT body FROM comments WHERE bug_id = {bug_id}") == [("first words",)]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_backup_replaces_an_older_backup(services, db_path, tmp_path):
    target = tmp_path / "copy.sqlite"
    backup(db_path, target)
    bug_rows.add_bug(services, summary="newer")
    assert backup(db_path, target).bugs == 1
    assert rows(target, "SELECT summary FROM bugs") == [("newer",)]


@pytest.mark.parametrize("case", ["missing database", "target is the database",
                                  "target is its wal file", "target is a directory",
                                  "missing directory", "not a bugsvc database",
                                  "not a database"])
def test_backup_refuses_and_leaves_the_target_alone(db_path, tmp_path, case):
    source, target = db_path, tmp_path / "copy.sqlite"
    target.write_bytes(b"an older backup")
    if case == "missing database":
        source = tmp_path / "nothing.sqlite"
    elif case == "target is the database":
        target = db_path
    elif case == "target is its wal file":
        target = db_path.parent / (db_path.name + "-wal")
    elif case == "target is a directory":
        target = tmp_path
    elif case == "missing directory":
        target = tmp_path / "no" / "such" / "copy.sqlite"
    elif case == "not a bugsvc database":
        source = tmp_path / "other.sqlite"
        with closing(sqlite3.connect(source)) as conn:
            conn.execute("CREATE TABLE t (x)")
    elif case == "not a database":
        source = tmp_path / "text.sqlite"
        source.write_text("hello, this is not a database" * 100)
    # The database (in a folder of its own) and everything in tmp_path.
    folders = (tmp_path, db_path.parent)
    before = {p: p.read_bytes() for folder in folders for p in folder.iterdir() if p.is_file()}

    with pytest.raises(BackupError):
        backup(source, target)

    after = {p: p.read_bytes() for folder in folders for p in folder.iterdir() if p.is_file()}
    assert after == before
    assert not (tmp_path / "nothing.sqlite").exists()
    assert rows(db_path, "PRAGMA integrity_check") == [("ok",)]


def test_backup_command_prints_what_it_copied(db_path, tmp_path):
    done = run_cli("--db", db_path, "backup", tmp_path / "nightly.sqlite")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Backed up {db_path} to {tmp_path / 'nightly.sqlite'}: ")
    assert "schema version" in done.stdout and "0 bugs" in done.stdout
    assert rows(tmp_path / "nightly.sqlite", "PRAGMA integrity_check") == [("ok",)]


def test_backup_command_without_a_database_fails_and_creates_nothing(tmp_path):
    done = run_cli("--db", tmp_path / "absent.sqlite", "backup", tmp_path / "copy.sqlite")
    assert done.returncode == 2
    assert done.stderr.startswith("bugsvc: there is no database at")
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_backup_under_write_load_restores_to_a_consistent_database(start, tmp_path,
                                                                   record_property):
    db_path = tmp_path / "live.sqlite"
    server = start(db_path, ADMIN_ENV)
    keys = writer_keys(server)
    load = WriteLoad(server, keys, threads=8).start()
    wait_for_writes(load.ledger, 40)
    with load.ledger.lock:
        acknowledged_before = {"bugs": dict(load.ledger.bugs),
                               "comments": dict(load.ledger.comments)}
        count_before = load.ledger.acknowledged_unlocked()
    backup_file = tmp_path / "backup.sqlite"
    done = run_cli("--db", db_path, "backup", backup_file)     # while the writers write
    count_after = load.ledger.acknowledged()
    ledger = load.stop()
    assert done.returncode == 0, done.stderr
    assert ledger.errors == [], ledger.errors[:5]
    server.stop()

    # Restore as the README says: the backup file becomes the database.
    restored = tmp_path / "restored" / "bugsvc.sqlite"
    restored.parent.mkdir()
    shutil.copyfile(backup_file, restored)
    assert integrity(restored) == [("ok",)]
    with open_read_only(restored) as conn:
        assert check_whole(conn) == []
        summaries = {row[0]: row[1] for row in conn.execute("SELECT id, summary FROM bugs")}
        comments = {row[0] for row in conn.execute("SELECT id FROM comments")}
    assert set(acknowledged_before["bugs"]) <= set(summaries)
    assert set(acknowledged_before["comments"]) <= comments
    # Whatever it holds of the rest is whole: the copy is one moment of the database.
    assert set(summaries) <= set(ledger.bugs)
    moment = type(ledger)()
    moment.bugs = {i: s for i, s in ledger.bugs.items() if i in summaries}
    moment.comments = {i: c for i, c in ledger.comments.items() if i in comments}
    moment.updates = [u for u in ledger.updates if u[0] in summaries]
    with open_read_only(restored) as conn:
        assert check_acknowledged(conn, moment, exact=False) == []

    again = start(restored, name="restored")
    status, body, _ = again.call("GET", "/rest/bug", {"Bugzilla_api_key": keys[0],
                                                      "id": ",".join(map(str, summaries))})
    assert status == 200 and {bug["id"] for bug in body["bugs"]} == set(summaries)
    reader = history_reader(again, keys[0])
    history_problems = check_summary_history(reader, _as_of_the_backup(ledger, summaries),
                                             list(summaries), summaries)
    assert history_problems == []
    status, body, _ = again.call("POST", "/rest/bug/%d/comment" % min(summaries),
                                 {"Bugzilla_api_key": keys[0]}, {"comment": "after restore"})
    assert status == 201, body
    report(record_property, "backup under load", {
        **ledger.figures(), "writes acknowledged before the backup": count_before,
        "writes acknowledged while it ran": count_after - count_before,
        "bugs in the backup": len(summaries), "comments in the backup": len(comments)})


def _as_of_the_backup(ledger, summaries):
    """The ledger cut to the moment of the backup: an update the copy does
    not hold counts as in flight (it may or may not be in the history)."""
    cut = type(ledger)()
    cut.bugs = {i: s for i, s in ledger.bugs.items() if i in summaries}
    cut.updates = [u for u in ledger.updates if u[0] in summaries]
    cut.in_flight = [("update", u[1][len("load "):-len(" renamed")], u[0]) for u in cut.updates]
    cut.updates = []
    return cut
