"""The process's copies of parameters, fields and the workflow (bugsvc/cache.py):
a change is seen by the very next call, whoever made it, and a change that
was rolled back is never kept."""

from datetime import datetime, timezone

from bug_support import file_bug
from bugsvc.accounts.caller import ANONYMOUS
from bugsvc.call.context import Context
from bugsvc.catalogue import settings
from bugsvc.store import cache, schema
from bugsvc.store.location import open_database


def set_param_elsewhere(db_path, name, value):
    """Change a parameter through a database object of its own, as the
    `parameters` command or another process (on this host or another) does."""
    elsewhere = open_database(db_path)
    try:
        with elsewhere.transaction(write=True) as conn:
            conn.execute("INSERT INTO params (name, value) VALUES (?, ?)"
                         " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                         (name, value))
    finally:
        elsewhere.close()


def test_parameter_changed_by_another_connection_applies_to_the_next_call(client, db_path,
                                                                          services):
    bug_id = file_bug(services)
    assert client.simulate_get(f"/rest/bug/{bug_id}").status_code == 200
    set_param_elsewhere(db_path, "requirelogin", "1")
    answer = client.simulate_get(f"/rest/bug/{bug_id}")
    assert (answer.status_code, answer.json["code"]) == (401, 410)
    set_param_elsewhere(db_path, "requirelogin", "0")
    assert client.simulate_get(f"/rest/bug/{bug_id}").status_code == 200


def test_parameter_changed_through_the_api_applies_to_the_next_call(client, admin_key, services):
    bug_id = file_bug(services)
    reporter = client.simulate_get(f"/rest/bug/{bug_id}").json["bugs"][0]["creator"]
    assert "@" in reporter
    changed = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                  json={"webservice_email_filter": 1})
    assert changed.status_code == 200, changed.json
    hidden = client.simulate_get(f"/rest/bug/{bug_id}").json["bugs"][0]["creator"]
    assert hidden == reporter.split("@")[0]


def test_new_custom_field_shows_on_bugs_at_once(client, admin_key, services):
    bug_id = file_bug(services)
    assert "cf_build" not in client.simulate_get(f"/rest/bug/{bug_id}").json["bugs"][0]
    created = client.simulate_post("/rest/field/bug", params={"Bugzilla_api_key": admin_key},
                                   json={"name": "cf_build", "display_name": "Build",
                                         "type": 1})
    assert created.status_code == 201, created.json
    assert client.simulate_get(f"/rest/bug/{bug_id}").json["bugs"][0]["cf_build"] == ""


def _context(conn, catalog, writes):
    return Context(conn=conn, caller=ANONYMOUS, now=datetime.now(timezone.utc),
                   catalog=catalog, catalog_generation=cache.generation(conn), writes=writes,
                   load_parameters=settings.load)


def test_a_change_rolled_back_is_never_kept(db):
    catalog = cache.CatalogCache()
    with db.transaction() as conn:
        before = _context(conn, catalog, writes=False).param("maintainer")
    assert before != "x@example.com"
    try:
        with db.transaction(write=True) as conn:
            ctx = _context(conn, catalog, writes=True)
            conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'x@example.com')"
                         " ON CONFLICT (name) DO UPDATE SET value = excluded.value")
            ctx.forget_params()
            assert ctx.param("maintainer") == "x@example.com"     # its own change, read afresh
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    with db.transaction() as conn:
        assert _context(conn, catalog, writes=False).param("maintainer") == before


def test_copies_are_reused_within_a_generation(db):
    catalog = cache.CatalogCache()
    loads = []

    def load(conn):
        loads.append(1)
        return settings.load(conn)

    for _ in range(3):
        with db.transaction() as conn:
            _context(conn, catalog, writes=False).cached("params", load)
    assert len(loads) == 1
    with db.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'y@example.com')"
                     " ON CONFLICT (name) DO UPDATE SET value = excluded.value")
    with db.transaction() as conn:
        assert _context(conn, catalog, writes=False).cached("params", load)["maintainer"] \
            == "y@example.com"
    assert len(loads) == 2


def test_version_1_database_gets_the_generation_counter(tmp_path):
    path = tmp_path / "v1.sqlite"
    database = open_database(path)
    database.initialize()
    conn = database.connection()
    # Back to what version 1 stored: no counter, no triggers.
    for name, kind in conn.execute("SELECT name, type FROM sqlite_master"
                                   " WHERE name LIKE '%generation%'").fetchall():
        if kind == "trigger":
            conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE catalog_generation")
    conn.execute("PRAGMA user_version = 1")
    database.close()

    migrated = open_database(path)
    assert migrated.initialize() is False
    assert migrated.version() == schema.SCHEMA_VERSION >= 2
    with migrated.transaction(write=True) as conn:
        before = cache.generation(conn)
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'z@example.com')")
        assert cache.generation(conn) == before + 1
    migrated.close()


def _generation_reads(statements):
    return sum(1 for sql in statements if sql.startswith("SELECT value FROM catalog_generation"))


def test_a_write_reads_the_generation_again_only_once_it_wrote(db):
    """A write call's copies are its catalogue's while it has written
    nothing (the generation moves only with a write); after each write it
    looks once, and once it changed the catalogue it reads afresh."""
    catalog = cache.CatalogCache()
    with db.transaction() as conn:
        before = _context(conn, catalog, writes=False).param("maintainer")
    loads = []

    def load(conn):
        loads.append(1)
        return settings.load(conn)

    statements = []
    try:
        with db.transaction(write=True) as conn:
            ctx = _context(conn, catalog, writes=True)
            ctx.catalog_checked_at = conn.writes_so_far()
            conn.set_trace_callback(statements.append)
            for _ in range(3):
                assert ctx.cached("params", load)["maintainer"] == before
            assert (_generation_reads(statements), len(loads)) == (0, 0)    # the kept copy
            conn.execute("UPDATE users SET real_name = real_name || '.' WHERE id = 1")
            for _ in range(3):
                assert ctx.cached("params", load)["maintainer"] == before
            assert (_generation_reads(statements), len(loads)) == (1, 0)    # looked once
            conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'w@example.com')"
                         " ON CONFLICT (name) DO UPDATE SET value = excluded.value")
            for _ in range(2):
                assert ctx.cached("params", load)["maintainer"] == "w@example.com"
            assert (_generation_reads(statements), len(loads)) == (2, 2)    # its own, afresh
            conn.set_trace_callback(None)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    with db.transaction() as conn:
        assert _context(conn, catalog, writes=False).param("maintainer") == before


def test_writes_so_far_moves_with_each_write_and_never_with_a_read(db):
    with db.transaction(write=True) as conn:
        start = conn.writes_so_far()
        conn.execute("SELECT value FROM params WHERE name = 'maintainer'").fetchall()
        conn.execute("SELECT COUNT(*) FROM users").fetchone()
        assert conn.writes_so_far() == start
        conn.execute("UPDATE users SET real_name = real_name WHERE id = 1")
        after_update = conn.writes_so_far()
        assert after_update > start
        conn.execute("INSERT INTO params (name, value) VALUES ('maintainer', 'v@example.com')"
                     " ON CONFLICT (name) DO UPDATE SET value = excluded.value")
        assert conn.writes_so_far() > after_update
