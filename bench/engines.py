"""Several load runs side by side in one report: SQLite and PostgreSQL, one
and two server processes, before and after a change.

    python -m bench.engines RUN.json [RUN.json ...] --out NAME [--title TEXT]
                            [--label RUN.json=LABEL ...]

Each RUN.json is a results file of bench.run. Writes NAME.md (a table per
concurrency: requests per second, p50 and p99 latency and the server's CPU
time per request of every scenario in every run, and each run's engine,
server processes, load averages and memory) and NAME.json (the runs'
figures, without their raw driver output).
"""

import argparse
import json
import sys
from pathlib import Path

from . import report, scenarios


def label(results):
    """'SQLite, 1 process' / 'PostgreSQL, 2 processes'."""
    engine = "PostgreSQL" if results.get("engine") == "postgresql" else "SQLite"
    workers = results.get("workers", 1)
    replicas = results.get("replicas", 0)
    return (f"{engine}, {workers} process{'es' if workers > 1 else ''}"
            + (f", {replicas} replica{'s' if replicas > 1 else ''}" if replicas else ""))


def _figures(results, name, concurrency):
    runs = results.get("ceiling") if name == "ceiling" else results.get("scenarios", {}).get(name)
    return report._at(runs, concurrency)


def markdown(runs, title):
    """The side-by-side report of `runs` ([(label, results)])."""
    first = runs[0][1]
    m = first["machine"]
    lines = [f"# {title}", "",
             f"- data: {first['bugs']:,} bugs, the same rows on every engine (bench.seed, "
             "copied to PostgreSQL by bench.postgres with convert-db's verified copy)",
             f"- load: {first['driver']}, {first['duration_s']} s per measurement after "
             f"{first['warmup_s']} s warm-up; reads anonymous, writes with API keys of 8 editbugs "
             "accounts; the load generator and the database server share the machine's cores",
             f"- machine: {m['cores']} cores, {m['cpu'] or 'unknown CPU'}, Python {m['python']}, "
             f"{m['platform']}", "", "| run | engine | started | load average before / after "
             "| peak memory per process / all | database |", "|---|---|---|---|---|---|"]
    for name, results in runs:
        peak = results.get("peak_memory_mb") or {}
        lines.append(f"| {name} | {report.engine_text(results)} | {results['date']} "
                     f"| {results['machine'].get('load_before')} / "
                     f"{results['machine'].get('load_after')} "
                     f"| {peak.get('per_worker_max')} / {peak.get('total')} MB "
                     f"| `{results['database']}` |")
    names = ["ceiling"] + [s.name for s in scenarios.SCENARIOS
                           if any(s.name in r.get("scenarios", {}) for _, r in runs)]
    concurrencies = sorted({int(c) for _, r in runs for c in r["concurrency"]})
    for concurrency in concurrencies:
        lines += ["", f"## {concurrency} connection{'s' if concurrency > 1 else ''}", "",
                  "Requests per second, then p50 / p99 latency in ms and the server's CPU time "
                  "per request in ms (all its processes; + the PostgreSQL server's processes, "
                  "where measured: they run on the same machine).",
                  "", "| scenario | " + " | ".join(name for name, _ in runs) + " |",
                  "|---|" + "---:|" * len(runs)]
        for scenario in names:
            cells = []
            for _, results in runs:
                figures = _figures(results, scenario, concurrency)
                if not figures:
                    cells.append("")
                    continue
                cpu = report.cpu_text(figures, "db")
                cells.append(f"**{figures['rps']:,.0f}** ({figures['p50_ms']:.1f} / "
                             f"{figures['p99_ms']:.1f}"
                             + (f"; cpu {cpu}" if cpu else "") + ")"
                             + (f" {figures['errors']} errors" if figures["errors"] else ""))
            lines.append(f"| {scenario} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _stored(results):
    """The run's figures without the driver's raw output."""
    def trim(runs):
        return {c: {k: v for k, v in f.items() if k != "raw"} for c, f in (runs or {}).items()}
    kept = {key: value for key, value in results.items() if key not in ("scenarios", "ceiling")}
    kept["ceiling"] = trim(results.get("ceiling"))
    kept["scenarios"] = {name: trim(runs) for name, runs in results.get("scenarios", {}).items()}
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.engines",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="results files of bench.run")
    parser.add_argument("--out", required=True, help="NAME of NAME.md and NAME.json")
    parser.add_argument("--title", default="bugsvc load runs side by side")
    parser.add_argument("--label", action="append", default=[],
                        help="RUN.json=LABEL: the column title of a run (default: engine and "
                             "server processes)")
    args = parser.parse_args(argv)
    labels = dict(item.split("=", 1) for item in args.label)
    runs = []
    for path in args.runs:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
        runs.append((labels.get(path) or label(results), results))
    out = Path(args.out)
    out.with_suffix(".md").write_text(markdown(runs, args.title), encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(
        {"title": args.title, "runs": [{"label": name, "file": path, "results": _stored(r)}
                                       for (name, r), path in zip(runs, args.runs, strict=True)]},
        indent=2) + "\n", encoding="utf-8")
    print(f"Wrote {out.with_suffix('.md')} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
