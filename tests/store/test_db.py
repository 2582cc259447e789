"""The database: schema version, migrations (on both engines), refusing
files we cannot use."""

import contextlib
import io
import sqlite3

import orjson
import pytest

from bugsvc.config import Config
from bugsvc.serving.server import prepare_database
from bugsvc.store import db as dbmodule, schema
from bugsvc.store.location import open_database
from bugsvc.store.schema import SchemaError, split_script


def stored_version(location):
    database = open_database(location)
    try:
        return database.version()
    finally:
        database.close()


def test_new_database_gets_schema_and_its_version(new_db):
    path = new_db()
    database = open_database(path)
    assert database.initialize() is True
    with database.transaction() as conn:
        tables = set(conn.dialect.tables(conn))
    database.close()
    assert stored_version(path) == schema.SCHEMA_VERSION >= 1
    assert {"users", "groups", "params", "audit_log", "products"} <= tables


def test_second_initialize_keeps_rows(new_db):
    path = new_db()
    database = open_database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'a@example.com')")
    assert database.initialize() is False
    with database.transaction() as conn:
        assert conn.execute("SELECT value FROM params").fetchall()[0][0] == "a@example.com"
    database.close()


def test_migration_moves_older_database_forward_without_losing_rows(new_db, monkeypatch):
    path = new_db()
    database = open_database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'keep@example.com')")
    database.close()
    current = schema.SCHEMA_VERSION

    def mark_maintainer_moved(conn):
        conn.execute("UPDATE params SET value = value || ' (moved)' WHERE name = 'maintainer'")

    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 2)
    monkeypatch.setattr(schema, "MIGRATIONS", {
        current + 1: "CREATE TABLE gadgets (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
                     "INSERT INTO gadgets (name) SELECT value FROM params"
                     " WHERE name = 'maintainer';",
        current + 2: mark_maintainer_moved,
    })
    reopened = open_database(path)
    assert reopened.initialize() is False
    with reopened.transaction() as conn:
        assert conn.execute("SELECT name FROM gadgets").fetchall()[0][0] == "keep@example.com"
        assert conn.execute("SELECT value FROM params WHERE name = 'maintainer'").fetchone()[0] \
            == "keep@example.com (moved)"
    reopened.close()
    assert stored_version(path) == current + 2


def test_failing_migration_leaves_the_database_untouched(new_db, monkeypatch):
    path = new_db()
    database = open_database(path)
    database.initialize()
    database.close()
    current = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 2)
    monkeypatch.setattr(schema, "MIGRATIONS", {
        current + 1: "CREATE TABLE gadgets (id INTEGER PRIMARY KEY);",
        current + 2: "INSERT INTO no_such_table (x) VALUES (1);",
    })
    reopened = open_database(path)
    with pytest.raises(Exception, match="no_such_table"):
        reopened.initialize()
    with reopened.transaction() as conn:
        assert not conn.dialect.table_exists(conn, "gadgets")
    reopened.close()
    assert stored_version(path) == current


def test_missing_migration_step_is_refused(new_db, monkeypatch):
    path = new_db()
    first = open_database(path)
    first.initialize()
    first.close()
    monkeypatch.setattr(schema, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    monkeypatch.setattr(schema, "MIGRATIONS", {})
    with pytest.raises(SchemaError, match="No migration"):
        open_database(path).initialize()


def test_newer_database_is_refused_with_clear_message(new_db):
    path = new_db()
    database = open_database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        conn.dialect.set_schema_version(conn, schema.SCHEMA_VERSION + 5)
    database.close()
    with pytest.raises(SchemaError) as caught:
        open_database(path).initialize()
    message = str(caught.value)
    assert f"schema version {schema.SCHEMA_VERSION + 5}" in message
    assert "newer" in message and "Upgrade bugsvc" in message
    assert stored_version(path) == schema.SCHEMA_VERSION + 5


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="not a bugsvc database"):
        open_database(path).initialize()


def test_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(SchemaError, match="not a usable SQLite database"):
        open_database(path).initialize()
    assert path.read_text().startswith("these are my notes")


def test_split_script_keeps_statements_whole():
    script = ("-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT 'p;q');\n\n"
              "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  UPDATE a SET x = 'r';\nEND;\n")
    statements = split_script(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")


def test_version_3_lists_keep_their_order_with_ids_of_their_own(new_db):
    """Migration 6: aliases and custom values, read in SQLite's hidden row
    order until version 3, get id columns numbered in that order."""
    path = new_db()
    database = prepare_database(Config(database=str(path), admin_password="the admin password"),
                                out=io.StringIO())
    with database.transaction(write=True) as conn:
        for bug_id in (7, 8, 9):
            conn.execute("INSERT INTO bugs (id, product_id, component_id, version, summary,"
                         " status, priority, severity, platform, op_sys, assigned_to, reporter,"
                         " creation_time, last_change_time) VALUES (?, 1, 1, 'unspecified', 's',"
                         " 'CONFIRMED', 'Normal', 'normal', 'All', 'All', 1, 1,"
                         " '2026-01-01 00:00:00', '2026-01-01 00:00:00')", (bug_id,))
        for table, columns in (("bug_aliases", "alias TEXT NOT NULL, bug_id INTEGER NOT NULL"),
                               ("bug_custom_values", "bug_id INTEGER NOT NULL,"
                                                     " field_id INTEGER NOT NULL,"
                                                     " value TEXT NOT NULL")):
            conn.execute(f"DROP TABLE {table}")
            schema.run_script(conn, f"CREATE TABLE {table} ({columns});")
        schema.run_script(conn, "CREATE UNIQUE INDEX bug_aliases_alias_idx"
                                " ON bug_aliases (lower(alias));")
        conn.executemany("INSERT INTO bug_aliases (alias, bug_id) VALUES (?, ?)",
                         [("zeta", 7), ("alpha", 7), ("mid", 8)])
        conn.executemany("INSERT INTO bug_custom_values (bug_id, field_id, value) VALUES (?, ?, ?)",
                         [(7, 1, "second"), (7, 1, "first")])
        conn.dialect.set_schema_version(conn, 3)
    database.close()

    migrated = open_database(path)
    assert migrated.initialize() is False
    with migrated.transaction() as conn:
        assert [tuple(row) for row in conn.execute(
            "SELECT id, alias, bug_id FROM bug_aliases ORDER BY id")] == [
            (1, "zeta", 7), (2, "alpha", 7), (3, "mid", 8)]
        assert [row[0] for row in conn.execute(
            "SELECT value FROM bug_custom_values ORDER BY id")] == ["second", "first"]
        assert conn.execute("INSERT INTO bug_aliases (alias, bug_id) VALUES ('new', 9)"
                            " RETURNING id").fetchone()[0] == 4
    migrated.close()
    assert stored_version(path) == schema.SCHEMA_VERSION


def test_version_4_database_gets_the_notification_tables(new_db):
    """Migration 5: mail preferences, watching, the outbox, webhooks and
    account tokens, on a database of version 4."""
    path = new_db()
    database = open_database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        for table in ("email_settings", "user_watch", "email_bug_ignore", "outbox_messages",
                      "outbox_events", "outbox_locks", "webhooks", "account_tokens"):
            conn.execute(f"DROP TABLE {table}")
        conn.dialect.set_schema_version(conn, 4)
    database.close()

    migrated = open_database(path)
    assert migrated.initialize() is False
    assert migrated.version() == schema.SCHEMA_VERSION
    with migrated.transaction() as conn:
        rows = conn.execute("SELECT name, owner FROM outbox_locks").fetchall()
        assert [tuple(row) for row in rows] == [("expand", None)]
        assert conn.execute("SELECT COUNT(*) FROM webhooks").fetchone()[0] == 0
    migrated.close()


class _Conflict(Exception):
    """A concurrent transaction's failure, as an engine would report it."""


def _flaky_transactions(failures):
    """Transactions whose first `failures` fail with _Conflict at commit."""
    opened = []

    @contextlib.contextmanager
    def transaction():
        opened.append(1)
        yield "conn"
        if len(opened) <= failures:
            raise _Conflict()
    return transaction, opened


def _run_attempts(attempts):
    for attempt in attempts:
        with attempt as conn:
            result = conn
    return result


def test_attempts_run_a_conflicting_write_again_at_least_tries_times():
    transaction, opened = _flaky_transactions(2)
    attempts = dbmodule.Attempts(transaction, lambda exc: isinstance(exc, _Conflict), 3)
    assert _run_attempts(attempts) == "conn" and len(opened) == 3
    transaction, opened = _flaky_transactions(5)
    attempts = dbmodule.Attempts(transaction, lambda exc: isinstance(exc, _Conflict), 3)
    with pytest.raises(_Conflict):
        _run_attempts(attempts)
    assert len(opened) == 3


def test_attempts_keep_trying_while_patience_lasts():
    """A write canceled more often than `tries` under heavy contention still
    goes through while its patience lasts."""
    transaction, opened = _flaky_transactions(6)
    attempts = dbmodule.Attempts(transaction, lambda exc: isinstance(exc, _Conflict), 3,
                                 patience=60)
    assert _run_attempts(attempts) == "conn" and len(opened) == 7


def test_attempts_leave_at_once_on_an_error_that_is_no_conflict():
    transaction, opened = _flaky_transactions(0)
    attempts = dbmodule.Attempts(transaction, lambda exc: isinstance(exc, _Conflict), 3,
                                 patience=60)
    with pytest.raises(ZeroDivisionError):
        for attempt in attempts:
            with attempt:
                raise ZeroDivisionError
    assert len(opened) == 1


def test_a_try_on_moved_generations_is_run_again_at_once_whatever_the_tries(monkeypatch):
    """A try whose assumed generations had moved (cache.GenerationsMoved) is
    run again even where conflicts are never tried again, without the
    pause a conflict gets."""
    from bugsvc.store.cache import GenerationsMoved
    slept = []
    monkeypatch.setattr(dbmodule.time, "sleep", slept.append)
    transaction, opened = _flaky_transactions(0)
    attempts = dbmodule.Attempts(transaction, lambda exc: False, 1)
    for attempt in attempts:
        with attempt:
            if len(opened) == 1:
                raise GenerationsMoved()
    assert len(opened) == 2 and slept == []
    transaction, opened = _flaky_transactions(1)
    assert _run_attempts(dbmodule.Attempts(transaction, lambda exc: isinstance(
        exc, _Conflict), 3)) == "conn"
    assert len(opened) == 2 and len(slept) == 1


def _step_making(table):
    """The version of the MIGRATIONS step that makes `table` (wherever it
    is numbered)."""
    return next(number for number, step in schema.MIGRATIONS.items()
                if callable(step) and table in [
                    cell.cell_contents for cell in (step.__closure__ or ())])


def _migrated(new_db, version, undo):
    """A new database put back to just before migration `version` by
    undo(conn), then opened again: returns it brought up to date."""
    path = new_db()
    database = open_database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        undo(conn)
        conn.dialect.set_schema_version(conn, version - 1)
    database.close()
    migrated = open_database(path)
    assert migrated.initialize() is False
    assert migrated.version() == stored_version(path) == schema.SCHEMA_VERSION
    return migrated


def test_a_database_made_before_user_settings_gets_the_table(new_db):
    migrated = _migrated(new_db, _step_making("user_settings"),
                         lambda conn: conn.execute("DROP TABLE user_settings"))
    with migrated.transaction() as conn:
        assert "user_settings" in set(conn.dialect.tables(conn))
        assert conn.execute("SELECT COUNT(*) FROM user_settings").fetchone()[0] == 0
    migrated.close()


def test_a_database_made_before_sudo_gets_the_sudo_columns_and_groups(new_db):
    """The sudo migration: a login token notes whom its page session acts
    as and since when, and the groups bz_sudoers and bz_sudo_protect exist."""
    def undo(conn):
        conn.execute("DELETE FROM user_groups WHERE group_id IN"
                     " (SELECT id FROM groups WHERE name LIKE 'bz_sudo%')")
        conn.execute("DELETE FROM groups WHERE name LIKE 'bz_sudo%'")
        for column in ("sudo_target_id", "sudo_started"):
            conn.execute(f"ALTER TABLE login_tokens DROP COLUMN {column}")
    version = next(number for number, step in schema.MIGRATIONS.items()
                   if step is schema._sudo_sessions)
    migrated = _migrated(new_db, version, undo)
    with migrated.transaction() as conn:
        assert conn.dialect.column_exists(conn, "login_tokens", "sudo_target_id")
        assert conn.dialect.column_exists(conn, "login_tokens", "sudo_started")
        names = {row[0] for row in conn.execute("SELECT name FROM groups")}
        assert {"bz_sudoers", "bz_sudo_protect"} <= names
    migrated.close()


def test_a_database_made_before_group_inheritance_gets_its_table(new_db):
    """The group inheritance migration: group_group_map, the groups whose
    members are members of another group."""
    migrated = _migrated(new_db, _step_making("group_group_map"),
                         lambda conn: conn.execute("DROP TABLE group_group_map"))
    with migrated.transaction() as conn:
        assert conn.execute("SELECT COUNT(*) FROM group_group_map").fetchone()[0] == 0
    migrated.close()


def test_a_database_made_before_product_privileges_gets_their_columns(new_db):
    """The per-product privileges migration: group controls gain
    editcomponents, editbugs and canconfirm, off for the controls kept."""
    def undo(conn):
        conn.execute("INSERT INTO classifications (id, name) VALUES (1, 'Unclassified')")
        conn.execute("INSERT INTO products (name, classification_id) VALUES ('Kept', 1)")
        conn.execute("INSERT INTO groups (name, description, is_bug_group) VALUES"
                     " ('Partners', 'Partners', 1)")
        conn.execute("INSERT INTO group_controls (group_id, product_id, membercontrol,"
                     " othercontrol) SELECT g.id, p.id, 1, 0 FROM groups g, products p"
                     " WHERE g.name = 'Partners'")
        for column in ("editcomponents", "editbugs", "canconfirm"):
            conn.execute(f"ALTER TABLE group_controls DROP COLUMN {column}")
    version = next(number for number, step in schema.MIGRATIONS.items()
                   if step is schema._product_privileges)
    migrated = _migrated(new_db, version, undo)
    with migrated.transaction() as conn:
        rows = conn.execute("SELECT membercontrol, editcomponents, editbugs, canconfirm"
                            " FROM group_controls").fetchall()
        assert rows and all(tuple(row) == (1, 0, 0, 0) for row in rows)
    migrated.close()


def test_a_database_made_before_group_grants_gets_their_table(new_db):
    """The group grants migration: group_grants, the bless and visibility
    grants between groups."""
    migrated = _migrated(new_db, _step_making("group_grants"),
                         lambda conn: conn.execute("DROP TABLE group_grants"))
    with migrated.transaction() as conn:
        assert conn.execute("SELECT COUNT(*) FROM group_grants").fetchone()[0] == 0
    migrated.close()


def test_a_database_made_before_admin_visibility_grants_gets_them(new_db):
    """The admin group gets a visibility grant on every other group (and
    none on itself); a grant the database holds already stays one."""
    version = next(number for number, step in schema.MIGRATIONS.items()
                   if step is schema._admin_sees_every_group)

    def undo(conn):
        conn.execute("DELETE FROM group_grants")
        for name in ("admin", "editusers", "older"):
            if conn.execute("SELECT 1 FROM groups WHERE name = ?", (name,)).fetchone() is None:
                conn.execute("INSERT INTO groups (name, description, is_bug_group, user_regexp,"
                             " is_active) VALUES (?, 'A group', 1, '', 1)", (name,))
        conn.execute("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                     " SELECT a.id, o.id, 2 FROM groups a, groups o"
                     " WHERE a.name = 'admin' AND o.name = 'older'")
    migrated = _migrated(new_db, version, undo)
    with migrated.transaction() as conn:
        seen = [row[0] for row in conn.execute(
            "SELECT g.name FROM group_grants gg JOIN groups a ON a.id = gg.member_id"
            " JOIN groups g ON g.id = gg.grantor_id WHERE a.name = 'admin'"
            " AND gg.grant_type = 2 ORDER BY g.name")]
        others = [row[0] for row in conn.execute(
            "SELECT name FROM groups WHERE name <> 'admin' ORDER BY name")]
        assert seen == others and {"editusers", "older"} <= set(seen)
        assert conn.execute("SELECT COUNT(*) FROM group_grants WHERE member_id <> (SELECT id"
                            " FROM groups WHERE name = 'admin')").fetchone()[0] == 0
    migrated.close()


def test_placeholders_stand_one_for_each_value_of_a_list_or_an_iterator(new_db):
    database = open_database(new_db())
    database.initialize()
    values = [3, 1, 2]
    with database.transaction() as conn:
        for given in (values, tuple(values), iter(values), (value for value in values)):
            marks = dbmodule.placeholders(given)
            assert marks == "?, ?, ?"
            found = conn.execute(f"SELECT value FROM (SELECT 1 AS value UNION SELECT 2"
                                 f" UNION SELECT 4) AS v WHERE value IN ({marks}) ORDER BY value",
                                 values).fetchall()
            assert [row[0] for row in found] == [1, 2]
        assert dbmodule.placeholders([7]) == "?"
    database.close()


def test_a_database_made_before_admin_in_system_groups_gets_the_grants_and_keeps_its_rows(
        new_db):
    """Version 29: on an installation made as earlier versions made it (the
    first administrator a direct member and blesser of every group, no
    group a member of any system group), the admin group becomes a member,
    blesser and viewer of every system group and the reference's
    inherited_by links are made; accounts get the memberships those give
    (derived), and every row held before stays, the first
    administrator's direct ones among them. Run twice, it adds nothing."""
    from datetime import datetime, timezone

    from bugsvc.accounts.caller import load_caller
    from bugsvc.catalogue import install

    version = next(number for number, step in schema.MIGRATIONS.items()
                   if step is schema._admin_in_system_groups)
    before = {}

    def add_user(conn, login, groups=()):
        user_id = conn.execute("INSERT INTO users (login, real_name, created_at) VALUES"
                               " (?, '', '2026-01-01 00:00:00.000000') RETURNING id",
                               (login,)).fetchone()[0]
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " SELECT ?, id, 0, 2 FROM groups WHERE name = 'editbugs'", (user_id,))
        for name in groups:
            conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " SELECT ?, id, 0, 0 FROM groups WHERE name = ?", (user_id, name))

    def undo(conn):
        install.install_defaults(conn)
        install.create_admin(conn, "first@example.com", None,
                             datetime(2026, 1, 1, tzinfo=timezone.utc), test_product=False)
        # As version 28 left it: no inheritance, no bless grants, the first
        # administrator direct member and blesser of every group.
        conn.execute("DELETE FROM group_group_map")
        conn.execute("DELETE FROM group_grants WHERE grant_type = 1")
        conn.execute("DELETE FROM user_groups WHERE grant_type = 1")
        first = conn.execute("SELECT id FROM users WHERE login = 'first@example.com'"
                             ).fetchone()[0]
        conn.execute("DELETE FROM user_groups WHERE user_id = ? AND grant_type = 0", (first,))
        conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " SELECT ?, g.id, b.is_bless, 0 FROM groups g,"
                     " (SELECT 0 AS is_bless UNION ALL SELECT 1) b", (first,))
        add_user(conn, "later@example.com", ["admin"])        # made an admin afterwards
        add_user(conn, "keeper@example.com", ["tweakparams"])  # given on purpose
        add_user(conn, "sudoer@example.com", ["bz_sudoers"])
        for table, columns in (("user_groups", "user_id, group_id, is_bless, grant_type"),
                               ("group_group_map", "member_id, grantor_id"),
                               ("group_grants", "member_id, grantor_id, grant_type")):
            before[table] = {tuple(row) for row in conn.execute(
                f"SELECT {columns} FROM {table}")}

    migrated = _migrated(new_db, version, undo)
    system = [name for name, _, _ in install.SYSTEM_GROUPS if name != "admin"]
    with migrated.transaction(write=True) as conn:
        ids = {name: group_id for group_id, name in conn.execute("SELECT id, name FROM groups")}
        users = {login: user_id for user_id, login in conn.execute("SELECT id, login FROM users")}
        after = {}
        for table, columns in (("user_groups", "user_id, group_id, is_bless, grant_type"),
                               ("group_group_map", "member_id, grantor_id"),
                               ("group_grants", "member_id, grantor_id, grant_type")):
            after[table] = {tuple(row) for row in conn.execute(
                f"SELECT {columns} FROM {table}")}
            assert before[table] <= after[table]
        links = {(ids["admin"], ids[name]) for name in system} | {
            (ids[member], ids[grantor]) for grantor, members in install.INHERITED_BY.items()
            for member in members}
        assert after["group_group_map"] == links
        assert after["group_grants"] - before["group_grants"] == {
            (ids["admin"], ids[name], 1) for name in system}
        assert {(ids["admin"], ids[name], 2) for name in system} <= after["group_grants"]
        # The first administrator keeps its direct rows; the account made an
        # administrator later is now a member of every system group
        # (through admin) and may bless them.
        first_direct = {(group_id, is_bless) for user_id, group_id, is_bless, grant
                        in after["user_groups"] if user_id == users["first@example.com"]
                        and grant == 0}
        assert first_direct == {(group_id, is_bless) for group_id in ids.values()
                                for is_bless in (0, 1)}
        later = load_caller(conn, users["later@example.com"])
        assert set(system) <= set(later.group_names)
        assert all(later.can_bless(ids[name]) for name in system)
        derived = {(users[login], ids[name], 0, 1) for login, name in (
            ("sudoer@example.com", "bz_sudo_protect"), ("keeper@example.com", "bz_canusewhines"),
            ("later@example.com", "tweakparams"))}
        assert derived <= after["user_groups"] - before["user_groups"]
        keeper = load_caller(conn, users["keeper@example.com"])
        assert "tweakparams" in keeper.group_names and "editusers" not in keeper.group_names
        # A second run adds nothing.
        schema._admin_in_system_groups(conn)
        for table, columns in (("user_groups", "user_id, group_id, is_bless, grant_type"),
                               ("group_group_map", "member_id, grantor_id"),
                               ("group_grants", "member_id, grantor_id, grant_type")):
            assert {tuple(row) for row in conn.execute(
                f"SELECT {columns} FROM {table}")} == after[table]
    migrated.close()


def test_json_built_in_sql_reads_back_as_written(db):
    """Dialect.json_object, json_array and json_value nest on both engines,
    and as_text gives the object's text; a key that is not a plain word is
    refused before any SQL is written."""
    d = db.dialect
    built = d.as_text(d.json_object([
        ("number", "3"), ("none", "NULL"), ("text", "'it''s'"),
        ("list", d.json_array(["1", "'two'"])), ("raw", d.json_value("'[5, {\"a\": null}]'")),
        ("inner", d.json_object([("flag", d.json_value("'false'"))]))]))
    with db.transaction() as conn:
        text = conn.execute(f"SELECT {built}").fetchone()[0]
    assert orjson.loads(text) == {"number": 3, "none": None, "text": "it's", "list": [1, "two"],
                                  "raw": [5, {"a": None}], "inner": {"flag": False}}
    with pytest.raises(ValueError):
        d.json_object([("x', 1) --", "1")])
