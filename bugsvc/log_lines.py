"""The lines the service logs: what the command line's handler writes, and
a quicker way for the access log's line per request.

The command line (cli/__init__.py) sends every logger's records to one
LineHandler on the root logger, which writes `DATE TIME,MS NAME MESSAGE`
lines to standard error. Going through logging costs a request some 25
microseconds (a LogRecord, the handler chain, the formatter): a third of
what a small answer costs in all. `line_writer(logger)` is that handler's
`write_line` whenever a record of `logger` would reach that handler alone,
so the access log writes the very same line without the record; wherever
logging is set up otherwise (another handler, a filter, a level that drops
INFO: a test's log capture, an embedding application) it is None and the
record goes through logging as before.
"""

import logging
import time


FORMAT = "%(asctime)s %(name)s %(message)s"


class LineFormatter(logging.Formatter):
    """logging's Formatter, writing the date and time of a line as it does
    ('2026-11-27 14:05:01,123', local time), with the part up to the second
    made once a second rather than for every line (the access log writes one
    per request)."""

    _second = (None, "")

    def formatTime(self, record, datefmt=None):
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        return self.stamp(record.created)

    def stamp(self, created):
        """The date and time of a line written at `created` (time.time())."""
        second = int(created)
        kept, text = self._second
        if kept != second:
            text = time.strftime(self.default_time_format, self.converter(created))
            self._second = (second, text)
        return self.default_msec_format % (text, (created - second) * 1000)


class LineHandler(logging.StreamHandler):
    """The command line's handler: FORMAT lines on `stream`; write_line
    writes one without a LogRecord."""

    def __init__(self, stream):
        super().__init__(stream)
        self.setFormatter(LineFormatter(FORMAT))

    def write_line(self, name, message):
        """Write the line a record of logger `name` with `message` would
        make now. A stream that fails is ignored, as logging's own
        handlers do once they have reported it."""
        line = f"{self.formatter.stamp(time.time())} {name} {message}\n"
        with self.lock:
            try:
                self.stream.write(line)
                self.stream.flush()
            except (OSError, ValueError):
                pass


def line_writer(logger, level=logging.INFO):
    """The write_line of the one LineHandler a record of `logger` at `level`
    would reach, or None when logging would do anything else with it (not
    enabled, a filter, other handlers, or none)."""
    if logging.root.manager.disable >= level or not logger.isEnabledFor(level):
        return None
    found = None
    current = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if found is not None or type(handler) is not LineHandler or handler.filters \
                    or level < handler.level:
                return None
            found = handler
        current = current.parent if current.propagate else None
    return found.write_line if found is not None else None
