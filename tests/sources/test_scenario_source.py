"""A scenario source is today's generator behind the source interface: same bytes, same names."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from helpers import HABIT_LOOP, tree_bytes, write_scenario

from drift_pipeline.pipeline import RunOptions, run_manifest, world_is_current
from drift_pipeline.scenario import checkpoints_for, load_scenario, root_seed
from drift_pipeline.sources import ScenarioSource, SourceEntity, open_source, write_worlds
from drift_pipeline.storage import staged
from drift_pipeline.world import generate_worlds, world_manifest
from drift_pipeline.world.synthesis import TemplateSynthesizer

SEEDED = HABIT_LOOP.replace("replicates: 2", "seed: 77\nreplicates: 2")


def test_identity_and_manifest_entries_are_the_scenario_files(tmp_path: Path) -> None:
    for text in (HABIT_LOOP, SEEDED):
        path = write_scenario(tmp_path / str(hash(text)), text)
        loaded = load_scenario(path)
        source = ScenarioSource(loaded)
        assert source.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
        assert (source.id, source.version, source.replicates) == ("test-habit-loop-c", "1", 2)
        # The run manifest's entry, exactly as it was written before sources existed.
        assert source.manifest_entry() == {
            "id": loaded.spec.id,
            "version": loaded.spec.version,
            "sha256": loaded.sha256,
            "seed": root_seed(loaded.spec),
            "seed_declared": loaded.spec.seed is not None,
            "replicates": loaded.spec.replicates,
        }
        assert run_manifest([source], RunOptions(arms=[]), [])["scenarios"] == [
            source.manifest_entry()
        ]
        assert source.world_manifest("short") == world_manifest(
            loaded, "short", TemplateSynthesizer()
        )
    assert ScenarioSource.load(path).manifest_entry()["seed_declared"] is True


def test_what_the_loop_and_backends_ask_of_it(tmp_path: Path) -> None:
    (source,) = open_source(str(write_scenario(tmp_path, HABIT_LOOP)))
    assert source.horizons == ("short",)
    assert source.sessions("short") == 50
    spec = load_scenario(source.origin).spec
    assert source.checkpoints("short") == [c.after_session for c in checkpoints_for(spec, "short")]
    assert source.entities == (
        SourceEntity("me", "human", None),
        SourceEntity("helper", "assistant_agent", 200_000),
    )
    assert "audited" in source.describe_audit()
    assert pickle.loads(pickle.dumps(source)).manifest_entry() == source.manifest_entry()


def test_it_writes_the_generators_bytes_and_knows_when_they_are_current(tmp_path: Path) -> None:
    path = write_scenario(tmp_path / "scenarios", HABIT_LOOP)
    generate_worlds([load_scenario(path)], tmp_path / "generated")
    source = ScenarioSource.load(path)
    assert not world_is_current(tmp_path / "written", source, "short")
    write_worlds([source], tmp_path / "written")
    assert tree_bytes(tmp_path / "written") == tree_bytes(tmp_path / "generated")
    assert world_is_current(tmp_path / "written", source, "short")
    with staged(tmp_path / "again") as writer:
        summary = source.write("short", writer)
    assert (summary.scenario, summary.sessions) == (source.id, 50 * 2)
    path.write_text(HABIT_LOOP.replace("session_gap_hours: 3", "session_gap_hours: 4"))
    assert not world_is_current(tmp_path / "written", ScenarioSource.load(path), "short")
