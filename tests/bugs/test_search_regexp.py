"""Regular expressions in searches (regexp, notregexp and the word operators):
the syntax users write (as on MySQL 8 or PostgreSQL), and a time budget, so a
pattern that backtracks exponentially answers an error instead of holding
the server."""

import threading

import pytest

from bug_rows import ADMIN, add_bug
from bugsvc.errors import ServiceError
from bugsvc.services import bug_search
from bugsvc.store import regexp as bugsvc_regexp


# Exponential for a backtracking matcher on a long run of "a" followed by
# another letter; it has no repetition inside a repetition, so only the
# time budget stops it.
HOSTILE = "^(a|aa)+$"
LONG_SUMMARY = "a" * 60 + "b"
# PostgreSQL's matcher takes that one in its stride, not backreferences to
# groups that can take any length (seconds on 400 letters).
HOSTILE_TO_POSTGRESQL = r"^(.*)(.*)(.*)\3\2\1$"
LONG_SUMMARY_FOR_POSTGRESQL = "a" * 400 + "b"


@pytest.fixture
def hostile(backend):
    """(pattern, summary) that the engine's matcher needs very long for."""
    if backend == "postgresql":
        return HOSTILE_TO_POSTGRESQL, LONG_SUMMARY_FOR_POSTGRESQL
    return HOSTILE, LONG_SUMMARY


def search(services, params, as_user=None):
    return services.call(bug_search.search, params, as_user=as_user, write=False)


def regexp(pattern, field="short_desc", operator="regexp"):
    return {"f1": field, "o1": operator, "v1": pattern}


@pytest.fixture
def summaries(services):
    return {summary: add_bug(services, summary=summary, description=summary) for summary in (
        "Crash in the foo-bar module", "Dialog: 42 pixels too wide", "Ümlaut handling", "aab")}


@pytest.mark.parametrize("pattern, expected", [
    ("^crash", ["Crash in the foo-bar module"]),
    ("[[:digit:]]+ pixels", ["Dialog: 42 pixels too wide"]),
    (r"\bfoo\b", ["Crash in the foo-bar module"]),
    (r"(?<=foo-)bar", ["Crash in the foo-bar module"]),
    (r"(a)\1b", ["aab"]),
    (r"^\p{Lu}mlaut", ["Ümlaut handling"]),
    ("too (wide|narrow)$", ["Dialog: 42 pixels too wide"]),
])
def test_patterns_users_write(services, summaries, pattern, expected):
    found = search(services, regexp(pattern))
    assert [bug["summary"] for bug in found["bugs"]] == expected


@pytest.mark.parametrize("pattern", ["(unclosed", "a{2,1}", "x" * 1001, "(a+)+$"])
def test_invalid_or_nested_patterns_are_refused(services, summaries, pattern):
    with pytest.raises(ServiceError) as caught:
        search(services, regexp(pattern))
    assert caught.value.code == 32000


@pytest.mark.parametrize("operator", ["regexp", "notregexp"])
@pytest.mark.parametrize("field", ["short_desc", "longdesc"])
def test_a_pattern_that_backtracks_without_end_is_a_user_error(services, field, operator,
                                                               monkeypatch, hostile):
    # A budget of 5 ms and a text the pattern needs some 10 ms for (on the
    # real budget, a longer text does the same: see the server test below).
    monkeypatch.setattr(bugsvc_regexp, "REGEXP_SECONDS", 0.005)
    pattern, text = hostile
    text = text if pattern != HOSTILE else "a" * 26 + "b"
    add_bug(services, summary=text, description=text)
    with pytest.raises(ServiceError) as caught:
        search(services, dict(regexp(pattern, field, operator), count_only=1))
    assert caught.value.code == 32000
    assert "takes too long" in caught.value.message


def test_the_budget_covers_the_whole_search_not_each_value(services):
    """Each value alone is matched well within the time of one match, but
    together they go over the search's budget."""
    budget = bugsvc_regexp.regexp_budget(seconds=0.05, per_value=0.0)
    calls = []
    compiled = bugsvc_regexp.compile_regexp("^(a|aa)+$")
    with pytest.raises(bugsvc_regexp.RegexpTooSlow), budget as spent:
        for _ in range(10000):
            calls.append(spent.match(compiled, "a" * 18 + "b"))
    assert 1 < len(calls) < 10000


def test_a_hostile_search_answers_an_error_while_other_calls_go_on(services, db_path, start,
                                                                   hostile):
    pattern, text = hostile
    add_bug(services, summary=text)
    server = start(db_path)
    answers, lock = [], threading.Lock()

    def hostile_search():
        answer = server.call("GET", "/rest/bug", {"f1": "short_desc", "o1": "regexp",
                                                  "v1": pattern})
        with lock:
            answers.append(("search", answer[:2]))

    searching = threading.Thread(target=hostile_search, daemon=True)
    searching.start()
    # Version calls one after the other while the search runs (it takes at
    # least the budget): some answer before it does.
    searching.join(0.2)
    while searching.is_alive():
        status, body, _ = server.call("GET", "/rest/version")
        with lock:
            answers.append(("version", (status, body)))
    searching.join(10)
    assert not searching.is_alive(), "the hostile search did not answer within 10 s"
    names = [name for name, _ in answers]
    assert names.count("search") == 1 and names.index("search") > 0, names
    assert all(answer == (200, {"version": "5.2"}) for name, answer in answers
               if name == "version")
    status, body = dict(answers)["search"]
    assert status == 400 and body["code"] == 32000 and body["error"] is True
    assert "takes too long" in body["message"]
    # The server is as responsive as before.
    assert server.call("GET", "/rest/version")[:2] == (200, {"version": "5.2"})


@pytest.mark.engine("postgresql")
def test_a_searchs_time_limit_goes_with_its_statement_or_its_transactions_begin(
        services, client, monkeypatch):
    """PostgreSQL: a search whose statement is the first of its read
    transaction (the catalogue's copies made, the caller's key kept) runs
    it ahead of the transaction with its time limit, in one round trip: no
    BEGIN, no COMMIT. One that may not run ahead (a count, which carries no
    generations) sends the BEGIN and the time limit in one round trip."""
    from bugsvc.store.postgres import connection
    headers = {"X-BUGZILLA-API-KEY": services.api_key(ADMIN)}
    query = {"product": "TestProduct", "status": "CONFIRMED", "status_type": "anyexact"}
    assert client.simulate_get("/rest/bug", params=query, headers=headers).status_code == 200
    sent = []
    run_simple = connection._run_simple
    alone = connection.run_bounded_alone

    def noted(raw, statement):
        sent.append(statement)
        return run_simple(raw, statement)

    def noted_alone(raw, statement, values, milliseconds):
        sent.append(f"alone within {milliseconds} ms: {statement}")
        return alone(raw, statement, values, milliseconds)
    monkeypatch.setattr(connection, "_run_simple", noted)
    monkeypatch.setattr(connection, "run_bounded_alone", noted_alone)
    assert client.simulate_get("/rest/bug", params=query, headers=headers).status_code == 200
    assert len(sent) == 1 and sent[0].startswith("alone within ")
    sent.clear()
    counted = client.simulate_get("/rest/bug", params=dict(query, count_only="1"),
                                  headers=headers)
    assert counted.status_code == 200 and counted.json["bug_count"] >= 0
    begins = [text for text in sent if text.startswith("BEGIN")]
    assert len(begins) == 1
    assert begins[0].startswith("BEGIN ISOLATION LEVEL REPEATABLE READ; "
                                "SET LOCAL statement_timeout = ")
