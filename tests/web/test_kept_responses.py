"""Whole answers to GET /rest/bug/{id} kept by request
(web/rest/kept_responses.py): the same request with the same API key is
answered again without the Runner while the generations stand, and after
every kind of change (through the API, or written straight into the tables)
the answer is the one the Runner makes anew; no caller is given another's
answer; a revoked key or a disabled account is refused at once; the key's
use is recorded each minute; requests whose answer may depend on more are
always served by the Runner. Both engines."""

import dataclasses
import logging

import pytest
from falcon import testing
from freezegun import freeze_time

from bug_changes import CALLERS, CHANGES, INSIDER, MEMBER, PAM, PAT, TIMER
from bug_rows import ADMIN
from bugsvc.api import limits
from bugsvc.api.runner import Runner
from bugsvc.app import create_app
from bugsvc.web.rest import kept_responses


@pytest.fixture
def world(callers_world):
    """bug_changes' world: {name: bug id} of the four bugs."""
    return callers_world


@pytest.fixture
def keys(services, world):
    """{login: an API key of it} for every caller with an account."""
    return {who: services.api_key(who) for who in CALLERS if who is not None}


@pytest.fixture
def runs(monkeypatch):
    """The operations the Runner ran, by name, in order."""
    ran = []
    run = Runner.run

    def counting(self, operation, *args, **kwargs):
        ran.append(operation.name)
        return run(self, operation, *args, **kwargs)
    monkeypatch.setattr(Runner, "run", counting)
    return ran


def write(services, sql):
    """`sql` run straight on the tables (no bugsvc code runs)."""
    with services.db.transaction(write=True) as conn:
        conn.execute(sql)


def get(client, key, bug_id, **headers):
    """(status, JSON body, headers without Date) of GET /rest/bug/{bug_id}."""
    resp = client.simulate_get(f"/rest/bug/{bug_id}",
                               headers={"X-BUGZILLA-API-KEY": key, **headers})
    shown = {name: value for name, value in resp.headers.items() if name.lower() != "date"}
    return resp.status_code, resp.json, shown


def every_bug(client, key, world):
    """get() of each bug of the world, in order."""
    return [get(client, key, bug_id) for bug_id in world.values()]


def made_anew(client, key, world):
    """every_bug() as the Runner makes them (a request with If-None-Match
    is never answered from the kept ones), the ETag apart."""
    return [get(client, key, bug_id, **{"If-None-Match": '"none"'}) for bug_id in world.values()]


def test_the_same_request_is_answered_again_without_the_runner(client, world, keys, runs):
    first = get(client, keys[PAT], world["open"])
    assert runs == ["Bug.get"]
    assert first[0] == 200 and first[1]["bugs"][0]["id"] == world["open"]
    again = [get(client, keys[PAT], world["open"]) for _ in range(3)]
    assert again == [first] * 3
    assert runs == ["Bug.get"]
    # Made anew by the Runner, it is the same answer.
    assert get(client, keys[PAT], world["open"], **{"If-None-Match": '"x"'}) == first
    assert runs == ["Bug.get"] * 2


@pytest.mark.parametrize("change", CHANGES)
def test_after_every_kind_of_change_the_answer_is_made_anew(services, client, world, keys,
                                                            runs, change):
    who, write = CHANGES[change]
    key = keys[who or PAM]
    # Within one minute (a key's first request of a minute is served anew).
    with freeze_time("2026-03-04 05:06:07", tick=True):
        before = every_bug(client, key, world)
        assert every_bug(client, key, world) == before
        kept_runs = len(runs)
        assert every_bug(client, key, world) == before
        # Every answer given is kept; each refusal is made anew.
        assert len(runs) - kept_runs == sum(status != 200 for status, _, _ in before)
    write(services, world)
    after = every_bug(client, key, world)
    assert after == made_anew(client, key, world)
    assert every_bug(client, key, world) == after


def test_no_caller_is_given_an_answer_kept_for_another(client, world, keys):
    """Each caller's own answers, asked in turn and again, are those the
    Runner makes for it: the staff bug is refused to PAM and PAT after
    MEMBER's answer was kept, PAT's own restricted bug is refused to PAM."""
    callers = [PAT, PAM, MEMBER, INSIDER, TIMER, ADMIN]
    for _ in range(2):
        for who in callers:
            assert every_bug(client, keys[who], world) == made_anew(client, keys[who], world)
    assert get(client, keys[MEMBER], world["staff"])[0] == 200
    assert get(client, keys[PAM], world["staff"])[0] == 401
    assert get(client, keys[PAT], world["staff"])[0] == 401
    assert get(client, keys[PAT], world["reported"])[0] == 200
    assert get(client, keys[PAM], world["reported"])[0] == 401


def test_a_revoked_key_is_refused_at_once(services, client, world, keys):
    assert get(client, keys[MEMBER], world["staff"])[0] == 200
    assert get(client, keys[MEMBER], world["staff"])[0] == 200
    write(services, "UPDATE api_keys SET revoked = 1")
    status, body, _ = get(client, keys[MEMBER], world["staff"])
    assert (status, body["code"]) == (400, 306)


def test_a_disabled_account_is_refused_at_once(services, client, world, keys):
    assert get(client, keys[MEMBER], world["staff"])[0] == 200
    assert get(client, keys[MEMBER], world["staff"])[0] == 200
    write(services, f"UPDATE users SET disabled_text = 'Gone' WHERE login = '{MEMBER}'")
    status, body, _ = get(client, keys[MEMBER], world["staff"])
    assert (status, body["code"]) == (401, 301) and "Gone" in body["message"]


def test_the_key_use_is_recorded_each_minute(services, client, world, keys, runs):
    """A key's first request of a minute is served by the Runner (which
    records the key's use, once a minute); its answers kept before are
    given again after it (the use's write moves no generation, on
    PostgreSQL either: schema.sql's bug writes)."""

    def last_used():
        return services.query("SELECT last_used FROM api_keys k JOIN users u ON u.id = k.user_id"
                              " WHERE u.login = ?", (PAT,))[0][0]
    with freeze_time("2026-03-04 05:06:07"):
        get(client, keys[PAT], world["open"])
        get(client, keys[PAT], world["other"])
    assert last_used().startswith("2026-03-04 05:06")
    with freeze_time("2026-03-04 05:06:59"):
        get(client, keys[PAT], world["open"])
        get(client, keys[PAT], world["other"])
    assert runs == ["Bug.get"] * 2
    with freeze_time("2026-03-04 05:07:01"):
        get(client, keys[PAT], world["other"])
        get(client, keys[PAT], world["open"])
        get(client, keys[PAT], world["other"])
        get(client, keys[PAT], world["open"])
    assert runs == ["Bug.get"] * 3
    assert last_used().startswith("2026-03-04 05:07")
    # Another key's first request of the minute is its own.
    with freeze_time("2026-03-04 05:07:30"):
        get(client, keys[PAM], world["open"])
        get(client, keys[PAM], world["open"])
        get(client, keys[PAM], world["open"])
    assert runs == ["Bug.get"] * 4


@pytest.mark.parametrize("variant", [
    {"params": {"api_key": "{key}"}, "headers": {}},
    {"params": {"Bugzilla_api_key": "{key}"}, "headers": {}},
    {"params": {"login": "pat@example.com", "password": "nope"}, "headers": {"key": True}},
    {"params": {}, "headers": {"key": True, "X-BUGZILLA-LOGIN": PAT}},
    {"params": {}, "headers": {"key": True, "Authorization": "Bearer {key}"}},
    {"params": {}, "headers": {"key": True, "If-None-Match": '"x"'}},
])
def test_requests_whose_answer_may_depend_on_more_are_always_run(client, world, keys, runs,
                                                                 variant):
    key = keys[PAT]
    params = {name: value.format(key=key) for name, value in variant["params"].items()}
    headers = {name: value.format(key=key) for name, value in variant["headers"].items()
               if name != "key"}
    if variant["headers"].get("key"):
        headers["X-BUGZILLA-API-KEY"] = key
    for _ in range(3):
        client.simulate_get(f"/rest/bug/{world['open']}", params=params, headers=headers)
    assert runs == ["Bug.get"] * 3


def test_answers_that_are_not_kept_objects_are_always_run(client, world, keys, runs):
    """A field choice, tags, an error: made by the Runner each time."""
    for params in ({"include_fields": "tags"}, {"include_fields": "id,duplicates"}):
        for _ in range(2):
            resp = client.simulate_get(f"/rest/bug/{world['open']}", params=params,
                                       headers={"X-BUGZILLA-API-KEY": keys[PAT]})
            assert resp.status_code == 200
    for _ in range(2):
        assert get(client, keys[PAM], world["staff"])[0] == 401
    assert runs == ["Bug.get"] * 6


def test_a_kept_answer_has_its_access_line(client, world, keys, caplog):
    get(client, keys[PAT], world["open"])
    with caplog.at_level(logging.INFO, logger="bugsvc.access"):
        get(client, keys[PAT], world["open"])
    assert any(f'"GET /rest/bug/{world["open"]}" 200' in record.getMessage()
               for record in caplog.records if record.name == "bugsvc.access")


def test_no_answer_is_kept_while_rate_limits_count_calls(config, db, world, keys, runs):
    limited = dataclasses.replace(config, rate_limits=limits.parse_rules("1000/hour"))
    client = testing.TestClient(create_app(limited, db=db))
    for _ in range(3):
        assert get(client, keys[PAT], world["open"])[0] == 200
    assert runs == ["Bug.get"] * 3


def test_kept_answers_are_bounded(config, db, world, keys, runs, monkeypatch):
    """At most MAX_ENTRIES answers: the least recently used go first."""
    monkeypatch.setattr(kept_responses, "MAX_ENTRIES", 2)
    client = testing.TestClient(create_app(config, db=db))
    for bug_id in (world["open"], world["other"], world["staff"]):
        get(client, keys[MEMBER], bug_id)
    assert len(runs) == 3
    get(client, keys[MEMBER], world["staff"])
    get(client, keys[MEMBER], world["other"])
    assert len(runs) == 3
    get(client, keys[MEMBER], world["open"])
    assert len(runs) == 4


def test_kept_answers_are_counted_at_no_less_than_the_memory_they_take(config, db, services,
                                                                        world, monkeypatch):
    """The bound counts each answer's body and ENTRY_BYTES: no less than what
    the kept answers hold (tracemalloc), and the bodies are held at their
    length (not orjson's larger buffer)."""
    import gc
    import tracemalloc
    made = []
    init = kept_responses.KeptResponses.__init__

    def noting(self, *args):
        init(self, *args)
        made.append(self)
    monkeypatch.setattr(kept_responses.KeptResponses, "__init__", noting)
    client = testing.TestClient(create_app(config, db=db))
    keys = [services.api_key(ADMIN) for _ in range(30)]
    tracemalloc.start()
    try:
        for key in keys:
            for bug_id in world.values():
                assert get(client, key, bug_id)[0] == 200
        gc.collect()
        kept = made[0]._kept
        assert len(kept) == len(keys) * len(world)
        bodies = sum(len(entry[1][3]) for entry in kept._entries.values())
        held = tracemalloc.get_traced_memory()[0]
        kept._entries.clear()
        gc.collect()
        taken = held - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert bodies < taken <= bodies + len(keys) * len(world) * kept_responses.ENTRY_BYTES
