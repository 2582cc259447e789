"""Command line: serve, create an API key, read or change parameters. `bugsvc.py` (and the `bugsvc`
console command) pass argv and the environment in; nothing here reads them on
its own.

Every option has a flag, an environment variable and a default; a flag beats
the environment, which beats the default.
"""

import argparse
import logging
import re
import secrets
import signal
import sys
import threading
from datetime import datetime, timezone

from . import __version__, auth, install, settings
from .caller import ANONYMOUS
from .config import Config, DEFAULT_DB, DEFAULT_HOST, DEFAULT_PORT
from .context import Context
from .db import Database, SchemaError
from .errors import ServiceError
from .services import instance

log = logging.getLogger("bugsvc")
DEFAULT_ADMIN_EMAIL = "admin@example.com"
MIN_PASSWORD_LENGTH = 8          # the reference's minimum length of a password
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


class UsageError(Exception):
    """A bad option value: reported in one line, exit status 2."""


def _add_common_options(parser, inherited):
    # In a subcommand the options default to SUPPRESS, so a value given before
    # the subcommand (`bugsvc --db x api-key ...`) is not overwritten.
    default = argparse.SUPPRESS if inherited else None
    parser.add_argument("--host", default=default,
                        help=f"address to listen on (env BUGSVC_HOST, default {DEFAULT_HOST})")
    parser.add_argument("--port", default=default,
                        help=f"port; 0 picks a free one (env BUGSVC_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--db", default=default,
                        help=f"SQLite database file (env BUGSVC_DB, default ./{DEFAULT_DB})")
    parser.add_argument("--admin-email", default=default,
                        help="login of the first administrator, created on an empty database "
                             f"(env BUGSVC_ADMIN_EMAIL, default {DEFAULT_ADMIN_EMAIL})")
    parser.add_argument("--admin-password", default=default,
                        help="its password (env BUGSVC_ADMIN_PASSWORD); when not given a strong "
                             "one is generated and printed once")


def build_parser():
    """The argument parser of `bugsvc` / `python bugsvc.py`."""
    parser = argparse.ArgumentParser(
        prog="bugsvc", description="Bug tracker with a Bugzilla 5.x compatible REST interface. "
        "Without a command it serves the REST interface.")
    parser.add_argument("--version", action="version", version=f"bugsvc {__version__}")
    _add_common_options(parser, inherited=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve_parser = commands.add_parser("serve", help="serve the REST interface (the default)")
    _add_common_options(serve_parser, inherited=True)
    key = commands.add_parser("api-key", help="print a new API key for an account")
    key.add_argument("email", help="the account's login")
    key.add_argument("--description", default="", help="what the key is for")
    _add_common_options(key, inherited=True)
    params = commands.add_parser("parameters", help="print every parameter, or change some "
                                 "(NAME=VALUE ...), with the checks of PUT /rest/parameters")
    params.add_argument("assignments", nargs="*", metavar="NAME=VALUE")
    _add_common_options(params, inherited=True)
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
    administrator login that is not an e-mail address, or a password shorter
    than 8 characters.
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
    )


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

    An empty database is installed first; what that prints goes to `err`.
    Returns the exit status: 0, or 1 when no account has that login.
    """
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
    """
    values = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            print(f"bugsvc: '{item}' is not of the form NAME=VALUE.", file=err)
            return 2
        values[name.strip()] = value
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


def _url_host(host):
    return f"[{host}]" if ":" in host else host


def serve(config, out=sys.stdout):
    """Prepare the database and serve with waitress until interrupted or
    terminated (SIGINT, SIGTERM). Returns the exit status."""
    import waitress
    from .app import create_app
    prepare_database(config, out).close()
    app = create_app(config)
    server = waitress.create_server(app, host=config.host, port=config.port, threads=8,
                                    ident="bugsvc")
    # waitress shuts down cleanly on SystemExit; turn SIGTERM into one.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    port = getattr(server, "effective_port", config.port)
    print(f"bugsvc {__version__} serving http://{_url_host(config.host)}:{port}/rest "
          f"(database {config.db_path})", file=out, flush=True)
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.close()
    print("bugsvc stopped.", file=out, flush=True)
    return 0


def main(argv, environ, out=None, err=None):
    """Run the command line. Returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s",
                        stream=err)
    try:
        config = make_config(args, environ)
        if args.command == "api-key":
            return create_api_key(config, args.email, args.description, out, err)
        if args.command == "parameters":
            return manage_parameters(config, args.assignments, out, err)
        return serve(config, out)
    except UsageError as exc:
        print(f"bugsvc: {exc}", file=err)
        return 2
    except (SchemaError, OSError) as exc:
        print(f"bugsvc: {exc}", file=err)
        return 2


def run():
    """Console-script entry point (`bugsvc`), equivalent to `python bugsvc.py`."""
    import os
    sys.exit(main(sys.argv[1:], os.environ))
