"""CPU time one request costs the service, in this process: the load runs'
requests (bench/scenarios.py, an API key on each as bench.paired sends
them) served through falcon's test client, without HTTP or a load
generator, so the figure holds on a busy host where rates do not.

    python -m bench.cpu --db FILE [--requests 500] [--scenarios search_anew,bug_get_key]
                        [--rounds 5] [--anonymous-reads] [--objects-anew] [--profile]
                        [--copy]

FILE is an SQLite database seeded by bench.seed. Making the workload
stores the writers' API keys in it: with --copy the run works on a copy in
a temporary folder and FILE is only read (a benchmark's data stays as it
was). Each scenario is warmed up, then timed over --requests requests
(process CPU time), --rounds times: the lowest round is the figure (other
work on the host only adds to a round), the median follows. --objects-anew
makes every bug object anew, as the first time a process shows a bug (none
taken from those it keeps: bugsvc/bugs/object_cache.py). --profile runs
them again under cProfile and prints the functions with the most time,
inclusive and own.
"""

import argparse
import cProfile
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from . import scenarios


WARM_UP = 100


class Service:
    """bugsvc on the database at `path`, called in this process."""

    def __init__(self, path, seed):
        from falcon import testing

        from bugsvc.app import create_app
        from bugsvc.config import Config
        from bugsvc.store.location import open_database
        open_database(str(path)).initialize()       # migrated as a server would
        self.workload = scenarios.Workload.from_db(str(path), random.Random(seed))
        self.client = testing.TestClient(create_app(Config(database=str(path))))
        self.seed = seed

    def requests(self, name, count, keyed=True):
        """`count` request tuples of scenario `name`, each with an API key
        when `keyed` (reads without one otherwise, as bench.scale sends them)."""
        made = scenarios.requests_for(name, self.workload, self.seed, count=count)
        return scenarios.keyed(made, self.workload.keys, self.seed) if keyed else made

    def call(self, request):
        """The answer's body bytes (scenarios.simulate)."""
        return scenarios.simulate(self.client, request)


def cpu_ms(service, requests):
    """CPU ms per request over `requests`."""
    started = time.process_time()
    for request in requests:
        service.call(request)
    return (time.process_time() - started) * 1000 / len(requests)


def profile(service, requests, top=25):
    """Print the functions with the most time over `requests`."""
    profiler = cProfile.Profile()
    profiler.enable()
    for request in requests:
        service.call(request)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.cpu",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="an SQLite database seeded by bench.seed")
    parser.add_argument("--copy", action="store_true",
                        help="work on a copy of it (the workload's API keys are written)")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--scenarios", default="search_anew,search,bug_get_key")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--anonymous-reads", action="store_true",
                        help="reads without an API key (default: every request has one)")
    parser.add_argument("--objects-anew", action="store_true",
                        help="keep no bug objects (each made anew, as the first time)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    unknown = [name for name in chosen
               if name not in scenarios.BY_NAME or scenarios.BY_NAME[name].make is None]
    if unknown:
        print(f"bench.cpu: no such scenario: {', '.join(unknown)}", file=sys.stderr)
        return 1
    folder = None
    path = Path(args.db)
    if args.copy:
        folder = Path(tempfile.mkdtemp(prefix="bench-cpu-"))
        shutil.copyfile(path, folder / path.name)
        path = folder / path.name
    if args.objects_anew:
        from bugsvc.bugs import object_cache
        object_cache.applies = lambda *arguments: False
    try:
        service = Service(path, args.seed)
        print("| scenario | CPU ms per request, lowest round | median |\n|---|---:|---:|")
        for name in chosen:
            requests = service.requests(name, WARM_UP + args.requests,
                                        keyed=not args.anonymous_reads)
            for request in requests[:WARM_UP]:
                service.call(request)
            rounds = sorted(cpu_ms(service, requests[WARM_UP:]) for _ in range(args.rounds))
            print(f"| {name} | {rounds[0]:.3f} | {statistics.median(rounds):.3f} |", flush=True)
            if args.profile:
                profile(service, requests[WARM_UP:])
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
