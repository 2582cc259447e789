"""HTTP to the source: JSON over REST, patient and bounded.

The standard library only (http.client with one kept-alive connection per
thread, gzip): an importer needs GET with a few headers, and no extra
dependency is worth that. At most `concurrency` requests are open at once,
whatever the number of threads asking. A request that fails for a reason
that may pass (no connection, a timeout, 429, 5xx, a body that is not JSON)
is tried again after a growing delay: 1, 2, 4 ... seconds (at most
MAX_DELAY, with some jitter), or as long as the source's Retry-After asks,
up to `retries` times. An answer with an error object is a SourceError at
once: the source has spoken.

The API key travels in the X-BUGZILLA-API-KEY header (bugzilla.mozilla.org
and bugsvc read it) and as the Bugzilla_api_key parameter (Bugzilla 5.0 to
5.2 read only that); it never appears in a message.
"""

import email.utils
import gzip
import http.client
import json
import random
import ssl
import threading
import time
import urllib.parse
from datetime import datetime, timezone

from .. import __version__

MAX_DELAY = 60.0
DEFAULT_TIMEOUT = 120.0
USER_AGENT = f"bugsvc-import/{__version__}"


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


class Client:
    """JSON GETs to one source.

    base_url: the source's URL (see rest_base). api_key: None for anonymous
    reading. concurrency: requests open at once. retries: attempts after the
    first. sleep/clock: replaced by tests. on_retry(reason, delay): told
    about every retry (the progress line shows them).
    """

    def __init__(self, base_url, api_key=None, concurrency=4, retries=8,
                 timeout=DEFAULT_TIMEOUT, sleep=time.sleep, on_retry=None, base_delay=1.0):
        self.base = rest_base(base_url)
        split = urllib.parse.urlsplit(self.base)
        self._scheme, self._netloc, self._prefix = split.scheme, split.netloc, split.path
        self.api_key = api_key or None
        self.retries = retries
        self.timeout = timeout
        self.base_delay = base_delay
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._local = threading.local()
        self._lock = threading.Lock()
        self.on_retry = on_retry
        self.requests = 0
        self.retried = 0
        self.bytes_read = 0

    # One request -----------------------------------------------------------------

    def get(self, path, params=None):
        """The decoded JSON answer of GET `path` (below /rest) with query
        `params` (a dict; list values repeat the key).
        Errors: SourceError."""
        query = []
        for key, value in (params or {}).items():
            if value is None:
                continue
            for item in value if isinstance(value, (list, tuple)) else [value]:
                query.append((key, _query_text(item)))
        if self.api_key:
            query.append(("Bugzilla_api_key", self.api_key))
        target = self._prefix + path + ("?" + urllib.parse.urlencode(query) if query else "")
        attempt = 0
        while True:
            try:
                with self._slots:
                    return self._once(target, path)
            except _Retry as retry:
                attempt += 1
                if attempt > self.retries:
                    raise SourceError(f"gave up after {attempt} attempts: {retry.reason}",
                                      path=path) from None
                delay = self._delay(attempt, retry.after)
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

    def _once(self, target, path):
        headers = {"Accept": "application/json", "Accept-Encoding": "gzip",
                   "User-Agent": USER_AGENT}
        if self.api_key:
            headers["X-BUGZILLA-API-KEY"] = self.api_key
        with self._lock:
            self.requests += 1
        try:
            conn = self._connection()
            conn.request("GET", target, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection()
            raise _Retry(f"{type(exc).__name__}: {exc}") from None
        if (response.getheader("Connection") or "").lower() == "close":
            self._drop_connection()
        with self._lock:
            self.bytes_read += len(raw)
        if (response.getheader("Content-Encoding") or "").lower() == "gzip":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError) as exc:
                raise _Retry(f"a broken gzip body ({exc})") from None
        status = response.status
        if status == 429 or status >= 500:
            after = _retry_after(response.getheader("Retry-After"))
            body = _decoded(raw)
            if status >= 500 and isinstance(body, dict) and body.get("error") \
                    and body.get("code") not in (None, -32000):
                # An error object with a code of the interface: an answer.
                raise _source_error(body, status, path)
            raise _Retry(f"HTTP {status}", after)
        body = _decoded(raw)
        if body is None:
            raise _Retry(f"HTTP {status} with a body that is not JSON")
        if isinstance(body, dict) and body.get("error"):
            raise _source_error(body, status, path)
        if status >= 400:
            raise SourceError(f"HTTP {status}", status=status, path=path)
        return body

    def _connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._scheme == "https":
                conn = http.client.HTTPSConnection(self._netloc, timeout=self.timeout,
                                                   context=ssl.create_default_context())
            else:
                conn = http.client.HTTPConnection(self._netloc, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self):
        """Close this thread's connection (others close when their threads end)."""
        self._drop_connection()


def _query_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _decoded(raw):
    try:
        return json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        return None


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
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)
