"""Shared fixtures: every test gets its own database, copied from a template
built once per session from schema.sql and the default installation data."""

import dataclasses
import shutil
import sqlite3
from datetime import datetime, timezone

import pytest
from falcon import testing

from bugsvc.accounts import auth
from bugsvc.app import create_app
from bugsvc.accounts.auth import ScryptCost

from bugsvc.api.fields import FieldFilter
from bugsvc.api.operations import OPERATIONS
from bugsvc.api.runner import Runner
from bugsvc.serving.server import prepare_database
from bugsvc.config import Config
from bugsvc.store.db import Database
from bugsvc.accounts.membership import refresh_for_user

from accounts import ADMIN as ADMIN_EMAIL, ADMIN_PASSWORD
FAST_COST = ScryptCost(n=16, r=1, p=1)   # tests only: hashing must not dominate
_OPERATION_OF = {operation.service: operation for operation in OPERATIONS}
# Fixtures that start a real server process: the tests using them are slow.
_SERVER_FIXTURES = {"start", "site", "smtp", "receiver"}


def pytest_collection_modifyitems(items):
    """Mark every test that starts a real server `slow` (pytest -m 'not slow'
    leaves them out of the everyday loop; CI runs everything)."""
    for item in items:
        if _SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def template_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "template.sqlite"
    config = Config(db_path=str(path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                    password_cost=FAST_COST)
    db = prepare_database(config, out=_Null())
    db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass


@pytest.fixture
def db_path(template_db, tmp_path):
    path = tmp_path / "bugsvc.sqlite"
    shutil.copyfile(template_db, path)
    return path


@pytest.fixture
def config(db_path):
    return Config(db_path=str(db_path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                  password_cost=FAST_COST)


@pytest.fixture
def db(config):
    database = Database(config.db_path)
    yield database
    database.close()


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
        self.runner = Runner(db, config, self.auth)

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
        with self.runner.context(user_id, write=write, now=now, fields=chosen) as ctx:
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
            refresh_for_user(conn, user_id)
            for names, is_bless in ((groups, 0), (bless, 1)):
                for name in names:
                    group_id = conn.execute("SELECT id FROM groups WHERE name = ?",
                                            (name,)).fetchone()[0]
                    conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                                 " VALUES (?, ?, ?, 0)", (user_id, group_id, is_bless))
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
def admin_key(services):
    return services.api_key(ADMIN_EMAIL)
