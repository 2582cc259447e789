"""Using the machine: `--workers N` (N processes sharing one listening
socket) and SQLite in WAL mode with writes in BEGIN IMMEDIATE and a busy
timeout, so concurrent writers wait instead of failing."""

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from bugsvc import cli
from bugsvc.cli.options import UsageError, build_parser, make_config
from bugsvc.config import DEFAULT_THREADS
from bugsvc.serving import server, workers
from bugsvc.store.location import open_database


pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads worker processes from /proc")


def config_for(argv, environ=None):
    return make_config(build_parser().parse_args(argv), environ or {})


# Options ------------------------------------------------------------------------

def test_workers_option_environment_and_default():
    assert config_for([]).workers == 1
    assert config_for(["--workers", "3"]).workers == 3
    assert config_for(["serve", "--workers", "2"]).workers == 2
    assert config_for([], {"BUGSVC_WORKERS": "4"}).workers == 4
    assert config_for(["--workers", "2"], {"BUGSVC_WORKERS": "4"}).workers == 2


def test_thread_count_comes_from_flag_then_environment_then_default():
    assert config_for([]).threads == DEFAULT_THREADS
    assert config_for(["--threads", "3"]).threads == 3
    assert config_for([], {"BUGSVC_THREADS": "16"}).threads == 16
    assert config_for(["serve", "--threads", "2"], {"BUGSVC_THREADS": "16"}).threads == 2


@pytest.mark.parametrize("value", ["0", "-1", "two", "257", "1.5"])
def test_bad_thread_counts_are_usage_errors(value):
    with pytest.raises(UsageError, match="--threads"):
        config_for(["--threads", value])


def test_the_server_runs_the_configured_number_of_threads(tmp_path):
    config = config_for(["--threads", "3", "--db", str(tmp_path / "t.sqlite"), "--port", "0"])
    server.prepare_database(config, io.StringIO()).close()
    waitress_server = server._create_server(config, workers.listening_socket("127.0.0.1", 0))
    try:
        assert waitress_server.adj.threads == 3
    finally:
        waitress_server.close()


@pytest.mark.parametrize("value", ["0", "-1", "two", "65", "1.5"])
def test_bad_worker_counts_are_usage_errors(value):
    with pytest.raises(UsageError, match="--workers"):
        config_for(["--workers", value])


def test_command_line_reports_a_bad_worker_count_with_status_2():
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["--workers", "zero"], {}, out=out, err=err) == 2
    assert "--workers must be a number" in err.getvalue()


class _FakeServer:
    effective_port = 4321

    def __init__(self, sock):
        self.sock = sock
        self.where = sock.getsockname()
        self.ran = self.closed = False

    def run(self):
        self.ran = True

    def close(self):
        self.sock.close()
        self.closed = True


def test_without_fork_several_workers_fall_back_to_one_process(monkeypatch, config):
    created = []
    monkeypatch.setattr(workers, "fork_available", lambda: False)
    monkeypatch.setattr(server, "_create_server",
                        lambda cfg, sock: created.append(_FakeServer(sock)) or created[-1])
    config.workers, config.port = 3, 0
    out = io.StringIO()
    assert server.serve(config, out) == 0
    assert "needs fork()" in out.getvalue() and "one process" in out.getvalue()
    assert len(created) == 1 and created[0].ran and created[0].closed
    assert created[0].where[0] == config.host and created[0].where[1] > 0


def test_pin_cores_option_environment_and_default():
    assert config_for([]).pin_cores is True
    assert config_for(["--pin-cores", "no"]).pin_cores is False
    assert config_for([], {"BUGSVC_PIN_CORES": "off"}).pin_cores is False
    assert config_for(["--pin-cores", "yes"], {"BUGSVC_PIN_CORES": "0"}).pin_cores is True
    with pytest.raises(UsageError, match="--pin-cores must be yes or no"):
        config_for([], {"BUGSVC_PIN_CORES": "maybe"})


@pytest.mark.parametrize("pin_cores", [True, False])
def test_serving_pins_the_process_only_when_asked(monkeypatch, config, pin_cores):
    pinned = []
    monkeypatch.setattr(workers, "pin_to_core", pinned.append)
    monkeypatch.setattr(server, "_create_server", lambda cfg, sock: _FakeServer(sock))
    config.pin_cores, config.port = pin_cores, 0
    assert server.serve(config, io.StringIO()) == 0
    assert len(pinned) == (1 if pin_cores else 0)


# The real server with workers -------------------------------------------------------

def children_of(pid):
    try:
        return [int(v) for v in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def thread_cores(pid):
    """The distinct CPU sets of all threads of process `pid`."""
    return {frozenset(os.sched_getaffinity(int(task.name)))
            for task in Path(f"/proc/{pid}/task").iterdir()}


def wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.fixture
def worker_server(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUGSVC_")}
    env.update(PYTHONUNBUFFERED="1", BUGSVC_ADMIN_PASSWORD="workers-password")
    out = open(tmp_path / "out.txt", "wb")
    err = open(tmp_path / "err.txt", "wb")
    process = subprocess.Popen([sys.executable, "bugsvc.py", "--db", str(tmp_path / "w.sqlite"),
                                "--port", str(port), "--workers", "2"], cwd=ROOT, env=env,
                               stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: len(children_of(process.pid)) == 2 and _answers(url))
        yield process, url, tmp_path
    finally:
        if process.poll() is None:
            workers_left = children_of(process.pid)     # before the parent goes: then orphans
            process.kill()
            for child in workers_left:
                os.kill(child, signal.SIGKILL)
            process.wait()
        out.close()
        err.close()


def _answers(url):
    try:
        return get_json(url + "/rest/version")[0] == 200
    except OSError:
        return False


_STOPPED_WHILE_STARTING = """
import socket, sys, time
from bugsvc.serving import workers

class Server:
    def run(self):
        while True:
            time.sleep(0.05)

    def close(self):
        pass

def slow_pin(core):
    time.sleep(1.0)             # a worker just made, before it serves

workers.pin_to_core = slow_pin
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen()
print("ready", flush=True)
sys.exit(workers.serve_forked(lambda shared, balance: Server(), sock, 1, pin=True))
"""


@linux_only
def test_a_worker_told_to_stop_while_it_starts_stops(tmp_path):
    """SIGTERM reaching the service while a worker is being made (as when
    one that died is replaced) stops it: the worker does not run the
    parent's handler it was born with and serve on, leaving the parent
    waiting for it for ever."""
    process = subprocess.Popen([sys.executable, "-c", _STOPPED_WHILE_STARTING], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout.readline().strip() == b"ready"
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            for child in children_of(process.pid):
                os.kill(child, signal.SIGKILL)
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


@linux_only
def test_two_workers_serve_one_port_replace_a_dead_one_and_stop_together(worker_server):
    process, url, tmp_path = worker_server
    first = children_of(process.pid)
    assert len(first) == 2
    if len(os.sched_getaffinity(0)) >= 2:
        # Each worker runs, with all its threads, on one core of its own.
        cores = [thread_cores(pid) for pid in first]
        assert all(len(c) == 1 for c in cores) and cores[0] != cores[1]
    # Each worker's network loop wakes without preempting its requests.
    assert [os.sched_getscheduler(pid) for pid in first] == [os.SCHED_BATCH] * 2
    results = []

    def client():
        results.append(get_json(url + "/rest/product?ids=1"))

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 16 and all(status == 200 for status, _ in results)
    assert all(body["products"][0]["name"] == "TestProduct" for _, body in results)

    # A worker that dies is replaced; the service keeps answering.
    os.kill(first[0], signal.SIGKILL)
    replaced = wait_for(lambda: (lambda now: now if len(now) == 2 and first[0] not in now
                                 else None)(children_of(process.pid)))
    assert first[1] in replaced
    assert get_json(url + "/rest/version") == (200, {"version": "5.2"})

    # SIGTERM to the parent stops every worker and exits cleanly.
    workers_now = children_of(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    for pid in workers_now:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(
            f"/proc/{pid}/status").read_text().lower()
    printed = (tmp_path / "out.txt").read_text()
    assert "2 workers" in printed and printed.rstrip().endswith("bugsvc stopped.")
    with pytest.raises(OSError):
        get_json(url + "/rest/version")


def connections_held(pids, port, established_only=True):
    """{pid: connections established to `port` that the process holds}
    (Linux: its socket descriptors matched against /proc/net/tcp); with
    `established_only` False, those in any state but listening (one its
    client closed stays the worker's, and counted by it, until the worker
    closes it too)."""
    established = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                state = fields[3]
                if ((state == "01" if established_only else state != "0A")
                        and int(fields[1].rsplit(":", 1)[1], 16) == port):
                    established.add(fields[9])
    held = {}
    for pid in pids:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        held[pid] = len(inodes & established)
    return held


@linux_only
def test_keep_alive_connections_spread_over_the_workers(worker_server):
    """Eight connections opened at once, as a benchmark's or a load
    balancer's, are held four by each of two workers, time after time
    (whichever woke first used to take them all)."""
    process, url, _ = worker_server
    port = int(url.rsplit(":", 1)[1])
    pids = children_of(process.pid)
    for _ in range(5):
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        try:
            for client in clients:
                client.sendall(b"GET /rest/version HTTP/1.1\r\nHost: x\r\n\r\n")
            for client in clients:
                assert client.recv(4096).startswith(b"HTTP/1.1 200")
            assert sorted(connections_held(pids, port).values()) == [4, 4]
        finally:
            for client in clients:
                client.close()
        # Until each worker has closed its side (and counted it closed).
        wait_for(lambda: sum(connections_held(pids, port, established_only=False).values())
                 == 0)


def single_server(start, tmp_path):
    """A real one-process bugsvc (live_server's `start`), answering: by then
    its request and delivery threads have started."""
    server = start(tmp_path / "s.sqlite", {"BUGSVC_ADMIN_PASSWORD": "single-password"})
    assert server.call("GET", "/rest/version")[0] == 200
    return server.process


@linux_only
def test_a_single_server_process_runs_all_its_threads_on_one_core(start, tmp_path):
    process = single_server(start, tmp_path)
    cores = thread_cores(process.pid)
    assert len(list(Path(f"/proc/{process.pid}/task").iterdir())) > 8    # waitress's threads
    if len(os.sched_getaffinity(0)) >= 2:
        assert len(cores) == 1 and len(next(iter(cores))) == 1


def thread_policies(pid):
    """{thread id: its scheduling policy} of every thread of process `pid`."""
    return {int(task.name): os.sched_getscheduler(int(task.name))
            for task in Path(f"/proc/{pid}/task").iterdir()}


@linux_only
def test_the_network_loop_wakes_without_preempting_the_request_threads(start, tmp_path):
    process = single_server(start, tmp_path)
    policies = thread_policies(process.pid)
    # The main thread runs waitress's network loop: SCHED_BATCH, so that
    # a client's bytes arriving do not take the core from a request.
    assert policies.pop(process.pid) == os.SCHED_BATCH
    # The request threads, started before it, keep the usual policy;
    # the delivery threads, started after, inherit the loop's.
    ordinary = [tid for tid, policy in policies.items() if policy == os.SCHED_OTHER]
    assert len(ordinary) == DEFAULT_THREADS
    assert set(policies.values()) == {os.SCHED_OTHER, os.SCHED_BATCH}


@linux_only
def test_a_server_run_in_process_gives_its_thread_back_its_policy():
    seen = []

    class Recording:
        def run(self):
            seen.append(os.sched_getscheduler(0))

        def close(self):
            seen.append("closed")

    before = os.sched_getscheduler(0)
    workers.run_until_stopped(Recording())
    assert seen == [os.SCHED_BATCH, "closed"]
    assert os.sched_getscheduler(0) == before


@linux_only
def test_pinning_keeps_a_process_on_one_allowed_core():
    allowed = sorted(os.sched_getaffinity(0))
    code = ("import os; from bugsvc.serving import workers; core = workers.pin_to_core(3);"
            " print(core, sorted(os.sched_getaffinity(0)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    core, after = done.stdout.split(" ", 1)
    if len(allowed) < 2:
        assert core == "None"
    else:
        assert int(core) == allowed[3 % len(allowed)] and json.loads(after) == [int(core)]


# SQLite: WAL, BEGIN IMMEDIATE, busy timeout -----------------------------------------

@pytest.mark.engine("sqlite")   # SQLite's writers and its WAL
def test_database_is_in_wal_mode_with_a_busy_timeout(db):
    conn = db.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


@pytest.mark.engine("sqlite")   # SQLite's writers and its WAL
def test_a_second_writer_waits_for_the_first_and_readers_are_not_blocked(config):
    first, second, reader = open_database(config.database), open_database(config.database), \
        open_database(config.database)
    holding, release = threading.Event(), threading.Event()
    outcome = {}

    def first_writer():
        with first.transaction(write=True) as conn:
            conn.execute("UPDATE params SET value = 'first' WHERE name = 'maintainer'")
            holding.set()
            release.wait(10)
        first.close()

    def second_writer():
        try:
            with second.transaction(write=True) as conn:
                value = conn.execute("SELECT value FROM params WHERE name = 'maintainer'"
                                     ).fetchone()[0]
                conn.execute("UPDATE params SET value = 'second' WHERE name = 'maintainer'")
            outcome["seen"] = value
        except Exception as exc:             # noqa: BLE001 - the test reports it
            outcome["error"] = exc
        finally:
            second.close()

    a = threading.Thread(target=first_writer)
    a.start()
    assert holding.wait(10)
    b = threading.Thread(target=second_writer)
    b.start()
    b.join(0.3)
    assert b.is_alive(), "the second writer should wait for the first, not fail"
    # A reader still gets its snapshot at once (the first writer has not
    # committed): the maintainer the first start made, the administrator.
    with reader.transaction() as conn:
        assert conn.execute("SELECT value FROM params WHERE name = 'maintainer'"
                            ).fetchone()[0] == config.admin_email
    reader.close()
    release.set()
    a.join(10)
    b.join(10)
    assert outcome == {"seen": "first"}


_HOLD_LOCK = """
import sys, time
from bugsvc.store.location import open_database
db = open_database(sys.argv[1], writers_lock_path=sys.argv[2])
with db.transaction(write=True) as conn:
    conn.execute("UPDATE params SET value = 'other process' WHERE name = 'maintainer'")
    print("holding", flush=True)
    sys.stdin.readline()        # hold the turn until told (or killed)
"""


@pytest.mark.engine("sqlite")   # the lock file of SQLite's writers
@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
@pytest.mark.parametrize("ending", ["release", "kill"])
def test_worker_processes_take_turns_on_the_writers_lock_file(config, tmp_path, ending):
    lock_path = str(tmp_path / "writers.lock")
    other = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, config.database.text, lock_path],
                             cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "holding"
        mine = open_database(config.database, writers_lock_path=lock_path)
        done = threading.Event()

        def write():
            with mine.transaction(write=True) as conn:
                conn.execute("UPDATE params SET value = 'this process' WHERE name = 'maintainer'")
            mine.close()
            done.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert not done.wait(0.3), "the write must wait for the other process's turn"
        if ending == "release":
            other.stdin.write("\n")
            other.stdin.flush()
        else:
            other.kill()            # a worker that dies mid-write: the kernel frees the lock
        writer.join(20)
        assert done.is_set()
    finally:
        other.kill()
        other.wait()
    reader = open_database(config.database)
    with reader.transaction() as conn:
        value = conn.execute("SELECT value FROM params WHERE name = 'maintainer'").fetchone()[0]
    reader.close()
    assert value == "this process"
