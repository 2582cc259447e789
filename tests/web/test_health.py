"""Health checks (bugsvc/web/health.py): `/__lbheartbeat__` answers while
the process does; `/__heartbeat__` checks the database, the schema version,
the delivery threads and the outbox, open to anyone, answering only the
names of its checks and one word each."""

from datetime import datetime, timedelta, timezone

import pytest
from falcon import testing

from bug_support import set_param
from bugsvc.app import create_app
from bugsvc.compose import unit_of_work
from bugsvc.notify.worker import Deliverer
from bugsvc.store import outbox
from bugsvc.store.location import open_database
from bugsvc.store.schema import SCHEMA_VERSION


NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
WORDS = {"ok", "error", "failed", "unknown", "stopped", "stuck"}


def heartbeat(app):
    response = testing.TestClient(app).simulate_get("/__heartbeat__")
    return response.status_code, response.json


def only_words(body):
    return {body["status"]} | set(body["checks"].values()) <= WORDS | {
        f"schema version {SCHEMA_VERSION - 1}, expected {SCHEMA_VERSION}"}


def test_load_balancer_heartbeat_answers_anyone(client, services):
    set_param(services, "requirelogin", "1")
    response = client.simulate_get("/__lbheartbeat__")
    assert response.status_code == 200 and response.json == {}


def test_heartbeat_of_a_healthy_process(config, db, services):
    set_param(services, "requirelogin", "1")          # open to load balancers all the same
    status, body = heartbeat(create_app(config, db=db, clock=lambda: NOW))
    assert status == 200
    assert body == {"status": "ok", "checks": {"database": "ok", "migrations": "ok",
                                               "delivery": "ok", "outbox": "ok"}}


def test_delivery_threads_that_do_not_run(config, db):
    deliverer = Deliverer(unit_of_work(db, config))
    app = create_app(config, db=db, deliverer=deliverer, clock=lambda: NOW)
    status, body = heartbeat(app)
    assert status == 500 and body["checks"]["delivery"] == "stopped"
    running = deliverer.start(1)
    try:
        assert heartbeat(app) == (200, {"status": "ok", "checks": {
            "database": "ok", "migrations": "ok", "delivery": "ok", "outbox": "ok"}})
    finally:
        running.stop()
    assert heartbeat(app)[1]["checks"]["delivery"] == "stopped"


def test_a_stuck_outbox(config, db):
    with db.transaction(write=True) as conn:
        outbox.add_message(conn, outbox.MAIL, "test", NOW - timedelta(minutes=20),
                           address="someone@example.com")
    status, body = heartbeat(create_app(config, db=db, clock=lambda: NOW))
    assert status == 500 and body["checks"]["outbox"] == "stuck" and only_words(body)
    status, body = heartbeat(create_app(config, db=db,
                                        clock=lambda: NOW - timedelta(minutes=10)))
    assert status == 200 and body["checks"]["outbox"] == "ok"


def test_a_schema_behind_the_code(config, db):
    with db.transaction(write=True) as conn:
        conn.dialect.set_schema_version(conn, SCHEMA_VERSION - 1)
    try:
        status, body = heartbeat(create_app(config, db=db, clock=lambda: NOW))
        assert status == 500 and body["checks"]["migrations"].startswith("schema version")
        assert only_words(body)
    finally:
        with db.transaction(write=True) as conn:
            conn.dialect.set_schema_version(conn, SCHEMA_VERSION)


@pytest.mark.engine("sqlite")
def test_a_database_that_does_not_answer_tells_no_secret(config, tmp_path):
    missing = open_database(str(tmp_path / "no such folder" / "bugsvc.sqlite"))
    status, body = heartbeat(create_app(config, db=missing, clock=lambda: NOW))
    assert status == 500 and body["checks"]["database"] == "failed" and only_words(body)
    assert "sqlite" not in str(body) and "folder" not in str(body)


@pytest.mark.slow
def test_a_real_server_delivering(start, tmp_path):
    server = start(tmp_path / "health.sqlite")
    status, body, _ = server.call("GET", "/__heartbeat__")
    assert status == 200 and body["checks"]["delivery"] == "ok"
    assert server.call("GET", "/__lbheartbeat__")[:2] == (200, {})
