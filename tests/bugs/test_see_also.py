"""See Also values that are bare words: the number or alias of a bug of this
installation, stored as its local link; a word that is no bug the caller can
see answers 100 (also for a hidden bug's alias: no oracle)."""

import json

import pytest

from bug_support import (
    ADMIN,
    MANDATORY,
    add_bug_group,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    set_param,
    update_bug,
)
from bugsvc.errors import ServiceError


URLBASE = "https://bugs.example.com/"


@pytest.fixture
def linked(services):
    """urlbase set; bug FOO-1 (alias) and a bug to link from."""
    set_param(services, "urlbase", URLBASE)
    target = file_bug(services, alias=["FOO-1"])
    file_bug(services, alias=["plain_word"])
    return target, file_bug(services)


def see_also_error(services, bug_id, value, as_user=ADMIN):
    with pytest.raises(ServiceError) as caught:
        update_bug(services, bug_id, as_user=as_user, see_also={"add": [value]})
    return caught.value


@pytest.mark.parametrize("word", ["plain_word", "PLAIN_WORD"])
def test_a_word_that_is_an_alias_becomes_the_local_link(services, linked, word):
    target, bug_id = linked
    aliased = services.query("SELECT bug_id FROM bug_aliases WHERE alias = 'plain_word'")[0][0]
    update_bug(services, bug_id, see_also={"add": [word]})
    assert get_bug(services, bug_id)["see_also"] == [f"{URLBASE}show_bug.cgi?id={aliased}"]
    assert get_bug(services, aliased)["see_also"] == [f"{URLBASE}show_bug.cgi?id={bug_id}"]


def test_an_alias_with_other_characters_is_found_too(services, linked):
    target, bug_id = linked
    bug = get_bug(services, file_bug(services, see_also=["FOO-1", "#FOO-1"]))
    assert bug["see_also"] == [f"{URLBASE}show_bug.cgi?id={target}"]


def test_a_bug_number_becomes_the_local_link(services, linked):
    target, bug_id = linked
    update_bug(services, bug_id, see_also={"add": [str(target)]})
    assert get_bug(services, bug_id)["see_also"] == [f"{URLBASE}show_bug.cgi?id={target}"]


def test_an_unknown_word_is_100_over_rest(client, admin_key, services, linked):
    target, bug_id = linked
    answer = client.simulate_put(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key},
                                 json={"see_also": {"add": ["asdfasdfasdf"]}})
    assert (answer.status_code, answer.json["code"]) == (400, 100)
    assert "asdfasdfasdf" in answer.json["message"]
    answer = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                  json={"product": "TestProduct", "component": "TestComponent",
                                        "version": "unspecified", "summary": "x",
                                        "op_sys": "Linux", "platform": "PC",
                                        "see_also": "asdfasdfasdf"})
    assert (answer.status_code, answer.json["code"]) == (400, 100)
    assert get_bug(services, bug_id)["see_also"] == []


def test_update_see_also_over_jsonrpc_unknown_word_is_100_and_removing_it_is_ignored(
        client, admin_key, services, linked):
    target, bug_id = linked

    def call(**params):
        body = {"method": "Bug.update_see_also", "id": 1,
                "params": [{"Bugzilla_api_key": admin_key, "ids": [bug_id], **params}]}
        return client.simulate_post("/jsonrpc.cgi", body=json.dumps(body),
                                    headers={"Content-Type": "application/json"}).json

    assert call(add=["asdfasdfasdf"])["error"]["code"] == 100
    assert call(remove=["asdfasdfasdf"])["result"] == {
        "changes": {str(bug_id): {"see_also": {"added": [], "removed": []}}}}
    assert call(add=["FOO-1"])["result"]["changes"][str(bug_id)]["see_also"]["added"] == [
        f"{URLBASE}show_bug.cgi?id={target}"]
    assert call(remove=["FOO-1"])["result"]["changes"][str(bug_id)]["see_also"]["removed"] == [
        f"{URLBASE}show_bug.cgi?id={target}"]


def test_a_hidden_bugs_alias_answers_like_an_unknown_word(services, linked):
    editbugs_only_for_members(services)
    services.add_user("plain@example.com")
    secret = add_bug_group(services, "secret")
    control(services, secret, MANDATORY, MANDATORY)
    hidden = file_bug(services, alias=["hidden_one"])        # restricted to secret
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM group_controls")
    own = file_bug(services, as_user="plain@example.com")
    answers = {}
    for word in ("hidden_one", "missing_one"):
        error = see_also_error(services, own, word, as_user="plain@example.com")
        answers[word] = (error.code, error.message.replace(word, "WORD"))
    assert answers["hidden_one"] == answers["missing_one"]
    assert answers["hidden_one"][0] == 100
    # Removing by the hidden alias tells nothing either: nothing is removed.
    hidden_link = f"{URLBASE}show_bug.cgi?id={hidden}"
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_see_also (bug_id, url) VALUES (?, ?)", (own, hidden_link))
    changes = update_bug(services, own, as_user="plain@example.com",
                         see_also={"remove": ["hidden_one"]})["changes"]
    assert changes == {}
    assert get_bug(services, own)["see_also"] == [hidden_link]
