"""Running a command in a child process and measuring its wall time and peak memory."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    """What one measured child process took.

    Attributes:
        wall_s: Wall time from start to exit.
        cpu_s: User plus system CPU time of the child and every descendant it waited for
            (backend workers included): unlike the wall time, it hardly moves with the load
            other processes put on the machine.
        peak_rss_mb: Largest resident set of the child or any descendant it waited for
            (``ru_maxrss`` of the child's resource usage, which covers its reaped descendants:
            the largest *single* process, not a sum over processes).
        returncode: Exit code (negative: killed by that signal).
        output_tail: The last lines of its combined stdout and stderr, for error messages.
    """

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    returncode: int
    output_tail: str


class MeasuredFailure(RuntimeError):
    """A measured command exited non-zero."""


# Runs the measured command and reports its figures. A fresh, small interpreter sits between
# the bench and the command because a child's ru_maxrss starts at its parent's resident size
# (Linux carries the pre-exec memory into the figure): forked straight from the bench, which
# holds generated worlds, the command would inherit the bench's size.
_WRAPPER = """
import json, resource, subprocess, sys, time
report, argv = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
code = subprocess.call(argv)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(report, "w") as handle:
    json.dump(
        {
            "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss_kib": usage.ru_maxrss,
            "returncode": code,
        },
        handle,
    )
"""


def run_measured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 3600.0,
    log: Path | None = None,
) -> Measured:
    """Run ``argv`` to completion; return its wall time and peak resident memory.

    The command runs under a fresh, small Python process that reports
    ``getrusage(RUSAGE_CHILDREN)`` once the command exited: the largest resident set of the
    command or of any descendant it waited for (backend workers included, each as its own
    process), untouched by this process's own size or by earlier measurements.

    Args:
        argv: Command and arguments.
        env: Environment (default: this process's).
        cwd: Working folder.
        timeout_s: Kill the command's process group after this many seconds.
        log: Write the command's combined output here (default: discarded).

    Raises:
        MeasuredFailure: The command exited non-zero or timed out (with its last output lines).
    """
    with tempfile.TemporaryDirectory(prefix="drift-measured-") as scratch:
        report = Path(scratch) / "report.json"
        sink = Path(log) if log is not None else Path(scratch) / "output.log"
        with sink.open("wb") as handle:
            proc = subprocess.Popen(
                [sys.executable, "-c", _WRAPPER, str(report), *argv],
                env=dict(env) if env is not None else None,
                cwd=cwd,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise MeasuredFailure(
                    f"{argv[0]} timed out after {timeout_s:g} s\n{_tail(sink)}"
                ) from None
        if proc.returncode != 0 or not report.exists():
            raise MeasuredFailure(f"measuring {argv[0]} failed\n{_tail(sink)}")
        figures = json.loads(report.read_text(encoding="utf-8"))
        tail = _tail(sink)
    returncode = int(figures["returncode"])
    if returncode != 0:
        raise MeasuredFailure(f"{' '.join(argv[:4])} … exited {returncode}\n{tail}")
    # Linux reports ru_maxrss in KiB.
    return Measured(
        float(figures["wall_s"]),
        float(figures["cpu_s"]),
        int(figures["maxrss_kib"]) / 1024.0,
        returncode,
        tail,
    )


def _tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])
