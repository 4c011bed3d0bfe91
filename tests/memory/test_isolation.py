"""Process isolation: a backend cannot read the generated world, the harness's secrets or its
neighbours' state, even when it searches for them.

The world these tests protect is generated into a world-readable folder under ``/tmp`` (not
pytest's private ``tmp_path``), so that only the sandbox stands between it and the backend, and
its scenario id is unique to this test session, so no other copy of it exists on the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from drift_pipeline.evaluation import judge_all
from drift_pipeline.memory import Arm, BackendWorker, Gate, LoopConfig, run_cell
from drift_pipeline.storage import PART_FILE, PROBES, TRANSCRIPTS, partition_dir

from .plugins import _support

STRONGEST = "unprivileged-user+mount-namespace"
ENV_PROBE = "memory.plugins.env_probe:EnvProbe"
CHEATER = "plugins.cheater:FilesystemCheater"  # imported from tests/memory, as a user would
SECRETS = {
    "OPENAI_API_KEY": "sk-test-not-for-backends",
    "DRIFT_TEST_SECRET": "drift-secret-3141",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-2718",
}
# What a worker may see: the locale, its own folders, the import path, the isolation level.
ALLOWED_ENV = {
    "LANG",
    "LC_ALL",
    "LC_CTYPE",  # Python's C-locale coercion may add it
    "TZ",
    "HOME",
    "TMPDIR",
    "PATH",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPATH",
    "TIKTOKEN_CACHE_DIR",
    "DRIFT_STATE_DIR",
    "DRIFT_ISOLATION",
}
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the strongest level needs a root harness")


def _public_folder(prefix: str) -> Path:
    """A world-readable folder under /tmp (only the sandbox can hide it)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(folder, 0o755)
    return folder


def _write_transcript_like(path: Path, scenario: str) -> None:
    table = pa.table({"scenario": [scenario], "replicate": [0], "content": ["I moved to Oslo."]})
    pq.write_table(table, path)
    os.chmod(path, 0o644)


def _ask(worker: BackendWorker, session_id: str = "short-r0-s00007") -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        started = await worker.start()
        assert started.ok, started.error
        try:
            answer = await worker.call(
                {"op": "retrieve", "session_id": session_id, "entity_id": "a", "query": "q"}
            )
            assert answer.ok, answer.error
            return json.loads(answer.data["context"])  # type: ignore[no-any-return]
        finally:
            await worker.close()

    return asyncio.run(go())


# --- what the worker process sees ------------------------------------------------------------


def test_the_worker_sees_a_scrubbed_environment_its_own_folder_and_no_root(
    monkeypatch: pytest.MonkeyPatch,
):
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    protected = _public_folder("drift-protected-")
    visible = _public_folder("drift-visible-")
    try:
        (protected / "world.txt").write_text("the generated world")
        (visible / "note.txt").write_text("not protected")
        os.chmod(protected / "world.txt", 0o644)
        os.chmod(visible / "note.txt", 0o644)
        harness = f"/proc/{os.getpid()}"
        peek = [
            str(protected),
            str(protected / "world.txt"),
            str(visible / "note.txt"),
            f"{harness}/environ",
            f"{harness}/cwd",
            f"{harness}/root{protected}/world.txt",
        ]
        worker = BackendWorker(ENV_PROBE, {"peek": peek}, [protected], 20.0)
        report = _ask(worker)
    finally:
        shutil.rmtree(protected)
        shutil.rmtree(visible)
    env = report["env"]
    assert set(env) <= ALLOWED_ENV, sorted(set(env) - ALLOWED_ENV)
    text = json.dumps(report)
    for key, value in SECRETS.items():
        assert key not in env and value not in text
    # Its working directory and home are its own, writable, state folder.
    assert report["cwd"] == os.path.realpath(worker.state_dir)
    assert env["HOME"] == env["DRIFT_STATE_DIR"] == str(worker.state_dir)
    assert report["cwd_writable"] is True
    readable = report["readable"]
    assert readable[str(visible / "note.txt")] is True  # the probe itself works
    assert readable[str(protected)] is False
    assert readable[str(protected / "world.txt")] is False
    if os.geteuid() == 0:
        assert env["DRIFT_ISOLATION"] == STRONGEST
        assert report["uid"] != 0 and report["euid"] != 0
        # No capability left, no supplementary group, and no set-uid program can raise them.
        status = report["status"]
        assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0
        assert status["NoNewPrivs"] == "1"
        assert status["Groups"] == ""
        assert set(status["Uid"].split()) == {str(report["uid"])}
        # Nor through the harness's own /proc entries (they hold its environment).
        assert readable[f"{harness}/environ"] is False
        assert readable[f"{harness}/cwd"] is False
        assert readable[f"{harness}/root{protected}/world.txt"] is False


@as_root
def test_workers_cannot_read_each_others_state():
    async def go() -> dict[str, Any]:
        neighbour = BackendWorker("amnesiac", {}, [], 20.0)
        await neighbour.start()
        try:
            secret = neighbour.state_dir / "kept.txt"
            secret.write_text("what the neighbour remembers")
            os.chown(secret, neighbour.uid, 65534)
            worker = BackendWorker(
                ENV_PROBE, {"peek": [str(neighbour.state_dir), str(secret)]}, [], 20.0
            )
            started = await worker.start()
            assert started.ok, started.error
            try:
                answer = await worker.call(
                    {"op": "retrieve", "session_id": "s", "entity_id": "a", "query": "q"}
                )
                assert worker.uid != neighbour.uid
                return json.loads(answer.data["context"])  # type: ignore[no-any-return]
            finally:
                await worker.close()
        finally:
            await neighbour.close()

    report = asyncio.run(go())
    assert set(report["readable"].values()) == {False}


_WITHOUT_SYS_ADMIN = """
import asyncio, json
from drift_pipeline.memory import BackendWorker

async def go():
    worker = BackendWorker("amnesiac", {}, [], 20.0)
    started = await worker.start()
    answer = await worker.call(
        {"op": "retrieve", "session_id": "s", "entity_id": "a", "query": "q"}
    )
    await worker.close()
    return {"started": started.error, "answer": answer.error, "isolation": worker.isolation}

print(json.dumps(asyncio.run(go())))
"""


@as_root
@pytest.mark.skipif(shutil.which("capsh") is None, reason="needs capsh to drop CAP_SYS_ADMIN")
def test_a_root_harness_without_sys_admin_falls_back_to_a_weaker_recorded_level():
    """Root in a container without CAP_SYS_ADMIN cannot make a mount namespace: the workers
    must still run, at the next level down, and say so (not fail every call)."""
    done = subprocess.run(
        [
            "capsh",
            "--drop=cap_sys_admin",
            "--",
            "-c",
            f"{shlex.quote(sys.executable)} -c {shlex.quote(_WITHOUT_SYS_ADMIN)}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["started"] is None and result["answer"] is None
    assert result["isolation"] in {"user+mount-namespace", "process"}


# --- a backend that hunts for the transcripts -------------------------------------------------


class CheatWorld:
    """The protected world, a world-readable decoy next to it, and the probes to score."""

    def __init__(self, root: Path, scenario: str, decoy: Path) -> None:
        self.root = root
        self.scenario = scenario
        self.decoy = decoy
        keys = {"scenario": scenario, "horizon": "short"}
        self.probes = pq.read_table(partition_dir(root, PROBES, keys) / PART_FILE)
        self.transcripts = partition_dir(root, TRANSCRIPTS, keys) / PART_FILE

    def correct_rate(self, contexts: dict[tuple[int, str], str]) -> float:
        verdicts = [c for c in judge_all(self.probes, contexts)["correct"] if c is not None]
        return sum(verdicts) / len(verdicts)

    def run_cheater(self, isolate: bool) -> dict[tuple[int, str], str]:
        cell = run_cell(
            self.root,
            self.scenario,
            "short",
            _support.REPLICATES,
            Arm(CHEATER, Gate("hard")),
            {"target": self.scenario, "budget_seconds": 20.0},
            LoopConfig(call_timeout=60.0, isolate=isolate, protect=(self.root,)),
        )
        assert cell.faults == []
        if not isolate:
            assert cell.isolation == "process"
        elif os.geteuid() == 0:
            assert cell.isolation == STRONGEST
        rows = cell.retrievals.to_pylist()
        return {(r["replicate"], r["probe_id"]): r["context"] for r in rows}


@pytest.fixture(scope="module")
def cheat_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CheatWorld]:
    scenario = f"cheat-{uuid.uuid4().hex[:12]}"
    root = _public_folder("drift-cheat-world-")
    decoy_folder = _public_folder("drift-cheat-decoy-")
    try:
        with pytest.MonkeyPatch.context() as patch:
            # Workers import from the harness's path: put tests/memory on it for `plugins.…`.
            patch.syspath_prepend(str(_support.PLUGINS_ROOT))
            _support.generate_world(tmp_path_factory.mktemp("cheat"), root, scenario)
            _support.make_world_readable(root)
            decoy = decoy_folder / "decoy.parquet"
            _write_transcript_like(decoy, f"decoy-{uuid.uuid4().hex[:12]}")
            yield CheatWorld(root, scenario, decoy)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(decoy_folder, ignore_errors=True)


def _hunt_report(world: CheatWorld, isolate: bool) -> dict[str, Any]:
    # The walk covers the whole file system and opens every Parquet file it may read, so its
    # time grows with the machine's disk (a developer's checkouts and run folders), not the test.
    options = {"target": world.scenario, "budget_seconds": 60.0, "report": True}
    worker = BackendWorker(CHEATER, options, [world.root], 120.0, isolate=isolate)
    return _ask(worker)


def test_the_hunt_reaches_everything_it_may_read_but_not_the_protected_world(
    cheat_world: CheatWorld,
):
    report = _hunt_report(cheat_world, isolate=True)
    # It finished its walk (the budget did not cut it short) and read Parquet files under /tmp
    # as the worker's user: the world-readable decoy next to the world was among them …
    assert report["complete"] is True
    assert str(cheat_world.decoy) in report["candidates"]
    # … but nothing under the protected world, which it did not find.
    assert report["found"] == []
    assert not [c for c in report["candidates"] if c.startswith(str(cheat_world.root))]
    if os.geteuid() == 0:
        assert report["uid"] != 0


def test_without_isolation_the_hunt_finds_the_transcripts(cheat_world: CheatWorld):
    report = _hunt_report(cheat_world, isolate=False)
    assert report["found"] == [str(cheat_world.transcripts)]


def test_a_backend_hunting_for_transcripts_gains_nothing_over_amnesiac(
    cheat_world: CheatWorld,
):
    amnesiac = cheat_world.correct_rate({})
    isolated = cheat_world.run_cheater(isolate=True)
    assert set(isolated.values()) == {""}
    assert cheat_world.correct_rate(isolated) == amnesiac


def test_the_cheater_would_win_without_isolation(cheat_world: CheatWorld):
    """Proves the test above can fail: the same hunt, unisolated, beats the amnesiac."""
    amnesiac = cheat_world.correct_rate({})
    unisolated = cheat_world.run_cheater(isolate=False)
    assert cheat_world.correct_rate(unisolated) > amnesiac
