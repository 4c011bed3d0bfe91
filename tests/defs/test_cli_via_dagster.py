"""``drift run --via dagster`` prints and writes the same figures as the direct path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DRIFT = str(Path(sys.executable).parent / "drift")
REPO = Path(__file__).resolve().parents[2]
SCENARIO = """\
id: via-dagster-cli
seed: 9
replicates: 2
paradigm: user_assistant
horizon:
  short: { sessions: 18, session_gap_hours: 6 }
noise_ratio: 0.6
entities:
  - { id: principal, type: human }
  - { id: assistant, type: assistant_agent }
"""
# Measured latencies differ between any two runs; everything else must be identical.
LATENCY_DERIVED = {"lps", "drift_e"}


def _run(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DRIFT, "run", "s.yaml", "--backend", "bm25", "--backend", "fact_store", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_via_dagster_matches_direct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    shutil.copy(REPO / "dagster.yaml", tmp_path / "dagster.yaml")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    via = _run(tmp_path, "--out", "d1", "--json", "j1.json", "--via", "dagster", env=env)
    assert via.returncode == 0, via.stderr
    direct = _run(tmp_path, "--out", "d2", "--json", "j2.json", env=env)
    assert direct.returncode == 0, direct.stderr

    a = json.loads((tmp_path / "j1.json").read_text())
    b = json.loads((tmp_path / "j2.json").read_text())
    assert [c["arm"] for c in a["cells"]] == [c["arm"] for c in b["cells"]]
    for cell_a, cell_b in zip(a["cells"], b["cells"], strict=True):
        for metric, value in cell_a["metrics"].items():
            if metric not in LATENCY_DERIVED:
                assert value == cell_b["metrics"][metric], (cell_a["arm"], metric)
        assert cell_a["tokens"] == cell_b["tokens"]

    # The instance recorded materializations of world and cell assets.
    import dagster as dg

    # Dagster's own SQLite under DAGSTER_HOME, whatever the working directory.
    assert (tmp_path / "history" / "runs.db").is_file()
    instance = dg.DagsterInstance.from_config(str(tmp_path))
    keys = {key.to_user_string() for key in instance.all_asset_keys()}
    assert {"transcripts", "probes", "memory_snapshots", "retrievals", "cell_metrics"} <= keys
