"""The load run's report: the markdown table and the performance targets,
evaluated on the figures of one run (and an earlier one to compare with).

    python -m bench.report RESULTS.json [--compare EARLIER.json]

rewrites RESULTS.md (and the targets in RESULTS.json) from the raw figures.
"""

import argparse
import json
import sys
from pathlib import Path

from . import scenarios


HEADLINE_CONCURRENCY = 8


def _at(figures, concurrency):
    """Figures at `concurrency` (JSON turns the int keys into strings)."""
    if not figures:
        return None
    return figures.get(concurrency) or figures.get(str(concurrency))


def _rps(results, name, concurrency=HEADLINE_CONCURRENCY):
    figures = _at(results.get("scenarios", {}).get(name), concurrency)
    return figures["rps"] if figures else None


def ceiling_share(results, name, concurrency=HEADLINE_CONCURRENCY):
    """rps of scenario `name` / rps of the ceiling, at `concurrency` (None if unmeasured)."""
    rps = _rps(results, name, concurrency)
    ceiling = _at(results.get("ceiling"), concurrency)
    if rps is None or not ceiling or not ceiling["rps"]:
        return None
    return rps / ceiling["rps"]


def _target(text, value, shown, met, note=""):
    return {"target": text, "value": value, "shown": shown, "met": met, "note": note}


def targets(results):
    """[{target, value, shown, met (True/False/None when not measured), note}]."""
    found = []
    c = HEADLINE_CONCURRENCY
    # The ceiling targets are set for one worker (against a one-worker ceiling).
    one_worker = results.get("workers", 1) == 1
    note = "" if one_worker else "target set for one worker"
    for name, goal, label in (("bug_get", 0.50, "GET bug"), ("search", 0.15, "search limit 50")):
        share = ceiling_share(results, name)
        found.append(_target(f"{label} >= {goal:.0%} of ceiling rps (c={c})", share,
                             "not measured" if share is None else f"{share:.1%}",
                             None if share is None or not one_worker else share >= goal, note))
    share = ceiling_share(results, "comment_add")
    runs = results.get("scenarios", {}).get("comment_add") or {}
    errors = sum(f["errors"] for f in runs.values()) if runs else None
    met = None if share is None or not one_worker else (share >= 0.30 and errors == 0)
    found.append(_target(f"POST comment >= 30% of ceiling rps (c={c}), zero errors", share,
                         "not measured" if share is None else f"{share:.1%}, {errors} errors", met,
                         note))
    worst, worst_name = None, ""
    for name, runs in results.get("scenarios", {}).items():
        if scenarios.BY_NAME[name].kind != "read":
            continue
        figures = _at(runs, c)
        if figures and figures["p50_ms"] > 0:
            spread = figures["p99_ms"] / figures["p50_ms"]
            if worst is None or spread > worst:
                worst, worst_name = spread, name
    found.append(_target(f"p99 <= 5 x p50 in read scenarios (c={c})", worst,
                         "not measured" if worst is None else f"worst {worst:.1f}x ({worst_name})",
                         None if worst is None else worst <= 5))
    startup = results.get("startup_s")
    found.append(_target("service answers within 2 s of starting", startup,
                         "not measured" if startup is None else f"{startup:.2f} s",
                         None if startup is None else startup <= 2.0, "target set at 1M bugs"))
    peak = (results.get("peak_memory_mb") or {}).get("per_worker_max")
    found.append(_target("peak memory of one worker under load < 150 MB", peak,
                         "not measured" if peak is None else f"{peak:.0f} MB",
                         None if peak is None else peak < 150, "target set at 1M bugs"))
    base = results.get("compared_with")
    if base:
        if results["bugs"] > base["bugs"]:
            for name, label in (("bug_get", "point read"), ("search", "search")):
                now, before = _rps(results, name), _rps(base, name)
                ratio = now / before if now and before else None
                found.append(_target(
                    f"{label} at {results['bugs']:,} bugs >= 80% of its rate at "
                    f"{base['bugs']:,} (c={c})", ratio,
                    "not measured" if ratio is None else f"{ratio:.0%}",
                    None if ratio is None else ratio >= 0.8))
        if results["workers"] > base["workers"]:
            for name in results.get("scenarios", {}):
                now, before = _rps(results, name), _rps(base, name)
                ratio = now / before if now and before else None
                found.append(_target(
                    f"{name}: --workers {results['workers']} vs {base['workers']} (c={c})"
                    + (" >= 1.6x" if name == "bug_get" else ""), ratio,
                    "not measured" if ratio is None else f"{ratio:.2f}x",
                    (None if ratio is None else ratio >= 1.6) if name == "bug_get" else None))
    return found


def _row(name, title, concurrency, figures, ceiling):
    share = ""
    if ceiling and ceiling.get("rps"):
        share = f"{figures['rps'] / ceiling['rps']:.1%}"
    return (f"| {name} | {title} | {concurrency} | {figures['rps']:,.1f} | {figures['p50_ms']:.2f} "
            f"| {figures['p99_ms']:.2f} | {figures['errors']} | {share} | {cpu_text(figures)} |")


def cpu_text(figures, database_name="database"):
    """The serving processes' CPU ms per request, and the database server's
    when measured ('1.20 + database 0.95'); '' when not measured."""
    cpu = figures.get("cpu_ms_per_request")
    text = "" if cpu is None else f"{cpu:.2f}"
    database = figures.get("db_cpu_ms_per_request")
    return text if database is None else f"{text} + {database_name} {database:.2f}"


def engine_text(results):
    """The database engine of a run, with PostgreSQL's version and settings."""
    facts = results.get("postgresql")
    if results.get("engine") != "postgresql" or not facts:
        return f"SQLite {results['machine']['sqlite']} (WAL, synchronous=NORMAL)"
    settings = ", ".join(f"{name}={value}" for name, value in facts.items()
                         if name != "server_version")
    return f"PostgreSQL {facts.get('server_version')} on the same machine ({settings})"


def markdown(results):
    """The run as a markdown document."""
    m = results["machine"]
    lines = [
        f"# bugsvc load run, {results['date']}",
        "",
        f"- data: {results['bugs']:,} bugs (`{results['database']}`)",
        "- database engine: " + engine_text(results),
        f"- service: `python bugsvc.py --workers {results['workers']} --threads "
        f"{results.get('threads', 8)}` (waitress; the ceiling runs as many threads); answered "
        f"{results.get('startup_s', '?')} s after start",
        f"- load: {results['driver']}"
        + (f" ({m['wrk']})" if results['driver'] == "wrk" and m.get("wrk") else "")
        + f", {results['duration_s']} s per measurement after {results['warmup_s']} s warm-up;"
          " reads anonymous, writes with API keys of 8 editbugs accounts",
        f"- machine: {m['cores']} cores, {m['cpu'] or 'unknown CPU'}, Python {m['python']}, "
        f"SQLite {m['sqlite']}, {m['platform']}; load generator on the same cores",
        f"- load average before / after the run: {m.get('load_before')} / {m.get('load_after')}"
        " (above 1 means other work shared the cores); scheduler group: "
        f"{m.get('autogroup') or 'n/a'}",
    ]
    peak = results.get("peak_memory_mb") or {}
    if peak.get("per_worker_max") is not None:
        lines.append(f"- peak memory (VmHWM): {peak['per_worker_max']:.0f} MB per serving process,"
                     f" {peak['total']:.0f} MB in all")
    if results.get("mixed_shares"):
        lines.append("- mixed load: " + ", ".join(f"{n} {s:.0f}%"
                                                  for n, s in results["mixed_shares"].items()))
    lines += ["", "| scenario | request | c | req/s | p50 ms | p99 ms | errors | of ceiling "
                  "| server CPU ms/req (+ PostgreSQL's on this machine) |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for concurrency in results["concurrency"]:
        figures = _at(results.get("ceiling"), concurrency)
        if figures:
            lines.append(_row("ceiling", "constant JSON, same server", concurrency, figures, None))
    for name, runs in results["scenarios"].items():
        for concurrency in results["concurrency"]:
            figures = _at(runs, concurrency)
            if figures:
                lines.append(_row(name, scenarios.BY_NAME[name].title, concurrency, figures,
                                  _at(results.get("ceiling"), concurrency)))
    if results.get("skipped"):
        lines += ["", "Not measured:"]
        lines += [f"- {name}: {why}" for name, why in results["skipped"].items()]
    profiled = [(name, figures["profile"]) for name, runs in results["scenarios"].items()
                for figures in runs.values() if figures.get("profile", {}).get("samples")]
    if profiled:
        lines += ["", "## Where the time goes (py-spy --gil: share of the time the interpreter "
                      "lock is held, at the headline concurrency)", ""]
        for name, summary in profiled:
            own = ", ".join(f"{fn} {share:.0%}" for fn, share in summary["self"][:8])
            inclusive = ", ".join(f"{fn} {share:.0%}" for fn, share in summary["inclusive"][:10])
            lines += [f"- **{name}** ({summary['samples']} samples)",
                      f"  - self: {own}", f"  - inclusive, project code: {inclusive}"]
    lines += ["", "| target | measured | met |", "|---|---|---|"]
    for target in results.get("targets", []):
        met = {True: "yes", False: "**no**", None: "-"}[target["met"]]
        note = f" ({target['note']})" if target["note"] else ""
        lines.append(f"| {target['target']}{note} | {target['shown']} | {met} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.report",
                                     description="Rewrite a load run's markdown from its JSON.")
    parser.add_argument("results", help="a results JSON written by bench.run")
    parser.add_argument("--compare", help="the earlier results JSON it was compared with")
    args = parser.parse_args(argv)
    path = Path(args.results)
    results = json.loads(path.read_text(encoding="utf-8"))
    if args.compare:
        results["compared_with"] = json.loads(Path(args.compare).read_text(encoding="utf-8"))
    results["targets"] = targets(results)
    path.with_suffix(".md").write_text(markdown(results), encoding="utf-8")
    if args.compare:
        base = results["compared_with"]
        results["compared_with"] = {key: base.get(key) for key in ("date", "bugs", "workers",
                                                                   "database")}
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"Wrote {path.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
