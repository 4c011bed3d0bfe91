"""``RunOptions.jobs``: worlds in separate processes give the same answers and figures."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import CellResult, RunOptions, run_benchmark
from drift_pipeline.sources import ScenarioSource

# Four worlds on two processes, so a process runs more than one world; one replicate each,
# since the processes split worlds, never replicates.
SCENARIO = """\
id: {id}
seed: {seed}
replicates: 1
paradigm: user_assistant
horizon:
  short: {{ sessions: 12, session_gap_hours: 6 }}
  medium: {{ sessions: 24, session_gap_days: 2 }}
noise_ratio: 0.6
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.4, C: 0.8, E: 0.3, A: 0.5, N: 0.6 }}
  - id: helper
    type: assistant_agent
    capability_profile: {{ context_window: 3000 }}
checkpoints:
  - {{ every: 12, probe_types: [recall, action, revision] }}
"""

ARMS = [Arm.parse("bm25@hard"), Arm.parse("full_context@hard")]
# Measured latencies differ between any two runs; everything else must not.
LATENCY = ("read_ms", "write_ms", "ttfrt_ms", "dialectic_ms", "lps", "drift_e")


@pytest.mark.slow
def test_parallel_worlds_match_serial(tmp_path: Path) -> None:
    files = []
    for index, seed in enumerate((11, 12)):
        path = tmp_path / f"jobs-{index}.yaml"
        path.write_text(SCENARIO.format(id=f"jobs-{index}", seed=seed), encoding="utf-8")
        files.append(ScenarioSource.load(path))
    serial = run_benchmark(files, RunOptions(arms=ARMS, out=tmp_path / "serial"))
    parallel = run_benchmark(files, RunOptions(arms=ARMS, out=tmp_path / "parallel", jobs=2))

    def key(cell: CellResult) -> tuple[str, str, str]:
        return (cell.scenario, cell.horizon, cell.arm.key)

    assert [key(c) for c in serial.cells] == [key(c) for c in parallel.cells]
    assert len(serial.cells) == 2 * 2 * len(ARMS)
    assert serial.manifest == parallel.manifest
    for a, b in zip(serial.cells, parallel.cells, strict=True):
        for row_a, row_b in zip(a.metrics.rows, b.metrics.rows, strict=True):
            if row_a.metric.startswith(LATENCY):
                continue
            assert row_a == row_b, (key(a), row_a.metric)
    answers = sorted((tmp_path / "serial" / "probe_answers").rglob("*.parquet"))
    assert len(answers) == 2 * 2 * (len(ARMS) + 1)
    for path in answers:
        twin = tmp_path / "parallel" / path.relative_to(tmp_path / "serial")
        assert pq.read_table(path).equals(pq.read_table(twin)), path
