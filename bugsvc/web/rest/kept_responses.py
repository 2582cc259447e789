"""Whole answers to `GET /rest/bug/{id}` kept by request, given again
while what they were made of stands.

A client that reads the same bug again with the same API key (a script
polling its bugs, a dashboard, a tool looking a bug up each time it is
named) asks the same question; while nothing its answer was made of has
moved, the answer is the one it got. This falcon middleware keeps that
answer: the status, headers and body the REST way in wrote, for the request
(the API key's hash, the path, the query string, the Accept header), with
the three generations the answer's own transaction saw (catalog,
credential, bug: store/cache.py). A later request the same in all four is
answered with it after one statement reading the generations, when all
three are still those; any other is served as before, and its answer kept
in its turn.

The generations cover everything a kept answer holds: the service notes
them only when the answer is made of bug objects that object_cache.py keeps
on the same terms (call/standing.py), so a change committed anywhere (a
call, another process, the importer, an edit by hand in SQL) moves one of
them and the next request is served anew: a revoked key or a disabled
account is refused, a bug moved out of the caller's sight is hidden, a
product renamed shows its new name. A key's first request of each minute
is served anew, so its use is recorded as every call records it
(accounts/auth.py records a key's last use once a minute).

Served only for requests whose answer depends on nothing else: GET, no
body, an API key in its header and no other credential (none in the query
string, no login or token headers), no If-None-Match; and not while rate
limits are set (every call is counted against them). The access line,
metrics and other middleware see a kept answer as any other.

Bounded: MAX_ENTRIES answers and MAX_BYTES of memory in all, least recently
used first out (answer_cache.AnswerCache).
"""

import hashlib
import re

from ... import dates
from ...accounts.auth import CREDENTIAL_PARAMS
from ...bugs.answer_cache import AnswerCache
from ...call import standing
from ...call.encoding import fitted
from ...store import cache
from ..http import credential_headers, param_name


MAX_ENTRIES = 16384
MAX_BYTES = 24 * 1024 * 1024
# Memory an entry takes besides its body (key, ETag, entry), counted with
# it (measured with tracemalloc: tests/web/test_kept_responses.py).
ENTRY_BYTES = 640
# Sets of headers shared by answers, at most (one per content type, in use).
MAX_HEADER_SETS = 64
# API keys whose minute of use is kept, at most (then forgotten all at once).
MAX_KEYS = 65536

# The paths served: one bug by number.
_PATH = re.compile(r"/rest(?:\.cgi)?/bug/[0-9]{1,19}")
_API_KEY_HEADERS = frozenset({"X-BUGZILLA-API-KEY", "X-SERVICE-API-KEY"})
_CREDENTIAL_PARAMS = frozenset(name.lower() for name in CREDENTIAL_PARAMS)


class KeptResponses:
    """The middleware (see the module). db: the process's Database; clock:
    the current UTC time (the Runner's)."""

    def __init__(self, db, clock):
        self.db = db
        self.clock = clock
        self._kept = AnswerCache(MAX_ENTRIES, MAX_BYTES)
        # The generations read or kept last, one object shared by the
        # answers kept at them. An answer kept at others is not checked
        # (they moved since it was made): a process that writes costs the
        # database one statement more per write it sees, not per request.
        self._latest = None
        # The minute each API key (its hash) last had a call the Runner
        # served, so its use recorded (accounts/auth.py records a key's use
        # once a minute): a key's first request of a minute is served anew.
        self._used = {}
        # The headers answers share (all but their ETag), one tuple each.
        self._header_sets = {}

    def process_request(self, req, resp):
        key = request_key(req)
        if key is None:
            return
        minute = dates.minute_to_db(self.clock())
        latest = self._latest
        if (latest is not None and self._used.get(key[0]) == minute
                and self._kept.peek_generations(key) is latest):
            now = cache.generations_now(self.db)
            if now != latest:
                self._latest = now
            kept = self._kept.get(key, now)
            if kept is not None:
                status, headers, etag, body, operation = kept
                req.context.operation = operation
                resp.status = status
                resp.set_headers(headers)
                if etag is not None:
                    resp.set_header("ETag", etag)
                resp.data = body
                resp.complete = True
                return
        req.context.kept_response = (key, minute, *standing.watch())

    def process_response(self, req, resp, resource, req_succeeded):
        pending = getattr(req.context, "kept_response", None)
        if pending is None:
            return
        key, minute, seen, token = pending
        standing.unwatch(token)
        at = seen.stands
        if (at is None or not req_succeeded or resp.status not in (200, "200 OK")
                or resp.data is None or dates.minute_to_db(self.clock()) != minute):
            return
        if at == self._latest:
            at = self._latest
        else:
            self._latest = at
        cache.keep_at_most(self._used, key[0], minute, MAX_KEYS)
        headers = resp.headers
        etag = headers.pop("etag", None)
        shared = tuple(headers.items())
        headers = self._header_sets.get(shared)
        if headers is None:
            headers = shared
            if len(self._header_sets) < MAX_HEADER_SETS:
                self._header_sets[shared] = shared
        body = fitted(resp.data)
        self._kept.put(key, at,
                       (resp.status, headers, etag, body, getattr(req.context, "operation", None)),
                       len(body) + ENTRY_BYTES)


def request_key(req):
    """The key a request's answer is kept by (see the module), or None when
    its answer may depend on more than the request, the API key and the
    generations."""
    if req.method != "GET" or not _PATH.fullmatch(req.path):
        return None
    env = req.env
    if (env.get("CONTENT_LENGTH") not in (None, "", "0") or "HTTP_TRANSFER_ENCODING" in env
            or "HTTP_IF_NONE_MATCH" in env):
        return None
    headers = credential_headers(req)
    if len(headers) != 1:
        return None
    name, value = next(iter(headers.items()))
    if name not in _API_KEY_HEADERS or not value:
        return None
    query = req.query_string
    if query and not _CREDENTIAL_PARAMS.isdisjoint(param_name(part) for part in query.split("&")):
        return None
    return (hashlib.sha256(value.encode()).digest(), req.path, query, env.get("HTTP_ACCEPT"))
