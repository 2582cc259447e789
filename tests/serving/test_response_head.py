"""The head of an answer (bugsvc/serving/response_head.py) is the one
waitress makes, byte for byte, and leaves the task as waitress leaves it:
compared with waitress's own build_response_header over the cases its
rules tell apart (HTTP version, the request's Connection header, a status
with or without a body, a declared length or none, the application's own
Date, Server, Content-Length and Connection headers, names in any case,
repeated names), then served over a real socket."""

import http.client

from hypothesis import given, settings, strategies as st
from waitress.adjustments import Adjustments
from waitress.parser import HTTPRequestParser
from waitress.task import WSGITask

from bugsvc.serving import response_head as head_module
from bugsvc.serving.connections import OneSendTask
from bugsvc.serving.response_head import response_head


class _Server:
    def __init__(self, ident):
        self.adj = Adjustments(ident=ident)


class _Channel:
    def __init__(self, ident):
        self.server = _Server(ident)
        self.adj = self.server.adj


def _task(version, connection, ident, status, headers, content_length, start_time):
    request = f"GET /rest/version HTTP/{version}\r\nHost: localhost\r\n"
    if connection is not None:
        request += f"Connection: {connection}\r\n"
    parser = HTTPRequestParser(Adjustments())
    parser.received((request + "\r\n").encode())
    task = WSGITask(_Channel(ident), parser)
    task.status = status
    task.response_headers = list(headers)
    task.content_length = content_length
    task.start_time = start_time
    return task


_NAMES = st.sampled_from(["Content-Type", "content-type", "ETag", "etag", "Vary", "X-Thing",
                          "x-bugzilla-api-version", "Set-Cookie", "Date", "date", "Server",
                          "SERVER", "Content-Length", "content-length", "Connection",
                          "Access-Control-Allow-Origin", "WWW-Authenticate"])
_VALUES = st.text(alphabet="abc 123,;=\"-/", max_size=20)


@settings(max_examples=400, deadline=None)
@given(version=st.sampled_from(["1.0", "1.1"]),
       connection=st.sampled_from([None, "close", "keep-alive", "Keep-Alive", "upgrade"]),
       ident=st.sampled_from(["bugsvc", ""]),
       status=st.sampled_from(["200 OK", "201 Created", "204 No Content", "304 Not Modified",
                               "101 Switching Protocols", "404 Not Found"]),
       headers=st.lists(st.tuples(_NAMES, _VALUES), max_size=8),
       content_length=st.one_of(st.none(), st.integers(0, 10**6)),
       start_time=st.floats(1.7e9, 1.9e9))
def test_the_head_and_the_task_are_waitress_own(version, connection, ident, status, headers,
                                               content_length, start_time):
    ours = _task(version, connection, ident, status, headers, content_length, start_time)
    theirs = _task(version, connection, ident, status, headers, content_length, start_time)
    assert response_head(ours) == WSGITask.build_response_header(theirs)
    for name in ("response_headers", "close_on_finish", "chunked_response"):
        assert getattr(ours, name) == getattr(theirs, name), name


def test_the_date_follows_the_second_it_is_made_in():
    heads = []
    for moment in (1795770301.2, 1795770301.9, 1795770302.0, 1795770301.5):
        task = _task("1.1", None, "bugsvc", "200 OK", [], 0, moment)
        theirs = _task("1.1", None, "bugsvc", "200 OK", [], 0, moment)
        heads.append(response_head(task))
        assert heads[-1] == WSGITask.build_response_header(theirs)
    assert heads[0] == heads[1] == heads[3] != heads[2]


def test_names_past_the_bound_are_written_without_being_kept(monkeypatch):
    monkeypatch.setattr(head_module, "_capitalised", {})
    monkeypatch.setattr(head_module, "NAMES_KEPT", 2)
    headers = [(f"x-name-{number}", "1") for number in range(5)]
    task = _task("1.1", None, "bugsvc", "200 OK", headers, 0, 1795770301.0)
    theirs = _task("1.1", None, "bugsvc", "200 OK", headers, 0, 1795770301.0)
    assert response_head(task) == WSGITask.build_response_header(theirs)
    assert len(head_module._capitalised) == 2


def test_served_answers_carry_the_head(start, tmp_path):
    assert OneSendTask.build_response_header is not WSGITask.build_response_header
    server = start(tmp_path / "bugs.db")
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", "/rest/version")
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status == 200 and body == b'{"version":"5.2"}'
        assert answer.getheader("Content-Length") == str(len(body))
        assert answer.getheader("Server") == "bugsvc"
        assert answer.getheader("Date").endswith(" GMT")
        assert answer.getheader("Etag") and answer.getheader("Vary") == "Accept"
        names = [name for name, _ in answer.getheaders()]
        assert names == sorted(names)
        connection.request("GET", "/rest/version")      # the connection was kept open
        assert connection.getresponse().read() == body
    finally:
        connection.close()
