"""Rate limits (--rate-limit, --rate-limit-anonymous; off by default): calls
counted per API key, per account (passwords, login tokens, the pages'
session) and per client address (anonymous callers), in fixed windows, and
refused with RateLimited (code 32000, HTTP 429 with Retry-After) past a
rule's limit.

A rule is `[KIND=]N/PERIOD`: N calls per second, minute, hour or day, of
every call (no KIND), of the calls that `read` or `write`, or of one
operation (`Bug.search=60/minute`); a call counts against every rule it
matches. A call is counted once its caller is known, so a wrong password,
key or token is never counted against the account or key it names (and
a valid credential is never refused for others' failures); those are the
sign-in throttle's.

Counts are shared by every server process through the database
(store/request_counts.py). A call reads the stored totals of its subject
(an indexed read in the call's own transaction); each process adds what it
counted to the database between calls, at most a second later, or at once
when a subject's calls not yet stored reach a twentieth of the rule's
limit. So each process lets through at most a twentieth of a limit (and a
second's calls) more than it, and calls arriving at the same moment in
several processes may each take the last place; a limit of 20 or less is
exact for calls one after another. The database is written between calls,
never inside one.
"""

import dataclasses
import hashlib
import math
import re
import threading

from ..errors import USER_ERROR, ServiceError
from ..store import request_counts


PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
SYNC_SECONDS = 1.0
_RULE = re.compile(r"^(?:([A-Za-z_][\w.]*)=)?(\d+)/(second|minute|hour|day)$")


@dataclasses.dataclass(frozen=True)
class Rule:
    """At most `limit` calls of `kind` ("*", "read", "write" or an
    operation's name) per `period` seconds."""
    kind: str
    limit: int
    period: int

    @property
    def text(self):
        name = {value: key for key, value in PERIODS.items()}[self.period]
        return f"{self.kind}={self.limit}/{name}"

    def matches(self, names, writes):
        return (self.kind == "*" or (self.kind == "write" and writes)
                or (self.kind == "read" and not writes) or self.kind in names)


def parse_rules(text, operation_names=()):
    """The Rules of an option's value ("600/minute,Bug.search=60/minute").
    Errors: ValueError naming the first item that is not a rule, or names
    no operation of `operation_names` (when given)."""
    rules = []
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        match = _RULE.match(item)
        if not match or int(match.group(2)) < 1:
            raise ValueError(f"'{item}' is not a rate such as 600/minute or "
                             "Bug.search=60/minute")
        kind = match.group(1) or "*"
        if (operation_names and kind not in ("*", "read", "write")
                and kind not in operation_names):
            raise ValueError(f"'{kind}' is neither read, write nor an operation's name")
        rules.append(Rule(kind, int(match.group(2)), PERIODS[match.group(3)]))
    return tuple(rules)


class RateLimited(ServiceError):
    """A call past a rate limit: code 32000 (the code of a throttled
    sign-in; the interface has none of its own), HTTP 429, and the seconds
    until the window ends (`retry_after`, REST's Retry-After header)."""

    def __init__(self, rule, retry_after):
        self.retry_after = retry_after
        super().__init__(USER_ERROR, f"Too many calls: at most {rule.limit} "
                                     f"{'calls' if rule.kind == '*' else rule.kind + ' calls'} "
                                     f"per {_period_name(rule.period)} are allowed; try again "
                                     f"in {retry_after} seconds.")

    @property
    def status(self):
        return 429


def _period_name(seconds):
    return {value: key for key, value in PERIODS.items()}[seconds]


def subject_of(caller, api_key, remote_ip):
    """Whom a call counts against: its API key, else its account, else its
    address (anonymous)."""
    if caller.is_logged_in:
        if api_key:
            return "key:" + hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:24]
        return f"account:{caller.id}"
    return f"address:{remote_ip or '-'}"


class Counter:
    """Calls counted per subject and rule in fixed windows, shared through
    the database (see the module). db: the Database; clock: the current
    aware UTC datetime."""

    def __init__(self, db, clock):
        self.db = db
        self.clock = clock
        self._lock = threading.Lock()
        self._pending = {}        # (subject, rule text, slot, ends_at) -> calls not stored yet
        self._stored = {}         # (subject, rule text, slot) -> every process's stored total
        self._urgent = False
        self._synced_at = 0.0
        self._syncs = 0

    def count(self, subject, rules, now=None, conn=None):
        """Count one call of `subject` against `rules`, unless one of them
        is already at its limit: then the call is not counted and
        RateLimited is raised (with the longest wait of those refused).
        conn: the call's connection, to read every process's stored totals
        from (else those read at the last sync)."""
        if not rules:
            return
        seconds = (now or self.clock()).timestamp()
        stored = {}
        for rule in rules:
            slot = int(seconds // rule.period)
            stored[rule] = (request_counts.total(conn, subject, rule.text, slot)
                            if conn is not None else None)
        with self._lock:
            keys, refused = [], None
            for rule in rules:
                slot = int(seconds // rule.period)
                ends_at = (slot + 1) * rule.period
                key = (subject, rule.text, slot, ends_at)
                known = stored[rule] if stored[rule] is not None else self._stored.get(key[:3], 0)
                calls = known + self._pending.get(key, 0)
                if calls >= rule.limit:
                    wait = max(1, math.ceil(ends_at - seconds))
                    if refused is None or wait > refused[1]:
                        refused = (rule, wait)
                keys.append((key, rule))
            if refused is not None:
                raise RateLimited(*refused)
            for key, rule in keys:
                self._pending[key] = self._pending.get(key, 0) + 1
                if self._pending[key] >= max(1, rule.limit // 20):
                    self._urgent = True

    def due(self, now=None):
        """True when counted calls should be stored (see the module)."""
        seconds = (now or self.clock()).timestamp()
        return bool(self._pending) and (self._urgent
                                        or seconds - self._synced_at >= SYNC_SECONDS)

    def sync(self, now=None):
        """Store the calls counted here and read every process's totals
        back (call it outside any transaction of this thread)."""
        seconds = (now or self.clock()).timestamp()
        with self._lock:
            pending, self._pending, self._urgent = self._pending, {}, False
            self._synced_at = seconds
        if not pending:
            return
        try:
            with self.db.separate_transaction(write=True) as conn:
                totals = request_counts.add(conn, pending)
                self._syncs += 1
                if self._syncs % 100 == 1:
                    request_counts.forget(conn, int(seconds) - 86400)
        except Exception:
            with self._lock:                    # counted again at the next sync
                for key, calls in pending.items():
                    self._pending[key] = self._pending.get(key, 0) + calls
            raise
        with self._lock:
            self._stored.update(totals)
            self._stored = {key: calls for key, calls in self._stored.items()
                            if _slot_ends(key) > seconds}

    def sync_if_due(self, now=None):
        if self.due(now):
            self.sync(now)


def _slot_ends(key):
    subject, rule_text, slot = key
    period = PERIODS[rule_text.rsplit("/", 1)[1]]
    return (slot + 1) * period


class Limiter:
    """The rate limits of one process: `rules` for callers with
    credentials (per API key or account), `anonymous` for the others (per
    address), counted by a Counter on `db`."""

    def __init__(self, db, rules, anonymous, clock):
        self.rules = rules
        self.anonymous = anonymous
        self.counter = Counter(db, clock)

    def check(self, conn, caller, api_key, remote_ip, names, writes, now=None):
        """Count a call of operations `names` (writing or not) by `caller`,
        reading the stored totals on the call's connection `conn`.
        Errors: RateLimited past a limit."""
        rules = self.rules if caller.is_logged_in else self.anonymous
        matching = [rule for rule in rules if rule.matches(names, writes)]
        if matching:
            self.counter.count(subject_of(caller, api_key, remote_ip), matching, now, conn)

    def after_call(self):
        """Store what was counted when it is due (between calls)."""
        self.counter.sync_if_due()
