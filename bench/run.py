"""The load run: the real service (waitress, as users run it) on a free
loopback port over a seeded database, driven by a real HTTP load generator
(wrk; a separate Python process when wrk is missing), and in the same run
the ceiling app on the same server.

    python -m bench.run [--bugs 100000 | --db FILE | --db postgresql://...]
                        [--postgresql] [--workers 1] [--db-replica URL ...]
                        [--duration 10] [--concurrency 1,8,32] [--scenarios a,b]
                        [--compare EARLIER.json] [--profile] [--driver wrk|python]

Per scenario and concurrency it reports requests per second, p50/p99
latency, errors and the ratio to the ceiling, plus the service's start-up
time and peak memory, and writes bench/results/DATE-bugsN-wW.{md,json}.
A database file that does not exist yet is seeded first (bench.seed).
`--db postgresql://...` runs on that PostgreSQL database (filled with
`python -m bench.postgres start`); `--postgresql` starts a PostgreSQL
cluster of its own, copies the seeded database into it, runs on it and
stops it (bench/postgres.py). Results of PostgreSQL runs are named
DATE-bugsN-wW-pg.
"""

import argparse
import json
import math
import os
import platform
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.config import DEFAULT_THREADS
from bugsvc.store.location import Location, open_database

from . import postgres, profile, report, scenarios, seed as seeding


try:
    import resource  # Unix: the load generator's CPU time
except ImportError:
    resource = None


ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
LUA_SCRIPT = Path(__file__).resolve().parent / "requests.lua"
START_TIMEOUT = 60.0
# Seconds a request may take before the drivers count it as an error.
REQUEST_TIMEOUT = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# Servers --------------------------------------------------------------------------

class Server:
    """A server process (bugsvc or the ceiling) on a free loopback port."""

    def __init__(self, command, log_path, name):
        self.name = name
        self.started = time.perf_counter()
        self.log = open(log_path, "ab")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=self.log, stdin=subprocess.DEVNULL)
        self.url = self._read_url()
        self.startup_seconds = self._wait_until_serving(self.url + "/rest/version")

    def _read_url(self):
        while True:
            line = self.process.stdout.readline().decode("utf-8", "replace")
            if not line:
                raise RuntimeError(f"{self.name} exited with {self.process.wait()} before serving; "
                                   f"see {self.log.name}")
            if "serving http://" in line:
                url = line.split("serving ", 1)[1].split()[0]
                return url.split("/rest")[0].rstrip("/")

    def _wait_until_serving(self, url):
        deadline = self.started + START_TIMEOUT
        while time.perf_counter() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return time.perf_counter() - self.started
            except (OSError, urllib.error.URLError):
                time.sleep(0.01)
        raise RuntimeError(f"{self.name} did not answer {url} within {START_TIMEOUT}s")

    def pids(self):
        """The server's process and its worker processes."""
        return [self.process.pid] + child_pids(self.process.pid)

    def memory(self):
        """{pid: peak resident MB} of the serving processes (Linux; {} elsewhere)."""
        peaks = {}
        for pid in self.pids():
            value = peak_rss_mb(pid)
            if value is not None:
                peaks[pid] = value
        return peaks

    def cpu_seconds(self):
        """CPU time (user + system) the serving processes used so far (Linux; else None)."""
        total = 0.0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return total

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.log.close()


def child_pids(pid):
    """Direct children of `pid` (Linux /proc)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(value) for value in path.read_text().split()]
    except OSError:
        return []


def peak_rss_mb(pid):
    """Peak resident memory (VmHWM) of `pid` in MB, or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


# Drivers --------------------------------------------------------------------------

def wrk_available():
    return shutil.which("wrk") is not None


def drive(driver, url, request_file, concurrency, duration):
    """Run one measurement; returns the figures dict of requests.lua / bench.driver.

    With either driver a round ends when `duration` seconds have passed and
    every connection's last request has been answered: each connection sends
    at least one request, and the round counts every request it started (a
    request slower than the round still counts, over the longer time). A
    request unanswered after REQUEST_TIMEOUT seconds is an error.
    """
    if driver == "wrk":
        # wrk's -d only bounds a request that never answers; requests.lua ends the round.
        limit = math.ceil(duration) + REQUEST_TIMEOUT + 5
        command = ["wrk", "-t", "1", "-c", str(concurrency), "-d", f"{limit}s",
                   "--timeout", f"{REQUEST_TIMEOUT}s", "-s", str(LUA_SCRIPT), url, "--",
                   str(request_file), str(duration), str(concurrency)]
    else:
        command = [sys.executable, "-m", "bench.driver", "--url", url, "--requests",
                   str(request_file), "--concurrency", str(concurrency),
                   "--duration", str(duration), "--timeout", str(REQUEST_TIMEOUT)]
    before = _children_cpu_seconds()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                          timeout=duration + REQUEST_TIMEOUT + 120)
    driver_cpu = _children_cpu_seconds() - before
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{driver} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    figures = summarise(json.loads(lines[-1]))
    if figures["requests"]:
        # What the load generator itself took of the machine's cores per request.
        figures["driver_cpu_ms_per_request"] = round(driver_cpu * 1000 / figures["requests"], 3)
    return figures


def _children_cpu_seconds():
    """CPU time (user + system) of this process's children waited for so far
    (0 where the resource module is missing)."""
    if resource is None:
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def summarise(raw):
    """The reported figures (rps, p50/p99 in ms, errors) with the raw ones."""
    seconds = raw["duration_us"] / 1e6
    errors = sum(raw[key] for key in ("connect_errors", "read_errors", "write_errors",
                                      "status_errors", "timeouts"))
    return {"rps": round(raw["requests"] / seconds, 1) if seconds else 0.0,
            "p50_ms": round(raw["p50_us"] / 1000, 2), "p99_ms": round(raw["p99_us"] / 1000, 2),
            "errors": errors, "requests": raw["requests"], "raw": raw}


def measure(server, driver, request_file, concurrencies, duration, warmup, log, sample=None,
            database=None):
    """{concurrency: figures} for one server and request file.

    Besides the driver's figures: the server's CPU time per request, which
    other work on the machine changes much less than the rate.
    sample: (pids, output path) to profile with py-spy during the
    measurement at the headline concurrency; the summary goes into its figures.
    database: the database server's processes when they run on this
    machine (postgres.LocalServer): their CPU time per request too.
    """
    results = {}
    url = server.url
    for concurrency in concurrencies:
        if warmup > 0:
            drive(driver, url, request_file, concurrency, warmup)
        samplers = None
        if sample and concurrency == profile_concurrency(concurrencies):
            samplers = profile.start(sample[0], duration, sample[1])
        cpu_before = server.cpu_seconds()
        db_before = database.cpu_seconds() if database is not None else None
        figures = drive(driver, url, request_file, concurrency, duration)
        cpu_after = server.cpu_seconds()
        if cpu_before is not None and cpu_after is not None and figures["requests"]:
            figures["cpu_ms_per_request"] = round(
                (cpu_after - cpu_before) * 1000 / figures["requests"], 3)
        if db_before is not None and figures["requests"]:
            figures["db_cpu_ms_per_request"] = round(
                (database.cpu_seconds() - db_before) * 1000 / figures["requests"], 3)
        if samplers is not None:
            profile.wait(samplers)
            paths = [sample[1]] + [f"{sample[1]}.{n}" for n in range(len(sample[0]))]
            figures["profile"] = profile.summarise(paths)
        results[concurrency] = figures
        log(f"  c={concurrency:<3} {figures['rps']:>9,.1f} req/s  p50 {figures['p50_ms']:7.2f} ms"
            f"  p99 {figures['p99_ms']:7.2f} ms  errors {figures['errors']}"
            f"  cpu {figures.get('cpu_ms_per_request', 0):.2f} ms/req"
            + (f" (database {figures['db_cpu_ms_per_request']:.2f})"
               if "db_cpu_ms_per_request" in figures else ""))
    return results


def profile_concurrency(concurrencies):
    """The concurrency a --profile run samples: 8 when measured, else the highest."""
    return report.HEADLINE_CONCURRENCY if report.HEADLINE_CONCURRENCY in concurrencies \
        else max(concurrencies)


def probe(url, requests):
    """Send the first few requests once: None when they succeed, else the
    first error text (a missing route gives 'not available')."""
    for method, target, key, body in requests[:3]:
        if key.startswith(scenarios.SESSION_PREFIX):
            headers = {"Cookie": "bugsvc_session=" + key[len(scenarios.SESSION_PREFIX):]}
        else:
            headers = {"X-BUGZILLA-API-KEY": key} if key else {}
        if body:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url + target, data=body.encode() if body else None,
                                         method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
        except urllib.error.HTTPError as error:
            with error:
                text = error.read().decode("utf-8", "replace")
            try:
                answer = json.loads(text)
            except ValueError:
                answer = {}
            if answer.get("code") == 32614:
                return "not available (no such route yet)"
            return f"{method} {target} -> {error.code} {text[:200]}"
    return None


# The run ------------------------------------------------------------------------

def machine():
    """What the figures were measured on."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    wrk_version = ""
    if wrk_available():
        done = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
        wrk_version = ((done.stdout or done.stderr).splitlines()[0].strip()
                       if (done.stdout or done.stderr) else "")
    return {"cores": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version, "platform": platform.platform(), "wrk": wrk_version,
            "load_before": load_average(), "autogroup": autogroup()}


def autogroup():
    """This process's scheduler group and its nice value (Linux autogroups:
    CPU is shared between groups first, so a raised group measures closer to
    an idle machine), or None."""
    try:
        return Path("/proc/self/autogroup").read_text().strip()
    except OSError:
        return None


def load_average():
    """The 1-minute load average (other work on the machine skews the figures)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def remove_run_folders(work, log_dir, log):
    """Called in a run's `finally`: remove its work folder, and its servers'
    logs unless an exception is on its way out (then `log` says where they
    are, to read why)."""
    shutil.rmtree(work, ignore_errors=True)
    if sys.exc_info()[0] is not None:
        log(f"The servers' logs are in {log_dir}")
    else:
        shutil.rmtree(log_dir, ignore_errors=True)


def shown_path(path):
    """`path` relative to the project when inside it (results are committed);
    a PostgreSQL URL without its password."""
    if not Location.of(path).is_file:
        return Location.of(path).shown
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def count_bugs(location):
    database = open_database(str(location))
    try:
        with database.transaction() as conn:
            return conn.execute("SELECT COUNT(*) FROM bugs").fetchone()[0]
    finally:
        database.close()


def postgresql_facts(location):
    """The PostgreSQL server's version and the settings that matter for speed."""
    import psycopg
    names = ["server_version"] + [name for name in postgres.SETTINGS
                                  if name != "listen_addresses"] + ["fsync"]
    with psycopg.connect(str(location), autocommit=True) as conn:
        return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in names}


def run(args, log=print):
    """Do the whole run; returns the results dict."""
    if args.postgresql:
        if args.db and not Location.of(args.db).is_file:
            raise ValueError("--postgresql copies a seeded SQLite database: give --bugs or "
                             "--db FILE, or --db postgresql://... without --postgresql")
        cluster = postgres.Cluster(tempfile.mkdtemp(prefix="bench-pg-")).start()
        try:
            log(f"PostgreSQL: copying the seeded database into a cluster of its own"
                f" ({cluster.folder}) ...")
            url, _ = postgres.load(cluster, postgres.sqlite_source(args.bugs, args.db))
            return _run(args, url, log)
        finally:
            cluster.stop()
    location = args.db or seeding.default_db_path(args.bugs)
    if Location.of(location).is_file and not Path(location).exists():
        log(f"Seeding {location} with {args.bugs:,} bugs ...")
        seeding.seed(Path(location), args.bugs)
    return _run(args, location, log)


def _run(args, db_path, log):
    driver = args.driver or ("wrk" if wrk_available() else "python")
    if driver == "wrk" and not wrk_available():
        raise RuntimeError("wrk is not installed (apt-get install wrk), use --driver python")
    wanted = args.scenarios.split(",") if args.scenarios else [s.name for s in scenarios.SCENARIOS]
    unknown = [name for name in wanted if name not in scenarios.BY_NAME]
    if unknown:
        raise ValueError(f"unknown scenarios: {', '.join(unknown)}")
    if args.profile and not profile.available():
        log("--profile: py-spy is not installed (pip install py-spy); measuring without it")
        args.profile = False
    load_run = LoadRun(args, db_path, driver, log)
    try:
        if not args.no_ceiling:
            load_run.measure_ceiling()
        load_run.measure_service(wanted)
    finally:
        shutil.rmtree(load_run.work, ignore_errors=True)
    results = load_run.results
    results["machine"]["load_after"] = load_average()
    if args.compare:
        results["compared_with"] = json.loads(Path(args.compare).read_text())
    results["targets"] = report.targets(results)
    return results


class LoadRun:
    """One run's settings, workload and results."""

    def __init__(self, args, db_path, driver, log):
        self.args, self.db_path, self.driver, self.log = args, db_path, driver, log
        self.concurrencies = [int(c) for c in args.concurrency.split(",")]
        self.workload = scenarios.Workload.from_db(db_path, random.Random(args.seed))
        self.log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="bench-logs-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="bench-requests-"))
        self.results = {
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": machine(), "database": shown_path(db_path), "bugs": count_bugs(db_path),
            "engine": Location.of(db_path).engine_name,
            "workers": args.workers, "threads": args.threads, "driver": driver,
            "replicas": len(args.db_replica),
            "duration_s": args.duration, "warmup_s": args.warmup,
            "concurrency": self.concurrencies, "ceiling": {},
            "scenarios": {}, "skipped": {}, "memory_mb": {}, "log_dir": str(self.log_dir)}
        # The database server's processes, when they are this machine's.
        self.database = None
        if Location.of(db_path).engine_name == "postgresql":
            self.results["postgresql"] = postgresql_facts(db_path)
            self.database = postgres.LocalServer.of(db_path)
        log(f"{self.results['bugs']:,} bugs in {db_path}; driver {driver}; {args.workers} "
            f"worker(s); {args.duration}s per measurement")

    def requests(self, name, count=scenarios.REQUESTS_PER_FILE, available=()):
        return scenarios.requests_for(name, self.workload, self.args.seed, available, count)

    def _measure(self, server, name, requests, sample=None):
        request_file = scenarios.write_request_file(self.work / f"{name}.txt", requests)
        return measure(server, self.driver, request_file, self.concurrencies, self.args.duration,
                       self.args.warmup, self.log, sample,
                       self.database if server.name == "service" else None)

    def measure_ceiling(self):
        ceiling = Server([sys.executable, "-m", "bench.ceiling", "--port", "0", "--workers",
                          str(self.args.workers), "--threads", str(self.args.threads)],
                         self.log_dir / "ceiling.log", "ceiling")
        try:
            self.log("ceiling (constant JSON on the same server)")
            self.results["ceiling"] = self._measure(ceiling, "ceiling", self.requests("version"))
        finally:
            ceiling.stop()

    def measure_service(self, wanted):
        replicas = [part for url in self.args.db_replica for part in ("--db-replica", url)]
        service = Server([sys.executable, "bugsvc.py", "--db", str(self.db_path), "--port", "0",
                          "--workers", str(self.args.workers), "--threads", str(self.args.threads)]
                         + replicas, self.log_dir / "service.log", "service")
        self.results["startup_s"] = round(service.startup_seconds, 2)
        self.log(f"service answered after {service.startup_seconds:.2f}s")
        try:
            available = []
            for name in wanted:
                if name != "mixed" and self._scenario(service, name, self.requests(name)):
                    available.append(name)
            if "mixed" in wanted:
                usable = [s.name for s in scenarios.SCENARIOS if s.name != "mixed" and (
                    s.name in available or (s.name not in self.results["skipped"] and probe(
                        service.url, self.requests(s.name, count=3)) is None))]
                shares = scenarios.mixed_shares(usable)
                if shares:
                    self.results["mixed_shares"] = {n: round(v, 1) for n, v in shares.items()}
                    self._scenario(service, "mixed", self.requests("mixed", available=usable))
                else:
                    self.results["skipped"]["mixed"] = "no read or write scenario is available"
            peaks = service.memory()
        finally:
            service.stop()
        serving = [mb for pid, mb in peaks.items()
                   if self.args.workers == 1 or pid != service.process.pid]
        self.results["peak_memory_mb"] = {
            "per_worker_max": max(serving) if serving else None,
            "total": round(sum(peaks.values()), 1) if peaks else None}

    def _scenario(self, service, name, requests):
        """Measure one scenario unless its probe fails; True when measured."""
        problem = probe(service.url, requests)
        if problem:
            self.results["skipped"][name] = problem
            self.log(f"{name}: skipped, {problem}")
            return False
        self.log(f"{name}: {scenarios.BY_NAME[name].title}")
        sample = None
        if self.args.profile:
            pids = service.pids()
            pids = pids[1:] if len(pids) > 1 else pids      # the workers, not their parent
            sample = (pids, self.log_dir / f"profile-{name}.txt")
        self.results["scenarios"][name] = self._measure(service, name, requests, sample)
        self.results["memory_mb"][name] = service.memory()
        return True


def write_results(results, out_dir, name=None):
    """Write NAME.json (raw figures) and NAME.md (the table); returns both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = name or (f"{results['date'][:10]}-bugs{results['bugs']}-w{results['workers']}"
                    + ("-pg" if results.get("engine") == "postgresql" else ""))
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    stored = dict(results)
    if "compared_with" in stored:
        base = stored["compared_with"]
        stored["compared_with"] = {key: base.get(key) for key in ("date", "bugs", "workers",
                                                                  "database")}
    json_path.write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(report.markdown(results), encoding="utf-8")
    return json_path, md_path


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--bugs", type=int, default=100000,
                        help="use (or seed) bench/data/bugs-N.sqlite (default 100000)")
    parser.add_argument("--db", help="database file to use instead (seeded when missing), or "
                        "a PostgreSQL URL (postgresql://...)")
    parser.add_argument("--postgresql", action="store_true",
                        help="run on PostgreSQL: a cluster of its own holding a copy of the "
                             "seeded database (bench/postgres.py)")
    parser.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    parser.add_argument("--db-replica", action="append", default=[], metavar="URL",
                        help="a streaming replica of the PostgreSQL --db that searches may read "
                             "from (bench.postgres replica makes one); several allowed")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"request threads per process, of the service and the ceiling alike "
                             f"(default {DEFAULT_THREADS}, the service's)")
    parser.add_argument("--duration", type=float, default=10.0,
                        help="seconds per measurement (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0,
                        help="seconds of unmeasured load before each measurement (default 2)")
    parser.add_argument("--concurrency", default="1,8,32", help="comma-separated (default 1,8,32)")
    parser.add_argument("--scenarios", help="comma-separated names (default all): "
                        + ", ".join(s.name for s in scenarios.SCENARIOS))
    parser.add_argument("--driver", choices=("wrk", "python"),
                        help="load generator (default wrk when installed)")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the ceiling measurement")
    parser.add_argument("--compare", help="an earlier results JSON to compare with (more bugs, "
                        "or other --workers)")
    parser.add_argument("--out", default=str(RESULTS_DIR), help="results folder")
    parser.add_argument("--name", help="results file name without extension")
    parser.add_argument("--log-dir", help="folder for the servers' logs (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the requests")
    parser.add_argument("--profile", action="store_true",
                        help="sample the service with py-spy at concurrency 8 (needs py-spy)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    # Stopped from outside, still stop the servers it started (the finally blocks).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    try:
        results = run(args)
    except (RuntimeError, ValueError, postgres.Unavailable) as exc:
        print(f"bench.run: {exc}", file=sys.stderr)
        return 1
    json_path, md_path = write_results(results, args.out, args.name)
    print(report.markdown(results))
    print(f"Wrote {md_path} and {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
