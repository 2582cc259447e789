"""Code forges linked to bugs: repositories registered by administrators
(/rest/forge_repository), and the webhook receivers /hooks/github,
/hooks/gitlab and /hooks/gitea fed with each forge's documented payload
shapes, signed right and wrong, and delivered three times (as a forge does
when it retries): each bug changes exactly once, hidden and unknown bugs
never, and the answer never tells which bugs exist."""

import hashlib
import hmac
import json

import pytest

from bug_rows import ADMIN, add_bug, add_group
from bug_support import editbugs_only_for_members


DEV = "dev@example.com"
BOT = "bot@example.com"
SECRET = "It's a Secret to Everybody"
HIDDEN_SUMMARY = "Hidden from the developer"


@pytest.fixture
def bugs(services):
    services.add_user(DEV, real_name="Dev")
    services.add_user(BOT, real_name="Forge bot")
    add_group(services, "secret", members=[ADMIN])
    public = add_bug(services, summary="Crash on start", description="It crashes.")
    hidden = add_bug(services, summary=HIDDEN_SUMMARY, groups=["secret"])
    return {"public": public, "hidden": hidden}


def register(client, admin_key, forge, repository="octo/widget", **fields):
    body = dict(forge=forge, repository=repository, secret=SECRET, **fields)
    answer = client.simulate_post("/rest/forge_repository", json=body,
                                  headers={"X-BUGZILLA-API-KEY": admin_key})
    assert answer.status_code == 201, answer.json
    return answer.json["id"]


# Each forge's documented payloads, cut to the keys read -------------------------------

def _commit(sha, message, email):
    person = {"name": "Dev Eloper", "email": email, "username": "dev"}
    return {"id": sha, "message": message, "timestamp": "2026-05-01T12:00:00+00:00",
            "url": f"https://forge.example/octo/widget/commit/{sha}",
            "author": person, "committer": person}


def push(forge, message, email=DEV, branch="main", sha="a" * 40, repository="octo/widget"):
    """(headers without proof, body) of a push of one commit."""
    commit = _commit(sha, message, email)
    if forge == "gitlab":
        commit.pop("committer")
        payload = {"object_kind": "push", "event_name": "push", "before": "0" * 40,
                   "after": sha, "ref": f"refs/heads/{branch}", "user_email": email,
                   "project": {"path_with_namespace": repository, "default_branch": "main",
                               "web_url": f"https://gitlab.example/{repository}"},
                   "commits": [commit], "total_commits_count": 1}
        return {"X-Gitlab-Event": "Push Hook"}, payload
    payload = {"ref": f"refs/heads/{branch}", "before": "0" * 40, "after": sha,
               "repository": {"full_name": repository, "default_branch": "main",
                              "html_url": f"https://forge.example/{repository}"},
               "pusher": {"name": "dev", "email": email}, "commits": [commit],
               "head_commit": commit}
    event = "X-GitHub-Event" if forge == "github" else "X-Gitea-Event"
    return {event: "push"}, payload


def request_event(forge, action, title, number=7, repository="octo/widget"):
    """(headers without proof, body) of a pull/merge request event;
    action: opened, merged or closed (without merging)."""
    url = f"https://forge.example/{repository}/pull/{number}"
    if forge == "gitlab":
        url = f"https://gitlab.com/{repository}/-/merge_requests/{number}"
        payload = {"object_kind": "merge_request", "event_type": "merge_request",
                   "user": {"username": "dev", "email": DEV},
                   "project": {"path_with_namespace": repository, "default_branch": "main"},
                   "object_attributes": {"iid": number, "title": title, "description": "",
                                         "url": url, "state": action,
                                         "action": {"opened": "open", "merged": "merge",
                                                    "closed": "close"}[action],
                                         "source_branch": "fix", "target_branch": "main"}}
        return {"X-Gitlab-Event": "Merge Request Hook"}, payload
    if forge == "github":
        url = f"https://github.com/{repository}/pull/{number}"
    payload = {"action": "closed" if action in ("merged", "closed") else action,
               "number": number,
               "pull_request": {"number": number, "html_url": url, "title": title, "body": "",
                                "merged": action == "merged", "user": {"login": "dev"},
                                "head": {"ref": "fix"}, "base": {"ref": "main"}},
               "repository": {"full_name": repository, "default_branch": "main"}}
    event = "X-GitHub-Event" if forge == "github" else "X-Gitea-Event"
    return {event: "pull_request"}, payload


def signed(forge, headers, payload, secret=SECRET):
    """(headers with the forge's proof, body bytes)."""
    body = json.dumps(payload).encode()
    headers = dict(headers, **{"Content-Type": "application/json"})
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if forge == "github":
        headers["X-Hub-Signature-256"] = "sha256=" + digest
        headers["X-GitHub-Delivery"] = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    elif forge == "gitea":
        headers["X-Gitea-Signature"] = digest
    else:
        headers["X-Gitlab-Token"] = secret
    return headers, body


def deliver(client, forge, event, secret=SECRET, times=3):
    """Deliver `event` `times` times (a forge's redeliveries); the statuses."""
    headers, body = signed(forge, *event, secret=secret)
    answers = [client.simulate_post(f"/hooks/{forge}", body=body, headers=headers)
               for _ in range(times)]
    assert len({answer.text for answer in answers}) == 1
    return answers[0]


def comments(services, bug_id):
    return [row[0] for row in services.query(
        "SELECT body FROM comments WHERE bug_id = ? ORDER BY count", (bug_id,))]


def state(services, bug_id):
    return services.query("SELECT status, resolution FROM bugs WHERE id = ?", (bug_id,))[0]


FORGES = ["github", "gitlab", "gitea"]


@pytest.mark.parametrize("forge", FORGES)
def test_a_fixing_commit_comments_and_resolves_once(client, services, admin_key, bugs, forge):
    register(client, admin_key, forge)
    message = (f"Fixes bug {bugs['public']}: no crash on start\n\nSee also bug {bugs['hidden']}"
               " and bug 999999.")
    answer = deliver(client, forge, push(forge, message))
    assert answer.status_code == 200 and answer.json == {"received": True}
    assert state(services, bugs["public"]) == ("RESOLVED", "FIXED")
    added = comments(services, bugs["public"])[1:]
    assert len(added) == 1
    assert "Commit aaaaaaaaaaaa by Dev Eloper in octo/widget (main):" in added[0]
    assert "Fixes bug" in added[0] and "/commit/" + "a" * 40 in added[0]
    author = services.query("SELECT u.login FROM comments c JOIN users u ON u.id = c.author_id"
                            " WHERE c.bug_id = ? AND c.count = 1", (bugs["public"],))
    assert author == [(DEV,)]
    # The hidden bug and the unknown one: nothing, and no word of them.
    assert comments(services, bugs["hidden"]) == [""]
    assert state(services, bugs["hidden"]) == ("CONFIRMED", "")


@pytest.mark.parametrize("forge", FORGES)
def test_wrong_proofs_and_unknown_repositories_change_nothing(client, services, admin_key,
                                                              bugs, forge):
    register(client, admin_key, forge)
    event = push(forge, f"Fixes bug {bugs['public']}")
    refused = deliver(client, forge, event, secret="not the secret at all")
    assert refused.status_code == 403 and refused.json["code"] == 304
    headers, body = signed(forge, *event)
    unsigned = {name: value for name, value in headers.items()
                if name not in ("X-Hub-Signature-256", "X-Gitea-Signature", "X-Gitlab-Token")}
    assert client.simulate_post(f"/hooks/{forge}", body=body, headers=unsigned
                                ).status_code == 403
    # Altered after signing.
    tampered = body.replace(b"Fixes bug", b"Fixes bug 1 and bug")
    if forge != "gitlab":             # GitLab's token signs no body
        assert client.simulate_post(f"/hooks/{forge}", body=tampered, headers=headers
                                    ).status_code == 403
    other = deliver(client, forge, push(forge, f"Fixes bug {bugs['public']}",
                                        repository="octo/unknown"))
    assert other.status_code == 403 and other.json == refused.json
    assert comments(services, bugs["public"]) == ["It crashes."]
    assert state(services, bugs["public"]) == ("CONFIRMED", "")
    assert client.simulate_post(f"/hooks/{forge}", body=b"{not json",
                                headers=headers).status_code == 400


def test_github_is_checked_by_its_sha256_signature_only(client, services, admin_key, bugs):
    """A delivery carrying only GitHub's older SHA-1 signature, correct as
    it is, is refused: the SHA-256 one is the proof (docs/decisions.md)."""
    register(client, admin_key, "github")
    headers, body = signed("github", *push("github", f"Fixes bug {bugs['public']}"))
    del headers["X-Hub-Signature-256"]
    headers["X-Hub-Signature"] = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1
                                                    ).hexdigest()
    answer = client.simulate_post("/hooks/github", body=body, headers=headers)
    assert answer.status_code == 403 and answer.json["code"] == 304
    assert state(services, bugs["public"]) == ("CONFIRMED", "")


def test_only_configured_branches_resolve(client, services, admin_key, bugs):
    register(client, admin_key, "github", branches=["release"])
    deliver(client, "github", push("github", f"Fixes bug {bugs['public']}", branch="main"))
    assert state(services, bugs["public"]) == ("CONFIRMED", "")
    assert len(comments(services, bugs["public"])) == 2
    # The same commit reaching the release branch resolves it, without a second comment.
    deliver(client, "github", push("github", f"Fixes bug {bugs['public']}", branch="release"))
    assert state(services, bugs["public"]) == ("RESOLVED", "FIXED")
    added = comments(services, bugs["public"])[1:]
    assert len(added) == 2 and added[1].startswith("Fixed by commit aaaaaaaaaaaa on release.")


def test_who_acts_the_committers_account_else_the_bot_else_nobody(client, services,
                                                                  admin_key, bugs):
    repository_id = register(client, admin_key, "gitea")
    deliver(client, "gitea", push("gitea", f"Bug {bugs['public']}: look", "who@else.example"))
    assert comments(services, bugs["public"]) == ["It crashes."]
    answer = client.simulate_put(f"/rest/forge_repository/{repository_id}",
                                 json={"bot_account": BOT},
                                 headers={"X-BUGZILLA-API-KEY": admin_key})
    assert answer.json["forge_repositories"][0]["changes"]["bot_account"] == {
        "removed": "", "added": BOT}
    deliver(client, "gitea", push("gitea", f"Bug {bugs['public']}: look", "who@else.example",
                                  sha="b" * 40))
    authors = services.query("SELECT u.login FROM comments c JOIN users u ON u.id = c.author_id"
                             " WHERE c.bug_id = ? ORDER BY c.count", (bugs["public"],))
    assert authors == [(ADMIN,), (BOT,)]


def test_the_actor_resolves_only_with_its_rights(client, services, admin_key, bugs):
    editbugs_only_for_members(services)          # the developer may not resolve others' bugs
    register(client, admin_key, "github")
    deliver(client, "github", push("github", f"Closes bug {bugs['public']}"))
    assert state(services, bugs["public"]) == ("CONFIRMED", "")
    assert len(comments(services, bugs["public"])) == 2         # the comment is still made


def test_hash_references_only_when_configured(client, services, admin_key, bugs):
    repository_id = register(client, admin_key, "github")
    deliver(client, "github", push("github", f"Fixes #{bugs['public']}"))
    assert comments(services, bugs["public"]) == ["It crashes."]
    client.simulate_put(f"/rest/forge_repository/{repository_id}",
                        json={"hash_references": True}, headers={"X-BUGZILLA-API-KEY": admin_key})
    deliver(client, "github", push("github", f"Fixes #{bugs['public']}", sha="c" * 40))
    assert state(services, bugs["public"]) == ("RESOLVED", "FIXED")


@pytest.mark.parametrize("forge", FORGES)
def test_requests_add_see_also_and_comment_once(client, services, admin_key, bugs, forge):
    register(client, admin_key, forge, bot_account=BOT)
    title = f"Bug {bugs['public']}: stop the crash (and bug {bugs['hidden']})"
    deliver(client, forge, request_event(forge, "opened", title))
    deliver(client, forge, request_event(forge, "closed", title))      # not merged: nothing
    deliver(client, forge, request_event(forge, "merged", title))
    added = comments(services, bugs["public"])[1:]
    assert [text.split(":")[0] for text in added] == ["Pull request #7 opened",
                                                      "Pull request #7 merged"]
    links = [row[0] for row in services.query("SELECT url FROM bug_see_also WHERE bug_id = ?",
                                              (bugs["public"],))]
    if forge == "gitea":          # not a tracker bugsvc takes See Also links of (112)
        assert links == []
    else:
        assert len(links) == 1 and links[0].endswith("7")
    assert comments(services, bugs["hidden"]) == [""]


def test_ping_is_answered(client, admin_key, bugs):
    register(client, admin_key, "github")
    answer = deliver(client, "github", ({"X-GitHub-Event": "ping"}, {
        "zen": "Keep it logically awesome.", "hook_id": 1,
        "repository": {"full_name": "octo/widget"}}), times=1)
    assert answer.status_code == 200


# Registering repositories --------------------------------------------------------------

def test_only_administrators_register_and_secrets_are_never_shown(client, services,
                                                                  admin_key, plain_key):
    for key, status in ((None, 401), (plain_key, 401)):
        headers = {"X-BUGZILLA-API-KEY": key} if key else {}
        answer = client.simulate_get("/rest/forge_repository", headers=headers)
        assert answer.status_code == status
        answer = client.simulate_post("/rest/forge_repository", headers=headers, json={
            "forge": "github", "repository": "o/r", "secret": SECRET})
        assert answer.status_code == status and answer.json["code"] in (410, 304)
    admin = {"X-BUGZILLA-API-KEY": admin_key}
    repository_id = register(client, admin_key, "gitlab", "group/sub/project",
                             branches="main, release")
    listed = client.simulate_get("/rest/forge_repository", headers=admin).json
    assert listed["forge_repositories"] == [{
        "id": repository_id, "forge": "gitlab", "repository": "group/sub/project",
        "branches": ["main", "release"], "hash_references": False, "bot_account": None,
        "hook": "/hooks/gitlab", "created": listed["forge_repositories"][0]["created"]}]
    assert SECRET not in json.dumps(listed)
    answer = client.simulate_put(f"/rest/forge_repository/{repository_id}", headers=admin,
                                 json={"secret": "another secret"})
    assert answer.json["forge_repositories"][0]["changes"] == {
        "secret": {"removed": "********", "added": "********"}}
    assert client.simulate_put(f"/rest/forge_repository/{repository_id}",
                               headers={"X-BUGZILLA-API-KEY": plain_key},
                               json={"secret": "mine now!"}).status_code == 401
    assert client.simulate_delete(f"/rest/forge_repository/{repository_id}",
                                  headers=admin).status_code == 200
    assert client.simulate_get("/rest/forge_repository", headers=admin).json == {
        "forge_repositories": []}


@pytest.mark.parametrize("body, code", [
    ({"forge": "sourcehut", "repository": "o/r", "secret": SECRET}, 32000),
    ({"forge": "github", "repository": "no slash", "secret": SECRET}, 32000),
    ({"forge": "github", "repository": "o/r", "secret": "short"}, 32000),
    ({"forge": "github", "repository": "o/r"}, 50),
    ({"forge": "github", "repository": "o/r", "secret": SECRET, "bot_account": "x@y.z"}, 51),
    ({"forge": "github", "repository": "o/r", "secret": SECRET, "branches": ["a b"]}, 32000),
])
def test_bad_registrations_are_refused(client, services, admin_key, body, code):
    answer = client.simulate_post("/rest/forge_repository", json=body,
                                  headers={"X-BUGZILLA-API-KEY": admin_key})
    assert answer.json["code"] == code
    assert services.query("SELECT COUNT(*) FROM forge_repositories") == [(0,)]


def test_a_repository_is_registered_once(client, admin_key):
    register(client, admin_key, "github", "Octo/Widget")
    answer = client.simulate_post("/rest/forge_repository", json={
        "forge": "github", "repository": "octo/widget", "secret": SECRET},
        headers={"X-BUGZILLA-API-KEY": admin_key})
    assert answer.status_code == 400 and "already registered" in answer.json["message"]
    register(client, admin_key, "gitea", "octo/widget")      # another forge: another one
