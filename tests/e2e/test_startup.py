"""Start-up as a newcomer meets it, through the real entry script
(`python bugsvc.py` in a subprocess): settings that cannot work are refused
at once with a message and exit status 2, and nothing is created or printed
that would then be useless (a database, a one-time password).

Read-only files and directories: when the tests run as a normal user, file
modes make them read-only. Root ignores file modes (and could really write
such a file, so the server rightly accepts it); as root these tests make the
path immutable with `chattr +i`, which stops root's writes too, and skip
where the file system does not support that.
"""

import io
import os
import socket
import subprocess
import sys
from contextlib import contextmanager

import pytest

from bugsvc.config import Config
from bugsvc.serving.server import prepare_database
from live_server import ROOT, START_TIMEOUT


pytestmark = pytest.mark.slow

ADMIN_PASSWORD = "startup admin password"


def run_bugsvc(*args, cwd, timeout=START_TIMEOUT):
    """`python bugsvc.py ARGS` to its end (a server that starts serving runs
    into the timeout, which fails the test)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("BUGSVC_")}
    env["BUGSVC_ADMIN_PASSWORD"] = ADMIN_PASSWORD
    return subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def refused(done):
    """The one-line refusal of a start that cannot work."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("bugsvc: ") and "Traceback" not in done.stderr
    assert "serving" not in done.stdout and "password" not in done.stdout
    return done.stderr


@contextmanager
def unwritable(path):
    """Make the file or directory `path` unwritable for the server process."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    try:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("running as root without chattr: no way to make a path unwritable for root")
    if done.returncode != 0:
        pytest.skip(f"running as root and chattr +i fails here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def make_database(tmp_path):
    """An installed database in its own directory."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "bugsvc.sqlite"
    prepare_database(Config(database=str(path), admin_password=ADMIN_PASSWORD),
                     io.StringIO()).close()
    return path


# The database location -----------------------------------------------------------------

def test_a_read_only_database_file_is_refused(tmp_path):
    path = make_database(tmp_path)
    with unwritable(path):
        message = refused(run_bugsvc("--db", path, "--port", "0", cwd=tmp_path))
    assert f"cannot use the database {path}: {path} is read-only" in message
    assert "make it writable, or choose another file with --db" in message


def test_a_read_only_database_directory_is_refused(tmp_path):
    path = make_database(tmp_path)
    with unwritable(path.parent):
        message = refused(run_bugsvc("--db", path, "--port", "0", cwd=tmp_path))
        fresh = refused(run_bugsvc("--db", path.parent / "new.sqlite", "--port", "0",
                                   cwd=tmp_path))
    assert f"the directory {path.parent} is read-only" in message
    assert f"the directory {path.parent} is read-only" in fresh
    assert not (path.parent / "new.sqlite").exists()


def test_a_missing_directory_is_named(tmp_path):
    path = tmp_path / "no" / "such" / "place" / "bugsvc.sqlite"
    message = refused(run_bugsvc("--db", path, "--port", "0", cwd=tmp_path))
    assert f"the directory {path.parent} does not exist" in message
    assert not (tmp_path / "no").exists()


def test_a_directory_given_as_the_database_is_refused(tmp_path):
    message = refused(run_bugsvc("--db", tmp_path, "--port", "0", cwd=tmp_path))
    assert f"cannot use the database {tmp_path}: it is a directory" in message


# The address ---------------------------------------------------------------------------

def test_a_port_in_use_is_refused_before_a_database_is_created(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env_db = tmp_path / "never.sqlite"
        message = refused(run_bugsvc("--db", env_db, "--port", port, cwd=tmp_path))
    assert message.startswith(f"bugsvc: cannot listen on 127.0.0.1:{port}: the address is "
                              "already in use")
    assert list(tmp_path.iterdir()) == []        # no database, no -wal, nothing


# Commands that work on an existing database ---------------------------------------------

@pytest.mark.parametrize("command", [
    ["api-key", "admin@example.com"],
    ["parameters"],
    ["parameters", "requirelogin=1"],
    ["backup", "copy.sqlite"],
])
def test_commands_never_create_a_database(tmp_path, command):
    missing = tmp_path / "missing.sqlite"
    message = refused(run_bugsvc("--db", missing, *command, cwd=tmp_path))
    assert message.startswith(f"bugsvc: there is no database at {missing} (the file does not "
                              "exist). This command works on an existing database and never "
                              "creates one")
    assert list(tmp_path.iterdir()) == []
    missing.touch()                          # an empty file is no database either
    assert "(the file is empty)" in refused(run_bugsvc("--db", missing, *command, cwd=tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["missing.sqlite"]
    assert missing.stat().st_size == 0


@pytest.mark.parametrize("command, options", [
    ("api-key", {"--db", "--description"}),
    ("parameters", {"--db"}),
    ("backup", {"--db"}),
])
def test_help_of_a_command_lists_only_the_options_it_uses(tmp_path, command, options):
    done = run_bugsvc(command, "--help", cwd=tmp_path)
    assert done.returncode == 0
    listed = {word.rstrip(",") for word in done.stdout.split() if word.startswith("--")}
    assert listed == options | {"--help"}


def test_serve_help_still_lists_every_serving_option(tmp_path):
    done = run_bugsvc("--help", cwd=tmp_path)
    for option in ("--host", "--port", "--db", "--admin-email", "--admin-password",
                   "--workers", "--threads"):
        assert option in done.stdout


# Workers ---------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_more_workers_than_cores_is_said_at_start(start, tmp_path):
    # The server runs on one core only, as `taskset -c N` would run it.
    one_core = ("import os, runpy, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))});"
                f"sys.argv[0] = {str(ROOT / 'bugsvc.py')!r};"
                "runpy.run_path(sys.argv[0], run_name='__main__')")
    server = start(tmp_path / "w.sqlite", {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD},
                   command=[sys.executable, "-c", one_core, "--workers", "2"])
    assert server.call("GET", "/rest/version")[0] == 200
    status, stdout, _ = server.stop()
    assert status == 0
    assert ("bugsvc: warning: --workers 2 is more than the 1 core this process may use; the "
            "extra workers share cores and add no speed") in stdout
    assert "2 workers" in stdout                 # said, not refused


def test_as_many_workers_as_cores_start_without_a_warning(start, tmp_path):
    server = start(tmp_path / "w.sqlite", {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD})
    status, stdout, _ = server.stop()
    assert status == 0 and "warning" not in stdout
