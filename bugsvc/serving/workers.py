"""Serving with several processes (`--workers N`): one listening socket,
opened before forking, shared by N waitress processes, each with its own
threads and SQLite connections. The interpreter lock then holds each process
to one core, not the whole service. The parent only supervises: it stops the
workers on SIGTERM/SIGINT and replaces one that dies.

Each serving process is pinned to one core (Linux): its threads hand the
interpreter lock to each other at every SQLite call, and when they run on
different cores each hand-over costs a cross-core wake-up; the benchmark
measured four times the throughput and a sixth of the CPU per request for a
pinned process. Worker i takes the i-th allowed core (counting on from a
per-service offset, so two services on one host tend to take different ones).
On that core, the thread running waitress's network loop is on Linux's
SCHED_BATCH policy: a client's bytes arriving woke it and it took the core
from the request thread at work, about 1.5 times a request, each time only
to wait for the interpreter lock that thread held (wake_without_preempting).

The workers take new connections in turn by how many each holds
(ConnectionBalance), so that clients keeping a few connections open spread
over them.

Windows has no fork: there the service falls back to one process.
"""

import logging
import os
import signal
import socket
import sys
import time


log = logging.getLogger("bugsvc")
BACKLOG = 1024
RESTART_WINDOW = 10.0            # seconds
MAX_RESTARTS = 5                 # worker deaths within the window before giving up
# The signals that stop the service (and each worker).
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def fork_available():
    """True where worker processes can be forked (not on Windows)."""
    return hasattr(os, "fork")


def usable_cores():
    """How many cores this process may run on (its affinity where the
    system has one, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def pin_to_core(slot):
    """Pin this process to one of the cores it may run on, chosen by `slot`
    (worker number plus the service's offset); returns the core, or None where
    affinity is not supported or only one core is allowed. Call it before
    starting threads: Linux applies it to the calling thread, and threads
    started later inherit it."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None
    core = allowed[slot % len(allowed)]
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        return None
    return core


def core_offset():
    """Where this service starts counting cores: its process id spreads
    several services on one host over the cores."""
    return os.getpid()


def listening_socket(host, port, backlog=BACKLOG):
    """A bound, listening TCP socket on host:port (port 0: a free one)."""
    sock = bound_socket(host, port)
    try:
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def bound_socket(host, port):
    """A TCP socket bound to host:port (port 0: a free one), not listening
    yet: the address is taken (a port in use fails here), but connections
    are refused until listen()."""
    family, socktype, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, socktype, proto)
    try:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


class ConnectionBalance:
    """How many connections each worker holds, in memory the workers share
    (made before forking): a worker takes a new connection only while no
    other holds fewer. All the workers wait on the one listening socket and
    whichever wakes first accepts; clients that keep their connections
    open (a load balancer's, a benchmark's eight) could all end up on one
    worker, the others idle. A worker that is gone counts as holding none
    and is left out until its replacement holds its first.

    workers: how many; each worker calls join(slot) once forked."""

    ABSENT = -1

    def __init__(self, workers):
        from multiprocessing.sharedctypes import RawArray
        self._held = RawArray("i", [self.ABSENT] * workers)
        self.slot = None

    def join(self, slot):
        """This process is worker `slot`, holding no connection yet."""
        self.slot = slot
        self._held[slot] = 0

    def leave(self, slot):
        """Worker `slot` is gone (called by the parent)."""
        self._held[slot] = self.ABSENT

    def hold(self, connections):
        """This worker now holds `connections`."""
        self._held[self.slot] = connections

    def may_accept(self, connections):
        """True unless another worker holds fewer than `connections` (this
        worker's)."""
        return all(held < 0 or held >= connections
                   for slot, held in enumerate(self._held) if slot != self.slot)


def serve_forked(make_server, sock, workers, pin=True, on_exit=None):
    """Run `workers` processes serving the listening `sock` until SIGTERM or
    SIGINT. `make_server(sock, balance)` builds, inside each worker, the
    waitress server on that socket (connections.create_server), taking new
    connections by `balance` (the worker's ConnectionBalance). pin: keep
    each worker on a core of its own (pin_to_core). on_exit: called with
    the pid of each worker that ended.
    Returns the exit status: 0 after a requested stop, 1 when workers keep
    dying."""
    children = {}
    state = {"stopping": False}
    deaths = []
    offset = core_offset()
    balance = ConnectionBalance(workers)

    def start(slot):
        # The stop signals wait while a worker is made: the parent knows
        # the new worker before its stop() can run, and the worker has its
        # own handlers before one reaches it (with the parent's, inherited,
        # it would run stop() and then serve on, and the parent wait for
        # it for ever).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            pid = os.fork()
            if pid == 0:
                _worker(lambda: prepare(slot), lambda shared: make_server(shared, balance),
                        sock, mask)                                     # never returns
            children[pid] = slot
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def prepare(slot):
        if pin:
            pin_to_core(offset + slot)
        balance.join(slot)

    def stop(signum, frame):
        state["stopping"] = True
        for pid in list(children):
            _kill(pid)

    previous = {sig: signal.signal(sig, stop) for sig in _STOP_SIGNALS}
    try:
        for slot in range(workers):
            start(slot)
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            slot = children.pop(pid, 0)
            balance.leave(slot)
            if on_exit is not None:
                on_exit(pid)
            if state["stopping"]:
                continue
            now = time.monotonic()
            deaths[:] = [t for t in deaths if now - t < RESTART_WINDOW] + [now]
            log.error("worker %d exited (status %d)", pid, os.waitstatus_to_exitcode(status))
            if len(deaths) >= MAX_RESTARTS:
                log.error("workers keep exiting; stopping")
                stop(None, None)
                for _ in list(children):
                    os.wait()
                return 1
            start(slot)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def wake_without_preempting():
    """Put the calling thread, and the threads it starts from now on, on
    Linux's SCHED_BATCH policy: when it wakes (a client's bytes arrived), it
    no longer takes the core from the request thread running there, but
    waits for that thread's turn to end. Returns what to call to give the
    thread its policy back (nothing to do where the system has no such
    policy or refuses it)."""
    if not hasattr(os, "SCHED_BATCH"):
        return lambda: None
    try:
        before = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        return lambda: None
    return lambda: _give_back_policy(*before)


def _give_back_policy(policy, param):
    """The calling thread back on `policy` with `param`, if the system lets it."""
    try:
        os.sched_setscheduler(0, policy, param)
    except OSError:
        pass


def run_until_stopped(server):
    """Run a waitress server until Ctrl-C or SystemExit (SIGTERM is turned into
    one by the caller), then close it. While it runs, the network loop's
    thread (this one) wakes without preempting the request threads
    (wake_without_preempting)."""
    restore_policy = wake_without_preempting()
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.close()
        restore_policy()


def _kill(pid):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _worker(prepare, make_server, sock, mask):
    """Body of one forked worker, begun with the stop signals blocked:
    take its own handlers for them, let them through again (`mask`, the
    signal mask to restore), prepare(), serve until told to stop, then
    leave without running the parent's exit handlers."""
    code = 0
    try:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        prepare()
        run_until_stopped(make_server(sock))
    except (SystemExit, KeyboardInterrupt):
        pass                                    # told to stop before it served
    except BaseException:                       # noqa: BLE001 - report, then exit the child
        log.exception("worker %d failed", os.getpid())
        code = 1
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
