"""Mail preferences over REST: the reference's defaults, the
relationship/event matrix, flag mail, user watching and ignored bugs; each
account changes its own (editusers anyone's); bad input stores nothing."""

import pytest

from bug_support import (
    MANDATORY,
    add_bug_group,
    control,
    editbugs_only_for_members,
    file_bug,
    set_param,
)


PATH = "/rest/email_settings"


def get(client, key, **params):
    return client.simulate_get(PATH, params={"Bugzilla_api_key": key, **params})


def put(client, key, body, **params):
    return client.simulate_put(PATH, params={"Bugzilla_api_key": key, **params}, json=body)


def test_the_defaults_are_the_references(client, plain_key):
    settings = get(client, plain_key).json["email_settings"]
    assert settings["user"] == "plain@example.com" and settings["email_enabled"] is True
    assert settings["flags"] == {"flag_requested": True, "requested_flag": True}
    assert set(settings["relationships"]) == {"assignee", "reporter", "cc", "mentioned"}
    assert settings["relationships"]["mentioned"] == {"comment": True, "unconfirmed": True}
    assignee = settings["relationships"]["assignee"]
    assert assignee["changed_by_me"] is False and assignee["cc"] is False
    assert assignee["comment"] is True and assignee["unconfirmed"] is True
    reporter = settings["relationships"]["reporter"]
    assert reporter["cc"] is True and "added_removed" not in reporter
    assert settings["watching"] == [] and settings["watchers"] == []
    assert settings["ignored_bugs"] == [] and settings["global_watcher"] is False


def test_the_qa_contact_column_shows_while_useqacontact_is_on(client, plain_key, services):
    set_param(services, "useqacontact", "1")
    assert "qa_contact" in get(client, plain_key).json["email_settings"]["relationships"]


def test_changing_choices_watching_and_ignored_bugs(client, plain_key, services):
    services.add_user("dev@example.com")
    bug_id = file_bug(services)
    answer = put(client, plain_key, {
        "flags": {"requested_flag": False},
        "relationships": {"cc": {"comment": False, "changed_by_me": True}},
        "watching": ["dev@example.com"], "ignored_bugs": [bug_id]})
    assert answer.status_code == 200
    settings = answer.json["email_settings"]
    assert settings["flags"]["requested_flag"] is False
    assert settings["relationships"]["cc"]["comment"] is False
    assert settings["relationships"]["cc"]["changed_by_me"] is True
    assert settings["watching"] == ["dev@example.com"]
    assert settings["ignored_bugs"] == [bug_id]
    # Only the choices that differ from the defaults are stored.
    assert services.query("SELECT relationship, event, enabled FROM email_settings"
                          " ORDER BY relationship, event") == [(3, 2, 0), (3, 51, 1),
                                                               (100, 101, 0)]
    dev_key = services.api_key("dev@example.com")
    assert get(client, dev_key).json["email_settings"]["watchers"] == ["plain@example.com"]
    back = put(client, plain_key, {"relationships": {"cc": {"comment": True}},
                                   "watching": {"remove": ["dev@example.com"]},
                                   "ignored_bugs": {"remove": [bug_id]}}).json["email_settings"]
    assert back["relationships"]["cc"]["comment"] is True
    assert back["watching"] == [] and back["ignored_bugs"] == []


@pytest.mark.parametrize("body, code", [
    ({"relationships": {"boss": {"comment": False}}}, 53),
    ({"relationships": {"cc": {"gossip": False}}}, 53),
    ({"relationships": {"reporter": {"added_removed": False}}}, 53),
    ({"relationships": "cc"}, 53),
    ({"flags": {"flag_requested": False, "other": True}}, 53),
    ({"watching": ["nobody@example.com"]}, 51),
    ({"watching": ["plain@example.com"]}, 32000),
    ({"watching": {"everyone": True}}, 53),
    ({"ignored_bugs": [9999]}, 101),
])
def test_bad_input_changes_nothing(client, plain_key, services, body, code):
    before = get(client, plain_key).json
    flags = body.get("flags", {"flag_requested": False})
    answer = put(client, plain_key, dict(body, flags=flags))
    assert answer.json["code"] == code
    assert get(client, plain_key).json == before


def test_a_hidden_bug_cannot_be_ignored_and_a_hidden_account_not_watched(
        client, plain_key, services):
    secret = add_bug_group(services, "secret", [])
    control(services, secret, MANDATORY, MANDATORY)
    hidden = file_bug(services)
    assert put(client, plain_key, {"ignored_bugs": [hidden]}).json["code"] == 102
    services.add_user("stranger@example.com")
    editbugs_only_for_members(services)          # no group shared with the stranger
    set_param(services, "usevisibilitygroups", "1")
    answer = put(client, plain_key, {"watching": ["stranger@example.com"]})
    assert answer.json["code"] == 51
    assert answer.json["message"] == "There is no user account 'stranger@example.com'."


def test_other_accounts_need_editusers(client, plain_key, admin_key, services):
    answer = get(client, plain_key, user="admin@example.com")
    assert (answer.status_code, answer.json["code"]) == (401, 304)
    assert put(client, plain_key, {"flags": {"flag_requested": False}},
               user="admin@example.com").json["code"] == 304
    changed = put(client, admin_key, {"flags": {"flag_requested": False}},
                  user="plain@example.com").json["email_settings"]
    assert changed["user"] == "plain@example.com"
    assert get(client, plain_key).json["email_settings"]["flags"]["flag_requested"] is False
    assert get(client, admin_key, user="nobody@example.com").json["code"] == 51


def test_logged_out_callers_have_no_settings(client):
    assert client.simulate_get(PATH).json["code"] == 410
    assert client.simulate_put(PATH, json={}).json["code"] == 410
