"""A test's database put back as an older schema version left it, then
moved forward as a server starting on it would."""

from contextlib import contextmanager

from bugsvc.store import schema
from bugsvc.store.location import open_database


@contextmanager
def migrated_from(db, db_path, version, undo):
    """The test's database put back as schema version `version` left it by
    undo(conn), then opened again and brought up to date: yields a
    connection in a read transaction on it."""
    with db.transaction(write=True) as conn:
        undo(conn)
        conn.dialect.set_schema_version(conn, version)
    db.close()
    reopened = open_database(db_path)
    try:
        assert reopened.initialize() is False
        with reopened.transaction() as conn:
            assert conn.dialect.schema_version(conn) == schema.SCHEMA_VERSION
            yield conn
    finally:
        reopened.close()
