"""Checks made before serving or running a command, so that a setting that
cannot work is refused at once with a message saying what to change, instead
of a server that starts and then answers "internal error" to every write.

Each check raises StartError (the command line prints it and exits with
status 2) and changes nothing: no database is created and no password
printed when a check fails.
"""

import errno
import os
import tempfile
from pathlib import Path

from ..store.location import Location, open_database
from ..store.schema import SchemaError
from . import workers


class StartError(Exception):
    """A setting that cannot work; str() is the message for the user."""


# SQLite keeps these beside the database (write-ahead log, shared memory,
# rollback journal); it must be able to create, write and remove them.
_COMPANIONS = ("-wal", "-shm", "-journal")


def check_database(location, must_exist):
    """Check that this process can use the database at `location` (a
    Location, or a path or URL).

    must_exist: False for the server, which creates a missing file (its
    directory must exist); True for the commands that work on an existing
    database (api-key, parameters), which never create one.
    Errors: StartError for a missing directory, a path that is a directory,
    a missing or empty file when one must exist, and a file or directory this
    process cannot write: permission bits as os.access reads them, and then
    an actual open for writing (which also fails for root on a read-only file
    system or an immutable file); for a database that is no file, what
    require_database says when one must exist.
    """
    location = Location.of(location)
    if not location.is_file:
        if must_exist:
            require_database(location)
        return
    path = location.text
    db = location.path
    folder = db.parent if str(db.parent) else Path(".")
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise StartError(f"cannot use the database {path}: the directory {folder} {what}. "
                         "Create it first, or choose another file with --db.")
    if db.is_dir():
        raise StartError(f"cannot use the database {path}: it is a directory. Give the path "
                         "of the database file with --db.")
    if must_exist:
        require_database(location)
    for file in [db] + [Path(f"{db}{suffix}") for suffix in _COMPANIONS]:
        if file.exists():
            _check_writable_file(path, file)
    _check_writable_folder(path, folder)


def require_database(location):
    """Errors: StartError when there is no bugsvc database at `location` (a
    Location, or a path or URL): no file, or an empty one; a database on a
    server that cannot be reached or holds no bugsvc schema. The commands
    that need one never create it."""
    location = Location.of(location)
    if not location.is_file:
        _require_on_server(location)
        return
    path = location.text
    db = location.path
    if not db.is_file() or db.stat().st_size == 0:
        state = "is empty" if db.is_file() else "does not exist"
        raise StartError(f"there is no database at {path} (the file {state}). This command "
                         "works on an existing database and never creates one: give --db (or "
                         "BUGSVC_DB) the server's database file, or start the server once to "
                         "create it.")


def _require_on_server(location):
    database = open_database(location)
    try:
        version = database.version()
    except SchemaError:
        raise
    except Exception as exc:           # noqa: BLE001 - the driver's reason, in one line
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StartError(f"cannot use the database {database}: {reason}") from None
    finally:
        database.close()
    if version == 0:
        raise StartError(f"there is no bugsvc database at {database} (it holds no bugsvc "
                         "schema). This command works on an existing database and never "
                         "creates one: give --db (or BUGSVC_DB) the server's database, or start "
                         "the server once to create it.")


def _user():
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        return "this user"


def _check_writable_file(path, file):
    reason = None
    if not os.access(file, os.R_OK | os.W_OK):
        reason = "no read and write permission"
    else:
        try:
            os.close(os.open(file, os.O_RDWR))
        except OSError as exc:
            reason = exc.strerror or str(exc)
    if reason:
        raise StartError(f"cannot use the database {path}: {file} is read-only for {_user()} "
                         f"({reason}). bugsvc writes to it on every change and sign-in: make "
                         "it writable, or choose another file with --db.")


def _check_writable_folder(path, folder):
    reason = None
    if not os.access(folder, os.W_OK | os.X_OK):
        reason = "no write permission"
    else:
        try:
            handle, probe = tempfile.mkstemp(prefix=".bugsvc-write-check-", dir=folder)
            os.close(handle)
            os.unlink(probe)
        except OSError as exc:
            reason = exc.strerror or str(exc)
    if reason:
        raise StartError(f"cannot use the database {path}: the directory {folder} is read-only "
                         f"for {_user()} ({reason}). SQLite creates its write-ahead log beside "
                         "the database, so that directory must be writable; or choose another "
                         "file with --db.")


def claim_address(host, port):
    """A socket bound to host:port, not yet listening: the address is the
    server's from here on, while clients are still refused until
    start_listening() (so nobody waits on a server still preparing).

    Errors: StartError naming the address when it cannot be had: in use,
    not an address of this machine, a port below 1024 without the right.
    """
    try:
        return workers.bound_socket(host, port)
    except OSError as exc:
        raise _address_error(host, port, exc) from None


def start_listening(sock, host, port):
    """Let clients connect to the socket claim_address() gave.
    Errors: StartError as claim_address (the socket is then closed)."""
    try:
        sock.listen(workers.BACKLOG)
    except OSError as exc:
        sock.close()
        raise _address_error(host, port, exc) from None


def _address_error(host, port, exc):
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        reason = ("the address is already in use (another bugsvc or another program listens "
                  "there); stop it, or choose another port with --port")
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = ("permission denied (ports below 1024 need special rights); choose a port "
                  "above 1024 with --port")
    else:
        reason = f"{exc.strerror or exc}; check --host and --port"
    return StartError(f"cannot listen on {shown}: {reason}.")


def workers_warning(count):
    """A warning line when `count` serving processes exceed the cores this
    process may run on (they then share cores and add no speed), else None."""
    cores = workers.usable_cores()
    if count > cores:
        return (f"bugsvc: warning: --workers {count} is more than the {cores} "
                f"core{'s' if cores != 1 else ''} this process may use; the extra workers "
                "share cores and add no speed (one per core is the most that helps).")
    return None
