"""API keys: list, create, describe and revoke."""

import re

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bugsvc.errors import ServiceError
from bugsvc.services import api_key


KEY_FORM = re.compile(r"^[A-Za-z0-9]{40}$")


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def key_owner(services, key_id):
    return services.query("SELECT user_id FROM api_keys WHERE id = ?", (key_id,))[0][0]


def logs_in_as(client, key, user_id):
    """Whether `key` logs in as account `user_id` (only one's own account
    shows saved_searches)."""
    resp = client.simulate_get("/rest/user", params={"ids": user_id, "Bugzilla_api_key": key,
                                                     "include_fields": "saved_searches"})
    assert resp.status_code == 200, resp.json
    return "saved_searches" in resp.json["users"][0]


@pytest.fixture
def plain(services):
    return services.add_user("plain@example.com", password="plain-secret")


@pytest.fixture
def other(services):
    return services.add_user("other@example.com", password="other-secret")


@pytest.fixture
def plain_key(services, plain):
    return services.api_key("plain@example.com")


# Create ----------------------------------------------------------------------

def test_create_over_http_answers_201_with_the_secret_once(client, services, plain, plain_key):
    resp = client.simulate_post("/rest/api_key", params={"Bugzilla_api_key": plain_key},
                                json={"description": " laptop "})
    assert resp.status_code == 201
    assert resp.json.keys() == {"id", "api_key"}
    secret = resp.json["api_key"]
    assert KEY_FORM.match(secret)
    assert key_owner(services, resp.json["id"]) == plain
    assert logs_in_as(client, secret, plain)
    listing = client.simulate_get("/rest/api_key", params={"Bugzilla_api_key": secret})
    assert secret not in listing.text
    assert [k["description"] for k in listing.json["api_keys"]] == ["test", "laptop"]
    stored = str(services.query("SELECT * FROM api_keys"))
    assert secret not in stored


def test_create_is_audited_under_user(services, plain):
    with freeze_time("2026-07-08 09:10:11"):
        key_id = services.call(api_key.create, {"description": "ci"}, as_user=plain)["id"]
    assert services.query("SELECT class, object_id, field, added, at_time FROM audit_log") == [
        ("Bugzilla::User", plain, "api_key", str(key_id), "2026-07-08 09:10:11")]


def test_admin_creates_a_key_for_another_account(client, services, plain):
    result = services.call(api_key.create, {"user": "PLAIN@example.com", "description": "for you"},
                           as_user=ADMIN)
    assert key_owner(services, result["id"]) == plain
    assert logs_in_as(client, result["api_key"], plain)
    by_id = services.call(api_key.create, {"user": plain}, as_user=ADMIN)
    assert key_owner(services, by_id["id"]) == plain


def test_plain_user_may_name_only_itself(services, plain, other):
    own = services.call(api_key.create, {"user": "plain@example.com"}, as_user=plain)
    assert key_owner(services, own["id"]) == plain
    before = services.query("SELECT COUNT(*) FROM api_keys")
    assert error_code(services, api_key.create, {"user": "other@example.com"}, plain) == 304
    assert error_code(services, api_key.create, {"user": "nobody@example.com"}, plain) == 304
    assert services.query("SELECT COUNT(*) FROM api_keys") == before


def test_admin_naming_an_unknown_account_is_51(services):
    assert error_code(services, api_key.create, {"user": "nobody@example.com"}, ADMIN) == 51


def test_api_key_calls_need_a_login(client):
    for method, path in (("GET", "/rest/api_key"), ("POST", "/rest/api_key"),
                         ("PUT", "/rest/api_key/1")):
        resp = client.simulate_request(method, path, json={} if method != "GET" else None)
        assert (resp.status_code, resp.json["code"]) == (401, 410)


# List ------------------------------------------------------------------------

def test_list_shows_own_keys_with_times(client, services, plain):
    with freeze_time("2026-01-02 03:04:05"):
        created = services.call(api_key.create, {"description": "desk"}, as_user=plain)
    with freeze_time("2026-01-05 06:07:08"):
        listing = client.simulate_get("/rest/api_key",
                                      params={"Bugzilla_api_key": created["api_key"]}).json
    assert listing == {"api_keys": [{"id": created["id"], "description": "desk", "revoked": False,
                                     "last_used": "2026-01-05T06:07:08Z",
                                     "created": "2026-01-02T03:04:05Z"}]}


def test_list_shows_null_last_used_for_an_unused_key(services, plain):
    services.call(api_key.create, {"description": "spare"}, as_user=plain)
    assert services.call(api_key.get, {}, as_user=plain)["api_keys"][0]["last_used"] is None


def test_list_of_another_account_is_for_editusers_only(services, plain, other):
    services.call(api_key.create, {"description": "others"}, as_user=other)
    assert error_code(services, api_key.get, {"user": "other@example.com"}, plain) == 304
    listing = services.call(api_key.get, {"user": "other@example.com"}, as_user=ADMIN)
    assert [k["description"] for k in listing["api_keys"]] == ["others"]
    assert services.call(api_key.get, {}, as_user=plain) == {"api_keys": []}


# Update ----------------------------------------------------------------------

def test_revoked_key_is_306_and_can_be_restored(client, services, plain):
    created = services.call(api_key.create, {"description": "x"}, as_user=plain)
    resp = client.simulate_put(f"/rest/api_key/{created['id']}",
                               params={"Bugzilla_api_key": created["api_key"]},
                               json={"revoked": True})
    assert resp.json == {"api_keys": [{"id": created["id"], "changes": {
        "revoked": {"removed": "0", "added": "1"}}}]}
    refused = client.simulate_get("/rest/api_key", params={"Bugzilla_api_key": created["api_key"]})
    assert (refused.status_code, refused.json["code"]) == (400, 306)
    services.call(api_key.update, {"ids": [created["id"]], "revoked": False}, as_user=plain)
    assert logs_in_as(client, created["api_key"], plain)


def test_description_change_is_audited(services, plain):
    key_id = services.call(api_key.create, {"description": "old"}, as_user=plain)["id"]
    result = services.call(api_key.update, {"ids": [key_id], "description": "new"}, as_user=plain)
    assert result["api_keys"][0]["changes"] == {"description": {"removed": "old", "added": "new"}}
    assert ("api_key.description", "old", "new") in services.query(
        "SELECT field, removed, added FROM audit_log")


def test_another_accounts_key_is_51_for_plain_users_and_editable_by_editusers(services, plain,
                                                                              other):
    key_id = services.call(api_key.create, {"description": "theirs"}, as_user=other)["id"]
    assert error_code(services, api_key.update, {"ids": [key_id], "revoked": True}, plain) == 51
    assert services.query("SELECT revoked FROM api_keys WHERE id = ?", (key_id,)) == [(0,)]
    services.call(api_key.update, {"ids": [key_id], "revoked": True}, as_user=ADMIN)
    assert services.query("SELECT revoked FROM api_keys WHERE id = ?", (key_id,)) == [(1,)]


def test_update_errors_change_nothing(services, plain):
    key_id = services.call(api_key.create, {"description": "keep"}, as_user=plain)["id"]
    assert error_code(services, api_key.update, {"description": "x"}, plain) == 50
    assert error_code(services, api_key.update, {"ids": [key_id, 9999], "description": "x"},
                      plain) == 51
    assert services.query("SELECT description FROM api_keys WHERE id = ?", (key_id,)) == [("keep",)]


def test_update_by_path_with_a_non_number_is_52(client, plain_key):
    resp = client.simulate_put("/rest/api_key/abc", params={"Bugzilla_api_key": plain_key},
                               json={"revoked": True})
    assert (resp.status_code, resp.json["code"]) == (400, 52)
