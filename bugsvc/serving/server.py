"""Serving: preparing the database at start, then waitress on the listening
socket, in one process or several (workers.py), until SIGINT or SIGTERM."""

import dataclasses
import gc
import os
import secrets
import shutil
import signal
import sys
import threading
from datetime import datetime, timezone

from .. import __version__
from ..accounts import auth
from ..catalogue import install
from ..config import DEFAULT_ADMIN_EMAIL
from ..store.location import open_database
from . import connections, server_errors, startup, workers


def prepare_database(config, out=sys.stdout, now=None):
    """Create or migrate the schema; on an empty database install the default
    data and the first administrator (printing a generated password once).

    Returns the Database. Errors: SchemaError (see Database.initialize).
    """
    db = open_database(config.database)
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
            install.create_admin(conn, email, auth.hash_password(password, config.password_cost),
                                 now)
            print(f"Created the administrator {email}.", file=out, flush=True)
            if generated:
                print(f"Its password, shown only this once: {password}", file=out, flush=True)
    return db


# Python's cycle collector in a serving process. By default it scans its
# youngest objects whenever 700 more containers are alive than at its last
# scan: a search building 50 bugs' objects passed that on nearly every
# request and paid for a scan of objects that were about to be freed anyway
# (7% of a 50-bug search's CPU, measured with gc.callbacks), and every
# object start-up made (modules, the catalogue's copies) was scanned again
# by each full collection. A serving process raises the threshold (requests
# free what they make by reference counting; cycles still go, a little
# later) and, once started, freezes what start-up made out of the
# collector's sight (gc.freeze).
YOUNG_OBJECTS_BEFORE_COLLECTING = 10_000


def settle_collector():
    """Collect what start-up left, keep its survivors out of later scans and
    raise the youngest generation's threshold (see above)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS_BEFORE_COLLECTING, *gc.get_threshold()[1:])


def _url_host(host):
    return f"[{host}]" if ":" in host else host


def _create_server(config, sock, writers_lock_path=None, balance=None):
    """The waitress server of the app on the listening socket `sock`, with the
    delivery worker of the process (unless config.deliver is off).
    writers_lock_path: the lock file the worker processes' writers share;
    balance: their workers.ConnectionBalance."""
    from ..app import create_app
    from ..compose import unit_of_work
    from ..notify.worker import Deliverer
    listeners = {}
    # PostgreSQL: a connection for each request thread and delivery thread,
    # and a few for the calls that open a second one (login's own outcome).
    delivery = config.delivery_threads if config.deliver else 0
    db = open_database(config.database, writers_lock_path,
                       pool_size=config.threads + 2 + delivery, replicas=config.replicas,
                       replica_max_lag=config.replica_max_lag)
    deliverer = Deliverer(unit_of_work(db, config)) if config.deliver else None
    app = create_app(config, db=db, on_events=deliverer.wake if deliverer else None,
                     deliverer=deliverer)
    server = connections.create_server(
        app, sock, connection_rules(config), listeners, balance=balance, threads=config.threads,
        ident="bugsvc",
        max_request_body_size=server_errors.waitress_body_limit(config.max_body_bytes))
    return _Serving(server, deliverer, config.delivery_threads)


def connection_rules(config):
    """The ConnectionRules of `config`: its limits; trusted proxies are
    spared the per-address limits (every client comes through them)."""
    return connections.ConnectionRules(limit=config.connection_limit,
                                       per_address=config.connections_per_address,
                                       exempt=tuple(config.trusted_proxies),
                                       requests_per_address=config.requests_per_address)


class _Serving:
    """A waitress server and the delivery threads of its process: the
    threads start with the server (after a worker process was forked: threads
    do not survive a fork) and stop when it stops."""

    def __init__(self, server, deliverer, threads):
        self.server = server
        self.deliverer = deliverer
        self.threads = threads

    def run(self):
        settle_collector()          # in the serving process itself (after a fork)
        delivery = self.deliverer.start(self.threads) if self.deliverer else None
        try:
            self.server.run()
        finally:
            if delivery is not None:
                delivery.stop()

    def close(self):
        self.server.close()

    def __getattr__(self, name):
        return getattr(self.server, name)       # the waitress server's own (adj ...)


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
    startup.check_database(config.database, must_exist=False)
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
    """The start-up lines: where the interface is, its documentation, and
    the web pages."""
    base = f"http://{_url_host(config.host)}:{sock.getsockname()[1]}"
    processes = f", {config.workers} workers" if config.workers > 1 else ""
    print(f"bugsvc {__version__} serving {base}/rest (database {config.database.shown}"
          f"{processes})", file=out)
    print(f"Documentation: {base}/rest/docs", file=out)
    print(f"Web pages: {base}/", file=out, flush=True)


def _shared_metrics():
    """prometheus_client's multiprocess mode for the worker processes, set
    up before they start: a new directory where each writes its values (the
    library finds it in PROMETHEUS_MULTIPROC_DIR, the one way it takes it).
    Returns (the directory, what to call with a dead worker's pid: its
    values of things kept alive go)."""
    import tempfile

    from prometheus_client import multiprocess, values
    directory = tempfile.mkdtemp(prefix="bugsvc-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    values.ValueClass = values.MultiProcessValue()
    return directory, lambda pid: multiprocess.mark_process_dead(pid, directory)


def _serve_workers(config, sock, out):
    """Serve with config.workers processes on the listening socket `sock`."""
    import tempfile

    import waitress  # noqa: F401 - imported once, before forking

    from .. import app  # noqa: F401
    lock_path = None
    if config.database.engine.writers_take_turns:     # on a lock file (store/sqlite.py)
        handle, lock_path = tempfile.mkstemp(prefix="bugsvc-writers-", suffix=".lock")
        os.close(handle)
    metrics_dir, on_exit = None, None
    if config.metrics_allow or config.metrics_token:
        metrics_dir, on_exit = _shared_metrics()
        config = dataclasses.replace(config, metrics_dir=metrics_dir)
    _print_serving(config, sock, out)
    try:
        status = workers.serve_forked(
            lambda shared, balance: _create_server(config, shared, lock_path, balance), sock,
            config.workers, pin=config.pin_cores, on_exit=on_exit)
    finally:
        sock.close()
        if lock_path is not None:
            os.unlink(lock_path)
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    print("bugsvc stopped.", file=out, flush=True)
    return status
