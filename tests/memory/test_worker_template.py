"""Workers forked from the worker template: the same isolation, the same faults, no leaks.

A worker forked from the template must be indistinguishable, from inside, from one started by
the sandbox launcher (which also serves where no template can), and the template must never
outlive the harness.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import process_alive

from drift_pipeline.memory import BackendWorker, _worker_template

ENV_PROBE = "memory.plugins.env_probe:EnvProbe"
HANGS = "memory.plugins.faulty:FaultyBackend"
SECRET = {"DRIFT_TEST_KEY": "key-for-the-backend-only"}
RETRIEVE = {"op": "retrieve", "session_id": "s", "entity_id": "assistant", "query": "q"}
TESTS = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def fresh_templates() -> Iterator[None]:
    """Each test starts with no template and leaves none behind."""
    _worker_template.stop_templates()
    yield
    _worker_template.stop_templates()


def _probe(protect: list[Path], harness_fd: int) -> tuple[dict[str, Any], str, str]:
    """What a worker sees (with ``harness_fd`` open in the harness), how it started, its level."""

    async def go() -> tuple[dict[str, Any], str, str]:
        worker = BackendWorker(
            ENV_PROBE,
            {"peek": [f"/proc/{os.getpid()}/fd/{harness_fd}"]},
            protect,
            20.0,
            extra_env=dict(SECRET),
        )
        try:
            started = await worker.start()
            assert started.ok, started.error
            answer = await worker.call(
                {"op": "retrieve", "session_id": "s", "entity_id": "a", "query": "q"}
            )
            assert answer.ok, answer.error
            return json.loads(answer.data["context"]), worker.started_by, worker.isolation
        finally:
            await worker.close()

    return asyncio.run(go())


def _shape(report: dict[str, Any]) -> dict[str, Any]:
    """A worker's view with its own folder, process id and uid taken out."""
    state = report["cwd"]
    text = json.dumps(
        {
            "env": report["env"],
            "path": report["path"],
            "readable": report["readable"],
            "cwd_writable": report["cwd_writable"],
            "status": {k: v for k, v in report["status"].items() if k not in ("Uid", "Gid")},
            "own_session": report["session"] == report["pid"],
            # Descriptor numbers and what kind of thing each refers to (pipe ids differ).
            "fds": {k: re.sub(r"\[\d+\]", "", v) for k, v in report["fds"].items()},
        },
        sort_keys=True,
    )
    return dict(json.loads(text.replace(state, "<state>")))


@pytest.mark.parametrize("locale", ["as the harness has it", "C"])
def test_a_forked_worker_sees_exactly_what_a_launched_one_sees(
    monkeypatch: pytest.MonkeyPatch, locale: str
) -> None:
    if locale == "C":  # the interpreter coerces it, adding LC_CTYPE as it starts
        monkeypatch.setenv("LANG", "C")
        monkeypatch.delenv("LC_ALL", raising=False)
    # A folder named twice on the harness's import path (tests that add folders leave such paths).
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.syspath_prepend(str(TESTS))
    protected = Path(tempfile.mkdtemp(prefix="drift-template-protected-", dir="/tmp"))
    secret_file = protected / "world.txt"
    secret_file.write_text("the generated world")
    os.chmod(protected, 0o755)
    os.chmod(secret_file, 0o644)
    # An inheritable descriptor of the harness on protected data: no worker may hold it.
    harness_fd = os.open(secret_file, os.O_RDONLY)
    os.set_inheritable(harness_fd, True)
    try:
        forked, forked_by, forked_level = _probe([protected], harness_fd)
        # The secret went in a pipe only the forked child read: the template holds no trace.
        template = Path(f"/proc/{_template_pid()}")
        for view in ("environ", "cmdline"):
            assert SECRET["DRIFT_TEST_KEY"].encode() not in (template / view).read_bytes()
        assert not any(str(protected) in os.readlink(fd) for fd in (template / "fd").iterdir())
        monkeypatch.setenv("DRIFT_WORKER_TEMPLATE", "0")
        launched, launched_by, launched_level = _probe([protected], harness_fd)
    finally:
        os.close(harness_fd)
        secret_file.unlink()
        protected.rmdir()
    assert (forked_by, launched_by) == ("template", "launcher")
    assert forked_level == launched_level
    assert forked["env"]["DRIFT_ISOLATION"] == forked_level
    assert forked["env"]["DRIFT_TEST_KEY"] == SECRET["DRIFT_TEST_KEY"]
    assert _shape(forked) == _shape(launched)
    # The template's own objects are left out of a forked worker's collections, not its own.
    assert forked["gc"]["enabled"] and launched["gc"]["enabled"]
    assert forked["gc"]["frozen"] > 10_000 and launched["gc"]["frozen"] == 0
    for report in (forked, launched):
        assert str(secret_file) not in report["fds"].values()
        assert report["readable"] == {f"/proc/{os.getpid()}/fd/{harness_fd}": False}
        assert report["session"] == report["pid"]
        if os.geteuid() == 0:
            assert report["uid"] != 0 and report["status"]["NoNewPrivs"] == "1"


def test_a_hung_forked_worker_is_killed_recorded_and_restarted() -> None:
    async def go() -> None:
        worker = BackendWorker(HANGS, {}, [], 1.0)
        try:
            assert (await worker.start()).ok
            assert worker.started_by == "template"
            process = worker._process
            assert process is not None
            stored = await worker.call(
                {"op": "store", "session_id": "short-r0-s00000", "messages": [], "snapshot": False}
            )
            assert stored.ok, stored.error
            hung = await worker.call(
                {"op": "retrieve", "session_id": "s", "entity_id": "assistant", "query": "q"}
            )
            assert hung.error == "timeout after 1s; worker restarted"
            assert hung.backend_ms >= 1000 and worker.restarts == 1
            # Killed and reaped: the template no longer has it, the kernel neither.
            assert process.returncode == -signal.SIGKILL
            with pytest.raises(ProcessLookupError):
                os.kill(process.pid, 0)
            after = await worker.call(
                {"op": "retrieve", "session_id": "s", "entity_id": "assistant", "query": "q"}
            )
            assert after.ok and after.data["context"] == "sessions kept: "
            assert worker.started_by == "template"
        finally:
            await worker.close()

    asyncio.run(go())


def _template_pid() -> int:
    templates = list(_worker_template._TEMPLATES.values())
    assert len(templates) == 1
    return templates[0].process.pid


def test_a_dead_template_is_a_crash_of_its_workers_then_restarted_then_given_up() -> None:
    async def go() -> None:
        worker = BackendWorker("amnesiac", {}, [], 5.0)
        try:
            assert (await worker.start()).ok
            assert worker.started_by == "template"
            for round_, expected in enumerate(("template", "launcher")):
                process = worker._process
                assert process is not None
                os.kill(_template_pid(), signal.SIGKILL)
                _wait_until_gone(process.pid)  # the kernel's parent-death signal, not instant
                died = await worker.call(RETRIEVE)
                assert died.error == "worker crashed (exit -9); worker restarted"
                assert worker.restarts == round_ + 1
                answer = await worker.call(RETRIEVE)
                assert answer.ok, answer.error
                # Restarted once on a fresh template; then the plain launcher for good.
                assert worker.started_by == expected
        finally:
            await worker.close()

    asyncio.run(go())


HARNESS = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from drift_pipeline.memory import BackendWorker, _worker_template

    async def go():
        worker = BackendWorker("amnesiac", {}, [], 20.0)
        assert (await worker.start()).ok and worker.started_by == "template"
        template = next(iter(_worker_template._TEMPLATES.values()))
        print(json.dumps([template.process.pid, worker._process.pid]), flush=True)
        time.sleep(600)

    asyncio.run(go())
    """
)


def test_the_template_and_its_workers_die_with_the_harness() -> None:
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])},
    )
    try:
        assert harness.stdout is not None
        pids = json.loads(harness.stdout.readline())
        for pid in pids:
            os.kill(pid, 0)  # both running
        harness.kill()  # no clean-up code runs: only the kernel's parent-death signals
        harness.wait()
        for pid in pids:
            _wait_until_gone(pid)
    finally:
        harness.kill()
        harness.wait()


def _wait_until_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while process_alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.02)


PRELOAD = textwrap.dedent(
    """
    import json, os, sys
    from drift_pipeline.memory import _worker_template
    _worker_template._preload(sys.argv[1] == "numpy")
    print(json.dumps({
        "threads": len(os.listdir("/proc/self/task")),
        "numpy": "numpy" in sys.modules,
        "modules": sorted(m for m in sys.modules if m.startswith("drift_pipeline.memory.back")),
        "slips": sys.modules["drift_pipeline.memory.backends._slips"]._slip_table.cache_info(),
    }))
    """
)


@pytest.mark.parametrize("numpy", [True, False])
def test_the_template_preloads_the_built_in_backends_and_keeps_no_thread(numpy: bool) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PRELOAD, "numpy" if numpy else "without"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["threads"] == 1  # BLAS's pool stopped, or numpy never loaded
    assert report["numpy"] is numpy
    assert "drift_pipeline.memory.backends.amnesiac" in report["modules"]
    # fact_store needs numpy: preloaded with it, left to the worker without it.
    assert ("drift_pipeline.memory.backends.fact_store" in report["modules"]) is numpy
    assert report["slips"][3] == 1  # the slip table, built here for every worker forked after
