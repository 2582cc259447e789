"""The code has no finding of ruff (pyflakes, bugbear and isort rules) nor of
mypy (the call kernel and the store, fully annotated).

Both run as the developer runs them, from this virtual environment, with
the settings of pyproject.toml ([tool.ruff], [tool.mypy]) named explicitly
so that a user's own configuration cannot change them:
`python -m ruff check bugsvc tests bench bugsvc.py` and `python -m mypy`.
Each takes a few seconds at most (mypy about 5 s without its cache in
.mypy_cache, under a second with it), so the fast loop runs them.
"""

import subprocess
import sys

import pytest

from live_server import ROOT


CONFIG = ROOT / "pyproject.toml"
PATHS = ["bugsvc", "tests", "bench", "bugsvc.py"]


def _run(*args):
    """Run `python -m <args>` in the checkout; returns (exit code, output)."""
    done = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module", autouse=True)
def _tools_installed():
    for module in ("ruff", "mypy"):
        code, output = _run(module, "--version")
        assert code == 0, f"{module} is not installed (pip install -e '.[test]'):\n{output}"


def test_ruff_finds_nothing():
    code, output = _run("ruff", "check", "--config", str(CONFIG), "--no-fix",
                        "--output-format", "concise", *PATHS)
    assert code == 0, "ruff findings:\n" + output


def test_mypy_finds_nothing():
    code, output = _run("mypy", "--config-file", str(CONFIG))
    assert code == 0, "mypy findings:\n" + output
    assert "no issues found" in output and "source files" in output, output


def test_the_checks_fail_on_a_finding(tmp_path):
    # The same commands, on a module with one finding of each kind, answer
    # with it (the checks above can fail).
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef half(number: int) -> int:\n    return number / 2\n",
                   encoding="utf-8")
    code, output = _run("ruff", "check", "--config", str(CONFIG), "--no-fix",
                        "--output-format", "concise", str(bad))
    assert code == 1 and "F401" in output, output
    code, output = _run("mypy", "--config-file", str(CONFIG), "--no-incremental", str(bad))
    assert code == 1 and "Incompatible return value type" in output, output
