"""The definitions load, validate from the command line, and declare what the issue asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
import yaml

from drift_pipeline.definitions import defs as load_defs
from drift_pipeline.orchestration.metadata import (
    CELL_COST_CURVE_KEYS,
    CELL_METRICS_KEYS,
    CELL_METRICS_TEXT_KEYS,
    COST_CURVES_KEYS,
    LEADERBOARD_KEYS,
    MEMORY_SNAPSHOTS_KEYS,
    PROBE_ANSWERS_KEYS,
    REFERENCE_MEMORY_KEYS,
    RETRIEVALS_KEYS,
    WORLD_BASELINES_KEYS,
    WORLD_TABLE_KEYS,
)
from drift_pipeline.orchestration.project import project_assets

from .conftest import PROJECT, REPO_SCENARIOS

DAGSTER = str(Path(sys.executable).with_name("dagster"))

ASSETS = {
    "latent_profiles",
    "event_schedules",
    "transcripts",
    "ground_truth",
    "probes",
    "reference_memory",
    "world_baselines",
    "memory_snapshots",
    "retrievals",
    "probe_answers",
    "cell_metrics",
    "cell_cost_curve",
    "leaderboard",
    "cost_curves",
}
WORLD = {"latent_profiles", "event_schedules", "transcripts", "ground_truth", "probes"}
CELL = {"memory_snapshots", "retrievals", "probe_answers", "cell_metrics", "cell_cost_curve"}


@pytest.fixture(scope="module")
def definitions() -> Iterator[dg.Definitions]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("DAGSTER_HOME", raising=False)  # no instance: nothing registered
        monkeypatch.setenv("DRIFT_SCENARIOS", str(REPO_SCENARIOS))
        yield load_defs()


def test_definitions_validate(definitions: dg.Definitions) -> None:
    dg.Definitions.validate_loadable(definitions)
    graph = definitions.resolve_asset_graph()
    assert {key.to_user_string() for key in graph.get_all_asset_keys()} == ASSETS
    assert {s.name for s in definitions.schedules or []} == {"nightly_leaderboard"}
    sensors = {s.name for s in definitions.sensors or []}
    assert sensors == {"partition_registry", "stale_cells", "changed_scenarios"}


def test_every_asset_declares_group_kinds_and_one_line_description() -> None:
    for assets_def in project_assets():
        for spec in assets_def.specs:
            name = spec.key.to_user_string()
            assert spec.group_name and spec.group_name != "default", name
            assert spec.kinds and spec.kinds <= {"python", "parquet", "duckdb"}, name
            assert spec.description and "\n" not in spec.description.strip(), name


def test_partitions_by_level(definitions: dg.Definitions) -> None:
    graph = definitions.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        partitions = graph.get(key).partitions_def
        name = key.to_user_string()
        if name in WORLD | {"reference_memory", "world_baselines"}:
            assert isinstance(partitions, dg.DynamicPartitionsDefinition), name
            assert partitions.name == "world"
        elif name in CELL:
            assert isinstance(partitions, dg.MultiPartitionsDefinition), name
            assert {d.name for d in partitions.partitions_defs} == {"world", "arm"}
        else:
            assert partitions is None, name


def test_checks_are_declared(definitions: dg.Definitions) -> None:
    graph = definitions.resolve_asset_graph()
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == {
        ("probes", "answerability_audit"),
        ("memory_snapshots", "rows_per_session"),
        ("memory_snapshots", "gate_lineage"),
        ("leaderboard", "sanity_arms"),
        ("leaderboard", "fault_rate_validity"),
        ("reference_memory", "rows_per_session"),
    }
    blocking = {spec.key.name for a in project_assets() for spec in a.check_specs if spec.blocking}
    assert blocking == {"answerability_audit", "gate_lineage"}


def test_metadata_vocabulary_is_fixed() -> None:
    vocabularies = [
        *WORLD_TABLE_KEYS.values(),
        MEMORY_SNAPSHOTS_KEYS,
        RETRIEVALS_KEYS,
        PROBE_ANSWERS_KEYS,
        CELL_METRICS_KEYS,
        CELL_METRICS_TEXT_KEYS,
        CELL_COST_CURVE_KEYS,
        WORLD_BASELINES_KEYS,
        REFERENCE_MEMORY_KEYS,
        LEADERBOARD_KEYS,
        COST_CURVES_KEYS,
    ]
    for keys in vocabularies:
        assert len(keys) == len(set(keys))
        assert all(k.startswith(("drift/", "dagster/")) for k in keys)


# --- the Dagster command line against workspace.yaml -----------------------------------------


def _dagster(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DAGSTER_HOME": str(home), "DRIFT_SCENARIOS": str(REPO_SCENARIOS)}
    env.pop("DRIFT_DATA_ROOT", None)
    return subprocess.run(
        [DAGSTER, *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dagster-home")


@pytest.mark.slow
def test_cli_definitions_validate_registers_partitions(cli_home: Path) -> None:
    done = _dagster(cli_home, "definitions", "validate", "-w", "workspace.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    # Loading registered the repository's worlds and arms (load-time registration).
    with dg.DagsterInstance.from_config(str(cli_home)) as instance:
        worlds = set(instance.get_dynamic_partitions("world"))
        arms = set(instance.get_dynamic_partitions("arm"))
    assert {"ua-baseline-001/short", "ua-baseline-001/long"} <= worlds
    assert {"bm25@hard", "bm25@soft:3"} <= arms
    # The reference compressor is each world's baseline (reference_memory), not an arm.
    assert "reference_compressor@hard" not in arms


@pytest.mark.slow
def test_cli_asset_list(cli_home: Path) -> None:
    done = _dagster(cli_home, "asset", "list", "-m", "drift_pipeline.definitions")
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) >= ASSETS


@pytest.mark.slow
def test_cli_schedule_list(cli_home: Path) -> None:
    done = _dagster(cli_home, "schedule", "list", "-w", "workspace.yaml")
    assert done.returncode == 0, done.stderr
    assert "nightly_leaderboard" in done.stdout


def test_the_instance_files_configure_stock_storages_under_dagster_home() -> None:
    # DAGSTER_HOME="$PWD/.dagster_home" (as the README says) reads the project's own files.
    home = PROJECT / ".dagster_home"
    assert (home / "dagster.yaml").resolve() == (PROJECT / "dagster.yaml").resolve()
    postgres = home / "postgres" / "dagster.yaml"
    assert postgres.resolve() == (PROJECT / "dagster.postgres.yaml").resolve()
    for name in ("dagster.yaml", "dagster.postgres.yaml"):
        config = yaml.safe_load((PROJECT / name).read_text(encoding="utf-8"))
        # Nothing of the project's and no path: Dagster's classes, files under DAGSTER_HOME.
        assert "drift_pipeline" not in json.dumps(config), name
        assert "base_dir" not in json.dumps(config), name


def test_a_stock_instance_keeps_its_files_under_dagster_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((PROJECT / "dagster.yaml").read_text(encoding="utf-8"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import dagster as dg; "
            "dg.DagsterInstance.get().add_dynamic_partitions('world', ['x/short'])",
        ],
        cwd=elsewhere,
        env={**os.environ, "DAGSTER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (home / "schedules" / "schedules.db").is_file()
    assert list(elsewhere.iterdir()) == []
