"""Command line: serve, create an API key, read or change parameters, back up. `bugsvc.py` (and the `bugsvc`
console command) pass argv and the environment in; nothing here reads them on
its own.

Every option has a flag, an environment variable and a default; a flag beats
the environment, which beats the default.
"""

import argparse
import ipaddress
import logging
import os
import re
import secrets
import signal
import sys
import threading
from datetime import datetime, timezone

from . import __version__
from .accounts import auth
from .store import audit, backup, install
from .serving import server_errors, startup, workers
from .catalogue import settings
from .accounts.caller import ANONYMOUS
from .web.client_address import parse_networks
from .config import (Config, DEFAULT_DB, DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT,
                     DEFAULT_THREADS)
from .api.context import Context
from .store.db import Database, SchemaError
from .errors import ServiceError
from .services import instance

log = logging.getLogger("bugsvc")
DEFAULT_ADMIN_EMAIL = "admin@example.com"
MIN_PASSWORD_LENGTH = 8          # the reference's minimum length of a password
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


class UsageError(Exception):
    """A bad option value: reported in one line, exit status 2."""


def _add_common_options(parser, inherited):
    """The options of serving: where to listen, the database, the first
    administrator."""
    _add_listen_options(parser, inherited)
    _add_database_option(parser, inherited)
    _add_admin_options(parser, inherited)


def _inherited(inherited):
    # In a subcommand the options default to SUPPRESS, so a value given before
    # the subcommand (`bugsvc --db x api-key ...`) is not overwritten.
    return argparse.SUPPRESS if inherited else None


def _add_listen_options(parser, inherited):
    parser.add_argument("--host", default=_inherited(inherited),
                        help=f"address to listen on (env BUGSVC_HOST, default {DEFAULT_HOST})")
    parser.add_argument("--port", default=_inherited(inherited),
                        help=f"port; 0 picks a free one (env BUGSVC_PORT, default {DEFAULT_PORT})")


def _add_database_option(parser, inherited):
    parser.add_argument("--db", default=_inherited(inherited),
                        help=f"SQLite database file (env BUGSVC_DB, default ./{DEFAULT_DB})")


def _add_admin_options(parser, inherited):
    parser.add_argument("--admin-email", default=_inherited(inherited),
                        help="login of the first administrator, created on an empty database "
                             f"(env BUGSVC_ADMIN_EMAIL, default {DEFAULT_ADMIN_EMAIL})")
    parser.add_argument("--admin-password", default=_inherited(inherited),
                        help="its password (env BUGSVC_ADMIN_PASSWORD); when not given a strong "
                             "one is generated and printed once")


def _add_serve_options(parser, inherited):
    parser.add_argument("--workers", default=argparse.SUPPRESS if inherited else None,
                        help="server processes sharing the listening socket, to use several "
                             "cores (env BUGSVC_WORKERS, default 1; always 1 on Windows)")
    parser.add_argument("--pin-cores", default=argparse.SUPPRESS if inherited else None,
                        choices=("yes", "no"),
                        help="keep each serving process on one core, which makes it several "
                             "times faster; say no where other services need those cores "
                             "(env BUGSVC_PIN_CORES, default yes)")
    parser.add_argument("--threads", default=argparse.SUPPRESS if inherited else None,
                        help="request threads of each server process (env BUGSVC_THREADS, "
                             f"default {DEFAULT_THREADS})")
    parser.add_argument("--max-body-bytes", default=argparse.SUPPRESS if inherited else None,
                        help="largest request body accepted; larger ones are refused (413) "
                             "before they are read (env BUGSVC_MAX_BODY_BYTES, default "
                             f"{DEFAULT_MAX_BODY_BYTES})")
    parser.add_argument("--trusted-proxies", default=argparse.SUPPRESS if inherited else None,
                        metavar="ADDRESSES",
                        help="reverse proxies (addresses or networks, comma-separated) whose "
                             "X-Forwarded-For names the client's address; without them the "
                             "socket's peer is the client (env BUGSVC_TRUSTED_PROXIES, "
                             "default none)")


def build_parser():
    """The argument parser of `bugsvc` / `python bugsvc.py`."""
    parser = argparse.ArgumentParser(
        prog="bugsvc", description="Bug tracker with a Bugzilla 5.x compatible REST interface. "
        "Without a command it serves the REST interface.")
    parser.add_argument("--version", action="version", version=f"bugsvc {__version__}")
    _add_common_options(parser, inherited=False)
    _add_serve_options(parser, inherited=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve_parser = commands.add_parser("serve", help="serve the REST interface (the default)")
    _add_common_options(serve_parser, inherited=True)
    _add_serve_options(serve_parser, inherited=True)
    # The commands below work on an existing database (they never create
    # one), so --db is the only option they take.
    key = commands.add_parser("api-key", help="print a new API key for an account")
    key.add_argument("email", help="the account's login")
    key.add_argument("--description", default="", help="what the key is for")
    _add_database_option(key, inherited=True)
    params = commands.add_parser("parameters", help="print every parameter, or change some "
                                 "(NAME=VALUE ...), with the checks of PUT /rest/parameters")
    params.add_argument("assignments", nargs="*", metavar="NAME=VALUE")
    _add_database_option(params, inherited=True)
    reset = commands.add_parser("reset-failed-logins", help="forget the failed sign-ins counted "
                                "against accounts (by login) or client addresses, so their next "
                                "attempts are checked at once")
    reset.add_argument("subjects", nargs="+", metavar="LOGIN_OR_ADDRESS")
    _add_database_option(reset, inherited=True)
    copy = commands.add_parser("backup", help="copy the database to PATH while the server runs "
                               "(a consistent online copy; see README, Backups)")
    copy.add_argument("path", metavar="PATH", help="the backup file (replaced if it exists)")
    _add_database_option(copy, inherited=True)
    return parser


def _choose(flag, environ, name):
    """A flag's value, else a non-empty environment variable, else None."""
    if flag is not None:
        return flag
    value = environ.get(name)
    return value if value not in (None, "") else None


def make_config(args, environ):
    """Config from parsed arguments, then the environment, then defaults.

    Errors: UsageError for a port that is not a number from 0 to 65535, an
    administrator login that is not an e-mail address, a password shorter
    than 8 characters, or a worker count that is not a number from 1 to 64.
    """
    port_text = _choose(args.port, environ, "BUGSVC_PORT")
    port = DEFAULT_PORT
    if port_text is not None:
        if not str(port_text).strip().isdigit() or int(port_text) > 65535:
            raise UsageError(f"the port must be a number from 0 to 65535, not '{port_text}'")
        port = int(port_text)
    admin_email = _choose(args.admin_email, environ, "BUGSVC_ADMIN_EMAIL")
    if admin_email is not None and not _EMAIL.match(admin_email):
        raise UsageError(f"the administrator's login must be an e-mail address, not '{admin_email}'")
    admin_password = _choose(args.admin_password, environ, "BUGSVC_ADMIN_PASSWORD")
    if admin_password is not None and len(admin_password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"the administrator's password must have at least "
                         f"{MIN_PASSWORD_LENGTH} characters")
    return Config(
        db_path=_choose(args.db, environ, "BUGSVC_DB") or DEFAULT_DB,
        host=_choose(args.host, environ, "BUGSVC_HOST") or DEFAULT_HOST,
        port=port,
        admin_email=admin_email,
        admin_password=admin_password,
        workers=_count(args, environ, "workers", 64, 1),
        threads=_count(args, environ, "threads", 256, DEFAULT_THREADS),
        pin_cores=_yes_or_no(args, environ, "pin_cores", True),
        max_body_bytes=_max_body_bytes(args, environ),
        trusted_proxies=_trusted_proxies(args, environ),
    )


def _count(args, environ, name, most, default):
    """--NAME, else BUGSVC_NAME, else `default`: a number from 1 to `most`.
    Errors: UsageError for anything else."""
    text = _choose(getattr(args, name, None), environ, f"BUGSVC_{name.upper()}")
    if text is None:
        return default
    if not str(text).strip().isdigit() or not 1 <= int(text) <= most:
        raise UsageError(f"--{name} must be a number from 1 to {most}, not '{text}'")
    return int(text)


def _yes_or_no(args, environ, name, default):
    """--NAME yes|no, else BUGSVC_NAME (yes/no, 1/0, true/false, on/off), else
    `default`. Errors: UsageError for another value."""
    text = _choose(getattr(args, name, None), environ, f"BUGSVC_{name.upper()}")
    if text is None:
        return default
    word = str(text).strip().lower()
    if word in ("yes", "1", "true", "on"):
        return True
    if word in ("no", "0", "false", "off"):
        return False
    raise UsageError(f"--{name.replace('_', '-')} must be yes or no, not '{text}'")


def _max_body_bytes(args, environ):
    """--max-body-bytes, else BUGSVC_MAX_BODY_BYTES, else the default.
    Errors: UsageError for anything but a number from 1024 to 2**40."""
    text = _choose(getattr(args, "max_body_bytes", None), environ, "BUGSVC_MAX_BODY_BYTES")
    if text is None:
        return DEFAULT_MAX_BODY_BYTES
    text = str(text).strip()
    if not (text.isascii() and text.isdigit() and 1024 <= int(text) <= 2**40):
        raise UsageError(f"--max-body-bytes must be a number from 1024 to {2**40}, not '{text}'")
    return int(text)


def _trusted_proxies(args, environ):
    """--trusted-proxies, else BUGSVC_TRUSTED_PROXIES, else none.
    Errors: UsageError for an entry that is not an address or network."""
    text = _choose(getattr(args, "trusted_proxies", None), environ, "BUGSVC_TRUSTED_PROXIES")
    try:
        return parse_networks(text or "")
    except ValueError as exc:
        raise UsageError(f"--trusted-proxies: {exc}") from None


def prepare_database(config, out=sys.stdout, now=None):
    """Create or migrate the schema; on an empty database install the default
    data and the first administrator (printing a generated password once).

    Returns the Database. Errors: SchemaError (see Database.initialize).
    """
    db = Database(config.db_path)
    db.initialize()
    now = now or datetime.now(timezone.utc)
    with db.transaction(write=True) as conn:
        if not install.is_installed(conn):
            email = config.admin_email or DEFAULT_ADMIN_EMAIL
            password = config.admin_password
            generated = not password
            if generated:
                password = secrets.token_urlsafe(18)
            if conn.execute("SELECT 1 FROM fields LIMIT 1").fetchone() is None:
                install.install_defaults(conn)
            install.create_admin(conn, email, auth.hash_password(password, config.password_cost), now)
            print(f"Created the administrator {email}.", file=out, flush=True)
            if generated:
                print(f"Its password, shown only this once: {password}", file=out, flush=True)
    return db


def create_api_key(config, email, description, out=sys.stdout, err=sys.stderr):
    """Print a new API key for account `email` (and nothing else) on `out`.

    Returns the exit status: 0, or 1 when no account has that login.
    Errors: StartError when there is no database at config.db_path (none is
    created) or it cannot be written.
    """
    startup.check_database(config.db_path, must_exist=True)
    db = prepare_database(config, err)
    try:
        with db.transaction(write=True) as conn:
            row = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                               (email,)).fetchone()
            if row is None:
                print(f"bugsvc: no account has the login '{email}'.", file=err)
                return 1
            _, key = auth.create_api_key(conn, row["id"], description, datetime.now(timezone.utc))
    finally:
        db.close()
    print(key, file=out, flush=True)
    return 0


def manage_parameters(config, assignments, out=sys.stdout, err=sys.stderr):
    """Print every parameter as NAME=VALUE, or apply `assignments` (NAME=VALUE
    strings) all or nothing, audited like PUT /rest/parameters.

    Returns the exit status: 0; 1 for an unknown name or invalid value
    (nothing changed); 2 for an assignment without '='.
    Errors: StartError when there is no database at config.db_path (none is
    created) or it cannot be written.
    """
    values = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            print(f"bugsvc: '{item}' is not of the form NAME=VALUE.", file=err)
            return 2
        values[name.strip()] = value
    startup.check_database(config.db_path, must_exist=True)
    db = prepare_database(config, err)
    try:
        if not values:
            with db.transaction() as conn:
                current = settings.load(conn)
            for name in sorted(current):
                print(f"{name}={current[name]}", file=out)
            return 0
        try:
            with db.transaction(write=True) as conn:
                ctx = Context(conn=conn, caller=ANONYMOUS, now=datetime.now(timezone.utc),
                              config=config)
                changes = instance.change_parameters(ctx, values)
        except ServiceError as exc:
            print(f"bugsvc: {exc.message} Nothing was changed.", file=err)
            return 1
    finally:
        db.close()
    for name, change in changes.items():
        print(f"{name}: '{change['removed']}' -> '{change['added']}'", file=out)
    if not changes:
        print("Nothing changed.", file=out)
    return 0


def reset_failed_logins(config, subjects, out=sys.stdout, err=sys.stderr):
    """Forget the failed sign-ins counted against each of `subjects`: an
    account's login, or a client address (auth.py, Throttling). Account
    resets are audited like PUT /rest/user's reset_failed_logins.

    Returns the exit status: 0; 1 when a subject is neither an account's
    login nor an IP address (nothing is changed).
    """
    db = prepare_database(config, err)
    cleared = []
    try:
        with db.transaction(write=True) as conn:
            ctx = Context(conn=conn, caller=ANONYMOUS, now=datetime.now(timezone.utc),
                          config=config)
            for subject in subjects:
                try:
                    address = str(ipaddress.ip_address(subject.strip()))
                except ValueError:
                    address = None
                if address is not None:
                    cleared.append((address, auth.reset_address_failures(conn, address)))
                    continue
                row = conn.execute("SELECT id, login FROM users WHERE lower(login) = lower(?)",
                                   (subject.strip(),)).fetchone()
                if row is None:
                    print(f"bugsvc: '{subject}' is neither an account's login nor an IP "
                          "address; nothing was changed.", file=err)
                    raise _NothingChanged
                count = auth.reset_failed_logins(conn, row["login"])
                if count:
                    audit.record(ctx, "User", row["id"], "failed_logins", count, 0)
                cleared.append((row["login"], count))
    except _NothingChanged:
        return 1
    finally:
        db.close()
    for subject, count in cleared:
        print(f"{subject}: {count} failed sign-in attempts forgotten.", file=out)
    return 0


class _NothingChanged(Exception):
    """Leaves a command's transaction, rolling it back."""


def make_backup(config, path, out=sys.stdout, err=sys.stderr):
    """Copy the database to `path` (bugsvc.store.backup). Returns the exit status:
    0, or 1 when no backup was made (the reason is printed on `err`).
    Errors: StartError when there is no database at config.db_path."""
    startup.require_database(config.db_path)
    try:
        result = backup.backup(config.db_path, path)
    except backup.BackupError as exc:
        print(f"bugsvc: no backup made: {exc}", file=err)
        return 1
    print(f"Backed up {config.db_path} to {result.path}: {result.size} bytes, schema version "
          f"{result.schema_version}, {result.bugs} bugs.", file=out, flush=True)
    return 0


def _url_host(host):
    return f"[{host}]" if ":" in host else host


def _create_server(config, sock, writers_lock_path=None):
    """The waitress server of the app on the listening socket `sock`.
    writers_lock_path: the lock file the worker processes' writers share."""
    import waitress
    from .app import create_app
    listeners = {}
    app = create_app(config, db=Database(config.db_path, writers_lock_path))
    server = waitress.create_server(app, map=listeners, threads=config.threads, ident="bugsvc",
                                    max_request_body_size=server_errors.waitress_body_limit(
                                        config.max_body_bytes), sockets=[sock])
    server_errors.install(listeners)
    return server


def serve(config, out=sys.stdout):
    """Check the database location and the address, prepare the database,
    and serve with waitress until interrupted or terminated (SIGINT,
    SIGTERM). Returns the exit status.

    The address is taken before the database is created, so a port in use
    leaves no new database behind and prints no password that would never
    be used. Errors: StartError (startup.py) when either cannot work.
    """
    # waitress shuts down cleanly on SystemExit; turn SIGTERM into one, from
    # the start (a first start's install is then rolled back, not cut off).
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    startup.check_database(config.db_path, must_exist=False)
    sock = startup.claim_address(config.host, config.port)
    try:
        prepare_database(config, out).close()
    except BaseException:
        sock.close()
        raise
    startup.start_listening(sock, config.host, config.port)
    if config.workers > 1:
        warning = startup.workers_warning(config.workers)
        if warning:
            print(warning, file=out, flush=True)
        if workers.fork_available():
            return _serve_workers(config, sock, out)
        print("bugsvc: --workers needs fork(), which this system lacks; serving with one "
              "process.", file=out, flush=True)
    # Before the server starts its threads: they inherit the core.
    if config.pin_cores:
        workers.pin_to_core(workers.core_offset())
    server = _create_server(config, sock)
    _print_serving(config, sock, out)
    workers.run_until_stopped(server)
    print("bugsvc stopped.", file=out, flush=True)
    return 0


def _print_serving(config, sock, out):
    """The start-up lines: where the interface is, and its documentation."""
    base = f"http://{_url_host(config.host)}:{sock.getsockname()[1]}"
    processes = f", {config.workers} workers" if config.workers > 1 else ""
    print(f"bugsvc {__version__} serving {base}/rest (database {config.db_path}{processes})",
          file=out)
    print(f"Documentation: {base}/rest/docs (a browser at {base}/ finds it too)", file=out,
          flush=True)


def _serve_workers(config, sock, out):
    """Serve with config.workers processes on the listening socket `sock`."""
    import tempfile
    import waitress                    # noqa: F401 - imported once, before forking
    from . import app                  # noqa: F401
    handle, lock_path = tempfile.mkstemp(prefix="bugsvc-writers-", suffix=".lock")
    os.close(handle)
    _print_serving(config, sock, out)
    try:
        status = workers.serve_forked(
            lambda shared: _create_server(config, shared, lock_path), sock,
            config.workers, pin=config.pin_cores)
    finally:
        sock.close()
        os.unlink(lock_path)
    print("bugsvc stopped.", file=out, flush=True)
    return status


def main(argv, environ, out=None, err=None):
    """Run the command line. Returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s",
                        stream=err)
    # Nothing logged shows where it was logged from or by which thread or
    # process: skip finding out, for every access line (the logging HOWTO's
    # "Optimization").
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    try:
        config = make_config(args, environ)
        if args.command == "api-key":
            return create_api_key(config, args.email, args.description, out, err)
        if args.command == "parameters":
            return manage_parameters(config, args.assignments, out, err)
        if args.command == "reset-failed-logins":
            return reset_failed_logins(config, args.subjects, out, err)
        if args.command == "backup":
            return make_backup(config, args.path, out, err)
        return serve(config, out)
    except (UsageError, startup.StartError) as exc:
        print(f"bugsvc: {exc}", file=err)
        return 2
    except (SchemaError, OSError) as exc:
        print(f"bugsvc: {exc}", file=err)
        return 2


def run():
    """Console-script entry point (`bugsvc`), equivalent to `python bugsvc.py`."""
    import os
    sys.exit(main(sys.argv[1:], os.environ))
