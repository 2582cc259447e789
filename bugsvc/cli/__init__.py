"""Command line: serve, print an API key, read or change parameters, forget
failed sign-ins, back up, convert to another database engine, deliver mail
and webhook calls, import a Bugzilla. `bugsvc.py` (and the `bugsvc` console
command) pass argv and the environment in; nothing else reads them.

options.py: the commands' options and the Config they make. commands.py:
the operator's commands. Serving itself is bugsvc/serving/server.py.
"""

import logging
import sys

from ..log_lines import LineHandler
from ..serving import startup
from ..serving.server import serve
from ..store.schema import SchemaError
from .commands import (
    collect_stats,
    convert_database,
    create_api_key,
    deliver,
    make_backup,
    manage_parameters,
    reset_failed_logins,
    run_whines,
)
from .importing import import_bugzilla
from .mail_in import mail_in
from .mail_listener import listen
from .options import UsageError, build_parser, make_config


def main(argv, environ, out=None, err=None):
    """Run the command line. Returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, handlers=[LineHandler(err)])
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
        if args.command == "convert-db":
            return convert_database(config, args.to, out, err)
        if args.command == "import":
            return import_bugzilla(config, args, environ, out, err)
        if args.command == "deliver":
            return deliver(config, args.once, out, err)
        if args.command == "collectstats":
            return collect_stats(config, args.date, out, err)
        if args.command == "whine":
            return run_whines(config, out, err)
        if args.command == "mail-in" and args.listen:
            return listen(config, args.listen, args.lmtp, out, err)
        if args.command == "mail-in":
            return mail_in(config, None, out, err)
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
