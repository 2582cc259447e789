"""Generations a read call assumes (store/cache.py, Generations): where a
statement is a round trip (PostgreSQL), a read call takes the catalog and
credential generations its process last read instead of reading them
first, and checks them with its first statement. A keyed GET of a kept bug
is then one statement; a change another process made (a revoked key, a
membership taken away, a parameter) is seen by the very next call all the
same, on both engines, the call being tried once more when what it
assumed was not so."""

import pytest

from bug_changes import MEMBER, PAT
from bug_rows import set_param, user_id
from bugsvc.store import cache
from bugsvc.store.regexp import regexp_budget
from rpc_support import xmlrpc_call


@pytest.fixture
def world(callers_world):
    """bug_changes' world: {name: bug id} of the four bugs."""
    return callers_world


@pytest.fixture
def moved(monkeypatch):
    """How many times a call found its assumed generations moved (each
    such call is tried once more)."""
    count = []
    real = cache.Generations._check

    def counting(self, catalog, credential):
        try:
            real(self, catalog, credential)
        except cache.GenerationsMoved:
            count.append((catalog, credential))
            raise
    monkeypatch.setattr(cache.Generations, "_check", counting)
    return count


@pytest.fixture
def statements(monkeypatch):
    """The statements this process sends PostgreSQL from now on (each a
    round trip, or one of a pipeline), as their text (BEGIN and COMMIT
    too); one run on its own
    with its time limit (a search's, ahead of its transaction) as
    "alone: " and its text."""
    import psycopg

    from bugsvc.store.postgres import connection
    sent = []
    for cls in (psycopg.Connection, psycopg.Cursor):
        real = cls.execute

        def noted(self, statement, *args, real=real, **kwargs):
            sent.append(str(statement))
            return real(self, statement, *args, **kwargs)
        monkeypatch.setattr(cls, "execute", noted)
    simple = connection._run_simple

    def noted_simple(raw, statement):
        sent.append(statement)
        return simple(raw, statement)
    monkeypatch.setattr(connection, "_run_simple", noted_simple)
    alone = connection.run_bounded_alone

    def noted_alone(raw, statement, *args):
        sent.append(f"alone: {statement}")
        return alone(raw, statement, *args)
    monkeypatch.setattr(connection, "run_bounded_alone", noted_alone)
    return sent


def _write(services, sql, args=()):
    with services.db.transaction(write=True) as conn:
        conn.execute(sql, args)


@pytest.mark.engine("postgresql")
def test_a_keyed_get_of_a_kept_bug_is_one_statement(services, world, client, statements):
    """The bug's revision, whether the caller may see it and the two
    generations the call assumed: one statement, no BEGIN, no COMMIT; it
    carries the snapshot (the bug generation) too, and once everything the
    answer is made of was read at the newest snapshot the process saw, the
    one statement reads only the generations and the snapshot. At a new
    snapshot the bug's stamp is read again, and when the bug changed its
    object is made by one statement more (still no transaction): the
    answer is the new one."""
    # If-None-Match: served by the Runner each time, not from the answers
    # kept by request (web/rest/kept_responses.py).
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT), "If-None-Match": '"none"'}
    path = f"/rest/bug/{world['open']}"
    first = client.simulate_get(path, headers=headers)
    statements.clear()
    assert client.simulate_get(path, headers=headers).json == first.json
    assert len(statements) == 1
    assert "catalog_generation" in statements[0] and "credential_generation" in statements[0]
    assert "pg_current_snapshot" in statements[0] and "bug_revisions" not in statements[0]
    _write(services, "UPDATE bugs SET summary = 'Renamed by hand' WHERE id = ?", (world["open"],))
    statements.clear()
    renamed = client.simulate_get(path, headers=headers).json
    assert renamed["bugs"][0]["summary"] == "Renamed by hand"
    assert renamed["bugs"][0]["update_token"] != first.json["bugs"][0]["update_token"]
    # The generations and snapshot (moved), the bug's stamp read ahead (its
    # kept object is of an older revision), then the bug read and made by
    # one statement ahead too: no transaction.
    reading = [text for text in statements if "bug_revisions" in text]
    assert len(reading) == 2 and all("pg_current_snapshot" in text for text in reading)
    assert len(statements) == 3 and not [text for text in statements if "BEGIN" in text]
    statements.clear()
    assert client.simulate_get(path, headers=headers).json == renamed
    assert len(statements) == 1 and "bug_revisions" not in statements[0]


def test_a_key_revoked_by_another_process_is_refused_on_the_next_call(
        services, world, client, moved, backend):
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    path = f"/rest/bug/{world['open']}"
    for _ in range(2):
        assert client.simulate_get(path, headers=headers).status_code == 200
    assert client.simulate_get("/rest/whoami", headers=headers).status_code == 200
    _write(services, "UPDATE api_keys SET revoked = 1 WHERE user_id = ?",
           (user_id(services, PAT),))
    refused = client.simulate_get(path, headers=headers)
    assert (refused.status_code, refused.json["code"]) == (400, 306)
    assert len(moved) == (1 if backend == "postgresql" else 0)
    # A call that runs no statement of its own checks what it assumed too.
    _write(services, "UPDATE api_keys SET revoked = 0 WHERE user_id = ?",
           (user_id(services, PAT),))
    assert client.simulate_get("/rest/whoami", headers=headers).json["name"] == PAT
    _write(services, "UPDATE api_keys SET revoked = 1 WHERE user_id = ?",
           (user_id(services, PAT),))
    refused = client.simulate_get("/rest/whoami", headers=headers)
    assert (refused.status_code, refused.json["code"]) == (400, 306)


def test_a_membership_taken_away_hides_the_bug_on_the_next_call(
        services, world, client, moved, backend):
    headers = {"X-BUGZILLA-API-KEY": services.api_key(MEMBER)}
    path = f"/rest/bug/{world['staff']}"
    for _ in range(2):
        assert client.simulate_get(path, headers=headers).json["bugs"][0]["id"] == world["staff"]
    _write(services, "DELETE FROM user_groups WHERE user_id = ?", (user_id(services, MEMBER),))
    denied = client.simulate_get(path, headers=headers)
    assert (denied.status_code, denied.json["code"]) == (401, 102)
    assert len(moved) == (1 if backend == "postgresql" else 0)


def test_a_membership_taken_away_hides_a_bug_the_process_never_showed(
        services, world, client, moved, backend):
    """The bug's object made by the one statement that carries the
    generations (no object kept): the move is found there, the call tried
    again, and the bug refused."""
    headers = {"X-BUGZILLA-API-KEY": services.api_key(MEMBER)}
    for _ in range(2):
        assert client.simulate_get(f"/rest/bug/{world['open']}", headers=headers).status_code == 200
    _write(services, "DELETE FROM user_groups WHERE user_id = ?", (user_id(services, MEMBER),))
    denied = client.simulate_get(f"/rest/bug/{world['staff']}", headers=headers)
    assert (denied.status_code, denied.json["code"]) == (401, 102)
    assert len(moved) == (1 if backend == "postgresql" else 0)


def test_a_parameter_set_by_another_process_rules_the_next_call(
        services, world, client, moved, backend):
    """An anonymous call too: requirelogin turned on elsewhere refuses it
    at once, though the answer it assumed would have been given."""
    path = f"/rest/bug/{world['open']}"
    for _ in range(2):
        assert client.simulate_get(path).status_code == 200
    set_param(services, "requirelogin", "1")
    refused = client.simulate_get(path)
    assert (refused.status_code, refused.json["code"]) == (401, 410)
    assert len(moved) == (1 if backend == "postgresql" else 0)


def test_generations_assumed_are_checked_before_the_first_statement_or_carried(db):
    """Unit: assumed values are given without a read; the first statement
    reads them first (outside a search's time budget) unless it carried
    them; values that moved raise GenerationsMoved."""
    with db.transaction() as conn:
        actual = cache.Generations(conn)
        now = (actual.catalog, actual.credential)
    seen_values = []
    with db.transaction() as conn:
        seen = cache.Generations(conn, now, lambda *values: seen_values.append(values))
        assert (seen.catalog, seen.credential) == now
        assert seen.unconfirmed == db.dialect.statements_are_round_trips
        with regexp_budget(seconds=2, per_value=0):
            conn.execute("SELECT 1").fetchone()
        assert not seen.unconfirmed and seen_values == [now]
    stale = (now[0], now[1] - 1)
    with db.transaction() as conn:
        if db.dialect.statements_are_round_trips:
            seen = cache.Generations(conn, stale)
            with pytest.raises(cache.GenerationsMoved):
                conn.execute("SELECT 1")
        else:
            with pytest.raises(cache.GenerationsMoved):
                cache.Generations(conn, stale)
    if not db.dialect.statements_are_round_trips:
        return
    with db.transaction() as conn:
        seen = cache.Generations(conn, stale)
        columns = seen.carried()
        row = conn.execute(f"SELECT {columns}").fetchone()
        with pytest.raises(cache.GenerationsMoved):
            seen.confirm(row[0], row[1])
        seen.settle()                           # checked already: nothing read again


@pytest.mark.engine("postgresql")
def test_a_search_made_anew_carries_them_and_the_snapshot_in_its_own_statement(
        services, world, client, statements):
    """The search's statement carries the generations and the snapshot
    (the bug generation), and runs ahead of the transaction with its time
    limit: at a snapshot the process saw, the revisions of the bugs it
    found are taken as read then, and the call is that one round trip (no
    BEGIN, no COMMIT); at a new one the transaction begins, reads the
    generations again (they still stand) and then the revisions, and the
    answer is the new one."""
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    query = {"product": "TestProduct", "status": ["CONFIRMED", "IN_PROGRESS"],
             "status_type": "anyexact", "limit": "50"}
    first = client.simulate_get("/rest/bug", params=query, headers=headers).json
    assert {bug["id"] for bug in first["bugs"]} >= {world["open"], world["other"]}
    statements.clear()
    assert client.simulate_get("/rest/bug", params=query, headers=headers).json == first
    assert len(statements) == 1 and statements[0].startswith("alone: ")
    assert "catalog_generation" in statements[0] and "pg_current_snapshot" in statements[0]
    assert "ORDER BY" in statements[0]
    _write(services, "UPDATE bugs SET summary = 'Renamed by hand' WHERE id = ?",
           (world["other"],))
    statements.clear()
    after = client.simulate_get("/rest/bug", params=query, headers=headers).json
    assert statements[0].startswith("alone: ") and statements[1].startswith("BEGIN")
    assert "catalog_generation" in statements[2] and "ORDER BY" not in statements[2]
    assert len([text for text in statements if "bug_revisions" in text]) == 1
    assert statements[-1] == "COMMIT"
    assert "Renamed by hand" in [bug["summary"] for bug in after["bugs"]]


# What changes between a search's statement run ahead of its transaction
# and the transaction: (the caller, the change, the bug it takes out of
# the search's answer).
_MEANWHILE = {
    "a bug leaves the statuses": (
        PAT, "UPDATE bugs SET status = 'RESOLVED', resolution = 'FIXED' WHERE id = {other}",
        "other"),
    "the caller leaves the group": (MEMBER, "DELETE FROM user_groups WHERE user_id = {member}",
                                    "staff"),
}


def _search_by_rest(client, key, query):
    return client.simulate_get("/rest/bug", params=query,
                               headers={"X-BUGZILLA-API-KEY": key}).json["bugs"]


def _search_by_xmlrpc(client, key, query):
    found, fault = xmlrpc_call(client, "Bug.search", dict(query, Bugzilla_api_key=key))
    assert fault is None
    return found["bugs"]


@pytest.mark.engine("postgresql")
@pytest.mark.parametrize("search", [_search_by_rest, _search_by_xmlrpc],
                         ids=["REST", "XML-RPC"])
@pytest.mark.parametrize("change", list(_MEANWHILE))
def test_a_search_ahead_of_its_transaction_is_made_again_when_things_moved_meanwhile(
        services, world, client, statements, monkeypatch, change, search):
    """A search's statement that ran ahead of the transaction saw a
    snapshot of its own. When the call reads more (bugs whose objects the
    process has not made), the transaction first reads the generations
    again: a bug or a membership changed in between has the call made
    again from the start, and the answer is all of one snapshot (without
    the bug the change took out: one the caller may no longer see too),
    whichever way the search came in."""
    login, sql, gone = _MEANWHILE[change]
    headers = {"X-BUGZILLA-API-KEY": services.api_key(login)}
    query = {"product": "TestProduct", "status": ["CONFIRMED", "IN_PROGRESS"],
             "status_type": "anyexact", "limit": "50"}
    assert client.simulate_get(f"/rest/bug/{world['open']}", headers=headers).status_code == 200
    # A search that finds nothing: what every search reads of the
    # catalogue is read (the next search's statement is its first).
    nothing = dict(query, status=["VERIFIED"])
    assert client.simulate_get("/rest/bug", params=nothing, headers=headers).json["bugs"] == []
    confirm_ahead = cache.Generations.confirm_ahead
    meanwhile = []

    def then_a_change(self, *carried):
        confirm_ahead(self, *carried)
        if not meanwhile:
            meanwhile.append(carried)
            _write(services, sql.format(other=world["other"],
                                        member=user_id(services, MEMBER)))
    monkeypatch.setattr(cache.Generations, "confirm_ahead", then_a_change)
    statements.clear()
    found = search(client, headers["X-BUGZILLA-API-KEY"], query)
    assert len(meanwhile) == 1
    assert world["open"] in [bug["id"] for bug in found]
    assert world[gone] not in [bug["id"] for bug in found]
    assert {bug["status"] for bug in found} <= {"CONFIRMED", "IN_PROGRESS"}
    # Ahead once; made again in a transaction, the search's statement in it.
    assert len([text for text in statements if text.startswith("alone: ")]) == 1
    assert len([text for text in statements if "b.product_id IN" in text]) == 2
    assert search(client, headers["X-BUGZILLA-API-KEY"], query) == found


def test_a_search_that_fails_after_a_move_gives_its_own_error(
        services, world, client, moved, backend):
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    assert client.simulate_get(f"/rest/bug/{world['open']}", headers=headers).status_code == 200
    set_param(services, "insidergroup", "")
    wrong = {"f1": "short_desc", "o1": "regexp", "v1": "(unclosed"}
    refused = client.simulate_get("/rest/bug", params=wrong, headers=headers)
    assert (refused.status_code, refused.json["code"]) == (400, 32000)
    assert len(moved) == (1 if backend == "postgresql" else 0)


@pytest.mark.engine("postgresql")
def test_a_failure_that_ended_the_transaction_is_checked_apart(db):
    """A call whose statement failed (the transaction can read no more)
    has what it assumed read in a transaction of its own: moved, it is
    tried again; as assumed, its own error goes on."""
    import psycopg

    from bugsvc.call.unit_of_work import _settle_failed
    with db.transaction() as conn:
        actual = cache.Generations(conn)
        now = (actual.catalog, actual.credential)
    for assumed, outcome in ((now, psycopg.errors.DivisionByZero),
                             ((now[0] - 1, now[1]), cache.GenerationsMoved)):
        with pytest.raises(outcome):
            with db.transaction() as conn:
                seen = cache.Generations(conn, assumed)
                try:
                    with seen.checked_later():
                        conn.execute("SELECT 1 / 0")
                except BaseException as failure:
                    _settle_failed(db, seen, failure)
                    raise


def _comment(client, headers, bug_id, text):
    return client.simulate_post(f"/rest/bug/{bug_id}/comment", json={"comment": text},
                                headers=headers)


@pytest.mark.engine("postgresql")
def test_a_comment_carries_them_in_its_one_statement(services, world, client, statements):
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    assert _comment(client, headers, world["open"], "First").status_code == 201
    statements.clear()
    assert _comment(client, headers, world["open"], "Second").status_code == 201
    carrying = [text for text in statements if "catalog_generation" in text]
    assert len(carrying) == 1 and carrying[0].startswith("WITH touched AS (UPDATE bugs")


def test_a_comment_after_its_author_lost_the_group_is_refused_and_stores_nothing(
        services, world, client, moved, backend):
    headers = {"X-BUGZILLA-API-KEY": services.api_key(MEMBER)}
    assert _comment(client, headers, world["staff"], "Seen").status_code == 201
    _write(services, "DELETE FROM user_groups WHERE user_id = ?", (user_id(services, MEMBER),))
    denied = _comment(client, headers, world["staff"], "Not seen")
    assert (denied.status_code, denied.json["code"]) == (401, 102)
    assert len(moved) == (1 if backend == "postgresql" else 0)
    assert [row[0] for row in services.query(
        "SELECT body FROM comments WHERE bug_id = ? AND count > 0 ORDER BY id",
        (world["staff"],))] == ["Seen"]
    assert services.query("SELECT COUNT(*) FROM outbox_events WHERE bug_id = ?",
                          (world["staff"],)) == [(1,)]


def test_every_way_in_sees_a_membership_taken_away_on_the_next_call(
        services, world, client, app, moved, backend):
    """XML-RPC with a key and the bug page of a signed-in member alike."""
    from page_support import Browser
    from rpc_support import xmlrpc_call
    key = services.api_key(MEMBER)
    services.add_user("paula@example.com", password="paula-password-1", groups=["staff"])
    browser = Browser(app)
    browser.login("paula@example.com", "paula-password-1")
    page = f"/show_bug.cgi?id={world['staff']}"
    for _ in range(2):
        found, fault = xmlrpc_call(client, "Bug.get", {"ids": [world["staff"]],
                                                       "Bugzilla_api_key": key})
        assert fault is None and found["bugs"][0]["id"] == world["staff"]
        assert browser.get(page).status_code == 200
    # Each way in meets a change of its own first.
    _write(services, "DELETE FROM user_groups WHERE user_id = ?",
           (user_id(services, "paula@example.com"),))
    hidden = browser.get(page)
    assert hidden.status_code == 401 and "Staff only" not in hidden.text
    _write(services, "DELETE FROM user_groups WHERE user_id = ?", (user_id(services, MEMBER),))
    assert xmlrpc_call(client, "Bug.get", {"ids": [world["staff"]],
                                           "Bugzilla_api_key": key}) == (None, 102)
    assert len(moved) == (2 if backend == "postgresql" else 0)


@pytest.mark.engine("postgresql")
def test_a_try_that_met_a_concurrent_one_leaves_no_check_behind(db, monkeypatch):
    """The connection a try ran on asks nothing more of what that try
    assumed once it failed in a way that has it run again anyway."""
    from bugsvc.call.unit_of_work import _settle_failed
    monkeypatch.setattr(type(db), "met_concurrent", lambda self, exc: True)
    with db.transaction() as conn:
        seen = cache.Generations(conn, (-1, -1))
        _settle_failed(db, seen, RuntimeError("a serialization failure"))
        assert conn.execute("SELECT 1").fetchone()[0] == 1     # no GenerationsMoved


@pytest.mark.engine("postgresql")
def test_after_a_statement_ahead_the_transaction_reads_the_generations_first(db):
    """Generations carried by a statement run ahead of the transaction
    (confirm_ahead) are read again by the transaction before its next
    statement, whatever asks for it (execute, or execute_ahead, which then
    finds the transaction begun and runs nothing ahead): moved meanwhile,
    GenerationsMoved."""
    from psycopg.pq import TransactionStatus
    with db.transaction() as conn:
        seen = cache.Generations(conn)
        now = (seen.catalog, seen.credential, seen.bug)
    with db.transaction() as conn:
        seen = cache.Generations(conn, now[:2])
        seen.confirm_ahead(*now)
        assert conn.raw.info.transaction_status == TransactionStatus.IDLE
        assert conn.execute_ahead("SELECT 1", ()) is None
        assert conn.raw.info.transaction_status == TransactionStatus.INTRANS
        assert conn.execute("SELECT 2").fetchone()[0] == 2
    for ask in ("execute", "execute_ahead"):
        with pytest.raises(cache.GenerationsMoved), db.transaction() as conn:
            seen = cache.Generations(conn, now[:2])
            seen.confirm_ahead(*now)
            _write_on(db, "UPDATE catalog_generation SET value = value + 1 WHERE id = 1")
            getattr(conn, ask)("SELECT 1", ())
        with db.transaction() as conn:
            seen = cache.Generations(conn)
            now = (seen.catalog, seen.credential, seen.bug)


def _write_on(db, sql):
    with db.separate_transaction(write=True) as conn:
        conn.execute(sql)
