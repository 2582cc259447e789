"""The seconds-long smoke run of the benchmark that CI executes: a tiny
seeded database, one scenario, the ceiling, the real server as a separate
process and a real load generator (wrk when installed, else the fallback
Python driver, which runs as its own process too)."""

import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from bench import run as bench_run, scenarios, seed as seeding


ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="the load run needs a POSIX host")]


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("smoke") / "tiny.sqlite"
    seeding.seed(path, 300, jobs=1, out=_Null())
    return path


def run_bench(tmp_path, db, *options):
    """(results, table, what it printed) of a one-second bench.run."""
    command = [sys.executable, "-m", "bench.run", "--db", str(db), "--duration", "1",
               "--warmup", "0", "--concurrency", "2", "--out", str(tmp_path / "results"),
               "--name", "smoke", "--log-dir", str(tmp_path / "logs"), *options]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "results" / "smoke.json").read_text())
    table = (tmp_path / "results" / "smoke.md").read_text()
    return results, table, done.stdout


def run_in_scratch(tmp_path, command, timeout):
    """(the finished `command`, the scratch folder it had as its TMPDIR): run
    from the project, so that what it leaves in the temporary folder shows."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "TMPDIR": str(scratch)})
    return done, scratch


def test_smoke_run_measures_a_scenario_against_the_ceiling(tmp_path, tiny_db):
    results, table, _ = run_bench(tmp_path, tiny_db, "--scenarios", "bug_get")
    assert results["driver"] == ("wrk" if shutil.which("wrk") else "python")
    figures = results["scenarios"]["bug_get"]["2"]
    ceiling = results["ceiling"]["2"]
    assert figures["requests"] > 0 and figures["rps"] > 0 and figures["errors"] == 0
    assert ceiling["requests"] > 0 and ceiling["errors"] == 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert results["bugs"] == 300 and results["startup_s"] > 0
    if sys.platform.startswith("linux"):
        assert results["peak_memory_mb"]["per_worker_max"] > 10
    assert "| bug_get | GET /rest/bug/{id} (random ids) | 2 |" in table
    assert "| ceiling |" in table and "| target |" in table
    # The service really served them: its access log has the requests.
    log = (tmp_path / "logs" / "service.log").read_text()
    assert log.count('"GET /rest/bug/') >= figures["requests"]


def test_fallback_driver_and_write_scenario(tmp_path, tiny_db):
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    results, _, _ = run_bench(tmp_path, copy, "--driver", "python", "--no-ceiling",
                              "--scenarios", "comment_add")
    figures = results["scenarios"]["comment_add"]["2"]
    assert results["driver"] == "python" and results["ceiling"] == {}
    assert figures["requests"] > 0 and figures["errors"] == 0
    conn = sqlite3.connect(str(copy))
    try:
        added = conn.execute("SELECT COUNT(*) FROM comments c JOIN api_keys k"
                             " ON k.user_id = c.author_id WHERE k.description = 'bench.run'"
                             " AND c.created_at >= k.created_at").fetchone()[0]
    finally:
        conn.close()
    # Every request the driver counted (plus the probe's) stored one comment.
    assert added >= figures["requests"]


class _SlowFirstAnswer(http.server.BaseHTTPRequestHandler):
    """Answers every request at once but the very first, which it holds for
    HELD seconds (a cold first page render on a slow machine)."""

    HELD = 1.5
    protocol_version = "HTTP/1.1"
    first = threading.Lock()

    def do_GET(self):
        if self.first.acquire(blocking=False):
            # The answer is slower than the round, which is what is tested.
            threading.Event().wait(self.HELD)
        body = b'{"version": "5.2"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("driver", ["wrk", "python"])
def test_a_round_counts_the_request_it_started_however_slow(tmp_path, driver):
    if driver == "wrk" and not bench_run.wrk_available():
        pytest.skip("wrk is not installed")
    handler = type("Handler", (_SlowFirstAnswer,), {"first": threading.Lock()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    request_file = tmp_path / "requests.txt"
    request_file.write_text("GET\t/rest/version\t\t\n")
    try:
        figures = bench_run.drive(driver, f"http://127.0.0.1:{server.server_port}",
                                  request_file, 1, 0.5)
    finally:
        server.shutdown()
        server.server_close()
    # The one connection's first answer came after the round's 0.5 s: the
    # round waited for it and counted it, over the time it really took.
    assert figures["requests"] == 1 and figures["errors"] == 0
    assert figures["raw"]["duration_us"] >= _SlowFirstAnswer.HELD * 1e6 * 0.95
    assert figures["raw"]["max_us"] >= _SlowFirstAnswer.HELD * 1e6 * 0.95


def test_paired_run_reports_every_ratio_with_its_rounds(tmp_path, tiny_db):
    command = [sys.executable, "-m", "bench.paired", "--db", str(tiny_db), "--rounds", "1",
               "--duration", "1", "--warmup", "0", "--pair-warmup", "0.5",
               "--out", str(tmp_path), "--name", "paired"]
    done, scratch = run_in_scratch(tmp_path, command, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(scratch.iterdir())      # its work folder and the servers' logs are gone
    results = json.loads((tmp_path / "paired.json").read_text())
    assert results["keyed"] is True          # an API key on every request, reads too
    assert set(results["shares"]) == {"bug_get", "search", "search_anew", "comment_add"}
    assert set(results["scaling"]) == {"bug_get", "search", "comments"}
    # Beside the targets, a keyed call that answers almost nothing: what any call costs.
    assert set(results["reference"]) == {"version"}
    # Beside them, the ceiling's app behind bugsvc's own serving layer.
    for figures in [*results["shares"].values(), *results["scaling"].values(),
                    *results["reference"].values(), results["serving"]]:
        (measured,) = figures["rounds"]
        assert measured["first_rps"] > 0 and measured["second_rps"] > 0
        assert measured["second_errors"] == 0
        assert figures["median"] == measured["ratio"] > 0
        assert figures["second_cpu_ms"] > 0 and figures["second_p99_ms"] >= figures["second_p50_ms"]
        assert figures["second_driver_cpu_ms"] > 0      # the load generator's share of the cores
    # Both servers of a scaling pair served the scenario before its rounds.
    for figures in results["scaling"].values():
        assert len(figures["warm_up_rps"]) == 2 and min(figures["warm_up_rps"]) > 0
    table = (tmp_path / "paired.md").read_text()
    assert "served it unmeasured for 0.5 s each" in table
    assert "| bug_get / ceiling |" in table and "| search: --workers 2 / 1 |" in table
    assert "| version / ceiling (reference) |" in table
    assert "| ceiling's app: bugsvc's serving layer / stock waitress (informational) |" in table
    assert "an API key on every request, reads too" in table


def test_a_failed_run_keeps_the_servers_logs_and_says_where(tmp_path):
    work, logs = tmp_path / "work", tmp_path / "logs"
    said = []
    for folder in (work, logs):
        folder.mkdir()
    with pytest.raises(RuntimeError):
        try:
            raise RuntimeError("the service did not start")
        finally:
            bench_run.remove_run_folders(work, logs, said.append)
    assert not work.exists() and logs.exists() and said == [f"The servers' logs are in {logs}"]
    bench_run.remove_run_folders(work, logs, said.append)
    assert not logs.exists() and len(said) == 1


def test_keyed_requests_carry_a_key_and_keep_the_writers_own():
    requests = [("GET", "/rest/bug/1", "", ""), ("POST", "/rest/bug/1/comment", "mine", "{}"),
                ("GET", "/index.cgi", "session:1-abc", "")]
    keyed = scenarios.keyed(requests, ["k1", "k2"], seed=1)
    assert keyed[0][2] in ("k1", "k2") and keyed[0][:2] == requests[0][:2]
    assert keyed[1:] == requests[1:]
    with pytest.raises(ValueError):
        scenarios.keyed(requests, [], seed=1)


def test_scale_run_measures_two_databases_in_turn(tmp_path, tiny_db):
    larger = tmp_path / "larger.sqlite"
    seeding.seed(larger, 600, jobs=1, out=_Null())
    command = [sys.executable, "-m", "bench.scale", "--small", str(tiny_db), "--large",
               str(larger), "--rounds", "1", "--duration", "1", "--warmup", "0",
               "--out", str(tmp_path), "--name", "scale"]
    done, scratch = run_in_scratch(tmp_path, command, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(scratch.iterdir())
    results = json.loads((tmp_path / "scale.json").read_text())
    assert (results["small"]["bugs"], results["large"]["bugs"]) == (300, 600)
    assert set(results["scenarios"]) == {"bug_get", "search", "comment_add"}
    for figures in results["scenarios"].values():
        (measured,) = figures["rounds"]
        assert measured["small_rps"] > 0 and measured["large_rps"] > 0
        assert measured["small_errors"] == measured["large_errors"] == 0
        assert figures["median"] == measured["ratio"] > 0
    assert results["small"]["peak_memory_mb"] > 0 and results["large"]["peak_memory_mb"] > 0
    assert "| bug_get |" in (tmp_path / "scale.md").read_text()


@pytest.mark.parametrize("field", ["quicksearch", "comment"])
def test_fulltext_run_times_quick_searches_with_and_without_the_index(tmp_path, tiny_db, field):
    """Quick search's words, or the comment box's: with the index and
    without it (the run checks that both find the same), the rare word
    found on the bugs the run commented it on."""
    copy = tmp_path / "copy.sqlite"
    shutil.copy(tiny_db, copy)
    command = [sys.executable, "-m", "bench.fulltext", "--db", str(copy), "--rounds", "1",
               "--shapes", "first 50,count", "--searches", "xylophonist,zeppelin,profiler",
               "--field", field, "--out", str(tmp_path), "--name", "fulltext"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(row[field], row["shape"]): row
            for row in json.loads((tmp_path / "fulltext.json").read_text())["rows"]}
    with sqlite3.connect(copy) as conn:         # the comments it added, on open bugs
        planted = conn.execute("SELECT COUNT(*), COUNT(DISTINCT bug_id) FROM comments"
                               " WHERE body LIKE '%xylophonist%'").fetchone()
    assert planted[0] == 20 and rows[("xylophonist", "count")]["found"] == planted[1] > 0
    assert rows[("zeppelin", "count")]["found"] == 0
    assert rows[("profiler", "first 50")]["found"] > 0
    assert all(row["indexed_cpu_ms"] > 0 and "scan_ms" in row for row in rows.values())


def test_pages_run_measures_the_pages_beside_rest(tmp_path, tiny_db):
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    command = [sys.executable, "-m", "bench.pages", "--db", str(copy), "--rounds", "1",
               "--duration", "1", "--warmup", "0", "--out", str(tmp_path), "--name", "pages"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "pages.json").read_text())
    for name in ("page_bug", "bug_get", "page_bug_1000", "comments_1000", "page_list_500",
                 "search_500", "page_home"):
        (measured,) = results["scenarios"][name]["rounds"]
        assert measured["requests"] > 0 and measured["errors"] == 0, name
    assert results["ratios"]["page_bug/bug_get"]["median"] > 0
    conn = sqlite3.connect(str(copy))
    try:
        comments = conn.execute("SELECT COUNT(*) FROM comments WHERE bug_id = ?",
                                (results["big_bug"],)).fetchone()[0]
    finally:
        conn.close()
    assert comments >= 1000
    assert "| page_bug/bug_get |" in (tmp_path / "pages.md").read_text()


def test_ab_run_measures_two_checkouts_in_turn(tmp_path, tiny_db):
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    command = [sys.executable, "-m", "bench.ab", "--other", str(ROOT), "--db", str(copy),
               "--rounds", "2", "--duration", "1", "--warmup", "0",
               "--scenarios", "bug_get,comment_add", "--out", str(tmp_path), "--name", "ab"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "ab.json").read_text())
    for name in ("bug_get", "comment_add"):
        figures = results["scenarios"][name]
        assert [r["first"] for r in figures["rounds"]] == ["a", "b"]
        for measured in figures["rounds"]:
            for side in ("a", "b"):
                assert measured[side]["requests"] > 0 and measured[side]["errors"] == 0, name
        assert figures["lowest"] <= figures["median"] <= figures["highest"]
    assert results["a"] == results["b"]           # the same checkout on both sides here
    assert "| comment_add |" in (tmp_path / "ab.md").read_text()


def postgresql_or_skip():
    """Skip without PostgreSQL's server programs or psycopg (CI, which
    installs them, fails instead)."""
    from bench import postgres
    try:
        postgres.server_programs()
        import psycopg  # noqa: F401
    except (postgres.Unavailable, ImportError) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"bench on PostgreSQL: {exc}")


def test_postgresql_run_serves_the_seeded_bugs_from_a_cluster_of_its_own(tmp_path, tiny_db):
    postgresql_or_skip()
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    results, table, printed = run_bench(tmp_path, copy, "--postgresql", "--no-ceiling",
                                        "--scenarios", "bug_get,quicksearch,comment_add")
    assert results["engine"] == "postgresql" and results["bugs"] == 300
    assert results["postgresql"]["fsync"] == "on"
    assert results["postgresql"]["server_version"]
    for name in ("bug_get", "quicksearch", "comment_add"):
        figures = results["scenarios"][name]["2"]
        assert figures["requests"] > 0 and figures["errors"] == 0, name
    # The PostgreSQL server runs here: its CPU time per request is measured too.
    assert sum(results["scenarios"][name]["2"]["db_cpu_ms_per_request"]
               for name in ("bug_get", "quicksearch", "comment_add")) > 0
    assert re.search(r"\| bug_get \|.*\| [\d.]+ \+ database [\d.]+ \|", table)
    assert "- database engine: PostgreSQL " in table
    # The cluster is gone: its server stopped and its folder removed.
    folder = re.search(r"a cluster of its own \((.+?)\)", printed).group(1)
    assert Path(folder).name.startswith("bench-pg-") and not Path(folder).exists()


def test_paired_run_on_postgresql_reports_its_ratios_beside_sqlite(tmp_path, tiny_db):
    """--postgresql: the same service on a cluster of its own holding a copy
    of the same database, against the ceiling, against SQLite's and with
    two processes against one; the cluster is gone afterwards."""
    postgresql_or_skip()
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    command = [sys.executable, "-m", "bench.paired", "--db", str(copy), "--rounds", "1",
               "--duration", "0.5", "--warmup", "0", "--pair-warmup", "0.3", "--postgresql",
               "--out", str(tmp_path), "--name", "paired"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "paired.json").read_text())
    pg = results["postgresql"]
    assert pg["settings"]["fsync"] == "on" and pg["settings"]["server_version"]
    assert set(pg["shares"]) == set(pg["engines"]) == set(results["shares"])
    assert set(pg["scaling"]) == set(results["scaling"])
    assert set(pg["reference"]) == {"version"}
    for figures in [*pg["shares"].values(), *pg["engines"].values(), *pg["scaling"].values(),
                    *pg["reference"].values()]:
        (measured,) = figures["rounds"]
        assert measured["first_rps"] > 0 and measured["second_rps"] > 0
        assert measured["second_errors"] == 0
        assert figures["median"] == measured["ratio"] > 0
    # Both servers of each pair with different pasts served its scenario first.
    for figures in [*pg["engines"].values(), *pg["scaling"].values()]:
        assert len(figures["warm_up_rps"]) == 2 and min(figures["warm_up_rps"]) > 0
    # The PostgreSQL server's own CPU beside the service's, when it is measured.
    assert pg["shares"]["bug_get"]["second_db_cpu_ms"] > 0
    assert pg["engines"]["comment_add"]["second_db_cpu_ms"] > 0
    table = (tmp_path / "paired.md").read_text()
    for row in ("| bug_get (PostgreSQL) / ceiling |", "| comment_add: PostgreSQL / SQLite |",
                "| search (PostgreSQL): --workers 2 / 1 |", "| bug_get / ceiling |",
                "| version (PostgreSQL) / ceiling (reference) |"):
        assert row in table, row
    folder = re.search(r"a cluster of its own \((.+?)\)", done.stdout).group(1)
    assert Path(folder).name.startswith("bench-paired-pg-") and not Path(folder).exists()


def test_engines_report_puts_runs_side_by_side(tmp_path, tiny_db):
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tiny_db, copy)
    runs = []
    for workers in ("1", "2"):
        run_bench(tmp_path, copy, "--no-ceiling", "--scenarios", "bug_get", "--workers", workers)
        runs.append(tmp_path / f"w{workers}.json")
        (tmp_path / "results" / "smoke.json").rename(runs[-1])
    side = tmp_path / "side"
    done = subprocess.run([sys.executable, "-m", "bench.engines", *map(str, runs),
                           "--out", str(side)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    table = side.with_suffix(".md").read_text()
    assert "| scenario | SQLite, 1 process | SQLite, 2 processes |" in table
    bug_get = next(line for line in table.splitlines() if line.startswith("| bug_get |"))
    assert bug_get.count("**") == 4
    stored = json.loads(side.with_suffix(".json").read_text())
    assert [run["label"] for run in stored["runs"]] == ["SQLite, 1 process",
                                                        "SQLite, 2 processes"]


def test_a_kept_cluster_with_events_left_unexpanded_is_refused(tmp_path, tiny_db):
    """A cluster kept in --pg-folder is used again as it is, unless earlier
    runs without a delivery worker left bug events unexpanded: the servers
    measured would spend their first seconds on them, so bench says so and
    measures nothing."""
    postgresql_or_skip()
    from bench import postgres
    # Not under tmp_path: the server runs as the postgres user, which may
    # not enter pytest's own folders.
    folder = tempfile.mkdtemp(prefix="bench-kept-pg-")
    cluster = postgres.Cluster(folder).start()
    try:
        url, seconds = postgres.load(cluster, tiny_db)
        assert seconds is not None                    # copied the first time
        assert postgres.load(cluster, tiny_db) == (url, None)
        import psycopg
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO outbox_events (bug_id, changer_id, created_at, data)"
                         " SELECT b.id, b.reporter, '2026-11-28 12:00:00', '{}'"
                         " FROM bugs b CROSS JOIN generate_series(1, 4) LIMIT %s",
                         (postgres.BACKLOG_LIMIT + 1,))
        command = [sys.executable, "-m", "bench.paired", "--db", str(tiny_db), "--rounds", "1",
                   "--duration", "0.5", "--warmup", "0", "--postgresql", "--pg-folder",
                   folder, "--out", str(tmp_path), "--name", "refused"]
        done, scratch = run_in_scratch(tmp_path, command, timeout=300)
        assert done.returncode != 0
        assert f"{postgres.BACKLOG_LIMIT + 1:,} bug events" in done.stdout + done.stderr
        # A failed run keeps its servers' logs, and says where.
        (logs,) = scratch.glob("bench-paired-logs-*")
        assert f"The servers' logs are in {logs}" in done.stdout
        assert not (tmp_path / "refused.json").exists()
    finally:
        cluster.stop(remove=True)
