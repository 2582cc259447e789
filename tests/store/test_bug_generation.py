"""The bug generation (store/cache.py, schema.sql's bug generation and bug
writes): it moves with each committed change to what bug objects and
searches read, and with nothing else, on both engines. PostgreSQL counts
the committed transactions that made such changes (each noted once in
bug_writes), so an API key's use, a login or mail sent leaves the answers
kept at it standing, and the delivery worker's fold keeps the count."""

import re
import threading

import pytest

from bug_rows import ADMIN, add_bug
from bugsvc.services import bug as bug_service, comment
from bugsvc.store import cache, schema
from bugsvc.store.location import open_database
from migration_support import migrated_from


def bug_generation(db):
    """The bug generation the database stands at now."""
    return cache.generations_now(db)[2]


def write(db, *statements):
    """Run `statements` in one committed write transaction."""
    with db.transaction(write=True) as conn:
        for sql in statements:
            conn.execute(sql)


def tag(name):
    """A statement adding a personal tag (of the first account) named `name`:
    a table only the bug generation watches (a bug's tags)."""
    return ("INSERT INTO personal_tags (user_id, name)"
            f" SELECT min(id), '{name}' FROM users")


def test_a_committed_bug_write_moves_the_generation(db):
    before = bug_generation(db)
    write(db, tag("moving"))
    after = bug_generation(db)
    assert after != before
    assert bug_generation(db) == after


def test_writes_that_change_nothing_bugs_read_move_nothing(db):
    """A write to a table no bug object or search reads (here the table of
    replica positions; an API key's use and a login are such writes too)
    commits without moving the generation; neither does a bug write rolled
    back, nor a round's checkpoint."""
    before = bug_generation(db)
    write(db, "INSERT INTO replica_waits (user_id, lsn) VALUES (987654, 1)")
    write(db, "UPDATE replica_waits SET lsn = 2 WHERE user_id = 987654")
    assert bug_generation(db) == before
    with pytest.raises(RuntimeError):
        with db.transaction(write=True) as conn:
            conn.execute(tag("rolled back"))
            raise RuntimeError("rolled back")
    assert bug_generation(db) == before
    db.checkpoint()
    assert bug_generation(db) == before
    write(db, "DELETE FROM replica_waits WHERE user_id = 987654")


@pytest.mark.engine("postgresql")
def test_postgresql_counts_each_transaction_once_and_folding_keeps_the_count(db):
    """Several rows of several watched tables in one transaction count
    once; the fold (Database.checkpoint, after each delivery round)
    empties bug_writes into bug_generation's value, the sum unchanged."""
    before = int(bug_generation(db))
    write(db, tag("one"), tag("two"),
          "UPDATE personal_tags SET name = name || 's' WHERE name IN ('one', 'two')")
    assert int(bug_generation(db)) == before + 1
    write(db, tag("three"))
    assert int(bug_generation(db)) == before + 2
    db.checkpoint()
    with db.transaction() as conn:
        assert conn.execute("SELECT count(*) FROM bug_writes").fetchone()[0] == 0
    assert int(bug_generation(db)) == before + 2
    write(db, tag("four"))
    assert int(bug_generation(db)) == before + 3


# 20,000 rows of bug_writes, as transactions that changed bugs note
# themselves (ids far above any real transaction's).
_FAKE_BUG_WRITES = ("INSERT INTO bug_writes (xid)"
                    " SELECT (n + {first})::text::xid8 FROM generate_series(1, 20000) AS n")


@pytest.mark.engine("postgresql")
def test_postgresql_folding_keeps_the_bug_writes_table_small(db, monkeypatch):
    """Every read's check counts the rows of bug_writes, reading each page
    the table has: the fold VACUUMs it (at most every
    BUG_WRITES_VACUUM_SECONDS a process), so the pages its deleted rows
    filled do not stay until autovacuum comes, and the count stands."""
    from bugsvc.store.postgres import database
    size = "SELECT pg_relation_size('bug_writes') / current_setting('block_size')::int"
    before = int(bug_generation(db))
    write(db, _FAKE_BUG_WRITES.format(first=10 ** 12))
    with db.transaction() as conn:
        filled = conn.execute(size).fetchone()[0]
    assert filled >= 50 and int(bug_generation(db)) == before + 20000
    db._vacuumed_at = float("-inf")         # none in this process lately
    db.checkpoint()
    with db.transaction() as conn:
        assert conn.execute(size).fetchone()[0] <= 1
    assert int(bug_generation(db)) == before + 20000
    # Not again within the interval: the next fold only folds.
    vacuums = []
    monkeypatch.setattr(database, "BUG_WRITES_VACUUM_SECONDS", 3600.0)
    db._vacuumed_at = float("-inf")
    db.checkpoint()
    write(db, _FAKE_BUG_WRITES.format(first=2 * 10 ** 12))
    real = database.PostgresDatabase._vacuum_bug_writes

    def noted(self):
        vacuums.append(self)
        real(self)
    monkeypatch.setattr(database.PostgresDatabase, "_vacuum_bug_writes", noted)
    db.checkpoint()
    with db.transaction() as conn:
        assert conn.execute(size).fetchone()[0] >= 50
    assert len(vacuums) == 1 and int(bug_generation(db)) == before + 40000


@pytest.mark.engine("postgresql")
def test_postgresql_writes_meanwhile_are_counted_when_they_commit(db):
    """A write not committed yet counts for nobody; two concurrent writers
    never wait for each other on the count (each notes its own row), and
    a fold running while one is open leaves it to be counted at its commit."""
    before = int(bug_generation(db))

    def elsewhere(work):
        """Run work() on another thread (its own transaction); True when
        it ended within 10 seconds."""
        thread = threading.Thread(target=work)
        thread.start()
        thread.join(10)
        return not thread.is_alive()
    with db.transaction(write=True) as conn:
        conn.execute(tag("open one"))
        assert elsewhere(lambda: write(db, tag("other"))), "the concurrent write waited"
        assert int(bug_generation(db)) == before + 1
        assert elsewhere(db.checkpoint)
        assert int(bug_generation(db)) == before + 1
    assert int(bug_generation(db)) == before + 2
    db.checkpoint()
    assert int(bug_generation(db)) == before + 2


@pytest.mark.engine("postgresql")
@pytest.mark.parametrize("reads_bug_generation", [False, True])
def test_postgresql_writers_that_leave_the_bug_generation_unread_never_fail_each_other(
        db, reads_bug_generation):
    """Two SERIALIZABLE writes at once, each reading the generations and
    then noting a bug write: reading the catalog and credential ones only
    (as every write does: Dialect.bug_generation_in_writes), both commit;
    had each counted bug_writes too, each would have missed the other's
    row, and one fails (40001)."""
    import psycopg

    both_read = threading.Barrier(2, timeout=10)
    outcomes = []

    def writer(name):
        try:
            with db.transaction(write=True) as conn:
                seen = cache.Generations(conn, bug=reads_bug_generation)
                assert seen.catalog is not None
                assert (seen.bug is None) != reads_bug_generation
                both_read.wait()
                conn.execute(tag(name))
            outcomes.append("committed")
        except psycopg.errors.SerializationFailure:
            outcomes.append("failed")
    threads = [threading.Thread(target=writer, args=(f"writer {n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(outcomes) == (["committed", "failed"] if reads_bug_generation
                                else ["committed", "committed"])


@pytest.mark.engine("postgresql")
def test_postgresql_a_write_call_reads_no_bug_generation(services, monkeypatch):
    """A write through the service (a comment added) reads the generations
    itself (as a process's first call, or a call tried again, does: none
    assumed) without the bug generation; it notes itself in bug_writes,
    once. A read call reads all three."""
    bug_id = add_bug(services, summary="Written to")
    before = int(bug_generation(services.db))
    read = []
    generations_sql = cache._generations_sql

    def spied(dialect, bug=True):
        sql = generations_sql(dialect, bug)
        read.append(sql)
        return sql
    monkeypatch.setattr(cache, "_generations_sql", spied)
    services.units._generations_seen = None
    services.call(comment.add, {"id": bug_id, "comment": "Words"}, as_user=ADMIN)
    assert read and not [sql for sql in read if "bug_writes" in sql]
    assert int(bug_generation(services.db)) == before + 1
    read.clear()
    services.units._generations_seen = None
    services.call(bug_service.get, {"ids": [bug_id]}, as_user=ADMIN)
    assert [sql for sql in read if "bug_writes" in sql]


def test_a_version_33_database_moves_forward(db, db_path, backend):
    """A database from before the bug writes gets them (PostgreSQL: the
    table and a trigger for each table and event the bug generation
    watches; nothing on SQLite), and its generation moves with the next
    bug write and not with other writes."""
    on_tables = dict(re.findall(r"^--postgresql: CREATE TRIGGER (\w+) [^\n]*? ON (\w+) ",
                                schema.schema_section("bug writes"), re.M))
    triggers = list(on_tables)

    def undo(conn):
        if backend == "postgresql":
            for name, table in on_tables.items():
                conn.execute(f"DROP TRIGGER {name} ON {table}")
            conn.execute("DROP TABLE bug_writes")
    with migrated_from(db, db_path, 33, undo) as conn:
        if backend == "postgresql":
            assert conn.dialect.table_exists(conn, "bug_writes")
            present = {row[0] for row in conn.execute(
                "SELECT tgname FROM pg_trigger WHERE tgname LIKE '%\\_notes\\_bug\\_write'")}
            assert present == set(triggers) and len(triggers) == 17
        else:
            assert triggers and not conn.dialect.table_exists(conn, "bug_writes")
    moved = open_database(db_path)
    try:
        before = bug_generation(moved)
        write(moved, "INSERT INTO replica_waits (user_id, lsn) VALUES (987655, 1)")
        assert bug_generation(moved) == before
        write(moved, tag("after the move"))
        assert bug_generation(moved) != before
    finally:
        moved.close()


@pytest.mark.engine("postgresql")
def test_postgresql_write_calls_fold_the_bug_writes_now_and_then(services):
    """Where no delivery worker runs (`--deliver no` and no `bugsvc
    deliver`), a serving process's write calls fold the bug writes noted,
    at most once every FOLD_SECONDS, so their count stays short; the
    generation is the same either way."""
    from bugsvc.store.postgres import database as pg_database

    def noted():
        return services.query("SELECT count(*) FROM bug_writes")[0][0]
    bug_id = add_bug(services, summary="Folded")
    services.db._folded_at = float("-inf")
    before = int(bug_generation(services.db))
    services.call(comment.add, {"id": bug_id, "comment": "One"}, as_user=ADMIN)
    assert noted() == 0 and int(bug_generation(services.db)) == before + 1
    services.call(comment.add, {"id": bug_id, "comment": "Two"}, as_user=ADMIN)
    assert noted() == 1 and int(bug_generation(services.db)) == before + 2
    services.db._folded_at -= pg_database.FOLD_SECONDS
    services.call(comment.add, {"id": bug_id, "comment": "Three"}, as_user=ADMIN)
    assert noted() == 0 and int(bug_generation(services.db)) == before + 3
