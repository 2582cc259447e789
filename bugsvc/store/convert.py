"""Copying a whole database to another engine (`bugsvc convert-db --to`):
from an SQLite file to PostgreSQL, back, or to another database of the same
engine.

The source is read in one transaction (one moment of it: stop the servers
first, or writes made meanwhile stay behind); the target must be empty (no
table, or an empty bugsvc schema) and is written in one transaction with
the schema of this bugsvc: every table's rows with their ids, then the id
sequences set past the highest id. Before that transaction commits, every
table's row count and checksum (of its rows as the schema's types read
them, in any order) are compared on both sides; any difference rolls the
whole copy back, so the target is either a verified copy or untouched.
"""

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from .db import Database
from .dialect import Connection
from .location import Location, open_database
from .schema import SCHEMA_VERSION, SchemaError, bring_up_to_date, schema_sql


# The counters of catalogue, credential and bug changes (cache.py) and the
# bugs' revisions (bugs/object_cache.py) are copied after every other table,
# whose inserts move the target's own counters.
_LAST = ("catalog_generation", "credential_generation", "bug_generation", "bug_revisions")
BATCH = 2000


class ConvertError(Exception):
    """The copy could not be made; the target was left as it was."""


class ConvertProgress(Protocol):
    """What convert() tells of its progress (Progress, or a caller's own)."""

    def start(self, tables: Mapping[str, int]) -> None:
        """The copy begins: {table: rows} of what it copies."""

    def advance(self, table: str, rows: int) -> None:
        """`rows` more rows of `table` were copied."""

    def verifying(self, table: str) -> None:
        """The copy of `table` is being checked."""

    def done(self) -> None:
        """Every table was copied and checked."""


@dataclass
class TableCopy:
    name: str
    rows: int
    checksum: str


@dataclass
class ConvertResult:
    source: str
    target: str
    schema_version: int
    tables: list[TableCopy] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(table.rows for table in self.tables)


def declared_types() -> dict[str, dict[str, str]]:
    """{table: {column: 'INTEGER' | 'TEXT' | 'REAL' | 'BLOB'}} as schema.sql declares them."""
    from .sqlite import DIALECT, SqliteConnection
    conn = sqlite3.connect(":memory:", factory=SqliteConnection)
    try:
        conn.executescript(schema_sql())
        types: dict[str, dict[str, str]] = {}
        for table in DIALECT.tables(conn):
            types[table] = {row[1]: (row[2] or "BLOB").upper() for row in conn.execute(
                "SELECT * FROM pragma_table_info(?) ORDER BY cid", (table,))}
        return types
    finally:
        conn.close()


def _converter(kind: str, table: str, column: str) -> Callable[[Any], Any]:
    """A function giving a stored value as the declared type `kind` holds it
    (SQLite stores what it is given; PostgreSQL only the declared type)."""
    def convert(value: Any) -> Any:
        if value is None:
            return None
        if kind == "INTEGER":
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, int):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
                return int(value)
        elif kind == "REAL":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(value)
                except ValueError:
                    pass
        elif kind == "TEXT":
            if isinstance(value, str):
                return value
            if isinstance(value, (int, float)):
                return str(value)
            if isinstance(value, (bytes, memoryview)):
                return bytes(value).decode("utf-8")
        else:
            if isinstance(value, (bytes, memoryview)):
                return bytes(value)
            if isinstance(value, str):
                return value.encode("utf-8")
        raise ConvertError(f"{table}.{column} holds {value!r}, which is not {kind}; "
                           "nothing was copied")
    return convert


class _Checksum:
    """A checksum of a multiset of rows: the sum of each row's hash, so the
    order the engines give rows in does not matter."""

    MODULUS = 2 ** 256

    def __init__(self) -> None:
        self.total = 0
        self.rows = 0

    def add(self, row: tuple[Any, ...]) -> None:
        digest = hashlib.sha256(repr(row).encode("utf-8", "surrogatepass")).digest()
        self.total = (self.total + int.from_bytes(digest, "big")) % self.MODULUS
        self.rows += 1

    def hexdigest(self) -> str:
        return f"{self.total:064x}"


def _is_empty(conn: Connection) -> bool:
    """True when the target holds no table, or a bugsvc schema without rows."""
    dialect = conn.dialect
    if not dialect.has_tables(conn):
        return True
    if dialect.schema_version(conn) == 0:
        return False
    for table in dialect.tables(conn):
        if table in _LAST:
            continue
        if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
            return False
    return True


def _read(conn: Connection, table: str, columns: Sequence[str],
          converters: Sequence[Callable[[Any], Any]],
          batch: int) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of `table` (converted to the declared types), in batches."""
    sql = f"SELECT {', '.join(columns)} FROM {table}"
    for rows in conn.dialect.stream(conn, sql, batch):
        yield [tuple(convert(value) for convert, value in zip(converters, row, strict=True))
               for row in rows]


def convert(source_location: object, target_location: object,
            progress: ConvertProgress | None = None, batch: int = BATCH) -> ConvertResult:
    """Copy the database at `source_location` into the empty one at
    `target_location` (see the module's docstring). progress: an object
    with start(tables: {name: rows}), advance(table, rows), verifying(table)
    and done(), or None.

    Returns a ConvertResult. Errors: ConvertError when the source holds no
    bugsvc database, or one of another schema version than this bugsvc's,
    the target is the source or is not empty, a value does not fit its
    column, or the copy does not verify; SchemaError when a database
    cannot be opened. The target is left as it was on every error.
    """
    source_at, target_at = Location.of(source_location), Location.of(target_location)
    source_path, target_path = source_at.path, target_at.path     # None: not a file
    if source_at.text == target_at.text or (
            source_path is not None and target_path is not None and target_path.exists()
            and os.path.samefile(source_path, target_path)):
        raise ConvertError("the target is the source database.")
    source = open_database(source_at)
    target_is_new_file = target_path is not None and not target_path.exists()
    target = open_database(target_at)
    try:
        try:
            return _convert(source, target, progress or _Silent(), batch)
        except (ConvertError, SchemaError):
            raise
        except Exception as exc:
            if not _is_database_error(exc):
                raise
            reason = " ".join(str(exc).split())
            raise ConvertError(f"the copy failed ({reason}); nothing was copied.") from None
    except BaseException:
        target.close()
        if target_is_new_file:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{target_at.text}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        source.close()
        target.close()


def _is_database_error(exc: BaseException) -> bool:
    """True for an error of either engine's driver (the copy is refused)."""
    return isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith("psycopg")


def _convert(source: Database[Any], target: Database[Any], progress: ConvertProgress,
             batch: int) -> ConvertResult:
    types = declared_types()
    with source.transaction() as reading:
        version = reading.dialect.schema_version(reading)
        if version == 0:
            raise ConvertError(f"there is no bugsvc database at {source}.")
        if version != SCHEMA_VERSION:
            raise ConvertError(f"{source} has schema version {version}, this bugsvc "
                               f"{SCHEMA_VERSION}: start this bugsvc's server on it once "
                               "(which moves it forward), then convert it.")
        tables = [table for table in reading.dialect.tables(reading) if table in types]
        tables = sorted(tables, key=lambda name: (name in _LAST, name))
        counts = {table: reading.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                  for table in tables}
        with target.bulk_transaction() as writing:
            if not _is_empty(writing):
                raise ConvertError(f"{target} is not empty; convert into a new, empty "
                                   "database only.")
            if writing.dialect.schema_version(writing) == 0:
                bring_up_to_date(writing, str(target))
            missing = set(tables) - set(writing.dialect.tables(writing))
            if missing:
                raise ConvertError(f"{target} lacks the tables {sorted(missing)}.")
            progress.start(counts)
            result = ConvertResult(str(source), str(target), version)
            for table in tables:
                columns = list(types[table])
                converters = [_converter(types[table][column], table, column)
                              for column in columns]
                expected = _Checksum()
                writing.execute(f"DELETE FROM {table}")
                for rows in _read(reading, table, columns, converters, batch):
                    for row in rows:
                        expected.add(row)
                    writing.dialect.bulk_insert(writing, table, columns, rows)
                    progress.advance(table, len(rows))
                result.tables.append(TableCopy(table, expected.rows, expected.hexdigest()))
            writing.dialect.reset_ids(writing, tables)
            # An index that trails the comments (SQLite) is given them all
            # now, as the one that keeps up with each write was.
            while writing.dialect.index_comment_text(writing, batch):
                pass
            for copied in result.tables:
                progress.verifying(copied.name)
                columns = list(types[copied.name])
                converters = [_converter(types[copied.name][column], copied.name, column)
                              for column in columns]
                stored = _Checksum()
                for rows in _read(writing, copied.name, columns, converters, batch):
                    for row in rows:
                        stored.add(row)
                if (stored.rows, stored.hexdigest()) != (copied.rows, copied.checksum):
                    raise ConvertError(
                        f"the copy of {copied.name} does not verify: {stored.rows} rows"
                        f" (checksum {stored.hexdigest()[:16]}) where the source has "
                        f"{copied.rows} (checksum {copied.checksum[:16]}); nothing was copied.")
    progress.done()
    return result


class _Silent:
    def start(self, tables: Mapping[str, int]) -> None:
        pass

    def advance(self, table: str, rows: int) -> None:
        pass

    def verifying(self, table: str) -> None:
        pass

    def done(self) -> None:
        pass


class Progress:
    """The copy's progress on a stream (stderr): a bar redrawn in place on a
    terminal; on anything else, plain lines (one per table, then one per
    tenth of the rows of a large table)."""

    WIDTH = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.terminal = hasattr(stream, "isatty") and stream.isatty()
        self.total = 0
        self.copied = 0
        self.table_rows: dict[str, int] = {}
        self.table_done: dict[str, int] = {}
        self._reported: dict[str, int] = {}     # tenths reported, per table; "verifying"

    def start(self, tables: Mapping[str, int]) -> None:
        self.table_rows = dict(tables)
        self.total = sum(tables.values())
        self._line(f"Copying {self.total} rows of {len(tables)} tables.", final=True)

    def advance(self, table: str, rows: int) -> None:
        self.copied += rows
        done = self.table_done[table] = self.table_done.get(table, 0) + rows
        if self.terminal:
            share = self.copied / self.total if self.total else 1.0
            filled = int(share * self.WIDTH)
            self._line(f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {share:4.0%} "
                       f"{self.copied}/{self.total} rows  {table}")
            return
        of = self.table_rows.get(table, 0)
        tenth = min(10, 10 * done // of) if of else 10
        if tenth > self._reported.get(table, -1) and (tenth == 10 or of >= 10 * 2000):
            self._reported[table] = tenth
            self._line(f"{table}: {done}/{of} rows" + (" copied" if done >= of else ""),
                       final=True)

    def verifying(self, table: str) -> None:
        if self.terminal:
            self._line(f"Verifying {table} (row count and checksum)")
        elif not self._reported.get("verifying"):
            self._reported["verifying"] = 1
            self._line("Verifying every table's row count and checksum.")

    def done(self) -> None:
        self._line(f"Copied and verified {self.copied} rows.", final=True)

    def _line(self, text: str, final: bool = False) -> None:
        if self.terminal:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
