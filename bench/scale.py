"""Scale, paired: the service on a smaller and a larger seeded database,
both serving at the same time and measured in turn, seconds apart, round
after round, so that a host whose speed drifts (other tenants) does not
decide the ratio: GET bug, the 50-bug search and POST comment, each
server with requests drawn from its own data.

    python -m bench.scale [--small bench/data/bugs-100000.sqlite]
                          [--large bench/data/bugs-1000000.sqlite] [--rounds 3]

Reports, per scenario, the larger database's rate as a share of the
smaller's (round by round, median, lowest, highest; the target is at least
SCALE_TARGET), both servers' CPU time per request, and each server's peak
memory (VmHWM) at the end. Writes bench/results/DATE-scale-bugsN-bugsM.md
and .json.
"""

import argparse
import random
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from . import scenarios
from .paired import add_round_options, run_and_save
from .report import HEADLINE_CONCURRENCY
from .run import (
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


SCENARIOS = ("bug_get", "search", "comment_add")
SCALE_TARGET = 0.8


class _Side:
    """One server, its data and its request files."""

    def __init__(self, name, db_path, args, work, log_dir):
        if not db_path.exists():
            raise RuntimeError(f"{db_path} does not exist: seed it with python -m bench.seed")
        self.name, self.db_path, self.args, self.work = name, db_path, args, work
        self.workload = scenarios.Workload.from_db(db_path, random.Random(args.seed))
        self.files = {}
        self.server = Server([sys.executable, "bugsvc.py", "--db", str(db_path), "--port", "0",
                              "--threads", str(args.threads)], log_dir / f"{name}.log", name)

    def request_file(self, scenario):
        if scenario not in self.files:
            requests = scenarios.requests_for(scenario, self.workload, self.args.seed)
            self.files[scenario] = scenarios.write_request_file(
                self.work / f"{self.name}-{scenario}.txt", requests)
        return self.files[scenario]

    def measure(self, scenario, driver):
        figures = measure(self.server, driver, self.request_file(scenario),
                          [HEADLINE_CONCURRENCY], self.args.duration, self.args.warmup,
                          lambda _: None)
        return figures[HEADLINE_CONCURRENCY]


def run(args, log=print):
    """The whole run; returns the results dict."""
    small_path = Path(args.small) if args.small else default_db_path(100000)
    large_path = Path(args.large) if args.large else default_db_path(1000000)
    driver = "wrk" if wrk_available() else "python"
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    log_dir = Path(tempfile.mkdtemp(prefix="bench-scale-logs-"))
    results = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine(), "driver": driver, "duration_s": args.duration,
               "warmup_s": args.warmup, "rounds": args.rounds,
               "concurrency": HEADLINE_CONCURRENCY, "threads": args.threads,
               "small": {"database": shown_path(small_path), "bugs": count_bugs(small_path)},
               "large": {"database": shown_path(large_path), "bugs": count_bugs(large_path)},
               "scenarios": {}}
    sides = []
    try:
        small = _Side("small", small_path, args, work, log_dir)
        sides.append(small)
        large = _Side("large", large_path, args, work, log_dir)
        sides.append(large)
        for scenario in SCENARIOS:
            log(f"{scenario}: {results['large']['bugs']:,} bugs against "
                f"{results['small']['bugs']:,}")
            rounds = []
            for number in range(args.rounds):
                a, b = small.measure(scenario, driver), large.measure(scenario, driver)
                ratio = b["rps"] / a["rps"] if a["rps"] else 0.0
                rounds.append({"small_rps": a["rps"], "large_rps": b["rps"],
                               "ratio": round(ratio, 3),
                               "small_cpu_ms": a.get("cpu_ms_per_request"),
                               "large_cpu_ms": b.get("cpu_ms_per_request"),
                               "small_errors": a["errors"], "large_errors": b["errors"]})
                log(f"  round {number + 1}: {a['rps']:,.0f} / {b['rps']:,.0f} req/s"
                    f" -> {ratio:.3f}")
            ratios = [r["ratio"] for r in rounds]
            results["scenarios"][scenario] = {
                "rounds": rounds, "median": round(statistics.median(ratios), 3),
                "lowest": min(ratios), "highest": max(ratios),
                "small_cpu_ms": _median(r["small_cpu_ms"] for r in rounds),
                "large_cpu_ms": _median(r["large_cpu_ms"] for r in rounds)}
        for side in sides:
            peaks = side.server.memory()
            results[side.name]["peak_memory_mb"] = max(peaks.values()) if peaks else None
    finally:
        for side in sides:
            side.server.stop()
        remove_run_folders(work, log_dir, log)
    results["machine"]["load_after"] = load_average()
    results["bugs"] = results["large"]["bugs"]
    return results


def _median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def markdown(results):
    """The report table of a scale run."""
    m, small, large = results["machine"], results["small"], results["large"]
    lines = [f"# bugsvc at {large['bugs']:,} bugs against {small['bugs']:,}, {results['date']}", "",
             f"- data: `{small['database']}` and `{large['database']}`, one service on each,"
             " both serving at the same time and measured in turn",
             f"- {results['rounds']} rounds of {results['duration_s']} s after "
             f"{results['warmup_s']} s warm-up per server, concurrency "
             f"{results['concurrency']}, {results['threads']} threads, driver {results['driver']}",
             f"- load average before / after: {m.get('load_before')} / {m.get('load_after')}"
             " (other work shared the cores)",
             f"- peak memory (VmHWM) at the end: {small.get('peak_memory_mb')} MB at "
             f"{small['bugs']:,} bugs, {large.get('peak_memory_mb')} MB at {large['bugs']:,}", "",
             "| scenario | rounds (req/s: smaller / larger -> share) | median | lowest | highest "
             "| CPU ms/req, smaller -> larger | target | met (median) |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for scenario, figures in results["scenarios"].items():
        rounds = "; ".join(f"{r['small_rps']:,.0f} / {r['large_rps']:,.0f} -> {r['ratio']:.0%}"
                           for r in figures["rounds"])
        met = figures["median"] >= SCALE_TARGET
        lines.append(f"| {scenario} | {rounds} | {figures['median']:.0%} | {figures['lowest']:.0%}"
                     f" | {figures['highest']:.0%} | {figures['small_cpu_ms']} -> "
                     f"{figures['large_cpu_ms']} | {SCALE_TARGET:.0%} | "
                     f"{'yes' if met else '**no**'} |")
    return "\n".join(lines) + "\n"


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m bench.scale",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--small", help="the smaller database (default bugs-100000.sqlite)")
    parser.add_argument("--large", help="the larger database (default bugs-1000000.sqlite)")
    return add_round_options(parser, "request threads per process", one_database=False)


def main(argv=None):
    return run_and_save(build_parser().parse_args(argv), run, markdown, "python -m bench.scale",
                        "scale")


if __name__ == "__main__":
    sys.exit(main())
