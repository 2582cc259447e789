"""Connections, transactions and the schema's version.

One connection per thread (waitress serves each request on a worker thread;
a connection is never shared between threads). One transaction per service
call: `BEGIN IMMEDIATE` for writes, so concurrent writers queue on the busy
timeout instead of failing, and a plain `BEGIN` for reads, so a call sees one
consistent snapshot. Services never commit.
"""

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# Installed wheels carry the schema inside the package; a checkout has it at the top.
SCHEMA_PATHS = (_HERE / "schema.sql", _HERE.parent / "schema.sql")

# Version written by schema.sql. A later schema change adds an entry to
# MIGRATIONS (version -> SQL that moves data forward) and bumps this number.
SCHEMA_VERSION = 1
MIGRATIONS = {}

BUSY_TIMEOUT_MS = 30000


def schema_sql():
    """Return the text of schema.sql."""
    for path in SCHEMA_PATHS:
        if path.exists():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError("schema.sql not found next to the bugsvc package")


class Database:
    """The SQLite file behind the service."""

    def __init__(self, path):
        self.path = str(path)
        self._local = threading.local()

    def connect(self):
        """Open and configure a new connection (autocommit mode; we issue BEGIN)."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def connection(self):
        """This thread's connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.connect()
            self._local.conn = conn
        return conn

    def close(self):
        """Close this thread's connection, if any."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self, write=False):
        """Yield this thread's connection inside one transaction.

        Commits when the block ends normally; rolls back on any exception.
        """
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def version(self):
        """The schema version stored in the file (0 for an empty file)."""
        return self.connection().execute("PRAGMA user_version").fetchone()[0]

    def initialize(self):
        """Create or migrate the schema. Returns True when the file was empty.

        An empty file gets schema.sql and its version; an older version is
        moved forward by MIGRATIONS, one step at a time, in one transaction
        each. Data is never dropped.
        """
        conn = self.connection()
        conn.execute("PRAGMA journal_mode = WAL")
        current = self.version()
        if current == 0:
            conn.executescript("BEGIN IMMEDIATE;\n" + schema_sql()
                               + f"\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")
            return True
        if current > SCHEMA_VERSION:
            raise RuntimeError(f"database schema version {current} is newer than this bugsvc "
                               f"({SCHEMA_VERSION}); upgrade bugsvc")
        for version in range(current + 1, SCHEMA_VERSION + 1):
            conn.executescript("BEGIN IMMEDIATE;\n" + MIGRATIONS[version]
                               + f"\nPRAGMA user_version = {version};\nCOMMIT;")
        return False


def placeholders(values):
    """'?, ?, ?' for an IN list of `values` (at least one)."""
    return ", ".join("?" for _ in values)
