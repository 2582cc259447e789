"""Where the database is, and which engine keeps it: decided once, here.

A --db value (or BUGSVC_DB) that is a `postgresql://` (or `postgres://`)
URL names a PostgreSQL database; anything else an SQLite file's path. The
command line parses it once into a Location (Config.database); everything
else asks the Location or its engine's capabilities (is_file, can_backup,
writers_take_turns: db.py), never which engine it is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from .db import Database

POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
SQLITE, POSTGRESQL = "sqlite", "postgresql"


@dataclass(frozen=True)
class Location:
    """A database's location as given (`text`: an SQLite file's path or a
    PostgreSQL URL) and the engine that keeps it (`engine_name`)."""

    text: str
    engine_name: str

    @classmethod
    def of(cls, value: object) -> Location:
        """`value` as a Location: a Location stays itself; a path or text is
        parsed (see the module's docstring)."""
        if isinstance(value, cls):
            return value
        text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
        engine = POSTGRESQL if text.lower().startswith(POSTGRESQL_SCHEMES) else SQLITE
        return cls(text, engine)

    @property
    def engine(self) -> type[Database[Any]]:
        """The Database class of the engine (db.py's subclass)."""
        if self.engine_name == POSTGRESQL:
            from .postgres.database import PostgresDatabase
            return PostgresDatabase
        from .sqlite import SqliteDatabase
        return SqliteDatabase

    @property
    def is_file(self) -> bool:
        """True when the database is a file of this host (`path`)."""
        return self.engine.is_file

    @property
    def path(self) -> Path | None:
        """The database file's Path, or None when it is no file."""
        return Path(self.text) if self.is_file else None

    @property
    def shown(self) -> str:
        """The location as messages and logs show it (no password)."""
        return self.engine.shown(self.text)

    def __str__(self) -> str:
        return self.text


def open_database(location: object, writers_lock_path: str | None = None,
                  pool_size: int | None = None, replicas: Sequence[object] = (),
                  replica_max_lag: float | None = None) -> Database[Any]:
    """The Database at `location` (a Location, or a path or URL to parse),
    of its engine. Nothing is opened until first use. writers_lock_path: the
    lock file the worker processes of one service take turns writing on
    (engines whose writers take turns). pool_size: the most connections
    this process opens (engines that pool them). replicas: read replicas'
    locations, replica_max_lag: seconds one may be behind (db.Database).
    Errors: SchemaError when the engine's driver is not installed, or
    replicas are given to an engine that has none."""
    location = Location.of(location)
    for replica in replicas:
        if Location.of(replica).engine_name != location.engine_name:
            from .schema import SchemaError
            raise SchemaError("a read replica (--db-replica) is a streaming replica of a "
                              "PostgreSQL --db, given by its postgresql:// URL, not "
                              f"'{Location.of(replica).shown}'")
    return location.engine(location.text, writers_lock_path=writers_lock_path,
                           pool_size=pool_size, replicas=tuple(str(r) for r in replicas),
                           replica_max_lag=replica_max_lag)
