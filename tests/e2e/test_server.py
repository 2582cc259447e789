"""The real server: `python bugsvc.py` as a separate process on a free
loopback port, talked to with urllib, stopped and started again on the same file."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from live_server import ROOT, START_TIMEOUT, access_lines, api_key_for


pytestmark = pytest.mark.slow

ADMIN_EMAIL = "server-admin@example.com"
ADMIN_PASSWORD = "server admin password 7"


def test_real_server_serves_logs_and_keeps_data_across_restart(start, tmp_path):
    db_path = tmp_path / "served.sqlite"
    admin_env = {"BUGSVC_ADMIN_EMAIL": ADMIN_EMAIL, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD}
    server = start(db_path, admin_env)
    secrets = [ADMIN_PASSWORD]

    status, body, headers = server.call("GET", "/rest/version")
    assert (status, body) == (200, {"version": "5.2"})
    assert headers["Content-Type"].startswith("application/json")
    assert server.call("GET", "/rest.cgi/version")[:2] == (200, {"version": "5.2"})

    # The administrator's password works as call credentials ...
    status, body, _ = server.call("GET", "/rest/parameters",
                                  {"Bugzilla_login": ADMIN_EMAIL,
                                   "Bugzilla_password": ADMIN_PASSWORD})
    assert status == 200 and "insidergroup" in body["parameters"]
    # ... and for GET /rest/login, whose token then authenticates a call.
    status, body, _ = server.call("GET", "/rest/login",
                                  {"login": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert status == 200, body
    token = body["token"]
    secrets.append(token.split("-", 1)[1])
    status, body, _ = server.call("GET", "/rest/parameters", {"Bugzilla_token": token})
    assert status == 200 and "insidergroup" in body["parameters"]

    # An API key made by the command line while the server runs.
    key = api_key_for(db_path, ADMIN_EMAIL)
    secrets.append(key)
    status, body, _ = server.call("PUT", "/rest/parameters", {"Bugzilla_api_key": key},
                                  {"maintainer": "keeper@example.com", "usestatuswhiteboard": True})
    assert status == 200
    assert body["parameters"]["maintainer"] == {"added": "keeper@example.com",
                                                "removed": ADMIN_EMAIL}

    # Error answers: the one error object, with the documented codes and statuses.
    wrong_key = "W" * 40
    secrets.append(wrong_key)
    status, body, _ = server.call("GET", "/rest/extensions", {"Bugzilla_api_key": wrong_key})
    assert (status, body["error"], body["code"]) == (400, True, 306)
    status, body, _ = server.call("GET", "/rest/login",
                                  {"login": ADMIN_EMAIL, "password": "wrong " + ADMIN_PASSWORD})
    assert (status, body["code"]) == (401, 300)
    status, body, _ = server.call("GET", "/rest/no_such_call")
    assert (status, body["code"]) == (404, 32614)

    exit_status, stdout, stderr = server.stop()
    assert exit_status == 0
    assert f"serving http://127.0.0.1:{server.port}/rest" in stdout
    assert f"Documentation: http://127.0.0.1:{server.port}/rest/docs" in stdout
    assert f"Web pages: http://127.0.0.1:{server.port}/" in stdout
    assert f"Created the administrator {ADMIN_EMAIL}." in stdout
    assert "shown only this once" not in stdout          # the password was given, not generated
    lines = access_lines(stderr)
    assert len(lines) == server.requests
    assert '"GET /rest/version" 200' in lines[0]
    assert '"GET /rest/no_such_call" 404' in lines[-1]
    assert any('"PUT /rest/parameters?Bugzilla_api_key=[hidden]" 200' in line for line in lines)
    for secret in secrets:
        assert secret not in stdout and secret not in stderr
        assert urllib.parse.quote_plus(secret) not in stderr
    assert "Traceback" not in stderr

    # Restart on the same file: everything is still there, no new administrator.
    again = start(db_path, {"BUGSVC_ADMIN_PASSWORD": "a different password"})
    status, body, _ = again.call("GET", "/rest/parameters", {"Bugzilla_api_key": key})
    assert status == 200
    assert body["parameters"]["maintainer"] == "keeper@example.com"
    assert body["parameters"]["usestatuswhiteboard"] == "1"
    status, body, _ = again.call("GET", "/rest/parameters",
                                 {"Bugzilla_login": ADMIN_EMAIL,
                                  "Bugzilla_password": ADMIN_PASSWORD})
    assert status == 200
    status, body, _ = again.call("GET", "/rest/parameters",
                                 {"Bugzilla_login": ADMIN_EMAIL,
                                  "Bugzilla_password": "a different password"})
    assert (status, body["code"]) == (401, 300)
    exit_status, stdout, stderr = again.stop()
    assert exit_status == 0
    assert "Created the administrator" not in stdout and "password" not in stdout
    assert len(access_lines(stderr)) == again.requests


def test_generated_password_is_printed_once_and_logs_in(start, tmp_path):
    db_path = tmp_path / "generated.sqlite"
    server = start(db_path)
    _, stdout, _ = server.stop()
    prefix = "Its password, shown only this once: "
    lines = [line for line in stdout.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1 and "Created the administrator admin@example.com." in stdout
    password = lines[0][len(prefix):]

    again = start(db_path)
    status, body, _ = again.call("GET", "/rest/parameters",
                                 {"Bugzilla_login": "admin@example.com",
                                  "Bugzilla_password": password})
    assert status == 200 and "insidergroup" in body["parameters"]
    exit_status, stdout, stderr = again.stop()
    assert exit_status == 0 and prefix not in stdout
    assert password not in stderr


def test_port_in_use_is_reported_without_traceback(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), "--port", str(port),
                               "--db", str(tmp_path / "x.sqlite")],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path,
                              env={**os.environ, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD})
    assert done.returncode == 2
    assert done.stderr.startswith("bugsvc: ") and "Traceback" not in done.stderr


def console_command():
    beside_python = Path(sys.executable).parent / "bugsvc"
    if beside_python.exists():
        return str(beside_python)
    return shutil.which("bugsvc")


@pytest.mark.skipif(console_command() is None, reason="the bugsvc console command is not installed")
def test_console_command_serves_like_the_script(start, tmp_path):
    server = start(tmp_path / "console.sqlite", {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD},
                   command=[console_command()], name="console")
    assert server.call("GET", "/rest/version")[:2] == (200, {"version": "5.2"})
    status, body, _ = server.call("GET", "/rest/parameters", {"Bugzilla_login": "admin@example.com",
                                                              "Bugzilla_password": ADMIN_PASSWORD})
    assert status == 200 and "insidergroup" in body["parameters"]
    exit_status, stdout, stderr = server.stop()
    assert exit_status == 0 and f"/rest (database {tmp_path / 'console.sqlite'})" in stdout
    assert len(access_lines(stderr)) == 2 and ADMIN_PASSWORD not in stderr


def test_port_zero_picks_a_free_port_and_prints_it(tmp_path):
    out_path = tmp_path / "zero.out"
    with open(out_path, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "bugsvc.py"), "--port", "0",
             "--db", str(tmp_path / "z.sqlite")],
            cwd=tmp_path, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env={**os.environ, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + START_TIMEOUT
        match = None
        while match is None and time.monotonic() < deadline and process.poll() is None:
            match = re.search(r"serving (http://127\.0\.0\.1:(\d+)/rest) ", out_path.read_text())
            if match is None:
                time.sleep(0.05)
        assert match, out_path.read_text()
        assert int(match.group(2)) > 0
        with urllib.request.urlopen(match.group(1) + "/version", timeout=10) as response:
            assert json.loads(response.read()) == {"version": "5.2"}
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0


def _forwarded_calls(server):
    """A REST call and the login page, each with X-Forwarded-For and
    X-Forwarded-Proto, then the server stopped (its log is complete);
    returns (the REST call's access line, the visit cookie's header)."""
    forwarded = {"X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https"}
    assert server.call("GET", "/rest/version", headers=forwarded)[0] == 200
    request = urllib.request.Request(server.url + "/login", headers=forwarded)
    with urllib.request.urlopen(request, timeout=30) as response:
        cookie = response.headers["Set-Cookie"]
    _, _, stderr = server.stop()
    return access_lines(stderr)[0], cookie


def test_a_trusted_proxys_forwarded_headers_pass_through_waitress(start, tmp_path):
    # waitress, left to itself, drops every X-Forwarded-* header before the
    # app sees it; the app decides whom to believe.
    env = {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD, "BUGSVC_TRUSTED_PROXIES": "127.0.0.1"}
    line, cookie = _forwarded_calls(start(tmp_path / "proxied.sqlite", env))
    assert " bugsvc.access 198.51.100.7 " in line
    assert "Secure" in cookie.split("; ")
    # From anyone else the same headers are not believed.
    line, cookie = _forwarded_calls(start(tmp_path / "direct.sqlite",
                                          {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD}))
    assert " bugsvc.access 127.0.0.1 " in line
    assert "Secure" not in cookie.split("; ")
