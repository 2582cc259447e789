"""Importing from a real source: a second bugsvc server on loopback, seeded
over REST with a team's kind of data (tests/import_support.py); the import
runs as the command a person types, then --verify compares."""

import sqlite3

import pytest

import import_support as support
from import_support import ADMIN, INSIDER, PLAIN, run_import
from live_server import start  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow


@pytest.fixture
def source(start, tmp_path):
    server, db_path, admin = support.start_source(start, tmp_path)
    data = support.seed(server, db_path, admin)
    support.age(db_path)
    data.update(server=server, db_path=db_path, admin=admin)
    return data


def rows(path, sql, args=()):
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql, args)]
    finally:
        conn.close()


def test_an_administrator_key_carries_everything_and_verify_finds_no_difference(source,
                                                                                 tmp_path):
    target = tmp_path / "target.sqlite"
    key = source["keys"][ADMIN]
    done = run_import(source["server"].url, "--db", target, "--login", ADMIN,
                      env={"BUGSVC_IMPORT_API_KEY": key})
    assert done.returncode == 0, done.stderr + done.stdout
    checked = run_import(source["server"].url, "--db", target, "--verify", "--login", ADMIN,
                         env={"BUGSVC_IMPORT_API_KEY": key})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    print(done.stdout, done.stderr, checked.stdout, checked.stderr)
    assert checked.stdout.strip().endswith("0 differences.")
    # Ids are kept: bugs, comments, attachments.
    query = "SELECT id FROM {} ORDER BY id"
    for table in ("bugs", "comments", "attachments", "flags"):
        assert rows(target, query.format(table)) == rows(source["db_path"], query.format(table))
