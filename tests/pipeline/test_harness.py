"""``DriftHarness``: the Python API runs what ``drift run`` runs, with backends given as objects."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import unchecked
from memory.plugins import _support

from drift_pipeline import DriftHarness, DriftReport, Message, TokenCounts
from drift_pipeline.memory import Arm, IsolationError
from drift_pipeline.storage import RootBusy

PLUGINS = Path(__file__).resolve().parent / "api_plugins"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "valid"
SCENARIO = FIXTURE / "ua-dense-002.yaml"  # 12 short sessions: a run takes a few seconds
DRIFT = str(Path(sys.executable).with_name("drift"))
STRONGEST = "unprivileged-user+mount-namespace"
# Measured latencies (and the composites built from them) differ between any two runs.
LATENCY_METRICS = ("lps", "drift_e")


class EchoMemory:
    """Keeps every line with its session's speakers; a module-level class of a test module, so
    it travels by value too. Answers with the asker's last lines."""

    name = "echo_memory"

    def __init__(self) -> None:
        self.lines: list[tuple[frozenset[str], str]] = []

    async def store(self, session_id: str, messages: list[Message]) -> None:
        speakers = frozenset(m["speaker"] for m in messages)
        self.lines.extend((speakers, m["content"]) for m in messages)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return "\n".join([line for who, line in self.lines if entity_id in who][-8:])

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(line for _, line in self.lines)


class FailingStore(EchoMemory):
    """Raises in every third ``store``; the run must record each one and go on."""

    name = "failing_store"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.calls += 1
        if self.calls % 3 == 0:
            raise RuntimeError(f"planned failure on store call {self.calls}")
        await super().store(session_id, messages)


class HoldsALock(EchoMemory):
    name = "holds_a_lock"

    def __init__(self) -> None:
        super().__init__()
        self.guard = threading.Lock()


def _script(tmp: Path) -> Path:
    """A user's script: the keyword memory's source pasted in, so its class is in ``__main__``."""
    source = (PLUGINS / "keyword_memory.py").read_text(encoding="utf-8")
    body = source.split('"""', 2)[2]  # drop the module docstring; keep imports and class
    script = tmp / "my_benchmark.py"
    script.write_text(
        body
        + """
import json
import sys

from drift_pipeline import DriftHarness

harness = DriftHarness(
    backend=[KeywordMemory(), "keyword_memory:KeywordMemory"],
    scenario_path=sys.argv[1],
    horizons="short",
    out=sys.argv[2],
)
report = harness.run_sync()
print(json.dumps(report.to_dict()))
""",
        encoding="utf-8",
    )
    return script


def _without_latency(item: dict[str, Any], keep_name: bool = False) -> dict[str, Any]:
    """A summary cell or arm row without the measured-latency figures (and its arm's name,
    also where its cost note says it).

    Also without what only ``drift run`` adds to a row: its signed record and the stored
    worlds' audit in its verification.
    """
    dropped = {"latency_ms", "budget", "record", "verification", *LATENCY_METRICS} | (
        set() if keep_name else {"arm", "backend"}
    )
    kept = {k: v for k, v in item.items() if k not in dropped}
    if not keep_name and kept.get("cost_note"):
        # The line about its tokens starts with the arm's name.
        kept["cost_note"] = str(kept["cost_note"]).removeprefix(f"{item['arm']}: ")
    if "metrics" in kept:
        kept["metrics"] = {k: v for k, v in kept["metrics"].items() if k not in LATENCY_METRICS}
    return kept


@pytest.mark.slow
def test_a_script_with_its_own_backend_class_gives_drift_runs_figures(tmp_path: Path):
    scripts = tmp_path / "user"
    scripts.mkdir(mode=0o700)  # a folder the unprivileged worker cannot read
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    done = subprocess.run(
        [sys.executable, str(_script(scripts)), str(SCENARIO), str(tmp_path / "api")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    api = json.loads(done.stdout)
    cli_json = tmp_path / "cli.json"
    cli = subprocess.run(
        [
            DRIFT,
            "run",
            str(SCENARIO),
            "--horizon",
            "short",
            "--out",
            str(tmp_path / "cli"),
            "--backend",
            "keyword_memory:KeywordMemory",
            "--json",
            str(cli_json),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert cli.returncode == 0, cli.stderr
    summary = json.loads(cli_json.read_text())

    cells = {c["arm"]: c for c in api["cells"]}
    assert set(cells) == {"keywordmemory@hard", "keyword_memory:KeywordMemory@hard"}
    [cli_cell] = summary["cells"]
    # The same backend by name: the very cell `drift run --json` writes, latencies aside.
    named = cells["keyword_memory:KeywordMemory@hard"]
    assert _without_latency(named, keep_name=True) == _without_latency(cli_cell, keep_name=True)
    # The class defined in the script: the same figures under its own arm name.
    instance = cells["keywordmemory@hard"]
    assert instance["backend"] == "keywordmemory"
    assert _without_latency(instance) == _without_latency(cli_cell)
    assert instance["faults"] == 0
    assert instance["metrics"]["selectivity"]["value"] is not None
    assert api.keys() == summary.keys()
    assert api["scenarios"] == summary["scenarios"] == ["ua-dense-002"]
    arms = {row["arm"]: row for row in api["arms"]}
    assert _without_latency(arms["keywordmemory@hard"]) == _without_latency(summary["arms"][0])

    manifest = json.loads((tmp_path / "api" / "_manifests" / "run.json").read_text())
    assert manifest["backends"]["keywordmemory"] == "1.0"  # recorded as a module:Class one is
    assert manifest["backends"]["keyword_memory:KeywordMemory"] == "1.0"
    if os.geteuid() == 0:
        assert manifest["isolation"] == [STRONGEST]


@pytest.mark.slow
def test_run_awaits_inside_a_running_event_loop_without_blocking_it(tmp_path: Path):
    harness = DriftHarness(
        backend=EchoMemory(), scenario_path=SCENARIO, horizons=["short"], out=tmp_path
    )
    ticks = 0

    async def main() -> DriftReport:
        nonlocal ticks
        with pytest.raises(RuntimeError, match=r"await harness\.run\(\)"):
            harness.run_sync()
        task = asyncio.create_task(harness.run())
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.05)
        return await task

    report = asyncio.run(main())
    assert ticks > 10  # the caller's loop kept running while the benchmark ran
    [cell] = report.cells
    assert cell.arm == Arm.parse("echo_memory@hard")
    assert report.faults == []
    assert report.to_dict()["cells"][0]["arm"] == "echo_memory@hard"
    assert report.leaderboard().splitlines()[2].startswith("echo_memory@hard")
    assert [s.arm for s in report.standings] == ["echo_memory@hard"]


@pytest.mark.slow
def test_faults_inside_an_instance_are_recorded_per_call_and_the_run_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    unchecked(
        "failing_store",
        "raises on every third store; how the run records each fault is tested",
        monkeypatch,
    )
    report = DriftHarness(
        backend=FailingStore(),
        scenario_path=SCENARIO,
        horizons="short",
        out=tmp_path,
        max_fault_rate=1.0,  # every call made: a third of them fail, each recorded
    ).run_sync()
    [cell] = report.cells
    stores = [f for f in report.faults if " store " in f]
    # Each replicate starts from its own copy of the object: calls 3, 6, 9, 12 fail in each.
    replicates = cell.replicates
    assert len(stores) == 4 * replicates
    assert all("RuntimeError: planned failure on store call" in f for f in stores)
    assert report.to_dict()["cells"][0]["faults"] == len(report.faults)
    rows = _support.query(
        tmp_path,
        "select session_index, error from {memory_snapshots} where backend = 'failing_store'",
    )
    assert len(rows) == 12 * replicates  # every session has its row, failed or not
    failed = sorted(r["session_index"] for r in rows if r["error"])
    assert failed == sorted([2, 5, 8, 11] * replicates)


def test_an_instance_that_cannot_be_serialised_is_refused_in_one_line(tmp_path: Path):
    with pytest.raises(ValueError) as caught:
        DriftHarness(backend=HoldsALock(), scenario_path=SCENARIO, out=tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert "HoldsALock cannot be sent to its isolated worker" in message
    assert "lock" in message


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"backend": EchoMemory}, "EchoMemory is a class: pass an instance"),
        ({"backend": object()}, "object lacks MemoryBackend method(s) store, retrieve"),
        ({"backend": "no_such_backend"}, "'no_such_backend': unknown backend"),
        ({"backend": "pkg.mod:"}, "expected a registered name or 'package.module:ClassName'"),
        ({"backend": EchoMemory(), "backends": [EchoMemory()]}, "not both"),
        ({"backend": [EchoMemory(), EchoMemory()]}, "'echo_memory' is used by another"),
        (
            {"backend": EchoMemory(), "backend_options": {"echo_memory": {"top": 3}}},
            "given as an object, already constructed",
        ),
        ({"backend": "bm25", "gates": "soft"}, "gates: gate 'soft' is not one of"),
        ({"backend": "bm25", "horizons": "forever"}, "horizon 'forever' is not one of"),
        ({"backend": "bm25", "call_timeout": 0}, "call_timeout must be > 0"),
        ({"backend": "bm25", "scenario_path": "nowhere.yaml"}, "nowhere.yaml: cannot read file"),
        ({"backend": "bm25", "scenario_path": PLUGINS}, "no scenario files found in"),
    ],
)
def test_bad_arguments_are_one_clear_line(kwargs: dict[str, Any], expected: str, tmp_path: Path):
    kwargs = {"scenario_path": SCENARIO, "out": tmp_path, **kwargs}
    with pytest.raises(ValueError) as caught:
        DriftHarness(**kwargs)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_arm_names_come_from_the_name_attribute_or_the_class_name(tmp_path: Path):
    class Renamed(EchoMemory):
        name = "bm25"  # a registered backend's name: would be mistaken for it

    class NoName(EchoMemory):
        name = None  # type: ignore[assignment]

    class BadName(EchoMemory):
        name = "Echo-Memory"

    harness = DriftHarness(
        backend=[NoName(), "bm25", "pkg.module:Thing"],
        gates=["hard", "soft:2"],
        scenario_path=SCENARIO,
        out=tmp_path,
    )
    assert [a.key for a in harness.arms] == [
        "noname@hard",
        "noname@soft:2",
        "bm25@hard",
        "bm25@soft:2",
        "pkg.module:Thing@hard",
        "pkg.module:Thing@soft:2",
    ]
    with pytest.raises(ValueError, match="'bm25' is a registered backend's"):
        DriftHarness(backend=Renamed(), scenario_path=SCENARIO, out=tmp_path)
    with pytest.raises(ValueError, match=r"its name attribute, 'Echo-Memory', is not a valid"):
        DriftHarness(backend=BadName(), scenario_path=SCENARIO, out=tmp_path)


def test_a_run_on_a_folder_another_run_holds_is_refused_in_one_line(tmp_path: Path):
    harness = DriftHarness(backend=EchoMemory(), scenario_path=SCENARIO, out=tmp_path / "data")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\n"
            "from drift_pipeline.storage import exclusive_root\n"
            f"with exclusive_root({str(tmp_path / 'data')!r}, 'drift run'):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RootBusy) as refused:
            harness.run_sync()
    finally:
        holder.kill()
        holder.wait()
    assert str(refused.value) == (
        f"{tmp_path / 'data'} is in use by drift run (pid {holder.pid}); wait for it to finish "
        "or give another --out"
    )
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [".drift-run.lock"]


def test_where_no_sandboxed_worker_starts_the_run_stops_before_any_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    checked: list[list[Path]] = []

    async def refuse(protect: list[Path], isolate: bool = True) -> str:
        # A machine where no sandboxed worker can start (the real failure needs one).
        checked.append(protect)
        raise IsolationError("isolation could not start: mount /root: Operation not permitted")

    monkeypatch.setattr("drift_pipeline.pipeline._run.check_isolation", refuse)
    harness = DriftHarness(backend=EchoMemory(), scenario_path=SCENARIO, out=tmp_path / "data")
    with pytest.raises(IsolationError, match=r"^isolation could not start: mount /root"):
        harness.run_sync()
    assert checked == [[(tmp_path / "data").resolve()]]
    assert not list((tmp_path / "data").rglob("*.parquet"))


def test_fault_limits_are_checked_in_one_line(tmp_path: Path):
    for kwargs, expected in (
        ({"max_consecutive_faults": -1}, "max_consecutive_faults must be >= 0"),
        ({"max_fault_rate": 1.5}, "max_fault_rate must be between 0 and 1"),
    ):
        with pytest.raises(ValueError, match=expected):
            DriftHarness(backend=EchoMemory(), scenario_path=SCENARIO, out=tmp_path, **kwargs)


def test_backend_options_for_no_backend_of_the_run_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match=r"backend_options names 'bm52', which is not a backend"):
        DriftHarness(
            backend="bm25", scenario_path=SCENARIO, out=tmp_path, backend_options={"bm52": {}}
        )


@pytest.mark.slow
def test_a_cell_past_the_fault_limit_is_reported_invalid_and_not_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    unchecked(
        "failing_store",
        "a third of its stores fail, past the fault limit; how the run ranks it is tested",
        monkeypatch,
    )
    # The 12-session horizon: a third of its stores fail, far past the default limit.
    report = DriftHarness(
        backend=[FailingStore(), EchoMemory()],
        scenario_path=SCENARIO,
        horizons="short",
        out=tmp_path,
    ).run_sync()
    cells = {cell.arm.key: cell for cell in report.cells}
    assert cells["echo_memory@hard"].valid
    assert not cells["failing_store@hard"].valid
    assert cells["failing_store@hard"].fault_rate > 0.05
    standings = report.standings
    assert [s.arm for s in standings] == ["echo_memory@hard", "failing_store@hard"]
    assert [s.valid for s in standings] == [True, False]
    summary = {c["arm"]: c for c in report.to_dict()["cells"]}
    assert summary["failing_store@hard"]["valid"] is False
