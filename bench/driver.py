"""A small HTTP load driver, used when wrk is not installed. It runs as its
own process (never inside the measured server), one thread and one
keep-alive connection per concurrent client, and prints the same JSON line
as bench/requests.lua. Being Python, it saturates long before wrk does: its
figures are a lower bound, fine for the smoke run, not for the targets.

    python -m bench.driver --url http://127.0.0.1:8000 --requests FILE \
        --concurrency 8 --duration 10
"""

import argparse
import http.client
import json
import random
import sys
import threading
import time
from urllib.parse import urlsplit


def load_requests(path):
    """[(method, path, headers, body bytes or None)] from a request file."""
    prepared = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t", 3)
            if len(parts) != 4:
                continue
            method, target, key, body = parts
            if key.startswith("session:"):
                headers = {"Cookie": "bugsvc_session=" + key[len("session:"):]}
            else:
                headers = {"X-BUGZILLA-API-KEY": key} if key else {}
            if body:
                headers["Content-Type"] = "application/json"
            prepared.append((method, target, headers, body.encode() if body else None))
    return prepared


class Client(threading.Thread):
    """One connection sending random prepared requests, one at a time: the
    first whenever it starts, then more until the deadline; the request in
    flight at the deadline is awaited and counted (see bench.run.drive)."""

    def __init__(self, host, port, prepared, deadline, seed, timeout):
        super().__init__(daemon=True)
        self.host, self.port, self.prepared, self.deadline = host, port, prepared, deadline
        self.timeout = timeout
        self.rng = random.Random(seed)
        self.latencies = []
        self.status_errors = 0
        self.connect_errors = 0
        self.read_errors = 0

    def run(self):
        conn = None
        first = True
        while first or time.perf_counter() < self.deadline:
            first = False
            method, target, headers, body = self.rng.choice(self.prepared)
            if conn is None:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            started = time.perf_counter()
            try:
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
            except ConnectionRefusedError:
                self.connect_errors += 1
                conn = None
                time.sleep(0.01)
                continue
            except (OSError, http.client.HTTPException):
                self.read_errors += 1
                conn.close()
                conn = None
                continue
            self.latencies.append(time.perf_counter() - started)
            if response.status >= 400:
                self.status_errors += 1
            if response.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        if conn is not None:
            conn.close()


def percentile(ordered, share):
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def drive(url, prepared, concurrency, duration, timeout=10.0):
    """Run the load for `duration` seconds and until every client's last
    request has answered (or failed after `timeout` seconds); returns the
    figures dict (the JSON line's fields)."""
    parts = urlsplit(url)
    started = time.perf_counter()
    deadline = started + duration
    clients = [Client(parts.hostname, parts.port, prepared, deadline, seed, timeout)
               for seed in range(concurrency)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    elapsed = time.perf_counter() - started
    latencies = sorted(value for client in clients for value in client.latencies)
    micro = [value * 1e6 for value in latencies]
    return {
        "requests": len(latencies),
        "duration_us": int(elapsed * 1e6),
        "connect_errors": sum(c.connect_errors for c in clients),
        "read_errors": sum(c.read_errors for c in clients),
        "write_errors": 0,
        "status_errors": sum(c.status_errors for c in clients),
        "timeouts": 0,
        "p50_us": int(percentile(micro, 0.50)),
        "p90_us": int(percentile(micro, 0.90)),
        "p99_us": int(percentile(micro, 0.99)),
        "max_us": int(micro[-1]) if micro else 0,
        "mean_us": round(sum(micro) / len(micro), 1) if micro else 0.0,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.driver",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="http://host:port of the server")
    parser.add_argument("--requests", required=True, help="request file (see bench/requests.lua)")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds a request may take before it counts as an error")
    args = parser.parse_args(argv)
    figures = drive(args.url, load_requests(args.requests), args.concurrency, args.duration,
                    args.timeout)
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
