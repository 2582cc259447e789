"""The importer's HTTP client against a scripted server on loopback:
bounded concurrency, retries with growing delays on failures and 429,
Retry-After honoured, error objects answered at once, the key kept out of
messages, a kept-alive connection the source closed opened again quietly,
and each hostile answer (tests/hostile_answers.py) stopped at its bound
with one message saying what the source did."""

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import hostile_answers
from bugsvc.importer.client import Client, Limits, SourceError, SourceMisbehaved, nesting, rest_base


class Scripted:
    """Answers each request with the next (status, body, headers) of `script`
    (the last one repeats); records paths, query strings and headers."""

    def __init__(self, script, hold=0.0):
        self.script = list(script)
        self.seen = []
        self.open_now = self.most_open = 0
        self.hold = hold
        lock = threading.Lock()
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self):
                with lock:
                    scripted.open_now += 1
                    scripted.most_open = max(scripted.most_open, scripted.open_now)
                    step = scripted.script[0] if len(scripted.script) == 1 \
                        else scripted.script.pop(0)
                    scripted.seen.append((self.path, dict(self.headers)))
                time.sleep(scripted.hold)
                with lock:
                    scripted.open_now -= 1
                status, body, headers = step
                if status is None:                      # drop the connection
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if status in hostile_answers.KINDS:
                    hostile_answers.send(self, status, **(headers or {}))
                    return
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                if status == "quietly-close":
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/bugzilla/"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted():
    servers = []

    def make(script, hold=0.0):
        servers.append(Scripted(script, hold))
        return servers[-1]
    yield make
    for server in servers:
        server.stop()


def client_for(server, **kwargs):
    slept = []
    kwargs.setdefault("sleep", slept.append)
    client = Client(server.url, kwargs.pop("api_key", "secret-key-123"), **kwargs)
    return client, slept


def test_the_rest_root_is_found_from_any_form_of_the_url():
    for url in ("https://b.example.org", "https://b.example.org/", "https://b.example.org/rest",
                "https://b.example.org/rest/", "https://b.example.org/rest.cgi"):
        assert rest_base(url) == "https://b.example.org/rest"
    assert rest_base("http://h:8080/bz/rest/") == "http://h:8080/bz/rest"
    with pytest.raises(ValueError):
        rest_base("ftp://b.example.org")


def test_the_key_goes_in_the_header_and_the_parameter_and_lists_repeat(scripted):
    server = scripted([(200, {"ok": 1}, None)])
    client, _ = client_for(server)
    params = {"ids": [2, 3], "new_since": None, "permissive": True}
    assert client.get("/bug/1/comment", params) == {"ok": 1}
    path, headers = server.seen[0]
    parsed = urllib.parse.urlsplit(path)
    assert parsed.path == "/bugzilla/rest/bug/1/comment"
    assert urllib.parse.parse_qs(parsed.query) == {"ids": ["2", "3"], "permissive": ["1"],
                                                   "Bugzilla_api_key": ["secret-key-123"]}
    assert headers["X-BUGZILLA-API-KEY"] == "secret-key-123"


def test_failures_are_retried_with_growing_delays_then_succeed(scripted):
    server = scripted([(503, b"<html>busy</html>", {"Connection": "close"}),
                       (None, None, None),
                       (502, {"error": True, "code": -32000, "message": "boom"}, None),
                       (200, {"version": "5.2"}, None)])
    client, slept = client_for(server)
    assert client.get("/version") == {"version": "5.2"}
    assert len(slept) == 3 and slept[0] < slept[1] < slept[2]
    assert 1.0 <= slept[0] <= 1.25 and 4.0 <= slept[2] <= 5.0
    assert client.retried == 3 and client.reconnected == 0


def test_a_kept_alive_connection_the_source_closed_is_opened_again_quietly(scripted):
    """Apache closes a kept-alive connection after a few idle seconds without
    saying so: the next request finds it closed before any answer, and is
    sent again on a new connection without a retry or a word."""
    server = scripted([(200, {"n": 1}, None), (None, None, None), (200, {"n": 2}, None),
                       (None, None, None), (None, None, None), (200, {"n": 3}, None)])
    reasons = []
    client, slept = client_for(server, on_retry=lambda reason, delay: reasons.append(reason))
    assert client.get("/a") == {"n": 1}
    assert client.get("/b") == {"n": 2}
    assert (client.reconnected, client.retried, slept, reasons) == (1, 0, [], [])
    # A new connection that fails too is a real failure: tried again, and said.
    assert client.get("/c") == {"n": 3}
    assert client.reconnected == 2 and client.retried == 1 and len(reasons) == 1


def test_429_waits_as_long_as_retry_after_asks(scripted):
    server = scripted([(429, {"error": True, "message": "slow down"}, {"Retry-After": "7"}),
                       (429, b"", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),
                       (200, {"ok": True}, None)])
    client, slept = client_for(server)
    assert client.get("/time") == {"ok": True}
    assert slept[0] == 7.0
    assert 2.0 <= slept[1] <= 2.5       # a date already past: the growing delay
    reasons = []
    server2 = scripted([(429, b"", None), (200, {"ok": True}, None)])
    client2, _ = client_for(server2, on_retry=lambda reason, delay: reasons.append(reason))
    client2.get("/time")
    assert reasons == ["HTTP 429"]


def test_an_error_object_is_an_answer_not_a_failure(scripted):
    server = scripted([(401, {"error": True, "code": 102,
                              "message": "You are not authorized to access bug #3."}, None)])
    client, slept = client_for(server)
    with pytest.raises(SourceError) as caught:
        client.get("/bug/3")
    assert (caught.value.code, caught.value.status) == (102, 401)
    assert slept == [] and len(server.seen) == 1


def test_it_gives_up_after_the_retries_without_showing_the_key(scripted):
    server = scripted([(500, b"", None)])
    client, slept = client_for(server, retries=3)
    with pytest.raises(SourceError) as caught:
        client.get("/bug", {"id": 1})
    assert "gave up after 4 attempts: HTTP 500" in str(caught.value)
    assert "secret-key-123" not in str(caught.value)
    assert len(slept) == 3 and caught.value.code is None


def test_no_more_requests_are_open_at_once_than_asked(scripted):
    server = scripted([(200, {"ok": True}, None)], hold=0.05)
    client, _ = client_for(server, concurrency=2)
    threads = [threading.Thread(target=client.get, args=("/version",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.seen) == 8 and server.most_open == 2


# Hostile answers ---------------------------------------------------------------

SMALL = Limits(max_bytes=1024 * 1024, max_depth=64, deadline=1.0, max_wait=60.0,
               max_total_wait=120.0)


@pytest.mark.parametrize("kind, said", [
    ("endless", "the source sent more than 1 MB in one answer"),
    ("huge_length", "the source announced an answer of 3,221,225,472 bytes"),
    ("bomb", "bytes of gzip that inflate to more than 1 MB"),
    ("deep", "the source answered JSON nested 200,000 deep (at most 64 is read)"),
    ("retry_years", "the source asks to wait 3.0 years before trying again (Retry-After: "
                    "94608000)")])
def test_a_hostile_answer_stops_at_its_bound_with_what_the_source_did(scripted, kind, said):
    server = scripted([(kind, None, None)])
    client, slept = client_for(server, limits=SMALL)
    with pytest.raises(SourceMisbehaved) as caught:
        client.get("/bug/1/comment")
    message = str(caught.value)
    assert said in message and message.endswith("(/bug/1/comment)"), message
    assert slept == [] and len(server.seen) == 1          # not tried again
    assert client.bytes_read <= SMALL.max_bytes + 64 * 1024
    assert "Traceback" not in message and "secret-key-123" not in message


def test_a_source_dripping_a_byte_at_a_time_is_stopped_at_the_requests_deadline(scripted):
    """Each byte comes well within the socket timeout (0.5 s), so only the
    request's own deadline (1 s) ends it: this test takes about a second."""
    server = scripted([("drip", None, {"drip_every": 0.05})])
    client, _ = client_for(server, limits=SMALL, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(SourceMisbehaved) as caught:
        client.get("/bug/1")
    took = time.monotonic() - started
    assert "the source took more than 1 s to answer one request" in str(caught.value)
    # Stopped at its deadline, not by the end of the drip (30 s); the upper
    # bound leaves a loaded machine room.
    assert 0.9 <= took < hostile_answers.DRIP_FOR / 3


def test_waits_the_source_asks_for_are_bounded_one_by_one_and_in_all(scripted):
    busy = (503, b"", {"Retry-After": "50"})
    server = scripted([busy, busy, busy, (200, {"ok": True}, None)])
    client, slept = client_for(server, limits=SMALL)
    with pytest.raises(SourceMisbehaved) as caught:
        client.get("/version")
    assert slept == [50.0, 50.0]
    assert "kept one request waiting 100 s already and asks for 50 s more (HTTP 503); " \
           "at most 2.0 min in all is waited" in str(caught.value)


def test_nesting_is_measured_without_parsing_and_strings_do_not_count():
    assert nesting(b'{"a": [1, {"b": "[[[[{{{{"}], "c": "\\"}') == 3
    assert nesting(b'"just text"') == 0 and nesting(b"[]") == 1
    assert nesting(b"[" * 200_000) == 200_000
    assert nesting(b'[{"x": "\\\"[[["}]') == 2
