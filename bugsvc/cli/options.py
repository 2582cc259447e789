"""The command line's commands and options, and the Config they make.

Every option has a flag, an environment variable and a default; a flag beats
the environment, which beats the default.
"""

import argparse
import re

from .. import __version__
from ..api.limits import parse_rules
from ..api.operations import OPERATIONS
from ..config import (
    DEFAULT_ADMIN_EMAIL,
    DEFAULT_CONNECTION_LIMIT,
    DEFAULT_CONNECTIONS_PER_ADDRESS,
    DEFAULT_DB,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PORT,
    DEFAULT_REPLICA_MAX_LAG,
    DEFAULT_REQUESTS_PER_ADDRESS,
    DEFAULT_THREADS,
    Config,
)
from ..web import metrics
from ..web.client_address import parse_networks


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
                        help="the database: an SQLite file, or a PostgreSQL database as "
                             "postgresql://user:password@host:port/name (env BUGSVC_DB, "
                             f"default ./{DEFAULT_DB})")


def _add_admin_options(parser, inherited):
    parser.add_argument("--admin-email", default=_inherited(inherited),
                        help="login of the first administrator, created on an empty database "
                             f"(env BUGSVC_ADMIN_EMAIL, default {DEFAULT_ADMIN_EMAIL})")
    parser.add_argument("--admin-password", default=_inherited(inherited),
                        help="its password (env BUGSVC_ADMIN_PASSWORD); when not given a strong "
                             "one is generated and printed once")


def _add_serve_options(parser, inherited):
    parser.add_argument("--db-replica", action="append",
                        default=argparse.SUPPRESS if inherited else None, metavar="URL",
                        help="a PostgreSQL streaming replica of --db that searches, bug lists, "
                             "reports and anonymous pages may read from; give it once per "
                             "replica (env BUGSVC_DB_REPLICA: URLs separated by spaces; see "
                             "docs/postgresql.md)")
    parser.add_argument("--db-replica-max-lag", default=argparse.SUPPRESS if inherited else None,
                        metavar="SECONDS",
                        help="how far behind the primary a replica may be and still serve "
                             "reads (env BUGSVC_DB_REPLICA_MAX_LAG, default "
                             f"{DEFAULT_REPLICA_MAX_LAG:g})")
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
    parser.add_argument("--deliver", default=argparse.SUPPRESS if inherited else None,
                        choices=("yes", "no"),
                        help="deliver bug mail and webhook calls from the serving processes "
                             "(env BUGSVC_DELIVER, default yes); no where `bugsvc deliver` "
                             "runs apart")
    parser.add_argument("--connection-limit", default=argparse.SUPPRESS if inherited else None,
                        help="connections each server process holds open at once; idle ones "
                             "give way to new ones (env BUGSVC_CONNECTION_LIMIT, default "
                             f"{DEFAULT_CONNECTION_LIMIT})")
    parser.add_argument("--connections-per-address",
                        default=argparse.SUPPRESS if inherited else None,
                        help="connections one client address may hold open in each server "
                             "process, 0 for no limit; trusted proxies are exempt (env "
                             "BUGSVC_CONNECTIONS_PER_ADDRESS, default "
                             f"{DEFAULT_CONNECTIONS_PER_ADDRESS})")
    parser.add_argument("--requests-per-address",
                        default=argparse.SUPPRESS if inherited else None,
                        help="request threads of each server process one client address may "
                             "hold at once, 0 for no limit; its further requests wait their "
                             "turn (env BUGSVC_REQUESTS_PER_ADDRESS, default "
                             f"{DEFAULT_REQUESTS_PER_ADDRESS})")
    parser.add_argument("--rate-limit", default=argparse.SUPPRESS if inherited else None,
                        metavar="RATES",
                        help="calls allowed per API key or account, e.g. 600/minute or "
                             "600/minute,write=60/minute,Bug.search=120/minute (per second, "
                             "minute, hour or day; of every call, read or write calls, or one "
                             "operation); more are answered 429 (env BUGSVC_RATE_LIMIT, "
                             "default none)")
    parser.add_argument("--rate-limit-anonymous", default=argparse.SUPPRESS if inherited else None,
                        metavar="RATES",
                        help="calls allowed per client address without credentials, as "
                             "--rate-limit (env BUGSVC_RATE_LIMIT_ANONYMOUS, default none)")
    parser.add_argument("--metrics-allow", default=argparse.SUPPRESS if inherited else None,
                        metavar="NETWORKS",
                        help="addresses or networks (comma-separated) that may read the "
                             "metrics at /metrics; loopback is not allowed unless named "
                             "(env BUGSVC_METRICS_ALLOW, default none; needs the metrics "
                             "extra)")
    parser.add_argument("--metrics-token", default=argparse.SUPPRESS if inherited else None,
                        metavar="TOKEN",
                        help="a token that reads /metrics from anywhere as "
                             "'Authorization: Bearer TOKEN' (prefer env BUGSVC_METRICS_TOKEN: "
                             "flags show in the process list)")
    _add_retry_option(parser, inherited)
    parser.add_argument("--trusted-proxies", default=argparse.SUPPRESS if inherited else None,
                        metavar="ADDRESSES",
                        help="reverse proxies (addresses or networks, comma-separated) whose "
                             "X-Forwarded-For names the client's address; without them the "
                             "socket's peer is the client (env BUGSVC_TRUSTED_PROXIES, "
                             "default none)")


def _add_retry_option(parser, inherited):
    parser.add_argument("--retry-delays", default=argparse.SUPPRESS if inherited else None,
                        metavar="SECONDS",
                        help="seconds between the attempts of a message that fails, "
                             "comma-separated (the last failure parks it; env "
                             "BUGSVC_RETRY_DELAYS, default: about a day for mail, three days "
                             "for webhooks)")


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
    convert = commands.add_parser(
        "convert-db", help="copy the whole database (--db) into a new, empty one on another "
        "engine, e.g. --to postgresql://user:password@host/bugsvc, or back to an SQLite file; "
        "every table is verified before it says done (see docs/postgresql.md)")
    convert.add_argument("--to", required=True, metavar="TARGET",
                         help="the new database: a postgresql:// URL or an SQLite file's path")
    _add_database_option(convert, inherited=True)
    deliver = commands.add_parser("deliver", help="deliver bug mail and webhook calls until "
                                  "stopped (beside servers started with --deliver no, or as "
                                  "many as wanted: each message goes out once)")
    deliver.add_argument("--once", action="store_true",
                         help="deliver what is due now, then exit")
    _add_retry_option(deliver, inherited=True)
    _add_database_option(deliver, inherited=True)
    collect = commands.add_parser(
        "collectstats", help="count today's chart series (chart.cgi) as Bugzilla's "
        "collectstats.pl does; the delivery worker also does it once a day, and a day's count "
        "is stored once however often it runs")
    collect.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                         help="the day to count for (default: today, UTC)")
    _add_database_option(collect, inherited=True)
    whine = commands.add_parser(
        "whine", help="queue the mail of the scheduled searches (editwhines.cgi) whose time "
        "has come, as Bugzilla's whine.pl; the delivery worker of every server also does it "
        "every 30 seconds, and each run of a schedule is mailed once however often it runs")
    _add_database_option(whine, inherited=True)
    mail = commands.add_parser("mail-in", help="take one reply to a bug mail (an RFC 5322 "
                               "message on standard input, for an MTA's pipe) as a comment "
                               "by the account it was mailed to (see README, Replying to "
                               "bug mail)")
    mail.add_argument("--listen", default=None, metavar="HOST:PORT",
                      help="instead of one message on standard input, take every message "
                           "delivered over SMTP to HOST:PORT until stopped (needs aiosmtpd)")
    mail.add_argument("--lmtp", action="store_true", help="with --listen: speak LMTP")
    _add_database_option(mail, inherited=True)
    _add_import_parser(commands)
    return parser


def _add_import_parser(commands):
    """`bugsvc import URL`: fill a new database from a Bugzilla over REST."""
    carry = commands.add_parser(
        "import", help="fill a new database from a Bugzilla (5.0 to 5.2, bugzilla.mozilla.org, "
        "or a bugsvc) over its REST interface, keeping bug, comment and attachment ids; run it "
        "again to bring what changed since (see docs/moving-from-bugzilla.md)")
    carry.add_argument("url", metavar="URL", help="the source, e.g. https://bugzilla.example.com")
    carry.add_argument("--api-key", default=None,
                       help="an API key of the account to read as (env BUGSVC_IMPORT_API_KEY; "
                            "without one the import reads what anonymous visitors see)")
    carry.add_argument("--login", default=None,
                       help="the key's login at the source, when the source cannot tell it "
                            "(Bugzilla 5.2 has no whoami): its groups are carried in full, "
                            "and --verify reads the target as that account")
    carry.add_argument("--since", default=None, metavar="TIME",
                       help="read only bugs changed at or after TIME (UTC, e.g. "
                            "2024-05-01T10:00:00Z); by default a later run reads what changed "
                            "since the last one began, less the overlap")
    carry.add_argument("--overlap", default=None, metavar="MINUTES",
                       help="how far before the last run's start a later run reads "
                            "(default 5)")
    carry.add_argument("--dry-run", action="store_true",
                       help="read everything and report, writing nothing")
    carry.add_argument("--verify", action="store_true",
                       help="compare the source and the target bug by bug and list every "
                            "difference (writes nothing)")
    carry.add_argument("--concurrency", default=None, metavar="N",
                       help="requests open at once to the source (default 4)")
    carry.add_argument("--page-size", default=None, metavar="N",
                       help="bugs read and written together (default 100)")
    carry.add_argument("--urlbase", default=None, metavar="URL",
                       help="the new installation's address (its urlbase parameter is set to "
                            "it): See Also links to the old installation's bugs are pointed "
                            "there")
    carry.add_argument("--keep-see-also", action="store_true",
                       help="keep See Also links to the old installation's bugs as they are")
    carry.add_argument("--max-answer-mb", default=None, metavar="MB",
                       help="the largest answer read from the source, as sent and inflated "
                            "(default 256)")
    carry.add_argument("--request-timeout", default=None, metavar="SECONDS",
                       help="the longest one request to the source may take in all "
                            "(default 600)")
    carry.add_argument("--max-wait", default=None, metavar="SECONDS",
                       help="the longest wait the source may ask for before a request is "
                            "tried again (Retry-After; default 600)")
    _add_database_option(carry, inherited=True)
    _add_admin_options(carry, inherited=True)


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
        raise UsageError("the administrator's login must be an e-mail address, "
                         f"not '{admin_email}'")
    admin_password = _choose(args.admin_password, environ, "BUGSVC_ADMIN_PASSWORD")
    if admin_password is not None and len(admin_password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"the administrator's password must have at least "
                         f"{MIN_PASSWORD_LENGTH} characters")
    return Config(
        database=_choose(args.db, environ, "BUGSVC_DB") or DEFAULT_DB,
        host=_choose(args.host, environ, "BUGSVC_HOST") or DEFAULT_HOST,
        port=port,
        admin_email=admin_email,
        admin_password=admin_password,
        workers=_count(args, environ, "workers", 64, 1),
        threads=_count(args, environ, "threads", 256, DEFAULT_THREADS),
        pin_cores=_yes_or_no(args, environ, "pin_cores", True),
        connection_limit=_count(args, environ, "connection_limit", 100000,
                                DEFAULT_CONNECTION_LIMIT),
        connections_per_address=_count(args, environ, "connections_per_address", 100000,
                                       DEFAULT_CONNECTIONS_PER_ADDRESS, least=0),
        requests_per_address=_count(args, environ, "requests_per_address", 100000,
                                    DEFAULT_REQUESTS_PER_ADDRESS, least=0),
        max_body_bytes=_max_body_bytes(args, environ),
        trusted_proxies=_trusted_proxies(args, environ),
        **_metrics(args, environ),
        rate_limits=_rate_limits(args, environ, "rate_limit"),
        anonymous_rate_limits=_rate_limits(args, environ, "rate_limit_anonymous"),
        deliver=_yes_or_no(args, environ, "deliver", True),
        retry_delays=_retry_delays(args, environ),
        **_replicas(args, environ),
    )


def _count(args, environ, name, most, default, least=1):
    """--NAME, else BUGSVC_NAME, else `default`: a number from `least` to
    `most`. Errors: UsageError for anything else."""
    text = _choose(getattr(args, name, None), environ, f"BUGSVC_{name.upper()}")
    if text is None:
        return default
    if not str(text).strip().isdigit() or not least <= int(text) <= most:
        raise UsageError(f"--{name.replace('_', '-')} must be a number from {least} to {most}, "
                         f"not '{text}'")
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


def _replicas(args, environ):
    """{replicas, replica_max_lag} from --db-replica (several), else
    BUGSVC_DB_REPLICA (URLs separated by spaces), and --db-replica-max-lag,
    else BUGSVC_DB_REPLICA_MAX_LAG. Errors: UsageError for a lag that is not
    a number of seconds (0 to 3600). (The database refuses replicas that are no PostgreSQL URL.)"""
    given = getattr(args, "db_replica", None)
    if not given:
        given = (environ.get("BUGSVC_DB_REPLICA") or "").split()
    replicas = tuple(given)
    text = _choose(getattr(args, "db_replica_max_lag", None), environ,
                   "BUGSVC_DB_REPLICA_MAX_LAG")
    lag = DEFAULT_REPLICA_MAX_LAG
    if text is not None:
        try:
            lag = float(str(text).strip())
        except ValueError:
            lag = -1.0
        if not 0 <= lag <= 3600:
            raise UsageError("--db-replica-max-lag must be a number of seconds from 0 to 3600, "
                             f"not '{text}'")
    return {"replicas": replicas, "replica_max_lag": lag}


def _retry_delays(args, environ):
    """--retry-delays, else BUGSVC_RETRY_DELAYS, else none (the defaults).
    Errors: UsageError for anything but numbers of seconds (0 to 604800)."""
    text = _choose(getattr(args, "retry_delays", None), environ, "BUGSVC_RETRY_DELAYS")
    if text is None:
        return ()
    delays = []
    for part in str(text).split(","):
        try:
            seconds = float(part.strip())
        except ValueError:
            seconds = -1
        if not 0 <= seconds <= 604800:
            raise UsageError("--retry-delays must be numbers of seconds (0 to 604800), "
                             f"comma-separated, not '{text}'")
        delays.append(seconds)
    return tuple(delays)


def _trusted_proxies(args, environ):
    """--trusted-proxies, else BUGSVC_TRUSTED_PROXIES, else none.
    Errors: UsageError for an entry that is not an address or network."""
    text = _choose(getattr(args, "trusted_proxies", None), environ, "BUGSVC_TRUSTED_PROXIES")
    try:
        return parse_networks(text or "")
    except ValueError as exc:
        raise UsageError(f"--trusted-proxies: {exc}") from None


def _rate_limits(args, environ, name):
    """--rate-limit(-anonymous), else its variable, else none.
    Errors: UsageError for an item that is not a rate (limits.parse_rules)."""
    text = _choose(getattr(args, name, None), environ, f"BUGSVC_{name.upper()}")
    try:
        return parse_rules(text or "", {operation.name for operation in OPERATIONS})
    except ValueError as exc:
        raise UsageError(f"--{name.replace('_', '-')}: {exc}") from None


def _metrics(args, environ):
    """{"metrics_allow", "metrics_token"} from --metrics-allow and
    --metrics-token (else their variables). Errors: UsageError for an entry
    that is not an address or network, a token shorter than 16 characters,
    or either option without prometheus_client installed."""
    text = _choose(getattr(args, "metrics_allow", None), environ, "BUGSVC_METRICS_ALLOW")
    try:
        allow = parse_networks(text or "")
    except ValueError as exc:
        raise UsageError(f"--metrics-allow: {exc}") from None
    token = _choose(getattr(args, "metrics_token", None), environ, "BUGSVC_METRICS_TOKEN")
    if token is not None and len(token.strip()) < 16:
        raise UsageError("--metrics-token must have at least 16 characters")
    if (allow or token) and not metrics.available():
        raise UsageError("the metrics need prometheus_client: pip install 'bugsvc[metrics]'")
    return {"metrics_allow": allow, "metrics_token": token.strip() if token else None}
