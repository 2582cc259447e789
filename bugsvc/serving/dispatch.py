"""Request threads shared fairly between client addresses.

waitress hands complete requests to its request threads first come, first
served, from one queue: a client sending expensive requests over many
connections, back to back, kept every thread busy with its own, and the
requests of everybody else waited behind them. Here each client address
may hold at most `per_address` request threads at once; its further
complete requests wait in a queue of their own, and the threads take the
queues of the addresses in turn (round-robin), so one address's backlog
never comes before another address's first request.

How many at once matters more than which share of the threads: a serving
process runs its Python threads on one core, one at a time under the
interpreter's lock, and every request thread of one address that has work
to do competes for that lock with the others' requests, each of which
waits for it again after every database call. Measured (bench/misbehave.py,
8 threads, 4 well-behaved clients beside 8 connections of refused searches
from one address; bench/results/2026-11-27-production-searches-*): with 4
of that address's requests running at once the others' median latency was
about 4 times the quiet one, with 2 at once 1.3 to 1.7 times, with 1 at
once no better than 2. Two is the default (--requests-per-address): a
client may still overlap two requests (a page and a form it posts, a
script's two connections), and the address's requests beyond them wait.

The address is the client's (after --trusted-proxies resolution, read from
the request's X-Forwarded-For when a trusted proxy sent it), so clients
behind a proxy are told apart; requests whose address is a trusted proxy's
own are not limited (every client would share it). The limit holds per
serving process.
"""

import collections
import threading

from waitress.task import ThreadedTaskDispatcher


class AddressQueue:
    """Tasks waiting for a request thread, a queue per client address.

    per_address: tasks of one address running at once (0: no limit);
    unlimited: a function of an address, true for addresses that are not
    limited. Not thread-safe: the dispatcher holds its lock around every call.
    """

    def __init__(self, per_address, unlimited=lambda address: False):
        self.per_address = per_address
        self.unlimited = unlimited
        self.waiting = {}                   # address -> deque of tasks, never empty
        self.running = {}                   # address -> tasks running, never 0
        self.turns = collections.deque()    # addresses with a task waiting and room to run it

    def __len__(self):
        """Tasks waiting, whether their address has room or not."""
        return sum(len(tasks) for tasks in self.waiting.values())

    def ready(self):
        """True when a task can be taken."""
        return bool(self.turns)

    def ready_count(self):
        """Tasks that could be taken now (each waiting address's, up to its room)."""
        return sum(min(len(self.waiting[address]), self._free(address))
                   for address in self.turns)

    def more_ready_than(self, count):
        """True when more than `count` tasks could be taken now (ready_count()
        > count, reading no more addresses than it takes to know)."""
        ready = 0
        for address in self.turns:
            ready += min(len(self.waiting[address]), self._free(address))
            if ready > count:
                return True
        return False

    def put(self, task, address):
        """Queue `task` of client `address`."""
        tasks = self.waiting.get(address)
        if tasks is None:
            tasks = self.waiting[address] = collections.deque()
            if self._room(address):
                self.turns.append(address)
        tasks.append(task)

    def take(self):
        """(task, address): the next task of the next address in turn, now
        counted as running. Errors: IndexError when none is ready."""
        address = self.turns.popleft()
        tasks = self.waiting[address]
        task = tasks.popleft()
        self.running[address] = self.running.get(address, 0) + 1
        if not tasks:
            del self.waiting[address]
        elif self._room(address):
            self.turns.append(address)          # its next one after the others' turns
        return task, address

    def done(self, address):
        """A task of `address` taken before has finished."""
        had_room = self._room(address)
        count = self.running[address] - 1
        if count:
            self.running[address] = count
        else:
            del self.running[address]
        if not had_room and address in self.waiting:
            self.turns.append(address)

    def drain(self):
        """Every waiting task (they leave the queue)."""
        tasks = [task for waiting in self.waiting.values() for task in waiting]
        self.waiting.clear()
        self.turns.clear()
        return tasks

    def _room(self, address):
        return self._free(address) > 0

    def _free(self, address):
        """How many more tasks of `address` may run now."""
        if not self.per_address or self.unlimited(address):
            return float("inf")
        return self.per_address - self.running.get(address, 0)


class WakeOnce:
    """The request threads' condition (waitress's `queue_cv`: wait, notify,
    notify_all), which knows how many of the threads it woke have not yet
    come back from `wait` (`woken`), so that a task is not given a second
    thread while the first is still on its way, and which wakes the thread
    that went to sleep last (its stack and data are the likeliest still in
    the core's caches). Every call is made with `lock` held."""

    def __init__(self, lock):
        self.lock = lock
        self.sleepers = []          # a held lock per sleeping thread, the latest last
        self.woken = 0

    def wait(self):
        """Release the lock and sleep until woken; hold the lock again."""
        sleeper = threading.Lock()
        sleeper.acquire()
        self.sleepers.append(sleeper)
        self.lock.release()
        try:
            sleeper.acquire()
        finally:
            self.lock.acquire()
        self.woken -= 1

    def notify(self, n=1):
        """Wake up to `n` sleeping threads, the latest sleepers first."""
        for _ in range(min(n, len(self.sleepers))):
            self.sleepers.pop().release()
            self.woken += 1

    def notify_all(self):
        self.notify(len(self.sleepers))


class FairTaskDispatcher(ThreadedTaskDispatcher):
    """waitress's thread pool taking tasks from an AddressQueue: `add_task`
    takes the client address of the task too."""

    def __init__(self, per_address, unlimited=lambda address: False):
        super().__init__()
        self.queue_cv = WakeOnce(self.lock)
        self.queue = AddressQueue(per_address, unlimited)

    def add_task(self, task, address=""):
        with self.lock:
            self.queue.put(task, address)
            if not self.queue.ready():
                return
            self._wake_if_more_ready()
            idle = len(self.threads) - self.stop_count - self.active_count
            if not self.queue.more_ready_than(idle):
                return
            backlog = self.queue.ready_count() - idle
        self.queue_logger.warning("Task queue depth is %d", backlog)

    def handler_thread(self, thread_no):
        """A request thread: run tasks in turn until told to stop (waitress's
        loop, with the address of each task counted while it runs)."""
        finished = None                 # the address of the task this thread just ran
        while True:
            with self.lock:
                # The end of one task and the taking of the next are one step
                # under the lock, so the network thread never sees the room
                # between them and wakes another thread for a task this one
                # takes.
                if finished is not None:
                    self.queue.done(finished)
                    finished = None
                while not self.queue.ready() and self.stop_count == 0:
                    self.active_count -= 1
                    self.queue_cv.wait()
                    self.active_count += 1
                if self.stop_count > 0:
                    self.active_count -= 1
                    self.stop_count -= 1
                    self.threads.discard(thread_no)
                    self.thread_exit_cv.notify()
                    break
                task, finished = self.queue.take()
                self._wake_if_more_ready()
            try:
                task.service()
            except BaseException:
                self.logger.exception("Exception when servicing %r", task)

    def _wake_if_more_ready(self):
        """Wake a sleeping thread when the ready tasks outnumber the threads
        already woken for them (a woken thread takes some time to run: on one
        core, until the running ones give up the interpreter's lock; waking
        one per task queued meanwhile woke threads that found nothing, and
        spread the requests over every thread). Call with the lock held."""
        if self.queue.more_ready_than(self.queue_cv.woken):
            self.queue_cv.notify()

    def shutdown(self, cancel_pending=True, timeout=5):
        """Stop the threads (waiting up to `timeout` seconds); cancel the
        tasks still waiting when `cancel_pending`. True when they were."""
        stopped = super().shutdown(cancel_pending=False, timeout=timeout)
        if not cancel_pending:
            return stopped
        with self.lock:
            pending = self.queue.drain()
            if pending:
                self.logger.warning("Canceling %d pending task(s)", len(pending))
            for task in pending:
                task.cancel()
            self.queue_cv.notify_all()
        return True
