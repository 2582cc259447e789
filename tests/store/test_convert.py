"""`bugsvc convert-db --to`: a whole database copied to the other engine and
back, ids and id sequences kept, every table verified before it says done,
nothing written when it refuses or fails."""

import io

import pytest

import bug_rows
from accounts import ADMIN
from bugsvc.services import bug as bug_service
from bugsvc.store import convert as convert_module
from bugsvc.store.convert import ConvertError, Progress, convert
from bugsvc.store.location import open_database
from conftest import Services
from live_server import run_cli


pytestmark = pytest.mark.engine("postgresql")     # both engines take part in each test


def tables_and_rows(location):
    """{table: sorted rows} of every table of the database at `location`
    but the engines' own indexes of text and PostgreSQL's bug writes (the
    copy's own transaction, noted by the target's triggers: schema.sql)."""
    database = open_database(location)
    try:
        with database.transaction() as conn:
            return {table: sorted((tuple(row) for row in conn.execute(f"SELECT * FROM {table}")),
                                  key=repr)
                    for table in conn.dialect.tables(conn)
                    if not table.endswith("_fts") and table != "bug_writes"}
    finally:
        database.close()


@pytest.fixture
def source(backend, template_db, tmp_path, config):
    """An SQLite database with a bit of everything (bugs with aliases,
    comments, an attachment, a custom field's values, a flag, history)."""
    import shutil
    path = tmp_path / "source.sqlite"
    shutil.copyfile(template_db, path)
    database = open_database(path)
    services = Services(database, type(config)(database=str(path),
                                               password_cost=config.password_cost))
    services.add_user("dev@example.com", real_name="Dana")
    field = bug_rows.add_custom_field(services, "cf_notes", 1)
    first = bug_rows.add_bug(services, summary="Crash on start", description="Ümlaut ✓",
                             aliases=["crash", "boom"], cc=["dev@example.com"])
    bug_rows.set_custom_value(services, first, field, "second value")
    bug_rows.add_comment(services, first, ADMIN, "a private note", is_private=True)
    bug_rows.add_attachment(services, first, "a log", file_name="log.bin",
                            data=bytes(range(256)))
    services.call(bug_service.update, {"ids": [first], "summary": "Crash on every start"},
                  as_user=ADMIN)
    bug_rows.add_bug(services, summary="Second")
    database.close()
    return path


def test_sqlite_to_postgresql_and_back_keeps_every_row_and_id(source, new_db, tmp_path,
                                                              config, backend):
    target = new_db()
    result = convert(source, target)
    assert result.rows == sum(len(rows) for rows in tables_and_rows(source).values())
    assert {table.name for table in result.tables} >= {"bugs", "comments", "attachment_data"}
    assert tables_and_rows(target) == tables_and_rows(source)

    back = tmp_path / "back.sqlite"
    convert(target, back)
    assert tables_and_rows(back) == tables_and_rows(source)
    # The SQLite copy's comment text index holds every comment copied.
    database = open_database(back)
    try:
        with database.transaction(write=True) as conn:
            newest = conn.execute("SELECT MAX(id) FROM comments").fetchone()[0]
            assert conn.execute("SELECT MAX(id) FROM comments_fts_docsize").fetchone()[0] == newest
            conn.execute("INSERT INTO comments_fts (comments_fts, rank)"
                         " VALUES ('integrity-check', 1)")
    finally:
        database.close()

    # The id sequences go on after the copied ids.
    database = open_database(target)
    services = Services(database, type(config)(database=str(target),
                                               password_cost=config.password_cost))
    newest = bug_rows.add_bug(services, summary="After the move")
    database.close()
    assert newest == max(row[0] for row in tables_and_rows(source)["bugs"]) + 1


@pytest.mark.parametrize("direction", ["to postgresql", "to sqlite"])
def test_a_target_that_is_not_empty_is_refused_and_left_alone(source, db_path, new_db, tmp_path,
                                                              direction, backend):
    target = db_path if direction == "to postgresql" else tmp_path / "full.sqlite"
    if direction == "to sqlite":
        convert(source, target)
    before = tables_and_rows(target)
    with pytest.raises(ConvertError, match="not empty"):
        convert(source if direction == "to postgresql" else db_path, target)
    assert tables_and_rows(target) == before


@pytest.mark.parametrize("direction", ["to postgresql", "to sqlite"])
def test_a_copy_that_does_not_verify_leaves_no_trace(source, new_db, tmp_path, monkeypatch,
                                                     direction, backend):
    target = new_db() if direction == "to postgresql" else tmp_path / "new.sqlite"
    real = open_database(target).dialect.__class__.bulk_insert

    def lose_a_comment(self, conn, table, columns, rows):
        real(self, conn, table, columns, rows[1:] if table == "comments" else rows)
    monkeypatch.setattr(open_database(target).dialect.__class__, "bulk_insert", lose_a_comment)
    with pytest.raises(ConvertError, match="comments does not verify"):
        convert(source, target)
    if direction == "to sqlite":
        assert not target.exists()
    else:
        assert tables_and_rows(target) == {}


def test_the_command_shows_its_progress_in_plain_lines_and_says_what_it_verified(
        source, new_db, backend):
    target = new_db()
    done = run_cli("--db", source, "convert-db", "--to", target)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Converted {source} to {target}: ")
    assert "row counts and checksums verified" in done.stdout
    lines = done.stderr.splitlines()
    assert lines[0].startswith("Copying ") and "bugs: 2/2 rows copied" in lines
    assert "\r" not in done.stderr and lines[-1].startswith("Copied and verified ")
    again = run_cli("--db", source, "convert-db", "--to", target)
    assert again.returncode == 1 and "is not empty" in again.stderr


def test_on_a_terminal_the_progress_is_one_bar_redrawn(backend):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    stream = Terminal()
    progress = Progress(stream)
    progress.start({"bugs": 10, "comments": 30})
    progress.advance("bugs", 10)
    progress.advance("comments", 30)
    progress.done()
    text = stream.getvalue()
    assert "\r" in text and "[" + "#" * Progress.WIDTH + "] 100% 40/40 rows" in text
    assert text.rstrip().endswith("Copied and verified 40 rows.")


def test_values_are_stored_as_their_columns_declare(backend):
    types = convert_module.declared_types()
    assert types["bugs"]["id"] == "INTEGER" and types["attachment_data"]["data"] == "BLOB"
    assert convert_module._converter("TEXT", "t", "c")(12) == "12"
    assert convert_module._converter("INTEGER", "t", "c")("7") == 7
    assert convert_module._converter("REAL", "t", "c")(2) == 2.0
    with pytest.raises(ConvertError, match="t.c holds 'x', which is not INTEGER"):
        convert_module._converter("INTEGER", "t", "c")("x")
