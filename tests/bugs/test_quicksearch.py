"""Quicksearch through GET /rest/bug?quicksearch=..."""

import pytest

from bug_rows import add_flag, search_world
from bugsvc.errors import ServiceError
from bugsvc.services import bug_search
from conftest import world_fixture


BOB, CAROL, INSIDER = "bob@example.com", "carol@example.com", "insider@example.com"


@world_fixture
def bugs(services):
    return search_world(services)


@pytest.fixture
def quick(services, bugs):
    """Runs a quicksearch (plus other parameters); returns the names found."""
    names = {bug_id: name for name, bug_id in bugs.items()}

    def run(text, as_user=None, **params):
        result = services.call(bug_search.search, dict(params, quicksearch=text),
                               as_user=as_user, write=False)
        return [names.get(bug["id"], bug["id"]) for bug in result["bugs"]]
    return run


def error_code(services, text):
    with pytest.raises(ServiceError) as caught:
        services.call(bug_search.search, {"quicksearch": text}, write=False)
    return caught.value.code


def test_bug_numbers_give_exactly_those_bugs_any_status_by_id(quick, bugs):
    text = f"{bugs['verified']}, {bugs['crash']} {bugs['button']}"
    assert quick(text) == ["crash", "button", "verified"]
    assert quick(str(bugs["secret"])) == []
    assert quick(str(bugs["secret"]), INSIDER) == ["secret"]


@pytest.mark.parametrize("text, expected", [
    ("crash", ["crash", "printing"]),
    ("CRASH", ["crash", "printing"]),
    ("ffcrash", ["crash"]),
    ("needs-test", ["crash"]),
    ("gadget", []),
    ("widgets", []),
    ("testproduct", ["crash", "printing"]),
    ("regression", ["crash"]),
    ("crash printing", ["printing"]),
    ("startup OR printing", ["crash", "printing"]),
    ("startup|printing", ["crash", "printing"]),
    ("crash -printing", ["crash"]),
    ("crash NOT printing", ["crash"]),
    ("crash NOT NOT printing", ["printing"]),
    ('"when printing"', ["printing"]),
    ('"printing when"', []),
    ("example.com/crash", ["crash"]),
])
def test_plain_words_search_open_bugs(quick, text, expected):
    assert quick(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("ALL button", ["button", "dupe"]),
    ("OPEN button", []),
    ("FIXED", ["button"]),
    ("FIXED,WONTFIX", ["button", "verified"]),
    ("DUP button", ["dupe"]),
    ("UNCO", ["printing"]),
    ("CONF,UNCO crash", ["crash", "printing"]),
    ("RESOLVED", ["button", "dupe"]),
    ("fixed", []),
])
def test_first_word_chooses_statuses_and_resolutions(quick, text, expected):
    assert quick(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("product:gadget", []),
    ("ALL product:gadget", ["button", "dupe"]),
    ("prod:Gadget status:RESOLVED", ["button", "dupe"]),
    ("status:UNCONFIRMED", ["printing"]),
    ("summary:tiny", []),
    ("ALL summary:tiny", ["dupe"]),
    ("assignee:bob", ["crash", "printing"]),
    ("owner:bob", ["crash", "printing"]),
    ("kw:regression", ["crash"]),
    ("comment:nsFoo", ["crash"]),
    ("sw:triaged", ["crash"]),
    ("os,platform:linux", ["crash"]),
    ("priority=High", ["crash"]),
    ("priority!=High", ["printing"]),
    ('summary:"on startup"', ["crash"]),
    ("-summary:startup", ["printing"]),
])
def test_field_syntax(quick, text, expected):
    assert quick(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("#startup", ["crash"]),
    (":testprod", ["crash", "printing"]),
    ("ALL :widg", ["button", "dupe"]),
    ("@bob", ["crash", "printing"]),
    ("[needs", ["crash"]),
    ("!crash", ["crash", "printing"]),
    ("!regression", ["crash"]),
    ("P2", ["crash"]),
    ("ALL P1-P4", ["crash", "button"]),
    ("ALL P4-P2", ["crash", "button"]),
    ("ALL P1-4", ["crash", "button"]),
    ("ALL -P6", ["crash", "button"]),
])
def test_special_first_characters_and_priorities(quick, text, expected):
    assert quick(text) == expected


def test_flag_shortcut(services, quick, bugs):
    add_flag(services, bugs["crash"], "review", "?", requestee=BOB)
    add_flag(services, bugs["printing"], "review", "?", requestee=CAROL)
    assert quick("review?") == ["crash", "printing"]
    assert quick("review?bob") == ["crash"]
    assert quick("flag:review?carol") == ["printing"]


def test_other_parameters_are_anded_and_status_is_replaced(quick):
    assert quick("crash", product="TestProduct", limit=1) == ["crash"]
    assert quick("crash", status="RESOLVED") == ["crash", "printing"]
    assert quick("button", bug_status="__all__") == []
    assert quick("ALL button", order="bug_id DESC") == ["dupe", "button"]


def test_hidden_bugs_are_not_found(quick):
    assert quick("vault") == []
    assert quick("vault", INSIDER) == ["secret"]


@pytest.mark.parametrize("text, code", [
    ("", 1000), ("  , ", 1000),
    ('crash "unclosed', 32000),
    ("AND crash", 32000), ("OR crash", 32000), ("crash AND", 32000), ("crash NOT", 32000),
    ("crash AND OR button", 32000), ("crash OR AND button", 32000), ("NOT OR crash", 32000),
    ("bogusfield:1", 32000), ("a:1", 32000),
])
def test_errors(services, bugs, text, code):
    assert error_code(services, text) == code


def test_quicksearch_over_http(client, bugs):
    resp = client.simulate_get("/rest/bug",
                               query_string="quicksearch=crash+-startup&include_fields=id")
    assert resp.status_code == 200
    assert resp.json == {"bugs": [{"id": bugs["printing"]}]}
    bad = client.simulate_get("/rest/bug", query_string="quicksearch=nosuchfield:1")
    assert bad.status_code == 400 and bad.json["code"] == 32000
