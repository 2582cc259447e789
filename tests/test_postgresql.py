"""The PostgreSQL store itself: that the suite has a server to run against,
and what only PostgreSQL does (its schema translated from schema.sql, its
placeholders, rows and values as sqlite3 gives them)."""

import os

import pytest


def test_postgresql_is_there_to_test_against(pytestconfig):
    """Without PostgreSQL's server programs (or psycopg) the database tests
    run on SQLite only: a developer is told so here, CI fails."""
    missing = pytestconfig.bugsvc_postgresql_missing
    if missing is None:
        return
    message = f"the tests did not run on PostgreSQL: {missing}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
