"""Real-server helpers shared by the end-to-end tests: `python bugsvc.py` as
a separate process on a free loopback port, a urllib caller, a keep-alive
client for load tests, and the `start` fixture that stops what it started."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60     # generous: CI machines can be slow to start Python
OTHER_ADDRESS = "127.0.0.2"    # another client: Linux routes all of 127.0.0.0/8 to loopback


def _other_client_can_connect():
    try:
        with socket.create_connection(("127.0.0.1", 9), timeout=1,
                                      source_address=(OTHER_ADDRESS, 0)):
            pass
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return True


needs_second_loopback = pytest.mark.skipif(not _other_client_can_connect(),
                                           reason=f"{OTHER_ADDRESS} is not a loopback address here")


# The start-up line of `python bugsvc.py`, naming the port it listens on.
_SERVING = re.compile(r" serving http://127\.0\.0\.1:(\d+)/rest ")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process, timeout=15):
    """End `process` (SIGTERM, then SIGKILL after `timeout` seconds); returns
    its exit status."""
    if process.poll() is None:
        process.terminate()
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout)


class Server:
    """One server process; its stdout and stderr go to files in `workdir`.
    It listens on a port the system picks (--port 0) and names in its
    start-up line, so servers started at once (pytest-xdist's workers) never
    race for a port."""

    def __init__(self, command, db_path, workdir, env_extra=None, name="server"):
        self.port = None
        self.url = None
        self.out_path = workdir / f"{name}.out"
        self.err_path = workdir / f"{name}.err"
        env = {key: value for key, value in os.environ.items() if not key.startswith("BUGSVC_")}
        env.update(env_extra or {})
        env["PYTHONUNBUFFERED"] = "1"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen(
                command + ["--port", "0", "--db", str(db_path)],
                cwd=workdir, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        self.requests = 0
        self._wait_until_listening()

    def _wait_until_listening(self):
        """Wait for the start-up line naming the port, then for a bare TCP
        connection (not an HTTP request: it leaves no access line)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited with {self.process.returncode}:\n"
                                     + self.err_path.read_text())
            if self.port is None:
                serving = _SERVING.search(self.out_path.read_text(errors="replace"))
                if serving is None:
                    time.sleep(0.05)
                    continue
                self.port = int(serving.group(1))
                self.url = f"http://127.0.0.1:{self.port}"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError("server did not start listening within "
                             f"{START_TIMEOUT}s:\n{self.err_path.read_text()}")

    def call(self, method, path, query=None, body=None, headers=None):
        """Returns (status, JSON body, response headers)."""
        url = self.url + path + ("?" + urllib.parse.urlencode(query, doseq=True) if query else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json",
                                                  **(headers or {})})
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read()), response.headers
        except urllib.error.HTTPError as error:
            with error:
                return error.code, json.loads(error.read()), error.headers

    def client(self, api_key=None, timeout=30):
        """A new keep-alive Client of this server."""
        return Client(self.port, api_key, timeout)

    def stop(self):
        """Ask the server to stop (SIGTERM); returns (exit status, stdout, stderr)."""
        status = stop_process(self.process)
        return status, self.out_path.read_text(), self.err_path.read_text()

    def kill(self):
        """End the server at once (SIGKILL: no cleanup of any kind)."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        return self.process.wait(timeout=15)


class Client:
    """One keep-alive HTTP connection (http.client), for many calls in a row.

    call() returns (status, decoded JSON body); a connection that fails is
    reopened on the next call, and the failure (OSError or
    http.client.HTTPException) is raised to the caller.
    """

    def __init__(self, port, api_key=None, timeout=30):
        self.port = port
        self.api_key = api_key
        self.timeout = timeout
        self._conn = None

    def call(self, method, path, query=None, body=None):
        query = dict(query or {})
        if self.api_key:
            query["Bugzilla_api_key"] = self.api_key
        target = path + ("?" + urllib.parse.urlencode(query, doseq=True) if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if self._conn is None:
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            self._conn.request(method, target, body=data, headers=headers)
            response = self._conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, json.loads(raw) if raw else None

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@pytest.fixture
def start(tmp_path):
    """start(db_path, env_extra=None, command=None, name="server") -> Server;
    every server started is stopped when the test ends."""
    started = []

    def start_server(db_path, env_extra=None, command=None, name="server"):
        command = command or [sys.executable, str(ROOT / "bugsvc.py")]
        server = Server(command, db_path, tmp_path, env_extra, f"{name}{len(started)}")
        started.append(server)
        return server

    yield start_server
    for server in started:
        server.stop()


def access_lines(stderr):
    return [line for line in stderr.splitlines() if " bugsvc.access " in line]


def run_cli(*args, timeout=60):
    """`python bugsvc.py ARGS...` to the end; returns the CompletedProcess."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("BUGSVC_")}
    return subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def api_key_for(db_path, email):
    done = run_cli("--db", db_path, "api-key", email, "--description", "server test")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
