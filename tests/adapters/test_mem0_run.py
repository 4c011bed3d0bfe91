"""Mem0 as a real arm: a canonical world under the gate, and its model's faults in the loop.

The first test runs ``drift run`` as a user does on the medium horizon of a canonical scenario
(its first replicate: the world of replicate 0 is the same whatever the replicate count), with
no network; the second puts Mem0's extraction model behind the cell's token meter on loopback
and makes it fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from finished_run import FinishedRun, drift_run
from llm_server import TEST_API_KEY, FakeOpenAIServer
from memory.plugins import _support

from drift_pipeline.memory import Arm, LoopConfig, run_cell
from drift_pipeline.pipeline import CHECK_ENV

pytestmark = pytest.mark.slow  # whole cells through the sandbox

CANONICAL = Path(__file__).resolve().parents[2] / "scenarios" / "ua-instruction-revision-005.yaml"
STRONGEST = "unprivileged-user+mount-namespace"


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    folder = tmp_path_factory.mktemp("mem0-medium")
    one = re.sub(r"^replicates: \d+", "replicates: 1", CANONICAL.read_text(), flags=re.M)
    scenario = folder / CANONICAL.name
    scenario.write_text(one, encoding="utf-8")
    # As a user's run: the arm is checked before it is scored.
    return drift_run(
        scenario, folder, ["--horizon", "medium", "--backend", "mem0"], {CHECK_ENV: "1"}
    )


def test_a_canonical_medium_world_runs_through_mem0_to_a_leaderboard_row(
    medium: FinishedRun,
) -> None:
    assert medium.code == 0, medium.stderr[-3000:]
    row = next(r for r in medium.summary["arms"] if r["arm"] == "mem0@hard")
    assert row["valid"] and row["fault_rate"] == 0.0
    assert 0.0 < row["drift_c"]["value"] < 1.0 and row["selectivity"]["value"] is not None
    assert row["not_measured"] == {}  # its snapshot held everything it retrieved
    board = next(line for line in medium.stdout.splitlines() if line.startswith("mem0@hard "))
    assert "—" not in board and "not ranked" not in board
    assert "mem0: passed the conformance check" in medium.stdout
    assert "embedder sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)" in medium.stdout


def test_it_ran_sandboxed_and_recorded_like_a_built_in(medium: FinishedRun) -> None:
    manifest = medium.manifest()
    assert manifest["isolation"] == [STRONGEST]  # the reference arm's and Mem0's, alike
    service = manifest["services"]["mem0"]
    assert manifest["conformance"]["mem0"] == {
        "passed": True,
        "reason": None,
        "leak": None,
        "leak_allowed": False,
        "model_tokens": "metered",  # no model in raw mode; its embedder runs in its worker
    }
    assert service["sdk_version"] == "2.2.1" and "offline" in service["embedder"]
    assert manifest["backends"]["mem0"] == "1"
    rows = medium.query(
        "select arm, count(*) as sessions, count(error) as faults, "
        "count(storage_tokens) as measured from {memory_snapshots} group by arm order by arm"
    )
    assert rows == [
        {"arm": "mem0@hard", "sessions": 150, "faults": 0, "measured": 150},
        {"arm": "reference_compressor@hard", "sessions": 150, "faults": 0, "measured": 150},
    ]
    reads = medium.query(
        "select arm, count(*) as n, count(unreported) as hidden from {retrievals} group by arm"
    )
    assert {r["arm"]: (r["n"], r["hidden"]) for r in reads} == {
        "mem0@hard": (72, 0),
        "reference_compressor@hard": (72, 0),
    }


def _extract(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Mem0's extraction: one fact per user line of the session's new messages."""
    prompt = messages[-1]["content"]
    new = prompt.split("## New Messages\n", 1)[1].split("\n## ", 1)[0]
    facts = [line.removeprefix("user: ") for line in new.splitlines() if line.startswith("user: ")]
    return json.dumps({"memory": [{"id": str(i), "text": f} for i, f in enumerate(facts)]})


def test_extraction_goes_through_the_meter_and_its_failures_are_faults_of_the_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _support.generate_world(tmp_path / "scenarios", tmp_path / "data", "mem0-infer-t")
    answered: list[int] = []

    def extract_then_fail(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        answered.append(1)
        if len(answered) == 4:
            # The next extraction call and its one retry fail: that session's store faults.
            server.fail_next(500, times=2)
        return _extract(messages, body)

    with FakeOpenAIServer(extract_then_fail, api_key=TEST_API_KEY) as server:
        # The upstream's key: the harness's own, which the worker never sees (it gets the
        # meter's address and a key of the meter's).
        monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
        options = {
            "infer": True,
            "llm_base_url": server.base_url,
            "llm_model": "extractor-1",
            "max_retries": 1,
        }
        arm = Arm.parse("mem0@hard")
        cell = run_cell(root, "mem0-infer-t", "short", 1, arm, options, LoopConfig(concurrency=1))
    errors = [error for error in cell.snapshots.column("error").to_pylist() if error]
    assert len(errors) == 1 and "500" in errors[0], errors
    assert cell.snapshots.num_rows == _support.SESSIONS  # the run went on past it
    metered = sum(cell.snapshots.column("metered_write_tokens").to_pylist())
    reported = sum(cell.snapshots.column("reported_write_tokens").to_pylist())
    assert metered > 0 and reported == metered  # Mem0's counts are the endpoint's usage
    # Every model call went through the meter (its embedder runs in the worker): its spend is
    # known, and none was seen going around the meter.
    assert not any(cell.snapshots.column("models_outside_meter").to_pylist())
    assert set(cell.snapshots.column("unmetered_calls").to_pylist()) == {0}
    assert set(cell.retrievals.column("unmetered_calls").to_pylist()) == {0}
    assert cell.isolation == STRONGEST
    assert all(body["model"] == "extractor-1" for body in server.requests)
    for path in root.rglob("*"):
        assert not path.is_file() or TEST_API_KEY.encode() not in path.read_bytes(), path
