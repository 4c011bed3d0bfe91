"""An example metric reaches ``drift run``'s leaderboard and JSON summary and ``drift compare``
by its registration alone: in-process, and as an installed package's entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from metric_registry import (
    EXAMPLE_PACKAGE,
    example_importable,
    example_spec,
    install_example,
    registered,
)

from drift_pipeline.cli import main

SCENARIO = Path(__file__).parent / "fixtures" / "scenarios" / "valid" / "ua-dense-002.yaml"
DRIFT = str(Path(sys.executable).with_name("drift"))
# full_context, not fact_store: fact_store's rule extractor keeps almost nothing of this short
# world, so under the careful reader it recalls no more than the amnesiac.
BACKENDS = ("--backend", "full_context", "--backend", "amnesiac")
PAIR = ("--backend-a", "full_context", "--backend-b", "amnesiac")


def _run_args(out: Path, summary: Path) -> list[str]:
    where = ["--out", str(out), "--json", str(summary)]
    return ["run", str(SCENARIO), "--horizon", "short", *BACKENDS, *where]


def _compare_args(out: Path) -> list[str]:
    return ["compare", str(SCENARIO), *PAIR, "--horizon", "short", "--out", str(out)]


def _checks(
    leaderboard: str, summary: dict[str, object], compare: str, registered: list[str]
) -> None:
    header = leaderboard.splitlines()[0].split()
    # The registered metric's column follows the suite's, before the verification status.
    assert header[-3:] == ["LPS", "Recall", "status"]
    cells = summary["cells"]
    assert isinstance(cells, list)
    for cell in cells:
        # After the suite's figures, in registration order.
        assert list(cell["metrics"])[-2:] == registered
        figure = cell["metrics"]["recall_accuracy"]
        assert 0.0 <= figure["ci_low"] <= figure["value"] <= figure["ci_high"] <= 1.0
    by_arm = {cell["arm"]: cell["metrics"]["recall_accuracy"]["value"] for cell in cells}
    assert by_arm["full_context@hard"] > by_arm["amnesiac@hard"]
    line = next(line for line in compare.splitlines() if "recall_accuracy" in line)
    difference = float(line.split()[1])
    assert difference == pytest.approx(
        by_arm["full_context@hard"] - by_arm["amnesiac@hard"], abs=5e-4
    )


def test_a_metric_registered_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example_importable(monkeypatch)
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    runner = CliRunner()
    with registered(example_spec("RECALL_ACCURACY"), example_spec("EMPTY_READS")):
        ran = runner.invoke(main, _run_args(out, summary))
        assert ran.exit_code == 0, ran.output
        compared = runner.invoke(main, _compare_args(out))
        assert compared.exit_code == 0, compared.output
    registered_order = ["recall_accuracy", "empty_reads"]
    _checks(ran.stdout, json.loads(summary.read_text()), compared.stdout, registered_order)
    stored = {
        name
        for path in (out / "cell_metrics").rglob("*.parquet")
        for name in pq.read_table(path, columns=["metric"]).column("metric").to_pylist()
    }
    assert {"recall_accuracy", "empty_reads"} <= stored


def test_a_metric_of_an_installed_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install_example(site, monkeypatch, on_path=False)
    # A fresh process finds the distribution on its path like any installed one; the example
    # package's own folder is not on it.
    env = {**os.environ, "PYTHONPATH": str(site)}
    assert str(EXAMPLE_PACKAGE) not in env["PYTHONPATH"]
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    ran = subprocess.run(
        [DRIFT, *_run_args(out, summary)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    compared = subprocess.run(
        [DRIFT, *_compare_args(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert compared.returncode == 0, compared.stderr
    by_entry_point_name = ["empty_reads", "recall_accuracy"]
    _checks(ran.stdout, json.loads(summary.read_text()), compared.stdout, by_entry_point_name)
