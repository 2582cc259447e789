"""Where the time goes: py-spy sampling the running service during a
measurement (`python -m bench.run --profile`), summarised as the functions
with the most samples, inclusive and self. Only the thread holding the
interpreter lock is sampled (--gil): a process is held to one core by it, so
its time is what limits the rate. py-spy is not a dependency:
install it where you profile (`pip install py-spy`); without it --profile
only says so."""

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path


_FRAME_LINE = re.compile(r":\d+\)$")


def available():
    return shutil.which("py-spy") is not None


def start(pids, seconds, out_path):
    """Start sampling processes `pids` for `seconds` into `out_path`
    (collapsed stacks); returns the py-spy processes."""
    processes = []
    for number, pid in enumerate(pids):
        target = Path(f"{out_path}.{number}") if len(pids) > 1 else Path(out_path)
        processes.append(subprocess.Popen(
            ["py-spy", "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))),
             "--rate", "200", "--gil", "--format", "raw", "--nonblocking",
             "--output", str(target)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return processes


def wait(processes):
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _frame_name(frame):
    """'function (path/file.py:12)' -> 'function (path/file.py)', shortened to the package."""
    frame = _FRAME_LINE.sub(")", frame.strip())
    for marker in ("site-packages/", "lib/python3", "/bugsvc/", "/bench/"):
        if marker in frame:
            head, _, tail = frame.partition("(")
            tail = tail.split(marker, 1)[1] if marker in tail else tail
            prefix = {"/bugsvc/": "bugsvc/", "/bench/": "bench/"}.get(marker, "")
            return f"{head}({prefix}{tail}"
    return frame


def summarise(paths, top=15):
    """{"samples": n, "inclusive": [[name, share]], "self": [[name, share]]}
    over the collapsed-stack files `paths` (missing files are skipped).
    Inclusive shares are of the project's own functions; self shares of any."""
    inclusive, own = Counter(), Counter()
    total = 0
    for path in paths:
        path = Path(path)
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            samples = int(count)
            frames = [_frame_name(frame) for frame in stack.split(";")]
            total += samples
            for name in set(frames):
                if name.startswith("bugsvc/") or "(bugsvc/" in name:
                    inclusive[name] += samples
            own[frames[-1]] += samples
    if not total:
        return {"samples": 0, "inclusive": [], "self": []}

    def shares(counter):
        return [[name, round(count / total, 3)] for name, count in counter.most_common(top)]

    return {"samples": total, "inclusive": shares(inclusive), "self": shares(own)}
