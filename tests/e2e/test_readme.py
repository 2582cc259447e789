"""The examples of the README and of docs/*.md run, in order, on a fresh
installation, so they cannot rot.

A real server (`python bugsvc.py`) starts on a free loopback port with a new
database in a new directory, which is also the examples' working directory.
Then every block of README.md marked ```sh runs with bash, and the ```python
block with Python, in the order they appear, followed by the blocks of each
document in docs/ (in the order of their names), the same way, in one bash
script (so shell variables such as KEY, made by the README's First steps,
carry over to the documents' examples), with these substitutions:

- `127.0.0.1:8000` becomes the test server's address;
- `'<password>'` becomes the administrator's password the server printed;
- `"<api key>"` (in Python) becomes the KEY the shell examples made;
- `python bugsvc.py` becomes this checkout's bugsvc.py run by this Python.

`curl` is a shell function around the real curl that records each answer's
HTTP status and stops the script at the first error answer (status 400 and
up, or an error object). Blocks marked ```shell (installing, testing,
benchmarks), ```text (sample output) and ```yaml (other programs' settings)
are not run.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from live_server import ROOT, Client


README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
LANGUAGES = {"sh", "python", "shell", "text", "yaml"}
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
_PYTHON_BLOCK_END = "README_PYTHON_BLOCK"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (shutil.which("bash") and shutil.which("curl")),
                                 reason="needs bash and curl")]

CURL_WRAPPER = r"""
curl() {
    local body status
    body=$(mktemp)
    if ! status=$(command curl --silent --show-error --output "$body" \
                  --write-out '%{http_code}' "$@"); then
        echo "README example failed: curl $*" >&2
        rm -f "$body"
        return 1
    fi
    cat "$body"
    echo
    echo "$status curl ${*//$'\n'/ }" >> "$README_CALLS"
    if [ "$status" -ge 400 ] || grep -q '"error": *true' "$body"; then
        echo "README example got an error answer (HTTP $status): curl $*" >&2
        cat "$body" >&2
        rm -f "$body"
        return 1
    fi
    rm -f "$body"
}
"""


def blocks(text):
    """(language, code) of every fenced block, in order."""
    return [(match.group(1), match.group(2)) for match in _BLOCK.finditer(text)]


def examples():
    """(language, code) of every block of the README, then of each document
    in docs/."""
    return [block for path in [README] + DOCS
            for block in blocks(path.read_text(encoding="utf-8"))]


def curl_commands(code):
    """How many curl commands a block runs (one per line that starts one)."""
    return sum(1 for line in code.splitlines() if re.match(r"\s*curl\s", line))


def script_for(found, port, password):
    """The bash script that runs the (language, code) blocks `found`."""
    parts = ["set -euo pipefail", CURL_WRAPPER]
    for language, code in found:
        code = code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        code = code.replace("python bugsvc.py",
                            f'"$PYTHON" {shlex.quote(str(ROOT / "bugsvc.py"))}')
        if language == "sh":
            parts.append(code.replace("'<password>'", shlex.quote(password)))
        elif language == "python":
            code = code.replace('"<api key>"', '__import__("os").environ["KEY"]')
            parts.append(f'KEY="$KEY" "$PYTHON" - <<\'{_PYTHON_BLOCK_END}\'\n{code}'
                         f'{_PYTHON_BLOCK_END}')
    return "\n".join(parts) + "\n"


def test_every_readme_and_docs_example_runs_in_order_on_a_fresh_install(start, tmp_path):
    languages = [language for language, _ in blocks(README.read_text(encoding="utf-8"))]
    assert languages.count("sh") >= 10 and languages.count("python") == 1
    found = examples()
    assert {language for language, _ in found} <= LANGUAGES, "unknown block languages"
    assert len(found) > len(languages)                     # the documents' blocks are there

    server = start(tmp_path / "bugsvc.sqlite")
    printed = server.out_path.read_text()
    password = re.search(r"Its password, shown only this once: (\S+)", printed).group(1)

    home = tmp_path / "home"
    home.mkdir()
    calls = tmp_path / "calls.log"
    script = tmp_path / "readme.sh"
    script.write_text(script_for(found, server.port, password))
    env = {key: value for key, value in os.environ.items() if not key.startswith("BUGSVC_")}
    env.update(HOME=str(home), PYTHON=sys.executable, README_CALLS=str(calls),
               PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
    done = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    (tmp_path / "readme.out").write_text(done.stdout)
    assert done.returncode == 0, done.stderr[-4000:]

    made = calls.read_text().splitlines()
    assert len(made) == sum(curl_commands(code) for language, code in found if language == "sh")
    assert all(200 <= int(line.split()[0]) < 400 for line in made)

    # What the examples say they did, they did.
    anonymous = Client(server.port)
    status, body = anonymous.call("GET", "/rest/bug/1")
    assert (status, body["code"]) == (401, 102)            # restricted to the group
    admin = Client(server.port, api_key=api_key_of(tmp_path))
    status, body = admin.call("GET", "/rest/bug/1/comment")
    comments = body["bugs"]["1"]["comments"]
    assert [c["is_private"] for c in comments].count(True) == 1
    status, body = admin.call("GET", "/rest/bug/1", {"include_fields": "status,resolution,groups"})
    assert body["bugs"][0] == {"status": "RESOLVED", "resolution": "FIXED", "groups": ["staff"]}


def api_key_of(folder):
    """A new key for the administrator, from the command line in `folder`."""
    done = subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), "api-key",
                           "admin@example.com"], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# Pointers a reader cannot follow: the project's notes (Markdown files that the
# repository does not hold), their sections and decisions, issue numbers,
# paths that leave the repository.
def test_the_readme_points_at_nothing_outside_the_repository():
    text = README.read_text(encoding="utf-8")
    for name in set(re.findall(r"[\w.-]+\.md\b", text)):
        if "DATE" not in name:                 # bench/results/DATE-... names a pattern
            assert name == "README.md" or list(ROOT.rglob(name)), name
    pointers = r"\bsections? \d|\u00a7|\bissues? \d|\bdecisions? \d|(?<!\.)\.\./|\bshared[/]"
    assert not re.findall(pointers, text)


def test_the_readme_says_how_to_start_and_where_the_docs_are():
    text = README.read_text(encoding="utf-8")
    assert "## First steps" in text and "/rest/docs" in text
    assert "mkdir -p ~/.config/python-bugzilla" in text
    assert '"insidergroup"' in text and "group_controls" in text
