"""How fast `bugsvc import` carries a tracker: bugs per minute imported from
a local source, with their comments, history and attachments.

    python -m bench.import_bench [--bugs 2000] [--concurrency 1,4,8] [--workers 2]

The source is a bugsvc serving a database made by bench.seed (the same
realistic data as the load benchmark: five comments per bug on average,
history, CC, flags, 6% of bugs with attachments, a few restricted ones) on
a free loopback port; the import reads it with the administrator's key
into a new database, once per concurrency, exactly as the command does
(bugsvc.importer.run). Source and importer share this machine's cores, so
the figures are those of both together. Results go to
bench/results/DATE-import-bugsN.md and .json.
"""

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bugsvc.importer import verify
from bugsvc.importer.client import Client
from bugsvc.importer.run import Options, run_import
from bugsvc.importer.source import Source

from . import seed as seeding
from .run import RESULTS_DIR, ROOT, Server


KINDS = ("bugs", "comments", "history changes", "attachments", "attachment bytes", "flags",
         "accounts")


def api_key(db_path):
    done = subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), "--db", str(db_path),
                           "api-key", seeding.ADMIN_EMAIL, "--description", "import bench"],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    return done.stdout.strip()


def counts_of(report_text):
    counts = {}
    for line in report_text.splitlines():
        line = line.strip()
        for kind in KINDS:
            if line.startswith(kind + ": "):
                counts[kind] = int(line.split(": ", 1)[1].replace(",", ""))
    return counts


def measure(url, key, concurrency, page_size, workdir):
    """One import into a new database; its figures."""
    target = Path(workdir) / f"target-c{concurrency}.sqlite"
    options = Options(url=url, db_path=str(target), api_key=key, login=seeding.ADMIN_EMAIL,
                      concurrency=concurrency, page_size=page_size,
                      admin_password="bench-target-password")
    client = Client(url, key, concurrency=concurrency)
    out, err = io.StringIO(), io.StringIO()
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    status = run_import(options, out, err, client=client)
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    if status != 0:
        raise RuntimeError(f"the import failed ({status}):\n{err.getvalue()}{out.getvalue()}")
    counts = counts_of(out.getvalue())
    return {"concurrency": concurrency, "page_size": page_size, "seconds": round(seconds, 2),
            "bugs_per_minute": round(counts.get("bugs", 0) / seconds * 60),
            "comments_per_minute": round(counts.get("comments", 0) / seconds * 60),
            "requests": client.requests, "retries": client.retried,
            "megabytes_read": round(client.bytes_read / 1e6, 1),
            "importer_cpu_seconds": round(
                (cpu_after.ru_utime + cpu_after.ru_stime)
                - (cpu_before.ru_utime + cpu_before.ru_stime), 2),
            "target_megabytes": round(target.stat().st_size / 1e6, 1),
            "counts": counts, "report": out.getvalue(), "target": str(target)}


def differences(url, key, target):
    """What `bugsvc import --verify` finds between the source and `target`."""
    options = Options(url=url, db_path=target, api_key=key, login=seeding.ADMIN_EMAIL)
    started = time.perf_counter()
    found = verify.verify(Source(Client(url, key, concurrency=4)), options)
    return {"differences": len(found), "first": [str(d) for d in found[:20]],
            "seconds": round(time.perf_counter() - started, 2)}


def write_results(results, args):
    RESULTS_DIR.mkdir(exist_ok=True)
    stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-import-bugs{args.bugs}"
    (RESULTS_DIR / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = [f"# bugsvc import: {args.bugs:,} bugs from a local bugsvc",
             "",
             f"Source: `python bugsvc.py --workers {args.workers}` on loopback, serving "
             f"bench/data/bugs-{args.bugs}.sqlite (bench.seed, seed 1); the importer in one "
             "process on the same machine "
             f"({results['machine']['cores']} cores, Python {results['machine']['python']}); "
             f"load average before: {results['machine']['load_before']}.",
             "",
             "| concurrency | seconds | bugs/min | comments/min | requests | MB read "
             "| importer CPU s | target MB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in results["runs"]:
        lines.append(f"| {run['concurrency']} | {run['seconds']} | {run['bugs_per_minute']:,} "
                     f"| {run['comments_per_minute']:,} | {run['requests']:,} "
                     f"| {run['megabytes_read']} | {run['importer_cpu_seconds']} "
                     f"| {run['target_megabytes']} |")
    first = results["runs"][0]["counts"]
    carried = ", ".join(f"{first[kind]:,} {kind}" for kind in KINDS if kind in first)
    lines += ["", f"Each run carried: {carried}.",
              "", f"`--verify` of the last target: {results['verify']['differences']} "
              f"differences ({results['verify']['seconds']} s)."]
    (RESULTS_DIR / f"{stem}.md").write_text("\n".join(lines) + "\n")
    return RESULTS_DIR / f"{stem}.md"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.import_bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--bugs", type=int, default=2000, help="bugs in the source (default 2000)")
    parser.add_argument("--concurrency", default="1,4,8",
                        help="requests open at once, one run each (default 1,4,8)")
    parser.add_argument("--page-size", type=int, default=100, help="bugs per page (default 100)")
    parser.add_argument("--workers", type=int, default=2,
                        help="the source's server processes (default 2)")
    args = parser.parse_args(argv)
    source_db = seeding.default_db_path(args.bugs)
    if not source_db.exists():
        print(f"Seeding {source_db} ...", file=sys.stderr)
        seeding.seed(source_db, args.bugs)
    key = api_key(source_db)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    log = Path(tempfile.gettempdir()) / "bugsvc-import-bench-source.log"
    server = Server([sys.executable, str(ROOT / "bugsvc.py"), "--db", str(source_db), "--port",
                     "0", "--workers", str(args.workers), "--pin-cores", "no"], log, "source")
    runs, checked = [], None
    try:
        with tempfile.TemporaryDirectory(prefix="bugsvc-import-bench-") as workdir:
            for concurrency in (int(c) for c in args.concurrency.split(",")):
                run = measure(server.url, key, concurrency, args.page_size, workdir)
                print(f"concurrency {concurrency}: {run['bugs_per_minute']:,} bugs/min "
                      f"({run['seconds']} s, {run['requests']} requests)", file=sys.stderr)
                runs.append(run)
            checked = differences(server.url, key, runs[-1]["target"])
            print(f"verify: {checked['differences']} differences ({checked['seconds']} s)",
                  file=sys.stderr)
    finally:
        server.stop()
    results = {"bugs": args.bugs, "workers": args.workers,
               "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0],
                           "load_before": None if load_before is None
                           else round(load_before, 2)},
               "runs": runs, "verify": checked}
    print(f"Results: {write_results(results, args)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
