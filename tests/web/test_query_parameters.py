"""Reading query strings and form bodies (bugsvc/web/http.py parse_query):
the parameters as urllib's parse_qsl reads them, in any string, and a
request with more than MAX_PARAMETERS of them refused with 32000 before
any is read, on every way in that reads them (REST query and form body,
JSON-RPC over GET, the pages), as an anonymous caller."""

from urllib.parse import parse_qsl

import pytest
from hypothesis import given, settings, strategies as st

from bugsvc.errors import ServiceError
from bugsvc.web import http
from bugsvc.web.http import MAX_PARAMETERS, parse_query


def _reference(query_string):
    """What parse_qsl reads, with repeated keys as lists."""
    result = {}
    for key, value in parse_qsl(query_string, keep_blank_values=True, errors="replace"):
        if key in result:
            result[key] = (result[key] if isinstance(result[key], list) else [result[key]])
            result[key].append(value)
        else:
            result[key] = value
    return result


_PIECES = st.sampled_from(["a", "id", "=", "&", "+", "%", "%2", "%41", "%zz", "%C3%A9", "%FF",
                           "%ED%A0%80", "é", " ", ";", "==", "&&", "ids", "%26", "%3D", "+%2B"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_parameters_are_read_as_parse_qsl_reads_them(query_string):
    assert parse_query(query_string) == _reference(query_string)


def test_plain_encoded_and_repeated_parameters():
    assert parse_query("id=1&id=2&id=3&q=a+b%2Bc&flag&e=%C3%A9&&x=") == {
        "id": ["1", "2", "3"], "q": "a b+c", "flag": "", "e": "é", "x": ""}
    assert parse_query("") == {} and parse_query(None) == {}


def _many(count):
    return "&".join(f"ids={n}" for n in range(1, count + 1))


def test_up_to_the_limit_a_request_is_read(client):
    answer = client.simulate_get("/rest/version", query_string=_many(MAX_PARAMETERS))
    assert answer.status_code == 200 and answer.json == {"version": "5.2"}


def _refused(answer):
    assert answer.status_code == 400, answer.text
    assert answer.json["code"] == 32000
    assert f"more than {MAX_PARAMETERS} parameters" in answer.json["message"]
    return True


def test_past_the_limit_the_rest_api_refuses_the_query_string(client):
    assert _refused(client.simulate_get("/rest/bug", query_string=_many(MAX_PARAMETERS + 1)))
    assert _refused(client.simulate_get("/rest/version", query_string="&" * MAX_PARAMETERS))


def test_past_the_limit_the_rest_api_refuses_a_form_body(client, services):
    before = services.query("SELECT COUNT(*) FROM keywords")
    answer = client.simulate_post(
        "/rest/keyword", body=("name=x&description=y&" + _many(MAX_PARAMETERS)).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert _refused(answer)
    assert services.query("SELECT COUNT(*) FROM keywords") == before


def test_past_the_limit_json_rpc_over_get_answers_its_error_object(client):
    answer = client.simulate_get("/jsonrpc.cgi", query_string="method=Bugzilla.version&"
                                                              + _many(MAX_PARAMETERS))
    assert answer.status_code == 200            # JSON-RPC carries its errors in the envelope
    assert answer.json["error"]["code"] == 32000
    assert f"more than {MAX_PARAMETERS} parameters" in answer.json["error"]["message"]


def test_past_the_limit_a_page_answers_with_an_error_page(client):
    for path in ("/show_bug.cgi", "/buglist.cgi"):
        answer = client.simulate_get(path, query_string="id=1&" + _many(MAX_PARAMETERS))
        assert answer.status_code == 400
        assert answer.headers["Content-Type"].startswith("text/html")
        assert f"more than {MAX_PARAMETERS} parameters" in answer.text


def test_a_refused_request_costs_no_parsing(monkeypatch):
    parsed = []
    monkeypatch.setattr(http, "unquote", lambda *args, **kw: parsed.append(args))
    with pytest.raises(ServiceError) as refused:
        parse_query("%41=%42&" * MAX_PARAMETERS)
    assert refused.value.code == 32000 and parsed == []
