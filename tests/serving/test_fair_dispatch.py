"""Request threads shared fairly between client addresses
(bugsvc/serving/dispatch.py).

The queue per address on its own (which task comes next, how many of one
address run), with a property test over random sequences; then a real
GuardedServer on loopback whose application holds the requests of one
address until the test lets them go: another client is served meanwhile,
whether it comes from another address or through a trusted proxy."""

import http.client
import io
import socket
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st
from waitress import wasyncore

from bugsvc.cli.options import UsageError, build_parser, make_config
from bugsvc.serving import connections, server as serving
from bugsvc.serving.dispatch import AddressQueue, FairTaskDispatcher
from bugsvc.web.client_address import parse_networks
from live_server import OTHER_ADDRESS, needs_second_loopback


WAIT = 10          # seconds: generous bounds on what happens at once when it works


# The option -----------------------------------------------------------------------

def _rules(argv, environ=None):
    return serving.connection_rules(make_config(build_parser().parse_args(argv), environ or {}))


def test_one_address_may_hold_two_threads_unless_told_otherwise():
    assert _rules([]).requests_per_address == 2
    assert _rules(["--threads", "16"]).requests_per_address == 2
    assert _rules(["--requests-per-address", "5"]).requests_per_address == 5
    assert _rules(["serve", "--requests-per-address", "0"]).requests_per_address == 0
    assert _rules([], {"BUGSVC_REQUESTS_PER_ADDRESS": "3"}).requests_per_address == 3


@pytest.mark.parametrize("value", ["-1", "two", "1.5", "100001"])
def test_bad_requests_per_address_are_usage_errors(value):
    with pytest.raises(UsageError, match="--requests-per-address"):
        _rules(["--requests-per-address", value])


def test_the_server_shares_its_threads_by_the_option(tmp_path):
    config = make_config(build_parser().parse_args(
        ["--threads", "6", "--requests-per-address", "2", "--db", str(tmp_path / "t.sqlite")]),
        {})
    serving.prepare_database(config, io.StringIO()).close()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    made = serving._create_server(config, listener)
    try:
        assert made.task_dispatcher.queue.per_address == 2 and made.adj.threads == 6
    finally:
        made.task_dispatcher.shutdown()
        made.close()


# The queue ------------------------------------------------------------------------

def _take_all(queue):
    taken = []
    while queue.ready():
        taken.append(queue.take())
    return taken


def test_one_address_runs_at_most_its_share_and_the_rest_waits_in_order():
    queue = AddressQueue(per_address=2)
    for n in range(5):
        queue.put(f"a{n}", "10.0.0.1")
    assert _take_all(queue) == [("a0", "10.0.0.1"), ("a1", "10.0.0.1")]
    assert len(queue) == 3 and not queue.ready() and queue.ready_count() == 0
    queue.done("10.0.0.1")
    assert queue.ready_count() == 1
    assert _take_all(queue) == [("a2", "10.0.0.1")]
    queue.done("10.0.0.1")
    queue.done("10.0.0.1")
    assert _take_all(queue) == [("a3", "10.0.0.1"), ("a4", "10.0.0.1")]
    assert len(queue) == 0


def test_another_address_is_served_while_one_is_at_its_share():
    queue = AddressQueue(per_address=1)
    queue.put("a0", "10.0.0.1")
    queue.put("a1", "10.0.0.1")
    assert queue.take() == ("a0", "10.0.0.1")
    queue.put("b0", "10.0.0.2")
    assert queue.ready() and queue.take() == ("b0", "10.0.0.2")
    assert not queue.ready()


def test_addresses_take_turns_whatever_their_backlog():
    queue = AddressQueue(per_address=0)          # no limit: still in turn
    for n in range(4):
        queue.put(f"a{n}", "a")
    queue.put("b0", "b")
    queue.put("c0", "c")
    queue.put("b1", "b")
    assert [task for task, _ in _take_all(queue)] == ["a0", "b0", "c0", "a1", "b1", "a2", "a3"]


def test_addresses_spared_the_limit_run_as_many_as_come():
    queue = AddressQueue(per_address=1, unlimited=lambda address: address == "proxy")
    for n in range(3):
        queue.put(f"p{n}", "proxy")
        queue.put(f"a{n}", "a")
    assert [task for task, _ in _take_all(queue)] == ["p0", "a0", "p1", "p2"]


def test_drain_hands_back_every_waiting_task():
    queue = AddressQueue(per_address=1)
    for task, address in (("a0", "a"), ("a1", "a"), ("b0", "b")):
        queue.put(task, address)
    queue.take()
    assert sorted(queue.drain()) == ["a1", "b0"]
    assert len(queue) == 0 and not queue.ready()


_STEPS = st.lists(st.one_of(st.tuples(st.just("put"), st.sampled_from("abcd")),
                            st.tuples(st.just("take"), st.just("")),
                            st.tuples(st.just("done"), st.integers(0, 20))), max_size=80)


@settings(max_examples=300, deadline=None)
@given(per_address=st.integers(0, 3), steps=_STEPS)
def test_the_queue_keeps_its_promises_in_any_sequence(per_address, steps):
    queue = AddressQueue(per_address, unlimited=lambda address: address == "d")
    waiting = {address: [] for address in "abcd"}
    running = []                                   # (task, address) taken, not done
    serial = 0
    for action, value in steps:
        if action == "put":
            queue.put(serial, value)
            waiting[value].append(serial)
            serial += 1
        elif action == "take":
            can_run = [address for address in "abcd" if waiting[address] and (
                not per_address or address == "d"
                or sum(1 for _, a in running if a == address) < per_address)]
            assert queue.ready() == bool(can_run)
            assert queue.ready_count() == sum(
                len(waiting[address]) if not per_address or address == "d"
                else min(len(waiting[address]),
                         per_address - sum(1 for _, a in running if a == address))
                for address in can_run)
            assert all(queue.more_ready_than(count) == (queue.ready_count() > count)
                       for count in range(4))
            if can_run:
                task, address = queue.take()
                assert address in can_run and task == waiting[address].pop(0)   # in order
                running.append((task, address))
        elif running:
            _, address = running.pop(value % len(running))
            queue.done(address)
        assert len(queue) == sum(len(tasks) for tasks in waiting.values())


def test_the_dispatcher_runs_another_address_while_one_holds_its_share():
    dispatcher = FairTaskDispatcher(per_address=1)
    dispatcher.set_thread_count(2)
    release, started = threading.Event(), []
    entered = threading.Semaphore(0)

    class Task:
        def __init__(self, name):
            self.name = name
            self.done = threading.Event()

        def service(self):
            started.append(self.name)
            entered.release()
            if self.name.startswith("a"):
                release.wait(WAIT)
            self.done.set()

        def cancel(self):
            pass

    tasks = [Task(name) for name in ("a0", "a1", "a2", "b0")]
    try:
        for task in tasks:
            dispatcher.add_task(task, task.name[0])
        assert tasks[3].done.wait(WAIT)            # b0 ran while a0 held a's share
        assert started == ["a0", "b0"] and not tasks[0].done.is_set()
        release.set()
        assert all(task.done.wait(WAIT) for task in tasks)
        assert started == ["a0", "b0", "a1", "a2"]
    finally:
        release.set()
        dispatcher.shutdown()


@pytest.mark.parametrize("per_address", [0, 1, 2])
def test_every_task_runs_when_threads_take_the_next_themselves(per_address):
    """A thread done with a task takes the next ready one itself and wakes
    another only for a second: with many addresses' tasks arriving while
    threads finish theirs, none is left waiting, and no address ever runs
    more than its share."""
    dispatcher = FairTaskDispatcher(per_address=per_address)
    dispatcher.set_thread_count(4)
    lock, running, most = threading.Lock(), {}, {}

    class Task:
        def __init__(self, address):
            self.address = address
            self.done = threading.Event()

        def service(self):
            with lock:
                running[self.address] = running.get(self.address, 0) + 1
                most[self.address] = max(most.get(self.address, 0), running[self.address])
            sum(range(3000))                       # a little work, so tasks overlap
            with lock:
                running[self.address] -= 1
            self.done.set()

        def cancel(self):
            pass

    tasks = [Task("abc"[n % 3] if n % 5 else "d") for n in range(300)]
    try:
        for number, task in enumerate(tasks, 1):
            dispatcher.add_task(task, task.address)
            if number % 50 == 0:                   # every thread idle again, then more come
                assert all(task.done.wait(WAIT) for task in tasks[:number])
        assert all(task.done.wait(WAIT) for task in tasks)
        assert not per_address or max(most.values()) <= per_address
    finally:
        dispatcher.shutdown()


class _ThreadNoted:
    """A task that notes the thread it ran on; with `hold` (an Event), it
    then keeps its thread until the event is set."""

    def __init__(self, hold=None):
        self.thread = None
        self.done = threading.Event()
        self.hold = hold

    def service(self):
        self.thread = threading.get_ident()
        self.done.set()
        if self.hold is not None:
            self.hold.wait(WAIT)

    def cancel(self):
        pass


def test_tasks_queued_behind_a_running_one_wake_no_other_thread():
    """Tasks that cannot run yet (their address holds its share) wake no
    thread; the thread running the first takes each next one itself."""
    dispatcher = FairTaskDispatcher(per_address=1)
    release = threading.Event()
    wakes = []
    sleep = dispatcher.queue_cv.wait

    def counted_sleep(*args):
        woke = sleep(*args)
        wakes.append(threading.get_ident())
        return woke

    tasks = [_ThreadNoted(hold=release)] + [_ThreadNoted() for _ in range(40)]
    try:
        dispatcher.queue_cv.wait = counted_sleep
        dispatcher.set_thread_count(8)
        _until(lambda: dispatcher.active_count == 0)      # every thread asleep first
        for task in tasks:
            dispatcher.add_task(task, "a")
        assert tasks[0].done.wait(WAIT)
        time.sleep(0.2)                                   # any other thread woken comes back
        assert wakes == [tasks[0].thread]
        release.set()
        assert all(task.done.wait(WAIT) for task in tasks)
        assert {task.thread for task in tasks} == {tasks[0].thread}
    finally:
        release.set()
        dispatcher.shutdown()


def test_tasks_beyond_the_idle_threads_are_logged_as_the_queue_depth(caplog):
    """As waitress does: a task that finds no idle thread is logged with how
    many wait; none is logged while a thread is free for each."""
    dispatcher = FairTaskDispatcher(per_address=0)
    release = threading.Event()

    held = _ThreadNoted(hold=release)
    try:
        dispatcher.set_thread_count(1)
        _until(lambda: dispatcher.active_count == 0)
        with caplog.at_level("WARNING", logger="waitress.queue"):
            dispatcher.add_task(held, "a")
            assert held.done.wait(WAIT)
            assert caplog.messages == []
            dispatcher.add_task(_ThreadNoted(), "b")
            dispatcher.add_task(_ThreadNoted(), "a")
        assert caplog.messages == ["Task queue depth is 1", "Task queue depth is 2"]
    finally:
        release.set()
        dispatcher.shutdown()


def test_tasks_one_after_another_reuse_the_thread_that_slept_last():
    """With tasks coming one at a time, the thread woken is the one that went
    to sleep last (warm caches), not each of the pool's threads in turn."""
    dispatcher = FairTaskDispatcher(per_address=2)
    dispatcher.set_thread_count(8)
    threads = set()
    try:
        _until(lambda: dispatcher.active_count == 0)
        for _ in range(100):
            task = _ThreadNoted()
            dispatcher.add_task(task, "a")
            assert task.done.wait(WAIT)
            threads.add(task.thread)
            _until(lambda: dispatcher.active_count == 0)
        assert len(threads) == 1
    finally:
        dispatcher.shutdown()


# A real server ----------------------------------------------------------------------

class HeldServer:
    """A GuardedServer on a loopback port, its network loop in a thread,
    whose application holds every request marked X-Hold until release()."""

    def __init__(self, threads, **rules):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.map = {}
        self.held = threading.Semaphore(0)       # one release per request that began holding
        self.holding = []                        # the X-Hold values of requests held
        self._release = threading.Event()
        self.server = connections.create_server(
            self._app, listener, connections.ConnectionRules(**rules), self.map, threads=threads)
        self._running = True
        self._loop = threading.Thread(target=self._run, daemon=True)
        self._loop.start()

    def _app(self, environ, start_response):
        if environ.get("HTTP_X_HOLD"):
            self.holding.append(environ["HTTP_X_HOLD"])
            self.held.release()
            self._release.wait(WAIT * 3)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    def _run(self):
        while self._running:
            wasyncore.loop(timeout=0.05, map=self.map, use_poll=True, count=1)

    def release(self):
        self._release.set()

    def close(self):
        self.release()
        self._running = False
        self._loop.join(WAIT)
        self.server.task_dispatcher.shutdown()
        for dispatcher in list(self.map.values()):
            dispatcher.close()


@pytest.fixture
def held_server():
    made = []

    def make(threads, **rules):
        made.append(HeldServer(threads, **rules))
        return made[-1]
    yield make
    for each in made:
        each.close()


def _send(port, source="127.0.0.1", headers=None):
    """A connection from `source` that sent one GET; read its answer later."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT,
                                      source_address=(source, 0))
    conn.request("GET", "/", headers=headers or {})
    return conn


def _status(conn):
    try:
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _flood(server, count, headers=None, running=2):
    """`count` held requests from 127.0.0.1, each on its own connection;
    returns them once `running` of them are held and the others wait in
    the queue."""
    flood = [_send(server.port, headers={"X-Hold": "1", **(headers or {})})
             for _ in range(count)]
    for _ in range(running):
        assert server.held.acquire(timeout=WAIT)
    _until(lambda: len(server.server.task_dispatcher.queue) == count - running)
    return flood


def _until(condition):
    """Wait (up to WAIT seconds) until `condition()` is true."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the server did not get there"
        time.sleep(0.01)


@needs_second_loopback
def test_one_address_flooding_cannot_hold_every_request_thread(held_server):
    server = held_server(threads=4, requests_per_address=2)
    flood = _flood(server, 12)
    # Two of the flood's requests hold threads, ten wait their turn; another
    # address's request is answered at once, and the flood is still held.
    assert _status(_send(server.port, source=OTHER_ADDRESS)) == 200
    assert len(server.holding) == 2
    server.release()
    assert [_status(conn) for conn in flood] == [200] * 12


def test_clients_behind_a_trusted_proxy_are_told_apart_by_their_forwarded_address(held_server):
    server = held_server(threads=4, requests_per_address=2,
                         exempt=parse_networks("127.0.0.1/32"))
    flood = _flood(server, 8, headers={"X-Forwarded-For": "203.0.113.7"})
    other = _send(server.port, headers={"X-Forwarded-For": "198.51.100.2"})
    assert _status(other) == 200 and len(server.holding) == 2
    server.release()
    assert [_status(conn) for conn in flood] == [200] * 8


def test_requests_of_the_trusted_proxy_itself_are_not_limited(held_server):
    server = held_server(threads=4, requests_per_address=1,
                         exempt=parse_networks("127.0.0.1/32"))
    flood = _flood(server, 3, running=3)   # no X-Forwarded-For: the proxy's own address
    assert len(server.holding) == 3
    server.release()
    assert [_status(conn) for conn in flood] == [200] * 3


def test_without_a_trusted_proxy_a_forwarded_address_is_not_believed(held_server):
    server = held_server(threads=4, requests_per_address=1)
    flood = [_send(server.port, headers={"X-Hold": "1", "X-Forwarded-For": f"203.0.113.{n}"})
             for n in range(3)]
    assert server.held.acquire(timeout=WAIT)
    # The others wait for 127.0.0.1's one thread, whatever they claim.
    _until(lambda: len(server.server.task_dispatcher.queue) == 2)
    assert len(server.holding) == 1
    server.release()
    assert [_status(conn) for conn in flood] == [200] * 3
