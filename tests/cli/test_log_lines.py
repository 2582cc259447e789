"""The lines the command line's logging writes (the access log among them)
are logging's own, with the date and time made once a second."""

import logging

from bugsvc.cli import LineFormatter


FORMAT = "%(asctime)s %(name)s %(message)s"


def _record(created):
    record = logging.LogRecord("bugsvc.access", logging.INFO, None, 0, "%s %d", ("GET", 200),
                               None)
    record.created = created
    record.msecs = (created - int(created)) * 1000
    return record


def test_each_line_shows_the_time_logging_would_show():
    ours, theirs = LineFormatter(FORMAT), logging.Formatter(FORMAT)
    # Within one second, across a second, a minute and a day, and back.
    for created in (1795770301.001, 1795770301.999, 1795770302.5, 1795770359.75,
                    1795770360.0, 1795852799.999, 1795852800.004, 1795770301.25):
        record = _record(created)
        assert ours.format(record) == theirs.format(record)


def test_a_date_format_given_is_honoured():
    ours, theirs = LineFormatter(FORMAT, "%H:%M"), logging.Formatter(FORMAT, "%H:%M")
    record = _record(1795770301.5)
    assert ours.format(record) == theirs.format(record)
