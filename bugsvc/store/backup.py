"""Online backups: a consistent copy of the database, taken with SQLite's
backup API while the server keeps running (`bugsvc backup PATH`).

The copy is made in one step inside one read transaction, so it is the
database as of one moment: every write committed before that moment is in
it, none after, and none in part. In WAL mode a reader blocks no writer, so
the server keeps answering while the copy is made. The copy is checked
(`PRAGMA integrity_check`), switched to a rollback journal so it is one
self-contained file, and only then moved to PATH, so PATH never holds half a
backup. The database is only read: no schema is created or migrated.
"""

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .db import BUSY_TIMEOUT_MS


class BackupError(Exception):
    """The backup could not be made; nothing was written to the target."""


@dataclass(frozen=True)
class BackupResult:
    """What was copied: the target file, its size, schema version and bug count."""
    path: Path
    size: int
    schema_version: int
    bugs: int


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _check_paths(source: Path, target: Path) -> None:
    if not source.is_file():
        raise BackupError(f"there is no database at {source}.")
    for live in (source, Path(f"{source}-wal"), Path(f"{source}-shm"), Path(f"{source}-journal")):
        if _same_file(live, target) or live.resolve() == target.resolve():
            raise BackupError(f"{target} is the live database (or one of its files); choose "
                              "another path for the backup.")
    if target.is_dir():
        raise BackupError(f"{target} is a directory; give the path of the backup file.")
    if not target.parent.is_dir():
        raise BackupError(f"the directory {target.parent} does not exist.")


def _open_source(source: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(str(source), timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{source} is not a usable SQLite database ({exc}).") from None
    if version < 1:
        conn.close()
        raise BackupError(f"{source} is not a bugsvc database (it has no schema version).")
    return conn


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def backup(db_path: str | os.PathLike[str],
           target_path: str | os.PathLike[str]) -> BackupResult:
    """Copy the database at `db_path` to `target_path` (replaced if it exists).

    Returns a BackupResult. Errors: BackupError when the database is missing
    or not a bugsvc database, the target is the database itself, a directory
    or in a missing directory, or the copy fails its integrity check; the
    target is then left as it was.
    """
    source, target = Path(db_path), Path(target_path)
    _check_paths(source, target)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    src = _open_source(source)
    dest: sqlite3.Connection | None = None
    try:
        partial.unlink(missing_ok=True)
        dest = sqlite3.connect(str(partial))
        src.backup(dest)                       # pages=-1: everything in one step, one snapshot
        dest.execute("PRAGMA journal_mode = DELETE")
        check = dest.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            raise BackupError("the copy failed its integrity check: "
                              + "; ".join(row[0] for row in check[:5]))
        version = dest.execute("PRAGMA user_version").fetchone()[0]
        bugs = dest.execute("SELECT COUNT(*) FROM bugs").fetchone()[0]
        dest.close()
        dest = None
        _sync(partial)
        os.replace(partial, target)
        _sync(target.parent)
    except sqlite3.Error as exc:
        raise BackupError(f"the copy failed: {exc}.") from None
    except OSError as exc:
        raise BackupError(f"the copy could not be written: {exc}.") from None
    finally:
        src.close()
        if dest is not None:
            dest.close()
        partial.unlink(missing_ok=True)
    return BackupResult(target, target.stat().st_size, version, bugs)
