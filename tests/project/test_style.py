"""The Python code keeps to PEP 8's layout as pycodestyle checks it.

pycodestyle runs over the package, the tests, the benchmark (not its
results) and bugsvc.py with lines of up to 100 characters and its default
choice of checks. The settings are given here rather than in a setup.cfg or
tox.ini, so the test reads no other configuration; the same check by hand is
`pycodestyle --max-line-length=100 bugsvc tests bench bugsvc.py
--exclude=bench/results`.
"""

import pycodestyle

from live_server import ROOT


PATHS = ["bugsvc", "tests", "bench", "bugsvc.py"]
EXCLUDE = ["bench/results"]
MAX_LINE_LENGTH = 100


class Findings(pycodestyle.BaseReport):
    """Keeps every finding as "path:line:column: code message"."""

    def __init__(self, options):
        super().__init__(options)
        self.findings = []

    def error(self, line_number, offset, text, check):
        code = super().error(line_number, offset, text, check)
        if code:
            path = self.filename.removeprefix(f"{ROOT}/")
            self.findings.append(f"{path}:{line_number}:{offset + 1}: {text}")
        return code


def test_the_code_has_no_pycodestyle_findings():
    style = pycodestyle.StyleGuide(
        max_line_length=MAX_LINE_LENGTH,
        exclude=[str(ROOT / path) for path in EXCLUDE],
        # The default ignore list, named so that a user's own configuration cannot change it.
        ignore=pycodestyle.DEFAULT_IGNORE.split(","),
        reporter=Findings)
    report = style.check_files([str(ROOT / path) for path in PATHS])
    assert report.findings == [], "pycodestyle findings:\n" + "\n".join(report.findings)
    assert report.counters["files"] > 50      # the paths were found and read
