"""HTTP to the source: JSON over REST (and, for the few facts only its
administration pages show, HTML), patient and bounded.

The standard library only (http.client with one kept-alive connection per
thread, zlib): an importer needs GET with a few headers, and no extra
dependency is worth that. At most `concurrency` requests are open at once,
whatever the number of threads asking. A request that fails for a reason
that may pass (no connection, a timeout, 429, 5xx, a body that is not JSON)
is tried again after a growing delay: 1, 2, 4 ... seconds (at most
MAX_DELAY, with some jitter), or as long as the source's Retry-After asks,
up to `retries` times. An answer with an error object is a SourceError at
once: the source has spoken.

The importer runs against URLs people type, so every answer is bounded
(Limits): its size as sent and once inflated, how deeply its JSON nests,
how long one request may take in all (a source that drips a byte a second
never trips a socket timeout), how long one wait may be (a Retry-After of
years) and how long one request may wait in all. A source past a bound is
a SourceMisbehaved at once, without retrying: the run stops with one line
saying what the source did, and continues when run again. A kept-alive
connection the source closed while it was idle (Apache does after a few
seconds) is opened again quietly, once, before anything counts as a
failure.

The API key travels in the X-BUGZILLA-API-KEY header (bugzilla.mozilla.org
and bugsvc read it) and as the Bugzilla_api_key parameter (Bugzilla 5.0 to
5.2 read only that); it never appears in a message.
"""

import email.utils
import http.client
import itertools
import json
import random
import re
import socket
import ssl
import threading
import time
import urllib.parse
import zlib
from array import array
from dataclasses import dataclass
from datetime import datetime, timezone

from .. import __version__


MAX_DELAY = 60.0
DEFAULT_TIMEOUT = 120.0
USER_AGENT = f"bugsvc-import/{__version__}"
_CHUNK = 64 * 1024
# Failures of a kept-alive connection the source closed while it was idle:
# nothing of an answer came, so the request is sent again on a new one.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
          ConnectionAbortedError)


@dataclass(frozen=True)
class Limits:
    """What one answer may cost.

    max_bytes: an answer's size as sent and once inflated. max_depth: how
    deeply its JSON may nest (Bugzilla's answers nest about 6 deep).
    deadline: seconds one request may take from sending to the last byte.
    max_wait: the longest single wait a source may ask for (Retry-After).
    max_total_wait: the longest one request may spend waiting to try again.
    """
    max_bytes: int = 256 * 1024 * 1024
    max_depth: int = 64
    deadline: float = 600.0
    max_wait: float = 600.0
    max_total_wait: float = 1800.0


class SourceError(Exception):
    """The source answered with an error (code and message from its error
    object), or could not be reached after every retry (code None).

    status: the HTTP status (None when there was no answer).
    """

    def __init__(self, message, code=None, status=None, path=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.path = path

    def __str__(self):
        where = f" ({self.path})" if self.path else ""
        code = f"error {self.code}: " if self.code is not None else ""
        return f"{code}{self.message}{where}"


class SourceMisbehaved(SourceError):
    """The source went past one of the Limits: the message says what it did.
    Not retried (it would only cost the same again)."""


class _Retry(Exception):
    """A failure worth trying again; `after` is what Retry-After asked."""

    def __init__(self, reason, after=None):
        super().__init__(reason)
        self.reason = reason
        self.after = after


def rest_base(url):
    """The REST root of a source URL: `https://host/path` and the same URL
    ending in /rest, /rest/ or /rest.cgi all give `https://host/path/rest`
    (a bugsvc or Bugzilla answers /rest.cgi/... as /rest/...)."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"'{url}' is not an http:// or https:// URL")
    path = parsed.path.rstrip("/")
    for suffix in ("/rest", "/rest.cgi"):
        if path.endswith(suffix):
            path = path[:-len(suffix)]
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path + "/rest", "", ""))


@dataclass
class Page:
    """An answer of the source's web pages: status, headers ([(name,
    value)]) and the text."""
    status: int
    headers: list
    text: str

    def header_values(self, name):
        return [value for key, value in self.headers if key.lower() == name.lower()]


class Client:
    """JSON GETs to one source.

    base_url: the source's URL (see rest_base). api_key: None for anonymous
    reading. concurrency: requests open at once. retries: attempts after the
    first. timeout: the socket timeout. limits: Limits. sleep/clock:
    replaced by tests. on_retry(reason, delay): told about every retry (the
    progress line shows them).
    """

    def __init__(self, base_url, api_key=None, concurrency=4, retries=8,
                 timeout=DEFAULT_TIMEOUT, sleep=time.sleep, on_retry=None, base_delay=1.0,
                 limits=None, clock=time.monotonic):
        self.base = rest_base(base_url)
        split = urllib.parse.urlsplit(self.base)
        self._scheme, self._netloc, self._prefix = split.scheme, split.netloc, split.path
        self.site = urllib.parse.urlunsplit((split.scheme, split.netloc,
                                             split.path[:-len("rest")], "", ""))
        self.api_key = api_key or None
        self.retries = retries
        self.timeout = timeout
        self.base_delay = base_delay
        self.limits = limits or Limits()
        self._sleep = sleep
        self._clock = clock
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._local = threading.local()
        self._lock = threading.Lock()
        self.on_retry = on_retry
        self.requests = 0
        self.retried = 0
        self.reconnected = 0
        self.bytes_read = 0

    # One request -----------------------------------------------------------------

    def get(self, path, params=None):
        """The decoded JSON answer of GET `path` (below /rest) with query
        `params` (a dict; list values repeat the key).
        Errors: SourceError (SourceMisbehaved past a limit)."""
        query = _query(params)
        if self.api_key:
            query.append(("Bugzilla_api_key", self.api_key))
        target = self._prefix + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["X-BUGZILLA-API-KEY"] = self.api_key
        return self._patiently(lambda: self._json(target, path, headers), path)

    def page(self, path, params=None, form=None, cookies=None):
        """A page of the source's web interface: GET `path` (below the
        site's root, e.g. "editproducts.cgi") with query `params`, or POST
        of `form` (a dict) when given; `cookies` ({name: value}) are sent.
        The API key is not. Returns a Page. Errors: SourceError."""
        query = _query(params)
        target = self._prefix[:-len("rest")] + path
        target += "?" + urllib.parse.urlencode(query) if query else ""
        headers = {"Accept": "text/html"}
        if cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(_query(form)).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        method = "POST" if form is not None else "GET"

        def once():
            status, answer, raw = self._exchange(method, target, path, headers, body)
            if status == 429 or status >= 500:
                raise _Retry(f"HTTP {status}", self._retry_after(answer, path))
            return Page(status, answer.getheaders(), raw.decode("utf-8", "replace"))
        if form is not None:
            # A form is sent once: a sign-in is not something to repeat.
            try:
                with self._slots:
                    return once()
            except _Retry as failure:
                raise SourceError(failure.reason, path=path) from None
        return self._patiently(once, path)

    def _patiently(self, once, path):
        """once() in a free slot, again after a delay while it asks to be
        (_Retry), up to the retries and the limits' waits."""
        attempt, waited = 0, 0.0
        while True:
            try:
                with self._slots:
                    return once()
            except _Retry as retry:
                attempt += 1
                if attempt > self.retries:
                    raise SourceError(f"gave up after {attempt} attempts: {retry.reason}",
                                      path=path) from None
                delay = self._delay(attempt, retry.after)
                if waited + delay > self.limits.max_total_wait:
                    raise SourceMisbehaved(
                        f"the source kept one request waiting {_duration(waited)} already and "
                        f"asks for {_duration(delay)} more ({retry.reason}); at most "
                        f"{_duration(self.limits.max_total_wait)} in all is waited",
                        path=path) from None
                waited += delay
                with self._lock:
                    self.retried += 1
                if self.on_retry is not None:
                    self.on_retry(retry.reason, delay)
                self._sleep(delay)

    def _delay(self, attempt, after):
        growing = min(self.base_delay * 2 ** (attempt - 1), MAX_DELAY)
        growing *= 1 + random.random() * 0.25
        # The source's own word wins; a Retry-After of 0 gets the growing delay.
        return after if after else growing

    def _json(self, target, path, headers):
        status, response, raw = self._exchange("GET", target, path, headers)
        if status == 429 or status >= 500:
            after = self._retry_after(response, path)
            body = self._decoded(raw, path)
            if status >= 500 and isinstance(body, dict) and body.get("error") \
                    and body.get("code") not in (None, -32000):
                # An error object with a code of the interface: an answer.
                raise _source_error(body, status, path)
            raise _Retry(f"HTTP {status}", after)
        body = self._decoded(raw, path)
        if body is None:
            raise _Retry(f"HTTP {status} with a body that is not JSON")
        if isinstance(body, dict) and body.get("error"):
            raise _source_error(body, status, path)
        if status >= 400:
            raise SourceError(f"HTTP {status}", status=status, path=path)
        return body

    def _retry_after(self, response, path):
        """Seconds the source asks to wait. Errors: SourceMisbehaved when
        that is longer than the limits allow."""
        header = response.getheader("Retry-After")
        after = _retry_after(header)
        if after is not None and after > self.limits.max_wait:
            raise SourceMisbehaved(
                f"the source asks to wait {_duration(after)} before trying again (Retry-After: "
                f"{header.strip()[:60]}), longer than the {_duration(self.limits.max_wait)} the "
                "import waits", path=path)
        return after

    def _decoded(self, raw, path):
        """The JSON of `raw`, None when it is none. Errors: SourceMisbehaved
        for JSON nested deeper than the limits allow."""
        if not raw:
            return None
        depth = nesting(raw)
        if depth > self.limits.max_depth:
            raise SourceMisbehaved(f"the source answered JSON nested {depth:,} deep (at most "
                                   f"{self.limits.max_depth} is read)", path=path)
        try:
            return json.loads(raw)
        except RecursionError:
            raise SourceMisbehaved("the source answered JSON nested too deep to read",
                                   path=path) from None
        except (ValueError, UnicodeDecodeError):
            return None

    def _exchange(self, method, target, path, headers, body=None):
        """(status, response, body bytes) of one request, inflated, within
        the limits. A kept-alive connection found closed is opened again
        once, quietly. Errors: _Retry, SourceMisbehaved."""
        headers = dict(headers, **{"Accept-Encoding": "gzip", "User-Agent": USER_AGENT})
        with self._lock:
            self.requests += 1
        for fresh_try in (False, True):
            conn, reused = self._connection()
            watch = _Watchdog(conn, self.limits.deadline)
            received, answered = [], False
            try:
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                answered = True
                raw = self._body(response, path, received)
                if watch.expired:
                    raise OSError("the request's time ran out")
            except SourceMisbehaved:
                self._drop_connection()
                raise
            except (OSError, http.client.HTTPException) as exc:
                self._drop_connection()
                if watch.expired:
                    raise SourceMisbehaved(
                        f"the source took more than {_duration(self.limits.deadline)} to answer "
                        f"one request (it had sent {sum(received):,} bytes of it)",
                        path=path) from None
                if isinstance(exc, _STALE) and reused and not answered and not fresh_try:
                    with self._lock:
                        self.reconnected += 1
                    continue
                raise _Retry(f"{type(exc).__name__}: {exc}") from None
            finally:
                watch.stop()
            if response.will_close or (response.getheader("Connection") or "").lower() == "close":
                self._drop_connection()
            return response.status, response, raw
        raise AssertionError("unreachable")

    def _body(self, response, path, received):
        """The body of `response`, inflated, at most limits.max_bytes either
        way. Errors: SourceMisbehaved, _Retry (a broken gzip body)."""
        cap = self.limits.max_bytes
        length = response.getheader("Content-Length") or ""
        if length.strip().isdigit() and int(length) > cap:
            raise SourceMisbehaved(f"the source announced an answer of {int(length):,} bytes "
                                   f"(at most {_size(cap)} is read)", path=path)
        gzipped = (response.getheader("Content-Encoding") or "").lower() in ("gzip", "x-gzip")
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzipped else None
        parts, size, inflated = [], 0, 0
        while True:
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            received.append(len(chunk))
            with self._lock:
                self.bytes_read += len(chunk)
            if size > cap:
                raise SourceMisbehaved(f"the source sent more than {_size(cap)} in one answer "
                                       "(at most that is read)", path=path)
            if inflate is None:
                parts.append(chunk)
                continue
            try:
                while chunk:
                    out = inflate.decompress(chunk, cap - inflated + 1)
                    inflated += len(out)
                    if inflated > cap:
                        raise SourceMisbehaved(
                            f"the source sent {size:,} bytes of gzip that inflate to more than "
                            f"{_size(cap)} (at most that is read)", path=path)
                    parts.append(out)
                    chunk = inflate.unconsumed_tail
            except zlib.error as exc:
                raise _Retry(f"a broken gzip body ({exc})") from None
        if inflate is not None and size and not inflate.eof:
            raise _Retry("a gzip body that ends too soon")
        return b"".join(parts)

    def _connection(self):
        """This thread's connection and whether it served a request before."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn, True
        timeout = min(self.timeout, self.limits.deadline)
        if self._scheme == "https":
            conn = http.client.HTTPSConnection(self._netloc, timeout=timeout,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(self._netloc, timeout=timeout)
        self._local.conn = conn
        return conn, False

    def _drop_connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self):
        """Close this thread's connection (others close when their threads end)."""
        self._drop_connection()


class _Watchdog:
    """Ends a request that takes longer than `seconds` in all: its socket
    is shut, so whatever read waits on it fails at once (the socket
    timeout only bounds each read, and a source that sends a byte a second
    never trips it)."""

    def __init__(self, conn, seconds):
        self.conn = conn
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self):
        self.expired = True
        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self._timer.cancel()


# JSON strings (their brackets are text) and the bytes that are no bracket.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def nesting(raw):
    """How deeply the JSON text `raw` (bytes) nests its arrays and objects,
    found without parsing it (so a body of 200,000 `[` costs a scan, not a
    recursion)."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    opening = brackets.count(b"[") + brackets.count(b"{")
    if opening <= 1:
        return opening
    steps = array("b", brackets.translate(_STEPS))
    return max(itertools.accumulate(steps))


def _query(params):
    query = []
    for key, value in (params or {}).items():
        if value is None:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            query.append((key, _query_text(item)))
    return query


def _query_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _source_error(body, status, path):
    return SourceError(str(body.get("message") or "an error without a message"),
                       code=body.get("code"), status=status, path=path)


def _retry_after(value):
    """Seconds asked by a Retry-After header (a number or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


def _duration(seconds):
    """Seconds as a person reads them: 45 s, 12 min, 3.2 h, 4.1 days, 3.0 years."""
    for size, unit in ((365.25 * 86400, "years"), (86400, "days"), (3600, "h"), (60, "min")):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:,.0f} s" if seconds >= 1 else f"{seconds:.2f} s"


def _size(count):
    """A byte count as a person reads it (MB, KB, bytes)."""
    for size, unit in ((1024 * 1024, "MB"), (1024, "KB")):
        if count >= size:
            return f"{count / size:,.0f} {unit}" if count % size == 0 \
                else f"{count / size:,.1f} {unit}"
    return f"{count:,} bytes"
