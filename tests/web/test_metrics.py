"""Metrics at /metrics (bugsvc/web/metrics.py): not served by default;
readable only from --metrics-allow's networks or with --metrics-token's
bearer token; what they count; and with --workers 2 a scrape answers for
both processes."""

import dataclasses
import re
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest
from falcon import testing
from prometheus_client import generate_latest

from bugsvc.accounts import auth
from bugsvc.api.limits import parse_rules
from bugsvc.app import create_app
from bugsvc.cli.options import UsageError, build_parser, make_config
from bugsvc.notify.worker import Deliverer
from bugsvc.store import outbox
from bugsvc.web.client_address import parse_networks
from bugsvc.web.metrics import Metrics


TOKEN = "a-metrics-token-of-some-length"
NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.fixture
def measured(config, db):
    def make(**options):
        changed = dataclasses.replace(config, **options)
        return testing.TestClient(create_app(changed, db=db, clock=lambda: NOW))
    return make


def scrape(client, remote_addr="127.0.0.1", headers=None):
    return client.simulate_get("/metrics", remote_addr=remote_addr, headers=headers or {})


def value(text, name, **labels):
    """The value of sample `name` with `labels` in the text format, or None."""
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        sample, number = line.rsplit(" ", 1)
        found = re.fullmatch(r"([a-zA-Z_:][\w:]*)(?:\{(.*)\})?", sample)
        if found and found.group(1) == name and dict(
                re.findall(r'(\w+)="([^"]*)"', found.group(2) or "")) == labels:
            return float(number)
    return None


def test_not_served_by_default(client):
    answer = scrape(client)
    assert answer.status_code == 404 and answer.json["code"] == 32614


def test_only_allowed_networks_and_the_token(measured):
    client = measured(metrics_allow=parse_networks("192.0.2.0/24"), metrics_token=TOKEN)
    assert scrape(client, "192.0.2.9").status_code == 200
    assert scrape(client, "127.0.0.1").status_code == 403          # loopback is not excepted
    assert scrape(client, "198.51.100.1").status_code == 403
    assert scrape(client, "198.51.100.1",
                  {"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert scrape(client, "198.51.100.1",
                  {"Authorization": f"Bearer {TOKEN}x"}).status_code == 403
    assert scrape(client, "198.51.100.1", {"Authorization": TOKEN}).status_code == 403


def test_behind_a_trusted_proxy_the_client_counts(measured):
    client = measured(metrics_allow=parse_networks("10.0.0.5"),
                      trusted_proxies=parse_networks("10.0.0.5"))
    forwarded = {"X-Forwarded-For": "203.0.113.50"}
    assert scrape(client, "10.0.0.5", forwarded).status_code == 403
    assert scrape(client, "10.0.0.5").status_code == 200


def test_requests_latency_and_transactions(measured):
    client = measured(metrics_allow=parse_networks("127.0.0.1"))
    for _ in range(3):
        client.simulate_get("/rest/version")
    client.simulate_get("/rest/bug/999999")
    client.simulate_get("/show_bug.cgi", params={"id": "1"})
    client.simulate_get("/no/such/thing")
    text = scrape(client).text
    assert value(text, "bugsvc_requests_total", operation="Bugzilla.version", status="200") == 3
    assert value(text, "bugsvc_requests_total", operation="Bug.get", status="404") == 1
    assert value(text, "bugsvc_requests_total", operation="page /show_bug.cgi",
                 status="404") == 1
    assert value(text, "bugsvc_requests_total", operation="other", status="404") == 1
    assert value(text, "bugsvc_request_duration_seconds_count",
                 operation="Bugzilla.version") == 3
    assert value(text, "bugsvc_database_transaction_seconds_count", kind="read") >= 4
    assert value(text, "bugsvc_kept_bytes", cache="pages") is not None
    assert "bugsvc_requests_total" in text and "/metrics" not in text


def test_outbox_deliveries_signins_and_rate_limits(measured, services):
    with services.db.transaction(write=True) as conn:
        outbox.add_message(conn, outbox.MAIL, "test", NOW - timedelta(minutes=3),
                           address="someone@example.com")
        auth.count_failure(conn, "login:mallory@example.com", auth.FREE_FAILURES, NOW)
    client = measured(metrics_allow=parse_networks("127.0.0.1"),
                      anonymous_rate_limits=parse_rules("1/minute"))
    text = scrape(client).text
    assert value(text, "bugsvc_outbox_messages", state="pending") == 1
    assert value(text, "bugsvc_outbox_messages", state="due") == 1
    assert value(text, "bugsvc_outbox_oldest_due_seconds") == 180
    assert value(text, "bugsvc_signin_throttled", subject="login") == 1
    client.simulate_get("/rest/version")
    client.simulate_get("/rest/version")
    assert value(scrape(client).text, "bugsvc_rate_limited_total") == 1


def test_deliveries_by_channel_and_outcome(config, db, services):
    metrics = Metrics(dataclasses.replace(config, metrics_allow=parse_networks("127.0.0.1")),
                      db, lambda: NOW)
    with services.db.transaction(write=True) as conn:
        outbox.add_message(conn, outbox.MAIL, "test", datetime.now(timezone.utc),
                           address="someone@example.com")
    deliverer = Deliverer(services.units)
    deliverer.on_outcome = metrics.delivery
    deliverer.run_until_idle()
    text = generate_latest(metrics.registry).decode()
    # mail_delivery_method is None by default: the message is dropped.
    assert value(text, "bugsvc_deliveries_total", channel="mail", outcome="dropped") == 1


@pytest.mark.parametrize("options, message", [
    (["--metrics-allow", "not-a-network"], "--metrics-allow"),
    (["--metrics-token", "short"], "at least 16"),
])
def test_option_errors(options, message):
    with pytest.raises(UsageError) as error:
        make_config(build_parser().parse_args(options), {})
    assert message in str(error.value)


@pytest.mark.slow
def test_two_workers_answer_for_both(start, tmp_path):
    env = {"BUGSVC_WORKERS": "2", "BUGSVC_METRICS_ALLOW": "127.0.0.1"}
    server = start(tmp_path / "metrics.sqlite", env)
    for _ in range(40):
        assert server.call("GET", "/rest/version")[0] == 200
    counts = set()
    for _ in range(6):
        with urllib.request.urlopen(server.url + "/metrics", timeout=30) as answer:
            text = answer.read().decode()
        counts.add(value(text, "bugsvc_requests_total", operation="Bugzilla.version",
                         status="200"))
    assert counts == {40.0}
