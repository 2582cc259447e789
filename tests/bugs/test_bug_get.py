"""GET /rest/bug/{id_or_alias}: the Bug object, ids merging, faults, errors,
include/exclude, update_token."""

from datetime import datetime, timezone

from freezegun import freeze_time

from bug_support import (
    ADMIN,
    add_custom_field,
    add_flag_type,
    add_keyword,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    set_param,
    update_bug,
)
from bugsvc.services import bug as bug_service


def auth(key):
    return {"Bugzilla_api_key": key}


def test_get_by_id_over_http(client, services, admin_key):
    bug_id = file_bug(services, summary="Crash on start")
    resp = client.simulate_get(f"/rest/bug/{bug_id}", params=auth(admin_key))
    assert resp.status_code == 200
    assert resp.json["faults"] == []
    (bug,) = resp.json["bugs"]
    expected_keys = {
        "id", "alias", "summary", "status", "resolution", "is_open", "is_confirmed", "dupe_of",
        "product", "component", "classification", "version", "target_milestone", "platform",
        "op_sys", "priority", "severity", "url", "whiteboard", "keywords", "blocks",
        "depends_on", "cc", "cc_detail", "assigned_to", "assigned_to_detail", "creator",
        "creator_detail", "qa_contact", "groups", "flags", "see_also", "creation_time",
        "last_change_time", "is_cc_accessible", "is_creator_accessible", "estimated_time",
        "remaining_time", "actual_time", "deadline", "update_token"}
    assert set(bug) == expected_keys
    assert bug["id"] == bug_id and bug["summary"] == "Crash on start"
    assert bug["classification"] == "Unclassified"
    assert bug["assigned_to_detail"] == {"id": 1, "real_name": "Administrator",
                                         "name": ADMIN, "email": ADMIN}


def test_get_by_alias_and_hash(client, services):
    bug_id = file_bug(services, alias="crash")
    assert client.simulate_get("/rest/bug/crash").json["bugs"][0]["id"] == bug_id
    assert client.simulate_get("/rest/bug/%23" + str(bug_id)).json["bugs"][0]["id"] == bug_id


def test_ids_are_merged_in_request_order(client, services):
    first, second, third = (file_bug(services) for _ in range(3))
    resp = client.simulate_get(f"/rest/bug/{third}", params={"ids": [str(first), str(second)]})
    assert [b["id"] for b in resp.json["bugs"]] == [third, first, second]


def test_errors_of_get(client, services):
    file_bug(services)
    missing = client.simulate_get("/rest/bug/999")
    assert (missing.status_code, missing.json["code"]) == (404, 101)
    bad = client.simulate_get("/rest/bug/no-such-alias")
    assert (bad.status_code, bad.json["code"]) == (400, 100)
    none = client.simulate_get("/rest/bug/")
    assert (none.status_code, none.json["code"]) == (400, 50)


def test_permissive_reports_faults(services):
    bug_id = file_bug(services)
    result = services.call(bug_service.get, {"ids": [bug_id, 999, "nope"], "permissive": True},
                           write=False)
    assert [b["id"] for b in result["bugs"]] == [bug_id]
    assert [(f["id"], f["faultCode"]) for f in result["faults"]] == [(999, 101), ("nope", 100)]
    assert all(f["faultString"] for f in result["faults"])


def test_include_fields_over_http(client, services):
    bug_id = file_bug(services)
    resp = client.simulate_get(f"/rest/bug/{bug_id}", params={"include_fields": "summary"})
    assert resp.json["bugs"] == [{"summary": "Something is broken"}]
    resp = client.simulate_get(f"/rest/bug/{bug_id}",
                               params={"include_fields": "id,assigned_to.name"})
    assert resp.json["bugs"] == [{"id": bug_id, "assigned_to": ADMIN,
                                  "assigned_to_detail": {"name": ADMIN}}]
    resp = client.simulate_get(f"/rest/bug/{bug_id}", params={"include_fields": "cc_detail"})
    assert resp.json["bugs"] == [{}]


def test_exclude_custom_and_extra_tags(client, services, admin_key):
    add_custom_field(services, "cf_note", 1)
    bug_id = file_bug(services, cf_note="n")
    bug = client.simulate_get(f"/rest/bug/{bug_id}").json["bugs"][0]
    assert bug["cf_note"] == "n" and "tags" not in bug
    bug = client.simulate_get(f"/rest/bug/{bug_id}", params={"exclude_fields": "_custom"}
                              ).json["bugs"][0]
    assert "cf_note" not in bug and "summary" in bug
    with services.db.transaction(write=True) as conn:
        tag = conn.execute("INSERT INTO personal_tags (user_id, name) VALUES (1, 'mine')").lastrowid
        conn.execute("INSERT INTO bug_tags (bug_id, tag_id) VALUES (?, ?)", (bug_id, tag))
    params = dict(auth(admin_key), include_fields="id,tags")
    assert client.simulate_get(f"/rest/bug/{bug_id}", params=params).json["bugs"] == \
        [{"id": bug_id, "tags": ["mine"]}]
    params = dict(auth(admin_key), include_fields="_extra")
    assert client.simulate_get(f"/rest/bug/{bug_id}", params=params).json["bugs"] == \
        [{"tags": ["mine"], "duplicates": []}]


def test_fields_filter_skips_work_in_service(services):
    bug_id = file_bug(services)
    result = services.call(bug_service.get, {"ids": [bug_id], "include_fields": "id"})
    assert "tags" not in result["bugs"][0]


def test_time_fields_only_for_timetrackers(services):
    editbugs_only_for_members(services)
    services.add_user("plain@example.com")
    bug_id = file_bug(services, estimated_time=2)
    plain = get_bug(services, bug_id, as_user="plain@example.com")
    for name in ("estimated_time", "remaining_time", "actual_time", "deadline"):
        assert name not in plain
    assert get_bug(services, bug_id)["estimated_time"] == 2.0


def test_actual_time_sums_work_time(services):
    bug_id = file_bug(services, estimated_time=10)
    update_bug(services, bug_id, work_time=1.5, comment={"body": "worked"})
    update_bug(services, bug_id, work_time=2)
    bug = get_bug(services, bug_id)
    assert bug["actual_time"] == 3.5 and bug["remaining_time"] == 6.5


def test_actual_time_adds_the_hours_in_the_order_they_were_worked(services):
    """0.3 + 0.2 + 0.1 is 0.6 in that order and 0.6000000000000001 from the
    smallest up: the hours are added in the comments' order, comments of no
    hours between them, alike for one bug and for a search's several."""
    from bugsvc.services import bug_search
    bug_id, other = file_bug(services, estimated_time=10), file_bug(services, estimated_time=1)
    for hours in (0.3, 0, 0.2, 0, 0.1):
        update_bug(services, bug_id, work_time=hours, comment={"body": f"{hours} hours"})
    assert get_bug(services, bug_id)["actual_time"] == 0.3 + 0.2 + 0.1 == 0.6
    found = services.call(bug_search.search, {"id": f"{bug_id},{other}"}, as_user=ADMIN)["bugs"]
    assert [(bug["id"], bug["actual_time"]) for bug in found] == [(bug_id, 0.6), (other, 0.0)]


def test_update_token_only_for_logged_in_and_changes_on_update(services):
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    bug_id = file_bug(services, now=at)
    assert "update_token" not in get_bug(services, bug_id, as_user=None)
    first = get_bug(services, bug_id)["update_token"]
    assert get_bug(services, bug_id)["update_token"] == first
    services.add_user("other@example.com")
    assert get_bug(services, bug_id, as_user="other@example.com")["update_token"] != first
    update_bug(services, bug_id, summary="Changed", now=at)
    second = get_bug(services, bug_id)["update_token"]
    assert second != first
    with freeze_time("2026-01-02"):
        update_bug(services, bug_id, whiteboard="w")
    assert get_bug(services, bug_id)["update_token"] not in (first, second)


def test_update_token_absent_from_search_style_objects(services):
    from bugsvc.bugs.view import bug_objects
    bug_id = file_bug(services)
    with services.units.context(1) as ctx:
        (bug,) = bug_objects(ctx, [bug_id])
    assert "update_token" not in bug


def test_flags_and_keywords_in_the_object(services):
    add_keyword(services, "zeta")
    add_keyword(services, "Alpha")
    review = add_flag_type(services, "review")
    services.add_user("rev@example.com")
    bug_id = file_bug(services, keywords=["zeta", "Alpha"],
                      flags=[{"name": "review", "status": "?", "requestee": "rev@example.com"},
                             {"type_id": review, "status": "+", "new": True}])
    bug = get_bug(services, bug_id)
    assert bug["keywords"] == ["Alpha", "zeta"]
    requested, granted = bug["flags"]
    assert requested["name"] == "review" and requested["type_id"] == review
    assert requested["status"] == "?" and requested["requestee"] == "rev@example.com"
    assert requested["setter"] == ADMIN
    assert granted["status"] == "+" and "requestee" not in granted
    assert set(requested) == {"id", "name", "type_id", "creation_date", "modification_date",
                              "status", "setter", "requestee"}


def test_email_filter_for_anonymous(services):
    set_param(services, "webservice_email_filter", "1")
    bug_id = file_bug(services)
    anonymous = get_bug(services, bug_id, as_user=None)
    assert anonymous["assigned_to"] == "admin"
    assert anonymous["creator_detail"]["email"] == "admin"
    assert get_bug(services, bug_id)["assigned_to"] == ADMIN


def test_duplicate_ids_listed_twice(services):
    bug_id = file_bug(services)
    result = services.call(bug_service.get, {"ids": [bug_id, str(bug_id)]}, write=False)
    assert [b["id"] for b in result["bugs"]] == [bug_id, bug_id]


# Possible duplicates (GET /rest/bug/possible_duplicates) --------------------------

def test_possible_duplicates_over_http(client, services, admin_key):
    crash = file_bug(services, summary="Crash when saving large files")
    file_bug(services, summary="Unrelated problem")
    saving = file_bug(services, summary="Saving is slow")
    dupe = file_bug(services, summary="Crash on saving files")
    update_bug(services, dupe, dupe_of=crash)
    resp = client.simulate_get("/rest/bug/possible_duplicates",
                               params={"summary": "crash while saving files!",
                                       "Bugzilla_api_key": admin_key,
                                       "include_fields": "id,summary,update_token"})
    assert resp.status_code == 200
    bugs = resp.json["bugs"]
    assert [b["id"] for b in bugs] == [crash, saving]
    assert all(set(b) == {"id", "summary", "update_token"} for b in bugs)
    limited = client.simulate_get("/rest/bug/possible_duplicates",
                                  params={"summary": "crash saving files", "limit": "1"})
    assert [b["id"] for b in limited.json["bugs"]] == [crash]


def test_possible_duplicates_errors_and_products(client, services):
    file_bug(services, summary="Crash in parser")
    assert client.simulate_get("/rest/bug/possible_duplicates").json["code"] == 50
    resp = client.simulate_get("/rest/bug/possible_duplicates",
                               params={"summary": "crash", "products": "Nope"})
    assert (resp.status_code, resp.json["code"]) == (401, 106)
    resp = client.simulate_get("/rest/bug/possible_duplicates",
                               params={"summary": "crash", "products": "TestProduct"})
    assert len(resp.json["bugs"]) == 1
    resp = client.simulate_get("/rest/bug/possible_duplicates", params={"summary": "a b c"})
    assert resp.json["bugs"] == []
    resp = client.simulate_get("/rest/bug/possible_duplicates",
                               params={"summary": "crash", "limit": "many"})
    assert resp.json["code"] == 52
