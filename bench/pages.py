"""The web pages beside the REST calls that show the same, measured in turn
on one server, round after round, so that a host whose speed drifts does
not decide the ratios.

    python -m bench.pages [--bugs 100000] [--rounds 3] [--duration 5]

Scenarios (bench/scenarios.py): the bug page of random bugs against
GET /rest/bug/{id} of the same bugs (target: the page at no less than half
that rate), the bug page of a bug with 1,000 comments against GET
/rest/bug/{id} and GET /rest/bug/{id}/comment of it, a bug list of 500 bugs
against the same search over REST, and a signed-in user's home page. Each
is measured at concurrency 8: requests per second, p50/p99 latency and the
server's CPU time per request (which other work on the host changes far
less than the rate). Writes bench/results/DATE-bugsN-pages.md and .json.
"""

import argparse
import statistics
import sys
from datetime import datetime, timezone

from . import scenarios
from .paired import PairedRun, add_round_options, run_and_save
from .report import HEADLINE_CONCURRENCY
from .run import count_bugs, load_average, machine, measure, shown_path


# The page at no less than this share of the rate of the REST call it shows.
PAGE_TARGET = 0.5


def figures_of(paired, server, scenario):
    figures = measure(server, paired.driver, paired.request_file(scenario),
                      [HEADLINE_CONCURRENCY], paired.args.duration, paired.args.warmup,
                      lambda _: None)[HEADLINE_CONCURRENCY]
    figures.pop("raw", None)
    return figures


def median_figures(rounds):
    """The median of each figure over the rounds."""
    keys = [key for key in rounds[0] if isinstance(rounds[0][key], (int, float))
            and all(key in r for r in rounds)]
    return {key: round(statistics.median(r[key] for r in rounds), 3) for key in keys}


def run(args, log=print):
    paired = PairedRun(args, log)
    results = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine(), "database": shown_path(paired.db_path),
               "bugs": count_bugs(paired.db_path), "driver": paired.driver,
               "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
               "concurrency": HEADLINE_CONCURRENCY, "threads": args.threads,
               "big_bug": paired.workload.big_bug, "list_product": paired.workload.list_product,
               "scenarios": {}, "ratios": {}}
    wanted = [name for pair in scenarios.PAGE_PAIRS for name in pair if name]
    rounds = {name: [] for name in dict.fromkeys(wanted)}
    service = paired.start("service", ["bugsvc.py", "--db", str(paired.db_path)])
    try:
        for number in range(args.rounds):
            for name in rounds:
                figures = figures_of(paired, service, name)
                rounds[name].append(figures)
                log(f"round {number + 1} {name}: {figures['rps']:,.1f} req/s, p99 "
                    f"{figures['p99_ms']:.1f} ms, {figures.get('cpu_ms_per_request', 0):.2f} "
                    f"CPU ms/req, {figures['errors']} errors")
    finally:
        service.stop()
        paired.remove_folders()
    for name, measured in rounds.items():
        results["scenarios"][name] = {"rounds": measured, "median": median_figures(measured)}
    for page, rest in scenarios.PAGE_PAIRS:
        if rest is None:
            continue
        pairs = list(zip(rounds[page], rounds[rest], strict=True))
        ratios = [p["rps"] / r["rps"] for p, r in pairs if r["rps"]]
        cpu = [r.get("cpu_ms_per_request", 0) / p["cpu_ms_per_request"]
               for p, r in pairs if p.get("cpu_ms_per_request")]
        results["ratios"][f"{page}/{rest}"] = {
            "rps": [round(value, 3) for value in ratios],
            "median": round(statistics.median(ratios), 3) if ratios else None,
            "cpu_median": round(statistics.median(cpu), 3) if cpu else None}
    results["machine"]["load_after"] = load_average()
    return results


def markdown(results):
    m = results["machine"]
    titles = {s.name: s.title for s in scenarios.SCENARIOS}
    lines = [f"# bugsvc web pages beside REST, {results['date']}", "",
             f"- data: {results['bugs']:,} bugs (`{results['database']}`); the bug with "
             f"{scenarios.BIG_BUG_COMMENTS:,} comments is bug {results['big_bug']}, the lists "
             f"are of product {results['list_product']}",
             f"- {results['rounds']} rounds, each scenario in turn for {results['duration_s']} s "
             f"after {results['warmup_s']} s warm-up, concurrency {results['concurrency']}, one "
             f"server process with {results['threads']} threads, driver {results['driver']}",
             f"- machine: {m['cores']} cores, {m['cpu'] or 'unknown CPU'}, Python {m['python']}, "
             f"SQLite {m['sqlite']}; load generator on the same cores; load average before / "
             f"after: {m.get('load_before')} / {m.get('load_after')}", "",
             "| scenario | request | req/s | p50 ms | p99 ms | server CPU ms/req | errors |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, figures in results["scenarios"].items():
        f = figures["median"]
        lines.append(f"| {name} | {titles[name]} | {f['rps']:,.1f} | {f['p50_ms']:.2f} "
                     f"| {f['p99_ms']:.2f} | {f.get('cpu_ms_per_request', 0):.2f} "
                     f"| {sum(r['errors'] for r in figures['rounds'])} |")
    lines += ["", "Medians of the rounds. Ratios of the rates, round by round (the page's "
                  "rate / the REST call's), and of the CPU time per request:", "",
              "| page / REST | rate ratio per round | median | CPU ratio (median) | target "
              "| met |", "|---|---|---:|---:|---:|---|"]
    for label, ratio in results["ratios"].items():
        target = PAGE_TARGET if label == "page_bug/bug_get" else None
        met = "-" if target is None or ratio["median"] is None else (
            "yes" if ratio["median"] >= target else "**no**")
        lines.append(f"| {label} | {', '.join(f'{v:.2f}' for v in ratio['rps'])} "
                     f"| {ratio['median']:.2f} | {ratio['cpu_median'] or 0:.2f} "
                     f"| {'' if target is None else f'>= {target}'} | {met} |")
    return "\n".join(lines) + "\n"


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m bench.pages",
                                     description=__doc__.split("\n")[0])
    return add_round_options(parser, "request threads of the server")


def main(argv=None):
    return run_and_save(build_parser().parse_args(argv), run, markdown, "python -m bench.pages",
                        "pages")


if __name__ == "__main__":
    sys.exit(main())
