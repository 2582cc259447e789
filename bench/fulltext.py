"""Quick search over comments (quicksearch_fulltext): how long one search
takes through the comment text index, and without it (every bug's
comments compared), on a seeded database.

    python -m bench.fulltext --db bench/data/bugs-100000.sqlite [--rounds 5]

Each search is Bug.search as an anonymous caller, limit 50, run through the
operations table (no HTTP), the median of --rounds runs after one warm-up.
Writes its figures to bench/results, as Markdown and JSON named by the
date and the database.
"""

import argparse
import json
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.api.operations import OPERATIONS
from bugsvc.api.runner import Runner
from bugsvc.bugs import search_sql
from bugsvc.compose import unit_of_work
from bugsvc.config import Config
from bugsvc.store.location import Location, open_database


RESULTS = Path(__file__).resolve().parent / "results"
# Words of the comment corpus (common and rarer), a word in no comment
# (the worst case of a scan: every comment read), and two words together.
SEARCHES = ("profiler", "TypeError", "nightly build", "zeppelin", "workaround profiler",
            '"easy workaround"')


# The three shapes of a quick search: the API's first 50 (bug id order),
# the bug list page's first 50 (its sort order), and the page's count.
SHAPES = {"first 50": {"limit": 50},
          "list page": {"limit": 50, "order": "bug_status,priority,assigned_to,bug_id"},
          "count": {"count_only": 1}}


def timed(runner, text, shape, rounds):
    operation = OPERATIONS["Bug.search"]
    params = dict(SHAPES[shape], quicksearch=text, include_fields="id")
    runner.call(operation, dict(params), None)
    times, found = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        answer = runner.call(operation, dict(params), None)
        times.append(time.perf_counter() - start)
        found = answer["bug_count"] if "bug_count" in answer else len(answer["bugs"])
    return statistics.median(times), found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    db = open_database(args.db)
    db.initialize()
    runner = Runner(unit_of_work(db, Config(database=Location.of(args.db))))
    rows = []
    for text in SEARCHES:
        for shape in SHAPES:
            indexed, found = timed(runner, text, shape, args.rounds)
            original = search_sql.Compiler.candidates
            search_sql.Compiler.candidates = lambda self, node: None
            try:
                scanned, found_scan = timed(runner, text, shape, max(1, args.rounds // 2))
            finally:
                search_sql.Compiler.candidates = original
            assert found == found_scan, (text, shape, found, found_scan)
            rows.append({"quicksearch": text, "shape": shape, "found": found,
                         "indexed_ms": round(indexed * 1000, 1),
                         "scan_ms": round(scanned * 1000, 1)})
            print(f"{text!r:24} {shape:10} found {found:6}  index {indexed * 1000:8.1f} ms"
                  f"  scan {scanned * 1000:9.1f} ms", flush=True)
    db.close()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    name = Path(args.db).stem
    RESULTS.mkdir(exist_ok=True)
    base = RESULTS / f"{stamp}-{name}-fulltext"
    base.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = [f"# Quick search over comments, {name}", "",
             "Bug.search quicksearch=TEXT as an anonymous caller through the operations",
             f"table; median of {args.rounds} runs (scan: of {max(1, args.rounds // 2)}).",
             "", "| quicksearch | search | bugs found | with the index (ms) |"
             " every bug compared (ms) |", "|---|---|---|---|---|"]
    lines += [f"| `{row['quicksearch']}` | {row['shape']} | {row['found']} | {row['indexed_ms']}"
              f" | {row['scan_ms']} |" for row in rows]
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
