"""The MCP endpoint at /mcp, driven by the official MCP SDK's client (pip
package `mcp`) over HTTP against a real server, in both eras of the
protocol it speaks (the 2026-07-28 envelope it discovers, and the
`initialize` handshake); and its edges over falcon's test client.

The privacy tests prove that a bug hidden by its group, a private comment
and a private attachment reach no caller who may not see them (anonymous, a
plain account), while the insider who may sees them all, and that the
tools that write are offered only when `mcp_allow_write` is on, to a caller
with a key, with that caller's rights."""

import asyncio
import json

import pytest

from bug_rows import (
    ADMIN,
    add_attachment,
    add_bug,
    add_comment,
    add_group,
    set_param,
    user_id,
)
from live_server import access_lines


mcp_client = pytest.importorskip("mcp.client.client")
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402


PLAIN = "plain@example.com"
INSIDER = "insider@example.com"
SECRET_SUMMARY = "Vault combination leaks"
PRIVATE_COMMENT = "The staging password is hunter2"
PRIVATE_ATTACHMENT = "core dump with customer data"
READ_TOOLS = {"search_bugs", "get_bug", "list_products", "list_fields"}
WRITE_TOOLS = {"create_bug", "add_comment", "update_bug", "set_flags"}


@pytest.fixture
def world(services):
    """A public bug with a public and a private comment and a public and a
    private attachment; a bug in the secret group (the insider and the
    administrator are members); insidergroup 'insiders'. Returns the ids."""
    services.add_user(PLAIN, real_name="Plain")
    services.add_user(INSIDER, real_name="Insider")
    add_group(services, "insiders", members=[INSIDER, ADMIN])
    add_group(services, "secret", members=[INSIDER, ADMIN])
    set_param(services, "insidergroup", "insiders")
    public = add_bug(services, summary="Printer catches fire", reporter=PLAIN,
                     description="Smoke everywhere.")
    add_comment(services, public, ADMIN, "A public reply")
    add_comment(services, public, INSIDER, PRIVATE_COMMENT, is_private=True)
    add_attachment(services, public, "screenshot of the smoke")
    add_attachment(services, public, PRIVATE_ATTACHMENT, is_private=True)
    hidden = add_bug(services, summary=SECRET_SUMMARY, groups=["secret"],
                     description="The combination is 12-34-56.")
    return {"public": public, "hidden": hidden,
            "keys": {login: services.api_key(login) for login in (PLAIN, INSIDER, ADMIN)}}


@pytest.fixture
def server(start, db_path, world):
    return start(db_path)


def session(url, key=None, mode="auto", bearer=False):
    """Run `work(client)` with an SDK client of the server's /mcp."""
    headers = {}
    if key:
        headers = {"Authorization": f"Bearer {key}"} if bearer else {"X-BUGZILLA-API-KEY": key}

    def run(work):
        async def main():
            async with create_mcp_http_client(headers=headers) as http:
                transport = streamable_http_client(url + "/mcp", http_client=http,
                                                   terminate_on_close=False)
                async with mcp_client.Client(transport, mode=mode) as client:
                    return await work(client)
        try:
            return asyncio.run(main())
        except BaseExceptionGroup as group:        # the client's task group wraps its errors
            error = group
            while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]
            raise error from None
    return run


async def _tools(client):
    return {tool.name: tool for tool in (await client.list_tools()).tools}


def _call(name, **arguments):
    async def work(client):
        result = await client.call_tool(name, arguments)
        text = "".join(block.text for block in result.content)
        return result.is_error, result.structured_content, text
    return work


def _everything_seen(run, world):
    """Every text a caller gets from the read tools about the two bugs."""
    seen = []
    for work in (_call("search_bugs", summary="Printer"), _call("search_bugs", summary="Vault"),
                 _call("search_bugs", query="combination"),
                 _call("get_bug", id=world["public"], include_history=True),
                 _call("get_bug", id=world["hidden"], include_history=True)):
        seen.append(run(work))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_reads_bugs_as_the_api_would(server, world, mode):
    run = session(server.url, world["keys"][PLAIN], mode)

    async def handshake(client):
        return client.protocol_version, client.server_info.name, set(await _tools(client))
    version, name, tools = run(handshake)
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert name == "bugsvc" and tools == READ_TOOLS      # writing is off by default
    failed, answer, text = run(_call("search_bugs", summary="Printer"))
    assert not failed and [bug["id"] for bug in answer["bugs"]] == [world["public"]]
    assert json.loads(text) == answer
    failed, answer, _ = run(_call("get_bug", id=world["public"]))
    bug = answer["bug"]
    assert bug["summary"] == "Printer catches fire" and bug["comment_count"] == 2
    assert [c["text"] for c in bug["comments"]] == ["Smoke everywhere.", "A public reply"]
    failed, answer, _ = run(_call("list_products"))
    assert [p["name"] for p in answer["products"]] == ["TestProduct"]
    failed, answer, _ = run(_call("list_fields", names=["bug_status"]))
    assert "RESOLVED" in answer["fields"][0]["values"]
    failed, _, text = run(_call("get_bug", id=999999))     # as REST answers it
    status, rest, _ = server.call("GET", "/rest/bug/999999",
                                  {"Bugzilla_api_key": world["keys"][PLAIN]})
    assert failed and text == f"Error {rest['code']}: {rest['message']}"


@pytest.mark.slow
@pytest.mark.parametrize("who", ["anonymous", PLAIN])
def test_hidden_bugs_private_comments_and_attachments_never_reach_others(server, world, who):
    key = None if who == "anonymous" else world["keys"][who]
    seen = _everything_seen(session(server.url, key), world)
    every_text = json.dumps([entry[1:] for entry in seen])
    for secret in (SECRET_SUMMARY, "12-34-56", PRIVATE_COMMENT, PRIVATE_ATTACHMENT):
        assert secret not in every_text
    failed, _, text = seen[4]                       # get_bug of the hidden bug
    assert failed and text.startswith("Error 102:")
    failed, answer, _ = seen[3]                     # the public bug: the rest is there
    assert not failed and answer["bug"]["comment_count"] == 2
    assert [a["summary"] for a in answer["bug"]["attachments"]] == ["screenshot of the smoke"]


@pytest.mark.slow
def test_the_insider_sees_what_others_may_not(server, world):
    # Bearer is the other way to give the key.
    seen = _everything_seen(session(server.url, world["keys"][INSIDER], bearer=True), world)
    every_text = json.dumps([entry[1:] for entry in seen])
    for secret in (SECRET_SUMMARY, "12-34-56", PRIVATE_COMMENT, PRIVATE_ATTACHMENT):
        assert secret in every_text


@pytest.mark.slow
def test_writing_needs_the_parameter_a_key_and_the_callers_rights(server, world, services):
    plain = session(server.url, world["keys"][PLAIN])
    with pytest.raises(MCPError, match="Unknown tool"):
        plain(_call("add_comment", id=world["public"], comment="Let me in"))
    status, _, _ = server.call("PUT", "/rest/parameters", {"Bugzilla_api_key":
                                                           world["keys"][ADMIN]},
                               {"mcp_allow_write": True})
    assert status == 200
    assert set(plain(_tools)) == READ_TOOLS | WRITE_TOOLS
    assert set(session(server.url)(_tools)) == READ_TOOLS       # anonymous: never
    failed, answer, _ = plain(_call("add_comment", id=world["public"], comment="Me too"))
    assert not failed and answer["id"]
    # With the caller's rights only: not a private comment, not the hidden bug.
    failed, _, text = plain(_call("add_comment", id=world["public"], comment="psst",
                                  is_private=True))
    assert failed and text.startswith("Error 113:")
    failed, _, text = plain(_call("update_bug", id=world["hidden"], summary="Mine now"))
    assert failed and text.startswith("Error 102:")
    with pytest.raises(MCPError, match="Unknown tool"):
        session(server.url)(_call("add_comment", id=world["public"], comment="anon"))
    failed, answer, text = plain(_call("create_bug", product="TestProduct",
                                       component="TestComponent", version="unspecified",
                                       op_sys="All", platform="All",
                                       summary="Filed by an assistant", description="Hello"))
    assert not failed, text
    rows = services.query("SELECT summary, reporter FROM bugs WHERE id = ?", (answer["id"],))
    assert rows == [("Filed by an assistant", user_id(services, PLAIN))]
    texts = [row[0] for row in services.query(
        "SELECT body FROM comments WHERE bug_id = ? ORDER BY count", (world["public"],))]
    assert texts.count("Me too") == 1 and "psst" not in texts and "anon" not in texts
    assert services.query("SELECT summary FROM bugs WHERE id = ?",
                          (world["hidden"],)) == [(SECRET_SUMMARY,)]


@pytest.mark.slow
def test_a_refused_key_the_rate_limit_and_the_log(start, db_path, world):
    server = start(db_path, {"BUGSVC_RATE_LIMIT_ANONYMOUS": "3/day"})
    with pytest.raises(MCPError) as refused:
        session(server.url, "not-a-key")(_tools)
    assert "API key" in str(refused.value)
    anonymous = session(server.url)
    assert anonymous(_call("list_fields", names=["priority"]))[0] is False
    assert anonymous(_call("list_fields", names=["priority"]))[0] is False
    assert anonymous(_call("get_bug", id=world["public"]))[0] is False
    with pytest.raises(MCPError, match="Too many calls"):
        anonymous(_call("list_fields", names=["priority"]))
    _, _, stderr = server.stop()
    lines = [line for line in stderr.splitlines() if " bugsvc.web.mcp " in line]
    assert any("MCP tools/call get_bug -> Bug.get,Bug.comments,Bug.attachments ok" in line
               for line in lines)
    assert any("MCP tools/call list_fields -> Bug.fields error -32000" in line for line in lines)
    assert all("not-a-key" not in line for line in stderr.splitlines())
    assert any('"POST /mcp' in line for line in access_lines(stderr))


# The transport's edges, over falcon's test client ------------------------------------

def _post(client, message, headers=None):
    return client.simulate_post("/mcp", json=message, headers=headers or {})


def _request(method, params=None, request_id=1):
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


def test_notifications_get_202_and_no_stream_is_offered(client):
    answer = _post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert answer.status_code == 202 and answer.content == b""
    for verb in (client.simulate_get, client.simulate_delete):
        answer = verb("/mcp")
        assert answer.status_code == 405 and answer.headers["Allow"] == "POST"


@pytest.mark.parametrize("body, status, code", [
    (b"{not json", 400, -32700),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', 400, -32600),
    (b'{"id": 1, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}', 200, -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}',
     200, -32602),
])
def test_bad_messages_get_json_rpc_errors(client, body, status, code):
    answer = client.simulate_post("/mcp", body=body,
                                  headers={"Content-Type": "application/json"})
    assert answer.status_code == status and answer.json["error"]["code"] == code


def test_versions_headers_and_origin(client):
    answer = _post(client, _request("initialize", {"protocolVersion": "2025-06-18"}))
    assert answer.json["result"]["protocolVersion"] == "2025-06-18"
    answer = _post(client, _request("initialize", {"protocolVersion": "1999-01-01"}))
    assert answer.json["result"]["protocolVersion"] == "2025-11-25"
    answer = _post(client, _request("ping"), {"MCP-Protocol-Version": "1999-01-01"})
    assert answer.status_code == 400 and answer.json["error"]["code"] == -32022
    assert "2026-07-28" in answer.json["error"]["data"]["supported"]
    answer = _post(client, _request("ping"), {"Mcp-Method": "tools/list"})
    assert answer.status_code == 400 and answer.json["error"]["code"] == -32020
    answer = _post(client, _request("server/discover", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}))
    assert answer.json["result"]["supportedVersions"][-1] == "2026-07-28"
    answer = _post(client, _request("ping"), {"Origin": "http://evil.example"})
    assert answer.status_code == 403
    assert _post(client, _request("ping"), {"Origin": "http://falconframework.org"}
                 ).status_code == 200


def test_the_endpoint_can_be_turned_off(client, services):
    set_param(services, "mcp_enabled", "0")
    answer = _post(client, _request("tools/list"))
    assert answer.status_code == 404 and "mcp_enabled" in answer.json["error"]["message"]


def test_answers_stay_bounded(client, services):
    bug_id = add_bug(services, summary="Chatty", description="x" * 50_000)
    for number in range(60):
        add_comment(services, bug_id, ADMIN, f"comment {number} " + "y" * 5_000)
    answer = _post(client, _request("tools/call", {"name": "get_bug", "arguments": {
        "id": bug_id, "comment_limit": 200}}))
    assert len(answer.content) < 2 * 100_000 + 10_000       # structured and text copies
    result = answer.json["result"]
    bug = result["structuredContent"]["bug"]
    assert bug["comment_count"] == 61 and len(bug["comments"]) < 61
    assert "more characters left out" in bug["comments"][0]["text"]
    assert "truncated" in result["structuredContent"]
    answer = _post(client, _request("tools/call", {"name": "get_bug", "arguments": {
        "id": bug_id, "comment_limit": 5, "comment_offset": 10}}))
    bug = answer.json["result"]["structuredContent"]["bug"]
    assert [c["text"].split()[:2] for c in bug["comments"]] == [["comment", str(n)]
                                                                for n in range(9, 14)]
    assert "comment_offset 15" in bug["more_comments"]


def test_bad_arguments_are_the_tools_errors(client):
    for name, arguments in (("search_bugs", {}), ("search_bugs", {"limit": -1, "query": "a"}),
                            ("get_bug", {"id": None}), ("list_fields", {"names": [1]})):
        answer = _post(client, _request("tools/call", {"name": name, "arguments": arguments}))
        assert answer.status_code == 200 and answer.json["result"]["isError"] is True
