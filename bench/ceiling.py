"""The ceiling: a minimal falcon app answering a constant JSON body, served
by stock waitress with bugsvc's number of threads, one or N processes on
one shared socket, and pinned as bugsvc is. It is the minimal falcon +
waitress app the speed targets are set against: the load run reports
every scenario as a share of it.

bugsvc does not serve through stock waitress's request handling but
through its own (bugsvc/serving/: requests shared fairly between client
addresses, an answer and its head sent in one piece, the head made for
less), which serves the same constant app faster. `--serving bugsvc` serves
the ceiling's app that way, so a paired run can show how much of a share
is that layer's (bench.paired's serving row).

    python -m bench.ceiling --port 8001 [--workers 2] [--serving bugsvc]
"""

import argparse
import signal
import sys

import falcon

from bugsvc.config import DEFAULT_THREADS
from bugsvc.serving import workers


BODY = b'{"version":"5.2"}'


def constant(req, resp, **_):
    """Every path answers 200 with BODY."""
    resp.data = BODY
    resp.content_type = falcon.MEDIA_JSON


def create_app():
    app = falcon.App()
    app.add_sink(constant, prefix="/")
    return app


def create_server(threads=DEFAULT_THREADS, **where):
    """waitress's server of the constant app, with the one adjustment bugsvc
    makes to waitress's defaults that changes a request's work: forwarded
    headers left to the app (serving/connections.py)."""
    import waitress
    return waitress.create_server(create_app(), threads=threads, ident="ceiling",
                                  clear_untrusted_proxy_headers=False, **where)


def create_bugsvc_server(threads, sock):
    """The constant app behind bugsvc's own serving layer
    (serving/connections.py, with bugsvc's default limits), on the listening
    socket `sock`."""
    from bugsvc.serving import connections
    return connections.create_server(create_app(), sock, connections.ConnectionRules(), {},
                                     threads=threads, ident="ceiling")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.ceiling",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--serving", choices=("waitress", "bugsvc"), default="waitress",
                        help="serve through stock waitress (the ceiling) or through bugsvc's "
                             "own serving layer (one process)")
    args = parser.parse_args(argv)
    if args.serving == "bugsvc":
        if args.workers > 1:
            parser.error("--serving bugsvc serves with one process")
        sock = workers.listening_socket(args.host, args.port)
        workers.pin_to_core(workers.core_offset())
        server = create_bugsvc_server(args.threads, sock)
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        print(f"ceiling serving http://{args.host}:{sock.getsockname()[1]}/", flush=True)
        workers.run_until_stopped(server)
        return 0
    if args.workers > 1 and workers.fork_available():
        sock = workers.listening_socket(args.host, args.port)
        print(f"ceiling serving http://{args.host}:{sock.getsockname()[1]}/", flush=True)
        return workers.serve_forked(lambda shared: create_server(args.threads, sockets=[shared]),
                                    sock, args.workers)
    workers.pin_to_core(workers.core_offset())        # before waitress starts its threads
    server = create_server(args.threads, host=args.host, port=args.port)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    print(f"ceiling serving http://{args.host}:{server.effective_port}/", flush=True)
    workers.run_until_stopped(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
