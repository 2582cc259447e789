"""A/B of two checkouts: this checkout's service (B) against another
checkout's (A, e.g. main before a change), measured in turn, round after
round, so that a host whose speed drifts between runs does not decide the
ratio.

    python -m bench.ab --other PATH [--bugs 10000] [--rounds 5] [--duration 5]
                       [--scenarios bug_get,search,comment_add]

Both services run at the same time (an idle one takes no CPU), neither
pinned to a core, each on its own copy of the same database (the writes of
one do not change what the other reads), with this checkout's Python and
packages; the request files are the same for both. Each round measures
both at concurrency 8, A first in odd rounds and B first in even ones; each
round gives the ratio B / A of the rates, and the report shows the median,
lowest and highest, with the median rate, latency and server CPU time per
request of each side. Every request carries an API key, reads too, unless
`--anonymous-reads` is given (as bench.paired). Writes
bench/results/DATE-bugsN-ab.md and .json.
"""

import shutil
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from .paired import PairedRun, add_key_option, add_round_options, run_and_save
from .report import HEADLINE_CONCURRENCY
from .run import ROOT, count_bugs, load_average, machine, measure, shown_path


DEFAULT_SCENARIOS = "bug_get,search,comment_add"


def build_parser():
    import argparse
    parser = argparse.ArgumentParser(prog="python -m bench.ab",
                                     description=__doc__.split("\n")[0])
    add_key_option(add_round_options(parser, "request threads per process"))
    parser.add_argument("--other", required=True,
                        help="the other checkout (A): a folder holding its bugsvc.py")
    parser.add_argument("--scenarios", default=DEFAULT_SCENARIOS,
                        help=f"comma-separated names (default {DEFAULT_SCENARIOS})")
    parser.set_defaults(bugs=10000, rounds=5)
    return parser


def _figures(paired, server, scenario):
    figures = measure(server, paired.driver, paired.request_file(scenario),
                      [HEADLINE_CONCURRENCY], paired.args.duration, paired.args.warmup,
                      lambda _: None)[HEADLINE_CONCURRENCY]
    figures.pop("raw", None)
    return figures


def describe(checkout):
    """A checkout as the report names it: its commit and subject when it is
    a git checkout, else its folder's name (never a path outside the
    repository)."""
    try:
        done = subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
                              capture_output=True, text=True, timeout=30)
    except OSError:
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        line = done.stdout.strip()
        return line if len(line) <= 90 else line[:87] + "..."
    return Path(checkout).name


def _median(rounds, side, key):
    values = [r[side][key] for r in rounds if key in r[side]]
    return round(statistics.median(values), 3) if values else None


def run(args, log=print):
    """The whole A/B run; returns the results dict."""
    other = Path(args.other).resolve()
    if not (other / "bugsvc.py").is_file():
        raise ValueError(f"{other} holds no bugsvc.py")
    paired = PairedRun(args, log)
    names = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    results = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine(), "database": shown_path(paired.db_path),
               "bugs": count_bugs(paired.db_path), "driver": paired.driver,
               "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
               "concurrency": HEADLINE_CONCURRENCY, "threads": args.threads,
               "keyed": paired.keyed, "a": describe(other), "b": describe(ROOT), "scenarios": {}}
    copies = {side: paired.work / f"{side}.sqlite" for side in ("a", "b")}
    for copy in copies.values():
        shutil.copyfile(paired.db_path, copy)
    servers = {}
    try:
        # Neither side pinned to a core: a service picks its core by its
        # process id, which would put the two on different cores, shared
        # unevenly with the load generator and whatever else runs.
        for side, checkout in (("a", other), ("b", ROOT)):
            servers[side] = paired.start(side, [str(checkout / "bugsvc.py"), "--db",
                                                str(copies[side]), "--pin-cores", "no"])
        rounds = {name: [] for name in names}
        log(f"A: {results['a']}\nB: {results['b']}")
        for number in range(args.rounds):
            order = ("a", "b") if number % 2 == 0 else ("b", "a")
            for name in names:
                figures = {side: _figures(paired, servers[side], name) for side in order}
                ratio = figures["b"]["rps"] / figures["a"]["rps"] if figures["a"]["rps"] else 0.0
                rounds[name].append({**figures, "ratio": round(ratio, 3), "first": order[0]})
                log(f"  {name} round {number + 1} ({order[0]} first): "
                    f"A {figures['a']['rps']:,.0f} / B {figures['b']['rps']:,.0f} req/s"
                    f" -> {ratio:.3f}")
        for name, measured in rounds.items():
            ratios = [r["ratio"] for r in measured]
            results["scenarios"][name] = {
                "rounds": measured, "median": round(statistics.median(ratios), 3),
                "lowest": min(ratios), "highest": max(ratios),
                **{side: {key: _median(measured, side, key) for key in
                          ("rps", "p50_ms", "p99_ms", "cpu_ms_per_request", "errors")}
                   for side in ("a", "b")}}
    finally:
        for server in servers.values():
            server.stop()
        paired.remove_folders()
    results["machine"]["load_after"] = load_average()
    return results


def markdown(results):
    """The report table of an A/B run."""
    m = results["machine"]
    lines = [f"# bugsvc A/B, {results['date']}", "",
             f"- data: {results['bugs']:,} bugs (`{results['database']}`), a copy for each side",
             f"- A: `{results['a']}`; B: `{results['b']}`",
             f"- {results['rounds']} rounds of {results['duration_s']} s after "
             f"{results['warmup_s']} s warm-up per side and scenario, concurrency "
             f"{results['concurrency']}, {results['threads']} threads, driver {results['driver']};"
             " both run at the same time and are measured in turn, A first in odd rounds",
             "- " + ("an API key on every request, reads too" if results.get("keyed")
                     else "reads anonymous, writes with API keys"),
             f"- load average before / after: {m.get('load_before')} / {m.get('load_after')}", "",
             "| scenario | B / A by round | median | lowest | highest | req/s A / B "
             "| p50 ms A / B | p99 ms A / B | CPU ms/req A / B |",
             "|---|---|---:|---:|---:|---|---|---|---|"]
    for name, figures in results["scenarios"].items():
        a, b = figures["a"], figures["b"]
        by_round = "; ".join(f"{r['ratio']:.3f}" for r in figures["rounds"])
        lines.append(f"| {name} | {by_round} | {figures['median']:.3f} | {figures['lowest']:.3f} "
                     f"| {figures['highest']:.3f} | {a['rps']:,.0f} / {b['rps']:,.0f} "
                     f"| {a['p50_ms']} / {b['p50_ms']} | {a['p99_ms']} / {b['p99_ms']} "
                     f"| {a['cpu_ms_per_request']} / {b['cpu_ms_per_request']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    return run_and_save(build_parser().parse_args(argv), run, markdown, "python -m bench.ab", "ab")


if __name__ == "__main__":
    sys.exit(main())
