"""Quick search over comments (quicksearch_fulltext): how long one search
takes through the comment text index, and without it (every bug's
comments compared), on a seeded database.

    python -m bench.fulltext --db bench/data/bugs-100000.sqlite [--rounds 5]
                             [--shapes "first 50,count"] [--no-scan]
                             [--field quicksearch|comment]

--field comment searches the advanced search's comment box instead
(longdesc: all of the strings; a text in double quotes, the string).

Each search is Bug.search as an anonymous caller, limit 50, run through the
operations table (no HTTP), the median of --rounds runs after one warm-up,
in wall-clock time and in the CPU time of this process (which other work
on the machine changes far less). --no-scan leaves out the comparison
without the index (at a million bugs it takes minutes a search). Writes its
figures to bench/results, as Markdown and JSON named by the date and the
database, with the machine's load average before and after.
"""

import argparse
import json
import os
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.api.operations import OPERATIONS
from bugsvc.api.runner import Runner
from bugsvc.bugs import search_sql
from bugsvc.compose import unit_of_work
from bugsvc.config import Config
from bugsvc.errors import ServiceError
from bugsvc.store.location import Location, open_database

from .seed import ADMIN_EMAIL


RESULTS = Path(__file__).resolve().parent / "results"
# Words of the comment corpus (each of its sentences is in about 2% of the
# comments, so every word is common), a rare word (the corpus has none: it is
# added to RARE_COMMENTS comments of open bugs spread over the database, as
# an error code or a function name is in a real tracker), a phrase of common
# words few comments have (where two sentences meet: about one comment in
# 10,000), a word in no comment (the worst case of a scan: every comment
# read), two words together, and the rare word beside a common one (as a
# function's name beside the word "crash").
RARE_WORD = "xylophonist"
RARE_COMMENTS = 20
SEARCHES = ("profiler", "TypeError", RARE_WORD, "nightly build", '"machine. Needinfo"',
            "zeppelin", "workaround profiler", '"easy workaround"', f"{RARE_WORD} profiler")


# The three shapes of a quick search: the API's first 50 (bug id order),
# the bug list page's first 50 (its sort order), and the page's count.
SHAPES = {"first 50": {"limit": 50},
          "list page": {"limit": 50, "order": "bug_status,priority,assigned_to,bug_id"},
          "count": {"count_only": 1}}


def comment_box(text):
    """The advanced search's comment box holding `text`: all of its strings,
    or a text in double quotes as one string."""
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        return {"longdesc": text[1:-1], "longdesc_type": "substring"}
    return {"longdesc": text, "longdesc_type": "allwordssubstr"}


# The criteria a text is searched by, by --field.
FIELDS = {"quicksearch": lambda text: {"quicksearch": text}, "comment": comment_box}


def timed(runner, text, shape, rounds, field="quicksearch"):
    """(median wall time, median CPU time, bugs found) of the search of
    `text` in `field` (FIELDS); a search that fails gives the time of its
    first try and its error (ServiceError) as what it found, and is not
    tried again."""
    operation = OPERATIONS["Bug.search"]
    params = dict(SHAPES[shape], include_fields="id", **FIELDS[field](text))
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        runner.call(operation, dict(params), None)
    except ServiceError as error:
        return (time.perf_counter() - start, time.process_time() - cpu_start,
                f"error {error.code}: {error}")
    times, cpu_times, found = [], [], 0
    for _ in range(rounds):
        start, cpu_start = time.perf_counter(), time.process_time()
        answer = runner.call(operation, dict(params), None)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        found = answer["bug_count"] if "bug_count" in answer else len(answer["bugs"])
    return statistics.median(times), statistics.median(cpu_times), found


def plant_rare_word(db, runner):
    """Add RARE_WORD to RARE_COMMENTS new comments (by the administrator)
    on open bugs spread evenly over the ids, unless the database has them."""
    with db.transaction() as conn:
        admin = conn.execute("SELECT id FROM users WHERE login = ?", (ADMIN_EMAIL,)).fetchone()[0]
        holds = conn.dialect.contains("body", "?")
        if conn.execute(f"SELECT COUNT(*) FROM comments WHERE author_id = ? AND {holds}",
                        (admin, RARE_WORD)).fetchone()[0] >= RARE_COMMENTS:
            return
        last = conn.execute("SELECT MAX(id) FROM bugs").fetchone()[0]
        bug_ids = []
        for step in range(RARE_COMMENTS):
            row = conn.execute(
                "SELECT b.id FROM bugs b WHERE b.id >= ? AND b.status IN ('UNCONFIRMED',"
                " 'CONFIRMED', 'IN_PROGRESS') AND NOT EXISTS (SELECT 1 FROM bug_groups bg"
                " WHERE bg.bug_id = b.id) ORDER BY b.id LIMIT 1",
                (1 + step * last // RARE_COMMENTS,)).fetchone()
            if row is not None:
                bug_ids.append(row[0])
    for bug_id in bug_ids:
        runner.call(OPERATIONS["Bug.add_comment"],
                    {"id": bug_id, "comment": f"The log names {RARE_WORD} as the culprit."}, admin)


def load_average():
    """The 1-minute load average (None where the platform has none)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help=f"comma-separated, of: {', '.join(SHAPES)} (default all)")
    parser.add_argument("--searches", help="comma-separated texts (default: the usual ones)")
    parser.add_argument("--field", choices=sorted(FIELDS), default="quicksearch",
                        help="search quick search's words (default) or the comment box's")
    parser.add_argument("--no-scan", action="store_true",
                        help="leave out the comparison without the index")
    parser.add_argument("--out", default=str(RESULTS), help="results folder")
    parser.add_argument("--name", help="results file name without extension")
    args = parser.parse_args(argv)
    shapes = [shape.strip() for shape in args.shapes.split(",") if shape.strip()]
    unknown = [shape for shape in shapes if shape not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes: {', '.join(unknown)}")
    searches = [text for text in args.searches.split(",")] if args.searches else SEARCHES
    db = open_database(args.db)
    db.initialize()
    runner = Runner(unit_of_work(db, Config(database=Location.of(args.db))))
    if RARE_WORD in searches:
        plant_rare_word(db, runner)
    load_before, rows = load_average(), []
    for text in searches:
        for shape in shapes:
            indexed, cpu, found = timed(runner, text, shape, args.rounds, args.field)
            row = {args.field: text, "shape": shape, "found": found,
                   "indexed_ms": round(indexed * 1000, 1), "indexed_cpu_ms": round(cpu * 1000, 1)}
            line = (f"{text!r:24} {shape:10} found {found!s:6}  served {indexed * 1000:8.1f} ms"
                    f" (CPU {cpu * 1000:8.1f} ms)")
            if not args.no_scan and not isinstance(found, str):
                original = search_sql.Compiler.candidates
                search_sql.Compiler.candidates = lambda self, node: None
                try:
                    scanned, _, found_scan = timed(runner, text, shape, max(1, args.rounds // 2),
                                                   args.field)
                finally:
                    search_sql.Compiler.candidates = original
                assert found == found_scan, (text, shape, found, found_scan)
                row["scan_ms"] = round(scanned * 1000, 1)
                line += f"  scan {scanned * 1000:9.1f} ms"
            rows.append(row)
            print(line, flush=True)
    db.close()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    suffix = "" if args.field == "quicksearch" else f"-{args.field}"
    name = args.name or f"{stamp}-{Path(args.db).stem}-fulltext{suffix}"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = out / name
    load_after = load_average()
    base.with_suffix(".json").write_text(json.dumps(
        {"db": Path(args.db).name, "field": args.field, "rounds": args.rounds,
         "load_before": load_before,
         "load_after": load_after, "cores": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    scan = "" if args.no_scan else " every bug compared (ms) |"
    searched = ("quick search" if args.field == "quicksearch"
                else "the comment box (longdesc, all of the strings)")
    lines = [f"# {searched[0].upper() + searched[1:]} over comments, {Path(args.db).stem}", "",
             f"Bug.search of TEXT in {searched} as an anonymous caller through the",
             f"operations table; median of {args.rounds} runs"
             + ("" if args.no_scan else f" (scan: of {max(1, args.rounds // 2)})") + ";"
             f" load average {load_before} before, {load_after} after, on {os.cpu_count()} cores.",
             "", f"| {args.field} | search | bugs found | as served (ms) | CPU (ms) |" + scan,
             "|---|---|---|---|---|" + ("" if args.no_scan else "---|")]
    lines += [f"| `{row[args.field]}` | {row['shape']} | {row['found']} | {row['indexed_ms']}"
              f" | {row['indexed_cpu_ms']} |"
              + ("" if args.no_scan else f" {row.get('scan_ms', '')} |")
              for row in rows]
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
