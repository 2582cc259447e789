"""Command line: serve, print an API key, read or change parameters, forget
failed sign-ins, back up, convert to another database engine, deliver mail
and webhook calls, import a Bugzilla. `bugsvc.py` (and the `bugsvc` console
command) pass argv and the environment in; nothing else reads them.

options.py: the commands' options and the Config they make. commands.py:
the operator's commands. Serving itself is bugsvc/serving/server.py.
"""

import logging
import sys
import time

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


class LineFormatter(logging.Formatter):
    """logging's Formatter, writing the date and time of a line as it does
    ('2026-11-27 14:05:01,123', local time), with the part up to the second
    made once a second rather than for every line (the access log writes one
    per request)."""

    _second = (None, "")

    def formatTime(self, record, datefmt=None):
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        kept, text = self._second
        if kept != second:
            text = time.strftime(self.default_time_format, self.converter(record.created))
            self._second = (second, text)
        return self.default_msec_format % (text, record.msecs)


def main(argv, environ, out=None, err=None):
    """Run the command line. Returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    handler = logging.StreamHandler(err)
    handler.setFormatter(LineFormatter("%(asctime)s %(name)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
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
