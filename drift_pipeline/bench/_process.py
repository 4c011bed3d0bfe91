"""Running a command in a child process and measuring its wall time and peak memory."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    """What one measured child process took.

    Attributes:
        wall_s: Wall time from start to exit.
        peak_rss_mb: Largest resident set of the child or any descendant it waited for
            (``ru_maxrss`` of the child's resource usage, which covers its reaped descendants:
            the largest *single* process, not a sum over processes).
        returncode: Exit code (negative: killed by that signal).
        output_tail: The last lines of its combined stdout and stderr, for error messages.
    """

    wall_s: float
    peak_rss_mb: float
    returncode: int
    output_tail: str


class MeasuredFailure(RuntimeError):
    """A measured command exited non-zero."""


def run_measured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 3600.0,
    log: Path | None = None,
) -> Measured:
    """Run ``argv`` to completion; return its wall time and peak resident memory.

    The child's resource usage comes from ``os.wait4`` on that very child, so figures of other
    children of this process (earlier measurements) never leak in, which a process-wide
    ``getrusage(RUSAGE_CHILDREN)`` would allow.

    Args:
        argv: Command and arguments.
        env: Environment (default: this process's).
        cwd: Working folder.
        timeout_s: Kill the child's process group after this many seconds.
        log: Write the child's combined output here (default: a discarded temporary).

    Raises:
        MeasuredFailure: The command exited non-zero or timed out (with its last output lines).
    """
    sink = Path(log) if log is not None else None
    handle = sink.open("wb") if sink is not None else open(os.devnull, "wb")  # noqa: SIM115
    tail_source = sink
    with handle:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
    returncode = os.waitstatus_to_exitcode(status)
    proc.returncode = returncode  # reaped here; keeps Popen from waiting again
    # Linux reports ru_maxrss in KiB.
    measured = Measured(wall, usage.ru_maxrss / 1024.0, returncode, _tail(tail_source))
    if timed_out.is_set():
        raise MeasuredFailure(f"{argv[0]} timed out after {timeout_s:g} s\n{measured.output_tail}")
    if returncode != 0:
        raise MeasuredFailure(f"{' '.join(argv[:4])} … exited {returncode}\n{measured.output_tail}")
    return measured


def _tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])
