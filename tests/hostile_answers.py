"""What a hostile or broken source sends, for the import tests' servers on
loopback (tests/fake_bugzilla.py and the scripted server of
tests/test_import_client.py): an endless answer, a gzip bomb, JSON nested
200,000 deep, a Retry-After of years, a body dripped a byte at a time, an
answer that announces gigabytes.

send(handler, kind) answers the request `handler` (a BaseHTTPRequestHandler)
that way and returns when the client has gone or the answer is done.
"""

import functools
import time
import zlib

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
