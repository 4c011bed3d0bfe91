"""A BrainCore dataset as Dagster world partitions: the catalog opens ``braincore:PATH``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main
from drift_pipeline.orchestration.partitions import scenario_worlds
from drift_pipeline.orchestration.resources import ScenarioCatalog, default_catalog
from drift_pipeline.pipeline import connect, stored_cells
from drift_pipeline.storage import StorageRoot

PROJECT = Path(__file__).resolve().parents[2]


def test_the_catalog_lists_and_loads_imported_worlds(tiny_dataset: Path, tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    catalog = ScenarioCatalog(paths=[str(tmp_path / "scenarios"), f"braincore:{tiny_dataset}"])
    assert catalog.files() == []
    assert [w.partition_key for w in scenario_worlds(catalog.scenarios())] == [
        "braincore-tiny/short"
    ]
    assert catalog.load("braincore-tiny").kind == "braincore"
    with pytest.raises(LookupError, match="no scenario with id 'other'"):
        catalog.load("other")


def test_drift_run_via_dagster_runs_an_imported_dataset(
    tiny_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    result = CliRunner().invoke(
        main,
        [
            "run",
            f"braincore:{tiny_dataset}",
            "--backend",
            "bm25",
            "--via",
            "dagster",
            "--out",
            str(out),
            "--json",
            str(summary),
        ],
    )
    assert result.exit_code == 0, result.output
    assert [row["arm"] for row in json.loads(summary.read_text())["arms"]] == ["bm25@hard"]
    stored, problems = stored_cells(connect(StorageRoot.from_url(str(out))))
    assert problems == []
    assert {(c.scenario, c.horizon, c.arm.key) for c in stored} == {
        ("braincore-tiny", "short", "bm25@hard"),
        ("braincore-tiny", "short", "reference_compressor@hard"),  # the world baseline
    }
    with dg.DagsterInstance.get() as instance:
        worlds = instance.get_materialized_partitions(dg.AssetKey("probes"))
    assert worlds == {"braincore-tiny/short"}


def test_the_catalog_variable_keeps_source_names_whole(
    tiny_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "DRIFT_SCENARIOS", os.pathsep.join([str(tmp_path), f"braincore:{tiny_dataset}"])
    )
    assert default_catalog().paths == [str(tmp_path), f"braincore:{tiny_dataset}"]
    assert [s.id for s in default_catalog().scenarios()] == ["braincore-tiny"]
