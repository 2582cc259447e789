"""Health checks for load balancers and orchestrators, under the names
bugzilla.mozilla.org uses (Mozilla's Dockerflow): `/__lbheartbeat__` says
the process answers (no database work), `/__heartbeat__` says whether this
process can do its job: the database answers, its schema is the one this
code expects, this process's delivery threads run (when it delivers), and
the outbox is not stuck (no message due and no event unexpanded for longer
than STUCK_SECONDS). Both are open to anyone and cheap (a few indexed
queries), and answer nothing secret: names of checks and one word each.
200 when every check passes, 500 when one fails. They are answered by
middleware placed before everything that reads the database, so a broken
database is reported, not tripped over."""

import logging
from datetime import datetime, timezone

import falcon

from ..store import outbox
from ..store.schema import SCHEMA_VERSION
from .http import json_bytes


log = logging.getLogger("bugsvc")
STUCK_SECONDS = 15 * 60


class Heartbeat:
    """Falcon middleware answering GET (and HEAD) /__lbheartbeat__ (200 and
    {} while the process answers) and /__heartbeat__ (the checks of this
    process, see the module).

    db: the process's Database; deliverer: its Deliverer, or None where
    `bugsvc deliver` runs apart; clock: the current UTC time."""

    def __init__(self, db, deliverer=None, clock=None):
        self.db = db
        self.deliverer = deliverer
        self.clock = clock or (lambda: datetime.now(timezone.utc))

    def checks(self):
        """{check: "ok" or what is wrong}, and the outbox's backlog (or None
        when the database did not answer)."""
        found, backlog = {}, None
        try:
            with self.db.transaction() as conn:
                conn.execute("SELECT 1").fetchone()
                found["database"] = "ok"
                version = conn.dialect.schema_version(conn)
                found["migrations"] = "ok" if version == SCHEMA_VERSION else (
                    f"schema version {version}, expected {SCHEMA_VERSION}")
                backlog = outbox.backlog(conn, self.clock())
        except Exception:                 # noqa: BLE001 - a health check reports, never raises
            log.exception("heartbeat: the database check failed")
            found.setdefault("database", "failed")
            found.setdefault("migrations", "unknown")
        if self.deliverer is None:
            found["delivery"] = "ok"                # delivered by `bugsvc deliver` apart
        else:
            found["delivery"] = "ok" if self.deliverer.alive() else "stopped"
        if backlog is None:
            found["outbox"] = "unknown"
        elif max(backlog["oldest_due_seconds"],
                 backlog["oldest_unexpanded_seconds"]) > STUCK_SECONDS:
            found["outbox"] = "stuck"
        else:
            found["outbox"] = "ok"
        return found, backlog

    def process_request(self, req, resp):
        if req.path not in ("/__heartbeat__", "/__lbheartbeat__") or req.method not in (
                "GET", "HEAD"):
            return
        if req.path == "/__lbheartbeat__":
            _answer(resp, falcon.HTTP_200, {})
        else:
            found, _ = self.checks()
            healthy = all(value == "ok" for value in found.values())
            _answer(resp, falcon.HTTP_200 if healthy else falcon.HTTP_500,
                    {"status": "ok" if healthy else "error", "checks": found})
        resp.complete = True


def _answer(resp, status, body):
    resp.status = status
    resp.content_type = "application/json; charset=UTF-8"
    resp.data = json_bytes(body)
    resp.set_header("Cache-Control", "no-store")
