"""The database file: schema version, migrations, refusing files we cannot use."""

import sqlite3

import pytest

from bugsvc.store import db as dbmodule
from bugsvc.store.db import Database, SchemaError, split_script


def stored_version(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_new_file_gets_schema_and_its_version(tmp_path):
    path = tmp_path / "new.sqlite"
    database = Database(path)
    assert database.initialize() is True
    database.close()
    assert stored_version(path) == dbmodule.SCHEMA_VERSION >= 1
    conn = sqlite3.connect(path)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert {"users", "groups", "params", "audit_log", "products"} <= tables


def test_second_initialize_keeps_rows(tmp_path):
    database = Database(tmp_path / "x.sqlite")
    database.initialize()
    with database.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'a@example.com')")
    assert database.initialize() is False
    with database.transaction() as conn:
        assert conn.execute("SELECT value FROM params").fetchall()[0][0] == "a@example.com"
    database.close()


def test_migration_moves_older_database_forward_without_losing_rows(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    database = Database(path)
    database.initialize()
    with database.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'keep@example.com')")
    database.close()
    current = dbmodule.SCHEMA_VERSION

    def mark_maintainer_moved(conn):
        conn.execute("UPDATE params SET value = value || ' (moved)' WHERE name = 'maintainer'")

    monkeypatch.setattr(dbmodule, "SCHEMA_VERSION", current + 2)
    monkeypatch.setattr(dbmodule, "MIGRATIONS", {
        current + 1: "CREATE TABLE gadgets (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
                     "INSERT INTO gadgets (name) SELECT value FROM params"
                     " WHERE name = 'maintainer';",
        current + 2: mark_maintainer_moved,
    })
    reopened = Database(path)
    assert reopened.initialize() is False
    with reopened.transaction() as conn:
        assert conn.execute("SELECT name FROM gadgets").fetchall()[0][0] == "keep@example.com"
        assert conn.execute("SELECT value FROM params WHERE name = 'maintainer'").fetchone()[0] \
            == "keep@example.com (moved)"
    reopened.close()
    assert stored_version(path) == current + 2


def test_failing_migration_leaves_file_untouched(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    database = Database(path)
    database.initialize()
    database.close()
    current = dbmodule.SCHEMA_VERSION
    monkeypatch.setattr(dbmodule, "SCHEMA_VERSION", current + 2)
    monkeypatch.setattr(dbmodule, "MIGRATIONS", {
        current + 1: "CREATE TABLE gadgets (id INTEGER PRIMARY KEY);",
        current + 2: "INSERT INTO no_such_table (x) VALUES (1);",
    })
    reopened = Database(path)
    with pytest.raises(sqlite3.OperationalError):
        reopened.initialize()
    with reopened.transaction() as conn:
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'gadgets'").fetchone() is None
    reopened.close()
    assert stored_version(path) == current


def test_missing_migration_step_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    Database(path).initialize()
    monkeypatch.setattr(dbmodule, "SCHEMA_VERSION", dbmodule.SCHEMA_VERSION + 1)
    monkeypatch.setattr(dbmodule, "MIGRATIONS", {})
    with pytest.raises(SchemaError, match="No migration"):
        Database(path).initialize()


def test_newer_database_is_refused_with_clear_message(tmp_path):
    path = tmp_path / "future.sqlite"
    database = Database(path)
    database.initialize()
    database.connection().execute(f"PRAGMA user_version = {dbmodule.SCHEMA_VERSION + 5}")
    database.close()
    with pytest.raises(SchemaError) as caught:
        Database(path).initialize()
    message = str(caught.value)
    assert f"schema version {dbmodule.SCHEMA_VERSION + 5}" in message
    assert "newer" in message and "Upgrade bugsvc" in message
    assert stored_version(path) == dbmodule.SCHEMA_VERSION + 5


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="not a bugsvc database"):
        Database(path).initialize()


def test_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(SchemaError, match="not a usable SQLite database"):
        Database(path).initialize()
    assert path.read_text().startswith("these are my notes")


def test_split_script_keeps_statements_whole():
    script = ("-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT 'p;q');\n\n"
              "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  UPDATE a SET x = 'r';\nEND;\n")
    statements = split_script(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")


def test_version_4_database_gets_the_notification_tables(tmp_path):
    path = tmp_path / "v4.sqlite"
    database = Database(path)
    database.initialize()
    conn = database.connection()
    for table in ("email_settings", "user_watch", "email_bug_ignore", "outbox_messages",
                  "outbox_events", "outbox_locks", "webhooks", "account_tokens"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 4")
    database.close()

    migrated = Database(path)
    assert migrated.initialize() is False
    assert migrated.version() == 5
    with migrated.transaction() as conn:
        rows = conn.execute("SELECT name, owner FROM outbox_locks").fetchall()
        assert [tuple(row) for row in rows] == [("expand", None)]
        assert conn.execute("SELECT COUNT(*) FROM webhooks").fetchone()[0] == 0
    migrated.close()
