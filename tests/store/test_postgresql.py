"""The PostgreSQL store itself: that the suite has a server to run against,
and what only PostgreSQL does (its schema translated from schema.sql, its
placeholders, rows and values as sqlite3 gives them)."""

import os
import re

import pytest

from bugsvc.store.location import open_database
from migration_support import migrated_from


def test_postgresql_is_there_to_test_against(pytestconfig):
    """Without PostgreSQL's server programs (or psycopg) the database tests
    run on SQLite only: a developer is told so here, CI fails."""
    missing = pytestconfig.bugsvc_postgresql_missing
    if missing is None:
        return
    message = f"the tests did not run on PostgreSQL: {missing}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# The schema: PostgreSQL's is schema.sql translated, and says the same ------------------

def _sqlite_schema(conn):
    tables = {}
    for table in conn.dialect.tables(conn):
        # A primary key's columns are never NULL (SQLite says so only for
        # INTEGER PRIMARY KEY, but bugsvc never stores NULL in the others).
        columns = [(row[1], bool(row[3]) or bool(row[5]), row[4] is not None)
                   for row in conn.execute("SELECT * FROM pragma_table_info(?) ORDER BY cid",
                                           (table,))]
        key = [row[1] for row in sorted(conn.execute(
            "SELECT * FROM pragma_table_info(?)", (table,)), key=lambda r: r[5]) if row[5]]
        indexes = {(row[1], bool(row[2])) for row in conn.execute(
            "SELECT * FROM pragma_index_list(?)", (table,)) if row[3] == "c"}
        tables[table] = (columns, key, indexes)
    triggers = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return tables, triggers


def _postgresql_schema(conn):
    tables = {}
    for table in conn.dialect.tables(conn):
        # An identity column's values are the engine's, as SQLite's rowid: no default.
        columns = [(row[0], row[1] == "NO", row[2] is not None) for row in conn.execute(
            "SELECT column_name, is_nullable, column_default"
            " FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = ? ORDER BY ordinal_position", (table,))]
        key = [row[0] for row in conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = CAST(? AS regclass)"
            " AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)", (table,))]
        indexes = {(row[0], bool(row[1])) for row in conn.execute(
            "SELECT c.relname, i.indisunique FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid WHERE i.indrelid = CAST(? AS regclass)"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
            (table,))}
        tables[table] = (columns, key, indexes)
    triggers = {row[0] for row in conn.execute(
        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
    return tables, triggers


@pytest.mark.engine("postgresql")
def test_the_postgresql_schema_has_every_table_column_key_index_and_trigger_of_schema_sql(
        new_db, backend, tmp_path):
    """Drift: both engines' databases, made from schema.sql, have the same
    tables, columns (in order, NOT NULL, with a default), primary keys,
    indexes (and which are unique) and triggers; only the engines' own
    search indexes differ, as schema.sql marks them."""
    sqlite = open_database(tmp_path / "drift.sqlite")
    sqlite.initialize()
    with sqlite.transaction() as conn:
        expected_tables, expected_triggers = _sqlite_schema(conn)
        moves_bugs = set(_bug_generation_events(conn))
    sqlite.close()
    postgresql = open_database(new_db())
    postgresql.initialize()
    with postgresql.transaction() as conn:
        tables, triggers = _postgresql_schema(conn)
        notes_bug_writes = set(conn.execute(
            "SELECT event_object_table, event_manipulation FROM information_schema.triggers"
            " WHERE trigger_name LIKE '%\\_notes\\_bug\\_write'").fetchall())
    postgresql.close()
    engine_own = {"bugs_text_fts", "bugs_text_fts_insert", "bugs_text_fts_delete",
                  "bugs_text_fts_update", "bugs_text_trgm_idx", "bug_aliases_fts",
                  "bug_aliases_fts_insert", "bug_aliases_fts_delete", "bug_aliases_fts_update",
                  "bug_aliases_trgm_idx", "comments_fts", "comments_fts_insert",
                  "comments_fts_delete", "comments_fts_update", "comments_body_trgm_idx"}
    # The bug generation's triggers are SQLite's alone (its writers take
    # turns; PostgreSQL's would queue on the counter's row). PostgreSQL's
    # note the bug writes instead, on the very same tables and events.
    bug_generation = {name for name in expected_triggers if name.endswith("_moves_bugs")}
    assert bug_generation and not bug_generation & triggers
    bug_writes = {name for name in triggers if name.endswith("_notes_bug_write")}
    assert notes_bug_writes == moves_bugs and len(moves_bugs) == len(bug_generation)
    engine_own |= bug_generation | bug_writes | {"bug_writes"}

    def shared(indexes):
        return {index for index in indexes if index[0] not in engine_own}
    assert sorted(set(tables) - engine_own) == sorted(set(expected_tables) - engine_own)
    for table, (columns, key, indexes) in expected_tables.items():
        if table in engine_own:
            continue
        assert tables[table][0] == columns, table
        assert tables[table][1] == key, table
        assert shared(tables[table][2]) == shared(indexes), table
    assert triggers - engine_own == expected_triggers - engine_own


_TRIGGER_EVENT = re.compile(r"CREATE TRIGGER \w+ AFTER (INSERT|UPDATE|DELETE)")


def _bug_generation_events(conn):
    """(table, event) of each of SQLite's bug generation triggers."""
    return [(table, _TRIGGER_EVENT.match(sql).group(1)) for table, sql in conn.execute(
        "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
        " AND name LIKE '%\\_moves\\_bugs' ESCAPE '\\'")]


def _index_columns(conn, index):
    """The columns of PostgreSQL's index `index`, in order."""
    return [row[0] for row in conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
        " AND a.attnum = ANY(i.indkey) WHERE i.indexrelid = CAST(? AS regclass)"
        " ORDER BY array_position(i.indkey, a.attnum)", (index,))]


@pytest.mark.engine("postgresql")
def test_the_product_status_index_ends_with_the_bug_id_fresh_and_migrated(db, db_path):
    """A search of one product and status reads its bugs in id order from
    the index and stops at its limit (at 100,000 bugs a sparse product and
    status took 0.8 ms of the server's time sorting every match, 0.05 ms
    reading the index): SQLite's index ends with the rowid by itself,
    PostgreSQL's says id, in new databases and in those version 31 made."""
    with db.transaction() as conn:
        assert _index_columns(conn, "bugs_product_status_idx") == ["product_id", "status", "id"]

    def undo(conn):
        conn.execute("DROP INDEX bugs_product_status_idx")
        conn.execute("CREATE INDEX bugs_product_status_idx ON bugs (product_id, status)")
    with migrated_from(db, db_path, 31, undo) as conn:
        assert _index_columns(conn, "bugs_product_status_idx") == ["product_id", "status", "id"]


# SQL as written for sqlite3 ---------------------------------------------------------------

def test_question_marks_become_numbered_placeholders_only_outside_quotes_and_comments():
    from bugsvc.store.postgres.sql import native_placeholders
    assert native_placeholders(
        "SELECT '?', \"a?\", x % 3 FROM t WHERE y = ? AND z LIKE '%?%' AND lower(w) = lower(?)"
        " -- ?\n AND v IN (?, ?)") == \
        "SELECT '?', \"a?\", x % 3 FROM t WHERE y = $1 AND z LIKE '%?%'" \
        " AND lower(w) = lower($2 COLLATE \"C\") -- ?\n AND v IN ($3, $4)"
    assert native_placeholders("SELECT 'it''s ?' WHERE a = ?") == "SELECT 'it''s ?' WHERE a = $1"


def test_a_statement_with_percent_signs_and_values_runs_as_written(db):
    """The text goes to PostgreSQL as it is: a % (modulo, a LIKE pattern)
    beside values is neither doubled nor taken for a placeholder."""
    with db.transaction() as conn:
        row = conn.execute("SELECT 7 % ?, 'a%b' LIKE ?, ? || '%s'", (4, "a%", "x")).fetchone()
        alone = conn.execute("SELECT 7 % 4, length('a%%b')").fetchone()
    assert tuple(row) == (3, True, "x%s")
    assert tuple(alone) == (3, 4)               # '%%' stays two characters


def test_in_lists_of_several_placeholders_become_one_array_each():
    from bugsvc.store.postgres.sql import array_lists
    assert array_lists("SELECT 1 FROM t WHERE a IN (?, ?,?) AND b = ? AND c NOT IN (?, ?)"
                       " AND d in(?,?) AND e IN (?)") == (
        "SELECT 1 FROM t WHERE a = ANY(?) AND b = ? AND c <> ALL(?) AND d = ANY(?)"
        " AND e IN (?)", ((0, 3), (4, 2), (6, 2)))
    # Quoted text, lists of anything but placeholders and lists of one stay.
    assert array_lists("SELECT 'x IN (?, ?)', (a, b) IN ((?, ?)), lower(c) IN (lower(?), ?),"
                       " d IN (?) FROM JOIN") is None


def test_in_lists_answer_as_lists_of_values_whatever_their_length(db):
    """On both engines; on PostgreSQL a list of whole numbers is sent as one
    array (`= ANY`, `<> ALL`), others value by value."""
    with db.transaction() as conn:
        def ids(sql, params):
            return [row[0] for row in conn.execute(
                "SELECT n FROM (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3) AS v WHERE " + sql
                + " ORDER BY n", params)]
        assert ids("n IN (?, ?, ?)", (3, 1, 7)) == [1, 3]
        assert ids("n NOT IN (?, ?) AND n > ?", (3, 1, 0)) == [2]
        assert ids("n NOT IN (?, ?)", (3, None)) == []             # NULL: never true
        assert ids("n IN (?, ?)", (2, None)) == [2]
        assert ids("n IN (?, ?) AND ? = 'x'", (2, 3, "x")) == [2, 3]
        assert ids("CAST(n AS TEXT) IN (?, ?)", ("1", "3")) == [1, 3]
        assert ids("n IN (?, ?)", (1, 2.0)) == [1, 2]
        assert ids("n IN (?, ?, ?)", (-3, 2 ** 63 - 1, 2)) == [2]
        assert ids("n IN (?, ?, ?)", (-2 ** 63, 3, -1)) == [3]
        assert ids("n NOT IN (?, ?, ?)", (-2 ** 63, 2 ** 63 - 1, 1)) == [2, 3]
        assert ids("n IN (?, ?)", (True, 3)) == [1, 3]
        for beyond in (2 ** 64, 2 ** 63, -2 ** 63 - 1):
            with pytest.raises(OverflowError):
                ids("n IN (?, ?)", (1, beyond))


def test_executemany_stores_each_row_however_many_there_are(db):
    """One row (PostgreSQL: run as one execute), several, none, from a
    list or an iterator; a whole number beyond 64 bits refused as sqlite3
    refuses it, in one row as in several."""
    insert = "INSERT INTO keywords (name, description) VALUES (?, ?)"
    with db.transaction(write=True) as conn:
        conn.executemany(insert, [("solo", "one row")])
        conn.executemany(insert, (row for row in [("first", "a"), ("second", "b")]))
        conn.executemany(insert, iter([("third", "c")]))
        conn.executemany(insert, [])
        assert [tuple(row) for row in conn.execute(
            "SELECT name, description FROM keywords WHERE name IN"
            " ('solo', 'first', 'second', 'third') ORDER BY name")] == [
            ("first", "a"), ("second", "b"), ("solo", "one row"), ("third", "c")]
    for rows in ([(2 ** 64,)], [(1,), (2 ** 64,)]):
        with pytest.raises(OverflowError), db.transaction(write=True) as conn:
            conn.executemany("UPDATE keywords SET description = 'x' WHERE id = ?", rows)
    with db.transaction() as conn:
        assert conn.execute("SELECT COUNT(*) FROM keywords WHERE description = 'x'"
                            ).fetchone()[0] == 0


@pytest.mark.engine("postgresql")
def test_a_read_sends_its_begin_only_after_the_generations(db, backend, begins_sent):
    """The generations a call looks at first are read ahead of a read
    transaction's BEGIN (any moment's snapshot may give them): a read that
    runs nothing else sends no BEGIN; one that does begins before its next
    statement, which then reads one snapshot to its end; a write's BEGIN
    comes first, as ever."""
    from bugsvc.store import cache
    begun = begins_sent
    with db.transaction() as conn:
        seen = cache.Generations(conn)
        stored = (seen.catalog, seen.credential)
    assert begun == []
    with db.transaction() as conn:
        assert stored == (
            conn.execute("SELECT value FROM catalog_generation WHERE id = 1").fetchone()[0],
            conn.execute("SELECT value FROM credential_generation WHERE id = 1").fetchone()[0])
    begun.clear()
    with db.transaction() as conn:
        assert cache.Generations(conn).catalog == stored[0]
        assert begun == []
        before = conn.execute("SELECT COUNT(*) FROM keywords").fetchone()[0]
        assert begun == ["BEGIN ISOLATION LEVEL REPEATABLE READ"]
        with db.separate_transaction(write=True) as other:
            other.execute("INSERT INTO keywords (name, description) VALUES ('later', 'x')")
        assert conn.execute("SELECT COUNT(*) FROM keywords").fetchone()[0] == before
    begun.clear()
    with db.transaction(write=True) as conn:
        assert cache.Generations(conn).catalog >= stored[0]
        assert begun == ["BEGIN ISOLATION LEVEL SERIALIZABLE"]


@pytest.mark.engine("postgresql")
def test_a_searchs_time_limit_is_lifted_in_the_next_statements_round_trip(
        db, backend, monkeypatch):
    """Only a search's own statement has its time limit: the statement
    after it in the transaction runs without one, the limit lifted in that
    statement's round trip (one pipeline, one wait for the server)."""
    import psycopg

    from bugsvc.store.regexp import regexp_budget
    pipelines = []
    pipeline = psycopg.Connection.pipeline

    def counted(self):
        pipelines.append(self)
        return pipeline(self)
    monkeypatch.setattr(psycopg.Connection, "pipeline", counted)
    with db.transaction() as conn:
        with regexp_budget(seconds=2, per_value=0):
            limit = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
        assert pipelines == []
        after = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
        assert len(pipelines) == 1
        again = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
        # A second search in the transaction has its own limit, and only it.
        with regexp_budget(seconds=3, per_value=0):
            second = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
            within = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
    assert (limit, after, again) == ("2001ms", "0", "0")
    assert (second, within) == ("3001ms", "0")
    assert len(pipelines) == 2
    # A search right after another: its limit replaces the one still set.
    with db.transaction() as conn:
        shown = []
        for seconds in (2, 3):
            with regexp_budget(seconds=seconds, per_value=0):
                shown.append(conn.execute(
                    "SELECT current_setting('statement_timeout')").fetchone()[0])
        shown.append(conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0])
    assert shown == ["2001ms", "3001ms", "0"]


@pytest.mark.engine("postgresql")
def test_a_statement_over_its_bounded_work_is_stopped_and_the_transaction_goes_on(db):
    """PostgreSQL cannot count its work: a bounded_work block's statement
    gets the time SQLite takes for the steps (the lower of that and a
    search's own limit). One stopped by it leaves the block as
    WorkBudgetExceeded, the transaction usable (its savepoint rolled back
    to) and no limit left set; one stopped by the search's own limit keeps
    that error."""
    from bugsvc.store.dialect import WorkBudgetExceeded
    from bugsvc.store.postgres.dialect import STEPS_PER_MILLISECOND
    from bugsvc.store.regexp import StatementTooSlow, regexp_budget
    limit_now = "SELECT current_setting('statement_timeout')"
    with db.transaction() as conn:
        with conn.dialect.bounded_work(conn, 50 * STEPS_PER_MILLISECOND):
            with regexp_budget(seconds=2, per_value=0):
                assert conn.execute(limit_now).fetchone()[0] == "50ms"
        with pytest.raises(WorkBudgetExceeded):
            with conn.dialect.bounded_work(conn, 20 * STEPS_PER_MILLISECOND):
                with regexp_budget(seconds=2, per_value=0):
                    conn.execute("SELECT pg_sleep(2)")
        assert conn.execute(limit_now).fetchone()[0] == "0"
        assert conn.execute("SELECT 1").fetchone()[0] == 1
    with pytest.raises(StatementTooSlow):
        with db.transaction() as conn:
            with conn.dialect.bounded_work(conn, 10_000 * STEPS_PER_MILLISECOND):
                with regexp_budget(seconds=0.02, per_value=0):
                    conn.execute("SELECT pg_sleep(2)")


@pytest.mark.engine("postgresql")
def test_reads_by_ids_keep_one_plan_for_every_list(db, backend):
    """Left to choose, PostgreSQL plans a prepared statement with a list of
    ids anew on every run once its first runs had short lists; run with
    execute_one_plan it keeps one generic plan for all, and the statements
    after it choose as before."""
    read = "SELECT b.id, (SELECT COUNT(*) FROM bug_cc WHERE bug_id = b.id) FROM bugs b"

    def plans(conn, marker):
        """(generic plans, custom plans) of the prepared statement with `marker`."""
        return tuple(conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE ? AND statement NOT LIKE '%pg_prepared%'",
            (f"%{marker}%",)).fetchone())
    with db.transaction() as conn:
        for _ in range(8):
            conn.execute(f"{read} WHERE b.id IN (?, ?) AND 7031 = 7031", [1, 2]).fetchall()
            conn.execute_one_plan(f"{read} WHERE b.id IN (?, ?) AND 7032 = 7032",
                                  [1, 2]).fetchall()
        # Markers no other statement of the session's pooled connections has.
        chosen, kept = plans(conn, "7031 = 7031"), plans(conn, "7032 = 7032")
        mode = conn.execute("SELECT current_setting('plan_cache_mode')").fetchone()[0]
    assert chosen[0] == 0 and chosen[1] > 0
    assert kept[0] > 0 and kept[1] == 0
    assert mode == "auto"


@pytest.mark.engine("postgresql")
def test_an_in_list_of_any_length_is_one_prepared_statement(db, backend):
    with db.transaction() as conn:
        for length in (2, 3, 7, 2, 3, 7, 2, 3, 7, 11):
            conn.execute("SELECT id FROM bugs WHERE id IN (" + ", ".join("?" * length) + ")",
                         list(range(1, length + 1))).fetchall()
        prepared = [row[0] for row in conn.execute(
            "SELECT statement FROM pg_prepared_statements WHERE statement LIKE ?",
            ("SELECT id FROM bugs WHERE id %",))]
    assert prepared == ["SELECT id FROM bugs WHERE id = ANY($1)"]


@pytest.mark.engine("postgresql")
def test_rows_are_named_by_the_columns_a_statement_has_now(db, backend):
    """Column names are kept per statement, and read again once the schema
    changed."""
    with db.transaction(write=True) as conn:
        conn.execute("CREATE TEMPORARY TABLE shape (a BIGINT, b BIGINT)")
        conn.execute("INSERT INTO shape (a, b) VALUES (1, 2)")
        for _ in range(3):
            row = conn.execute("SELECT * FROM shape").fetchone()
        assert dict(row) == {"a": 1, "b": 2}
        conn.execute("ALTER TABLE shape RENAME COLUMN b TO c")
        cursor = conn.execute("SELECT * FROM shape")
        assert [column[0] for column in cursor.description] == ["a", "c"]
        assert dict(cursor.fetchone()) == {"a": 1, "c": 2}


@pytest.mark.engine("postgresql")
def test_rows_values_and_ids_are_what_sqlite3_gives(db, backend):
    with db.transaction(write=True) as conn:
        row = conn.execute("SELECT 1 AS One, 'x' AS two, 1 = 1 AS yes, SUM(n) AS total,"
                           " AVG(n) AS mean FROM (VALUES (1), (2)) AS v(n)").fetchone()
        assert (row[0], row["one"], row["ONE"], row["two"], row[-1]) == (1, 1, 1, "x", 1.5)
        assert (row["yes"], row["total"]) == (1, 3) and type(row["total"]) is int
        assert dict(row) == {"one": 1, "two": "x", "yes": 1, "total": 3, "mean": 1.5}
        with pytest.raises(IndexError):
            row["three"]
        cursor = conn.execute("INSERT INTO keywords (name, description) VALUES (?, ?)",
                              ("fast", "it is"))
        assert conn.execute("SELECT name FROM keywords WHERE id = ?",
                            (cursor.lastrowid,)).fetchone()["name"] == "fast"
        assert conn.execute("SELECT ? + 1", (True,)).fetchone()[0] == 2
        with pytest.raises(OverflowError):
            conn.execute("SELECT id FROM bugs WHERE id = ?", (2 ** 64,))


@pytest.mark.engine("postgresql")
def test_backup_says_pg_dump_does_it(db_path, backend):
    from live_server import run_cli
    done = run_cli("--db", db_path, "backup", "/tmp/never-written.sqlite")
    assert done.returncode == 2
    assert "PostgreSQL database" in done.stderr and "pg_dump --format=custom" in done.stderr
    assert "://postgres:" not in done.stderr or ":***@" in done.stderr


# The suite's own throwaway cluster (tests/pg_cluster.py) ---------------------------------

def _contents(cluster, database):
    """Every row of every table of `database`, and its id sequences' states."""
    import psycopg
    with psycopg.connect(cluster.url(database), autocommit=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
        rows = {table: sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{table}"'))
                for table in tables}
        sequences = {name: conn.execute(f"SELECT last_value, is_called FROM {name}").fetchone()
                     for (name,) in conn.execute(
                         "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'")}
    return rows, sequences


@pytest.mark.engine("postgresql")
def test_the_work_database_is_put_back_whatever_the_last_test_changed(
        backend, postgresql, postgresql_template):
    """What every PostgreSQL test relies on: the next test starts from the
    template's rows, whichever way the last one changed them (restore()
    puts back only the tables it finds changed)."""
    import psycopg
    url = postgresql.work_database(postgresql_template)
    template = _contents(postgresql, postgresql_template)
    work = url.rsplit("/", 1)[1]
    assert _contents(postgresql, work) == template
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO keywords (name, description) VALUES ('added', 'new row')")
        conn.execute("UPDATE classifications SET description = 'changed' WHERE id = 1")
        conn.execute("DELETE FROM status_workflow WHERE new_status_id = (SELECT"
                     " MIN(new_status_id) FROM status_workflow)")
        # The same number of rows as before, one of them new.
        conn.execute("DELETE FROM params WHERE name = 'maintainer'")
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'replaced')")
        with conn.transaction():
            conn.execute("UPDATE field_values SET value = 'kept' WHERE id = (SELECT MIN(id)"
                         " FROM field_values)")
        try:
            with conn.transaction():
                conn.execute("UPDATE users SET real_name = 'rolled back'")
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
        conn.execute("SELECT setval(pg_get_serial_sequence('bugs', 'id'), 4242)")
    assert _contents(postgresql, work) != template
    assert postgresql.work_database(postgresql_template) == url
    assert _contents(postgresql, work) == template
    # And again, after a restore that found nothing changed.
    assert postgresql.work_database(postgresql_template) == url
    assert _contents(postgresql, work) == template


@pytest.mark.slow
@pytest.mark.engine("postgresql")
def test_a_killed_sessions_cluster_is_removed_by_the_next(backend, tmp_path):
    """A test session killed outright (a cancelled CI job) leaves its
    cluster running; the next session's first cluster stops and removes it,
    and leaves the clusters of living sessions alone."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import pg_cluster
    script = ("import sys, time, pg_cluster\n"
              "cluster = pg_cluster.Cluster()\n"
              "print(cluster.folder, cluster.port, flush=True)\n"
              "time.sleep(600)\n")
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(pg_cluster.__file__).parent)
    try:
        folder, port = owner.stdout.readline().split()
        assert (Path(folder) / "data" / "postmaster.pid").exists()
        pg_cluster.remove_abandoned(pg_cluster.server_programs())      # still owned
        assert Path(folder).exists()
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    # (another session's sweep may be the one that removes it)
    pg_cluster.remove_abandoned(pg_cluster.server_programs())
    assert not Path(folder).exists()
    import socket
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 5000])
def test_iterating_a_result_gives_every_row_in_order_by_name_and_place(db, count):
    """On both engines; PostgreSQL loads a short result's rows at once and
    a long one's row by row (a cursor's iteration either way), and a cursor
    partly read with fetchone goes on from where it stood."""
    sql = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
           " SELECT i, i * 2 AS twice FROM n WHERE ? > 0 ORDER BY i")
    with db.transaction() as conn:
        rows = [(row[0], row["twice"]) for row in conn.execute(sql, (count, count))]
        assert rows == [(i, 2 * i) for i in range(1, count + 1)]
        cursor = conn.execute(sql, (count, count))
        first = cursor.fetchone()
        assert [row[0] for row in cursor] == list(range(2, count + 1))
        assert (first is None) == (count == 0)


@pytest.mark.engine("postgresql")
def test_a_statement_read_now_is_prepared_once_and_again_when_the_session_lost_it(db):
    """Database.read_now on PostgreSQL: libpq's prepared statement, typed
    as psycopg types them; one the session no longer has is prepared again;
    an error is psycopg's, and the connection serves the next call."""
    import psycopg

    sql = "SELECT 41 + 1, 'x' || 'y', NULL::text"
    db.connection()                     # this thread's own: every call below runs on it
    try:
        assert db.read_now(sql) == (42, "xy", None)
        raw = db.connection().raw
        mine = "SELECT name FROM pg_prepared_statements WHERE name LIKE 'bugsvc_now%'"
        before = raw.execute(mine).fetchall()
        assert db.read_now(sql) == (42, "xy", None)
        assert raw.execute(mine).fetchall() == before and before
        raw.execute("DEALLOCATE ALL")                      # the session lost them
        assert db.read_now(sql) == (42, "xy", None)
        assert len(raw.execute(mine).fetchall()) == 1
        with pytest.raises(psycopg.errors.UndefinedColumn):
            db.read_now("SELECT no_such_column")
        assert db.read_now(sql) == (42, "xy", None)
    finally:
        db.close_connection()


def test_read_now_gives_the_first_row_on_either_engine(db):
    assert db.read_now("SELECT 1, 'one'") == (1, "one")


@pytest.mark.engine("postgresql")
def test_read_now_runs_on_connections_kept_for_it_and_none_that_failed(config):
    """Off the threads with a connection of their own, read_now runs on at
    most READ_NOW_CONNECTIONS connections the process keeps for it (the
    pool's checkout not paid), the pool lending one only when all are in
    use; a connection whose statement failed (its session ended by the
    server here) is closed, and the next read opens another. Database.close
    closes them."""
    import threading

    import psycopg

    from bugsvc.store.postgres import database as pg_database
    db = open_database(config.database, pool_size=4)
    pid = "SELECT pg_backend_pid()"
    try:
        first = db.read_now(pid)[0]
        assert db.read_now(pid)[0] == first
        requests = db.pool().get_stats().get("requests_num", 0)
        assert [db.read_now(pid)[0] for _ in range(5)] == [first] * 5
        assert db.pool().get_stats().get("requests_num", 0) == requests
        # All lent: the pool lends one.
        kept = [db._now.take() for _ in range(pg_database.READ_NOW_CONNECTIONS - 1)]
        held = db._now.take()
        assert None not in kept and held is not None and db._now.take() is None
        answers = []
        reader = threading.Thread(target=lambda: answers.append(db.read_now(pid)[0]))
        reader.start()
        reader.join(10)
        assert answers and answers[0] not in {conn.raw.info.backend_pid
                                              for conn in [*kept, held]}
        assert db.pool().get_stats().get("requests_num", 0) == requests + 1
        for conn in [*kept, held]:
            db._now.give_back(conn)
        # A session the server ended: the read is made on the pool, the
        # connection closed; the next one opens another.
        ended = held.raw.info.backend_pid
        with db.transaction() as conn:
            conn.execute("SELECT pg_terminate_backend(CAST(? AS integer))", (ended,))
        while db._now._idle[-1] is not held:
            db._now._idle.insert(0, db._now._idle.pop())
        assert db.read_now(pid)[0] != ended
        assert held.raw.closed and held not in db._now._idle
        assert db.pool().get_stats().get("requests_num", 0) == requests + 3
        assert db.read_now(pid)[0] != ended
        # A statement's own error is the caller's; the connection is not lent again.
        lent_next = db._now._idle[-1]
        with pytest.raises(psycopg.errors.UndefinedColumn):
            db.read_now("SELECT no_such_column")
        assert lent_next.raw.closed
        assert db.read_now("SELECT 1") == (1,)
    finally:
        idle = list(db._now._idle)
        db.close()
    assert idle and all(conn.raw.closed for conn in idle)


@pytest.mark.engine("postgresql")
def test_begin_and_commit_go_as_simple_queries_with_psycopgs_errors(config):
    """BEGIN (with a search's time limit) and COMMIT are sent as libpq's
    simple queries: a transaction's reads see one snapshot, a statement's
    error is psycopg's own class (a SQLSTATE to retry on), and a session
    the server ended raises psycopg.OperationalError, as psycopg's execute
    would (a replica's failure is told by it: replica.py)."""
    import psycopg

    db = open_database(config.database, pool_size=2)
    try:
        conn = db.connect()
        conn.begin("BEGIN ISOLATION LEVEL REPEATABLE READ", read=True)
        conn.limit_next_statement(1500)
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "1500ms"
        first = conn.execute("SELECT pg_current_snapshot()::text").fetchone()[0]
        with db.transaction(write=True) as other:
            other.execute("INSERT INTO replica_waits (user_id, lsn) VALUES (987656, 1)")
        assert conn.execute("SELECT pg_current_snapshot()::text").fetchone()[0] == first
        conn.end("COMMIT")
        assert conn.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        conn.begin("BEGIN ISOLATION LEVEL SERIALIZABLE")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.begun("SET LOCAL lock_timeout = x")
        conn.end("ROLLBACK")
        with db.transaction(write=True) as other:
            other.execute("SELECT pg_terminate_backend(CAST(? AS integer))",
                          (conn.raw.info.backend_pid,))
            other.execute("DELETE FROM replica_waits WHERE user_id = 987656")
        conn.begin("BEGIN ISOLATION LEVEL REPEATABLE READ", read=True)
        with pytest.raises(psycopg.OperationalError):
            conn.begun()
    finally:
        db.close()


@pytest.mark.engine("postgresql")
def test_a_search_ahead_of_its_read_transaction_goes_with_its_time_limit_alone(db, backend):
    """A search's statement run ahead of a read transaction
    (Connection.execute_ahead in a regexp budget) goes with its time limit
    in one round trip and opens no transaction: the limit holds for it
    alone (past it PostgreSQL cancels it: StatementTooSlow), the session's
    own is as before after it, whether it ran or failed, and the
    transaction begins with its next statement."""
    from psycopg.pq import TransactionStatus

    from bugsvc.store.regexp import StatementTooSlow, regexp_budget
    limit_now = "SELECT current_setting('statement_timeout')"
    with db.transaction() as conn:
        with regexp_budget(seconds=2, per_value=0) as budget:
            rows = conn.execute_ahead(f"{limit_now} AS limit_now, ? + 1 AS answer",
                                      (41,)).fetchall()
        assert budget.bounded
        assert [tuple(row) for row in rows] == [("2001ms", 42)]
        assert (rows[0]["limit_now"], rows[0]["ANSWER"]) == ("2001ms", 42)
        assert conn.raw.info.transaction_status == TransactionStatus.IDLE
        assert conn.execute(limit_now).fetchone()[0] == "0"
        assert conn.raw.info.transaction_status == TransactionStatus.INTRANS
        # Inside the transaction now: ahead no more.
        with regexp_budget(seconds=2, per_value=0):
            assert conn.execute_ahead(limit_now, ()) is None
    with db.transaction() as conn:
        with pytest.raises(StatementTooSlow), regexp_budget(seconds=0.05, per_value=0):
            conn.execute_ahead("SELECT pg_sleep(2)", ())
        assert conn.execute(limit_now).fetchone()[0] == "0"
    with db.transaction(write=True) as conn:
        with regexp_budget(seconds=2, per_value=0):
            assert conn.execute_ahead(limit_now, ()) is None


@pytest.mark.engine("postgresql")
def test_statements_run_alone_are_prepared_once_and_a_few_kept_a_connection(
        db, backend, monkeypatch):
    """prepared.run_bounded_alone prepares a statement on the connection
    the first time (the same text and values' types again: none more), at
    most the number kept (the least recently used deallocated), again when
    the session lost them; an error is psycopg's own, and the connection
    serves the next statement with the session's own time limit."""
    import psycopg

    from bugsvc.store.postgres import connection, prepared
    monkeypatch.setattr(prepared, "_ALONE", prepared.PreparedNames("bugsvc_alone_t", 3))
    mine = "SELECT name FROM pg_prepared_statements WHERE name LIKE 'bugsvc_alone_t%'"

    def answer(raw, sql, values):
        result = prepared.run_bounded_alone(raw, sql, values, 5000)
        return [tuple(row) for row in connection._ResultRows(raw, sql, result).fetchall()]

    with db.transaction() as conn:
        raw = conn.raw
        assert answer(raw, "SELECT $1 + 1, $2", [1, "one"]) == [(2, "one")]
        first = raw.execute(mine).fetchall()
        assert answer(raw, "SELECT $1 + 1, $2", [2, "two"]) == [(3, "two")]
        assert raw.execute(mine).fetchall() == first and len(first) == 1
        for number in range(2, 6):
            assert answer(raw, f"SELECT $1 + {number}", [1]) == [(1 + number,)]
        assert len(raw.execute(mine).fetchall()) == 3
        raw.execute("DEALLOCATE ALL")
        assert answer(raw, "SELECT $1 + 5", [1]) == [(6,)]
        assert len(raw.execute(mine).fetchall()) == 1
        with pytest.raises(psycopg.errors.UndefinedColumn):
            answer(raw, "SELECT no_such_column", [])
        with pytest.raises(psycopg.errors.DivisionByZero):
            answer(raw, "SELECT $1 / 0", [1])
        assert answer(raw, "SELECT $1 + 5", [2]) == [(7,)]
        assert raw.execute("SHOW statement_timeout").fetchone()[0] == "0"


@pytest.mark.engine("postgresql")
@pytest.mark.parametrize("poll", [True, False], ids=["poll", "select (Windows)"])
def test_other_threads_run_while_a_statement_alone_waits_for_the_server(
        db, backend, monkeypatch, poll):
    """prepared.run_bounded_alone waits for the server without holding the
    interpreter's lock: another thread of the process runs meanwhile (the
    other requests of a server); in poll(), or select() where the system
    has no poll()."""
    import threading
    import time

    from bugsvc.store.postgres import prepared
    monkeypatch.setattr(prepared, "_POLL", poll)
    done = threading.Event()
    with db.transaction() as conn:
        def wait_for_the_server():
            prepared.run_bounded_alone(conn.raw, "SELECT pg_sleep(1)", [], 10_000)
            done.set()
        waiting = threading.Thread(target=wait_for_the_server)
        waiting.start()
        time.sleep(0.2)
        ran_meanwhile = not done.is_set()
        waiting.join()
    assert ran_meanwhile and done.is_set()
