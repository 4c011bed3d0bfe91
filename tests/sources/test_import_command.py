"""``drift import KIND PATH``: any registered importer's worlds written, nothing run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main
from drift_pipeline.keys import WorldKey
from drift_pipeline.sources import open_source, register_source, unregister_source
from drift_pipeline.storage import CELL_TABLES, PROBES, WORLD_TABLES, StorageRoot, partition_file

from .conftest import EXAMPLE_FILE, EXAMPLE_TARGET

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"
LOCOMO_FILE = FIXTURES / "locomo_small.json"


@pytest.fixture
def example_importer() -> Iterator[None]:
    register_source("example", EXAMPLE_TARGET)
    try:
        yield
    finally:
        unregister_source("example")


@pytest.mark.parametrize(
    ("kind", "path", "worlds"),
    [
        ("locomo", LOCOMO_FILE, ["locomo-conv-7", "locomo-conv-8"]),
        ("longmemeval", FIXTURES / "longmemeval_small.json", ["longmemeval-e47becba"]),
    ],
)
def test_import_writes_the_worlds_and_nothing_else(
    tmp_path: Path, kind: str, path: Path, worlds: list[str]
) -> None:
    result = CliRunner().invoke(main, ["import", kind, str(path), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for source_id in worlds:
        world = WorldKey(source_id, "long")
        assert all((tmp_path / partition_file(t, world)).is_file() for t in WORLD_TABLES)
    assert not any((tmp_path / t.name).exists() for t in CELL_TABLES)


def test_import_works_for_an_importer_registered_elsewhere(
    example_importer: None, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        main, ["import", "example", str(EXAMPLE_FILE), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    world = WorldKey("example-chat-001", "short")
    assert (tmp_path / partition_file(PROBES, world)).is_file()


def test_an_option_reaches_the_importer_and_changes_the_world_identity(tmp_path: Path) -> None:
    args = ["import", "locomo", str(LOCOMO_FILE), "--out", str(tmp_path)]
    assert CliRunner().invoke(main, [*args, "--option", "midpoint=true"]).exit_code == 0
    probes = StorageRoot.from_url(tmp_path).read_table(PROBES, WorldKey("locomo-conv-7", "long"))
    assert sorted(set(probes.column("checkpoint").to_pylist())) == [2, 4]
    plain = open_source(f"locomo:{LOCOMO_FILE}")[0]
    with_midpoint = open_source(f"locomo:{LOCOMO_FILE}?midpoint=yes")[0]
    assert plain.version != with_midpoint.version
    assert with_midpoint.is_current(tmp_path, "long") and not plain.is_current(tmp_path, "long")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "nope", "x.json"], "unknown importer 'nope' (known: braincore, locomo,"),
        (["import", "scenario", "scenarios/"], "unknown importer 'scenario'"),
        (["import", "locomo", "missing.json"], "no such file or folder missing.json"),
        (["import", "locomo", "LOCOMO", "--option", "midpoint"], "is not NAME=VALUE"),
        (["import", "locomo", "LOCOMO", "--option", "when=later"], "does not take these options"),
        (["import", "locomo", "LOCOMO", "--option", "midpoint=perhaps"], "is not true or false"),
    ],
)
def test_bad_imports_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    args = [a.replace("LOCOMO", str(LOCOMO_FILE)) for a in args]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert not (tmp_path / "out").exists()
