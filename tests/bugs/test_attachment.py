"""Attachments: create, get, update; the privacy rules are
in test_attachment_privacy.py."""

import base64

import pytest
from freezegun import freeze_time

from attachment_support import (
    ATTACHER,
    INSIDER,
    PLAIN,
    T0,
    T1,
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
from bugsvc.services import attachment, comment


__all__ = ["bug", "people"]   # fixtures


def texts(services, bug_id, as_user=INSIDER):
    result = services.call(comment.comments, {"ids": [bug_id]}, as_user=as_user, write=False)
    return result["bugs"][str(bug_id)]["comments"]


def bug_changed(services, bug_id):
    return services.query("SELECT last_change_time FROM bugs WHERE id = ?", (bug_id,))[0][0]


# Create ----------------------------------------------------------------------------

def test_create_over_http_answers_201_and_the_attachment_reads_back(client, services, bug):
    key = services.api_key(ATTACHER)
    with freeze_time("2026-03-01 12:00:00"):
        resp = client.simulate_post(f"/rest/bug/{bug}/attachment",
                                    params={"Bugzilla_api_key": key},
                                    json={"ids": [bug], "data": b64(b"\x00\x01binary\xff"),
                                          "file_name": "dump.bin", "summary": "Core dump",
                                          "content_type": "application/octet-stream",
                                          "comment": "Here it is."})
    assert resp.status_code == 201
    new_id = resp.json["ids"][0]
    assert resp.json == {"ids": [new_id]} and isinstance(new_id, int)
    got = client.simulate_get(f"/rest/bug/attachment/{new_id}",
                              params={"Bugzilla_api_key": key})
    assert got.status_code == 200
    assert got.json["bugs"] == {}
    assert got.json["attachments"] == {str(new_id): {
        "id": new_id, "bug_id": bug, "file_name": "dump.bin", "summary": "Core dump",
        "content_type": "application/octet-stream", "is_private": False,
        "is_obsolete": False, "is_patch": False, "creator": ATTACHER,
        "creation_time": "2026-03-01T12:00:00Z", "last_change_time": "2026-03-01T12:00:00Z",
        "size": 9, "data": b64(b"\x00\x01binary\xff"), "flags": []}}
    assert bug_changed(services, bug) == "2026-03-01 12:00:00"


def test_create_adds_the_created_attachment_comment_with_its_id(services, bug):
    new_id = attach(services, bug, summary="The log", comment="See line 3.")
    last = texts(services, bug)[-1]
    assert last["text"] == f"Created attachment {new_id}\nThe log\n\nSee line 3."
    assert last["attachment_id"] == new_id
    assert last["creator"] == ATTACHER and last["is_private"] is False
    assert last["time"] == "2026-03-01T12:00:00Z"


def test_create_without_comment_still_adds_the_comment(services, bug):
    new_id = attach(services, bug, summary="Screenshot")
    assert texts(services, bug)[-1]["text"] == f"Created attachment {new_id}\nScreenshot"


def test_one_call_attaches_to_every_target_bug_with_one_timestamp(services, bug):
    other = add_bug(services, summary="Other", created="2026-01-05 00:00:00")
    result = services.call(attachment.create,
                           {"ids": [other, "crash"], "data": b64(b"same"), "file_name": "a.txt",
                            "summary": "Shared", "content_type": "text/plain"},
                           as_user=ATTACHER, now=T0)
    first, second = result["ids"]
    assert second > first
    assert listing(services, other, ADMIN)[0]["id"] == first
    assert listing(services, bug, ADMIN)[0]["id"] == second
    assert services.query("SELECT bug_id, created_at FROM attachments ORDER BY id") == [
        (other, "2026-03-01 12:00:00"), (bug, "2026-03-01 12:00:00")]
    assert bug_changed(services, bug) == bug_changed(services, other) == "2026-03-01 12:00:00"
    assert texts(services, other)[-1]["text"] == f"Created attachment {first}\nShared"


def test_the_same_bug_named_twice_gets_one_attachment(services, bug):
    result = services.call(attachment.create,
                           {"ids": [bug, "crash"], "data": b64(b"x"), "file_name": "a.txt",
                            "summary": "Once", "content_type": "text/plain"}, as_user=ATTACHER)
    assert len(result["ids"]) == 1
    assert len(listing(services, bug, ADMIN)) == 1


def test_a_patch_is_always_text_plain(services, bug):
    new_id = attach(services, bug, is_patch=True, content_type="not a type")
    got = get_one(services, new_id)
    assert got["is_patch"] is True and got["content_type"] == "text/plain"


@pytest.mark.parametrize("sent, stored", [
    ("aGVsbG8=", b"hello"),
    ("aGVs\nbG8=\n", b"hello"),
    ("aG Vs*bG8", b"hello"),
    ("aGVsbG8=ignored", b"hello"),
    ("aGVsbG8gd29ybGQ", b"hello world"),
])
def test_base64_is_decoded_leniently(services, bug, sent, stored):
    new_id = services.call(attachment.create,
                           {"ids": [bug], "data": sent, "file_name": "a.txt", "summary": "S",
                            "content_type": "text/plain"}, as_user=ATTACHER)["ids"][0]
    got = get_one(services, new_id)
    assert base64.b64decode(got["data"]) == stored and got["size"] == len(stored)


@pytest.mark.parametrize("sent, kept", [
    ("C:\\Users\\me\\crash.log", "crash.log"),
    ("/tmp/dir/trace.txt", "trace.txt"),
    ("  spaced.txt  ", "spaced.txt"),
    ("x" * 250 + "-tail.txt", ("x" * 250 + "-tail.txt")[-255:]),
])
def test_file_names_lose_their_directory_and_keep_the_last_255_characters(services, bug, sent,
                                                                          kept):
    assert get_one(services, attach(services, bug, file_name=sent))["file_name"] == kept


def test_content_type_with_charset_is_accepted(services, bug):
    new_id = attach(services, bug, content_type="text/plain; charset=UTF-8")
    assert get_one(services, new_id)["content_type"] == "text/plain; charset=UTF-8"


@pytest.mark.parametrize("changes, code", [
    ({"ids": []}, 50),
    ({"data": None}, 50),
    ({"data": ""}, 606),
    ({"data": "!!!"}, 606),
    ({"summary": "   "}, 604),
    ({"summary": None}, 604),
    ({"file_name": ""}, 603),
    ({"file_name": None}, 603),
    ({"file_name": "some/dir/"}, 603),
    ({"content_type": "text"}, 601),
    ({"content_type": "foo/bar"}, 601),
    ({"content_type": None}, 601),
    ({"ids": [999]}, 101),
    ({"ids": ["no-such-alias"]}, 100),
    ({"comment": "x" * 65536}, 114),
    ({"flags": [{"name": "nope", "status": "?"}]}, 51),
    ({"obsoletes": [999]}, 32000),
    ({"obsoletes": ["abc"]}, 52),
])
def test_create_errors_leave_nothing_stored(services, bug, changes, code):
    params = {"ids": [bug], "data": b64(b"content"), "file_name": "a.txt", "summary": "S",
              "content_type": "text/plain"}
    params.update(changes)
    params = {k: v for k, v in params.items() if v is not None}
    before = stored_state(services)
    assert error_code(services, attachment.create, params, ATTACHER) == code
    assert stored_state(services) == before


def test_create_over_http_needs_a_login(client, services, bug):
    resp = client.simulate_post(f"/rest/bug/{bug}/attachment",
                                json={"data": b64(b"x"), "file_name": "a", "summary": "s",
                                      "content_type": "text/plain"})
    assert resp.status_code == 401 and resp.json["code"] == 410
    assert services.query("SELECT COUNT(*) FROM attachments") == [(0,)]


def test_create_errors_over_http_have_their_status(client, services, bug):
    key = services.api_key(ATTACHER)
    body = {"data": b64(b"x"), "file_name": "a", "summary": "s", "content_type": "text/plain"}
    resp = client.simulate_post("/rest/bug/999/attachment", params={"Bugzilla_api_key": key},
                                json=body)
    assert (resp.status_code, resp.json["code"]) == (404, 101)
    resp = client.simulate_post(f"/rest/bug/{bug}/attachment", params={"Bugzilla_api_key": key},
                                json=dict(body, data=""))
    assert (resp.status_code, resp.json["code"]) == (400, 606)


def test_size_limit_is_maxattachmentsize_kilobytes_by_default(services, bug):
    assert attach(services, bug, data=b"a" * 1024000)
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"a" * 1024001), "file_name": "big",
                       "summary": "Big", "content_type": "text/plain"}, ATTACHER) == 600
    set_param(services, "maxattachmentsize", "1")
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"a" * 1025), "file_name": "big",
                       "summary": "Big", "content_type": "text/plain"}, ATTACHER) == 600


def test_maxlocalattachment_raises_the_limit(services, bug):
    set_param(services, "maxlocalattachment", "2")
    new_id = attach(services, bug, data=b"b" * 2 * 1048576)
    assert get_one(services, new_id, exclude_fields="data")["size"] == 2 * 1048576


def test_create_needs_edit_rights_on_the_product(services, bug):
    group_id = add_group(services, "editors", members=[ADMIN])
    product_id = services.query("SELECT id FROM products WHERE name = 'TestProduct'")[0][0]
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, 0, 0, 1)", (group_id, product_id))
    params = {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
              "content_type": "text/plain"}
    assert error_code(services, attachment.create, params, ATTACHER) == 109
    assert services.call(attachment.create, params, as_user=ADMIN)["ids"]


def test_attachment_flags_on_create(services, bug):
    review = flag_type(services, "review")
    flag_type(services, "blocker-bug", target_type="bug")
    new_id = attach(services, bug, flags=[{"name": "review", "status": "?", "requestee": PLAIN}])
    flags = get_one(services, new_id)["flags"]
    assert flags == [{"id": flags[0]["id"], "name": "review", "type_id": review,
                      "creation_date": "2026-03-01T12:00:00Z",
                      "modification_date": "2026-03-01T12:00:00Z", "status": "?",
                      "setter": ATTACHER, "requestee": PLAIN}]
    assert services.query("SELECT bug_id, attachment_id FROM flags") == [(bug, new_id)]
    # a bug flag type is not usable on an attachment
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                       "content_type": "text/plain",
                       "flags": [{"name": "blocker-bug", "status": "+"}]}, ATTACHER) == 51


def test_flag_rules_apply_on_create(services, bug):
    flag_type(services, "approval", is_requestable=False)
    params = {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
              "content_type": "text/plain", "flags": [{"name": "approval", "status": "?"}]}
    assert error_code(services, attachment.create, params, ATTACHER) == 129
    params["flags"] = [{"name": "approval"}]
    assert error_code(services, attachment.create, params, ATTACHER) == 129


def test_obsoletes_marks_older_attachments_obsolete_and_cancels_their_requests(services, bug):
    flag_type(services, "review")
    flag_type(services, "qa")
    old = attach(services, bug, flags=[{"name": "review", "status": "?"},
                                       {"name": "qa", "status": "+"}], now=T0)
    new = attach(services, bug, obsoletes=[old], now=T1)
    got = get_one(services, old)
    assert got["is_obsolete"] is True
    assert [(f["name"], f["status"]) for f in got["flags"]] == [("qa", "+")]
    assert got["last_change_time"] == "2026-03-02T09:30:00Z"
    assert get_one(services, new)["is_obsolete"] is False
    rows = services.query("SELECT field, removed, added, attachment_id, changed_at"
                          " FROM bug_activity ORDER BY id")
    assert rows == [("attachments.isobsolete", "0", "1", old, "2026-03-02 09:30:00"),
                    ("flagtypes.name", "review?", "", old, "2026-03-02 09:30:00")]


def test_obsoletes_must_be_on_a_target_bug(services, bug):
    other = add_bug(services, summary="Other")
    elsewhere = attach(services, other)
    before = stored_state(services)
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                       "content_type": "text/plain", "obsoletes": [elsewhere]}, ATTACHER) == 32000
    assert stored_state(services) == before


def test_obsoletes_needs_the_right_to_edit_that_attachment(services, bug):
    editbugs_only_for_admin(services)
    theirs = attach(services, bug, as_user=PLAIN)
    assert error_code(services, attachment.create,
                      {"ids": [bug], "data": b64(b"x"), "file_name": "a", "summary": "s",
                       "content_type": "text/plain", "obsoletes": [theirs]}, ATTACHER) == 32000
    attach(services, bug, as_user=ADMIN, obsoletes=[theirs])
    assert get_one(services, theirs)["is_obsolete"] is True


def test_unknown_create_keys_are_ignored(services, bug):
    assert attach(services, bug, colour="blue", is_obsolete=True)


# Get -------------------------------------------------------------------------------

def test_get_by_bug_lists_in_id_order_and_keys_by_numeric_id(client, services, bug):
    first = attach(services, bug, summary="First")
    second = attach(services, bug, summary="Second")
    resp = client.simulate_get("/rest/bug/crash/attachment", params={"exclude_fields": "data"})
    assert resp.status_code == 200
    assert resp.json["attachments"] == {}
    assert [a["id"] for a in resp.json["bugs"][str(bug)]] == [first, second]
    assert "data" not in resp.json["bugs"][str(bug)][0]


def test_get_merges_path_and_query_ids(client, services, bug):
    other = add_bug(services, summary="Other")
    mine = attach(services, bug)
    theirs = attach(services, other)
    resp = client.simulate_get(f"/rest/bug/attachment/{mine}",
                               query_string=f"attachment_ids={theirs}&attachment_ids=424242")
    assert resp.status_code == 200
    assert sorted(resp.json["attachments"]) == sorted([str(mine), str(theirs)])
    resp = client.simulate_get(f"/rest/bug/{bug}/attachment",
                               query_string=f"attachment_ids={theirs}")
    assert list(resp.json["bugs"]) == [str(bug)]
    assert list(resp.json["attachments"]) == [str(theirs)]
    # the same attachment listed and requested comes out whole both times
    resp = client.simulate_get(f"/rest/bug/{bug}/attachment",
                               query_string=f"attachment_ids={mine}")
    assert resp.json["bugs"][str(bug)][0] == resp.json["attachments"][str(mine)]
    assert resp.json["attachments"][str(mine)]["data"] == b64(b"hello world")


def test_unknown_attachment_ids_are_silently_left_out(client, services, bug):
    resp = client.simulate_get("/rest/bug/attachment/424242")
    assert resp.status_code == 200
    assert resp.json == {"bugs": {}, "attachments": {}}


def test_a_bug_without_attachments_has_an_empty_list(services, bug):
    assert services.call(attachment.get, {"ids": ["crash"]}) == {"bugs": {str(bug): []},
                                                                 "attachments": {}}


@pytest.mark.parametrize("params, code, status", [
    ({}, 50, 400),
    ({"ids": [999]}, 101, 404),
    ({"ids": ["nope"]}, 100, 400),
    ({"attachment_ids": ["x"]}, 52, 400),
])
def test_get_errors(client, services, bug, params, code, status):
    assert error_code(services, attachment.get, params) == code
    if params:
        key, value = next(iter(params.items()))
        resp = client.simulate_get("/rest/bug/attachment/1" if key == "attachment_ids"
                                   else f"/rest/bug/{value[0]}/attachment",
                                   query_string=f"{key}={value[0]}")
        assert (resp.status_code, resp.json["code"]) == (status, code)


def test_include_fields_trims_the_attachment_objects(client, services, bug):
    new_id = attach(services, bug)
    resp = client.simulate_get(f"/rest/bug/attachment/{new_id}",
                               params={"include_fields": "id,size"})
    assert resp.json["attachments"] == {str(new_id): {"id": new_id, "size": 11}}
    resp = client.simulate_get(f"/rest/bug/{bug}/attachment",
                               params={"exclude_fields": "data,flags,creator"})
    assert set(resp.json["bugs"][str(bug)][0]) == {
        "id", "bug_id", "file_name", "summary", "content_type", "is_private", "is_obsolete",
        "is_patch", "creation_time", "last_change_time", "size"}


def test_excluding_data_never_reads_the_content(services, bug):
    new_id = attach(services, bug)
    statements = []

    def traced(ctx, params):
        ctx.conn.set_trace_callback(statements.append)
        try:
            return attachment.get(ctx, params)
        finally:
            ctx.conn.set_trace_callback(None)

    result = services.call(traced, {"ids": [bug], "attachment_ids": [new_id],
                                    "exclude_fields": "data"}, write=False)
    assert "data" not in result["attachments"][str(new_id)]
    assert statements and not any("attachment_data" in sql for sql in statements)
    statements.clear()
    services.call(traced, {"ids": [bug]}, write=False)
    assert any("attachment_data" in sql for sql in statements)


# Update ----------------------------------------------------------------------------

def test_update_every_field_answers_the_changes_and_writes_history(client, services, bug):
    new_id = attach(services, bug, now=T0)
    key = services.api_key(ATTACHER)
    with freeze_time("2026-03-02 09:30:00"):
        resp = client.simulate_put(f"/rest/bug/attachment/{new_id}",
                                   params={"Bugzilla_api_key": key},
                                   json={"summary": "Full log", "file_name": "dir/full.log",
                                         "content_type": "text/x-log", "is_obsolete": True,
                                         "colour": "ignored"})
    assert resp.status_code == 200
    assert resp.json == {"attachments": [{
        "id": new_id, "last_change_time": "2026-03-02T09:30:00Z",
        "changes": {"summary": {"removed": "The log", "added": "Full log"},
                    "file_name": {"removed": "log.txt", "added": "full.log"},
                    "content_type": {"removed": "text/plain", "added": "text/x-log"},
                    "is_obsolete": {"removed": "0", "added": "1"}}}]}
    rows = services.query("SELECT field, removed, added, attachment_id FROM bug_activity"
                          " ORDER BY field")
    assert rows == [("attachments.description", "The log", "Full log", new_id),
                    ("attachments.filename", "log.txt", "full.log", new_id),
                    ("attachments.isobsolete", "0", "1", new_id),
                    ("attachments.mimetype", "text/plain", "text/x-log", new_id)]
    got = get_one(services, new_id)
    assert (got["summary"], got["file_name"], got["content_type"], got["is_obsolete"],
            got["last_change_time"]) == ("Full log", "full.log", "text/x-log", True,
                                         "2026-03-02T09:30:00Z")
    assert bug_changed(services, bug) == "2026-03-02 09:30:00"


def test_history_shows_attachment_changes_with_their_id(services, bug):
    from bugsvc.services import bug as bug_service
    new_id = attach(services, bug)
    change(services, new_id, is_patch=True)
    history = services.call(bug_service.history, {"ids": [bug]}, as_user=ADMIN)
    changes = history["bugs"][0]["history"][-1]["changes"]
    assert {"field_name": "attachments.ispatch", "removed": "0", "added": "1",
            "attachment_id": new_id} in changes


def test_turning_a_file_into_a_patch_makes_it_text_plain(services, bug):
    new_id = attach(services, bug, content_type="image/png")
    result = change(services, new_id, is_patch=True)
    assert result["changes"] == {"is_patch": {"removed": "0", "added": "1"},
                                 "content_type": {"removed": "image/png", "added": "text/plain"}}
    assert change(services, new_id, content_type="image/png")["changes"] == {}


def test_no_change_keeps_the_previous_times(services, bug):
    new_id = attach(services, bug, now=T0)
    result = change(services, new_id, summary="The log", is_patch=False, file_name="log.txt")
    assert result == {"id": new_id, "last_change_time": "2026-03-01T12:00:00Z", "changes": {}}
    assert bug_changed(services, bug) == "2026-03-01 12:00:00"
    assert services.query("SELECT COUNT(*) FROM bug_activity") == [(0,)]


def test_update_comment_is_added_and_touches_the_bug(services, bug):
    new_id = attach(services, bug, now=T0)
    result = change(services, new_id, comment="  Looks good.  ")
    assert result["changes"] == {} and result["last_change_time"] == "2026-03-01T12:00:00Z"
    last = texts(services, bug)[-1]
    assert last["text"] == f"Comment on attachment {new_id}\nThe log\n\nLooks good."
    assert last["attachment_id"] == new_id
    assert bug_changed(services, bug) == "2026-03-02 09:30:00"
    count = len(texts(services, bug))
    change(services, new_id, comment="   ")
    assert len(texts(services, bug)) == count


def test_obsoleting_cancels_pending_requests_only(services, bug):
    flag_type(services, "review")
    flag_type(services, "qa")
    new_id = attach(services, bug, flags=[{"name": "review", "status": "?", "requestee": PLAIN},
                                          {"name": "qa", "status": "+"}])
    result = change(services, new_id, is_obsolete=True)
    assert result["changes"] == {"is_obsolete": {"removed": "0", "added": "1"},
                                 "flagtypes.name": {"removed": f"review?({PLAIN})",
                                                    "added": ""}}
    assert [f["name"] for f in get_one(services, new_id)["flags"]] == ["qa"]


def test_flag_changes_on_update(services, bug):
    flag_type(services, "review")
    new_id = attach(services, bug)
    result = change(services, new_id, flags=[{"name": "review", "status": "?",
                                              "requestee": PLAIN}])
    assert result["changes"] == {"flagtypes.name": {"removed": "", "added": f"review?({PLAIN})"}}
    flag_id = get_one(services, new_id)["flags"][0]["id"]
    result = change(services, new_id, as_user=ADMIN, flags=[{"id": flag_id, "status": "+"}])
    assert result["changes"] == {"flagtypes.name": {"removed": f"review?({PLAIN})",
                                                    "added": "review+"}}
    flag = get_one(services, new_id)["flags"][0]
    assert (flag["status"], flag["setter"], "requestee" in flag) == ("+", ADMIN, False)
    result = change(services, new_id, flags=[{"id": flag_id, "status": "X"}])
    assert result["changes"] == {"flagtypes.name": {"removed": "review+", "added": ""}}
    assert get_one(services, new_id)["flags"] == []


def test_python_bugzilla_updateattachmentflags_over_http(client, services, bug):
    flag_type(services, "review")
    new_id = attach(services, bug)
    key = services.api_key(ATTACHER)
    resp = client.simulate_put(f"/rest/bug/attachment/{new_id}",
                               params={"Bugzilla_api_key": key},
                               json={"ids": [new_id], "flags": [
                                   {"name": "review", "status": "?", "requestee": PLAIN}]})
    assert resp.status_code == 200
    assert resp.json["attachments"][0]["changes"] == {
        "flagtypes.name": {"removed": "", "added": f"review?({PLAIN})"}}


def test_body_ids_replace_the_path_id(client, services, bug):
    first = attach(services, bug)
    second = attach(services, bug)
    third = attach(services, bug)
    key = services.api_key(ATTACHER)
    resp = client.simulate_put(f"/rest/bug/attachment/{first}", params={"Bugzilla_api_key": key},
                               json={"ids": [third, second], "summary": "Renamed"})
    assert [a["id"] for a in resp.json["attachments"]] == [third, second]
    assert [a["summary"] for a in listing(services, bug, ADMIN)] == ["The log", "Renamed",
                                                                     "Renamed"]


@pytest.mark.parametrize("params, code", [
    ({"ids": []}, 50),
    ({"ids": [424242]}, 32000),
    ({"ids": ["abc"]}, 52),
    ({"file_name": "  "}, 32000),
    ({"summary": ""}, 604),
    ({"content_type": "bogus"}, 601),
    ({"comment": "x" * 65536}, 114),
    ({"flags": [{"name": "nope", "status": "+"}]}, 51),
])
def test_update_errors_leave_nothing_changed(services, bug, params, code):
    new_id = attach(services, bug)
    params.setdefault("ids", [new_id])
    before = stored_state(services)
    assert error_code(services, attachment.update, params, ATTACHER) == code
    assert stored_state(services) == before


def test_one_bad_attachment_stops_the_whole_update(services, bug):
    first = attach(services, bug)
    before = stored_state(services)
    assert error_code(services, attachment.update, {"ids": [first, 424242], "summary": "New"},
                      ATTACHER) == 32000
    assert stored_state(services) == before


def test_update_over_http_needs_a_login(client, services, bug):
    new_id = attach(services, bug)
    resp = client.simulate_put(f"/rest/bug/attachment/{new_id}", json={"summary": "Anon"})
    assert (resp.status_code, resp.json["code"]) == (401, 410)
    assert get_one(services, new_id)["summary"] == "The log"


def test_who_may_edit_the_fields(services, bug):
    editbugs_only_for_admin(services)
    new_id = attach(services, bug, as_user=ATTACHER)
    before = stored_state(services)
    assert error_code(services, attachment.update, {"ids": [new_id], "summary": "Mine"},
                      PLAIN) == 32000
    assert error_code(services, attachment.update, {"ids": [new_id], "comment": "Hi"},
                      PLAIN) == 32000
    assert stored_state(services) == before
    assert change(services, new_id, as_user=ATTACHER, summary="By creator")["changes"]
    assert change(services, new_id, as_user=ADMIN, summary="By editbugs")["changes"]


def test_others_may_only_change_flags_they_set_or_were_asked_for(services, bug):
    editbugs_only_for_admin(services)
    flag_type(services, "review")
    flag_type(services, "qa")
    new_id = attach(services, bug, as_user=ATTACHER,
                    flags=[{"name": "review", "status": "?", "requestee": PLAIN},
                           {"name": "qa", "status": "?"}])
    review, qa = sorted(get_one(services, new_id)["flags"], key=lambda f: f["name"] != "review")
    before = stored_state(services)
    for flags in ([{"id": qa["id"], "status": "+"}],
                  [{"name": "review", "status": "+", "new": True}],
                  [{"id": review["id"], "status": "+"}, {"id": qa["id"], "status": "-"}]):
        assert error_code(services, attachment.update, {"ids": [new_id], "flags": flags},
                          PLAIN) == 32000
        assert stored_state(services) == before
    assert error_code(services, attachment.update,
                      {"ids": [new_id], "summary": "x",
                       "flags": [{"id": review["id"], "status": "+"}]}, PLAIN) == 32000
    result = change(services, new_id, as_user=PLAIN, comment="Granted.",
                    flags=[{"id": review["id"], "status": "+"}])
    assert result["changes"] == {"flagtypes.name": {"removed": f"review?({PLAIN})",
                                                    "added": "review+"}}
    assert texts(services, bug)[-1]["text"].endswith("Granted.")


# Other transports ------------------------------------------------------------------

def test_xmlrpc_sends_and_returns_the_content_as_base64(client, services, bug):
    import xmlrpc.client
    key = services.api_key(ATTACHER)

    def xcall(method, params):
        body = xmlrpc.client.dumps((params,), method, allow_none=True)
        resp = client.simulate_post("/xmlrpc.cgi", body=body,
                                    headers={"Content-Type": "text/xml"})
        assert resp.status_code == 200
        return xmlrpc.client.loads(resp.content)[0][0]

    created = xcall("Bug.add_attachment", {
        "Bugzilla_api_key": key, "ids": [bug], "data": xmlrpc.client.Binary(b"\x00raw\xff"),
        "file_name": "raw.bin", "summary": "Raw", "content_type": "application/octet-stream"})
    new_id = created["ids"][0]
    found = xcall("Bug.attachments", {"Bugzilla_api_key": key, "attachment_ids": [new_id]})
    data = found["attachments"][str(new_id)]["data"]
    assert isinstance(data, xmlrpc.client.Binary) and data.data == b"\x00raw\xff"
