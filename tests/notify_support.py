"""Receivers for the notification tests, started by the tests on loopback
and stopped when they end: an SMTP server (aiosmtpd) that keeps every mail
it accepts, and an HTTP server that keeps every webhook call, each able to
fail on demand. Also: running the delivery worker of a test database."""

import email
import email.policy
import http.server
import json
import os
import threading
import time

import pytest

from bugsvc.notify.worker import Deliverer
from live_server import free_port


def needs(module):
    """Import `module`, or skip the test (fail in CI, where .ci/run installs it)."""
    try:
        return __import__(module)
    except ImportError:
        reason = f"{module} is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


class SmtpSink:
    """An SMTP server on 127.0.0.1 keeping the mail it accepts.

    mails: [(envelope sender, [recipients], email.message.EmailMessage)].
    refuse: None, or an SMTP answer ("451 later", "550 no") given to every
    recipient until it is set back to None.
    """

    def __init__(self):
        needs("aiosmtpd")
        from aiosmtpd.controller import Controller
        self.mails = []
        self.refuse = None
        self._lock = threading.Lock()
        # A free port can be taken by another process (a parallel test
        # worker) before the sink binds it: then another one is tried.
        for attempt in range(5):
            self.port = free_port()
            self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
            try:
                self.controller.start()
                break
            except OSError:
                if attempt == 4:
                    raise

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return self.refuse
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        mail = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._lock:
            self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), mail))
        return "250 Message accepted for delivery"

    def to(self, address):
        """The mails accepted for `address`, in order."""
        with self._lock:
            return [mail for _, recipients, mail in self.mails if address in recipients]

    def stop(self):
        self.controller.stop()


class Receiver:
    """An HTTP server on 127.0.0.1 keeping every POST it gets.

    calls: [{"path", "headers" (lower-case names), "body" (bytes), "json"}].
    statuses: answers to give, one per call, before answering 200 again
    (e.g. [500, 500] fails twice). refuse: a function of the call's JSON
    body giving a status to answer instead (or None to accept it). delay:
    seconds to wait before answering. in_flight: calls being answered.
    """

    def __init__(self):
        self.calls = []
        self.statuses = []
        self.refuse = None
        self.delay = 0
        self.attempts = 0
        self.in_flight = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                receiver.attempts += 1
                receiver.in_flight += 1
                if receiver.delay:
                    time.sleep(receiver.delay)
                receiver.in_flight -= 1
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                if status == 200 and receiver.refuse is not None:
                    status = receiver.refuse(json.loads(body)) or 200
                if status < 300:
                    receiver.calls.append({
                        "path": self.path, "body": body, "json": json.loads(body),
                        "headers": {k.lower(): v for k, v in self.headers.items()}})
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def smtp():
    sink = SmtpSink()
    yield sink
    sink.stop()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


def use_smtp(services, sink):
    """Send the test database's mail to `sink`."""
    from bug_support import set_param
    set_param(services, "mail_delivery_method", "SMTP")
    set_param(services, "smtpserver", f"127.0.0.1:{sink.port}")


def deliver(services, clock=None, delays=(0, 0, 0)):
    """Run the delivery worker over the test database until nothing is due;
    returns the Deliverer. Retries come after `delays` (seconds; at once by
    default, so a message failing every time is parked after 4 attempts)."""
    deliverer = Deliverer(services.units, clock=clock)
    deliverer.mail_delays = deliverer.webhook_delays = delays
    deliverer.run_until_idle()
    return deliverer


def wait_for(condition, timeout=30, what="the condition"):
    """Poll `condition()` until it is true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
