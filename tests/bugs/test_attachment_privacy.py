"""Private attachments never reach non-insiders: listing, by id, the creation
comment, history, flags, search; and only insiders make attachments
private or public. Every rule is checked as anonymous caller, plain user,
the attacher (creator, not an insider), an insider and the administrator
(who is not in the insidergroup)."""

import pytest

from attachment_support import (
    ATTACHER,
    INSIDER,
    PLAIN,
    attach,
    b64,
    bug,
    change,
    editbugs_only_for_admin,
    error_code,
    flag_type,
    get_one,
    listing,
    people,
    stored_state,
)
from bug_rows import ADMIN, add_bug, add_group, set_param
from bugsvc.services import attachment, bug as bug_service, bug_search, comment


__all__ = ["bug", "people"]   # fixtures

NON_INSIDERS = (None, PLAIN, ATTACHER, ADMIN)


@pytest.fixture
def two(services, bug):
    """A public attachment and a private one (attached by the insider)."""
    public = attach(services, bug, as_user=ATTACHER, summary="Public log")
    private = attach(services, bug, as_user=INSIDER, summary="Secret dump", is_private=True,
                     comment="Internal analysis.")
    return public, private


def test_by_bug_private_ones_only_for_insiders(services, bug, two):
    public, private = two
    for who in NON_INSIDERS:
        assert [a["id"] for a in listing(services, bug, who)] == [public]
    insider_view = listing(services, bug, INSIDER)
    assert [a["id"] for a in insider_view] == [public, private]
    assert insider_view[1]["is_private"] is True


def test_by_bug_the_creator_sees_their_own_private_attachment(services, bug):
    add_group(services, "attachers", members=[ATTACHER])
    set_param(services, "insidergroup", "attachers")
    own = attach(services, bug, as_user=ATTACHER, is_private=True)
    set_param(services, "insidergroup", "insiders")
    assert [a["id"] for a in listing(services, bug, ATTACHER)] == [own]
    for who in (None, PLAIN, ADMIN):
        assert listing(services, bug, who) == []


def test_by_id_a_private_attachment_is_304_for_every_non_insider(client, services, bug, two):
    _, private = two
    for who in NON_INSIDERS:
        before = stored_state(services)
        assert error_code(services, attachment.get, {"attachment_ids": [private]}, who) == 304
        assert stored_state(services) == before
    assert get_one(services, private, as_user=INSIDER)["summary"] == "Secret dump"
    resp = client.simulate_get(f"/rest/bug/attachment/{private}")
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    assert "Secret dump" not in resp.text


def test_by_id_even_its_non_insider_creator_gets_304(services, bug):
    add_group(services, "attachers", members=[ATTACHER])
    set_param(services, "insidergroup", "attachers")
    own = attach(services, bug, as_user=ATTACHER, is_private=True)
    set_param(services, "insidergroup", "insiders")
    assert error_code(services, attachment.get, {"attachment_ids": [own]}, ATTACHER) == 304


def test_attachments_of_an_invisible_bug_are_not_shown(client, services, people):
    bug = add_bug(services, summary="Hidden", reporter=INSIDER, assigned_to=INSIDER)
    secret_group = add_group(services, "secret", members=[INSIDER])
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                     (bug, secret_group))
    new_id = attach(services, bug, as_user=INSIDER)
    for who in (None, PLAIN, ATTACHER, ADMIN):
        # The bug's number does not show; the answer is that of a missing id.
        assert error_code(services, attachment.get, {"attachment_ids": [new_id]}, who) == 304
        assert error_code(services, attachment.get, {"ids": [bug]}, who) == 102
    resp = client.simulate_get(f"/rest/bug/{bug}/attachment")
    assert (resp.status_code, resp.json["code"]) == (401, 102)
    assert get_one(services, new_id, as_user=INSIDER)["id"] == new_id
    before = stored_state(services)
    for who in (PLAIN, ATTACHER, ADMIN):
        assert error_code(services, attachment.create,
                          {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                           "content_type": "text/plain"}, who) == 102
        assert error_code(services, attachment.update, {"ids": [new_id], "summary": "Leak"},
                          who) == 32000
    assert stored_state(services) == before


def test_the_creation_comment_of_a_private_attachment_is_private(services, bug, two):
    _, private = two
    text = f"Created attachment {private}\nSecret dump\n\nInternal analysis."
    for who in NON_INSIDERS:
        found = services.call(comment.comments, {"ids": [bug]}, as_user=who, write=False)
        assert text not in [c["text"] for c in found["bugs"][str(bug)]["comments"]]
    found = services.call(comment.comments, {"ids": [bug]}, as_user=INSIDER, write=False)
    created = found["bugs"][str(bug)]["comments"][-1]
    assert (created["text"], created["is_private"], created["attachment_id"]) == (
        text, True, private)


def test_a_comment_on_a_private_attachment_is_private(services, bug, two):
    _, private = two
    change(services, private, as_user=INSIDER, comment="Still secret.")
    rows = services.query("SELECT is_private, kind, attachment_id FROM comments"
                          " ORDER BY id DESC LIMIT 1")
    assert rows == [(1, 6, private)]


def test_history_of_a_private_attachment_only_for_insiders(services, bug, two):
    public, private = two
    change(services, private, as_user=INSIDER, summary="Renamed secret")
    change(services, public, as_user=ATTACHER, summary="Renamed public")

    def attachment_rows(who):
        found = services.call(bug_service.history, {"ids": [bug]}, as_user=who, write=False)
        return [c.get("attachment_id") for entry in found["bugs"][0]["history"]
                for c in entry["changes"]]

    for who in NON_INSIDERS:
        assert attachment_rows(who) == [public]
    assert sorted(attachment_rows(INSIDER)) == sorted([private, public])


def test_search_on_attachment_fields_skips_private_ones_for_non_insiders(services, bug, two):
    criteria = {"f1": "attachments.description", "o1": "substring", "v1": "Secret"}
    for who in NON_INSIDERS:
        assert services.call(bug_search.search, criteria, as_user=who, write=False) == {"bugs": []}
    found = services.call(bug_search.search, criteria, as_user=INSIDER, write=False)
    assert [b["id"] for b in found["bugs"]] == [bug]


def test_making_private_needs_an_insider_on_create(services, bug):
    for who in (PLAIN, ATTACHER, ADMIN):
        before = stored_state(services)
        assert error_code(services, attachment.create,
                          {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                           "content_type": "text/plain", "is_private": True}, who) == 113
        assert stored_state(services) == before
    assert attach(services, bug, as_user=INSIDER, is_private=True)
    assert attach(services, bug, as_user=PLAIN, is_private=False)


def test_changing_privacy_needs_an_insider(client, services, bug, two):
    public, private = two
    for who in (PLAIN, ATTACHER, ADMIN):
        before = stored_state(services)
        assert error_code(services, attachment.update, {"ids": [public], "is_private": True},
                          who) == 113
        assert stored_state(services) == before
    key = services.api_key(ATTACHER)
    resp = client.simulate_put(f"/rest/bug/attachment/{public}",
                               params={"Bugzilla_api_key": key}, json={"is_private": True})
    assert (resp.status_code, resp.json["code"]) == (401, 113)
    # the creator may send its current value
    assert change(services, public, as_user=ATTACHER, is_private=False)["changes"] == {}
    result = change(services, public, as_user=INSIDER, is_private=True)
    assert result["changes"] == {"is_private": {"removed": "0", "added": "1"}}
    assert [a["id"] for a in listing(services, bug, PLAIN)] == []
    assert change(services, private, as_user=INSIDER, is_private=False)["changes"]
    assert [a["id"] for a in listing(services, bug, PLAIN)] == [private]


def test_only_the_creator_or_insiders_edit_a_private_attachment(services, bug, two):
    _, private = two
    for who in (PLAIN, ATTACHER, ADMIN):
        before = stored_state(services)
        assert error_code(services, attachment.update, {"ids": [private], "summary": "Leak"},
                          who) == 32000
        assert stored_state(services) == before
    assert change(services, private, as_user=INSIDER, summary="Fine")["changes"]


def test_a_private_attachment_cannot_be_obsoleted_by_a_non_insider(services, bug, two):
    _, private = two
    before = stored_state(services)
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                       "content_type": "text/plain", "obsoletes": [private]}, ADMIN) == 32000
    assert stored_state(services) == before


def test_requestee_of_a_flag_on_a_private_attachment_must_be_an_insider(services, bug):
    flag_type(services, "review")
    params = {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
              "content_type": "text/plain", "is_private": True,
              "flags": [{"name": "review", "status": "?", "requestee": PLAIN}]}
    before = stored_state(services)
    assert error_code(services, attachment.create, params, INSIDER) == 32000
    assert stored_state(services) == before
    params["flags"][0]["requestee"] = INSIDER
    new_id = services.call(attachment.create, params, as_user=INSIDER)["ids"][0]
    assert get_one(services, new_id)["flags"][0]["requestee"] == INSIDER
    before = stored_state(services)
    assert error_code(services, attachment.update,
                      {"ids": [new_id], "flags": [{"name": "review", "status": "?", "new": True,
                                                   "requestee": PLAIN}]}, INSIDER) == 32000
    assert stored_state(services) == before


def test_flags_of_private_attachments_stay_hidden(services, bug):
    flag_type(services, "review")
    private = attach(services, bug, as_user=INSIDER, is_private=True,
                     flags=[{"name": "review", "status": "+"}])
    for who in NON_INSIDERS:
        assert listing(services, bug, who) == []
        got = services.call(bug_service.get, {"ids": [bug]}, as_user=who, write=False)
        assert got["bugs"][0]["flags"] == []
    assert listing(services, bug, INSIDER)[0]["flags"][0]["name"] == "review"
    assert private


def test_plain_users_and_anonymous_cannot_change_others_attachments(client, services, bug, two):
    public, _ = two
    editbugs_only_for_admin(services)
    before = stored_state(services)
    assert error_code(services, attachment.update, {"ids": [public], "is_obsolete": True},
                      PLAIN) == 32000
    resp = client.simulate_put(f"/rest/bug/attachment/{public}", json={"is_obsolete": True})
    assert (resp.status_code, resp.json["code"]) == (401, 410)
    assert stored_state(services) == before


def test_logged_out_callers_see_e_mails_filtered_when_asked(services, bug):
    flag_type(services, "review")
    attach(services, bug, flags=[{"name": "review", "status": "?", "requestee": PLAIN}])
    set_param(services, "webservice_email_filter", "1")
    anonymous = listing(services, bug)[0]
    assert (anonymous["creator"], anonymous["flags"][0]["setter"],
            anonymous["flags"][0]["requestee"]) == ("attacher", "attacher", "plain")
    assert listing(services, bug, PLAIN)[0]["creator"] == ATTACHER
