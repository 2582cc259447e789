"""Shared fixtures: every test gets its own database, copied from a template
built once per session from schema.sql and the default installation data.

The tests that use a database run once on each engine: an SQLite file, and a
database of a throwaway PostgreSQL cluster (tests/pg_cluster.py) started
for the session; a test marked `engine("sqlite")` (SQLite's files, its
backup API) or `engine("postgresql")` runs on that engine alone.
`--db-backend sqlite|postgresql|all` (or BUGSVC_TEST_DB_BACKEND) chooses;
the default is all. Without PostgreSQL's server programs the PostgreSQL runs
are left out and one test says so (it fails instead when the environment
variable CI is set). The summary at the
end counts the outcomes of each engine's runs.
"""

import collections
import copy
import dataclasses
import os
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import freezegun
import pytest
from falcon import testing

import pg_cluster
from accounts import ADMIN as ADMIN_EMAIL, ADMIN_PASSWORD
from bugsvc.accounts import auth
from bugsvc.accounts.auth import ScryptCost
from bugsvc.accounts.membership import refresh_for_user
from bugsvc.api.operations import OPERATIONS, PAGE_OPERATIONS
from bugsvc.api.runner import Runner
from bugsvc.app import create_app
from bugsvc.call.fields import FieldFilter
from bugsvc.compose import unit_of_work
from bugsvc.config import Config
from bugsvc.serving.server import prepare_database
from bugsvc.store.location import open_database


# The fixtures of these support modules (`start`: a real server; `smtp` and
# `receiver`: a real SMTP server and webhook receiver; `site` and `driver`: the
# browser tests' server and Chromium; `plain` and `people`: the accounts of the
# people menus; `callers_world`: bugs each kind of caller sees differently)
# serve every test module,
# which names them as parameters without importing them (an imported fixture
# would be shadowed by the parameter, which pyflakes reports as F811).
pytest_plugins = ["live_server", "notify_support", "browser_site", "page_support",
                  "bug_changes"]

# A frozen clock is the tests' "now", never the clock psycopg's pool keeps
# its own time by: a pool thread that failed to connect while a test's clock
# stood in 2026 would schedule its next try for a moment the real monotonic
# clock reaches in decades, and the pool would be one connection short for
# the rest of the session (seen as a PoolTimeout in a later test).
freezegun.configure(extend_ignore_list=["psycopg", "psycopg_pool"])

FAST_COST = ScryptCost(n=16, r=1, p=1)   # tests only: hashing must not dominate
_OPERATION_OF = {operation.service: operation for operations in (OPERATIONS, PAGE_OPERATIONS)
                 for operation in operations}
# Fixtures that start a real server: bugsvc's (start, site), an SMTP server
# and a webhook receiver (smtp, receiver), a directory (slapd), an OpenID
# provider (provider), or the serving network loop with its real deadlines
# (loop). The tests using them are slow: CI runs them, the everyday loop not.
_SERVER_FIXTURES = {"start", "site", "smtp", "receiver", "slapd", "provider", "loop"}


BACKENDS = ("sqlite", "postgresql")


def pytest_addoption(parser):
    parser.addoption("--db-backend", choices=BACKENDS + ("all",),
                     default=os.environ.get("BUGSVC_TEST_DB_BACKEND") or "all",
                     help="the database engines the database tests run on (default: all; "
                          "env BUGSVC_TEST_DB_BACKEND)")


def pytest_configure(config):
    chosen = config.getoption("--db-backend")
    backends = list(BACKENDS) if chosen == "all" else [chosen]
    config.bugsvc_postgresql_missing = None
    if "postgresql" in backends:
        try:
            pg_cluster.server_programs()
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except (pg_cluster.Unavailable, ImportError) as exc:
            config.bugsvc_postgresql_missing = (
                f"{exc}" if isinstance(exc, pg_cluster.Unavailable)
                else f"{exc} (pip install -e '.[postgres]')")
            backends.remove("postgresql")
    config.bugsvc_backends = backends
    config.bugsvc_outcomes = collections.defaultdict(collections.Counter)
    config.addinivalue_line("markers", "engine(*names): the test is about these database "
                                       "engines only (sqlite, postgresql): it runs on them alone")
    config.addinivalue_line("markers", "site_on_each_engine: the module's browser tests run "
                                       "their `site` once on each engine chosen "
                                       "(tests/browser_site.py)")
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist runs the tests of one "
                                       "group on one worker (set by pytest_collection_modifyitems)")
    config.pluginmanager.register(_GroupNames(), "bugsvc_group_names")


def pytest_generate_tests(metafunc):
    """Every test using the `backend` fixture (through db_path, config, db,
    services, client ...) runs once per engine chosen."""
    if "backend" in metafunc.fixturenames:
        backends = metafunc.config.bugsvc_backends
        marker = metafunc.definition.get_closest_marker("engine")
        if marker is not None:
            backends = [backend for backend in backends if backend in marker.args]
        metafunc.parametrize("backend", backends)
    # The browser site (tests/browser_site.py) of a module marked
    # site_on_each_engine: one per engine chosen, each for the whole module.
    if ("site_engine" in metafunc.fixturenames
            and metafunc.definition.get_closest_marker("site_on_each_engine") is not None):
        metafunc.parametrize("site_engine", metafunc.config.bugsvc_backends, scope="module")


_ENGINE = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark every test that starts a real server `slow` (pytest -m 'not slow'
    leaves them out of the everyday loop; CI runs everything), note which
    engine each test runs on, and keep the tests of a module that share a
    module-scoped fixture of that module (a server, a browser, a seeded
    database) on one pytest-xdist worker (`--dist loadgroup`), which then
    sets the fixture up once.

    It runs first, before pytest-xdist's worker reads the xdist_group marks
    in its own pytest_collection_modifyitems (see _name_the_groups)."""
    for item in items:
        if _SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        callspec = getattr(item, "callspec", None)
        # A test of one engine, when that engine is not chosen, has no
        # engine to run on (pytest skips it as an empty parameter set).
        if callspec is not None and isinstance(callspec.params.get("backend"), str):
            marker = item.get_closest_marker("engine")
            suffix = " only" if marker is not None and len(marker.args) == 1 else ""
            item.stash[_ENGINE] = callspec.params["backend"] + suffix
        elif callspec is not None and isinstance(callspec.params.get("site_engine"), str):
            item.stash[_ENGINE] = callspec.params["site_engine"]
        if _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


class _GroupNames:
    """Names each grouped test's xdist_group in its node id ("...@group"),
    which is how pytest-xdist's `--dist loadgroup` learns the groups from
    its workers. pytest-xdist 3.8's worker sets it by assigning the item's
    `_nodeid`, which pytest 9 no longer reads (its node id is `_id`): the
    groups were lost and each worker set the module-scoped fixtures up
    again (the browser tests' server and Chromium, a seeded source). This
    sets it, after the worker, where the worker's assignment was lost."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        in_a_worker = os.environ.get("PYTEST_XDIST_WORKER")
        if not (in_a_worker and getattr(config.option, "loadgroup", False)):
            return
        from _pytest.nodeid import NodeId
        for item in items:
            names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                     for mark in item.iter_markers("xdist_group")}
            suffix = "@" + "_".join(sorted(names))
            if (names and not item.nodeid.endswith(suffix)
                    and isinstance(getattr(item, "_id", None), NodeId)):
                item._id = NodeId.parse(item.nodeid + suffix)


def _shares_a_module_fixture(item):
    """Whether `item` asks (itself or through the fixtures it asks for) for a
    module-scoped fixture, which pytest sets up once per module wherever it
    is defined: in the module or in a plugin such as browser_site (an
    autouse one it does not ask for, such as a module's tally, does not
    count)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None or getattr(item, "module", None) is None:
        return False
    asked, seen = list(info.argnames), set()
    while asked:
        name = asked.pop()
        if name in seen or name not in info.name2fixturedefs:
            continue
        seen.add(name)
        definition = info.name2fixturedefs[name][-1]
        if definition.scope == "module":
            return True
        asked.extend(definition.argnames)
    return False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Each report names the engine its test ran on (an attribute, which
    pytest-xdist carries from the worker that ran the test to the process
    that counts the outcomes)."""
    report = yield
    report.bugsvc_engine = item.stash.get(_ENGINE, None)
    return report


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None:
        return
    backend = getattr(report, "bugsvc_engine", None)
    if backend is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "skipped" if report.skipped else "passed" if report.passed else "failed"
        if report.when == "setup" and report.failed:
            outcome = "error"
        config.bugsvc_outcomes[backend][outcome] += 1


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG["config"] = session.config


_CONFIG = {}


def pytest_terminal_summary(terminalreporter, config):
    parts = []
    for backend in BACKENDS + tuple(f"{name} only" for name in BACKENDS):
        counts = config.bugsvc_outcomes[backend]
        if counts:
            parts.append(f"{backend}: " + ", ".join(f"{counts[outcome]} {outcome}" for outcome in
                                                    ("passed", "failed", "error", "skipped")
                                                    if counts[outcome]))
    if parts:
        terminalreporter.write_line("database engines: " + "; ".join(parts))
    if config.bugsvc_postgresql_missing:
        terminalreporter.write_line("PostgreSQL runs left out: "
                                    + config.bugsvc_postgresql_missing)


@pytest.fixture(scope="session")
def database_folder(tmp_path_factory):
    """The folder of this session's (this pytest-xdist worker's) SQLite
    databases: the template, the worlds and each test's copy. It is in
    memory (tmpfs: /dev/shm) where the system has one, as SQLite's fsync at
    each checkpoint and close costs a disk tens of milliseconds per test,
    most of a test's time; elsewhere (or with BUGSVC_TEST_DB_DIR set to
    another folder) in that folder, or pytest's temporary one. Removed at
    the end of the session."""
    base = os.environ.get("BUGSVC_TEST_DB_DIR") or (
        "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None)
    if base is None:
        yield tmp_path_factory.mktemp("databases")
        return
    folder = Path(tempfile.mkdtemp(prefix="bugsvc-tests-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def template_db(database_folder):
    path = database_folder / "template.sqlite"
    config = Config(database=str(path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                    password_cost=FAST_COST)
    db = prepare_database(config, out=_Null())
    db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path


@pytest.fixture(scope="session")
def postgresql():
    """The session's throwaway PostgreSQL cluster (started on first use)."""
    cluster = pg_cluster.Cluster()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def postgresql_template(postgresql):
    """The name of the cluster's database holding the installed schema and
    default data that every test's database is copied from."""
    name = postgresql.create_database()
    config = Config(database=postgresql.url(name), admin_email=ADMIN_EMAIL,
                    admin_password=ADMIN_PASSWORD, password_cost=FAST_COST)
    prepare_database(config, out=_Null()).close()
    return name


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass


@pytest.fixture
def db_path(backend, request):
    """The test's own installed database: an SQLite file's path (alone in a
    folder of `database_folder`, removed after the test), or a PostgreSQL
    database's URL. It holds the default installation, or, for a test that
    asks for a world (see `world_fixture`), that world."""
    world = _world_of(request)
    if world is not None:
        template, value = _built_world(request, backend, world)
        request.node.stash[_WORLD_VALUE] = value
    if backend == "sqlite":
        folder = Path(tempfile.mkdtemp(dir=request.getfixturevalue("database_folder")))
        path = folder / "bugsvc.sqlite"
        shutil.copyfile(template if world else request.getfixturevalue("template_db"), path)
        yield path
        shutil.rmtree(folder, ignore_errors=True)
        return
    cluster = request.getfixturevalue("postgresql")
    yield cluster.work_database(template if world else
                                request.getfixturevalue("postgresql_template"))


# Worlds: data many tests start from, built once per engine ---------------------------

def world_fixture(builder):
    """Make `builder(services) -> value` a fixture of its name, whose value
    is what the builder returned (a fresh copy for each test), the test's
    database holding what it made.

    The builder runs once per engine and session (per pytest-xdist worker),
    through the Services of a database of its own, which then becomes the
    template that the databases of the tests asking for it (directly or
    through other fixtures) are made from, as the default installation's
    template is: the same rows as building it anew for each test, without
    the hundreds of calls. A builder takes nothing but `services` and makes
    the same data whenever it runs (times come from the clock when it runs,
    so a test must not expect them to be its own "now"); its value holds
    plain data (ids, names), never the Services.
    """
    def fixture(db_path, request):
        return copy.deepcopy(request.node.stash[_WORLD_VALUE])
    fixture.bugsvc_world = builder
    fixture.__doc__ = builder.__doc__
    return pytest.fixture(name=builder.__name__)(fixture)


_WORLD_VALUE = pytest.StashKey[object]()
_WORLDS = {}             # (engine, builder) -> (template, value)


def _world_of(request):
    """The builder of the world the test asks for, or None."""
    info = request.node._fixtureinfo
    builders = {definitions[-1].func.bugsvc_world for definitions in
                info.name2fixturedefs.values()
                if hasattr(definitions[-1].func, "bugsvc_world")}
    if len(builders) > 1:
        raise pytest.UsageError(f"{request.node.nodeid} asks for more than one world")
    return builders.pop() if builders else None


def _built_world(request, backend, builder):
    """(template, value) of `builder`'s world on `backend`: an SQLite file,
    or the name of a PostgreSQL database, built on first use."""
    key = (backend, builder)
    if key not in _WORLDS:
        if backend == "sqlite":
            folder = Path(tempfile.mkdtemp(prefix="world-",
                                           dir=request.getfixturevalue("database_folder")))
            template = folder / "world.sqlite"
            shutil.copyfile(request.getfixturevalue("template_db"), template)
            location = str(template)
        else:
            cluster = request.getfixturevalue("postgresql")
            template = cluster.create_database(request.getfixturevalue("postgresql_template"))
            location = cluster.url(template)
        config = Config(database=location, admin_email=ADMIN_EMAIL,
                        admin_password=ADMIN_PASSWORD, password_cost=FAST_COST)
        database = open_database(config.database)
        try:
            value = builder(Services(database, config))
            if backend == "sqlite":
                database.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            database.close()
        _WORLDS[key] = (template, value)
    return _WORLDS[key]


@pytest.fixture
def new_db(backend, tmp_path, request):
    """new_db() -> the location of a new, empty database on the test's
    engine (an SQLite path in tmp_path, or an empty PostgreSQL database)."""
    made = []

    def make(name="new"):
        if backend == "sqlite":
            made.append(tmp_path / f"{name}{len(made)}.sqlite")
            return made[-1]
        cluster = request.getfixturevalue("postgresql")
        made.append(cluster.create_database())
        return cluster.url(made[-1])
    yield make
    if backend == "postgresql":
        for name in made:
            request.getfixturevalue("postgresql").drop_database(name)


@pytest.fixture
def config(db_path):
    return Config(database=str(db_path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                  password_cost=FAST_COST)


@pytest.fixture
def db(config, backend):
    if backend == "postgresql":
        # One Database (and its pool) for the work database through the
        # session, so the server's sessions stay warm from test to test.
        database = _POSTGRES_DATABASES.get(config.database.text)
        if database is None:
            database = _POSTGRES_DATABASES[config.database.text] = open_database(config.database)
        yield database
        database.close_connection()
        _assert_pool_whole(database)
        return
    database = open_database(config.database)
    yield database
    database.close()


_POSTGRES_DATABASES = {}


def _assert_pool_whole(database, wait=5.0):
    """Fail the test that leaves the session's pool of `database` short:
    a connection still lent, or one being opened that never comes (waits
    up to `wait` seconds for one a pool thread is still opening)."""
    pool = database._pool
    if pool is None:
        return
    deadline = time.monotonic() + wait
    while True:
        stats = pool.get_stats()
        short = stats["pool_size"] - stats["pool_available"]
        if short <= 0:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the test left {short} of the pool's connections lent or never"
                        f" opened ({stats})", pytrace=False)
        time.sleep(0.02)


@pytest.fixture
def app(config, db):
    return create_app(config, db=db)


@pytest.fixture
def client(app):
    return testing.TestClient(app)


class Services:
    """Calls operations without HTTP, as a given account, through the
    Runner's rules (login rule, transaction, include/exclude fields), as
    every way in does. Functions that are no operation run in a transaction
    of their own (committed on success, rolled back on error)."""

    def __init__(self, db, config):
        self.db = db
        self.config = config
        self.auth = auth.Authenticator(db, config.password_cost)
        self.units = unit_of_work(db, config, auth=self.auth)
        self.runner = Runner(self.units)

    def call(self, function, params=None, as_user=None, now=None, write=True):
        """Run the operation whose service is `function` (or, for any other
        function, `function(ctx, params)` in a transaction, writing unless
        `write` is false) as account id/login `as_user` (None: anonymous)."""
        now = now or datetime.now(timezone.utc)
        user_id = self.user_id(as_user)
        operation = _OPERATION_OF.get(function)
        if operation is not None:
            return self.runner.call(operation, params or {}, user_id, now=now)
        params = dict(params or {})
        chosen = FieldFilter(params.pop("include_fields", None), params.pop("exclude_fields", None))
        with self.units.context(user_id, write=write, now=now, fields=chosen) as ctx:
            return function(ctx, params)

    def user_id(self, as_user):
        """The account id of id/login `as_user` (None stays None)."""
        if as_user is None or isinstance(as_user, int):
            return as_user
        with self.db.transaction() as conn:
            return conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                (as_user,)).fetchone()[0]

    def add_user(self, login, password=None, real_name="", groups=(), bless=(), disabled_text=""):
        """Create an account directly in the database; returns its id."""
        with self.db.transaction(write=True) as conn:
            cur = conn.execute(
                "INSERT INTO users (login, real_name, password_hash, disabled_text, created_at)"
                " VALUES (?, ?, ?, ?, '2026-01-01 00:00:00')",
                (login, real_name, auth.hash_password(password, FAST_COST) if password else None,
                 disabled_text))
            user_id = cur.lastrowid
            for names, is_bless in ((groups, 0), (bless, 1)):
                for name in names:
                    group_id = conn.execute("SELECT id FROM groups WHERE name = ?",
                                            (name,)).fetchone()[0]
                    conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                                 " VALUES (?, ?, ?, 0)", (user_id, group_id, is_bless))
            # Regexp memberships, and those the groups' inheritance gives.
            refresh_for_user(conn, user_id)
        return user_id

    def api_key(self, login):
        """Create and return an API key for `login`."""
        with self.db.transaction(write=True) as conn:
            user_id = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                   (login,)).fetchone()[0]
            return auth.create_api_key(conn, user_id, "test", datetime.now(timezone.utc))[1]

    def group_names(self):
        """The names of every group."""
        return {row[0] for row in self.query("SELECT name FROM groups")}

    def query(self, sql, args=()):
        """Rows of a read-only query, for checking what is stored."""
        with self.db.transaction() as conn:
            return [tuple(row) for row in conn.execute(sql, args).fetchall()]

    def table(self, name):
        """Every row of table `name`, in an order both engines agree on (a
        sort of whole rows: ORDER BY 1 leaves ties, as in user_groups, in the
        engine's order, which PostgreSQL changes when rows are rewritten)."""
        return sorted(self.query(f"SELECT * FROM {name}"), key=repr)


@pytest.fixture
def swap_service(monkeypatch):
    """swap_service(name, function): operation `name` runs `function` until
    the test ends (for every app created after the call, and every RPC call)."""
    def swap(name, function):
        monkeypatch.setitem(OPERATIONS._by_name, name,
                            dataclasses.replace(OPERATIONS[name], service=function))
    return swap


@pytest.fixture
def services(db, config):
    return Services(db, config)


@pytest.fixture
def plain_key(services):
    """The API key of a plain account, plain@example.com (no group)."""
    services.add_user("plain@example.com", password="plain-password-1")
    return services.api_key("plain@example.com")


@pytest.fixture
def begins_sent(monkeypatch):
    """The BEGINs this process sends PostgreSQL from now on, in order (the
    transactions the server is asked to open; PgConnection.begun)."""
    from bugsvc.store.postgres.connection import PgConnection
    sent = []
    send = PgConnection.begun

    def noted(self, also=""):
        if self._pending_begin is not None:
            sent.append(self._pending_begin)
        return send(self, also)
    monkeypatch.setattr(PgConnection, "begun", noted)
    return sent


@pytest.fixture
def admin_key(services):
    return services.api_key(ADMIN_EMAIL)
