"""`bugsvc import`: what it refuses before reading anything, with exit
status 2 and one line, leaving the target as it was."""

import io
import sqlite3

import pytest

from bug_support import file_bug
from bugsvc.cli import main
from bugsvc.importer.run import run_import
from fake_bugzilla import FakeBugzilla
from import_support import dump, options


@pytest.fixture
def bugzilla():
    fake = FakeBugzilla().start()
    yield fake
    fake.stop()


def command(*argv, environ=None):
    out, err = io.StringIO(), io.StringIO()
    status = main(["import", *map(str, argv)], environ or {}, out, err)
    return status, out.getvalue(), err.getvalue()


def test_a_url_that_is_not_http_is_refused(tmp_path):
    status, _, err = command("ftp://bugzilla.example.org", "--db", tmp_path / "t.sqlite")
    assert status == 2 and "is not an http:// or https:// URL" in err
    assert not (tmp_path / "t.sqlite").exists()


@pytest.mark.parametrize("argv, message", [
    (("--since", "last week"), "--since must be a time"),
    (("--concurrency", "0"), "--concurrency must be a number from 1 to 32"),
    (("--page-size", "x"), "--page-size must be a number"),
    (("--overlap", "-1"), "--overlap must be a number")])
def test_bad_option_values_are_refused(tmp_path, argv, message):
    status, _, err = command("http://127.0.0.1:9", "--db", tmp_path / "t.sqlite", *argv)
    assert status == 2 and message in err


def test_a_database_with_bugs_of_its_own_is_refused(services, db_path, bugzilla):
    file_bug(services)
    before = dump(db_path)
    status, _, err = command(bugzilla.url, "--db", db_path,
                             environ={"BUGSVC_IMPORT_API_KEY": "k" * 40})
    assert status == 2 and "already holds 1 bugs of its own" in err
    assert dump(db_path) == before
    assert bugzilla.requests == 0


def test_a_database_filled_from_another_source_is_refused(tmp_path, bugzilla):
    target = tmp_path / "target.sqlite"
    assert run_import(options(bugzilla.url, target, "k" * 40, "reader@example.org"),
                      io.StringIO(), io.StringIO()) == 0
    before, requests = dump(target), bugzilla.requests
    status, _, err = command("http://127.0.0.1:9/other", "--db", target)
    assert status == 2 and f"was filled from {bugzilla.url}/rest" in err
    assert dump(target) == before and bugzilla.requests == requests


def test_verify_needs_the_keys_login_when_the_source_cannot_tell(tmp_path, bugzilla):
    target = tmp_path / "target.sqlite"
    assert run_import(options(bugzilla.url, target, "k" * 40), io.StringIO(),
                      io.StringIO()) == 0
    status, _, err = command(bugzilla.url, "--db", target, "--verify",
                             environ={"BUGSVC_IMPORT_API_KEY": "k" * 40})
    assert status == 2 and "give --login" in err
    status, _, err = command(bugzilla.url, "--db", tmp_path / "none.sqlite", "--verify")
    assert status == 2 and "there is no database" in err


def test_a_source_that_cannot_be_reached_ends_with_status_1(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    status = run_import(options("http://127.0.0.1:9", tmp_path / "t.sqlite", retries=1), out, err)
    assert status == 1
    assert "the source failed: gave up after 2 attempts" in err.getvalue()
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM bugs").fetchone() == (0,)
    conn.close()
