"""The benchmark's data generator (bench/seed.py): a database the service
itself reads, with the schema's every index, realistic shares of comments,
private comments, restricted bugs, and the same data for the same seed."""

import hashlib
import re
import sqlite3
from datetime import datetime, timezone

import pytest
from falcon import testing

from bench import seed as seeding
from bugsvc.accounts import auth
from bugsvc.app import create_app
from bugsvc.config import Config
from bugsvc.store.location import open_database
from bugsvc.store.schema import SCHEMA_VERSION, schema_sql


pytestmark = pytest.mark.slow   # the benchmark's data generator

BUGS = 600


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    path = tmp_path_factory.mktemp("seed") / "bench.sqlite"
    summary = seeding.seed(path, BUGS, seed_value=7, jobs=1, out=_Null())
    return path, summary


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass


def rows(path, sql, args=()):
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_database_has_the_schema_version_every_index_and_wal(seeded):
    path, _ = seeded
    sqlite_schema = "\n".join(line for line in schema_sql().splitlines()
                              if not line.startswith("--"))     # PostgreSQL's lines left out
    wanted = set(re.findall(r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)", sqlite_schema,
                            re.IGNORECASE))
    present = {name for (name,) in rows(path,
                                        "SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert wanted <= present
    # The bug text index holds every bug written by the bulk load.
    word = max(rows(path, "SELECT summary FROM bugs ORDER BY id LIMIT 1")[0][0].split(), key=len)
    assert rows(path, "SELECT COUNT(*) FROM bugs_text_fts WHERE bugs_text_fts MATCH ?",
                (f'summary : "{word}"',)) == rows(
        path, "SELECT COUNT(*) FROM bugs WHERE instr(lower(summary), lower(?)) > 0", (word,))
    # So does the comment text index, every comment.
    assert rows(path, "SELECT MAX(id) FROM comments_fts_docsize") == rows(
        path, "SELECT MAX(id) FROM comments")
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("INSERT INTO comments_fts (comments_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()
    assert rows(path, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert rows(path, "PRAGMA journal_mode")[0][0] == "wal"
    assert rows(path, "PRAGMA foreign_key_check") == []
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]


def test_counts_are_realistic(seeded):
    path, summary = seeded
    assert rows(path, "SELECT COUNT(*) FROM bugs")[0][0] == BUGS == summary["rows"]["bugs"]
    comments = rows(path, "SELECT COUNT(*) FROM comments")[0][0]
    assert summary["rows"]["comments"] == comments
    assert 4.5 * BUGS <= comments <= 5.5 * BUGS
    private = rows(path, "SELECT COUNT(*) FROM comments WHERE is_private = 1")[0][0]
    assert 0 < private < comments * 0.1
    assert rows(path, "SELECT COUNT(*) FROM bug_groups")[0][0] > 0          # restricted bugs
    for table in ("bug_cc", "bug_keywords", "dependencies", "flags", "bug_activity",
                  "attachments", "bug_aliases"):
        assert rows(path, f"SELECT COUNT(*) FROM {table}")[0][0] > 0, table
    # Every bug has its description (count 0) by its reporter, filed at creation.
    assert rows(path, "SELECT COUNT(*) FROM bugs b JOIN comments c ON c.bug_id = b.id"
                      " AND c.count = 0 AND c.author_id = b.reporter"
                      " AND c.created_at = b.creation_time")[0][0] == BUGS
    # Attachments carry their data, and a comment announces each.
    assert rows(path, "SELECT COUNT(*) FROM attachments a JOIN attachment_data d"
                      " ON d.attachment_id = a.id AND length(d.data) = a.size")[0][0] == \
        rows(path, "SELECT COUNT(*) FROM attachments")[0][0]
    assert rows(path, "SELECT COUNT(*) FROM comments WHERE kind = 5")[0][0] == \
        rows(path, "SELECT COUNT(*) FROM attachments")[0][0]
    # Closed bugs have a resolution; open ones none.
    assert rows(path, "SELECT COUNT(*) FROM bugs WHERE (status IN ('RESOLVED', 'VERIFIED'))"
                      " <> (resolution <> '')")[0][0] == 0


def table_digest(path):
    """Digest of the generated rows (not the administrator's salted hash or
    creation time, which come from the clock)."""
    digest = hashlib.sha256()
    for sql in ("SELECT * FROM bugs ORDER BY id", "SELECT * FROM comments ORDER BY id",
                "SELECT * FROM bug_cc ORDER BY rowid", "SELECT * FROM bug_activity ORDER BY id",
                "SELECT * FROM attachment_data ORDER BY attachment_id",
                "SELECT id, login, real_name, disabled_text FROM users ORDER BY id"):
        for row in rows(path, sql):
            digest.update(repr(row).encode())
    return digest.hexdigest()


def test_same_seed_gives_same_data_and_existing_file_is_kept(tmp_path):
    first, second, other = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "c.sqlite"
    seeding.seed(first, 120, seed_value=3, jobs=1, out=_Null())
    seeding.seed(second, 120, seed_value=3, jobs=2, out=_Null())
    seeding.seed(other, 120, seed_value=4, jobs=1, out=_Null())
    assert table_digest(first) == table_digest(second)
    assert table_digest(first) != table_digest(other)
    with pytest.raises(FileExistsError):
        seeding.seed(first, 10, out=_Null())
    assert rows(first, "SELECT COUNT(*) FROM bugs")[0][0] == 120


def test_main_refuses_an_existing_file_without_force(tmp_path, capsys):
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"")
    assert seeding.main(["--bugs", "5", "--db", str(path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert seeding.main(["--bugs", "5", "--db", str(path), "--force", "--jobs", "1"]) == 0
    assert rows(path, "SELECT COUNT(*) FROM bugs")[0][0] == 5


@pytest.fixture
def client_and_keys(seeded, tmp_path):
    """The service over a copy of the seeded database, with API keys of the
    administrator (in every group) and of a plain account in no bug group."""
    source, _ = seeded
    path = tmp_path / "copy.sqlite"
    src, dst = sqlite3.connect(str(source)), sqlite3.connect(str(path))
    src.backup(dst)
    src.close()
    dst.close()
    db = open_database(path)
    now = datetime.now(timezone.utc)
    with db.transaction(write=True) as conn:
        plain = conn.execute(
            "SELECT u.id FROM users u WHERE u.disabled_text = '' AND u.id > 1 AND NOT EXISTS"
            " (SELECT 1 FROM user_groups ug JOIN groups g ON g.id = ug.group_id WHERE"
            " ug.user_id = u.id AND g.name IN ('security', 'insiders')) ORDER BY u.id"
            " LIMIT 1").fetchone()[0]
        keys = {"admin": auth.create_api_key(conn, 1, "test", now)[1],
                "plain": auth.create_api_key(conn, plain, "test", now)[1]}
    client = testing.TestClient(create_app(Config(database=str(path)), db=db))
    client.plain_id = plain
    yield client, keys, path
    db.close()


def test_service_reads_seeded_bugs_and_hides_restricted_ones(client_and_keys):
    client, keys, path = client_and_keys
    # A restricted bug the plain account has no part in (reporter, assignee, QA, CC).
    restricted = rows(path, "SELECT b.id FROM bugs b JOIN bug_groups g ON g.bug_id = b.id"
                            " WHERE ? NOT IN (b.reporter, b.assigned_to, coalesce(b.qa_contact, 0))"
                            " AND NOT EXISTS (SELECT 1 FROM bug_cc c WHERE c.bug_id = b.id"
                            " AND c.user_id = ?) ORDER BY b.id LIMIT 1",
                      (client.plain_id, client.plain_id))[0][0]
    public = rows(path, "SELECT MIN(id) FROM bugs b WHERE NOT EXISTS"
                        " (SELECT 1 FROM bug_groups g WHERE g.bug_id = b.id)")[0][0]
    answer = client.simulate_get(f"/rest/bug/{public}")
    assert answer.status_code == 200
    assert answer.json["bugs"][0]["id"] == public
    for who in (None, "plain"):
        params = {"Bugzilla_api_key": keys[who]} if who else {}
        hidden = client.simulate_get(f"/rest/bug/{restricted}", params=params)
        assert hidden.json.get("code") == 102, who
    shown = client.simulate_get(f"/rest/bug/{restricted}",
                                params={"Bugzilla_api_key": keys["admin"]})
    assert shown.status_code == 200 and shown.json["bugs"][0]["id"] == restricted


def test_private_comments_are_shown_to_insiders_only(client_and_keys):
    client, keys, path = client_and_keys
    bug_id, private_count = rows(
        path, "SELECT c.bug_id, c.count FROM comments c WHERE c.is_private = 1 AND NOT EXISTS"
              " (SELECT 1 FROM bug_groups g WHERE g.bug_id = c.bug_id) ORDER BY c.id LIMIT 1")[0]
    counts = {}
    for who in (None, "plain", "admin"):
        params = {"Bugzilla_api_key": keys[who]} if who else {}
        answer = client.simulate_get(f"/rest/bug/{bug_id}/comment", params=params)
        assert answer.status_code == 200
        counts[who] = [c["count"] for c in answer.json["bugs"][str(bug_id)]["comments"]]
    assert private_count not in counts[None] and private_count not in counts["plain"]
    assert private_count in counts["admin"]
