"""What notifications cost, measured (python -m bench.notify).

1. The outbox's cost on a write: adding a comment through the service
   layer, in one process, with its outbox event written (the default) and
   without (a write that tells nobody), in alternating rounds.
2. POST /rest/bug/{id}/comment over HTTP: with nobody to tell
   (mail_delivery_method None, no webhooks: events are written and
   expanded into nothing), and with bug mail going to a local SMTP server
   and a webhook to a local receiver, delivered by the server's own
   delivery threads (sharing its process with the writes) or by a
   `bugsvc deliver` process beside a server started with --deliver no.
3. How many mails per second one delivery worker (one thread) sends to a
   local SMTP server (aiosmtpd in its own process), from events to sent
   mails: expanding, rendering each mail for its recipient, SMTP.

    python -m bench.notify                 # 10,000 bugs, 10 s per HTTP measurement
    python -m bench.notify --bugs 2000 --duration 3 --mails 500 --out /tmp/x   # quick

The database is a copy of bench/data/bugs-N.sqlite (seeded when missing).
Results go to bench/results/DATE-notify.md and .json.
"""

import argparse
import json
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.accounts.auth import ScryptCost
from bugsvc.compose import unit_of_work
from bugsvc.config import Config
from bugsvc.notify.worker import Deliverer
from bugsvc.services import comment as comment_service, webhook as webhook_service
from bugsvc.store.location import open_database

from . import corpus, scenarios
from .run import ROOT, Server, drive, machine, wrk_available
from .seed import default_db_path, seed


RESULTS = ROOT / "bench" / "results"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SmtpProcess:
    """aiosmtpd in a process of its own, accepting and discarding mail."""

    def __init__(self):
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{self.port}",
             "-c", "aiosmtpd.handlers.Sink"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("aiosmtpd did not start (pip install aiosmtpd)")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Receiver:
    """A webhook receiver in this process, counting calls (answers 200)."""

    def __init__(self):
        import http.server
        counter = self
        self.calls = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                counter.calls += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _config(path):
    return Config(database=str(path), password_cost=ScryptCost(n=16, r=1, p=1))


def _params(db, values):
    with db.transaction(write=True) as conn:
        for name, value in values.items():
            conn.execute("DELETE FROM params WHERE name = ?", (name,))
            conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))


def _copy(source, work, name):
    target = work / name
    shutil.copyfile(source, target)
    return target


def write_cost(path, rounds, per_round, log):
    """Microseconds per comment added through the service, with and without
    its outbox event, in alternating rounds (medians of the rounds). CPU
    time of this process, not wall time: other work on the machine moves
    it far less."""
    config = _config(path)
    db = open_database(path)
    units = unit_of_work(db, config)
    rng = random.Random(7)
    top = db.connection().execute("SELECT MAX(id) FROM bugs").fetchone()[0]
    texts = corpus.comment_pool(rng, 256)
    timings = {"with": [], "without": []}
    for round_number in range(rounds):
        for mode in ("with", "without") if round_number % 2 == 0 else ("without", "with"):
            started = time.process_time()
            for _ in range(per_round):
                with units.context(1, write=True, events=mode == "with") as ctx:
                    comment_service.add(ctx, {"id": rng.randint(1, top),
                                              "comment": rng.choice(texts)})
            timings[mode].append((time.process_time() - started) / per_round * 1e6)
    events = db.connection().execute("SELECT COUNT(*), AVG(LENGTH(data)) FROM"
                                     " outbox_events").fetchone()
    db.close()
    result = {mode: round(statistics.median(values), 1) for mode, values in timings.items()}
    result["extra_us"] = round(result["with"] - result["without"], 1)
    result["extra_share"] = round(result["extra_us"] / result["without"] * 100, 1)
    result["event_bytes"] = round(events[1] or 0)
    log(f"comment add: {result['without']} us without its event, {result['with']} us with "
        f"(+{result['extra_us']} us, {result['extra_share']}%); events of {result['event_bytes']}"
        " bytes")
    return result


def http_writes(path, work, args, driver, smtp, receiver, log):
    """POST comment over HTTP, nobody to tell and mail + webhook."""
    results = {}
    rng = random.Random(11)
    workload = scenarios.Workload.from_db(path, rng)
    requests = [scenarios.comment_add(workload, rng) for _ in range(scenarios.REQUESTS_PER_FILE)]
    request_file = scenarios.write_request_file(work / "comment_add.txt", requests)
    cases = (("nobody to tell", False, False),
             ("mail + webhook, delivery threads in the server", True, False),
             ("mail + webhook, `bugsvc deliver` apart", True, True))
    for number, (label, notify, apart) in enumerate(cases):
        db_path = _copy(path, work, f"http-{number}.sqlite")
        db = open_database(db_path)
        if notify:
            _params(db, {"mail_delivery_method": "SMTP", "smtpserver": f"127.0.0.1:{smtp.port}",
                         "webhooks_enabled": "1", "webhooks_allow_private_addresses": "1"})
            config = _config(db_path)
            units = unit_of_work(db, config)
            with units.context(1, write=True) as ctx:
                webhook_service.create(ctx, {"name": "bench", "url": receiver.url,
                                             "events": ["comment"], "product": "Any"})
        db.close()
        server = Server([sys.executable, "bugsvc.py", "--db", str(db_path), "--port", "0",
                         "--deliver", "no" if apart else "yes"],
                        work / f"server-{number}.log", label)
        deliverer = subprocess.Popen(
            [sys.executable, "bugsvc.py", "--db", str(db_path), "deliver"], cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if apart else None
        try:
            drive(driver, server.url, request_file, args.concurrency, 1)       # warm-up
            cpu_before, sent_before = server.cpu_seconds(), receiver.calls
            figures = drive(driver, server.url, request_file, args.concurrency, args.duration)
            cpu = (server.cpu_seconds() or 0) - (cpu_before or 0)
        finally:
            server.stop()
            if deliverer is not None:
                deliverer.terminate()
                deliverer.wait(timeout=30)
        with open_database(db_path).transaction() as conn:
            states = dict(conn.execute("SELECT state, COUNT(*) FROM outbox_messages"
                                       " GROUP BY state").fetchall())
            events = conn.execute("SELECT COUNT(*) FROM outbox_events").fetchone()[0]
        requests_done = figures["requests"] or 1
        results[label] = {
            "rps": figures["rps"], "p50_ms": figures["p50_ms"], "p99_ms": figures["p99_ms"],
            "errors": figures["errors"], "cpu_ms_per_request": round(cpu / requests_done * 1000,
                                                                     2),
            "events": events, "messages": states,
            "webhook_calls_received": receiver.calls - sent_before if notify else 0}
        log(f"POST comment, {label}: {figures['rps']:.0f} req/s, p50 {figures['p50_ms']} ms, "
            f"p99 {figures['p99_ms']} ms, {results[label]['cpu_ms_per_request']} CPU ms/req; "
            f"messages {states}")
    return results


def mail_rate(path, work, args, smtp, log):
    """Mails per second of one worker thread, from events to sent mail."""
    results = {}
    for label, method in (("SMTP (aiosmtpd, own process)", "SMTP"), ("Test (file)", "Test")):
        db_path = _copy(path, work, f"mail-{method}.sqlite")
        db = open_database(db_path)
        _params(db, {"mail_delivery_method": method, "smtpserver": f"127.0.0.1:{smtp.port}"})
        config = _config(db_path)
        units = unit_of_work(db, config)
        with db.transaction() as conn:
            people = [row[0] for row in conn.execute(
                "SELECT id FROM users WHERE disabled_text = '' ORDER BY id LIMIT 11")]
            bug_ids = [row[0] for row in conn.execute(
                "SELECT id FROM bugs b WHERE NOT EXISTS (SELECT 1 FROM bug_groups g"
                " WHERE g.bug_id = b.id) ORDER BY id LIMIT ?", (args.mails,))]
        # One comment per bug; each bug's people are told (its CC list made
        # the same size everywhere: ten accounts).
        with db.transaction(write=True) as conn:
            for bug_id in bug_ids:
                conn.execute("DELETE FROM bug_cc WHERE bug_id = ?", (bug_id,))
                conn.executemany("INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
                                 [(bug_id, user_id) for user_id in people[1:]])
        changes = max(1, args.mails // 10)
        for bug_id in bug_ids[:changes]:
            with units.context(people[0], write=True) as ctx:
                comment_service.add(ctx, {"id": bug_id, "comment": "A comment for everyone."})
        deliverer = Deliverer(units)
        started = time.perf_counter()
        expanded = 0
        while True:
            done = deliverer.expand()
            expanded += done
            if not done:
                break
        expanded_at = time.perf_counter()
        while deliverer.send_mail():
            pass
        finished = time.perf_counter()
        with db.transaction() as conn:
            sent = conn.execute("SELECT COUNT(*) FROM outbox_messages WHERE state = 'sent'"
                                ).fetchone()[0]
            other = dict(conn.execute("SELECT state, COUNT(*) FROM outbox_messages"
                                      " WHERE state <> 'sent' GROUP BY state").fetchall())
        db.close()
        results[label] = {
            "events": expanded, "mails_sent": sent, "not_sent": other,
            "expand_seconds": round(expanded_at - started, 2),
            "send_seconds": round(finished - expanded_at, 2),
            "mails_per_second": round(sent / (finished - started), 1) if sent else 0.0,
            "send_only_per_second": round(sent / (finished - expanded_at), 1) if sent else 0.0}
        log(f"one worker, {label}: {sent} mails from {expanded} events in "
            f"{finished - started:.2f}s: {results[label]['mails_per_second']} mails/s "
            f"({results[label]['send_only_per_second']}/s rendering and sending)")
    return results


def markdown(results):
    m = results["machine"]
    lines = [f"# Notifications: what they cost ({results['date']})", "",
             f"{results['bugs']:,} bugs; {m['cores']} cores ({m['cpu']}), Python {m['python']}, "
             f"SQLite {m['sqlite']}, load before {m['load_before']}; driver {results['driver']}, "
             f"concurrency {results['concurrency']}, {results['duration_s']} s per HTTP "
             "measurement.", "",
             "## The outbox on a write (comment add through the service, one process)", "",
             "| | CPU microseconds per comment |", "|---|---:|"]
    cost = results["write_cost"]
    lines += [f"| without its outbox event | {cost['without']} |",
              f"| with its outbox event | {cost['with']} |",
              f"| the event's cost | +{cost['extra_us']} ({cost['extra_share']}%) |",
              f"| stored per event | {cost['event_bytes']} bytes of JSON |", "",
              "## POST /rest/bug/{id}/comment over HTTP, delivery threads running", "",
              "| | req/s | p50 ms | p99 ms | errors | server CPU ms/req | messages at the end |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for label, row in results["http"].items():
        messages = ", ".join(f"{k} {v}" for k, v in sorted(row["messages"].items())) or "none"
        lines.append(f"| {label} | {row['rps']:.0f} | {row['p50_ms']} | {row['p99_ms']} | "
                     f"{row['errors']} | {row['cpu_ms_per_request']} | {messages} |")
    lines += ["", "## Mails per second of one delivery worker (one thread)", "",
              "| transport | mails | events | expand s | render + send s | mails/s overall | "
              "mails/s rendering and sending |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, row in results["mail_rate"].items():
        lines.append(f"| {label} | {row['mails_sent']} | {row['events']} | "
                     f"{row['expand_seconds']} | {row['send_seconds']} | "
                     f"{row['mails_per_second']} | {row['send_only_per_second']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.notify",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--bugs", type=int, default=10000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--mails", type=int, default=2000, help="mails one worker sends")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-round", type=int, default=300)
    parser.add_argument("--out", help="results folder (default bench/results)")
    args = parser.parse_args(argv)

    def log(text):
        print(text, file=sys.stderr, flush=True)
    source = default_db_path(args.bugs)
    if not source.exists():
        log(f"seeding {source}")
        seed(source, args.bugs)
    work = Path(tempfile.mkdtemp(prefix="bench-notify-"))
    driver = "wrk" if wrk_available() else "python"
    results = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine(), "bugs": args.bugs, "driver": driver,
               "concurrency": args.concurrency, "duration_s": args.duration}
    smtp, receiver = SmtpProcess(), Receiver()
    try:
        results["write_cost"] = write_cost(_copy(source, work, "cost.sqlite"), args.rounds,
                                           args.per_round, log)
        results["http"] = http_writes(source, work, args, driver, smtp, receiver, log)
        results["mail_rate"] = mail_rate(source, work, args, smtp, log)
    finally:
        smtp.stop()
        receiver.stop()
        shutil.rmtree(work, ignore_errors=True)
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{results['date'][:10]}-notify"
    (out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / f"{stem}.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
