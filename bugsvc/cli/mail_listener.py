"""`bugsvc mail-in --listen HOST:PORT`: the same as `bugsvc mail-in`, but
an SMTP (or, with --lmtp, LMTP) server that an MTA delivers replies to
instead of piping them. Each message is taken as one on standard input would
be; what the pipe's exit status says is said as the SMTP answer to the
message's DATA: 250 taken (or left alone), 550 refused with the reason
(the sending MTA returns it to the sender once). Runs until SIGTERM or
SIGINT. Needs aiosmtpd (the optional extra `mailin`)."""

import io
import signal
import sys
import threading

from ..compose import unit_of_work
from ..serving import startup
from ..serving.server import prepare_database
from .mail_in import TAKEN, take


class _Handler:
    """aiosmtpd's handler: each DATA is one message taken."""

    def __init__(self, units, limit, out):
        self.units = units
        self.limit = limit
        self.out = out
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        if len(envelope.content) > self.limit:
            return f"552 5.3.4 The message is larger than {self.limit} bytes."
        reasons = io.StringIO()
        with self.lock:              # one message at a time, as a pipe gives them
            status = take(self.units, envelope.content, envelope.rcpt_tos, self.out, reasons)
        if status == TAKEN:
            return "250 2.0.0 Taken"
        reason = " ".join(reasons.getvalue().split())[:400] or "refused"
        return f"550 5.7.1 {reason}"


def listen(config, address, lmtp=False, out=sys.stdout, err=sys.stderr):
    """Serve SMTP (or LMTP) on `address` ("host:port") until SIGTERM or
    SIGINT. Returns the exit status (0; 2 when aiosmtpd is missing or the
    address is not host:port). Errors: StartError when there is no database."""
    try:
        from aiosmtpd.controller import Controller
        from aiosmtpd.lmtp import LMTP
    except ImportError:
        print("bugsvc: mail-in --listen needs aiosmtpd (pip install 'bugsvc[mailin]').",
              file=err)
        return 2
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        print(f"bugsvc: '{address}' is not HOST:PORT.", file=err)
        return 2
    stopping = threading.Event()
    previous = {sig: signal.signal(sig, lambda signum, frame: stopping.set())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        startup.check_database(config.database, must_exist=True)
        db = prepare_database(config, err)
        handler = _Handler(unit_of_work(db, config), config.max_body_bytes, out)

        class _Controller(Controller):
            def factory(self):
                return LMTP(self.handler) if lmtp else super().factory()
        controller = _Controller(handler, hostname=host.strip("[]"), port=int(port),
                                 data_size_limit=config.max_body_bytes)
        controller.start()
        try:
            print(f"bugsvc taking replies to bug mail over {'LMTP' if lmtp else 'SMTP'} on "
                  f"{address} (Ctrl-C stops)", file=out, flush=True)
            while not stopping.wait(1):
                pass
        finally:
            controller.stop()
            db.close()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
