"""Paired measurements: the ratios of the targets, measured so that a host
whose speed drifts between runs (other tenants, a shared hypervisor) does
not decide them.

    python -m bench.paired [--bugs 100000] [--rounds 3] [--duration 5]

The servers being compared run at the same time (an idle one takes no CPU)
and are measured in turn, seconds apart, round after round; each round gives
a ratio, and the report shows their median, lowest and highest:

- the ceiling against the service, for GET bug, search limit 50 (as
  clients repeat it, answered from the answers the process keeps, and
  made anew on every request: search_anew) and POST comment (the
  share-of-ceiling targets), one worker;
- the service with --workers 2 against --workers 1, for the read scenarios
  (the 1.6x target), both servers first serving each scenario unmeasured
  for --pair-warmup seconds (PAIR_WARMUP; so do PostgreSQL's and SQLite's
  before their pairs, below);
- the ceiling's app served by bugsvc's own serving layer against the
  ceiling (informational: how much of the shares is that layer's,
  bench/ceiling.py).

With --postgresql the same service on PostgreSQL too (a cluster of its own
holding a copy of the same seeded database, bench.postgres; --pg-folder
keeps it between runs): the ceiling against it, SQLite's service against
it for every scenario (the target: PostgreSQL at 0.5 of SQLite's rate or
more), and its --workers 2 against 1, with the PostgreSQL server's CPU
time per request beside the service's.

Every request carries an API key, reads too (`X-BUGZILLA-API-KEY`, one of
the writers' keys the run creates), as the speed targets are set: an API
client signs each request, so resolving the key is part of what a read
costs. The ceiling gets the same header (it ignores it).
`--anonymous-reads` sends reads without a key, as bench.run does (the
figures of runs before 2026-11-27 were measured so). Each round also
records both servers' CPU time per request and the second's p50 and p99;
the table shows their medians and whether p99 is within P99_TARGET times
p50.

Writes bench/results/DATE-bugsN-paired.md and .json.
"""

import argparse
import contextlib
import json
import random
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.config import DEFAULT_THREADS

from . import postgres, scenarios
from .report import HEADLINE_CONCURRENCY
from .run import (
    RESULTS_DIR,
    Server,
    count_bugs,
    load_average,
    machine,
    measure,
    remove_run_folders,
    shown_path,
    wrk_available,
)
from .seed import default_db_path


# search: the 50-bug search as clients repeat it (a process answers a
# search it answered before, while nothing changed, from the answer it
# kept: bugsvc/bugs/answer_cache.py); search_anew: the same searches made
# anew on every request, their answers made of the bug objects the process
# keeps while each bug is unchanged (bugsvc/bugs/object_cache.py): what a
# search costs when other bugs changed between requests. What it costs the
# first time a process shows its bugs: bench.cpu with the objects' cache off.
SHARE_TARGETS = {"bug_get": 0.50, "search": 0.15, "search_anew": 0.15, "comment_add": 0.30}
# Measured against the ceiling beside the targets, with none of its own: a
# call that answers almost nothing (GET /rest/version, keyed as the others),
# what the service's serving, dispatch, credentials and read transaction
# cost any call. A scenario's share cannot pass it.
REFERENCE_SCENARIO = "version"
SCALING_SCENARIOS = ("bug_get", "search", "comments")
SCALING_TARGET = 1.6
# Seconds both servers of a pair serve the scenario, unmeasured, before its
# rounds, where they come to it with different pasts: two processes against
# one, and PostgreSQL's service against SQLite's. A process keeps the answers
# and bug objects of the requests it served (bugsvc/bugs/object_cache.py,
# web/rest/kept_responses.py): SQLite's one-process server comes to these
# pairs having served the share scenarios, the other freshly started (on
# PostgreSQL: started after SQLite's rounds; with two processes each fills a
# set of its own). Without this the rounds measured how fast a server fills
# its sets (on PostgreSQL 0.46 ms an answer the first time) more than how it
# serves: the same checkout's two processes gave 1.43x and 1.72x of one for
# GET bug on SQLite in two runs. Each pair's warm-up rates are in the results.
PAIR_WARMUP = 10.0
P99_TARGET = 5.0
ENGINE_TARGET = 0.5


class PairedRun:
    """The servers, request files and figures of one paired run."""

    def __init__(self, args, log):
        self.args, self.log = args, log
        self.db_path = Path(args.db) if args.db else default_db_path(args.bugs)
        if not self.db_path.exists():
            raise RuntimeError(f"{self.db_path} does not exist: seed it with python -m bench.seed")
        self.driver = "wrk" if wrk_available() else "python"
        self.work = Path(tempfile.mkdtemp(prefix="bench-paired-"))
        self.log_dir = Path(tempfile.mkdtemp(prefix="bench-paired-logs-"))
        self.workloads = {"sqlite": scenarios.Workload.from_db(self.db_path,
                                                               random.Random(args.seed))}
        self.files = {}
        self.pg_url = None
        self.pg_server = None           # its processes, for their CPU time (postgres.LocalServer)

    @property
    def workload(self):
        """The SQLite database's workload (bench.ab and bench.pages use it)."""
        return self.workloads["sqlite"]

    @property
    def keyed(self):
        """True when every request carries an API key (--anonymous-reads not given)."""
        return not getattr(self.args, "anonymous_reads", True)

    def request_file(self, name, engine="sqlite"):
        """The request file of scenario `name` for a server of `engine` (each
        engine's database holds API keys of its own)."""
        if (name, engine) not in self.files:
            workload = self.workloads[engine]
            requests = scenarios.requests_for(name, workload, self.args.seed)
            if self.keyed:
                requests = scenarios.keyed(requests, workload.keys, self.args.seed)
            self.files[name, engine] = scenarios.write_request_file(
                self.work / f"{name}-{engine}.txt", requests)
        return self.files[name, engine]

    def remove_folders(self):
        """In the run's `finally`: bench.run.remove_run_folders of its work
        folder and servers' logs."""
        remove_run_folders(self.work, self.log_dir, self.log)

    def start(self, name, command, engine="sqlite"):
        server = Server([sys.executable] + command + ["--port", "0", "--threads",
                                                      str(self.args.threads)],
                        self.log_dir / f"{name}.log", name)
        server.engine = engine
        return server

    def start_service(self, name, engine, workers=1):
        """bugsvc on `engine`'s database with `workers` processes."""
        db = str(self.db_path) if engine == "sqlite" else self.pg_url
        extra = ["--workers", str(workers)] if workers > 1 else []
        return self.start(name, ["bugsvc.py", "--db", db] + extra, engine)

    @contextlib.contextmanager
    def postgresql(self):
        """A cluster holding a copy of the seeded database (the one in
        --pg-folder, kept afterwards, or a new one, removed afterwards),
        with the workload of its own; yields the database's URL."""
        folder = self.args.pg_folder or tempfile.mkdtemp(prefix="bench-paired-pg-")
        cluster = postgres.Cluster(folder).start()
        try:
            self.log(f"PostgreSQL: the seeded database in a cluster of its own ({folder}) ...")
            self.pg_url, seconds = postgres.load(cluster, self.db_path)
            self.pg_server = postgres.LocalServer.of(self.pg_url)
            if seconds is not None:
                self.log(f"  copied in {seconds:.0f} s")
            self.workloads["postgresql"] = scenarios.Workload.from_db(
                self.pg_url, random.Random(self.args.seed))
            yield cluster
        finally:
            cluster.stop(remove=not self.args.pg_folder)

    def rps(self, server, scenario, duration=None, warmup=None):
        """The figures of `server` serving `scenario` at the headline
        concurrency for `duration` seconds after `warmup` (default: the
        run's --duration and --warmup)."""
        engine = getattr(server, "engine", "sqlite")
        figures = measure(server, self.driver, self.request_file(scenario, engine),
                          [HEADLINE_CONCURRENCY],
                          self.args.duration if duration is None else duration,
                          self.args.warmup if warmup is None else warmup,
                          lambda _: None, database=self.pg_server if engine == "postgresql"
                          else None)
        return figures[HEADLINE_CONCURRENCY]

    def pairs(self, first, second, scenario_of_first, scenario_of_second, label):
        """Measure `first` then `second`, args.rounds times; returns the figures."""
        rounds = []
        for number in range(self.args.rounds):
            a = self.rps(first, scenario_of_first)
            b = self.rps(second, scenario_of_second)
            ratio = b["rps"] / a["rps"] if a["rps"] else 0.0
            rounds.append({"first_rps": a["rps"], "second_rps": b["rps"], "ratio": round(ratio, 3),
                           "second_p50_ms": b["p50_ms"], "second_p99_ms": b["p99_ms"],
                           "second_errors": b["errors"],
                           "first_cpu_ms": a.get("cpu_ms_per_request"),
                           "second_cpu_ms": b.get("cpu_ms_per_request"),
                           "second_driver_cpu_ms": b.get("driver_cpu_ms_per_request"),
                           "second_db_cpu_ms": b.get("db_cpu_ms_per_request")})
            self.log(f"  {label} round {number + 1}: {a['rps']:,.0f} / {b['rps']:,.0f} req/s"
                     f" -> {ratio:.3f}")
        return rounds

    def warm_up(self, servers, scenario):
        """Serve `scenario` on each of `servers` for args.pair_warmup
        seconds, unmeasured (PAIR_WARMUP). Returns their rates in that
        time, or None when the warm-up is 0."""
        seconds = self.args.pair_warmup
        if seconds <= 0:
            return None
        rates = [self.rps(server, scenario, seconds, 0)["rps"] for server in servers]
        self.log(f"  warm-up, {seconds:g} s each: " + " / ".join(f"{r:,.0f}" for r in rates)
                 + " req/s")
        return rates


def _shares_and_scaling(paired, ceiling, one, servers, results, engine):
    """Measure `one` (a one-process service on `engine`) against the
    ceiling for every share target, then a two-process one against it for
    the scaling target, into results["shares"] and results["scaling"]."""
    shown = "" if engine == "sqlite" else " (PostgreSQL)"
    for scenario in SHARE_TARGETS:
        paired.log(f"{scenario}{shown} against the ceiling")
        rounds = paired.pairs(ceiling, one, "version", scenario, scenario)
        results["shares"][scenario] = {"rounds": rounds, **summary(rounds)}
    paired.log(f"{REFERENCE_SCENARIO}{shown} against the ceiling (the reference)")
    rounds = paired.pairs(ceiling, one, "version", REFERENCE_SCENARIO, REFERENCE_SCENARIO)
    results["reference"] = {REFERENCE_SCENARIO: {"rounds": rounds, **summary(rounds)}}
    two = paired.start_service(f"{engine}-w2", engine, workers=2)
    servers.append(two)
    for scenario in SCALING_SCENARIOS:
        paired.log(f"{scenario}{shown}: --workers 2 against 1")
        warm = paired.warm_up((one, two), scenario)
        rounds = paired.pairs(one, two, scenario, scenario, scenario)
        results["scaling"][scenario] = {"rounds": rounds, **summary(rounds),
                                        "warm_up_rps": warm}


def _serving_layer(paired, ceiling):
    """The ceiling's app served by bugsvc's own serving layer against the
    ceiling (stock waitress), args.rounds times: how much faster that layer
    alone serves (bench/ceiling.py). Returns the figures."""
    serving = paired.start("ceiling-bugsvc-serving",
                           ["-m", "bench.ceiling", "--serving", "bugsvc"])
    try:
        paired.log("the ceiling's app served by bugsvc's serving layer against the ceiling")
        rounds = paired.pairs(ceiling, serving, "version", "version", "serving")
    finally:
        serving.stop()
    return {"rounds": rounds, **summary(rounds)}


def summary(rounds):
    """Median, lowest and highest ratio of `rounds`, with the medians of the
    second server's p50, p99 and of both servers' CPU time per request."""
    ratios = [r["ratio"] for r in rounds]
    result = {"median": round(statistics.median(ratios), 3), "lowest": min(ratios),
              "highest": max(ratios)}
    for key in ("second_p50_ms", "second_p99_ms", "first_cpu_ms", "second_cpu_ms",
                "second_driver_cpu_ms", "second_db_cpu_ms"):
        values = [r[key] for r in rounds if r.get(key) is not None]
        result[key] = round(statistics.median(values), 3) if values else None
    return result


def run(args, log=print):
    """The whole paired run; returns the results dict."""
    paired = PairedRun(args, log)
    results = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine(), "database": shown_path(paired.db_path),
               "bugs": count_bugs(paired.db_path), "driver": paired.driver,
               "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
               "pair_warmup_s": args.pair_warmup,
               "concurrency": HEADLINE_CONCURRENCY, "threads": args.threads,
               "keyed": paired.keyed, "shares": {}, "scaling": {}}
    servers = []
    try:
        ceiling = paired.start("ceiling", ["-m", "bench.ceiling"])
        servers.append(ceiling)
        one = paired.start_service("service-w1", "sqlite")
        servers.append(one)
        _shares_and_scaling(paired, ceiling, one, servers, results, "sqlite")
        results["serving"] = _serving_layer(paired, ceiling)
        if args.postgresql:
            with paired.postgresql() as cluster:
                results["postgresql"] = engine_results = {
                    "settings": cluster.settings(), "shares": {}, "scaling": {}, "engines": {}}
                pg_one = paired.start_service("postgresql-w1", "postgresql")
                servers.append(pg_one)
                for scenario in SHARE_TARGETS:
                    log(f"{scenario}: PostgreSQL against SQLite")
                    warm = paired.warm_up((one, pg_one), scenario)
                    rounds = paired.pairs(one, pg_one, scenario, scenario, scenario)
                    engine_results["engines"][scenario] = {"rounds": rounds, **summary(rounds),
                                                           "warm_up_rps": warm}
                _shares_and_scaling(paired, ceiling, pg_one, servers, engine_results,
                                    "postgresql")
                for server in servers[:]:
                    if server.engine == "postgresql":    # before their database server stops
                        server.stop()
                        servers.remove(server)
    finally:
        for server in servers:
            server.stop()
        paired.remove_folders()
    results["machine"]["load_after"] = load_average()
    return results


def markdown(results):
    """The report table of a paired run."""
    m = results["machine"]
    lines = [f"# bugsvc paired measurements, {results['date']}", "",
             f"- data: {results['bugs']:,} bugs (`{results['database']}`)",
             f"- {results['rounds']} rounds of {results['duration_s']} s after "
             f"{results['warmup_s']} s warm-up per server, concurrency "
             f"{results['concurrency']}, {results['threads']} threads, driver {results['driver']};"
             " the servers compared run at the same time and are measured in turn",
             f"- --workers 2 / 1 and PostgreSQL / SQLite: before each scenario's rounds both"
             f" servers served it unmeasured for {results.get('pair_warmup_s', 0):g} s each"
             " (their rates then are in the .json, warm_up_rps)",
             "- " + ("an API key on every request, reads too" if results.get("keyed")
                     else "reads anonymous, writes with API keys"),
             f"- load average before / after: {m.get('load_before')} / {m.get('load_after')}",
             "- search: repeated product x status searches, answered from the answers the"
             " process keeps while nothing changes; search_anew: the same searches made and"
             " built anew on every request", "",
             "| ratio | rounds (req/s: first / second -> ratio) | median | lowest | highest "
             "| target | met (median) |",
             "|---|---|---:|---:|---:|---:|---|"]
    pg = results.get("postgresql")
    for engine, part in (("", results), (" (PostgreSQL)", pg)):
        if part is None:
            continue
        for scenario, figures in part["shares"].items():
            target = SHARE_TARGETS[scenario]
            lines.append(_row(f"{scenario}{engine} / ceiling", figures, f"{target:.0%}",
                              figures["median"] >= target, percent=True))
        for scenario, figures in part.get("reference", {}).items():
            lines.append(_row(f"{scenario}{engine} / ceiling (reference)", figures, "-", None,
                              percent=True))
        for scenario, figures in part.get("engines", {}).items():
            lines.append(_row(f"{scenario}: PostgreSQL / SQLite", figures,
                              f"{ENGINE_TARGET:.0%}", figures["median"] >= ENGINE_TARGET,
                              percent=True))
        for scenario, figures in part["scaling"].items():
            lines.append(_row(f"{scenario}{engine}: --workers 2 / 1", figures,
                              f"{SCALING_TARGET}x", figures["median"] >= SCALING_TARGET))
    if results.get("serving"):
        lines.append(_row("ceiling's app: bugsvc's serving layer / stock waitress "
                          "(informational)", results["serving"], "-", None))
    lines += ["", "Medians of the rounds: the second server's latency and both servers' CPU "
              f"time per request (p99 within {P99_TARGET:g} times p50 wanted), and the load "
              "generator's (wrk's) while it measured the second: it runs on the same cores, "
              "so a server can use at most what it leaves.", "",
              "| measurement | p50 ms | p99 ms | p99 / p50 | within | CPU ms/req, first / second "
              "| load generator's CPU ms/req (second) |",
              "|---|---:|---:|---:|---|---:|---:|"]
    for engine, part in (("", results), (" (PostgreSQL)", pg)):
        if part is None:
            continue
        for kind, label in (("shares", "{}%s / ceiling" % engine),
                            ("reference", "{}%s / ceiling (reference)" % engine),
                            ("engines", "{}: PostgreSQL / SQLite"),
                            ("scaling", "{}%s: --workers 2 / 1" % engine)):
            for scenario, figures in part.get(kind, {}).items():
                lines.append(_latency_row(label.format(scenario), figures))
    if pg is not None:
        settings = ", ".join(f"{name}={value}" for name, value in pg["settings"].items()
                             if name != "server_version")
        lines += ["", f"PostgreSQL {pg['settings'].get('server_version')} on the same machine, "
                  f"a copy of the same seeded database ({settings}); its server's own CPU per "
                  "request is shown apart (+ PostgreSQL's), when the second server is on it."]
    return "\n".join(lines) + "\n"


def _latency_row(label, figures):
    p50, p99 = figures.get("second_p50_ms"), figures.get("second_p99_ms")
    spread = p99 / p50 if p50 and p99 is not None else None
    within = "" if spread is None else ("yes" if spread <= P99_TARGET else "**no**")
    cpu = " / ".join("-" if value is None else f"{value:.2f}"
                     for value in (figures.get("first_cpu_ms"), figures.get("second_cpu_ms")))
    if figures.get("second_db_cpu_ms") is not None:
        cpu += f" (+ PostgreSQL's {figures['second_db_cpu_ms']:.2f})"
    return (f"| {label} | {_or_dash(p50)} | {_or_dash(p99)} "
            f"| {'-' if spread is None else f'{spread:.1f}'} | {within} | {cpu} "
            f"| {_or_dash(figures.get('second_driver_cpu_ms'))} |")


def _or_dash(value):
    return "-" if value is None else f"{value:.2f}"


def _row(label, figures, target, met, percent=False):
    """A table row of `figures`' rounds; met: True, False, or None for a
    reference without a target."""
    show = (lambda v: f"{v:.1%}") if percent else (lambda v: f"{v:.2f}x")
    rounds = "; ".join(f"{r['first_rps']:,.0f} / {r['second_rps']:,.0f} -> {show(r['ratio'])}"
                       for r in figures["rounds"])
    verdict = "-" if met is None else "yes" if met else "**no**"
    return (f"| {label} | {rounds} | {show(figures['median'])} | {show(figures['lowest'])} "
            f"| {show(figures['highest'])} | {target} | {verdict} |")


def add_round_options(parser, threads_help, one_database=True):
    """Add the options every round-by-round bench shares (data, rounds,
    durations, server threads, seed, where results go) to `parser`;
    one_database: with --bugs and --db (a bench of one database)."""
    if one_database:
        parser.add_argument("--bugs", type=int, default=100000,
                            help="use bench/data/bugs-N.sqlite (default 100000)")
        parser.add_argument("--db", help="database file to use instead")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per ratio (default 3)")
    parser.add_argument("--duration", type=float, default=5.0,
                        help="seconds per measurement (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0,
                        help="seconds of unmeasured load before each measurement (default 1)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"{threads_help} (default {DEFAULT_THREADS})")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the requests")
    parser.add_argument("--out", default=str(RESULTS_DIR), help="results folder")
    parser.add_argument("--name", help="results file name without extension")
    return parser


def add_key_option(parser):
    """Add --anonymous-reads (see the module's docstring) to `parser`."""
    parser.add_argument("--anonymous-reads", action="store_true",
                        help="send reads without an API key (default: every request has one)")
    return parser


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m bench.paired",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--postgresql", action="store_true",
                        help="measure the service on PostgreSQL too (see the module's docstring)")
    parser.add_argument("--pair-warmup", type=float, default=PAIR_WARMUP,
                        help="seconds each server of a --workers 2 / 1 or PostgreSQL / SQLite "
                             "pair serves the scenario unmeasured before its rounds (default "
                             f"{PAIR_WARMUP:g})")
    parser.add_argument("--pg-folder",
                        help="with --postgresql: the cluster's folder, kept after the run (made "
                             "and loaded when missing); default: a new one, removed")
    return add_key_option(add_round_options(parser, "request threads per process"))


def run_and_save(args, run_rounds, markdown_of, prog, suffix):
    """Run `run_rounds(args)`, write its results as NAME.json and NAME.md
    (`markdown_of(results)`) in args.out and print the table.

    Returns the exit status: 0, or 2 after printing why the run could not
    be made (RuntimeError or ValueError from `run_rounds`)."""
    try:
        results = run_rounds(args)
    except (RuntimeError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = args.name or f"{results['date'][:10]}-bugs{results['bugs']}-{suffix}"
    table = markdown_of(results)
    (out / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out / f"{name}.md").write_text(table, encoding="utf-8")
    print(table)
    print(f"Wrote {out / name}.md and .json")
    return 0


def main(argv=None):
    return run_and_save(build_parser().parse_args(argv), run, markdown, "python -m bench.paired",
                        "paired")


if __name__ == "__main__":
    sys.exit(main())
