"""Comment tags: searching and updating them (interface "Comments")."""

import pytest

from bug_rows import ADMIN, add_bug, add_comment, add_group, add_tag, set_param
from bugsvc.errors import ServiceError
from bugsvc.services import comment


TAGGER = "tagger@example.com"
NOBODY = "nobody@example.com"
INSIDER = "insider@example.com"


@pytest.fixture
def setup(services):
    services.add_user(TAGGER)
    services.add_user(NOBODY)
    services.add_user(INSIDER)
    add_group(services, "taggers", members=[TAGGER, INSIDER, ADMIN])
    add_group(services, "insiders", members=[INSIDER])
    set_param(services, "comment_taggers_group", "taggers")
    set_param(services, "insidergroup", "insiders")
    bug_id = add_bug(services, summary="Tagged", description="First")
    second = add_comment(services, bug_id, ADMIN, "Second")
    first = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0",
                           (bug_id,))[0][0]
    return {"bug": bug_id, "first": first, "second": second}


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def stored_tags(services, comment_id):
    return sorted(row[0] for row in services.query(
        "SELECT tag FROM comment_tags WHERE comment_id = ?", (comment_id,)))


# Update -------------------------------------------------------------------------

def test_update_over_http_adds_and_returns_sorted_bare_array(client, services, setup):
    key = services.api_key(TAGGER)
    resp = client.simulate_put(f"/rest/bug/comment/{setup['first']}/tags",
                               params={"Bugzilla_api_key": key},
                               json={"add": ["needinfo", "Abuse", "spam.v2"]})
    assert resp.status_code == 200
    assert resp.json == ["Abuse", "needinfo", "spam.v2"]
    assert stored_tags(services, setup["first"]) == ["Abuse", "needinfo", "spam.v2"]


def test_duplicates_are_case_insensitive_and_remove_comes_after_add(services, setup):
    cid = setup["first"]
    services.call(comment.update_tags, {"comment_id": cid, "add": ["Spam"]}, as_user=TAGGER)
    result = services.call(comment.update_tags,
                           {"comment_id": cid, "add": ["SPAM", "spam", "keep", "gone"],
                            "remove": ["GONE", "absent"]}, as_user=TAGGER)
    assert result == ["Spam", "keep"]
    assert stored_tags(services, cid) == ["Spam", "keep"]
    removed = services.call(comment.update_tags, {"comment_id": cid, "remove": "spam"},
                            as_user=TAGGER)
    assert removed == ["keep"]


def test_unknown_comment_gives_empty_array(services, setup):
    assert services.call(comment.update_tags, {"comment_id": 99999, "add": ["spam"]},
                         as_user=TAGGER) == []


@pytest.mark.parametrize("tag, code", [
    ("ab", 128), ("x" * 25, 127), ("two words", 126), ("comma,tag", 126), ("semi;colon", 126),
])
def test_invalid_tags_store_nothing(services, setup, tag, code):
    params = {"comment_id": setup["first"], "add": ["valid", tag]}
    assert error_code(services, comment.update_tags, params, TAGGER) == code
    assert stored_tags(services, setup["first"]) == []


def test_tag_length_bounds_accepted(services, setup):
    result = services.call(comment.update_tags,
                           {"comment_id": setup["first"], "add": ["abc", "y" * 24, "a_b-c.d"]},
                           as_user=TAGGER)
    assert result == ["a_b-c.d", "abc", "y" * 24]


def test_update_needs_login_group_and_enabled_tagging(client, services, setup):
    anonymous = client.simulate_put(f"/rest/bug/comment/{setup['first']}/tags", json={"add": ["x"]})
    assert anonymous.status_code == 401 and anonymous.json["code"] == 410
    params = {"comment_id": setup["first"], "add": ["spam"]}
    assert error_code(services, comment.update_tags, params, NOBODY) == 304
    set_param(services, "comment_taggers_group", "")
    assert error_code(services, comment.update_tags, params, TAGGER) == 125
    assert stored_tags(services, setup["first"]) == []


def test_update_on_private_comment_or_hidden_bug(services, setup):
    private = add_comment(services, setup["bug"], ADMIN, "Private", is_private=True)
    params = {"comment_id": private, "add": ["spam"]}
    # A comment the caller may not see answers like an unknown id: [].
    assert services.call(comment.update_tags, params, as_user=TAGGER) == []
    assert stored_tags(services, private) == []
    assert services.call(comment.update_tags, params, as_user=INSIDER) == ["spam"]
    add_group(services, "secret", members=[INSIDER])
    hidden = add_bug(services, summary="Hidden", groups=["secret"], reporter=INSIDER,
                     assigned_to=INSIDER)
    hidden_comment = services.query("SELECT id FROM comments WHERE bug_id = ?", (hidden,))[0][0]
    assert services.call(comment.update_tags, {"comment_id": hidden_comment, "add": ["abc"]},
                         as_user=TAGGER) == []
    assert stored_tags(services, hidden_comment) == []


def test_update_without_comment_id_is_50(services, setup):
    assert error_code(services, comment.update_tags, {"add": ["spam"]}, TAGGER) == 50


# Search -------------------------------------------------------------------------

def test_search_over_http_is_substring_case_insensitive_most_used_first(client, services, setup):
    for tag in ("Spam", "spammer"):
        add_tag(services, setup["first"], tag)
    add_tag(services, setup["second"], "spammer")
    add_tag(services, setup["second"], "other")
    key = services.api_key(TAGGER)
    resp = client.simulate_get("/rest/bug/comment/tags/SPAM", params={"Bugzilla_api_key": key})
    assert resp.status_code == 200
    assert resp.json == ["spammer", "Spam"]


def test_search_limit_defaults_to_10(services, setup):
    for n in range(12):
        add_tag(services, setup["first"], f"tag{n:02d}")
    found = services.call(comment.search_tags, {"query": "tag"}, as_user=TAGGER)
    assert found == [f"tag{n:02d}" for n in range(10)]
    assert services.call(comment.search_tags, {"query": "tag", "limit": 3},
                         as_user=TAGGER) == ["tag00", "tag01", "tag02"]
    assert error_code(services, comment.search_tags, {"query": "tag", "limit": "many"},
                      TAGGER) == 52


def test_search_never_reveals_tags_of_comments_the_caller_cannot_see(services, setup):
    private = add_comment(services, setup["bug"], ADMIN, "Private", is_private=True)
    add_tag(services, private, "privatetag")
    add_group(services, "secret", members=[INSIDER])
    hidden = add_bug(services, summary="Hidden", groups=["secret"], reporter=INSIDER,
                     assigned_to=INSIDER)
    hidden_comment = services.query("SELECT id FROM comments WHERE bug_id = ?", (hidden,))[0][0]
    add_tag(services, hidden_comment, "hiddentag")
    assert services.call(comment.search_tags, {"query": "tag"}, as_user=TAGGER) == []
    assert services.call(comment.search_tags, {"query": "tag"}, as_user=INSIDER) == [
        "hiddentag", "privatetag"]


def test_search_needs_login_group_and_enabled_tagging(client, services, setup):
    assert client.simulate_get("/rest/bug/comment/tags/spam").json["code"] == 410
    assert error_code(services, comment.search_tags, {"query": "x"}, NOBODY) == 304
    set_param(services, "comment_taggers_group", "")
    assert error_code(services, comment.search_tags, {"query": "x"}, TAGGER) == 125
