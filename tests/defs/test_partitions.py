"""Partition keys parsed in one place; worlds and arms registered from the repository."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from drift_pipeline.definitions import defs as load_defs
from drift_pipeline.defs.sensors import partition_registry
from drift_pipeline.memory import Arm
from drift_pipeline.memory.backends import default_backend_names
from drift_pipeline.orchestration.partitions import (
    CellKey,
    WorldKey,
    cell_partition_key,
    cells_partitions,
    register_partitions,
    repository_arms,
    scenario_worlds,
)
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import REFERENCE_ARM, load_ablations

from .conftest import REPO_SCENARIOS, TINY_ID, sqlite_home, write_tiny


def test_world_key_round_trip() -> None:
    world = WorldKey.parse("ua-baseline-001/long")
    assert world == WorldKey("ua-baseline-001", "long")
    assert world.partition_key == "ua-baseline-001/long"
    assert world.partition_values == {"scenario": "ua-baseline-001", "horizon": "long"}


@pytest.mark.parametrize(
    "key", ["ua-baseline-001", "ua-baseline-001/forever", "/long", "a/b/long", "a...b/long"]
)
def test_world_key_rejects_malformed(key: str) -> None:
    with pytest.raises(ValueError, match="scenario id>/<horizon>"):
        WorldKey.parse(key)


def test_cell_key_round_trip_through_dagster() -> None:
    cell = CellKey(
        WorldKey("ua-quiet-decades-006", "medium"), Arm.parse("full_context@summary:256").key
    )
    assert cell.partition_key == "full_context@summary:256|ua-quiet-decades-006/medium"
    assert CellKey.parse(cell.partition_key) == cell
    assert CellKey.parse(cell_partition_key(cell)) == cell
    assert str(cell_partition_key(cell)) == cell.partition_key
    # Dagster builds the same key from the dimensions, so both sides agree on its spelling.
    parsed = cells_partitions.get_partition_key_from_str(cell.partition_key)
    assert isinstance(parsed, dg.MultiPartitionKey)
    assert parsed.keys_by_dimension == {"world": cell.world.partition_key, "arm": cell.arm_key}


def test_cell_key_rejects_malformed() -> None:
    with pytest.raises(ValueError, match="cell key"):
        CellKey.parse("bm25@hard")
    with pytest.raises(ValueError, match="arm"):
        CellKey.parse("bm25|ua-baseline-001/long")


def test_repository_ablations_and_arms() -> None:
    ablations = {a.name: a for a in load_ablations(REPO_SCENARIOS / "ablations.yaml")}
    assert {"soft-gates", "summary-gates"} <= set(ablations)
    arms = repository_arms(ablations.values())
    keys = [arm.key for arm in arms]
    hard = [f"{name}@hard" for name in default_backend_names() if name != REFERENCE_ARM.backend]
    assert keys[: len(hard)] == hard
    assert REFERENCE_ARM.key not in keys  # a world baseline (reference_memory), not an arm
    for wanted in ("bm25@soft:3", "full_context@summary:256", "fact_store@soft:1"):
        assert wanted in keys
    assert len(keys) == len(set(keys))


def test_registry_sensor_registers_worlds_and_ablation_arms() -> None:
    catalog = ScenarioCatalog(paths=[str(REPO_SCENARIOS)])
    with dg.DagsterInstance.ephemeral() as instance:
        context = dg.build_sensor_context(instance=instance)
        result = partition_registry(context, scenarios=catalog)
        assert isinstance(result, dg.SensorResult)
        requested = {
            r.partitions_def_name: set(r.partition_keys)
            for r in result.dynamic_partitions_requests or []
        }
        assert "ua-baseline-001/long" in requested["world"]
        assert {"bm25@soft:3", "full_context@summary:256"} <= requested["arm"]
        expected = scenario_worlds(catalog.scenarios())
        assert requested["world"] == {w.partition_key for w in expected}
        register_partitions(instance, expected, repository_arms(catalog.ablations()))
        again = partition_registry(dg.build_sensor_context(instance=instance), scenarios=catalog)
        assert isinstance(again, dg.SkipReason)


def test_storage_root_is_a_folder_or_an_s3_prefix() -> None:
    local = DriftStorage(root="data").path()
    assert local.is_local and local.local_path is not None
    assert local.local_path.name == "data"
    remote = DriftStorage(root="s3://bucket/prefix").path()
    assert not remote.is_local and remote.url == "s3://bucket/prefix"
    assert remote.protect_paths() == ()


def test_a_broken_scenario_file_does_not_break_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "scenarios"
    write_tiny(folder)
    (folder / "broken.yaml").write_text("id: broken\nparadigm: user_assistant\n", "utf-8")
    sqlite_home(tmp_path / "home", monkeypatch)
    monkeypatch.setenv("DRIFT_SCENARIOS", str(folder))
    definitions = load_defs()
    assert definitions.resolve_asset_graph().get_all_asset_keys()
    assert "could not register partitions at load time" in caplog.text
    catalog = ScenarioCatalog(paths=[str(folder)])
    assert catalog.load(TINY_ID).id == TINY_ID
    with pytest.raises(LookupError, match=r"no scenario with id 'absent'.*invalid files: .*broken"):
        catalog.load("absent")


def test_load_time_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "scenarios"
    write_tiny(folder)
    home = sqlite_home(tmp_path / "home", monkeypatch)
    monkeypatch.setenv("DRIFT_SCENARIOS", str(folder))
    load_defs()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_dynamic_partitions("world") == [f"{TINY_ID}/short"]
        assert f"{default_backend_names()[0]}@hard" in instance.get_dynamic_partitions("arm")
