"""The operator's commands on an existing database, also while the server
runs: print a new API key, read or change parameters, forget failed
sign-ins, take a backup, deliver bug mail and webhook calls; and copying it
to another engine. None creates the database it works on. Those that change
it work in a unit of work (bugsvc/compose.py) as the anonymous caller: the
operator is not an account."""

import ipaddress
import signal
import sys
import threading

from ..accounts import auth
from ..catalogue import settings
from ..compose import unit_of_work
from ..errors import ServiceError
from ..serving import startup
from ..serving.server import prepare_database
from ..store import audit, backup, convert
from ..store.location import Location


def create_api_key(config, email, description, out=sys.stdout, err=sys.stderr):
    """Print a new API key for account `email` (and nothing else) on `out`.

    Returns the exit status: 0, or 1 when no account has that login.
    Errors: StartError when there is no database at config.database (none is
    created) or it cannot be written.
    """
    startup.check_database(config.database, must_exist=True)
    db = prepare_database(config, err)
    try:
        with unit_of_work(db, config).context(write=True) as ctx:
            row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                   (email,)).fetchone()
            if row is None:
                print(f"bugsvc: no account has the login '{email}'.", file=err)
                return 1
            key_id, key = auth.create_api_key(ctx.conn, row["id"], description, ctx.now)
            # Audited as POST /rest/api_key audits it: the key's id, never its secret.
            audit.record(ctx, "User", row["id"], "api_key", "", str(key_id))
    finally:
        db.close()
    print(key, file=out, flush=True)
    return 0


def manage_parameters(config, assignments, out=sys.stdout, err=sys.stderr):
    """Print every parameter as NAME=VALUE, or apply `assignments` (NAME=VALUE
    strings) all or nothing, audited like PUT /rest/parameters.

    Returns the exit status: 0; 1 for an unknown name or invalid value
    (nothing changed); 2 for an assignment without '='.
    Errors: StartError when there is no database at config.database (none is
    created) or it cannot be written.
    """
    values = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            print(f"bugsvc: '{item}' is not of the form NAME=VALUE.", file=err)
            return 2
        values[name.strip()] = value
    startup.check_database(config.database, must_exist=True)
    db = prepare_database(config, err)
    try:
        if not values:
            with db.transaction() as conn:
                current = settings.load(conn)
            for name in sorted(current):
                print(f"{name}={settings.shown(name, current[name])}", file=out)
            return 0
        try:
            with unit_of_work(db, config).context(write=True) as ctx:
                changes = settings.change(ctx, values)
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
        with unit_of_work(db, config).context(write=True) as ctx:
            conn = ctx.conn
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
    0, or 1 when no backup was made (the reason is printed on `err`), or 2 for
    a database whose engine backs it up itself (PostgreSQL: pg_dump; the
    message says how).
    Errors: StartError when there is no database at config.database."""
    engine = config.database.engine
    if not engine.can_backup:
        print(f"bugsvc: no backup made: {config.database.shown} is a {engine.name} database, "
              f"{engine.backup_advice}.", file=err)
        return 2
    startup.require_database(config.database)
    try:
        result = backup.backup(config.database.path, path)
    except backup.BackupError as exc:
        print(f"bugsvc: no backup made: {exc}", file=err)
        return 1
    print(f"Backed up {config.database} to {result.path}: {result.size} bytes, schema version "
          f"{result.schema_version}, {result.bugs} bugs.", file=out, flush=True)
    return 0


def convert_database(config, target, out=sys.stdout, err=sys.stderr):
    """Copy the whole database (config.database) into the new, empty database
    `target` (bugsvc.store.convert), showing progress on `err`.

    Returns the exit status: 0 when the copy is made and verified; 1 when
    it is refused or fails (the reason is printed on `err`; the target is
    left as it was). Errors: StartError when there is no database at
    config.database, or the target's directory does not exist.
    """
    startup.require_database(config.database)
    target = Location.of(target)
    if target.is_file:
        startup.check_database(target, must_exist=False)
    try:
        result = convert.convert(config.database, target, convert.Progress(err))
    except convert.ConvertError as exc:
        print(f"bugsvc: not converted: {exc}", file=err)
        return 1
    print(f"Converted {config.database.shown} to {target.shown}: "
          f"{result.rows} rows in {len(result.tables)} tables, schema version "
          f"{result.schema_version}, row counts and checksums verified.", file=out, flush=True)
    return 0


def collect_stats(config, day=None, out=sys.stdout, err=sys.stderr):
    """Count the chart series due on `day` (YYYY-MM-DD; default today,
    UTC) and store the counts (bugsvc/bugs/series.py). Returns the exit
    status: 0, or 2 for a day that is no date. Errors: StartError when
    there is no database at config.database."""
    from datetime import date, datetime, timezone

    from ..bugs import series
    try:
        wanted = date.fromisoformat(day) if day else datetime.now(timezone.utc).date()
    except ValueError:
        print(f"bugsvc: --date {day!r} is not a date (YYYY-MM-DD).", file=err)
        return 2
    startup.check_database(config.database, must_exist=True)
    db = prepare_database(config, err)
    try:
        stored = series.collect(unit_of_work(db, config), wanted)
    finally:
        db.close()
    print(f"Counted the chart series for {wanted.isoformat()}: {stored} new counts stored.",
          file=out, flush=True)
    return 0


def run_whines(config, out=sys.stdout, err=sys.stderr):
    """Queue the mail of every scheduled search (editwhines.cgi) whose time
    has come, as Bugzilla's whine.pl (bugsvc/bugs/whine.py); the delivery
    worker (of a server, or `bugsvc deliver`) sends it. Safe beside servers
    and other runs: each schedule's run is mailed once. Returns the exit
    status (0). Errors: StartError when there is no database at
    config.database."""
    from ..bugs import whine
    startup.check_database(config.database, must_exist=True)
    db = prepare_database(config, err)
    try:
        queued = whine.run_due(unit_of_work(db, config))
    finally:
        db.close()
    print(f"Ran the scheduled searches that were due: {queued} mails queued.", file=out,
          flush=True)
    return 0


def deliver(config, once=False, out=sys.stdout, err=sys.stderr):
    """Deliver the outbox of the database (bugsvc/notify/worker.py): until
    SIGTERM or SIGINT, or, with `once`, what is due now. Several may run
    beside each other and beside servers: each message goes out once.

    Returns the exit status (0). Errors: StartError when there is no
    database at config.database (none is created).
    """
    from ..notify.worker import Deliverer
    stopping = threading.Event()
    # From the start: a stop asked for while the database is being opened
    # ends the command cleanly too.
    previous = {} if once else {sig: signal.signal(sig, lambda signum, frame: stopping.set())
                                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        startup.check_database(config.database, must_exist=True)
        db = prepare_database(config, err)
        deliverer = Deliverer(unit_of_work(db, config))
        try:
            if once:
                done = deliverer.run_until_idle()
                print(f"Delivered what was due ({done} steps).", file=out, flush=True)
                return 0
            print("bugsvc delivering bug mail and webhook calls from "
                  f"{config.database.shown} (Ctrl-C stops)", file=out, flush=True)
            threads = deliverer.start(config.delivery_threads)
            try:
                while not stopping.wait(1):
                    pass
            finally:
                threads.stop()
            print("bugsvc stopped delivering.", file=out, flush=True)
            return 0
        finally:
            db.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
