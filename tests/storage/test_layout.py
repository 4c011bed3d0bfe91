"""Hive Parquet layout and staged, atomic writes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from drift_pipeline.storage import (
    LATENT_PROFILES,
    PART_FILE,
    StagedWrite,
    glob,
    partition_dir,
    staged,
    write_table,
)

KEYS = {"scenario": "demo-1", "horizon": "short"}


def _profiles(rows: int = 2, replicate_type: pa.DataType | None = None) -> pa.Table:
    return pa.table(
        {
            "scenario": ["demo-1"] * rows,
            "horizon": ["short"] * rows,
            "replicate": pa.array(range(rows), type=replicate_type or pa.int32()),
            "entity_id": [f"e{i}" for i in range(rows)],
            "entity_type": ["human"] * rows,
            "name": ["Ada"] * rows,
            "stable_attributes": ["{}"] * rows,
            "initial_state": ["{}"] * rows,
        }
    )


def test_partition_dir_is_hive_style(tmp_path: Path):
    assert partition_dir(tmp_path, LATENT_PROFILES, KEYS) == (
        tmp_path / "latent_profiles" / "scenario=demo-1" / "horizon=short"
    )


@pytest.mark.parametrize("bad", ["", "a/b", "..", ".", "x=y"])
def test_partition_values_cannot_escape_their_folder(tmp_path: Path, bad: str):
    with pytest.raises(ValueError, match="cannot be a folder name"):
        partition_dir(tmp_path, LATENT_PROFILES, {"scenario": bad, "horizon": "short"})


def test_a_missing_partition_key_is_an_error(tmp_path: Path):
    with pytest.raises(KeyError):
        partition_dir(tmp_path, LATENT_PROFILES, {"scenario": "demo-1"})


def test_glob_reads_every_partition():
    assert glob("/data/", LATENT_PROFILES) == "/data/latent_profiles/**/*.parquet"
    assert glob(Path("s"), LATENT_PROFILES) == "s/latent_profiles/**/*.parquet"


def test_write_table_is_deterministic(tmp_path: Path):
    write_table(tmp_path / "a" / PART_FILE, _profiles())
    write_table(tmp_path / "b" / PART_FILE, _profiles())
    assert (tmp_path / "a" / PART_FILE).read_bytes() == (tmp_path / "b" / PART_FILE).read_bytes()


def test_staged_files_appear_only_on_commit(tmp_path: Path):
    writer = StagedWrite(tmp_path)
    final = writer.put(LATENT_PROFILES, KEYS, _profiles(replicate_type=pa.int64()))
    manifest = writer.put_text("_manifests/demo.json", "{}\n")
    assert not final.exists() and not manifest.exists()
    assert writer.commit() == [final, manifest]
    assert final == partition_dir(tmp_path, LATENT_PROFILES, KEYS) / PART_FILE
    # The table was cast to the storage schema on the way in.
    assert pq.read_schema(final).remove_metadata() == LATENT_PROFILES.schema
    assert manifest.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_manifests", "latent_profiles"]


def test_a_failure_inside_staged_discards_everything(tmp_path: Path):
    root = tmp_path / "new" / "root"
    with pytest.raises(RuntimeError), staged(root) as writer:
        writer.put(LATENT_PROFILES, KEYS, _profiles())
        raise RuntimeError("boom")
    assert not (tmp_path / "new").exists()  # folders it created are gone too


def test_a_discarded_write_leaves_an_existing_root_as_it_was(tmp_path: Path):
    (tmp_path / "other.txt").write_text("keep")
    with staged(tmp_path) as writer:
        writer.put(LATENT_PROFILES, KEYS, _profiles(rows=3))
    before = (partition_dir(tmp_path, LATENT_PROFILES, KEYS) / PART_FILE).read_bytes()
    with pytest.raises(KeyboardInterrupt), staged(tmp_path) as writer:
        writer.put(LATENT_PROFILES, KEYS, _profiles(rows=1))
        raise KeyboardInterrupt
    assert (partition_dir(tmp_path, LATENT_PROFILES, KEYS) / PART_FILE).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latent_profiles", "other.txt"]


def test_a_commit_replaces_the_partition_file(tmp_path: Path):
    for rows in (3, 1):
        with staged(tmp_path) as writer:
            writer.put(LATENT_PROFILES, KEYS, _profiles(rows=rows))
    folder = partition_dir(tmp_path, LATENT_PROFILES, KEYS)
    assert [p.name for p in folder.iterdir()] == [PART_FILE]
    assert pq.read_table(folder / PART_FILE).num_rows == 1
    assert not (tmp_path / ".staging").exists()


def test_nulls_in_a_required_column_are_refused(tmp_path: Path):
    data = _profiles().set_column(5, "name", pa.array(["Ada", None]))
    with pytest.raises((ValueError, pa.ArrowInvalid)), staged(tmp_path) as writer:
        writer.put(LATENT_PROFILES, KEYS, data)
    assert list(tmp_path.iterdir()) == []


def test_put_many_writes_what_put_writes_in_order(tmp_path: Path):
    items = [
        (LATENT_PROFILES, {"scenario": "demo-1", "horizon": horizon}, _profiles(rows=rows))
        for horizon, rows in (("short", 2), ("medium", 5), ("long", 3))
    ]
    with staged(tmp_path / "one") as writer:
        one = [writer.put(*item) for item in items]
    with staged(tmp_path / "many") as writer:
        many = writer.put_many(items)
    assert [p.relative_to(tmp_path / "many") for p in many] == [
        p.relative_to(tmp_path / "one") for p in one
    ]
    assert [p.read_bytes() for p in many] == [p.read_bytes() for p in one]


def test_a_failed_file_in_put_many_discards_every_file(tmp_path: Path):
    bad = _profiles().set_column(5, "name", pa.array(["Ada", None]))
    items = [
        (LATENT_PROFILES, KEYS, _profiles()),
        (LATENT_PROFILES, {**KEYS, "horizon": "long"}, bad),
    ]
    with pytest.raises((ValueError, pa.ArrowInvalid)), staged(tmp_path) as writer:
        writer.put_many(items)
    assert list(tmp_path.iterdir()) == []


def _write_many(root: str, name: str) -> None:
    for number in range(150):
        with staged(Path(root)) as writer:
            writer.put_text(f"_manifests/{name}-{number}.json", "{}\n")


def test_writers_in_several_processes_share_the_staging_folder(tmp_path: Path):
    # `drift run --jobs N` stages from N processes into one root: one writer's clean-up must
    # not trip over another's staging folder appearing or vanishing.
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(_write_many, str(tmp_path), f"w{i}") for i in range(3)]
        for future in futures:
            future.result()
    assert len(list((tmp_path / "_manifests").iterdir())) == 450
    assert not (tmp_path / ".staging").exists()
