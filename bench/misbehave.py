"""Well-behaved clients beside one that misbehaves: the median latency of
the well-behaved ones while nobody misbehaves (quiet) and while one client
does, in each of the ways below (disturbed), one server, loopback only.

    python -m bench.misbehave [--bugs 2000] [--seconds 10] [--clients 4] [--rounds 3]

The well-behaved clients (a process of their own, from 127.0.0.2, keep-alive
connections) read random bugs with GET /rest/bug/{id}; the misbehaving one
(another process, from 127.0.0.1) does, in turn:

- slow_headers: holds 150 half-sent requests open, trickling a byte now and
  then (the per-address limit and the header deadline);
- nested_charts: 8 connections sending searches of 300 terms and of 500
  nested groups, one after another (the search budget);
- junk_pages: a big public bug's page with a new junk query string each
  time (what the pages keep; the server's resident memory is reported too);
- over_rate_limit: calls as fast as it can past --rate-limit-anonymous
  (the server runs with 600/minute for anonymous callers in this phase);
- account_requests: User.offer_account_by_email for new addresses, as fast
  as it can (the self-registration throttle).

The target: the disturbed median within 2 times the quiet one. The machine
may be shared, so each round measures every way right after a quiet phase
on the same server (a new server each round), and the summary gives the
medians over the rounds with the load average of each phase. Writes
bench/results/DATE-production.md and .json. Every loop is bounded by
--seconds; nothing leaves the machine.
"""

import argparse
import http.client
import json
import multiprocessing
import random
import socket
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import seed as bench_seed
from bench.run import Server, load_average, machine


ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
GOOD_ADDRESS = "127.0.0.2"
BAD_ADDRESS = "127.0.0.1"
SCENARIOS = ("slow_headers", "nested_charts", "junk_pages", "over_rate_limit",
             "account_requests")


# The well-behaved clients ------------------------------------------------------------

def _good_client(port, bugs, seconds, seed, out, key):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(GOOD_ADDRESS, 0))
    latencies, errors = [], 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            conn.request("GET", f"/rest/bug/{rng.randint(1, bugs)}?include_fields=id,summary",
                         headers={"X-BUGZILLA-API-KEY": key})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                errors += 1
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                              source_address=(GOOD_ADDRESS, 0))
            continue
        latencies.append(time.perf_counter() - started)
    conn.close()
    out.put((latencies, errors))


def _good_clients(port, bugs, seconds, clients, key):
    """(median seconds, requests, errors) of `clients` well-behaved clients."""
    import queue
    import threading
    results = queue.Queue()
    threads = [threading.Thread(target=_good_client, args=(port, bugs, seconds, n, results, key))
               for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies, errors = [], 0
    while not results.empty():
        found, failed = results.get()
        latencies += found
        errors += failed
    return (statistics.median(latencies) if latencies else None), len(latencies), errors


def _measure(port, bugs, seconds, clients, key, out):
    out.put(_good_clients(port, bugs, seconds, clients, key))


# The misbehaving client ---------------------------------------------------------------

def _slow_headers(port, deadline, counts):
    held = []
    for _ in range(150):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2,
                                            source_address=(BAD_ADDRESS, 0))
            sock.sendall(b"GET /rest/version HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(sock)
        except OSError:
            counts["refused"] += 1
    while time.monotonic() < deadline:
        for sock in list(held):
            try:
                sock.sendall(b"a")
                counts["bytes"] += 1
            except OSError:
                held.remove(sock)
                counts["closed"] += 1
        while len(held) < 150 and time.monotonic() < deadline:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=2,
                                                source_address=(BAD_ADDRESS, 0))
                sock.sendall(b"GET /rest/version HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                held.append(sock)
            except OSError:
                counts["refused"] += 1
                break
        time.sleep(1)
    for sock in held:
        sock.close()


def _chart_query(kind):
    if kind == "terms":
        parts = [f"f{n}=short_desc&o{n}=substring&v{n}=w{n}" for n in range(1, 301)]
        return "/rest/bug?j_top=OR&" + "&".join(parts)
    parts, n = [], 1
    for k in range(500):
        parts.append(f"f{n}=OP&j{n}=OR")
        parts.append(f"f{n + 1}=product&o{n + 1}=substring&v{n + 1}=w{k}")
        n += 2
    parts += [f"f{m}=CP" for m in range(n, n + 500)]
    return "/rest/bug?" + "&".join(parts)


def _repeat(port, deadline, counts, make_request, connections=1):
    import threading

    def one(index):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                          source_address=(BAD_ADDRESS, 0))
        n = 0
        while time.monotonic() < deadline:
            method, path, body = make_request(index, n)
            n += 1
            try:
                conn.request(method, path, body=body,
                             headers={"Content-Type": "application/json"} if body else {})
                response = conn.getresponse()
                response.read()
                counts[str(response.status)] = counts.get(str(response.status), 0) + 1
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException):
                counts["errors"] = counts.get("errors", 0) + 1
                conn.close()
        conn.close()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _misbehave(kind, port, seconds, big_bug, out):
    deadline = time.monotonic() + seconds
    counts = {"refused": 0, "bytes": 0, "closed": 0}
    if kind == "slow_headers":
        _slow_headers(port, deadline, counts)
    elif kind == "nested_charts":
        _repeat(port, deadline, counts, lambda i, n: (
            "GET", _chart_query("terms" if (i + n) % 2 else "nested"), None), connections=8)
    elif kind == "junk_pages":
        _repeat(port, deadline, counts, lambda i, n: (
            "GET", f"/show_bug.cgi?id={big_bug}&x={i}-{n}", None), connections=2)
    elif kind == "over_rate_limit":
        _repeat(port, deadline, counts, lambda i, n: ("GET", "/rest/version", None),
                connections=2)
    elif kind == "account_requests":
        _repeat(port, deadline, counts, lambda i, n: (
            "POST", "/rest/user/offer_account_by_email",
            json.dumps({"email": f"flood{i}-{n}@example.com"}).encode()), connections=2)
    out.put({key: value for key, value in counts.items() if value})


# The run ------------------------------------------------------------------------------

def _rss_mb(server):
    total = 0.0
    for pid in server.pids():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return round(total, 1)


def _big_bug(db_path):
    """The public bug with the most comments (its page is the largest)."""
    import sqlite3
    with sqlite3.connect(db_path) as conn:
        row = conn.execute("SELECT c.bug_id FROM comments c WHERE NOT EXISTS (SELECT 1 FROM"
                           " bug_groups g WHERE g.bug_id = c.bug_id) GROUP BY c.bug_id"
                           " ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
    return row[0]


def _phase(server, kind, args, bugs, big_bug):
    context = multiprocessing.get_context("fork")
    measured, attacked = context.Queue(), context.Queue()
    measuring = (_port(server), bugs, args.seconds, args.clients, args.key, measured)
    measurer = context.Process(target=_measure, args=measuring)
    attacker = None
    load = load_average()
    if kind != "quiet":
        attacker = context.Process(target=_misbehave, args=(kind, _port(server),
                                                            args.seconds + 1, big_bug, attacked))
        attacker.start()
        time.sleep(1)            # the misbehaviour is under way before the measuring starts
    rss_before = _rss_mb(server)
    cpu_before = server.cpu_seconds()
    measurer.start()
    median, requests, errors = measured.get()
    measurer.join()
    cpu = server.cpu_seconds()
    counts = {}
    if attacker is not None:
        counts = attacked.get()
        attacker.join()
    return {"scenario": kind, "median_ms": round(median * 1000, 2) if median else None,
            "requests": requests, "errors": errors, "attacker": counts,
            "rss_mb_before": rss_before, "rss_mb_after": _rss_mb(server), "load": load,
            "server_cpu_s": None if cpu is None or cpu_before is None
            else round(cpu - cpu_before, 2)}


def _port(server):
    return int(server.url.rsplit(":", 1)[1])


def _start(db_path, log_path, extra=()):
    return Server([sys.executable, "bugsvc.py", "--db", str(db_path), "--port", "0",
                   "--deliver", "no", *extra], log_path, "bugsvc")


def _pairs(db_path, log_path, args, big_bug, kinds, extra=()):
    """A server of its own, and for each of `kinds` a quiet phase followed
    by the disturbed one; returns their rows."""
    rows = []
    server = _start(db_path, log_path, (*args.server_args, *extra))
    try:
        for kind in kinds:
            quiet = _phase(server, "quiet", args, args.bugs, big_bug)
            disturbed = _phase(server, kind, args, args.bugs, big_bug)
            rows += [dict(quiet, pair=kind), dict(disturbed, pair=kind)]
            print(f"  {kind}: quiet {quiet['median_ms']} ms, disturbed "
                  f"{disturbed['median_ms']} ms (load {quiet['load']}, {disturbed['load']})",
                  flush=True)
    finally:
        server.stop()
    return rows


def run(args):
    db_path = Path(args.db) if args.db else ROOT / "bench" / "data" / f"bugs-{args.bugs}.sqlite"
    if not db_path.exists():
        db_path.parent.mkdir(parents=True, exist_ok=True)
        bench_seed.seed(db_path, args.bugs)
    big_bug = _big_bug(db_path)
    # The well-behaved clients sign in with an API key (they see every bug,
    # and --rate-limit-anonymous does not count them).
    import subprocess
    args.key = subprocess.run([sys.executable, "bugsvc.py", "--db", str(db_path), "api-key",
                               "admin@example.com", "--description", "misbehave bench"],
                              cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout.split()[-1]
    RESULTS.mkdir(parents=True, exist_ok=True)
    log_path = RESULTS.parent / "data" / "misbehave-server.log"
    kinds = [kind for kind in SCENARIOS if kind in args.scenarios and kind != "over_rate_limit"]
    rounds = []
    load_before = load_average()
    for number in range(1, args.rounds + 1):
        print(f"round {number} of {args.rounds}", flush=True)
        rows = _pairs(db_path, log_path, args, big_bug, kinds) if kinds else []
        if "over_rate_limit" in args.scenarios:
            rows += _pairs(db_path, log_path, args, big_bug, ["over_rate_limit"],
                           ("--rate-limit-anonymous", "600/minute"))
        rounds.append(rows)
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "bugs": args.bugs,
            "seconds": args.seconds, "clients": args.clients, "rounds": args.rounds,
            "server_args": args.server_args, "machine": machine(),
            "load_before": load_before, "load_after": load_average(), "results": rounds,
            "summary": summarize(rounds)}


def summarize(rounds):
    """For each way of misbehaving, over the rounds: the median of the quiet
    medians, of the disturbed ones, and of each round's disturbed / quiet
    ratio (its lowest and highest too), and the load averages seen."""
    summary = {}
    for rows in rounds:
        for quiet, disturbed in zip(rows[::2], rows[1::2], strict=True):
            entry = summary.setdefault(disturbed["scenario"], {
                "quiet_ms": [], "disturbed_ms": [], "ratios": [], "loads": [],
                "requests": [], "errors": 0, "attacker": {}})
            entry["quiet_ms"].append(quiet["median_ms"])
            entry["disturbed_ms"].append(disturbed["median_ms"])
            entry["ratios"].append(round(disturbed["median_ms"] / quiet["median_ms"], 2))
            entry["loads"] += [quiet["load"], disturbed["load"]]
            entry["requests"].append(disturbed["requests"])
            entry["errors"] += quiet["errors"] + disturbed["errors"]
            for key, value in disturbed["attacker"].items():
                entry["attacker"][key] = entry["attacker"].get(key, 0) + value
    for entry in summary.values():
        entry["median_quiet_ms"] = round(statistics.median(entry["quiet_ms"]), 2)
        entry["median_disturbed_ms"] = round(statistics.median(entry["disturbed_ms"]), 2)
        entry["median_ratio"] = round(statistics.median(entry["ratios"]), 2)
        loads = [load for load in entry["loads"] if load is not None]
        entry["load_range"] = [min(loads), max(loads)] if loads else None
    return summary


def report(results):
    """The Markdown of a run: the summary over the rounds, then each round."""
    options = " ".join(results["server_args"]) or "none"
    lines = [f"# Misbehaving clients beside well-behaved ones ({results['date']})", "",
             f"{results['clients']} well-behaved clients (from {GOOD_ADDRESS}) read random bugs "
             f"of {results['bugs']} for {results['seconds']} s per phase while one client "
             f"(from {BAD_ADDRESS}) misbehaves; one bugsvc process (server options besides the "
             f"defaults: {options}). {results['rounds']} rounds; in each, every way of "
             "misbehaving is measured right after a quiet phase on the same server, and the "
             "ratio is the disturbed median over that quiet one. Load average (1 minute) "
             f"before {results['load_before']}, after {results['load_after']}.", "",
             "| way | median of quiet medians, ms | median of disturbed medians, ms |"
             " median ratio | ratios by round | load averages seen | errors |"
             " misbehaving client's answers (all rounds) |",
             "|---|---:|---:|---:|---|---|---:|---|"]
    for kind, entry in results["summary"].items():
        load = entry["load_range"]
        lines.append(
            f"| {kind} | {entry['median_quiet_ms']} | {entry['median_disturbed_ms']} | "
            f"{entry['median_ratio']:.2f} | {', '.join(f'{r:.2f}' for r in entry['ratios'])} | "
            f"{'' if load is None else f'{load[0]}–{load[1]}'} | {entry['errors']} | "
            f"{', '.join(f'{k}: {v}' for k, v in entry['attacker'].items())} |")
    lines += ["", "Each phase:", "",
              "| round | phase | median ms | requests | errors | load | server CPU s |"
              " server MB (before → after) | misbehaving client's answers |",
              "|---:|---|---:|---:|---:|---:|---:|---|---|"]
    for number, rows in enumerate(results["results"], 1):
        for row in rows:
            phase = row["scenario"] if row["scenario"] != "quiet" else f"quiet ({row['pair']})"
            lines.append(f"| {number} | {phase} | {row['median_ms']} | {row['requests']} | "
                         f"{row['errors']} | {row['load']} | {row['server_cpu_s']} | "
                         f"{row['rss_mb_before']} → {row['rss_mb_after']} | "
                         f"{', '.join(f'{k}: {v}' for k, v in row['attacker'].items())} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bugs", type=int, default=2000)
    parser.add_argument("--db", help="a seeded SQLite database (default bench/data/bugs-N.sqlite)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of quiet and disturbed phases (each on new servers)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--server-args", default="",
                        help="options for the server besides the defaults, e.g. "
                             "'--requests-per-address 2'")
    parser.add_argument("--out", help="results name (default DATE-production)")
    args = parser.parse_args(argv)
    args.scenarios = args.scenarios.split(",")
    args.server_args = args.server_args.split()
    results = run(args)
    name = args.out or f"{results['date']}-production"
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    text = report(results)
    (RESULTS / f"{name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
