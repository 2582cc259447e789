"""Metrics in Prometheus's text format at `/metrics`, with prometheus_client
(the optional extra `metrics`): requests by operation and status, their
latency, time in database transactions, deliveries by channel and outcome,
calls refused by a rate limit, the sizes of what the pages keep, and, read
from the database at each scrape, the outbox's backlog and the sign-in
throttle.

Only the addresses of --metrics-allow (networks; none by default, loopback
not excepted) and callers showing the token of --metrics-token (as
`Authorization: Bearer TOKEN`) may read them; anyone else gets 403, and
without either option `/metrics` is not served at all (404, as any unknown
path). The address is the client's as --trusted-proxies resolves it, so a
proxy's own address does not open the metrics to everyone behind it.

With --workers N the serving processes share one directory where each
writes its values (prometheus_client's multiprocess mode, set up by
serving/server.py before the workers start), so whichever process a scrape
reaches answers for all of them: counters and histograms are summed, the
sizes of what is kept are summed over the processes alive.
"""

import hmac
import time

from ..accounts.auth import throttled_subjects
from ..store import outbox
from .client_address import in_networks
from .pages import render as page_render, site as page_site


LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def available():
    """True when prometheus_client is installed."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        return False
    return True


class Metrics:
    """Falcon middleware: measures every request, and answers GET /metrics
    to those allowed (see the module).

    config: the Config (metrics_allow, metrics_token, metrics_dir); db: the
    process's Database; clock: the current UTC time."""

    def __init__(self, config, db, clock):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        self.allow = config.metrics_allow
        self.token = config.metrics_token
        self.directory = config.metrics_dir
        self.db = db
        self.clock = clock
        own = CollectorRegistry()
        # In multiprocess mode values go to files, which the scrape reads.
        registered = None if self.directory else own
        self.requests = Counter("bugsvc_requests", "Requests answered, by operation (or page) "
                                "and HTTP status.", ["operation", "status"], registry=registered)
        self.latency = Histogram("bugsvc_request_duration_seconds", "Time from a request's "
                                 "arrival in the application to its answer.", ["operation"],
                                 buckets=LATENCY_BUCKETS, registry=registered)
        self.transactions = Histogram("bugsvc_database_transaction_seconds", "Time of the "
                                      "calls' database transactions, by kind (read or write).",
                                      ["kind"], buckets=LATENCY_BUCKETS, registry=registered)
        self.deliveries = Counter("bugsvc_deliveries", "Outcomes of outbox messages: sent, "
                                  "dropped, retry (a failed attempt) or parked, by channel.",
                                  ["channel", "outcome"], registry=registered)
        self.rate_limited = Counter("bugsvc_rate_limited", "Calls refused by a rate limit.",
                                    registry=registered)
        self.kept_bytes = Gauge("bugsvc_kept_bytes", "Bytes the web pages keep, by what.",
                                ["cache"], multiprocess_mode="livesum", registry=registered)
        self.kept_entries = Gauge("bugsvc_kept_entries", "Entries the web pages keep, by what.",
                                  ["cache"], multiprocess_mode="livesum", registry=registered)
        if self.directory:
            from prometheus_client import multiprocess
            self.registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(self.registry, path=self.directory)
        else:
            self.registry = own
        self.registry.register(_DatabaseCollector(db, clock))

    # Hooks ------------------------------------------------------------------------------

    def transaction(self, writes, seconds):
        """A call's transaction took `seconds` (the Runner's on_transaction)."""
        self.transactions.labels("write" if writes else "read").observe(seconds)

    def delivery(self, channel, outcome):
        """A message's outcome (the Deliverer's on_outcome)."""
        self.deliveries.labels(channel, outcome).inc()

    # Middleware -------------------------------------------------------------------------

    def process_request(self, req, resp):
        req.context.metrics_started = time.perf_counter()
        if req.path != "/metrics":
            return
        if not self._allowed(req):
            resp.status = 403
            resp.content_type = "text/plain; charset=utf-8"
            resp.data = b"The metrics are not open to this address.\n"
        else:
            from prometheus_client import generate_latest
            self._observe_kept()
            resp.status = 200
            resp.content_type = CONTENT_TYPE
            resp.data = generate_latest(self.registry)
        resp.set_header("Cache-Control", "no-store")
        resp.complete = True

    def process_response(self, req, resp, resource, req_succeeded):
        started = getattr(req.context, "metrics_started", None)
        if started is None or req.path == "/metrics":
            return
        operation = getattr(req.context, "operation", None) or _page_of(req)
        status = resp.status if isinstance(resp.status, int) else str(resp.status).split()[0]
        self.requests.labels(operation, str(status)).inc()
        self.latency.labels(operation).observe(time.perf_counter() - started)
        if str(status) == "429":
            self.rate_limited.inc()
        self._observe_kept()

    def _observe_kept(self):
        for name, memo in (("pages", page_site.RENDERED), ("comments", page_render.COMMENTS)):
            self.kept_bytes.labels(name).set(memo.bytes)
            self.kept_entries.labels(name).set(len(memo))

    def _allowed(self, req):
        if self.token:
            given = req.get_header("Authorization") or ""
            if given[:7].lower() == "bearer " and hmac.compare_digest(
                    given[7:].strip().encode(), self.token.encode()):
                return True
        address = getattr(req.context, "client_address", None) or req.remote_addr or ""
        return in_networks(address, self.allow)


def _page_of(req):
    """The label of a request no operation named: its route (a page), or
    'other' (so labels stay few, whatever paths clients try)."""
    template = getattr(req, "uri_template", None)
    return f"page {template}" if template else "other"


class _DatabaseCollector:
    """What the database knows, read at each scrape: the outbox's backlog
    and the sign-in throttle."""

    def __init__(self, db, clock):
        self.db = db
        self.clock = clock

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily
        now = self.clock()
        try:
            with self.db.transaction() as conn:
                backlog = outbox.backlog(conn, now)
                throttled = throttled_subjects(conn, now)
        except Exception:                # noqa: BLE001 - a scrape reports what it can
            return
        messages = GaugeMetricFamily("bugsvc_outbox_messages", "Outbox messages by state "
                                     "(pending: to send, due: pending and due now, parked: "
                                     "given up).", labels=["state"])
        for state in ("pending", "due", "parked"):
            messages.add_metric([state], backlog[state])
        yield messages
        yield GaugeMetricFamily("bugsvc_outbox_oldest_due_seconds", "How long the message "
                                "waiting longest has been due.",
                                value=backlog["oldest_due_seconds"])
        yield GaugeMetricFamily("bugsvc_outbox_unexpanded_events", "Events whose messages are "
                                "not made yet.", value=backlog["unexpanded"])
        yield GaugeMetricFamily("bugsvc_outbox_oldest_unexpanded_seconds", "Age of the oldest "
                                "event whose messages are not made yet.",
                                value=backlog["oldest_unexpanded_seconds"])
        signins = GaugeMetricFamily("bugsvc_signin_throttled", "Login names and client "
                                    "addresses whose sign-ins are being delayed.",
                                    labels=["subject"])
        for kind, count in throttled.items():
            signins.add_metric([kind], count)
        yield signins
