"""What a hostile or broken source sends, for the import tests' servers on
loopback (tests/fake_bugzilla.py and the scripted server of
tests/importer/test_import_client.py): an endless answer, a gzip bomb, JSON nested
200,000 deep, a Retry-After of years, a body dripped a byte at a time, an
answer that announces gigabytes.

send(handler, kind) answers the request `handler` (a BaseHTTPRequestHandler)
that way and returns when the client has gone or the answer is done.
Proxy puts the same misbehaviour, and Apache's way with kept-alive
connections, in front of a real source (a bugsvc server on loopback).
"""

import functools
import http.client
import threading
import time
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


KINDS = ("endless", "bomb", "deep", "retry_years", "drip", "huge_length")
# How long a dripping answer goes on at most (the client must stop first).
DRIP_FOR = 30.0


@functools.lru_cache(maxsize=4)
def gzip_bomb(inflated_mb=64):
    """A gzip body of `inflated_mb` MB of spaces: about a thousandth of
    that as sent."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1024 * 1024)
    parts = [packer.compress(block) for _ in range(inflated_mb)]
    parts.append(packer.flush())
    return b"".join(parts)


def send(handler, kind, drip_every=0.1):
    """Answer `handler`'s request as `kind` (one of KINDS) does."""
    try:
        _KINDS[kind](handler, drip_every)
    except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
        pass                                       # the client stopped reading: good
    handler.close_connection = True


def _endless(handler, _):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b" " * 65536
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    handler.wfile.write(b"1\r\n[\r\n")
    for _ in range(3 * 1024 * 1024 * 1024 // len(chunk)):     # 3 GB, if nothing stops it
        handler.wfile.write(framed)


def _bomb(handler, _):
    body = gzip_bomb()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Encoding", "gzip")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _deep(handler, _):
    body = b"[" * 200_000 + b"]" * 200_000
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _retry_years(handler, _):
    body = b'{"error": true, "message": "Too many requests"}'
    handler.send_response(429)
    handler.send_header("Retry-After", str(3 * 365 * 86400))
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _drip(handler, every):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.write(b"{")
    handler.wfile.flush()
    ends = time.monotonic() + DRIP_FOR
    while time.monotonic() < ends:
        time.sleep(every)          # the source's pace, not the test's
        handler.wfile.write(b" ")
        handler.wfile.flush()


def _huge_length(handler, _):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(3 * 1024 * 1024 * 1024))
    handler.end_headers()
    handler.wfile.write(b"[")


_KINDS = {"endless": _endless, "bomb": _bomb, "deep": _deep, "retry_years": _retry_years,
          "drip": _drip, "huge_length": _huge_length}


class Proxy:
    """A proxy on loopback in front of `upstream` (a URL) that misbehaves
    on request: misbehave(kind, path) answers requests whose path (below
    /rest) starts with `path` as `kind` does, `times` times (None: always);
    keepalive_max closes each kept-alive connection after that many
    answers without saying so. start() it, use .url, stop() it."""

    _HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

    def __init__(self, upstream, keepalive_max=None):
        split = urllib.parse.urlsplit(upstream)
        self.upstream = split.netloc
        self.keepalive_max = keepalive_max
        self.troubles = []
        self.requests = self.connections = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def setup(self):
                super().setup()
                self.answered = 0
                with proxy.lock:
                    proxy.connections += 1

            def do_GET(self):
                proxy._forward(self, "GET")

            def do_POST(self):
                proxy._forward(self, "POST")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                        daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def misbehave(self, kind, path="", times=None, **settings):
        with self.lock:
            self.troubles.append([kind, path, times, settings])

    def behave(self):
        with self.lock:
            self.troubles.clear()

    def _forward(self, handler, method):
        path = urllib.parse.urlsplit(handler.path).path.removeprefix("/rest")
        with self.lock:
            self.requests += 1
            trouble = None
            for item in self.troubles:
                if path.startswith(item[1]) and item[2] != 0:
                    if item[2] is not None:
                        item[2] -= 1
                    trouble = item
                    break
        if trouble is not None:
            send(handler, trouble[0], **trouble[3])
            return
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        headers = {name: value for name, value in handler.headers.items()
                   if name.lower() not in self._HOP}
        upstream = http.client.HTTPConnection(self.upstream, timeout=60)
        try:
            upstream.request(method, handler.path, body=body, headers=headers)
            response = upstream.getresponse()
            raw = response.read()
        finally:
            upstream.close()
        handler.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in self._HOP:
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)
        handler.answered += 1
        if self.keepalive_max and handler.answered >= self.keepalive_max:
            handler.close_connection = True            # without a word
