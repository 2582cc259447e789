"""The lines the command line's logging writes (the access log among them)
are logging's own, with the date and time made once a second."""

import io
import logging
import re

import pytest
from freezegun import freeze_time

from bugsvc.log_lines import LineFormatter, LineHandler, line_writer


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


# The access log's quick way: the line the command line's handler would
# write, without a LogRecord, and only where that handler alone would get it.

def _lines_both_ways(monkeypatch, moment):
    """(the line written through logging, the line write_line writes), both
    at `moment`, by the command line's handler on the root logger alone."""
    stream = io.StringIO()
    handler = LineHandler(stream)
    monkeypatch.setattr(logging.root, "handlers", [handler])
    logging.root.setLevel(logging.INFO)
    with freeze_time(moment):
        logging.getLogger("bugsvc.access").info("%s %d", "GET", 200)
        line_writer(logging.getLogger("bugsvc.access"))("bugsvc.access", "GET 200")
    return stream.getvalue().splitlines()


@pytest.mark.parametrize("moment", ["2026-11-27 14:05:01.123456", "2026-11-27 23:59:59.999",
                                    "2026-11-28 00:00:00.004"])
def test_the_quick_way_writes_the_line_logging_writes(monkeypatch, moment):
    through_logging, quick = _lines_both_ways(monkeypatch, moment)
    assert quick == through_logging
    assert quick.endswith(" bugsvc.access GET 200")


def _root_with(monkeypatch, *handlers):
    monkeypatch.setattr(logging.root, "handlers", list(handlers))
    logging.root.setLevel(logging.INFO)


@pytest.fixture(autouse=True)
def _levels_kept():
    """The levels of the loggers these tests change, set back after each
    (with setLevel, so logging's caches follow)."""
    loggers = (logging.root, logging.getLogger("bugsvc.access"))
    saved = [(logger, logger.level) for logger in loggers]
    yield
    for logger, level in saved:
        logger.setLevel(level)


def test_the_quick_way_only_where_the_handler_alone_gets_the_record(monkeypatch):
    logger = logging.getLogger("bugsvc.access")
    ours = LineHandler(io.StringIO())
    _root_with(monkeypatch, ours)
    assert line_writer(logger) == ours.write_line
    # Another handler beside it (a test's capture, an application's file).
    _root_with(monkeypatch, ours, logging.StreamHandler(io.StringIO()))
    assert line_writer(logger) is None
    # A plain StreamHandler alone, or no handler at all.
    _root_with(monkeypatch, logging.StreamHandler(io.StringIO()))
    assert line_writer(logger) is None
    _root_with(monkeypatch)
    assert line_writer(logger) is None
    # INFO not wanted: by the logger's level, the handler's, or logging.disable.
    _root_with(monkeypatch, ours)
    logger.setLevel(logging.WARNING)
    assert line_writer(logger) is None
    logger.setLevel(logging.NOTSET)
    monkeypatch.setattr(ours, "level", logging.WARNING)
    assert line_writer(logger) is None
    monkeypatch.setattr(ours, "level", logging.NOTSET)
    logging.disable(logging.INFO)
    try:
        assert line_writer(logger) is None
    finally:
        logging.disable(logging.NOTSET)
    # A filter on the way, or the logger not passing its records up.
    monkeypatch.setattr(logger, "filters", [lambda record: True])
    assert line_writer(logger) is None
    monkeypatch.setattr(logger, "filters", [])
    monkeypatch.setattr(logger, "propagate", False)
    assert line_writer(logger) is None
    monkeypatch.setattr(logger, "propagate", True)
    assert line_writer(logger) == ours.write_line


def test_requests_are_logged_the_quick_way_with_the_same_message(monkeypatch, client, caplog):
    """A request's access line is the one logging would write: the client's
    address, method, path with its query (secrets hidden), status, size and
    time taken."""
    stream = io.StringIO()
    _root_with(monkeypatch, LineHandler(stream))
    client.simulate_get("/rest/version", query_string="Bugzilla_api_key=SECRET&x=1")
    quick = [line.split(" bugsvc.access ", 1)[1] for line in stream.getvalue().splitlines()
             if " bugsvc.access " in line]
    # The same request, logged through logging (a capturing handler beside ours).
    caplog.set_level(logging.INFO, logger="bugsvc.access")
    _root_with(monkeypatch, LineHandler(io.StringIO()), caplog.handler)
    client.simulate_get("/rest/version", query_string="Bugzilla_api_key=SECRET&x=1")
    logged = [record.getMessage() for record in caplog.records if record.name == "bugsvc.access"]
    pattern = re.compile(r'^\S+ "GET /rest/version\?Bugzilla_api_key=\[hidden\]&x=1" 200 \d+ '
                         r'\d+\.\dms$')
    assert len(quick) == 1 and pattern.match(quick[0]), quick
    assert len(logged) == 1 and pattern.match(logged[0]), logged
    assert quick[0].rsplit(" ", 1)[0] == logged[0].rsplit(" ", 1)[0]
