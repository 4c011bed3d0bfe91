"""``drift compare`` and ``drift query`` on a finished run, through the real command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main

DRIFT = str(Path(sys.executable).parent / "drift")

SCENARIO = """\
id: compare-query-check
seed: 77
replicates: 2
paradigm: user_assistant
horizon:
  short: { sessions: 24, session_gap_hours: 12 }
noise_ratio: 0.5
entities:
  - { id: principal, type: human }
  - { id: assistant, type: assistant_agent }
checkpoints:
  - { every: 12, probe_types: [recall, action, revision] }
"""


def _drift(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DRIFT, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cq")
    (root / "s.yaml").write_text(SCENARIO)
    done = _drift(
        "run",
        "s.yaml",
        "--backend",
        "fact_store",
        "--backend",
        "full_context",
        "--out",
        "data",
        "--json",
        "summary.json",
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    return root


def test_query_reads_every_table(finished: Path) -> None:
    done = _drift(
        "query",
        "select count(*) as n from probes",
        "--out",
        "data",
        "--format",
        "json",
        cwd=finished,
    )
    assert done.returncode == 0, done.stderr
    n_probes = json.loads(done.stdout)[0]["n"]
    assert n_probes > 0
    done = _drift(
        "query",
        "select arm, count(*) as n from probe_answers group by arm order by arm",
        "--out",
        "data",
        "--format",
        "csv",
        cwd=finished,
    )
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "arm,n"
    # Every arm (the two asked for plus the reference compressor) answered every probe.
    assert {line.split(",")[0] for line in lines[1:]} == {
        "fact_store@hard",
        "full_context@hard",
        "reference_compressor@hard",
    }
    assert all(int(line.split(",")[1]) == n_probes for line in lines[1:])
    for table in (
        "latent_profiles",
        "event_schedules",
        "transcripts",
        "ground_truth",
        "memory_snapshots",
        "retrievals",
        "cell_metrics",
        "cost_curves",
    ):
        # The same command in this process: the two calls above ran the installed one.
        result = CliRunner().invoke(
            main, ["query", f"select count(*) as n from {table}", "--out", str(finished / "data")]
        )
        assert result.exception is None and result.exit_code == 0, (table, result.output)
        assert result.stdout.strip(), table


def test_query_error_is_one_line(finished: Path) -> None:
    done = _drift("query", "select nope from nowhere", "--out", "data", cwd=finished)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "query failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_compare_reports_paired_differences(finished: Path) -> None:
    done = _drift(
        "compare",
        "s.yaml",
        "--backend-a",
        "fact_store",
        "--backend-b",
        "full_context",
        "--out",
        "data",
        cwd=finished,
    )
    assert done.returncode == 0, done.stderr
    assert "fact_store@hard − full_context@hard" in done.stdout
    selectivity = next(
        line for line in done.stdout.splitlines() if line.strip().startswith("selectivity")
    )
    value = float(selectivity.split()[1])
    summary = json.loads((finished / "summary.json").read_text())
    by_backend = {c["backend"]: c["metrics"]["selectivity"]["value"] for c in summary["cells"]}
    assert value == pytest.approx(by_backend["fact_store"] - by_backend["full_context"], abs=1e-3)


def test_compare_of_an_arm_with_itself_is_refused(finished: Path) -> None:
    done = _drift(
        "compare",
        "s.yaml",
        "--backend-a",
        "fact_store",
        "--backend-b",
        "fact_store",
        "--out",
        "data",
        cwd=finished,
    )
    assert done.returncode == 2
    assert "same arm" in done.stderr


def test_compare_runs_again_an_arm_stored_with_other_backend_options(
    finished: Path, tmp_path: Path
) -> None:
    root = tmp_path / "copy"
    shutil.copytree(finished, root)
    manifest = root / "data" / "_manifests" / "run.json"

    def compare(config: str | None) -> dict[str, Any]:
        args = ["compare", str(root / "s.yaml"), "--backend-a", "fact_store"]
        args += ["--backend-b", "full_context", "--out", str(root / "data")]
        if config is not None:
            (root / "backends.yaml").write_text(config)
            args += ["--backend-config", str(root / "backends.yaml")]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        loaded: dict[str, Any] = json.loads(manifest.read_text())
        return loaded

    # Stored with no options; asked with budget_tokens 200: fact_store alone runs again.
    configured = compare("fact_store: {budget_tokens: 200}\n")
    assert configured["arm_options"]["fact_store@hard"] == {"budget_tokens": 200}
    assert "full_context@hard" not in configured["arms"]
    written = manifest.stat().st_mtime_ns
    # The same options again: the stored cells are that configuration, nothing runs.
    assert compare("fact_store: {budget_tokens: 200}\n") == configured
    assert manifest.stat().st_mtime_ns == written
    # Back to the defaults: the cells run with 200 are not reused for them.
    assert compare(None)["arm_options"]["fact_store@hard"] == {}
