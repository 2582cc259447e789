"""The comment an attachment leaves on its bug ("Created attachment N" or
"Comment on attachment N", followed by the attachment's current summary)
never shows the summary of a private attachment to a caller who may not see
that attachment: not when the attachment was made private after the comment
was written, not after it was renamed, and not when an insider made the
comment itself public. Checked for anonymous, plain and insider callers over
REST, JSON-RPC and XML-RPC, by bug and by comment id."""

import xmlrpc.client

import pytest

from attachment_support import ATTACHER, INSIDER, PLAIN, attach, bug, change, people
from bug_rows import set_param
from bugsvc.services import bug as bug_service, bug_search


__all__ = ["bug", "people"]   # fixtures

OLD_SUMMARY = "Heap dump of the login service"
NEW_SUMMARY = "Exploit for the login bypass"
FILE_NAME = "login-heap.bin"
CALLERS = (None, PLAIN, INSIDER)


def rest_by_bug(client, key, bug_id, comment_id):
    resp = client.simulate_get(f"/rest/bug/{bug_id}/comment", params=_credentials(key))
    assert resp.status_code == 200, resp.text
    return resp.text, resp.json["bugs"][str(bug_id)]["comments"]


def rest_by_id(client, key, bug_id, comment_id):
    resp = client.simulate_get(f"/rest/bug/comment/{comment_id}", params=_credentials(key))
    assert resp.status_code == 200, resp.text
    return resp.text, list(resp.json["comments"].values())


def jsonrpc_by_bug(client, key, bug_id, comment_id):
    resp = client.simulate_post("/jsonrpc.cgi", json={
        "method": "Bug.comments", "params": [dict(_credentials(key), ids=[bug_id])], "id": 1})
    assert resp.status_code == 200 and resp.json["error"] is None, resp.text
    return resp.text, resp.json["result"]["bugs"][str(bug_id)]["comments"]


def jsonrpc_by_id(client, key, bug_id, comment_id):
    resp = client.simulate_post("/jsonrpc.cgi", json={
        "method": "Bug.comments", "params": [dict(_credentials(key), comment_ids=[comment_id])],
        "id": 1})
    assert resp.status_code == 200 and resp.json["error"] is None, resp.text
    return resp.text, list(resp.json["result"]["comments"].values())


def xmlrpc_by_bug(client, key, bug_id, comment_id):
    result = _xmlrpc(client, "Bug.comments", dict(_credentials(key), ids=[bug_id]))
    return result[0], result[1]["bugs"][str(bug_id)]["comments"]


def xmlrpc_by_id(client, key, bug_id, comment_id):
    result = _xmlrpc(client, "Bug.comments", dict(_credentials(key), comment_ids=[comment_id]))
    return result[0], list(result[1]["comments"].values())


def _xmlrpc(client, method, params):
    resp = client.simulate_post("/xmlrpc.cgi", body=xmlrpc.client.dumps((params,), method),
                                headers={"Content-Type": "text/xml"})
    assert resp.status_code == 200
    return resp.text, xmlrpc.client.loads(resp.content)[0][0]


def _credentials(key):
    return {"Bugzilla_api_key": key} if key else {}


READERS = [rest_by_bug, rest_by_id, jsonrpc_by_bug, jsonrpc_by_id, xmlrpc_by_bug, xmlrpc_by_id]


@pytest.fixture
def keys(services, people):
    return {who: services.api_key(who) if who else None for who in CALLERS}


@pytest.fixture
def made_private_later(services, bug):
    """A public attachment with its public creation comment, then made private
    and renamed by an insider. Returns (attachment id, creation comment id)."""
    attachment_id = attach(services, bug, as_user=ATTACHER, summary=OLD_SUMMARY,
                           file_name=FILE_NAME, comment="See the dump.")
    change(services, attachment_id, as_user=INSIDER, is_private=True)
    change(services, attachment_id, as_user=INSIDER, summary=NEW_SUMMARY)
    comment_id = services.query("SELECT id FROM comments WHERE attachment_id = ?",
                                (attachment_id,))[0][0]
    return attachment_id, comment_id


def _creation_comment(comments, attachment_id):
    return next(c for c in comments if c.get("attachment_id") == attachment_id)


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
def test_a_comment_made_before_the_attachment_became_private_hides_its_summary(
        client, bug, keys, made_private_later, read):
    attachment_id, comment_id = made_private_later
    for who in (None, PLAIN):
        raw, comments = read(client, keys[who], bug, comment_id)
        for secret in (OLD_SUMMARY, NEW_SUMMARY, FILE_NAME):
            assert secret not in raw
        created = _creation_comment(comments, attachment_id)
        # The comment itself stays: public, about that attachment, with its own words.
        assert created["text"] == f"Created attachment {attachment_id}\n\n\nSee the dump."
        assert created["is_private"] is False
    raw, comments = read(client, keys[INSIDER], bug, comment_id)
    assert _creation_comment(comments, attachment_id)["text"] == (
        f"Created attachment {attachment_id}\n{NEW_SUMMARY}\n\nSee the dump.")


def test_the_creator_of_the_private_attachment_still_reads_its_summary(client, services, bug,
                                                                       made_private_later):
    attachment_id, comment_id = made_private_later
    raw, comments = rest_by_id(client, services.api_key(ATTACHER), bug, comment_id)
    assert comments[0]["text"] == (
        f"Created attachment {attachment_id}\n{NEW_SUMMARY}\n\nSee the dump.")


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
def test_comments_on_an_attachment_made_private_later_hide_its_summary(
        client, services, bug, keys, read):
    attachment_id = attach(services, bug, as_user=ATTACHER, summary=OLD_SUMMARY)
    change(services, attachment_id, as_user=ATTACHER, comment="Looked at it again.")
    change(services, attachment_id, as_user=INSIDER, is_private=True, summary=NEW_SUMMARY)
    comment_id = services.query("SELECT id FROM comments WHERE attachment_id = ? AND kind = 6",
                                (attachment_id,))[0][0]
    raw, comments = read(client, keys[PLAIN], bug, comment_id)
    assert OLD_SUMMARY not in raw and NEW_SUMMARY not in raw
    assert [c["text"] for c in comments if c["id"] == comment_id] == [
        f"Comment on attachment {attachment_id}\n\n\nLooked at it again."]
    raw, comments = read(client, keys[INSIDER], bug, comment_id)
    assert [c["text"] for c in comments if c["id"] == comment_id] == [
        f"Comment on attachment {attachment_id}\n{NEW_SUMMARY}\n\nLooked at it again."]


@pytest.mark.parametrize("read", [rest_by_bug, jsonrpc_by_id, xmlrpc_by_bug],
                         ids=lambda f: f.__name__)
def test_a_private_creation_comment_made_public_does_not_show_the_summary(
        client, services, bug, keys, read):
    attachment_id = attach(services, bug, as_user=INSIDER, summary=NEW_SUMMARY,
                           is_private=True, comment="Reproduced.")
    comment_id = services.query("SELECT id FROM comments WHERE attachment_id = ?",
                                (attachment_id,))[0][0]
    services.call(bug_service.update,
                  {"ids": [bug], "comment_is_private": {str(comment_id): False}},
                  as_user=INSIDER)
    for who in (None, PLAIN):
        raw, comments = read(client, keys[who], bug, comment_id)
        assert NEW_SUMMARY not in raw
        assert _creation_comment(comments, attachment_id)["text"] == (
            f"Created attachment {attachment_id}\n\n\nReproduced.")


def test_a_public_attachment_still_shows_its_summary_to_everyone(client, services, bug, keys):
    attachment_id = attach(services, bug, as_user=ATTACHER, summary=OLD_SUMMARY, comment="Here.")
    change(services, attachment_id, as_user=ATTACHER, summary=NEW_SUMMARY)
    comment_id = services.query("SELECT id FROM comments WHERE attachment_id = ?",
                                (attachment_id,))[0][0]
    for who in CALLERS:
        for read in READERS:
            _, comments = read(client, keys[who], bug, comment_id)
            assert _creation_comment(comments, attachment_id)["text"] == (
                f"Created attachment {attachment_id}\n{NEW_SUMMARY}\n\nHere.")


def test_without_an_insidergroup_nobody_reads_a_private_attachments_summary(
        client, services, bug, keys, made_private_later):
    attachment_id, comment_id = made_private_later
    set_param(services, "insidergroup", "")
    _, comments = rest_by_id(client, keys[INSIDER], bug, comment_id)
    assert NEW_SUMMARY not in comments[0]["text"]


def test_searching_comments_for_the_summary_finds_nothing_for_non_insiders(
        services, bug, made_private_later):
    for criteria in ({"longdesc": "Exploit", "longdesc_type": "substring"},
                     {"f1": "content", "o1": "matches", "v1": "Exploit"},
                     {"quicksearch": "comment:Exploit"}):
        for who in (None, PLAIN):
            found = services.call(bug_search.search, criteria, as_user=who, write=False)
            assert found["bugs"] == [], criteria
