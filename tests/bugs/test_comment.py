"""Comments: reading them by bug and by id, adding them (interface "Comments")."""

import pytest
from freezegun import freeze_time

from bug_rows import ADMIN, add_attachment, add_bug, add_comment, add_group, set_param, user_id
from bugsvc.errors import ServiceError
from bugsvc.services import comment


PLAIN = "plain@example.com"
INSIDER = "insider@example.com"
OUTSIDER = "outsider@example.com"


@pytest.fixture
def people(services):
    services.add_user(PLAIN, real_name="Plain")
    services.add_user(INSIDER, real_name="Insider")
    services.add_user(OUTSIDER)
    add_group(services, "insiders", members=[INSIDER])
    set_param(services, "insidergroup", "insiders")


@pytest.fixture
def bug(services, people):
    bug_id = add_bug(services, summary="Crash", reporter=PLAIN, description="It crashes.",
                     created="2026-01-01 10:00:00", aliases=["crash"])
    add_comment(services, bug_id, ADMIN, "Confirmed.", when="2026-01-02 10:00:00")
    add_comment(services, bug_id, INSIDER, "Secret analysis.", when="2026-01-03 10:00:00",
                is_private=True)
    add_comment(services, bug_id, PLAIN, "Still there.", when="2026-01-04 10:00:00")
    return bug_id


def call(services, function, params, as_user=None):
    return services.call(function, params, as_user=as_user)


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def texts(result, bug_id):
    return [c["text"] for c in result["bugs"][str(bug_id)]["comments"]]


# Reading -----------------------------------------------------------------------

def test_comments_of_a_bug_over_http_oldest_first_with_every_field(client, services, bug):
    resp = client.simulate_get(f"/rest/bug/{bug}/comment")
    assert resp.status_code == 200
    assert resp.json["comments"] == {}
    listed = resp.json["bugs"][str(bug)]["comments"]
    assert [c["text"] for c in listed] == ["It crashes.", "Confirmed.", "Still there."]
    first = listed[0]
    assert first == {
        "id": first["id"], "bug_id": bug, "attachment_id": None, "count": 0,
        "text": "It crashes.", "creator": PLAIN, "time": "2026-01-01T10:00:00Z",
        "creation_time": "2026-01-01T10:00:00Z", "is_private": False, "tags": [],
        "is_markdown": False, "edits": 0}
    assert [c["count"] for c in listed] == [0, 1, 3]


def test_private_comments_only_for_insiders(services, bug):
    for who in (None, PLAIN, ADMIN):
        listed = texts(call(services, comment.comments, {"ids": [bug]}, who), bug)
        assert "Secret analysis." not in listed
    insider = call(services, comment.comments, {"ids": [bug]}, INSIDER)
    assert texts(insider, bug) == ["It crashes.", "Confirmed.", "Secret analysis.", "Still there."]
    assert insider["bugs"][str(bug)]["comments"][2]["is_private"] is True


def test_alias_path_and_query_ids_are_merged_once(client, services, bug, people):
    other = add_bug(services, summary="Other", description="Other text.")
    resp = client.simulate_get("/rest/bug/crash/comment", query_string=f"ids={other}&ids={bug}")
    assert resp.status_code == 200
    assert sorted(resp.json["bugs"]) == sorted([str(bug), str(other)])
    assert texts(resp.json, other) == ["Other text."]


def test_new_since_returns_only_later_comments(services, bug):
    result = call(services, comment.comments, {"ids": [bug], "new_since": "2026-01-02T10:00:00Z"})
    assert texts(result, bug) == ["Still there."]
    assert error_code(services, comment.comments, {"ids": [bug], "new_since": "yesterday"}) == 56


def test_neither_ids_nor_comment_ids_is_50(services, bug):
    assert error_code(services, comment.comments, {}) == 50


@pytest.mark.parametrize("value, code", [("999", 101), ("no-such-alias", 100)])
def test_unknown_bugs(services, bug, value, code):
    assert error_code(services, comment.comments, {"ids": [value]}) == code


def test_comment_by_id_over_http(client, services, bug):
    wanted = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 1", (bug,))[0][0]
    resp = client.simulate_get(f"/rest/bug/comment/{wanted}")
    assert resp.status_code == 200
    assert resp.json["bugs"] == {}
    assert list(resp.json["comments"]) == [str(wanted)]
    assert resp.json["comments"][str(wanted)]["text"] == "Confirmed."
    assert resp.json["comments"][str(wanted)]["creator"] == ADMIN


def test_comment_by_id_private_is_110_unknown_111_non_numeric_52(client, services, bug):
    private = services.query("SELECT id FROM comments WHERE is_private = 1")[0][0]
    resp = client.simulate_get(f"/rest/bug/comment/{private}")
    assert resp.status_code == 401 and resp.json["code"] == 110
    assert call(services, comment.comments, {"comment_ids": [private]}, INSIDER)["comments"]
    # A missing comment answers like a private one, except to a
    # caller who sees every comment (here the insider).
    missing = client.simulate_get("/rest/bug/comment/99999")
    assert missing.status_code == 401 and missing.json["code"] == 110
    assert error_code(services, comment.comments, {"comment_ids": [99999]}, INSIDER) == 111
    assert error_code(services, comment.comments, {"comment_ids": ["abc"]}) == 52


def test_bug_path_and_comment_ids_give_both_parts(client, services, bug, people):
    other = add_bug(services, summary="Other", description="Other text.")
    wanted = services.query("SELECT id FROM comments WHERE bug_id = ?", (other,))[0][0]
    first = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0", (bug,))[0][0]
    resp = client.simulate_get(f"/rest/bug/{bug}/comment", query_string=f"comment_ids={wanted}")
    assert list(resp.json["bugs"]) == [str(bug)]
    assert list(resp.json["comments"]) == [str(wanted)]
    both = client.simulate_get(f"/rest/bug/comment/{wanted}", query_string=f"comment_ids={first}")
    assert sorted(both.json["comments"]) == sorted([str(wanted), str(first)])


def test_new_since_does_not_filter_comments_asked_by_id(services, bug):
    first = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0", (bug,))[0][0]
    result = call(services, comment.comments,
                  {"comment_ids": [first], "new_since": "2027-01-01"})
    assert list(result["comments"]) == [str(first)]


def test_restricted_bug_comments_for_anonymous_plain_member_and_admin(client, services, people):
    add_group(services, "secret", members=[INSIDER])
    hidden = add_bug(services, summary="Hidden", groups=["secret"], description="Hidden text.",
                     reporter=INSIDER, assigned_to=INSIDER)
    hidden_comment = services.query("SELECT id FROM comments WHERE bug_id = ?", (hidden,))[0][0]
    anonymous = client.simulate_get(f"/rest/bug/{hidden}/comment")
    assert anonymous.status_code == 401 and anonymous.json["code"] == 102
    for who in (PLAIN, ADMIN):
        assert error_code(services, comment.comments, {"ids": [hidden]}, who) == 102
        assert error_code(services, comment.comments, {"comment_ids": [hidden_comment]}, who) == 110
    assert texts(call(services, comment.comments, {"ids": [hidden]}, INSIDER), hidden) == [
        "Hidden text."]


def test_system_comments_are_rendered(services, people):
    original = add_bug(services, summary="Original")
    dupe = add_bug(services, summary="Dupe", dupe_of=original)
    add_comment(services, dupe, ADMIN, "Same thing.", kind=2, extra=str(original))
    add_comment(services, original, ADMIN, "", kind=3, extra=str(dupe))
    attachment = add_attachment(services, original, "Screenshot of the crash")
    add_comment(services, original, ADMIN, "Here it is.", kind=5, extra=str(attachment),
                attachment_id=attachment)
    add_comment(services, original, ADMIN, "Looks wrong.", kind=6, extra=str(attachment))
    add_comment(services, original, ADMIN, "", kind=5, extra=str(attachment))
    result = call(services, comment.comments, {"ids": [original, dupe]})
    assert texts(result, dupe)[1] == (
        f"Same thing.\n\n*** This bug has been marked as a duplicate of bug {original} ***")
    listed = result["bugs"][str(original)]["comments"]
    assert [c["text"] for c in listed[1:]] == [
        f"*** Bug {dupe} has been marked as a duplicate of this bug. ***",
        f"Created attachment {attachment}\nScreenshot of the crash\n\nHere it is.",
        f"Comment on attachment {attachment}\nScreenshot of the crash\n\nLooks wrong.",
        f"Created attachment {attachment}\nScreenshot of the crash"]
    assert [c["attachment_id"] for c in listed] == [None, None, attachment, attachment, attachment]


def test_tags_shown_only_while_tagging_is_enabled(services, bug):
    first = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 0", (bug,))[0][0]
    services.call(comment.update_tags, {"comment_id": first, "add": ["spam", "Abuse"]},
                  as_user=ADMIN)
    listed = call(services, comment.comments, {"ids": [bug]})["bugs"][str(bug)]["comments"]
    assert listed[0]["tags"] == ["Abuse", "spam"] and listed[1]["tags"] == []
    set_param(services, "comment_taggers_group", "")
    listed = call(services, comment.comments, {"ids": [bug]})["bugs"][str(bug)]["comments"]
    assert all("tags" not in c for c in listed)


def test_include_and_exclude_fields_shape_comment_objects(client, services, bug):
    resp = client.simulate_get(f"/rest/bug/{bug}/comment",
                               query_string="include_fields=id,text&exclude_fields=id")
    assert resp.json["bugs"][str(bug)]["comments"][0] == {"text": "It crashes."}
    wanted = services.query("SELECT id FROM comments WHERE bug_id = ? AND count = 1", (bug,))[0][0]
    one = client.simulate_get(f"/rest/bug/comment/{wanted}", query_string="include_fields=creator")
    assert one.json["comments"] == {str(wanted): {"creator": ADMIN}}


def test_creator_email_filtered_for_anonymous_when_asked(services, bug):
    set_param(services, "webservice_email_filter", "1")
    anonymous = call(services, comment.comments, {"ids": [bug]})
    assert anonymous["bugs"][str(bug)]["comments"][0]["creator"] == "plain"
    logged_in = call(services, comment.comments, {"ids": [bug]}, PLAIN)
    assert logged_in["bugs"][str(bug)]["comments"][0]["creator"] == PLAIN


# Adding ------------------------------------------------------------------------

def stored_comments(services, bug_id):
    return services.query("SELECT count, body, is_private, work_time FROM comments"
                          " WHERE bug_id = ? ORDER BY count", (bug_id,))


@freeze_time("2026-02-03 04:05:06")
def test_add_comment_over_http_is_201_and_touches_the_bug(client, services, bug):
    key = services.api_key(PLAIN)
    resp = client.simulate_post(f"/rest/bug/{bug}/comment", params={"Bugzilla_api_key": key},
                                json={"comment": "Line one\r\nLine two  \n\n"})
    assert resp.status_code == 201
    new_id = resp.json["id"]
    assert resp.json == {"id": new_id}
    assert services.query("SELECT bug_id, count, body, created_at, author_id FROM comments"
                          " WHERE id = ?", (new_id,)) == [
        (bug, 4, "Line one\nLine two", "2026-02-03 04:05:06", user_id(services, PLAIN))]
    assert services.query("SELECT last_change_time FROM bugs WHERE id = ?", (bug,)) == [
        ("2026-02-03 04:05:06",)]


def test_add_comment_by_alias(services, bug):
    new_id = call(services, comment.add, {"id": "crash", "comment": "By alias"}, PLAIN)["id"]
    assert services.query("SELECT bug_id FROM comments WHERE id = ?", (new_id,)) == [(bug,)]


def test_add_comment_anonymous_is_410(client, services, bug):
    resp = client.simulate_post(f"/rest/bug/{bug}/comment", json={"comment": "Hi"})
    assert resp.status_code == 401 and resp.json["code"] == 410
    assert error_code(services, comment.add, {"id": bug, "comment": "Hi"}) == 410
    assert len(stored_comments(services, bug)) == 4


@pytest.mark.parametrize("params, code", [
    ({"comment": "No bug"}, 50),
    ({"id": "BUG", "comment": ""}, 50),
    ({"id": "BUG", "comment": "  \n\t "}, 50),
    ({"id": "BUG"}, 50),
    ({"id": "BUG", "comment": "x" * 65536}, 114),
    ({"id": 99999, "comment": "Unknown bug"}, 101),
    ({"id": "BUG", "comment": "Secret", "is_private": True}, 113),
    ({"id": "BUG", "comment": "Secret", "private": 1}, 113),
])
def test_add_comment_errors_store_nothing(services, bug, params, code):
    params = {k: (bug if v == "BUG" else v) for k, v in params.items()}
    before = stored_comments(services, bug)
    assert error_code(services, comment.add, params, PLAIN) == code
    assert stored_comments(services, bug) == before


def test_comment_of_exactly_the_limit_is_accepted(services, bug):
    call(services, comment.add, {"id": bug, "comment": "y" * 65535 + "   "}, PLAIN)
    assert stored_comments(services, bug)[-1][1] == "y" * 65535


def test_insider_may_add_private_comments_also_with_legacy_private(services, bug):
    call(services, comment.add, {"id": bug, "comment": "Private one", "is_private": True}, INSIDER)
    call(services, comment.add, {"id": bug, "comment": "Private two", "private": "1"}, INSIDER)
    assert [row[2] for row in stored_comments(services, bug)[-2:]] == [1, 1]


def test_add_comment_to_hidden_bug_is_102(services, people):
    add_group(services, "secret", members=[INSIDER])
    hidden = add_bug(services, summary="Hidden", groups=["secret"], reporter=INSIDER,
                     assigned_to=INSIDER)
    assert error_code(services, comment.add, {"id": hidden, "comment": "Hi"}, PLAIN) == 102
    assert error_code(services, comment.add, {"id": hidden, "comment": "Hi"}, ADMIN) == 102
    call(services, comment.add, {"id": hidden, "comment": "Hi"}, INSIDER)
    assert len(stored_comments(services, hidden)) == 2


def test_add_comment_needs_edit_rights_on_the_product_109(services, bug):
    editors = add_group(services, "editors", members=[INSIDER])
    product_id = services.query("SELECT product_id FROM bugs WHERE id = ?", (bug,))[0][0]
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 1, 1, 1)", (editors, product_id))
    assert error_code(services, comment.add, {"id": bug, "comment": "Hi"}, PLAIN) == 109
    assert len(stored_comments(services, bug)) == 4
    call(services, comment.add, {"id": bug, "comment": "Hi"}, INSIDER)
    assert len(stored_comments(services, bug)) == 5


@freeze_time("2026-03-01 12:00:00")
def test_work_time_of_a_timetracker_is_booked_and_lowers_remaining_time(services, people):
    bug_id = add_bug(services, summary="Timed", remaining_time=3.0, estimated_time=5.0)
    first = call(services, comment.add, {"id": bug_id, "comment": "Worked", "work_time": "2.5"},
                 PLAIN)["id"]
    call(services, comment.add, {"id": bug_id, "comment": "More", "work_time": 4}, PLAIN)
    assert services.query("SELECT work_time FROM comments WHERE bug_id = ? AND count > 0"
                          " ORDER BY count", (bug_id,)) == [(2.5,), (4.0,)]
    assert services.query("SELECT remaining_time FROM bugs WHERE id = ?", (bug_id,)) == [(0.0,)]
    history = services.query("SELECT field, removed, added, comment_id FROM bug_activity"
                             " WHERE bug_id = ? ORDER BY id", (bug_id,))
    assert history[:2] == [("work_time", "", "2.50", first),
                           ("remaining_time", "3.00", "0.50", None)]
    assert history[2][:3] == ("work_time", "", "4.00")
    assert history[3] == ("remaining_time", "0.50", "0.00", None)


def test_work_time_of_others_is_ignored(services, people):
    set_param(services, "timetrackinggroup", "insiders")
    bug_id = add_bug(services, summary="Timed", remaining_time=3.0)
    call(services, comment.add, {"id": bug_id, "comment": "Worked", "work_time": 2}, PLAIN)
    call(services, comment.add, {"id": bug_id, "comment": "Bad", "work_time": "lots"}, PLAIN)
    assert services.query("SELECT SUM(work_time) FROM comments WHERE bug_id = ?", (bug_id,)) == [
        (0.0,)]
    assert services.query("SELECT remaining_time FROM bugs WHERE id = ?", (bug_id,)) == [(3.0,)]
    assert services.query("SELECT COUNT(*) FROM bug_activity WHERE bug_id = ?", (bug_id,)) == [(0,)]


@pytest.mark.parametrize("value, code", [("lots", 52), ("100000", 54)])
def test_bad_work_time_of_a_timetracker(services, bug, value, code):
    assert error_code(services, comment.add, {"id": bug, "comment": "x", "work_time": value},
                      PLAIN) == code
    assert len(stored_comments(services, bug)) == 4
