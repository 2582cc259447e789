"""The progress of a run on stderr: a bar redrawn in place on a terminal,
plain lines (every tenth of the way, and at least every half minute)
otherwise, so logs and CI keep a readable record."""

import threading
import time


class Progress:
    """done/total bugs, the other counts, the rate and the time left."""

    def __init__(self, out, clock=time.monotonic, width=28):
        self.out = out
        self.clock = clock
        self.width = width
        self.tty = hasattr(out, "isatty") and out.isatty()
        self.total = 0
        self.done = 0
        self.extra = {}
        self.retries = 0
        self._started = None
        self._last_draw = 0.0
        self._last_tenth = -1
        self._lock = threading.Lock()

    def say(self, text):
        """A line of its own (a phase starting), below any bar."""
        with self._lock:
            if self.tty and self._started is not None:
                self.out.write("\r\033[K")
            self.out.write(text + "\n")
            self.out.flush()

    def start(self, total):
        with self._lock:
            self.total, self.done = total, 0
            self._started = self.clock()
            self._last_tenth = -1
        self._draw(force=True)

    def advance(self, bugs, **counts):
        with self._lock:
            self.done += bugs
            for name, amount in counts.items():
                self.extra[name] = self.extra.get(name, 0) + amount
        self._draw()

    def retry(self, reason, delay):
        with self._lock:
            self.retries += 1
        if not self.tty:
            self.say(f"  the source failed ({reason}); trying again in {delay:.1f}s")
        else:
            self._draw(force=True)

    def finish(self):
        """The last state: the bar's final line on a terminal; otherwise a
        line only when the last one drawn was not already the end."""
        if self.tty or self._last_tenth != 10:
            self._draw(force=True, last=True)

    def line(self, now=None):
        now = self.clock() if now is None else now
        total = max(self.total, 1)
        share = min(self.done / total, 1.0)
        elapsed = now - (now if self._started is None else self._started)
        rate = self.done / elapsed * 60 if elapsed > 0 else 0.0
        left = (self.total - self.done) / (rate / 60) if rate > 0 else None
        filled = int(share * self.width)
        extra = ", ".join(f"{amount:,} {name}" for name, amount in self.extra.items())
        retries = f", {self.retries} retries" if self.retries else ""
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {share:4.0%} "
                f"{self.done:,}/{self.total:,} bugs" + (f" ({extra})" if extra else "")
                + f"  {rate:,.0f} bugs/min  {_duration(elapsed)} elapsed, "
                + (f"{_duration(left)} left" if left is not None else "time left unknown")
                + retries)

    def _draw(self, force=False, last=False):
        with self._lock:
            if self._started is None:
                return
            now = self.clock()
            if self.tty:
                if force or last or now - self._last_draw >= 0.2:
                    self._last_draw = now
                    self.out.write("\r\033[K" + self.line(now) + ("\n" if last else ""))
                    self.out.flush()
                return
            tenth = self.done * 10 // max(self.total, 1) if self.total else 10
            if force or last or tenth != self._last_tenth or now - self._last_draw >= 30:
                self._last_tenth = tenth
                self._last_draw = now
                self.out.write(self.line(now) + "\n")
                self.out.flush()


def _duration(seconds):
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
