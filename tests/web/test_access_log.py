"""The access log never shows a credential in clear: API keys, passwords,
login tokens, the tokens of mailed links (token.cgi?t=...) and signed
attachment links (attachment.cgi?...&t=...), on every path, in any
spelling of the parameter's name, over REST, RPC, the pages and the
attachment origin; waitress's own refusals log the path alone."""

import logging
import urllib.parse

import pytest

from bug_support import set_param
from bugsvc.web import http
from bugsvc.web.http import redacted


SECRET = "s3cr3t-VALUE-9f8e7d"


@pytest.fixture
def access_lines(caplog):
    caplog.set_level(logging.INFO, logger="bugsvc.access")

    def lines():
        return [record.getMessage() for record in caplog.records
                if record.name == "bugsvc.access"]
    return lines


@pytest.mark.parametrize("query", [
    f"t={SECRET}&a=cfmpw",                                 # password link
    f"a=request_new_account&t={SECRET}",                   # account link
    f"Bugzilla_api_key={SECRET}", f"API_KEY={SECRET}", f"Service_Api_Key={SECRET}",
    f"Bugzilla_password={SECRET}", f"password={SECRET}", f"Bugzilla_token={SECRET}",
    f"token={SECRET}", f"Bugzilla%5Fapi%5Fkey={SECRET}", f"%74={SECRET}",
    f"id=1&t={SECRET}", f"T={SECRET}", f"secret={SECRET}", f"new_password={SECRET}",
    f"current_password={SECRET}",
])
def test_credentials_are_hidden(query):
    logged = redacted(query)
    assert SECRET not in logged and "[hidden]" in logged


def test_other_parameters_stay_readable():
    assert redacted("id=12&product=TestProduct&a=cfmpw") == "?id=12&product=TestProduct&a=cfmpw"


@pytest.mark.parametrize("path", ["/token.cgi", "/rest/bug", "/xmlrpc.cgi", "/jsonrpc.cgi",
                                  "/attachment.cgi", "/show_bug.cgi", "/nowhere"])
def test_every_path_logs_hidden_values(client, access_lines, path):
    client.simulate_get(path, query_string=f"t={SECRET}&a=cfmpw&id=1&Bugzilla_api_key={SECRET}"
                                           f"&password={SECRET}")
    lines = access_lines()
    assert lines and all(SECRET not in line for line in lines)
    assert any(f"{path}?t=[hidden]" in line for line in lines)


def test_signed_attachment_links_on_the_attachment_origin(client, services, access_lines):
    set_param(services, "attachment_base", "https://files.example.com/")
    client.simulate_get("/attachment.cgi", host="files.example.com",
                        query_string=f"id=1&t=1-2-{SECRET}")
    lines = access_lines()
    assert lines and all(SECRET not in line for line in lines)
    assert any("t=[hidden]" in line for line in lines)


@pytest.mark.slow
def test_waitress_refusals_log_the_path_alone(start, tmp_path):
    import socket
    server = start(tmp_path / "log.sqlite")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        target = "/token.cgi?" + urllib.parse.urlencode({"t": SECRET})
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n".encode())
        assert sock.recv(1000).startswith(b"HTTP/1.1 400")
    _, _, err = server.stop()
    assert SECRET not in err


def test_a_long_query_string_is_logged_in_part_with_what_was_left_out():
    query = f"Bugzilla_api_key={SECRET}&" + "&".join(f"f{n}=short_desc" for n in range(3000))
    logged = redacted(query)
    assert SECRET not in logged and logged.startswith("?Bugzilla_api_key=[hidden]&f0=short_desc")
    shown, left_out = logged[1:].rsplit("&", 1)
    original = shown.replace("[hidden]", SECRET) + "&"          # whole parameters, as sent
    assert query.startswith(original)
    assert http.LOGGED_QUERY_CHARS <= len(original) < http.LOGGED_QUERY_CHARS + 20
    assert left_out == f"[{len(query) - len(original)} more characters]"
