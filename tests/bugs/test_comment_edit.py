"""Editing one's own comment, as bugzilla.mozilla.org: only members of the
group edit_comments_group names (empty by default: nobody), only their own
comments; the replaced text kept in the comment's revisions, which insiders
and administrators read; an "edited" mark for everyone. Over REST, XML-RPC
and the pages, for an anonymous caller, a plain user, a member and the
people who may read the earlier texts."""

import re

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_bug_group, set_param
from bugsvc.services import comment as comment_service
from conftest import world_fixture
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World
from rpc_support import xmlrpc_call


MEMBER, MEMBER_PASSWORD = "member@example.com", "member-password-1"


@world_fixture
def world(services):
    world = World(services)
    services.add_user(MEMBER, password=MEMBER_PASSWORD, real_name="Mo Member")
    add_bug_group(services, "editors", members=[MEMBER], with_admin=False)
    world.mine = services.call(comment_service.add, {
        "id": world.bug, "comment": "I think it is teh cache"}, as_user=MEMBER)["id"]
    world.plains = services.call(comment_service.add, {
        "id": world.bug, "comment": "Pat's words"}, as_user=PLAIN)["id"]
    return world


def key(services, login):
    return services.api_key(login)


def edit(client, services, comment_id, who, text="I think it is the cache", **more):
    headers = {"X-BUGZILLA-API-KEY": key(services, who)} if who else {}
    return client.simulate_put(f"/rest/editcomments/comment/{comment_id}",
                               json=dict({"new_comment": text}, **more), headers=headers)


def stored(services, comment_id):
    return (services.query("SELECT body, is_markdown, edit_count FROM comments WHERE id = ?",
                           (comment_id,))[0],
            services.query("SELECT COUNT(*) FROM comment_revisions")[0][0])


def test_nobody_edits_while_the_parameter_is_empty(client, world, services):
    before = stored(services, world.mine)
    for who in (MEMBER, ADMIN):
        resp = edit(client, services, world.mine, who)
        assert (resp.status_code, resp.json["code"]) == (401, 304)
    assert stored(services, world.mine) == before


def test_anonymous_and_plain_users_may_not_edit(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    before = stored(services, world.plains)
    resp = edit(client, services, world.plains, None)
    assert (resp.status_code, resp.json["code"]) == (401, 410)
    resp = edit(client, services, world.plains, PLAIN, "Pat's new words")
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    assert stored(services, world.plains) == before


def test_a_member_edits_their_own_comment_and_its_old_text_is_kept(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    resp = edit(client, services, world.mine, MEMBER, "I think it is **the** cache",
                is_markdown=True)
    assert resp.status_code == 200
    assert resp.json == {"text": "I think it is **the** cache", "is_markdown": True,
                         "html": "<p>I think it is <strong>the</strong> cache</p>\n", "count": 1}
    assert stored(services, world.mine) == ((("I think it is **the** cache", 1, 1)), 1)
    listed = client.simulate_get(f"/rest/bug/comment/{world.mine}").json["comments"]
    assert listed[str(world.mine)]["edits"] == 1
    assert listed[str(world.mine)]["text"] == "I think it is **the** cache"
    revisions = client.simulate_get(f"/rest/editcomments/comment/{world.mine}/revisions",
                                    headers={"X-BUGZILLA-API-KEY": key(services, INSIDER)})
    assert revisions.status_code == 200
    [revision] = revisions.json["revisions"]
    assert revision["text"] == "I think it is teh cache" and revision["is_markdown"] is False
    assert revision["editor"] == MEMBER
    # The same text again changes nothing.
    again = edit(client, services, world.mine, MEMBER, "I think it is **the** cache")
    assert (again.status_code, again.json["code"]) == (400, 32000)
    assert stored(services, world.mine)[1] == 1


def test_a_member_may_not_edit_someone_elses_comment(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    before = stored(services, world.plains)
    resp = edit(client, services, world.plains, MEMBER, "Not what Pat said")
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    assert stored(services, world.plains) == before


def test_hidden_and_missing_comments_answer_alike(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    private = services.query("SELECT id FROM comments WHERE is_private = 1")[0][0]
    for comment_id in (private, 999999):
        resp = edit(client, services, comment_id, MEMBER)
        assert (resp.status_code, resp.json["code"]) == (401, 110)
    for bad, code in (({"new_comment": " "}, 50), ({"new_comment": "x" * 70000}, 114)):
        resp = client.simulate_put(f"/rest/editcomments/comment/{world.mine}", json=bad,
                                   headers={"X-BUGZILLA-API-KEY": key(services, MEMBER)})
        assert resp.json["code"] == code
    assert services.query("SELECT COUNT(*) FROM comment_revisions")[0][0] == 0


def test_the_earlier_texts_are_for_insiders_and_administrators_only(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    edit(client, services, world.mine, MEMBER)
    path = f"/rest/editcomments/comment/{world.mine}/revisions"
    for who, status in ((INSIDER, 200), (ADMIN, 200), (MEMBER, 401), (PLAIN, 401)):
        resp = client.simulate_get(path, headers={"X-BUGZILLA-API-KEY": key(services, who)})
        assert resp.status_code == status, who
        if status != 200:
            assert resp.json["code"] == 304 and "teh" not in resp.text
    anonymous = client.simulate_get(path)
    assert anonymous.json["code"] == 410 and "teh" not in anonymous.text


def test_editing_over_xmlrpc_follows_the_same_rules(client, world, services):
    set_param(services, "edit_comments_group", "editors")
    result, fault = xmlrpc_call(client, "EditComments.update_comment", {
        "Bugzilla_api_key": key(services, MEMBER), "comment_id": world.plains,
        "new_comment": "x"})
    assert (result, fault) == (None, 304)
    result, fault = xmlrpc_call(client, "EditComments.update_comment", {
        "Bugzilla_api_key": key(services, MEMBER), "comment_id": world.mine,
        "new_comment": "over xml-rpc"})
    assert fault is None and result["count"] == 1


# The pages -----------------------------------------------------------------------------

def signed_in(app, who):
    browser = Browser(app)
    password = {ADMIN: ADMIN_PASSWORD, MEMBER: MEMBER_PASSWORD}.get(who) or PASSWORDS[who]
    browser.login(who, password)
    return browser


def test_the_edit_link_shows_on_a_members_own_comments_only(app, world, services):
    set_param(services, "edit_comments_group", "editors")
    page = signed_in(app, MEMBER).get(f"/show_bug.cgi?id={world.bug}").text
    assert page.count('href="/editcomment.cgi?comment_id=') == 1
    assert f'href="/editcomment.cgi?comment_id={world.mine}"' in page
    for who in (PLAIN, ADMIN):
        assert "/editcomment.cgi" not in signed_in(app, who).get(
            f"/show_bug.cgi?id={world.bug}").text
    assert "/editcomment.cgi" not in Browser(app).get(f"/show_bug.cgi?id={world.bug}").text


def test_editing_in_the_pages_marks_the_comment_for_all_and_shows_history_to_insiders(
        app, world, services):
    set_param(services, "edit_comments_group", "editors")
    browser = signed_in(app, MEMBER)
    form = browser.get(f"/editcomment.cgi?comment_id={world.mine}")
    assert form.status_code == 200 and "I think it is teh cache</textarea>" in form.text
    preview = browser.post("/editcomment.cgi", {"comment_id": world.mine, "preview": "1",
                                                "comment": "*fixed*", "comment_is_markdown": "1"})
    assert "<em>fixed</em>" in preview.text and stored(services, world.mine)[1] == 0
    done = browser.post("/editcomment.cgi", {"comment_id": world.mine, "comment": "*fixed*",
                                             "comment_is_markdown": "1"})
    assert done.status_code == 200 and "<em>fixed</em>" in done.text
    assert stored(services, world.mine) == (("*fixed*", 1, 1), 1)
    history = f"/page.cgi?id=comment-revisions.html&amp;comment_id={world.mine}"
    for who, linked in ((INSIDER, True), (ADMIN, True), (PLAIN, False), (MEMBER, False)):
        page = signed_in(app, who).get(f"/show_bug.cgi?id={world.bug}").text
        assert '<span class="edited">' in page
        assert (history in page) is linked, who
    anonymous = Browser(app).get(f"/show_bug.cgi?id={world.bug}").text
    assert '<span class="edited">Edited</span>' in anonymous and history not in anonymous
    revisions = signed_in(app, INSIDER).get(
        f"/page.cgi?id=comment-revisions.html&comment_id={world.mine}")
    assert revisions.status_code == 200 and "I think it is teh cache" in revisions.text
    refused = signed_in(app, PLAIN).get(
        f"/page.cgi?id=comment-revisions.html&comment_id={world.mine}")
    assert refused.status_code == 401 and "teh cache" not in refused.text


def test_the_edit_form_refuses_others_comments_and_forged_posts(app, world, services):
    set_param(services, "edit_comments_group", "editors")
    browser = signed_in(app, MEMBER)
    browser.get(f"/editcomment.cgi?comment_id={world.plains}")
    refused = browser.post("/editcomment.cgi", {"comment_id": world.plains,
                                                "comment": "Not Pat's"})
    assert refused.status_code == 401 and "You may only edit your own comments" in refused.text
    forged = browser.post("/editcomment.cgi", {"comment_id": world.mine, "comment": "forged",
                                               "csrf_token": "forged"})
    assert forged.status_code == 403
    assert services.query("SELECT COUNT(*) FROM comment_revisions")[0][0] == 0
    assert re.search(r"Pat&#39;s words|Pat's words", browser.get(
        f"/show_bug.cgi?id={world.bug}").text)
