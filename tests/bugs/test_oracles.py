"""No oracles: to a caller who may not see a bug, comment,
attachment, product, group or user, the hidden thing and a missing one get
the same answer (HTTP status, code, message with the echoed name
normalised). Callers: anonymous, a plain user and a partial member (in some
of the groups, not all). Privileged callers still get the truth."""

import base64
import json
import re
import xmlrpc.client

import pytest

from bug_support import (
    ADMIN,
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    add_custom_field,
    add_flag_type,
    add_to_group,
    control,
    editbugs_only_for_members,
    file_bug,
    grant_visibility,
    set_param,
    update_bug,
)
from bugsvc.services import attachment as attachment_service
from catalog_support import add_product
from conftest import world_fixture


PLAIN = "plain@example.com"
PARTIAL = "partial@example.com"      # member of "team", not of "vault"
EDITOR = "editor@example.com"        # editcomponents, not in "vault"
BLESSER = "blesser@example.com"      # may bless "team" only
STRANGER = "stranger@example.com"    # shares no group with the others
CALLERS = ["anonymous", PLAIN, PARTIAL]
HIDDEN_ALIAS, MISSING_ALIAS = "CVE-2026-1", "CVE-2026-9"
MISSING_ID = 4242
HIDDEN_PRODUCT, MISSING_PRODUCT = "VaultProduct", "NoSuchProduct"
HIDDEN_GROUP, MISSING_GROUP = "vault", "nosuchgroup"
MISSING_LOGIN = "nobody@example.com"


@world_fixture
def world(services):
    """Bugs, comments, attachments, a product and a group hidden from PLAIN
    and PARTIAL; the administrator is in every group and an insider."""
    for login in (PLAIN, PARTIAL, STRANGER):
        services.add_user(login, password="right-password")
    services.add_user(EDITOR, groups=("editcomponents",))
    add_bug_group(services, "insiders")
    set_param(services, "insidergroup", "insiders")
    team = add_bug_group(services, "team", members=[PARTIAL])
    vault = add_bug_group(services, HIDDEN_GROUP)
    services.add_user(BLESSER, bless=("team",))
    for group in (team, vault):
        control(services, group, SHOWN, NA)
    add_custom_field(services, "cf_related", 6)
    add_flag_type(services, "review")
    public = file_bug(services, summary="Public bug")
    team_bug = file_bug(services, summary="Team bug", groups=["team"], alias="team-1")
    hidden = file_bug(services, summary="Secret exploit", groups=[HIDDEN_GROUP],
                      alias=HIDDEN_ALIAS, description="exploit details")
    update_bug(services, public, comment={"body": "private note", "is_private": True})
    comment_ids = dict(services.query(
        "SELECT bug_id, MAX(id) FROM comments WHERE bug_id IN (?, ?) GROUP BY bug_id",
        (public, hidden)))
    product = add_product(services, HIDDEN_PRODUCT, versions=("1.0", "2.0"))
    control(services, vault, MANDATORY, MANDATORY, product=HIDDEN_PRODUCT, entry=1)
    file_bug(services, product=HIDDEN_PRODUCT, component="General", version="1.0",
             summary="In the vault")
    return {
        "public": public, "team_bug": team_bug, "hidden": hidden,
        "private_comment": comment_ids[public], "hidden_comment": comment_ids[hidden],
        "hidden_attachment": _attach(services, hidden),
        "private_attachment": _attach(services, public, is_private=True),
        "product": product,
        "version": services.query("SELECT id FROM versions WHERE product_id = ? AND name = '1.0'",
                                  (product["id"],))[0][0],
        "milestone": services.query("SELECT id FROM milestones WHERE product_id = ?",
                                    (product["id"],))[0][0],
        "vault": vault, "team": team,
        "keys": {login: services.api_key(login)
                 for login in (PLAIN, PARTIAL, EDITOR, BLESSER, ADMIN)} | {"anonymous": None},
    }


def _attach(services, bug_id, **fields):
    params = {"ids": [bug_id], "data": _b64(b"secret data"), "file_name": "a.txt",
              "summary": "An attachment", "content_type": "text/plain"}
    params.update(fields)
    return services.call(attachment_service.create, params, as_user=ADMIN)["ids"][0]


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def ask(client, key, method, path, body=None, query=None):
    """One request as the owner of `key` (None: anonymous)."""
    query = dict(query or {})
    if key:
        query["Bugzilla_api_key"] = key
    return client.simulate_request(method, path, params=query, json=body)


def answer(resp, echoed):
    """(HTTP status, body text) with every standalone `echoed` replaced by <X>."""
    text = json.dumps(resp.json, sort_keys=True)
    return resp.status_code, re.sub(rf"(?<![\w.@-]){re.escape(str(echoed))}(?![\w@-]|\.\w)", "<X>",
                                    text)


def assert_alike(client, key, request, hidden, missing):
    """`request(x)` -> (method, path, body, query) answers alike for both things."""
    seen = answer(ask(client, key, *request(hidden)), hidden)
    unseen = answer(ask(client, key, *request(missing)), missing)
    assert seen == unseen
    assert seen[0] in (200, 400, 401, 404)
    return seen


def rpc(method, params, key):
    """A JSON-RPC request of `method` (credentials inside the params)."""
    params = dict(params, **({"Bugzilla_api_key": key} if key else {}))
    return ("POST", "/jsonrpc.cgi", {"method": method, "params": [params], "id": "call"}, None)


# Bugs by numeric id and by alias ---------------------------------------------------

def _attachment_body(**extra):
    return dict({"data": _b64(b"x"), "file_name": "b.txt", "summary": "s",
                 "content_type": "text/plain"}, **extra)


def _new_bug(**extra):
    return dict({"product": "TestProduct", "component": "TestComponent",
                 "version": "unspecified", "summary": "s", "op_sys": "Linux", "platform": "PC"},
                **extra)


BUG_REQUESTS = {
    "get": lambda w, k, x: ("GET", f"/rest/bug/{x}", None, None),
    "get ids": lambda w, k, x: ("GET", f"/rest/bug/{w['public']}", None, {"ids": x}),
    "comments": lambda w, k, x: ("GET", f"/rest/bug/{x}/comment", None, None),
    "add comment": lambda w, k, x: ("POST", f"/rest/bug/{x}/comment", {"comment": "hi"}, None),
    "history": lambda w, k, x: ("GET", f"/rest/bug/{x}/history", None, None),
    "attachments": lambda w, k, x: ("GET", f"/rest/bug/{x}/attachment", None, None),
    "attach": lambda w, k, x: ("POST", f"/rest/bug/{x}/attachment", _attachment_body(), None),
    "update": lambda w, k, x: ("PUT", f"/rest/bug/{x}", {"summary": "changed"}, None),
    "update ids": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}",
                                   {"ids": [w["public"], x], "whiteboard": "w"}, None),
    "blocks": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}", {"blocks": {"add": [x]}}, None),
    "depends_on": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}",
                                   {"depends_on": {"set": [x]}}, None),
    "dupe_of": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}", {"dupe_of": x}, None),
    "resolve duplicate": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}",
                                          {"status": "RESOLVED", "resolution": "DUPLICATE",
                                           "dupe_of": x}, None),
    "see_also": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}",
                                 {"see_also": {"add": [str(x)]}}, None),
    "custom bug id": lambda w, k, x: ("PUT", f"/rest/bug/{w['public']}", {"cf_related": x}, None),
    "create depends_on": lambda w, k, x: ("POST", "/rest/bug", _new_bug(depends_on=[x]), None),
    "create blocks": lambda w, k, x: ("POST", "/rest/bug", _new_bug(blocks=[x]), None),
    "create see_also": lambda w, k, x: ("POST", "/rest/bug", _new_bug(see_also=[str(x)]), None),
    "create custom bug id": lambda w, k, x: ("POST", "/rest/bug", _new_bug(cf_related=x), None),
    "last visit": lambda w, k, x: ("POST", "/rest/bug_user_last_visit", {"ids": [x]}, None),
    "last visit get": lambda w, k, x: ("GET", "/rest/bug_user_last_visit", None, {"ids": x}),
    "search id": lambda w, k, x: ("GET", "/rest/bug", None, {"id": x}),
    "search alias": lambda w, k, x: ("GET", "/rest/bug", None, {"alias": x}),
    "quicksearch": lambda w, k, x: ("GET", "/rest/bug", None, {"quicksearch": str(x)}),
    "jsonrpc get": lambda w, k, x: rpc("Bug.get", {"ids": [x]}, k),
    "jsonrpc comments": lambda w, k, x: rpc("Bug.comments", {"ids": [x]}, k),
    "jsonrpc tags": lambda w, k, x: rpc("Bug.update_tags", {"ids": [x], "tags": {"add": ["t1"]}},
                                        k),
    "jsonrpc see_also": lambda w, k, x: rpc("Bug.update_see_also",
                                            {"ids": [x],
                                             "add": ["https://github.com/a/b/issues/1"]},
                                            k),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("name", sorted(BUG_REQUESTS))
def test_hidden_and_missing_bug_ids_answer_alike(client, world, caller, name):
    key = world["keys"][caller]
    request = BUG_REQUESTS[name]
    status, _ = assert_alike(client, key, lambda x: request(world, key, x), world["hidden"],
                             MISSING_ID)
    if name in ("get", "comments", "history", "attachments"):
        assert status == 401    # 102, as a hidden bug always answered


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("name", sorted(BUG_REQUESTS))
def test_hidden_and_unknown_aliases_answer_alike(client, world, caller, name):
    key = world["keys"][caller]
    request = BUG_REQUESTS[name]
    assert_alike(client, key, lambda x: request(world, key, x), HIDDEN_ALIAS, MISSING_ALIAS)


@pytest.mark.parametrize("caller", CALLERS)
def test_the_answers_are_the_documented_ones(client, world, caller):
    key = world["keys"][caller]
    tail = " To see this bug, you must first log in." if caller == "anonymous" else ""
    for value in (MISSING_ID, world["hidden"], f"000{MISSING_ID}"):
        resp = ask(client, key, "GET", f"/rest/bug/{value}")
        number = str(value).lstrip("0")
        assert (resp.status_code, resp.json["code"], resp.json["message"]) == (
            401, 102, f"You are not authorized to access bug #{number}.{tail}")
    for alias in (HIDDEN_ALIAS, MISSING_ALIAS):
        resp = ask(client, key, "GET", f"/rest/bug/{alias}")
        assert (resp.status_code, resp.json["code"], resp.json["message"]) == (
            400, 100, f"'{alias}' is not a valid bug number nor an alias to a bug.")
    huge = "9" * 30
    resp = ask(client, key, "GET", f"/rest/bug/{huge}")
    assert (resp.status_code, resp.json["code"]) == (401, 102)
    assert "Secret" not in json.dumps(resp.json)


def test_hidden_alias_never_shows_its_bug_number(client, world):
    key = world["keys"][PLAIN]
    for path in (f"/rest/bug/{HIDDEN_ALIAS}", f"/rest/bug/{HIDDEN_ALIAS}/comment",
                 f"/rest/bug/{HIDDEN_ALIAS}/history"):
        body = ask(client, key, "GET", path).json
        assert f"#{world['hidden']}" not in body["message"]
        assert str(world["hidden"]) not in body["message"]


@pytest.mark.parametrize("caller", CALLERS)
def test_nothing_changes_when_the_bug_is_hidden_or_missing(client, services, world, caller):
    def state():
        return [services.table(table)
                for table in ("bugs", "comments", "attachments", "dependencies", "bug_see_also",
                              "bug_user_last_visit")]
    before = state()
    key = world["keys"][caller]
    for value in (world["hidden"], MISSING_ID, HIDDEN_ALIAS):
        for name in ("update", "blocks", "depends_on", "dupe_of", "see_also", "custom bug id",
                     "add comment", "attach", "create depends_on", "last visit"):
            resp = ask(client, key, *BUG_REQUESTS[name](world, key, value))
            assert resp.status_code in (400, 401)
    assert state() == before


# Aliases in use --------------------------------------------------------------------------

VISIBLE_ALIAS = "public-1"
ALIAS_REQUESTS = {
    "create": lambda w, k, x: ("POST", "/rest/bug", _new_bug(alias=[x]), None),
    "create string": lambda w, k, x: ("POST", "/rest/bug", _new_bug(alias=f"new-1, {x}"), None),
    "update set": lambda w, k, x: ("PUT", f"/rest/bug/{w['spare']}", {"alias": [x]}, None),
    "update add": lambda w, k, x: ("PUT", f"/rest/bug/{w['spare']}", {"alias": {"add": [x]}},
                                   None),
    "jsonrpc create": lambda w, k, x: rpc("Bug.create", _new_bug(alias=[x]), k),
    "jsonrpc update": lambda w, k, x: rpc("Bug.update", {"ids": [w["spare"]],
                                                         "alias": {"add": [x]}}, k),
}


@pytest.mark.parametrize("caller", [PLAIN, PARTIAL])
@pytest.mark.parametrize("name", sorted(ALIAS_REQUESTS))
def test_an_alias_of_a_hidden_bug_is_in_use_like_that_of_a_visible_one(client, services, world,
                                                                       caller, name):
    """Aliases are unique, so taking a hidden bug's alias must fail; it fails
    exactly as for a visible bug's alias (103, one message naming no bug), so
    the answer confirms only that the alias is taken."""
    update_bug(services, world["public"], alias=[VISIBLE_ALIAS])
    world["spare"] = file_bug(services, summary="Spare bug", alias="spare-1")
    key = world["keys"][caller]
    before = services.query("SELECT * FROM bug_aliases ORDER BY 1, 2")
    bugs_before = services.query("SELECT COUNT(*) FROM bugs")
    request = ALIAS_REQUESTS[name]
    status, text = assert_alike(client, key, lambda x: request(world, key, x), HIDDEN_ALIAS,
                                VISIBLE_ALIAS)
    assert status == (200 if name.startswith("jsonrpc") else 400) and '"code": 103' in text
    # One message, naming neither bug.
    assert "\"The alias '<X>' is already in use by another bug.\"" in text
    assert services.query("SELECT * FROM bug_aliases ORDER BY 1, 2") == before
    assert services.query("SELECT COUNT(*) FROM bugs") == bugs_before


def test_an_alias_in_use_answers_alike_over_xmlrpc(client, services, world):
    update_bug(services, world["public"], alias=[VISIBLE_ALIAS])
    faults = []
    for alias in (HIDDEN_ALIAS, VISIBLE_ALIAS):
        params = _new_bug(alias=[alias], Bugzilla_api_key=world["keys"][PLAIN])
        resp = client.simulate_post("/xmlrpc.cgi",
                                    body=xmlrpc.client.dumps((params,), "Bug.create"),
                                    headers={"Content-Type": "text/xml"})
        with pytest.raises(xmlrpc.client.Fault) as caught:
            xmlrpc.client.loads(resp.content)
        faults.append((caught.value.faultCode, caught.value.faultString.replace(alias, "<X>")))
    assert faults[0] == faults[1]
    assert faults[0][0] == 103


# Comments and attachments by id --------------------------------------------------------

COMMENT_REQUESTS = {
    "get": lambda w, x: ("GET", f"/rest/bug/comment/{x}", None, None),
    "get with bug": lambda w, x: ("GET", f"/rest/bug/{w['public']}/comment", None,
                                  {"comment_ids": x}),
    "tags": lambda w, x: ("PUT", f"/rest/bug/comment/{x}/tags", {"add": ["spam"]}, None),
    "privacy": lambda w, x: ("PUT", f"/rest/bug/{w['public']}",
                             {"comment_is_private": {str(x): False}}, None),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("hidden", ["hidden_comment", "private_comment"])
@pytest.mark.parametrize("name", sorted(COMMENT_REQUESTS))
def test_hidden_private_and_missing_comments_answer_alike(client, world, caller, hidden, name):
    request = COMMENT_REQUESTS[name]
    status, text = assert_alike(client, world["keys"][caller], lambda x: request(world, x),
                                world[hidden], 99999)
    if name == "get":
        assert status == 401 and '"code": 110' in text


def test_comment_tags_are_not_added_to_comments_the_caller_cannot_see(client, services, world):
    for comment in ("hidden_comment", "private_comment"):
        resp = ask(client, world["keys"][PLAIN], *COMMENT_REQUESTS["tags"](world, world[comment]))
        assert (resp.status_code, resp.json) == (200, [])
    assert services.query("SELECT comment_id FROM comment_tags") == []


ATTACHMENT_REQUESTS = {
    "get": lambda w, x: ("GET", f"/rest/bug/attachment/{x}", None, None),
    "get with bug": lambda w, x: ("GET", f"/rest/bug/{w['public']}/attachment", None,
                                  {"attachment_ids": x}),
    "update": lambda w, x: ("PUT", f"/rest/bug/attachment/{x}", {"summary": "renamed"}, None),
    "obsoletes": lambda w, x: ("POST", f"/rest/bug/{w['public']}/attachment",
                               _attachment_body(obsoletes=[x]), None),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("hidden", ["hidden_attachment", "private_attachment"])
@pytest.mark.parametrize("name", sorted(ATTACHMENT_REQUESTS) + ["jsonrpc get"])
def test_hidden_private_and_missing_attachments_answer_alike(client, services, world, caller,
                                                             hidden, name):
    before = services.query("SELECT id, summary, is_obsolete FROM attachments ORDER BY id")
    key = world["keys"][caller]
    request = ATTACHMENT_REQUESTS.get(name) or (
        lambda w, x: rpc("Bug.attachments", {"attachment_ids": [x]}, key))
    status, text = assert_alike(client, key, lambda x: request(world, x), world[hidden], 99999)
    if name == "get":
        assert status == 401 and '"code": 304' in text
    assert services.query("SELECT id, summary, is_obsolete FROM attachments ORDER BY id") == before


# Products ---------------------------------------------------------------------------

PRODUCT_REQUESTS = {
    "get path": lambda x: ("GET", f"/rest/product/{x}", None, None),
    "get names": lambda x: ("GET", "/rest/product", None, {"names": x}),
    "get names typed": lambda x: ("GET", "/rest/product", None, {"names": x, "type": "enterable"}),
    "flag types": lambda x: ("GET", f"/rest/flag_type/{x}", None, None),
    "flag types component": lambda x: ("GET", f"/rest/flag_type/{x}/General", None, None),
    "file bug": lambda x: ("POST", "/rest/bug", {
        "product": x, "component": "General", "version": "1.0", "summary": "s",
        "op_sys": "Linux", "platform": "PC"}, None),
    "search": lambda x: ("GET", "/rest/bug", None, {"product": x}),
    "quicksearch": lambda x: ("GET", "/rest/bug", None, {"quicksearch": f"product:{x}"}),
    "possible duplicates": lambda x: ("GET", "/rest/bug/possible_duplicates", None,
                                      {"summary": "vault", "products": x}),
}
PRODUCT_ID_REQUESTS = {
    "get path": lambda x: ("GET", f"/rest/product/{x}", None, None),
    "get ids": lambda x: ("GET", "/rest/product", None, {"ids": x}),
    "legal components": lambda x: ("GET", f"/rest/field/bug/component/{x}/values", None, None),
    "legal versions": lambda x: ("GET", f"/rest/field/bug/version/{x}/values", None, None),
}
# For a member of editcomponents who is not in the product's group.
PRODUCT_ADMIN_REQUESTS = {
    "update": lambda x: ("PUT", f"/rest/product/{x}", {"description": "d"}, None),
    "component create": lambda x: ("POST", "/rest/component", {
        "product": x, "name": "New", "description": "d", "default_assignee": ADMIN}, None),
    "component update": lambda x: ("PUT", f"/rest/component/{x}/General", {"description": "d"},
                                   None),
    "component delete": lambda x: ("DELETE", f"/rest/component/{x}/General", None, None),
    "version create": lambda x: ("POST", "/rest/version", {"product": x, "name": "9"}, None),
    "milestone create": lambda x: ("POST", "/rest/milestone", {"product": x, "name": "9"}, None),
    "flag type inclusion": lambda x: ("POST", "/rest/flag_type", {
        "name": "f", "description": "d", "inclusions": [x]}, None),
}
VALUE_ID_REQUESTS = {
    "component": lambda x: ("PUT", f"/rest/component/{x}", {"description": "d"}, None),
    "version": lambda x: ("PUT", f"/rest/version/{x}", {"sort_key": 3}, None),
    "milestone": lambda x: ("PUT", f"/rest/milestone/{x}", {"sort_key": 3}, None),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("name", sorted(PRODUCT_REQUESTS))
def test_hidden_and_missing_products_answer_alike(client, world, caller, name):
    status, text = assert_alike(client, world["keys"][caller], PRODUCT_REQUESTS[name],
                                HIDDEN_PRODUCT, MISSING_PRODUCT)
    assert "In the vault" not in text


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("name", sorted(PRODUCT_ID_REQUESTS))
def test_hidden_and_missing_product_ids_answer_alike(client, world, caller, name):
    assert_alike(client, world["keys"][caller], PRODUCT_ID_REQUESTS[name], world["product"]["id"],
                 999)


@pytest.mark.parametrize("caller", CALLERS + [EDITOR])
@pytest.mark.parametrize("name", sorted(PRODUCT_ADMIN_REQUESTS))
def test_product_administration_of_hidden_and_missing_products_alike(client, services, world,
                                                                     caller, name):
    before = services.query("SELECT id, name, description FROM components ORDER BY id")
    assert_alike(client, world["keys"][caller], PRODUCT_ADMIN_REQUESTS[name], HIDDEN_PRODUCT,
                 MISSING_PRODUCT)
    assert services.query("SELECT id, name, description FROM components ORDER BY id") == before


@pytest.mark.parametrize("caller", CALLERS + [EDITOR])
@pytest.mark.parametrize("kind", sorted(VALUE_ID_REQUESTS))
def test_values_of_hidden_products_by_id_answer_like_missing_ones(client, world, caller, kind):
    hidden = {"component": world["product"]["components"]["General"],
              "version": world["version"], "milestone": world["milestone"]}[kind]
    status, text = assert_alike(client, world["keys"][caller], VALUE_ID_REQUESTS[kind], hidden,
                                9999)
    if caller == EDITOR:
        assert status == 404 and HIDDEN_PRODUCT not in text


# Groups -----------------------------------------------------------------------------

GROUP_REQUESTS = {
    "get names": lambda w, x: ("GET", "/rest/group", None, {"names": x}),
    "get path": lambda w, x: ("GET", f"/rest/group/{x}", None, None),
    "update": lambda w, x: ("PUT", f"/rest/group/{x}", {"description": "d"}, None),
    "users in group": lambda w, x: ("GET", "/rest/user", None, {"match": "example", "groups": x}),
    "grant membership": lambda w, x: ("PUT", f"/rest/user/{PLAIN}", {"groups": {"add": [x]}},
                                      None),
}
GROUP_ID_REQUESTS = {
    "get ids": lambda w, x: ("GET", "/rest/group", None, {"ids": x}),
    "get path": lambda w, x: ("GET", f"/rest/group/{x}", None, None),
    "update": lambda w, x: ("PUT", f"/rest/group/{x}", {"description": "d"}, None),
    "users in group": lambda w, x: ("GET", "/rest/user", None, {"match": "example",
                                                                "group_ids": x}),
}


@pytest.mark.parametrize("caller", ["anonymous", PLAIN, BLESSER])
@pytest.mark.parametrize("name", sorted(GROUP_REQUESTS))
def test_hidden_and_missing_groups_answer_alike(client, services, world, caller, name):
    before = services.query("SELECT * FROM groups ORDER BY id")
    request = GROUP_REQUESTS[name]
    assert_alike(client, world["keys"][caller], lambda x: request(world, x), HIDDEN_GROUP,
                 MISSING_GROUP)
    assert services.query("SELECT * FROM groups ORDER BY id") == before


@pytest.mark.parametrize("caller", ["anonymous", PLAIN, BLESSER])
@pytest.mark.parametrize("name", sorted(GROUP_ID_REQUESTS))
def test_hidden_and_missing_group_ids_answer_alike(client, world, caller, name):
    request = GROUP_ID_REQUESTS[name]
    assert_alike(client, world["keys"][caller], lambda x: request(world, x), world["vault"], 9999)


def test_a_blesser_still_sees_its_own_group(client, world):
    resp = ask(client, world["keys"][BLESSER], "GET", "/rest/group", query={"names": "team"})
    assert [g["name"] for g in resp.json["groups"]] == ["team"]


# Users ------------------------------------------------------------------------------

@pytest.fixture
def hidden_users(services, world):
    """usevisibilitygroups on and editbugs no longer shared by everyone:
    members of team see team's members (the administrator and PARTIAL);
    STRANGER is in outsiders, which the admin group alone sees."""
    editbugs_only_for_members(services)
    set_param(services, "usevisibilitygroups", "1")
    add_to_group(services, ADMIN, "editbugs")
    add_bug_group(services, "outsiders", members=[STRANGER], with_admin=False)
    grant_visibility(services, "team", "team")
    return world


USER_REQUESTS = {
    "get path": lambda w, x: ("GET", f"/rest/user/{x}", None, None),
    "get names": lambda w, x: ("GET", "/rest/user", None, {"names": x}),
    "match": lambda w, x: ("GET", "/rest/user", None, {"match": x}),
    "update": lambda w, x: ("PUT", f"/rest/user/{x}", {"groups": {"add": ["team"]}}, None),
    "bug cc on create": lambda w, x: ("POST", "/rest/bug", _new_bug(cc=[x]), None),
    "create account": lambda w, x: ("POST", "/rest/user", {"email": x, "password": "pw-123456"},
                                    None),
    "assignee": lambda w, x: ("PUT", f"/rest/bug/{w['public']}", {"assigned_to": x}, None),
    "qa contact": lambda w, x: ("PUT", f"/rest/bug/{w['public']}", {"qa_contact": x}, None),
    "cc": lambda w, x: ("PUT", f"/rest/bug/{w['public']}", {"cc": {"add": [x]}}, None),
    "requestee": lambda w, x: ("PUT", f"/rest/bug/{w['public']}", {"flags": [
        {"name": "review", "status": "?", "requestee": x}]}, None),
    "search assignee": lambda w, x: ("GET", "/rest/bug", None, {"assigned_to": x}),
}


@pytest.mark.parametrize("caller", CALLERS + [BLESSER])
@pytest.mark.parametrize("name", sorted(USER_REQUESTS) + ["jsonrpc get"])
def test_invisible_and_missing_users_answer_alike(client, services, hidden_users, caller, name):
    before = services.query("SELECT bug_id, user_id FROM bug_cc ORDER BY 1, 2")
    key = hidden_users["keys"][caller]
    request = USER_REQUESTS.get(name) or (lambda w, x: rpc("User.get", {"names": [x]}, key))
    status, text = assert_alike(client, key, lambda x: request(hidden_users, x), STRANGER,
                                MISSING_LOGIN)
    if name == "get names" and caller != "anonymous":
        assert status == 401 and '"code": 304' in text
    assert services.query("SELECT bug_id, user_id FROM bug_cc ORDER BY 1, 2") == before


@pytest.mark.parametrize("caller", CALLERS + [BLESSER])
def test_invisible_and_missing_user_ids_answer_alike(client, services, hidden_users, caller):
    stranger = services.query("SELECT id FROM users WHERE login = ?", (STRANGER,))[0][0]
    key = hidden_users["keys"][caller]
    for request in (lambda x: ("GET", "/rest/user", None, {"ids": x}),
                    lambda x: ("GET", f"/rest/user/{x}", None, None)):
        assert_alike(client, key, request, stranger, 99999)


def test_a_visible_account_is_still_found(client, hidden_users):
    resp = ask(client, hidden_users["keys"][PARTIAL], "GET", "/rest/user",
               query={"names": ADMIN})
    assert [u["name"] for u in resp.json["users"]] == [ADMIN]


def test_wrong_password_and_unknown_login_answer_alike(client, services, world):
    services.add_user("disabled@example.com", password="right-password",
                      disabled_text="Gone fishing")
    answers = {login: answer(client.simulate_get("/rest/login", params={
        "login": login, "password": "wrong-password"}), login)
        for login in (PLAIN, MISSING_LOGIN, "disabled@example.com")}
    assert answers[PLAIN] == answers[MISSING_LOGIN] == answers["disabled@example.com"]
    assert answers[PLAIN][0] == 401 and '"code": 300' in answers[PLAIN][1]


# Privileged callers get the truth ---------------------------------------------------

def test_administrator_is_told_the_truth(client, world):
    key = world["keys"][ADMIN]
    resp = ask(client, key, "GET", f"/rest/bug/{MISSING_ID}")
    assert (resp.status_code, resp.json["code"], resp.json["message"]) == (
        404, 101, f"Bug #{MISSING_ID} does not exist.")
    resp = ask(client, key, "GET", f"/rest/bug/{HIDDEN_ALIAS}")
    assert resp.status_code == 200 and resp.json["bugs"][0]["id"] == world["hidden"]
    resp = ask(client, key, "GET", "/rest/bug/comment/99999")
    assert (resp.status_code, resp.json["code"]) == (400, 111)
    resp = ask(client, key, "GET", f"/rest/bug/comment/{world['hidden_comment']}")
    assert resp.json["comments"][str(world["hidden_comment"])]["text"] == "exploit details"
    resp = ask(client, key, "GET", "/rest/bug/attachment/99999")
    assert (resp.status_code, resp.json["attachments"]) == (200, {})
    resp = ask(client, key, "GET", f"/rest/bug/attachment/{world['private_attachment']}")
    assert resp.json["attachments"][str(world["private_attachment"])]["is_private"] is True
    resp = ask(client, key, "PUT", "/rest/bug/attachment/99999", {"summary": "x"})
    assert "does not exist" in resp.json["message"]
    resp = ask(client, key, "GET", f"/rest/product/{HIDDEN_PRODUCT}")
    assert [p["name"] for p in resp.json["products"]] == [HIDDEN_PRODUCT]
    resp = ask(client, key, "GET", "/rest/group", query={"names": MISSING_GROUP})
    assert (resp.status_code, resp.json["code"]) == (404, 51)
    resp = ask(client, key, "PUT", f"/rest/version/{world['version']}", {"sort_key": 3})
    assert resp.status_code == 200


def test_administrator_is_told_missing_users_do_not_exist(client, services, hidden_users):
    """Once every account is a member of a group the admin group sees."""
    key = hidden_users["keys"][ADMIN]
    resp = ask(client, key, "GET", "/rest/user", query={"names": MISSING_LOGIN})
    assert (resp.status_code, resp.json["code"]) == (401, 304)
    for login in (PLAIN, BLESSER):
        add_to_group(services, login, "outsiders")
    resp = ask(client, key, "GET", "/rest/user", query={"names": MISSING_LOGIN})
    assert (resp.status_code, resp.json["code"]) == (404, 51)
    resp = ask(client, key, "GET", "/rest/user", query={"names": STRANGER})
    assert [u["name"] for u in resp.json["users"]] == [STRANGER]


def test_partial_member_sees_its_bugs_by_id_and_alias(client, world):
    key = world["keys"][PARTIAL]
    for value in (world["team_bug"], "team-1"):
        resp = ask(client, key, "GET", f"/rest/bug/{value}")
        assert resp.status_code == 200 and resp.json["bugs"][0]["summary"] == "Team bug"
    resp = ask(client, key, "GET", "/rest/bug", query={"alias": "team-1"})
    assert [b["id"] for b in resp.json["bugs"]] == [world["team_bug"]]
    resp = ask(client, key, "PUT", f"/rest/bug/{world['public']}", {"blocks": {"add": ["team-1"]}})
    assert resp.status_code == 200


def test_who_sees_every_bug_is_computed_not_the_administrator(client, services, world):
    """A plain account in every restricting group is told the truth; the
    administrator, once a bug is restricted to a group it is not in, is not."""
    add_to_group(services, PLAIN, "team")
    add_to_group(services, PLAIN, HIDDEN_GROUP)
    resp = ask(client, world["keys"][PLAIN], "GET", f"/rest/bug/{MISSING_ID}")
    assert (resp.status_code, resp.json["code"]) == (404, 101)
    add_bug_group(services, "outsiders", members=[PLAIN], with_admin=False)
    control(services, services.query("SELECT id FROM groups WHERE name = 'outsiders'")[0][0],
            SHOWN, NA)
    file_bug(services, as_user=PLAIN, groups=["outsiders"])
    resp = ask(client, world["keys"][ADMIN], "GET", f"/rest/bug/{MISSING_ID}")
    assert (resp.status_code, resp.json["code"]) == (401, 102)


def test_without_restricted_bugs_everybody_is_told_the_truth(client, services):
    services.add_user(PLAIN)
    file_bug(services)
    assert client.simulate_get(f"/rest/bug/{MISSING_ID}").json["code"] == 101
