"""A progress bar on a terminal, a line per tenth otherwise (logs, CI)."""

import time


class Progress:
    """Shows `done/total unit`, the rate and the time left on `out`."""

    def __init__(self, total, unit, out, width=30):
        self.total, self.unit, self.out, self.width = max(total, 1), unit, out, width
        self.count = 0
        self.started = time.perf_counter()
        self.tty = hasattr(out, "isatty") and out.isatty()
        self._last_tenth = -1
        self._last_draw = 0.0

    def advance(self, amount):
        self.count += amount
        now = time.perf_counter()
        tenth = self.count * 10 // self.total
        if self.tty and (now - self._last_draw >= 0.2 or self.count >= self.total):
            self._last_draw = now
            self.out.write("\r" + self._line(now))
            self.out.flush()
        elif not self.tty and tenth != self._last_tenth:
            self._last_tenth = tenth
            self.out.write(self._line(now) + "\n")
            self.out.flush()

    def _line(self, now):
        share = min(self.count / self.total, 1.0)
        filled = int(share * self.width)
        elapsed = now - self.started
        rate = self.count / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.count) / rate if rate > 0 else 0.0
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {share:4.0%} "
                f"{self.count:,}/{self.total:,} {self.unit}  {rate:,.{1 if rate < 10 else 0}f}/s  "
                f"{elapsed:5.1f}s elapsed, {left:5.1f}s left")

    def done(self):
        if self.tty:
            self.out.write("\r" + self._line(time.perf_counter()) + "\n")
            self.out.flush()
