"""Command line: serve, create an API key. `bugsvc.py` passes argv and the
environment in; nothing here reads them on its own."""

import argparse
import logging
import secrets
import sys
from datetime import datetime, timezone

from . import __version__, auth, install
from .config import Config, DEFAULT_DB, DEFAULT_HOST, DEFAULT_PORT
from .db import Database

log = logging.getLogger("bugsvc")
DEFAULT_ADMIN_EMAIL = "admin@example.com"


def build_parser():
    parser = argparse.ArgumentParser(prog="bugsvc", description="Bug tracker with a Bugzilla 5.x "
                                     "compatible REST interface.")
    parser.add_argument("--version", action="version", version=f"bugsvc {__version__}")
    parser.add_argument("--host", help=f"address to listen on (env BUGSVC_HOST, default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, help=f"port (env BUGSVC_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--db", help=f"SQLite database file (env BUGSVC_DB, default ./{DEFAULT_DB})")
    parser.add_argument("--admin-email", help="first administrator's login, used on an empty "
                        "database (env BUGSVC_ADMIN_EMAIL)")
    parser.add_argument("--admin-password", help="first administrator's password (env "
                        "BUGSVC_ADMIN_PASSWORD); generated and printed once when not given")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="serve the REST interface (the default)")
    key = commands.add_parser("api-key", help="print a new API key for an account")
    key.add_argument("email", help="the account's login")
    key.add_argument("--description", default="", help="what the key is for")
    return parser


def make_config(args, environ):
    """Config from parsed arguments, then the environment, then defaults."""
    return Config(
        db_path=args.db or environ.get("BUGSVC_DB") or DEFAULT_DB,
        host=args.host or environ.get("BUGSVC_HOST") or DEFAULT_HOST,
        port=args.port or int(environ.get("BUGSVC_PORT") or DEFAULT_PORT),
        admin_email=args.admin_email or environ.get("BUGSVC_ADMIN_EMAIL"),
        admin_password=args.admin_password or environ.get("BUGSVC_ADMIN_PASSWORD"),
    )


def prepare_database(config, out=sys.stdout, now=None):
    """Create or migrate the schema; on an empty database install the default
    data and the first administrator (printing a generated password once)."""
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
            print(f"Created the administrator {email}.", file=out)
            if generated:
                print(f"Its password, shown only this once: {password}", file=out)
    return db


def create_api_key(config, email, description, out=sys.stdout):
    """Print a new API key for account `email`. Returns the exit status."""
    db = prepare_database(config, out)
    with db.transaction(write=True) as conn:
        row = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)", (email,)).fetchone()
        if row is None:
            print(f"No account has the login {email}.", file=sys.stderr)
            return 1
        _, key = auth.create_api_key(conn, row["id"], description, datetime.now(timezone.utc))
    print(key, file=out)
    return 0


def serve(config, out=sys.stdout):
    """Prepare the database and serve with waitress until interrupted."""
    import waitress
    from .app import create_app
    prepare_database(config, out)
    app = create_app(config)
    print(f"bugsvc {__version__} serving http://{config.host}:{config.port}/rest "
          f"(database {config.db_path})", file=out, flush=True)
    waitress.serve(app, host=config.host, port=config.port, threads=8, ident="bugsvc",
                   _quiet=True)
    return 0


def main(argv, environ):
    """Run the command line. Returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = make_config(args, environ)
    if args.command == "api-key":
        return create_api_key(config, args.email, args.description)
    return serve(config)


def run():
    """Console-script entry point (`bugsvc`), equivalent to `python bugsvc.py`."""
    import os
    sys.exit(main(sys.argv[1:], os.environ))
