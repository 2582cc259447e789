"""The operations the web pages needed, tested below the pages (REST has
them too): whoami, one's own name and password, saved searches, what a
caller may change on a bug, mid-air collisions through update_token, and
several reads in one snapshot (Runner.run_many)."""

from datetime import datetime, timedelta, timezone

import pytest

from bug_support import (
    ADMIN,
    MANDATORY,
    add_bug_group,
    add_to_group,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    set_param,
    update_bug,
)
from bugsvc.accounts.auth import CredentialsRefused
from bugsvc.api.operations import OPERATIONS
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service, saved_search, user


def error_of(services, function, params, as_user):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


@pytest.fixture
def people(services):
    services.add_user("plain@example.com", password="plain-password-1", real_name="Pat Plain")
    services.add_user("insider@example.com", password="insider-password-1")
    add_bug_group(services, "staff", members=["insider@example.com"])
    set_param(services, "insidergroup", "staff")
    return services


# whoami -------------------------------------------------------------------------------

def test_whoami_names_the_caller_and_what_it_may_see(people):
    plain = people.call(user.whoami, {}, as_user="plain@example.com")
    assert (plain["login"], plain["real_name"], plain["is_insider"]) == (
        "plain@example.com", "Pat Plain", False)
    assert plain["saved_searches"] == []
    insider = people.call(user.whoami, {}, as_user="insider@example.com")
    assert insider["is_insider"] and "staff" in insider["groups"]


def test_whoami_needs_a_login(people):
    assert error_of(people, user.whoami, {}, None) == 410


def test_whoami_over_rest(client, people, plain_key_of):
    answer = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": plain_key_of})
    assert answer.json["login"] == "plain@example.com"
    assert client.simulate_get("/rest/whoami").json["code"] == 410


@pytest.fixture
def plain_key_of(people):
    return people.api_key("plain@example.com")


# One's own account ----------------------------------------------------------------------

def test_a_user_changes_the_real_name(people):
    answer = people.call(user.update_self, {"full_name": " Pat P. "}, as_user="plain@example.com")
    assert answer == {"changes": {"full_name": {"removed": "Pat Plain", "added": "Pat P."}}}
    assert people.query("SELECT real_name FROM users WHERE login = 'plain@example.com'") == [
        ("Pat P.",)]


def test_a_new_password_needs_the_current_one_and_ends_the_sessions(client, people):
    token = client.simulate_get("/rest/login", params={
        "login": "plain@example.com", "password": "plain-password-1"}).json["token"]
    refused = client.simulate_put("/rest/whoami", params={"Bugzilla_token": token},
                                  json={"password": "a new password"})
    assert refused.json["code"] == 50
    wrong = client.simulate_put("/rest/whoami", params={"Bugzilla_token": token},
                                json={"password": "a new password", "current_password": "nope"})
    assert (wrong.status_code, wrong.json["code"]) == (401, 300)
    assert people.query("SELECT failures FROM login_throttle"
                        " WHERE subject = 'login:plain@example.com'") == [(1,)]
    done = client.simulate_put("/rest/whoami", params={"Bugzilla_token": token},
                               json={"password": "a new password",
                                     "current_password": "plain-password-1"})
    assert done.status_code == 200 and done.json == {"changes": {}}
    assert people.query("SELECT COUNT(*) FROM login_tokens") == [(0,)]
    assert people.query("SELECT COUNT(*) FROM login_throttle") == [(0,)]
    again = client.simulate_get("/rest/whoami", params={"Bugzilla_token": token})
    assert again.json["code"] == 32000
    new = client.simulate_get("/rest/login", params={"login": "plain@example.com",
                                                     "password": "a new password"})
    assert new.status_code == 200


def test_a_wrong_current_password_changes_nothing(people):
    before = people.query("SELECT real_name, password_hash FROM users")
    with pytest.raises(CredentialsRefused):
        people.call(user.update_self, {"full_name": "X", "password": "a new password",
                                       "current_password": "wrong"}, as_user="plain@example.com")
    assert people.query("SELECT real_name, password_hash FROM users") == before


def test_current_password_guesses_are_throttled(people):
    with people.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO login_throttle (subject, failures, last_failure)"
                     " VALUES ('login:plain@example.com', 9, ?)",
                     (datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),))
    with pytest.raises(ServiceError) as caught:
        people.call(user.update_self, {"password": "a new password",
                                       "current_password": "plain-password-1"},
                    as_user="plain@example.com")
    assert caught.value.code == 32000 and "Too many failed sign-in" in caught.value.message


def test_a_short_new_password_is_502(people):
    assert error_of(people, user.update_self, {"password": "abc",
                                               "current_password": "plain-password-1"},
                    "plain@example.com") == 502


def test_update_self_needs_a_login(people):
    assert error_of(people, user.update_self, {"full_name": "X"}, None) == 410


# Saved searches -------------------------------------------------------------------------

def test_saved_searches_are_made_listed_replaced_and_forgotten(people):
    me = "plain@example.com"
    first = people.call(saved_search.create, {"name": "Mine", "query": "?product=TestProduct"},
                        as_user=me)["id"]
    again = people.call(saved_search.create, {"name": "mine",
                                              "query": "bug_status=NEW&columnlist=summary"},
                        as_user=me)["id"]
    assert again == first
    listed = people.call(saved_search.get, {}, as_user=me)["saved_searches"]
    assert listed == [{"id": first, "name": "mine", "query": "bug_status=NEW&columnlist=summary"}]
    own = people.call(user.get, {"names": [me]}, as_user=me)["users"][0]
    assert own["saved_searches"] == listed
    assert people.call(saved_search.get, {}, as_user=ADMIN)["saved_searches"] == []
    assert error_of(people, saved_search.delete, {"ids": [first]}, ADMIN) == 51
    assert people.call(saved_search.delete, {"names": ["MINE"]}, as_user=me) == {"ids": [first]}
    assert people.query("SELECT COUNT(*) FROM saved_searches") == [(0,)]


@pytest.mark.parametrize("params, code", [
    ({"query": "product=TestProduct"}, 50),
    ({"name": "x", "query": ""}, 50),
    ({"name": "x" * 65, "query": "product=TestProduct"}, 32000),
    ({"name": "x", "query": "f1=no_such_field&o1=equals&v1=1"}, 108),
    ({"name": "x", "query": "f1=short_desc&o1=bogus&v1=1"}, 32000),
])
def test_bad_saved_searches_are_refused_and_nothing_is_stored(people, params, code):
    assert error_of(people, saved_search.create, params, "plain@example.com") == code
    assert people.query("SELECT COUNT(*) FROM saved_searches") == [(0,)]


def test_a_search_without_terms_is_1000_when_the_parameter_says_so(people):
    set_param(people, "search_allow_no_criteria", "0")
    assert error_of(people, saved_search.create, {"name": "all", "query": "columnlist=summary"},
                    "plain@example.com") == 1000


def test_saved_searches_need_a_login(people):
    for function, params in ((saved_search.get, {}), (saved_search.delete, {"ids": [1]}),
                             (saved_search.create, {"name": "x", "query": "product=x"})):
        assert error_of(people, function, params, None) == 410


def test_saved_searches_over_rest(client, people, plain_key_of):
    key = {"Bugzilla_api_key": plain_key_of}
    made = client.simulate_post("/rest/saved_search", params=key,
                                json={"name": "Open", "query": "bug_status=__open__"})
    assert made.status_code == 201
    assert client.simulate_get("/rest/saved_search", params=key).json["saved_searches"][0][
        "name"] == "Open"
    gone = client.simulate_delete("/rest/saved_search/Open", params=key)
    assert gone.json == {"ids": [made.json["id"]]}


# What a caller may change -------------------------------------------------------------------

def options(services, bug_id, as_user):
    return services.call(bug_service.edit_options, {"ids": [bug_id]}, as_user=as_user)["bugs"][0]


def test_an_anonymous_caller_may_change_nothing(people):
    bug_id = file_bug(people)
    seen = options(people, bug_id, None)
    assert seen == {"id": bug_id, "can_comment": False, "can_remove_cc": False,
                    "statuses": [{"name": "CONFIRMED", "is_open": True,
                                  "comment_required": False}],
                    "fields": [], "resolutions": [], "groups": []}


def test_editbugs_may_change_every_field_and_move_along_the_workflow(people):
    bug_id = file_bug(people)
    seen = options(people, bug_id, ADMIN)
    names = [status["name"] for status in seen["statuses"]]
    assert names[0] == "CONFIRMED" and "IN_PROGRESS" in names and "RESOLVED" in names
    assert "UNCONFIRMED" not in names       # not a transition of the default workflow
    assert {"summary", "assigned_to", "product", "resolution", "keywords"} <= set(seen["fields"])
    assert "FIXED" in seen["resolutions"] and "DUPLICATE" in seen["resolutions"]
    assert seen["can_comment"] and seen["can_remove_cc"]


def test_a_reporter_without_editbugs_may_close_but_not_reassign(people):
    editbugs_only_for_members(people)
    bug_id = file_bug(people, as_user="plain@example.com")
    seen = options(people, bug_id, "plain@example.com")
    names = [status["name"] for status in seen["statuses"]]
    assert "RESOLVED" in names and "IN_PROGRESS" not in names
    assert "summary" in seen["fields"] and "assigned_to" not in seen["fields"]
    assert seen["can_comment"] and not seen["can_remove_cc"]
    # What the options offer, the update accepts; what they leave out, it refuses.
    update_bug(people, bug_id, as_user="plain@example.com", status="RESOLVED",
               resolution="FIXED")
    with pytest.raises(ServiceError) as caught:
        update_bug(people, bug_id, as_user="plain@example.com", assigned_to="insider@example.com")
    assert caught.value.code == 115


def test_someone_else_without_editbugs_may_only_comment(people):
    editbugs_only_for_members(people)
    bug_id = file_bug(people)
    seen = options(people, bug_id, "plain@example.com")
    assert seen["can_comment"] and seen["fields"] == []
    assert [status["name"] for status in seen["statuses"]] == ["CONFIRMED"]


def test_a_product_the_caller_may_not_edit_offers_nothing(people):
    group_id = add_bug_group(people, "editors", members=[])
    control(people, group_id, 0, 0, canedit=1)
    bug_id = file_bug(people)
    seen = options(people, bug_id, "plain@example.com")
    assert not seen["can_comment"] and seen["fields"] == []


def test_a_hidden_bug_has_no_options(people):
    group_id = add_bug_group(people, "secret", members=[])
    control(people, group_id, MANDATORY, MANDATORY)
    bug_id = file_bug(people)
    assert error_of(people, bug_service.edit_options, {"ids": [bug_id]}, "plain@example.com") == 102
    assert error_of(people, bug_service.edit_options, {"ids": [bug_id]}, None) == 102


def test_edit_options_over_rest(client, people, plain_key_of):
    bug_id = file_bug(people)
    answer = client.simulate_get(f"/rest/bug/{bug_id}/edit_options",
                                 params={"Bugzilla_api_key": plain_key_of})
    assert answer.json["bugs"][0]["id"] == bug_id


# Mid-air collisions ---------------------------------------------------------------------------

def test_an_update_based_on_the_current_state_is_applied(people):
    bug_id = file_bug(people)
    token = get_bug(people, bug_id)["update_token"]
    assert update_bug(people, bug_id, summary="Changed", update_token=token)["changes"]


def test_an_update_based_on_a_stale_state_is_refused_and_changes_nothing(people):
    bug_id = file_bug(people)
    token = get_bug(people, bug_id, as_user="plain@example.com")["update_token"]
    update_bug(people, bug_id, priority="High")          # someone else, meanwhile
    before = people.table("bugs")
    with pytest.raises(ServiceError) as caught:
        update_bug(people, bug_id, as_user="plain@example.com", summary="Mine",
                   comment={"body": "lost?"}, update_token=token)
    assert caught.value.code == 32000 and "Mid-air collision" in caught.value.message
    assert people.table("bugs") == before
    assert people.query("SELECT COUNT(*) FROM comments WHERE body = 'lost?'") == [(0,)]


def test_a_comment_meanwhile_is_a_collision_too(people):
    bug_id = file_bug(people)
    now = datetime.now(timezone.utc)
    token = get_bug(people, bug_id)["update_token"]
    update_bug(people, bug_id, now=now + timedelta(seconds=0), comment={"body": "meanwhile"})
    with pytest.raises(ServiceError):
        update_bug(people, bug_id, summary="x", update_token=token)


def test_an_update_token_names_one_bug(people):
    first, second = file_bug(people), file_bug(people)
    token = get_bug(people, first)["update_token"]
    with pytest.raises(ServiceError) as caught:
        people.call(bug_service.update, {"ids": [first, second], "priority": "High",
                                         "update_token": token}, as_user=ADMIN)
    assert caught.value.code == 32000


# Several reads in one snapshot ----------------------------------------------------------------

def test_run_many_runs_reads_as_one_caller(people, app):
    runner = people.runner
    bug_id = file_bug(people)
    key = people.api_key("plain@example.com")
    whoami, bugs = runner.run_many(
        [(OPERATIONS["User.whoami"], {}),
         (OPERATIONS["Bug.get"], {"ids": [bug_id], "include_fields": "id,summary",
                                  "Bugzilla_api_key": "ignored: headers only"})],
        {"X-BUGZILLA-API-KEY": key}, "127.0.0.1")
    assert whoami["login"] == "plain@example.com"
    assert bugs["bugs"] == [{"id": bug_id, "summary": "Something is broken"}]


def test_run_many_applies_each_login_rule_and_refuses_writes(people):
    runner = people.runner
    with pytest.raises(ServiceError) as caught:
        runner.run_many([(OPERATIONS["Bugzilla.version"], {}), (OPERATIONS["User.whoami"], {})],
                        {}, "127.0.0.1")
    assert caught.value.code == 410
    with pytest.raises(ValueError):
        runner.run_many([(OPERATIONS["Bug.update"], {})], {}, "127.0.0.1")


def test_run_many_refuses_a_bad_token_and_counts_it(people):
    with pytest.raises(ServiceError) as caught:
        people.runner.run_many([(OPERATIONS["Bug.search"], {})], {"X-BUGZILLA-TOKEN": "1-nope"},
                               "192.0.2.7")
    assert caught.value.code == 32000
    assert people.query("SELECT failures FROM login_throttle"
                        " WHERE subject = 'address:192.0.2.7'") == [(1,)]


def test_run_many_runs_the_reads_then_chooses_in_the_same_snapshot_trimmed_alike(people):
    runner = people.runner
    bug_id = file_bug(people)
    key = people.api_key("plain@example.com")
    seen = []

    def then(results):
        seen.append(results)
        bug = results[0]["bugs"][0]
        return [(OPERATIONS["Product.get"], {"names": [bug["product"]],
                                             "include_fields": "name"}),
                (OPERATIONS["User.whoami"], {})]
    bugs, product, whoami = runner.run_many(
        [(OPERATIONS["Bug.get"], {"ids": [bug_id], "include_fields": "id,product"})],
        {"X-BUGZILLA-API-KEY": key}, "127.0.0.1", then=then)
    assert len(seen) == 1 and seen[0][0]["bugs"][0]["product"] == "TestProduct"
    assert bugs["bugs"] == [{"id": bug_id, "product": "TestProduct"}]
    assert product["products"] == [{"name": "TestProduct"}]
    assert whoami["login"] == "plain@example.com"
    # What it adds follows the same rules: no write, each login rule.
    with pytest.raises(ValueError):
        runner.run_many([(OPERATIONS["Bugzilla.version"], {})], {}, "127.0.0.1",
                        then=lambda results: [(OPERATIONS["Bug.update"], {})])
    with pytest.raises(ServiceError) as caught:
        runner.run_many([(OPERATIONS["Bugzilla.version"], {})], {}, "127.0.0.1",
                        then=lambda results: [(OPERATIONS["User.whoami"], {})])
    assert caught.value.code == 410


def test_groups_the_caller_may_restrict_a_bug_to_are_offered(people):
    from bug_support import NA, SHOWN
    staff = people.query("SELECT id FROM groups WHERE name = 'staff'")[0][0]
    control(people, staff, SHOWN, NA)
    bug_id = file_bug(people)
    insider = options(people, bug_id, "insider@example.com")["groups"]
    assert insider == [{"id": staff, "name": "staff", "description": "staff group",
                        "is_on": False, "can_change": True}]
    assert options(people, bug_id, "plain@example.com")["groups"] == []
    update_bug(people, bug_id, as_user="insider@example.com", groups={"add": ["staff"]})
    assert options(people, bug_id, "insider@example.com")["groups"][0]["is_on"]


def test_duplicates_of_a_bug_are_found_among_the_visible_bugs(people):
    from bugsvc.services import bug_search
    target, shown, hidden = file_bug(people), file_bug(people), file_bug(people)
    for duplicate in (shown, hidden):
        update_bug(people, duplicate, status="RESOLVED", resolution="DUPLICATE", dupe_of=target)
    secret = add_bug_group(people, "secret", members=[])
    with people.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)", (hidden, secret))
    plain = people.call(bug_search.search, {"f1": "dupe_of", "o1": "equals", "v1": str(target)},
                        as_user="plain@example.com")
    assert [bug["id"] for bug in plain["bugs"]] == [shown]
    admin = people.call(bug_search.search, {"dupe_of": str(target)}, as_user=ADMIN)
    assert [bug["id"] for bug in admin["bugs"]] == [shown, hidden]


def test_bug_get_lists_the_visible_duplicates_when_asked(people):
    target, shown, hidden = file_bug(people), file_bug(people), file_bug(people)
    for duplicate in (shown, hidden):
        update_bug(people, duplicate, status="RESOLVED", resolution="DUPLICATE", dupe_of=target)
    secret = add_bug_group(people, "secret", members=[])
    with people.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)", (hidden, secret))
    assert "duplicates" not in get_bug(people, target)
    wanted = {"include_fields": "id,duplicates"}
    assert get_bug(people, target, **wanted) == {"id": target, "duplicates": [shown, hidden]}
    assert get_bug(people, target, as_user="plain@example.com", **wanted)["duplicates"] == [shown]
    assert get_bug(people, target, as_user=None, **wanted)["duplicates"] == [shown]


# Flags requested of the caller ---------------------------------------------------------------

def test_flag_requests_lists_the_callers_visible_requests(people):
    import base64

    from bug_support import add_flag_type
    from bugsvc.services import attachment
    add_flag_type(people, "review")
    add_flag_type(people, "feedback", target="a")
    shown, hidden = file_bug(people), file_bug(people)
    for bug_id in (shown, hidden):
        update_bug(people, bug_id, flags=[{"name": "review", "status": "?",
                                           "requestee": "plain@example.com"}])
    update_bug(people, shown, flags=[{"name": "review", "status": "?", "new": True,
                                      "requestee": "insider@example.com"}])
    private = people.call(attachment.create, {
        "ids": [shown], "data": base64.b64encode(b"x").decode(), "file_name": "a.txt",
        "summary": "secret file", "content_type": "text/plain",
        "flags": [{"name": "feedback", "status": "?", "requestee": "plain@example.com"}]},
        as_user="insider@example.com")["ids"][0]
    people.call(attachment.update, {"ids": [private], "is_private": True},
                as_user="insider@example.com")
    secret = add_bug_group(people, "secret", members=[])
    with people.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)", (hidden, secret))
    mine = people.call(bug_service.flag_requests, {}, as_user="plain@example.com")["requests"]
    assert [(r["bug_id"], r["name"], r["attachment_id"]) for r in mine] == [
        (shown, "review", None)]
    assert mine[0]["setter"] == ADMIN and mine[0]["requestee"] == "plain@example.com"
    # Granted, it is no longer a request.
    update_bug(people, shown, flags=[{"id": mine[0]["id"], "status": "+"}])
    assert people.call(bug_service.flag_requests, {}, as_user="plain@example.com") == {
        "requests": []}
    # An insider who may see the private attachment sees a request on it.
    add_to_group(people, "plain@example.com", "staff")
    again = people.call(bug_service.flag_requests, {}, as_user="plain@example.com")["requests"]
    assert [(r["name"], r["attachment_id"]) for r in again] == [("feedback", private)]
    assert error_of(people, bug_service.flag_requests, {}, None) == 410


def test_edit_options_lists_the_groups_a_bug_would_have_in_another_product(people):
    from bug_support import NA, SHOWN
    from catalog_support import add_product
    add_product(people, "Gadgets")
    bug_id = file_bug(people)
    fixed = add_bug_group(people, "hardware-team", members=["plain@example.com"])
    control(people, fixed, MANDATORY, MANDATORY, product="Gadgets")
    optional = add_bug_group(people, "embargo", members=["plain@example.com"])
    control(people, optional, SHOWN, NA, product="Gadgets")
    params = {"ids": [bug_id], "product": "Gadgets"}
    plain = people.call(bug_service.edit_options, params, as_user="plain@example.com")
    assert plain["bugs"][0]["groups"] == [
        {"id": optional, "name": "embargo", "description": "embargo group", "is_on": False,
         "can_change": True},
        {"id": fixed, "name": "hardware-team", "description": "hardware-team group",
         "is_on": True, "can_change": False}]
    # Someone outside "embargo" may not add it there.
    people.add_user("other@example.com", password="other-password-1")
    other = people.call(bug_service.edit_options, params, as_user="other@example.com")
    assert [group["name"] for group in other["bugs"][0]["groups"]] == ["hardware-team"]
    assert error_of(people, bug_service.edit_options, dict(params, product="Nowhere"),
                    "plain@example.com") == 106
