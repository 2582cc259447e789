"""Search answers kept by a serving process (bugs/answer_cache.py): the
same search by the same caller is answered without searching, and after
every kind of change (through the API, or written straight into the tables
as the importer, a command or a repair by hand would) the answer is the one
a search made anew gives; no caller is ever given an answer kept for
another (anonymous, plain accounts, a member of a bug's group, an insider,
a time tracker). Both engines keep answers: SQLite by its bug generation
counter, PostgreSQL by its count of bug writes committed."""

import pytest

from bug_changes import (
    CALLERS,
    CHANGES,
    MEMBER,
    PAM,
    PAT,
    SEARCH,
    TIMER,
    change_is_seen,
)
from bug_rows import ADMIN, add_bug, add_personal_tag
from bugsvc.bugs import answer_cache, search as search_module
from bugsvc.bugs.answer_cache import AnswerCache
from bugsvc.call import encoding
from bugsvc.services import bug_search
from rpc_support import xmlrpc_call


@pytest.fixture
def world(callers_world):
    """bug_changes' world: {name: bug id} of the four bugs."""
    return callers_world


@pytest.fixture
def counted(monkeypatch):
    """The number of searches made (bugs/search.find called)."""
    made = []
    find = search_module.find

    def counting(ctx, params, count_only=False):
        made.append(dict(params))
        return find(ctx, params, count_only=count_only)
    monkeypatch.setattr(search_module, "find", counting)
    return made


def search(services, who, params=SEARCH):
    return services.call(bug_search.search, dict(params), as_user=who)


def made_anew(services, who, params=SEARCH):
    """The answer of the search made without any kept answer."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(answer_cache, "KEPT_PARAMS", frozenset())
        return search(services, who, params)


def ids(answer):
    return [bug["id"] for bug in answer["bugs"]]


def test_the_same_search_is_answered_without_searching(services, world, counted):
    first = search(services, PAT)
    assert search(services, PAT) == first
    assert len(counted) == 1
    assert ids(first) == sorted([world["open"], world["other"], world["reported"]])


@pytest.mark.engine("postgresql")
def test_a_kept_answer_costs_postgresql_no_transaction(services, world, client, counted,
                                                       begins_sent):
    """A search with an API key answered from the kept answers reads only
    the generations (the key's account is kept too), ahead of its read
    transaction's BEGIN: the server gets no BEGIN and no COMMIT for it."""
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    first = client.simulate_get("/rest/bug", params=SEARCH, headers=headers).json
    assert begins_sent                               # made: in a transaction
    begins_sent.clear()
    assert client.simulate_get("/rest/bug", params=SEARCH, headers=headers).json == first
    assert len(counted) == 1
    assert ids(first) == sorted([world["open"], world["other"], world["reported"]])
    assert begins_sent == []


def test_an_answer_with_a_field_choice_is_the_callers_to_change(services, world):
    chosen = dict(SEARCH, include_fields="id,summary,cc")
    for _ in range(2):
        answer = search(services, PAT, chosen)
        answer["bugs"][0]["summary"] = "changed by the caller"
        answer["bugs"][0]["cc"].append("someone")
        answer["bugs"].pop()
    assert search(services, PAT, chosen) == made_anew(services, PAT, chosen)


def test_no_way_in_changes_a_kept_answer(services, world, client):
    """Each way in, asked twice (the second answer from the kept one), is
    given the answer as made, whatever another did with its copy."""
    key = services.api_key(PAT)
    fresh = made_anew(services, PAT)
    rest = [client.simulate_get("/rest/bug", params=dict(SEARCH, api_key=key)).json
            for _ in range(2)]
    assert rest[0] == rest[1] == fresh
    for _ in range(2):
        answer, fault = xmlrpc_call(client, "Bug.search", dict(SEARCH, Bugzilla_api_key=key))
        assert fault is None and [bug["id"] for bug in answer["bugs"]] == ids(fresh)
        body = {"method": "Bug.search", "params": [dict(SEARCH, Bugzilla_api_key=key)],
                "id": 1}
        answer = client.simulate_post("/jsonrpc.cgi", json=body).json
        assert answer["result"] == fresh
    assert search(services, PAT) == fresh == made_anew(services, PAT)


@pytest.mark.parametrize("params", [
    dict(SEARCH, order="priority"), dict(SEARCH, creation_ts="-1d"),
    {"quicksearch": "crash"}, dict(SEARCH, count_only=1), dict(SEARCH, summary="open"),
    dict(SEARCH, product_type="substring")])
def test_searches_whose_answer_depends_on_more_are_made_anew(services, world, counted, params):
    assert search(services, ADMIN, params) == search(services, ADMIN, params)
    assert len(counted) == 2


def test_no_caller_is_given_an_answer_kept_for_another(services, world):
    fresh = {who: made_anew(services, who) for who in CALLERS}
    # Each caller's answer kept first, in one order, then asked for in the
    # other: each gets its own.
    for order in (CALLERS, tuple(reversed(CALLERS))):
        for who in order:
            assert search(services, who) == fresh[who], who
    assert ids(fresh[None]) == ids(fresh[PAM]) == sorted([world["open"], world["other"]])
    assert world["reported"] in ids(fresh[PAT])          # its reporter's, not PAM's
    assert ids(fresh[MEMBER]) == sorted(world.values())
    assert "estimated_time" in fresh[TIMER]["bugs"][0]
    assert "estimated_time" not in fresh[PAT]["bugs"][0]


def test_a_field_choice_is_kept_apart(services, world):
    narrow = dict(SEARCH, include_fields="id,summary")
    assert search(services, ADMIN, narrow) == made_anew(services, ADMIN, narrow)
    assert search(services, ADMIN) == made_anew(services, ADMIN)
    assert search(services, ADMIN, narrow) == made_anew(services, ADMIN, narrow)
    assert set(search(services, ADMIN, narrow)["bugs"][0]) == {"id", "summary"}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_after_each_kind_of_change_the_answer_is_made_anew(services, world, change):
    change_is_seen(services, world, change, search, made_anew)


def test_a_tag_of_the_callers_own_is_seen_at_once(services, world):
    tagged = dict(SEARCH, include_fields="id,tags")
    before = search(services, PAT, tagged)
    add_personal_tag(services, PAT, "mine", world["open"])
    after = search(services, PAT, tagged)
    assert after == made_anew(services, PAT, tagged) != before


def test_answers_count_the_size_they_are_given():
    kept = AnswerCache(max_entries=10, max_bytes=100)
    kept.put(("key", 1), (1, 1, 1), (("bugs", b"[]"),), size=60)
    kept.put(("key", 2), (1, 1, 1), (("bugs", b"[]"),), size=60)
    assert len(kept) == 1 and kept.size == 60
    assert kept.get(("key", 2), (1, 1, 1)) == (("bugs", b"[]"),)


def test_an_answer_is_kept_as_its_json_text_counted_at_the_memory_it_takes(services, world):
    """An answer is kept as its values' JSON text; the bound counts the text
    and ENTRY_BYTES for each, no less than the memory the kept answers take
    (tracemalloc, answers of 50 bugs kept by real searches)."""
    import gc
    import tracemalloc

    import orjson
    for number in range(60):
        add_bug(services, summary=f"Many {number}", cc=[PAT, PAM], keywords=["crash"])
    kept = AnswerCache(max_entries=1000, max_bytes=1 << 30)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(answer_cache, "_new_cache", lambda conn: kept)
        first = search(services, PAM, dict(SEARCH, limit=50))
        assert len(first["bugs"]) == 50 and len(kept) == 1
        assert kept.size == len(orjson.dumps(first["bugs"])) + answer_cache.ENTRY_BYTES
        tracemalloc.start()
        try:
            for offset in range(1, 41):
                search(services, PAM, dict(SEARCH, limit=50, offset=offset))
            gc.collect()
            # What the kept answers hold, all made by answer_cache.py: their
            # text, keys, generations and entries.
            held = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(True, answer_cache.__file__),
                 tracemalloc.Filter(True, encoding.__file__)])
        finally:
            tracemalloc.stop()
    assert len(kept) == 41
    taken = sum(stat.size for stat in held.statistics("filename"))
    texts = sum(len(text) for _, (_, answer, _) in list(kept._entries.items())[1:]
                for _, text in answer)
    assert texts < taken <= kept.size * 40 / 41


@pytest.mark.parametrize("accept, callback", [
    (None, None), ("application/json", None), ("text/html", None), (None, "show")])
def test_a_kept_answer_is_written_out_as_the_answer_made_anew(services, world, client,
                                                             accept, callback):
    """Over REST, an answer given from the kept text is the same bytes as
    the answer made anew, for each caller, in each form REST writes."""
    for who in CALLERS:
        headers = {"X-BUGZILLA-API-KEY": services.api_key(who)} if who else {}
        if accept:
            headers["Accept"] = accept
        query = dict(SEARCH, **({"callback": callback} if callback else {}))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(answer_cache, "KEPT_PARAMS", frozenset())
            anew = client.simulate_get("/rest/bug", params=query, headers=headers)
        answers = [client.simulate_get("/rest/bug", params=query, headers=headers)
                   for _ in range(3)]
        assert anew.status_code == 200 and b"Open to all" in anew.content
        assert [answer.content for answer in answers] == [anew.content] * 3
        assert [answer.headers["ETag"] for answer in answers] == [anew.headers["ETag"]] * 3


def test_answers_kept_are_bounded_in_number_and_bytes():
    kept = AnswerCache(max_entries=3, max_bytes=100)
    for number in range(5):
        kept.put(("key", number), (1, 1, 1), b"x" * 10)
    assert len(kept) == 3 and kept.get(("key", 0), (1, 1, 1)) is None
    assert kept.get(("key", 4), (1, 1, 1)) == b"x" * 10
    kept.get(("key", 2), (1, 1, 1))               # used: the last to go
    kept.put(("big", 0), (1, 1, 1), b"y" * 85)     # 3 and 4 go to make room
    assert kept.size == 95 and len(kept) == 2
    assert kept.get(("key", 3), (1, 1, 1)) is kept.get(("key", 4), (1, 1, 1)) is None
    assert kept.get(("key", 2), (1, 1, 1)) == b"x" * 10
    assert kept.get(("big", 0), (1, 1, 1)) == b"y" * 85
    kept.put(("huge", 0), (1, 1, 1), b"z" * 101)   # larger than the bound: not kept
    assert kept.get(("huge", 0), (1, 1, 1)) is None
    assert kept.get(("big", 0), (1, 1, 2)) is None  # another generation: dropped
    assert kept.get(("big", 0), (1, 1, 1)) is None and kept.size == 10


def test_a_write_still_running_is_not_in_the_kept_answer_and_its_commit_drops_it(
        services, world, counted):
    """A change not committed yet leaves the answer kept (no search sees it);
    once committed, the next search is made anew and shows it (PostgreSQL:
    the reading transactions count one more bug write committed)."""
    before = search(services, PAT)
    with services.db.separate_transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET summary = 'Renamed meanwhile' WHERE id = ?",
                     (world["other"],))
        assert search(services, PAT) == before
        assert len(counted) == 1
    after = search(services, PAT)
    assert len(counted) == 2
    assert after == made_anew(services, PAT) != before
    assert "Renamed meanwhile" in [bug["summary"] for bug in after["bugs"]]


@pytest.mark.parametrize("how", ["header", "api_key", "Bugzilla_api_key"])
def test_a_search_with_a_key_is_kept_however_the_key_comes(services, world, client, counted,
                                                          how):
    key = services.api_key(PAT)
    query = {"product": "TestProduct", "limit": "50"}
    headers = {}
    if how == "header":
        headers["X-BUGZILLA-API-KEY"] = key
    else:
        query[how] = key
    answers = [client.simulate_get("/rest/bug", params=query, headers=headers)
               for _ in range(2)]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert answers[0].json == answers[1].json
    assert world["reported"] in [bug["id"] for bug in answers[0].json["bugs"]]
    assert len(counted) == 1
