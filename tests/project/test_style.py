"""The Python code keeps to PEP 8's layout as pycodestyle's checks define it.

The checks are pycodestyle's (its E and W codes, with its default list of
checks left out, and lines of up to 100 characters), run by ruff, whose
implementation of them reads the whole tree in a fraction of a second where
pycodestyle itself took ten (most of the everyday loop's longest test). Some
of those checks are still "preview" rules in ruff, so the command names
`--preview`. Of pycodestyle's default list of checks left out, ruff has
only E226 and E24 (the others it does not implement). The same check by
hand: `python -m ruff check --isolated --preview --select E,W --ignore
E226,E24 --line-length 100 bugsvc tests bench bugsvc.py --exclude
bench/results`.
"""

import json
import subprocess
import sys

from live_server import ROOT


PATHS = ["bugsvc", "tests", "bench", "bugsvc.py"]
# Of pycodestyle's DEFAULT_IGNORE (checks PEP 8 leaves to taste), those ruff has.
IGNORED = "E226,E24"


def _style(*paths):
    """Run the check over `paths`; returns (exit code, findings as
    "path:line:column: code message")."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--preview", "--no-fix",
         "--select", "E,W", "--ignore", IGNORED, "--line-length", "100",
         "--exclude", "bench/results", "--output-format", "json", *paths],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [
        f"{found['filename']}:{found['location']['row']}:{found['location']['column']}: "
        f"{found['code']} {found['message']}" for found in json.loads(done.stdout)]


def test_the_code_has_no_pycodestyle_findings():
    code, findings = _style(*PATHS)
    assert code == 0 and not findings, "style findings:\n" + "\n".join(findings)


def test_the_check_finds_what_pycodestyle_finds(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef f( a ):\n  return a*2  \n" + "x = 1  # " + "y" * 100 + "\n",
                   encoding="utf-8")
    code, findings = _style(str(bad))
    found = {finding.split(": ")[1].split(" ")[0] for finding in findings}
    assert code == 1 and {"E302", "E201", "E202", "E111", "W291", "E501"} <= found, findings
    assert "E226" not in found, findings              # left to taste, as pycodestyle does
