"""The budget of building a search (bugs/search.py, search_sql.py): nested
boolean charts and custom searches cost CPU much faster than they grow, so a
search has at most MAX_TERMS conditions and groups, groups nest at most
MAX_DEPTH deep, and building its SQL has BUILD_SECONDS; past any of them the
answer is 32000 saying why, before any SQL runs. Over REST, XML-RPC and the
bug list page, for an anonymous caller (the attack needs no account)."""

from bugsvc.bugs import search, search_sql
from bugsvc.bugs.search_sql import Compiler
from rpc_support import xmlrpc_call


def nested(groups, joiner="OR", field="product", operator="substring"):
    """A custom search of `groups` groups, each inside the one before, each
    with one condition."""
    params, n = {}, 1
    for k in range(groups):
        params[f"f{n}"], params[f"j{n}"] = "OP", joiner
        n += 1
        params[f"f{n}"], params[f"o{n}"], params[f"v{n}"] = field, operator, f"w{k}"
        n += 1
    for _ in range(groups):
        params[f"f{n}"] = "CP"
        n += 1
    return params


def side_by_side(groups):
    """`groups` groups next to each other, each of two conditions."""
    params, n = {"j_top": "OR"}, 1
    for k in range(groups):
        params[f"f{n}"], params[f"j{n}"] = "OP", "AND"
        params[f"f{n + 1}"], params[f"o{n + 1}"], params[f"v{n + 1}"] = "longdesc", "substring", k
        params[f"f{n + 2}"], params[f"o{n + 2}"], params[f"v{n + 2}"] = "product", "equals", "x"
        params[f"f{n + 3}"] = "CP"
        n += 4
    return params


def flat(terms, joiner="OR"):
    params = {"f1": "OP", "j1": joiner}
    for n in range(2, terms + 2):
        params[f"f{n}"], params[f"o{n}"], params[f"v{n}"] = "short_desc", "substring", f"w{n}"
    params[f"f{terms + 2}"] = "CP"
    return params


def legacy_charts(rows):
    return {f"field0-{row}-0": "short_desc" for row in range(rows)} | {
        f"type0-{row}-0": "substring" for row in range(rows)} | {
        f"value0-{row}-0": f"w{row}" for row in range(rows)}


def rest_search(client, params):
    return client.simulate_get("/rest/bug", params=params)


def test_five_hundred_nested_groups_answer_the_documented_error(client):
    response = rest_search(client, nested(500))
    assert response.status_code == 400
    assert response.json["code"] == 32000
    assert "groups deep" in response.json["message"]


def test_three_hundred_terms_are_refused_before_any_sql(client, monkeypatch):
    executed = []
    monkeypatch.setattr(Compiler, "where", lambda self, criteria: executed.append(criteria))
    for params in (side_by_side(100), flat(300), legacy_charts(300)):
        response = rest_search(client, params)
        assert response.status_code == 400, params
        assert response.json["code"] == 32000
        assert "more than 200 terms" in response.json["message"]
    assert executed == []


def test_searches_within_the_budget_are_answered(client):
    for params in (nested(search.MAX_DEPTH, "AND"), side_by_side(60), flat(150),
                   legacy_charts(150)):
        response = rest_search(client, params)
        assert response.status_code == 200, response.json
        assert response.json == {"bugs": []}


def test_each_condition_is_compiled_once_however_deep(client, monkeypatch):
    calls = []
    original = Compiler.condition

    def counted(self, cond):
        calls.append(cond.value)
        return original(self, cond)
    monkeypatch.setattr(Compiler, "condition", counted)
    response = rest_search(client, nested(search.MAX_DEPTH, "AND", "longdesc"))
    assert response.status_code == 200
    assert sorted(calls) == sorted(f"w{k}" for k in range(search.MAX_DEPTH))


def test_building_past_its_time_answers_32000(client, monkeypatch):
    ticks = iter(range(0, 10**6, 1))
    monkeypatch.setattr(search_sql, "_clock", lambda: next(ticks) * 0.25)
    response = rest_search(client, flat(20))
    assert response.status_code == 400
    assert response.json["code"] == 32000
    assert "too long to build" in response.json["message"]


def test_over_xmlrpc_and_the_bug_list_page(client):
    assert xmlrpc_call(client, "Bug.search", nested(500)) == (None, 32000)
    assert xmlrpc_call(client, "Bug.search", flat(300)) == (None, 32000)
    page = client.simulate_get("/buglist.cgi", params=flat(300))
    assert page.status_code == 400
    assert "more than 200 terms" in page.text


def test_a_search_over_the_budget_is_refused_before_the_rest_is_read(client, monkeypatch):
    read = []
    for name in ("_simple_params", "_basic_fields", "_email", "_chfield", "_boolean_charts"):
        monkeypatch.setattr(search, name, lambda *args, name=name: read.append(name))
    for params in (nested(500), flat(300), side_by_side(250)):
        response = rest_search(client, params)
        assert response.status_code == 400 and response.json["code"] == 32000
    assert read == []
