"""What one request costs on PostgreSQL: the statements it sends (each one
round trip, BEGIN and COMMIT included) and the CPU time it takes, in this
process and in the PostgreSQL server, per scenario.

    python -m bench.statements --folder DIR [--requests 300]
                               [--scenarios bug_get,bug_get_key,search,comment_add]

DIR holds a cluster made by `python -m bench.postgres start --folder DIR`
(its server must run; it is the bench's own, so its settings may be
changed: the statement log is turned on, with ALTER SYSTEM, for a few
requests of each scenario, then reset). The requests are the load runs'
(bench/scenarios.py), served in this process through falcon's test client
(no HTTP, no other load generator): statements are counted in the server's
log, CPU time is this process's and that of the server's processes (the
postmaster and its children) over `--requests` requests without the log.
Prints one line per scenario.
"""

import argparse
import random
import sys
import time

from . import postgres, scenarios


COUNTED = 20                   # requests whose statements are counted
WARM_UP = 30                   # requests before: caches filled, statements prepared
LOGGED = ("LOG:  execute ", "LOG:  statement: ")


def logged_statements(cluster):
    """How many statements the server's log holds."""
    log = cluster.folder / "server.log"
    with open(log, errors="replace") as text:
        return sum(1 for line in text if any(mark in line for mark in LOGGED))


class Service:
    """bugsvc on the cluster's database, called in this process."""

    def __init__(self, url, rng):
        from falcon import testing

        from bugsvc.app import create_app
        from bugsvc.config import Config
        self.workload = scenarios.Workload.from_db(url, rng)
        self.client = testing.TestClient(create_app(Config(database=url)))
        self.rng = rng

    def call(self, scenario):
        scenarios.simulate(self.client, scenario.make(self.workload, self.rng))


def measure(cluster, service, scenario, requests):
    """{"statements": per request, "cpu_ms": ours, "server_cpu_ms": the server's}."""
    import psycopg
    for _ in range(WARM_UP):
        service.call(scenario)
    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET log_statement = 'all'")
        admin.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
        for _ in range(WARM_UP):        # each server process takes the setting at its next
            service.call(scenario)      # statement: so each has run one since
        before = logged_statements(cluster)
        for _ in range(COUNTED):
            service.call(scenario)
        time.sleep(0.5)
        counted = logged_statements(cluster) - before
        admin.execute("ALTER SYSTEM RESET log_statement")
        admin.execute("SELECT pg_reload_conf()")
    time.sleep(0.3)
    database = postgres.LocalServer(cluster.pid())
    server, ours = database.cpu_seconds(), time.process_time()
    for _ in range(requests):
        service.call(scenario)
    return {"statements": counted / COUNTED,
            "cpu_ms": (time.process_time() - ours) * 1000 / requests,
            "server_cpu_ms": (database.cpu_seconds() - server) * 1000 / requests}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.statements",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--folder", required=True, help="the cluster's folder (bench.postgres)")
    parser.add_argument("--requests", type=int, default=300,
                        help="requests per scenario for the CPU time (default 300)")
    parser.add_argument("--scenarios", default="bug_get,bug_get_key,search,comment_add")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    known = {scenario.name: scenario for scenario in scenarios.SCENARIOS}
    chosen = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in known or known[name].make is None]
    if unknown:
        print(f"bench.statements: no such scenario: {', '.join(unknown)}", file=sys.stderr)
        return 1
    cluster = postgres.Cluster(args.folder)
    if cluster.port is None or not cluster.running():
        print(f"bench.statements: no cluster runs in {args.folder}", file=sys.stderr)
        return 1
    service = Service(cluster.url(), random.Random(args.seed))
    print("| scenario | statements per request | CPU ms per request (bugsvc) "
          "| CPU ms per request (PostgreSQL) |\n|---|---:|---:|---:|")
    for name in chosen:
        found = measure(cluster, service, known[name], args.requests)
        print(f"| {name} | {found['statements']:.1f} | {found['cpu_ms']:.2f} "
              f"| {found['server_cpu_ms']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
