"""Writing into the target (bugsvc/importer/target.py, writer.py): links
that wait for their other bug, aliases that moved, accounts without an
address, and writing a bug twice giving the same rows."""

import pytest

from bugsvc.importer import forms, writer
from bugsvc.importer.report import Report
from bugsvc.importer.target import Target


def raw_bug(bug_id, **fields):
    bug = {"id": bug_id, "summary": f"Bug {bug_id}", "status": "CONFIRMED", "resolution": "",
           "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
           "target_milestone": "---", "platform": "PC", "op_sys": "Linux", "priority": "---",
           "severity": "normal", "assigned_to": "dev@example.org", "creator": "dev@example.org",
           "creation_time": "2024-01-01T00:00:00Z", "last_change_time": "2024-01-02T00:00:00Z"}
    bug.update(fields)
    return forms.bug(bug)


@pytest.fixture
def write(db):
    report = Report()

    def write_bugs(*bugs):
        with db.transaction(write=True) as conn:
            target = Target(conn, report, "2024-06-01 00:00:00")
            for bug in bugs:
                writer.write_bug(target, bug, [], [], [], report)
    write_bugs.report = report
    return write_bugs


def query(db, sql, args=()):
    with db.transaction() as conn:
        return [tuple(row) for row in conn.execute(sql, args)]


def test_links_to_bugs_not_yet_written_wait_for_them(write, db):
    write(raw_bug(2, depends_on=[5], blocks=[7], dupe_of=9))
    assert query(db, "SELECT blocked, depends_on FROM dependencies") == []
    assert query(db, "SELECT bug_id, field, other FROM import_links ORDER BY other") == [
        (2, "depends_on", 5), (2, "blocks", 7), (2, "dupe_of", 9)]
    write(raw_bug(5, blocks=[2]), raw_bug(9))
    assert query(db, "SELECT blocked, depends_on FROM dependencies") == [(2, 5)]
    assert query(db, "SELECT dupe_of FROM bugs WHERE id = 2") == [(9,)]
    assert writer.unresolved_links(db.connection()) == [(2, "blocks", 7)]


def test_an_alias_that_moved_to_another_bug_follows_it(write, db):
    write(raw_bug(1, alias=["crash"]), raw_bug(2))
    write(raw_bug(2, alias=["crash"]))
    assert query(db, "SELECT bug_id, alias FROM bug_aliases") == [(2, "crash")]


def test_writing_a_bug_again_gives_the_same_rows(write, db):
    bug = raw_bug(3, cc=["qa@example.org"], keywords=[], see_also=["https://x.example/1"],
                  flags=[{"id": 4, "name": "review", "type_id": 8, "status": "?",
                          "setter": "dev@example.org", "requestee": "qa@example.org",
                          "creation_date": "2024-01-01T00:00:00Z"}])
    write(bug)
    tables = ("bugs", "bug_cc", "flags", "bug_see_also", "flag_types")
    first = {table: query(db, f"SELECT * FROM {table}") for table in tables}
    write(bug)
    assert {table: query(db, f"SELECT * FROM {table}") for table in tables}["flags"] == \
        first["flags"]
    again = {table: query(db, f"SELECT * FROM {table}") for table in tables}
    assert again["bugs"] == first["bugs"] and again["bug_cc"] == first["bug_cc"]
    assert [row[1:] for row in again["bug_see_also"]] == [row[1:] for row in
                                                          first["bug_see_also"]]


def test_an_account_without_an_address_is_kept_and_reported(write, db):
    write(raw_bug(4, assigned_to="carol"))
    assert query(db, "SELECT login, password_hash FROM users WHERE login = 'carol'") == [
        ("carol", None)]
    assert any("account addresses: 1 (the source shows no e-mail address" in line
               for line in write.report.lines())


def test_a_flag_type_no_product_offers_is_made_inactive_and_reported(write, db):
    write(raw_bug(6, flags=[{"id": 9, "name": "qe-verify", "type_id": 31, "status": "+",
                             "setter": "dev@example.org"}]))
    assert query(db, "SELECT id, name, is_active FROM flag_types") == [(31, "qe-verify", 0)]
    assert any(line.startswith("  flag type details: 1") for line in write.report.lines())
