"""Reproducible, all-or-nothing writes: byte-identical reruns, no partial output on failure."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from helpers import (
    COMMUTER,
    HABIT_LOOP,
    TWO_DESKS,
    generate,
    table_files,
    tree_bytes,
    write_scenario,
)

import drift_pipeline.world._generate as generate_module
import drift_pipeline.world._write as write_module
from drift_pipeline.scenario import load_scenario
from drift_pipeline.storage import PART_FILE, WORLD_TABLES
from drift_pipeline.world import AuditError, world_manifest_path
from drift_pipeline.world._pool import close_workers

DRIFT = str(Path(sys.executable).with_name("drift"))


@pytest.fixture
def scenario_files(tmp_path: Path) -> list[Path]:
    return [write_scenario(tmp_path / "scenarios", text) for text in (COMMUTER, HABIT_LOOP)]


def test_two_generations_are_byte_identical(tmp_path: Path, scenario_files: list[Path]):
    generate(scenario_files, tmp_path / "one")
    generate(scenario_files, tmp_path / "two")
    one, two = tree_bytes(tmp_path / "one"), tree_bytes(tmp_path / "two")
    # 5 tables and a manifest for each of the three (scenario, horizon) worlds.
    assert len(one) == 3 * (len(WORLD_TABLES) + 1)
    assert one.keys() == two.keys()
    for name in one:
        assert one[name] == two[name], name


def test_parallel_generation_writes_the_same_bytes(tmp_path: Path, scenario_files: list[Path]):
    loaded = [load_scenario(path) for path in scenario_files]
    trees = []
    for workers in (1, 2, 3):
        out = tmp_path / f"workers-{workers}"
        write_module.generate_worlds(loaded, out, workers=workers)
        trees.append(tree_bytes(out))
    assert len(trees[0]) == 3 * (len(WORLD_TABLES) + 1)
    assert trees[0] == trees[1] == trees[2]


@pytest.fixture
def fresh_workers() -> Iterator[None]:
    """Kept generation workers forked during this test only (they see its monkeypatches)."""
    close_workers()
    yield
    close_workers()


def test_a_replicate_failing_in_a_worker_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_workers: None
):
    real = write_module.generate_replicate

    def flaky(spec, name, replicate, synthesizer=None):  # type: ignore[no-untyped-def]
        if replicate == 1:
            raise AuditError("simulated audit failure in replicate 1")
        return real(spec, name, replicate, synthesizer)

    monkeypatch.setattr(write_module, "generate_replicate", flaky)  # workers forked now see it
    scenario = write_scenario(tmp_path / "scenarios", COMMUTER)
    out = tmp_path / "out"
    with pytest.raises(AuditError, match="replicate 1"):
        write_module.generate_worlds([load_scenario(scenario)], out, workers=2)
    assert table_files(out) == []
    with pytest.raises(ValueError, match="workers must be at least 1"):
        write_module.generate_worlds([load_scenario(scenario)], out, workers=0)


def test_a_worker_that_dies_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_workers: None
):
    real = write_module._replicate_part

    def dying(loaded, horizon, replicate, synthesizer):  # type: ignore[no-untyped-def]
        if replicate == 1:
            os._exit(3)  # as a worker killed by the system would: no error to send back
        return real(loaded, horizon, replicate, synthesizer)

    monkeypatch.setattr(write_module, "_replicate_part", dying)
    scenario = write_scenario(tmp_path / "scenarios", COMMUTER)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="worker drift-world-1 died \\(exit code 3\\)"):
        write_module.generate_worlds([load_scenario(scenario)], out, ("short",), workers=2)
    assert table_files(out) == []


def test_default_workers(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    many = write_module.PARALLEL_MIN_SESSIONS
    assert write_module.default_workers(4, many) == 2  # one per usable CPU
    assert write_module.default_workers(4, many, write_module.TemplateSynthesizer()) == 2
    assert write_module.default_workers(4, many // 8) == 1  # too small to pay for processes
    assert write_module.default_workers(1, 10 * many) == 1  # one replicate: nothing to share
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert write_module.default_workers(3, many) == 3  # never more than the replicates

    class Other:
        name, version = "other", "1"

        def session(self, plan: object, context: object) -> list[object]:
            return []

    assert write_module.default_workers(4, many, Other()) == 1  # type: ignore[arg-type]


def test_generation_is_independent_of_the_hash_seed(tmp_path: Path, scenario_files: list[Path]):
    generate(scenario_files, tmp_path / "here")
    expected = tree_bytes(tmp_path / "here")
    runs = []
    for hash_seed in ("1", "2718"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = tmp_path / f"seed-{hash_seed}"
        runs.append(
            (
                out,
                subprocess.Popen(
                    [DRIFT, "generate", *map(str, scenario_files), "--out", str(out)],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    for out, process in runs:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        assert "3 worlds" in stdout
        assert tree_bytes(out) == expected


def test_another_seed_gives_another_world(tmp_path: Path):
    first = write_scenario(tmp_path / "a", HABIT_LOOP)
    seeded = HABIT_LOOP.replace("replicates: 2", "seed: 5\nreplicates: 2")
    second = write_scenario(tmp_path / "b", seeded)
    generate([first], tmp_path / "one")
    generate([second], tmp_path / "two")
    relative = f"transcripts/scenario=test-habit-loop-c/horizon=short/{PART_FILE}"
    assert (tmp_path / "one" / relative).read_bytes() != (tmp_path / "two" / relative).read_bytes()


def test_layout_is_one_hive_file_per_partition(tmp_path: Path, scenario_files: list[Path]):
    out = tmp_path / "out"
    generate(scenario_files, out)
    files = {str(path.relative_to(out)) for path in table_files(out)}
    expected = {
        f"{table.name}/scenario={scenario}/horizon={horizon}/{PART_FILE}"
        for table in WORLD_TABLES
        for scenario, horizon in (
            ("test-commuter-a", "short"),
            ("test-commuter-a", "medium"),
            ("test-habit-loop-c", "short"),
        )
    } | {
        world_manifest_path(scenario, horizon)
        for scenario, horizon in (
            ("test-commuter-a", "short"),
            ("test-commuter-a", "medium"),
            ("test-habit-loop-c", "short"),
        )
    }
    assert files == expected
    manifest = json.loads((out / world_manifest_path("test-commuter-a", "short")).read_text())
    loaded = load_scenario(scenario_files[0])
    assert manifest["scenario"] == "test-commuter-a"
    assert manifest["scenario_sha256"] == loaded.sha256
    assert manifest["seed"] == 4242 and manifest["replicates"] == 3
    assert manifest["synthesizer"].startswith("template@")


# --- failures leave nothing partial ----------------------------------------------------------


def _fail_on(monkeypatch: pytest.MonkeyPatch, horizon: str) -> list[str]:
    """Make generation raise when it reaches ``horizon`` (after earlier worlds were staged)."""
    real = write_module.generate_replicate
    seen: list[str] = []

    def flaky(spec, name, replicate, synthesizer=None):  # type: ignore[no-untyped-def]
        seen.append(name)
        if name == horizon:
            raise RuntimeError("simulated crash mid-run")
        return real(spec, name, replicate, synthesizer)

    monkeypatch.setattr(write_module, "generate_replicate", flaky)
    return seen


def test_a_failed_run_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    scenario = write_scenario(tmp_path / "scenarios", COMMUTER)
    out = tmp_path / "out"
    seen = _fail_on(monkeypatch, "medium")
    with pytest.raises(RuntimeError, match="simulated crash"):
        generate([scenario], out)
    assert seen[:3] == ["short", "short", "short"] and seen[-1] == "medium"  # short was staged
    assert table_files(out) == []
    assert not (out / ".staging").exists()
    assert not out.exists()  # the run created the folder, so it takes it away again


def test_a_failed_audit_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    scenarios = [write_scenario(tmp_path / "scenarios", text) for text in (HABIT_LOOP, TWO_DESKS)]
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("not ours\n")
    real_audit = generate_module.audit_probes
    calls = []

    def corrupting_audit(probes, plans, turns):  # type: ignore[no-untyped-def]
        calls.append(len(probes))
        if len(calls) == 3:  # first replicate of the second scenario: one probe loses its proof
            victim = next(p for p in probes if p.polarity == "positive")
            probes = [
                dataclasses.replace(p, evidence_terms=("zzz",)) if p is victim else p
                for p in probes
            ]
        real_audit(probes, plans, turns)

    monkeypatch.setattr(generate_module, "audit_probes", corrupting_audit)
    with pytest.raises(AuditError, match="never expressed"):
        generate(scenarios, out)
    assert len(calls) == 3
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_a_failed_rerun_keeps_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    scenario = write_scenario(tmp_path / "scenarios", COMMUTER)
    out = tmp_path / "out"
    generate([scenario], out)
    before = tree_bytes(out)
    _fail_on(monkeypatch, "medium")
    with pytest.raises(RuntimeError):
        generate([scenario], out)
    assert tree_bytes(out) == before


def test_a_rerun_replaces_its_partition(tmp_path: Path):
    folder = tmp_path / "scenarios"
    scenario = write_scenario(folder, COMMUTER)
    out = tmp_path / "out"
    generate([scenario], out)
    medium_before = {
        name: data for name, data in tree_bytes(out).items() if "horizon=medium" in name
    }
    # The scenario changes (one replicate); only the short horizon is regenerated.
    write_scenario(folder, COMMUTER.replace("replicates: 3", "replicates: 1"))
    generate([scenario], out, horizons=["short"])
    after = tree_bytes(out)
    assert {name: data for name, data in after.items() if "horizon=medium" in name} == medium_before
    short_files = [name for name in after if "horizon=short" in name]
    assert len(short_files) == len(WORLD_TABLES) + 1  # still one file per partition
    rows = duckdb.sql(
        f"select horizon, count(*) from read_parquet('{out}/event_schedules/**/*.parquet', "
        "hive_partitioning=true) group by all order by all"
    ).fetchall()
    assert rows == [("medium", 160 * 3), ("short", 40 * 1)]
    manifest = json.loads((out / world_manifest_path("test-commuter-a", "short")).read_text())
    assert manifest["replicates"] == 1
    assert not (out / ".staging").exists()
