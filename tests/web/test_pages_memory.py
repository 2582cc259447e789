"""What the pages keep between requests is bounded in bytes and keyed on
what changes the page (bugsvc/web/pages/memo.py): junk query strings on a
big public bug's page add nothing, and no stream of distinct pages or
comments grows the process past the budgets."""

import pytest

from accounts import ADMIN
from bug_support import file_bug
from bugsvc.services import comment as comment_service
from bugsvc.web.pages import render, site
from bugsvc.web.pages.memo import BoundedMemo


@pytest.fixture
def big_bug(services):
    """A public bug with 40 comments of 5,000 characters each."""
    bug_id = file_bug(services, summary="A big public bug")
    for n in range(40):
        services.call(comment_service.add, {"id": bug_id, "comment": f"{n} " + "text " * 1000},
                      as_user=ADMIN)
    return bug_id


@pytest.fixture
def fresh_memos():
    site.RENDERED.clear()
    render.COMMENTS.clear()
    yield
    site.RENDERED.clear()
    render.COMMENTS.clear()


def test_junk_query_strings_share_the_page_of_the_bug(client, big_bug, fresh_memos):
    first = client.simulate_get("/show_bug.cgi", query_string=f"id={big_bug}")
    assert first.status_code == 200 and len(first.content) > 200_000
    kept = site.RENDERED.bytes
    for junk in range(60):
        page = client.simulate_get("/show_bug.cgi", query_string=f"id={big_bug}&x={junk}")
        assert page.status_code == 200
        assert page.content == first.content
    assert len(site.RENDERED) == 1 and site.RENDERED.bytes == kept
    # The page links back to its address without the junk.
    assert f"/login?target=/show_bug.cgi%3Fid%3D{big_bug}\"".encode() in first.content


def test_a_changed_bug_is_rendered_anew(client, services, big_bug, fresh_memos):
    before = client.simulate_get("/show_bug.cgi", query_string=f"id={big_bug}").text
    services.call(comment_service.add, {"id": big_bug, "comment": "one more word"}, as_user=ADMIN)
    after = client.simulate_get("/show_bug.cgi", query_string=f"id={big_bug}").text
    assert "one more word" in after and "one more word" not in before


def test_the_memo_never_holds_more_than_its_budget():
    memo = BoundedMemo(1000)
    for n in range(500):
        memo.put(n, b"x", 90)
        assert memo.bytes <= 1000
    assert len(memo) == 11 and memo.get(499) == b"x" and memo.get(0) is None
    memo.put("huge", b"y", 126)            # over an eighth of the budget: not kept
    assert memo.get("huge") is None and memo.bytes <= 1000
    memo.get(489)                          # used: kept when the next arrives
    memo.put("next", b"z", 90)
    assert memo.get(489) == b"x" and memo.get(490) is None


def test_pages_and_comments_stay_within_their_budgets(client, services, fresh_memos,
                                                      monkeypatch):
    bugs = []
    for n in range(12):
        bugs.append(file_bug(services, summary=f"bug {n}"))
        services.call(comment_service.add, {"id": bugs[-1], "comment": f"{n} " + "word " * 4000},
                      as_user=ADMIN)
    assert client.simulate_get("/show_bug.cgi", query_string=f"id={bugs[0]}").status_code == 200
    page_bytes, comment_bytes = site.RENDERED.bytes, render.COMMENTS.bytes
    monkeypatch.setattr(site, "RENDERED", BoundedMemo(8 * page_bytes))
    monkeypatch.setattr(render, "COMMENTS", BoundedMemo(8 * comment_bytes))
    for bug_id in bugs:
        assert client.simulate_get("/show_bug.cgi", query_string=f"id={bug_id}").status_code == 200
        assert site.RENDERED.bytes <= 8 * page_bytes
        assert render.COMMENTS.bytes <= 8 * comment_bytes
    assert 1 <= len(site.RENDERED) <= 8
