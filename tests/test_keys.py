"""World and cell keys: one spelling, parsed in one place, and what storage makes of them."""

from __future__ import annotations

import pytest

from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.memory import Arm
from drift_pipeline.storage import MEMORY_SNAPSHOTS, PROBES, partition_file, partition_values


def test_world_key_round_trip() -> None:
    world = WorldKey.parse("ua-baseline-001/long")
    assert world == WorldKey("ua-baseline-001", "long") == WorldKey.of("ua-baseline-001", "long")
    assert world.partition_key == str(world) == "ua-baseline-001/long"
    assert world.partition_values == {"scenario": "ua-baseline-001", "horizon": "long"}


@pytest.mark.parametrize(
    "key",
    ["ua-baseline-001", "ua-baseline-001/forever", "/long", "a/b/long", "a...b/long", "a=b/long"],
)
def test_world_key_rejects_malformed(key: str) -> None:
    with pytest.raises(ValueError, match=r"world key .* is not '<scenario id>/<horizon>'"):
        WorldKey.parse(key)


def test_world_key_of_checks_the_horizon() -> None:
    with pytest.raises(ValueError, match="'s/forever'"):
        WorldKey.of("s", "forever")


def test_cell_key_round_trip() -> None:
    arm = Arm.parse("pkg.mod:Cls@soft:3")
    cell = CellKey(WorldKey("ua-quiet-decades-006", "medium"), arm.key)
    assert cell.partition_key == str(cell) == "pkg.mod:Cls@soft:3|ua-quiet-decades-006/medium"
    assert CellKey.parse(cell.partition_key) == cell
    assert Arm.parse(cell.arm_key) == arm
    assert cell.partition_values == {
        "scenario": "ua-quiet-decades-006",
        "horizon": "medium",
        "arm": "pkg.mod:Cls@soft:3",
    }


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("bm25@hard", "is not '<arm>|<scenario id>/<horizon>'"),
        ("bm25@hard|a/long|b", "is not '<arm>|<scenario id>/<horizon>'"),
        ("bm25|ua-baseline-001/long", "arm 'bm25' is not '<backend>@<gate>'"),
        ("@hard|ua-baseline-001/long", "is not '<backend>@<gate>'"),
        ("bm25@hard|ua-baseline-001/forever", "world key"),
    ],
)
def test_cell_key_rejects_malformed(key: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CellKey.parse(key)


def test_storage_takes_keys_where_it_took_hive_values() -> None:
    world = WorldKey("s", "short")
    cell = CellKey(world, "bm25@hard")
    assert partition_file(PROBES, world) == partition_file(PROBES, world.partition_values)
    assert partition_file(PROBES, world) == "probes/scenario=s/horizon=short/part-0.parquet"
    assert (
        partition_file(MEMORY_SNAPSHOTS, cell)
        == "memory_snapshots/scenario=s/horizon=short/arm=bm25@hard/part-0.parquet"
    )
    assert partition_values(cell) == cell.partition_values
    # A world key names no arm: a cell table's partition cannot be built from it.
    with pytest.raises(KeyError, match="arm"):
        partition_file(MEMORY_SNAPSHOTS, world)
