"""Schema-driven fuzzing: schemathesis generates requests from the
OpenAPI description (valid ones and invalid ones) and sends them to a real
waitress server on a free loopback port, as an anonymous caller, a plain
user and an administrator. No answer may be a 5xx, and every answer must
match the description: a documented status, content type and body schema.
An unexpected exception in the server (logged, and answered -32000 with HTTP
400 by design) fails the test as a 5xx would.

The server holds a little data first (a bug with a comment, a keyword, a
flag type ...), and path parameters are often drawn from it, so answers on
the success path are checked too, not only errors.

The budget is bounded by count, not time: a few examples per operation,
derandomized so that every run sends the same requests to every operation,
whatever the machine's speed. Two environment variables make a deeper run by
hand (see below), the second an overall time limit after which the remaining
operations are skipped; CI uses the defaults."""

import logging
import os
import shutil
import socket
import threading
import time

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings, strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from waitress.server import create_server

from bugsvc.api.operations import OPERATIONS
from bugsvc.app import create_app
from bugsvc.catalogue.install import SYSTEM_GROUPS
from bugsvc.config import Config
from bugsvc.store.location import open_database
from bugsvc.web.rest.openapi import describe
from bugsvc.web.rest.routes import ROUTES
from conftest import ADMIN_EMAIL, ADMIN_PASSWORD, FAST_COST, Services


pytestmark = pytest.mark.slow

# A deeper run by hand, with new random inputs each time:
# BUGSVC_FUZZ_EXAMPLES=500 BUGSVC_FUZZ_SECONDS=3600 python -m pytest tests/e2e/test_fuzz.py
DEEP_RUN = "BUGSVC_FUZZ_EXAMPLES" in os.environ
EXAMPLES_PER_OPERATION = int(os.environ.get("BUGSVC_FUZZ_EXAMPLES", "8"))
TIME_BUDGET_SECONDS = float(os.environ.get("BUGSVC_FUZZ_SECONDS", "inf"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
CALLERS = ("anonymous", "user", "admin")
PLAIN_USER = "fuzz-user@example.com"
FUZZ_ADMIN = "fuzz-admin@example.com"
TARGET_USER = "fuzz-target@example.com"     # the account {user} paths name: changes hurt nobody

schema = schemathesis.openapi.from_dict(describe(ROUTES, OPERATIONS))
schema.config.generation.update(with_security_parameters=False)
OPERATIONS = {result.ok().label: result.ok() for result in schema.get_all_operations()}
_ROUTED = {(route.method, route.template) for route in ROUTES}
_run = {"started": None, "ran": set(), "success": set()}


class ErrorLog(logging.Handler):
    """Collects what the server logs as errors: every unexpected exception
    (answered as code -32000, HTTP 400, so no 5xx would show it)."""

    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def take(self):
        taken, self.records = self.records, []
        return taken


class LiveServer:
    """The app under waitress on 127.0.0.1, on a port the OS picks."""

    def __init__(self, config):
        self.db = open_database(config.database)
        self.server = create_server(create_app(config, db=self.db), host="127.0.0.1", port=0,
                                    threads=4)
        self.url = f"http://127.0.0.1:{self.server.effective_port}"
        self.errors = ErrorLog()
        logging.getLogger("bugsvc").addHandler(self.errors)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        socket.create_connection(("127.0.0.1", self.server.effective_port), timeout=5).close()

    def stop(self):
        logging.getLogger("bugsvc").removeHandler(self.errors)
        self.server.close()
        self.thread.join(timeout=5)
        self.db.close()


def _seed(url, keys):
    """Data for the fuzzer to find: what the route table lets us create.
    Returns {placeholder: [values]} for path parameters."""
    def call(method, template, body, who="admin"):
        if (method, template) not in _ROUTED:
            return None
        resp = requests.request(method, f"{url}/rest{template}", json=body, timeout=10,
                                headers={"X-BUGZILLA-API-KEY": keys[who]})
        assert resp.status_code in (200, 201), (template, resp.text)
        return resp.json()

    call("POST", "/keyword", {"name": "fuzzword", "description": "a keyword"})
    call("POST", "/flag_type", {"name": "fuzzflag", "description": "a flag type"})
    call("POST", "/field/bug", {"name": "cf_fuzz", "display_name": "Fuzz", "type": 2,
                                "values": ["one", "two"]})
    call("POST", "/component", {"product": "TestProduct", "name": "FuzzComponent",
                                "description": "a component", "default_assignee": FUZZ_ADMIN})
    bug = call("POST", "/bug", {"product": "TestProduct", "component": "TestComponent",
                                "version": "unspecified", "summary": "fuzz bug", "op_sys": "All",
                                "platform": "All", "description": "first words",
                                "keywords": ["fuzzword"], "alias": ["fuzzbug"]}, who="user")
    bug_id = str(bug["id"]) if bug else "1"
    call("POST", "/bug/{bug}/comment".replace("{bug}", bug_id), {"comment": "more words"},
         who="user")
    call("POST", "/bug/{bug}/attachment".replace("{bug}", bug_id),
         {"data": "aGVsbG8=", "file_name": "a.txt", "summary": "a file",
          "content_type": "text/plain"}, who="user")
    return {
        "bug": [bug_id, "fuzzbug"], "comment_id": ["1", "2"], "attachment_id": ["1"],
        "product": ["TestProduct", "1"], "product_id": ["1"],
        "component": ["TestComponent", "FuzzComponent", "1", "2"],
        "group": ["1", "editbugs"], "flag_type": ["1", "fuzzflag"],
        "field": ["bug_status", "cf_fuzz", "keywords", "component"],
        "version": ["1"], "milestone": ["1"], "keyword": ["1", "fuzzword"],
        "classification": ["1", "Unclassified"], "user": [TARGET_USER],
        "key": [keys["target_key_id"]], "query": ["fuz"],
    }


@pytest.fixture(scope="module")
def live(template_db, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "bugsvc.sqlite"
    shutil.copyfile(template_db, path)
    config = Config(database=str(path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                    password_cost=FAST_COST)
    db = open_database(config.database)
    services = Services(db, config)
    every_group = [name for name, _, _ in SYSTEM_GROUPS]
    services.add_user(FUZZ_ADMIN, groups=every_group, bless=every_group)
    services.add_user(PLAIN_USER)
    services.add_user(TARGET_USER)
    keys = {"anonymous": None, "user": services.api_key(PLAIN_USER),
            "admin": services.api_key(FUZZ_ADMIN)}
    services.api_key(TARGET_USER)
    keys["target_key_id"] = str(services.query("SELECT MAX(id) FROM api_keys")[0][0])
    db.close()
    server = LiveServer(config)
    known = _seed(server.url, keys)
    yield server, keys, known
    server.stop()


def _path_values(operation, known):
    """Path parameters drawn from the seeded data (None: all generated)."""
    names = [p.name for p in operation.path_parameters]
    if not names or not all(name in known for name in names):
        return st.none()
    return st.one_of(st.none(), st.fixed_dictionaries(
        {name: st.sampled_from(known[name]) for name in names}))


@pytest.mark.parametrize("label", list(OPERATIONS))
def test_no_server_error_and_answers_match_the_description(live, label):
    server, keys, known = live
    _run["started"] = _run["started"] or time.monotonic()
    if time.monotonic() - _run["started"] > TIME_BUDGET_SECONDS:
        pytest.skip("fuzzing time budget used up")
    operation = OPERATIONS[label]
    _run["ran"].add(label)
    strategies = {}

    @st.composite
    def cases(draw):
        path_values = draw(_path_values(operation, known))
        mode = draw(st.sampled_from([GenerationMode.POSITIVE, GenerationMode.NEGATIVE]))
        key = (mode, tuple(sorted((path_values or {}).items())))
        if key not in strategies:
            strategies[key] = operation.as_strategy(mode, path_parameters=path_values)
        return draw(strategies[key])

    @given(case=cases(), caller=st.sampled_from(CALLERS))
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=not DEEP_RUN,
              database=None, suppress_health_check=list(HealthCheck))
    def call(case, caller):
        headers = {"X-BUGZILLA-API-KEY": keys[caller]} if keys[caller] else {}
        response = case.call_and_validate(base_url=server.url + "/rest", headers=headers,
                                          checks=CHECKS)
        crashes = server.errors.take()
        assert not crashes, "the server failed unexpectedly:\n" + "\n".join(
            logging.Formatter().format(record) for record in crashes)
        if response.status_code < 300:
            _run["success"].add(label)

    call()


def test_fuzzing_reached_the_success_path_of_many_operations(live):
    # Guards against a fuzzer that only ever meets errors (say, keys that stopped working).
    # It asks for the module's server so that it runs after the fuzzing, in
    # the same process (one pytest-xdist worker runs the module's tests).
    if len(_run["ran"]) < 10:
        pytest.skip("too few operations were fuzzed to judge")
    reached = len(_run["success"]) / len(_run["ran"])
    assert reached >= 0.4, sorted(_run["ran"] - _run["success"])
