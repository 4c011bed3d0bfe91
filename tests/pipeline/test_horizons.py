"""``--horizon`` over several sources: never a horizon not asked for, never a silent run of none."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory.plugins import _support

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import (
    HorizonNotDeclared,
    RunOptions,
    run_benchmark,
    select_horizons,
)
from drift_pipeline.sources import ScenarioSource, WorldSource


def _source(folder: Path, scenario_id: str, horizons: str) -> WorldSource:
    """The memory-loop tests' small scenario, declaring ``horizons`` (short, medium, long)."""
    path = _support.write_scenario(folder, scenario_id)
    text = path.read_text(encoding="utf-8")
    short = "  short: { sessions: 16, session_gap_hours: 7 }\n"
    sessions = {"short": 16, "medium": 20, "long": 24}  # horizons grow short < medium < long
    declared = "".join(
        f"  {name}: {{ sessions: {sessions[name]}, session_gap_hours: 7 }}\n"
        for name in horizons.split(",")
    )
    path.write_text(text.replace(short, declared), encoding="utf-8")
    return ScenarioSource.load(path)


def test_no_horizon_asked_keeps_every_source(tmp_path: Path) -> None:
    sources = [_source(tmp_path, "hz-a", "short"), _source(tmp_path, "hz-b", "medium")]
    selection = select_horizons(sources, ())
    assert selection.sources == sources and selection.notes == []


def test_a_source_without_the_horizon_is_left_out_and_named(tmp_path: Path) -> None:
    both = _source(tmp_path, "hz-both", "short,medium")
    medium = _source(tmp_path, "hz-medium", "medium")
    long = _source(tmp_path, "hz-long", "long")
    selection = select_horizons([both, medium, long], ["short", "medium"])
    assert selection.sources == [both, medium]
    assert selection.notes == [
        f"{medium.origin}: hz-medium declares no short horizon (declared: medium); "
        "run at medium only",
        f"{long.origin}: hz-long declares no short or medium horizon (declared: long); left out",
    ]
    # What is kept runs at the horizons asked for that it declares, never another.
    assert [w.horizon for s in selection.sources for w in s.worlds(["short", "medium"])] == [
        "short",
        "medium",
        "medium",
    ]


def test_no_source_declaring_the_horizon_is_an_error_naming_each(tmp_path: Path) -> None:
    sources = [_source(tmp_path, "hz-a", "medium,long"), _source(tmp_path, "hz-b", "medium")]
    with pytest.raises(HorizonNotDeclared) as raised:
        select_horizons(sources, ["short"])
    assert raised.value.lines == [
        f"{sources[0].origin}: hz-a declares no short horizon (declared: medium, long)",
        f"{sources[1].origin}: hz-b declares no short horizon (declared: medium)",
    ]


def test_a_run_at_an_undeclared_horizon_writes_nothing(tmp_path: Path) -> None:
    source = _source(tmp_path / "scenarios", "hz-run", "medium,long")
    out = tmp_path / "data"
    options = RunOptions(arms=[Arm.parse("amnesiac@hard")], horizons=("short",), out=out, jobs=2)
    with pytest.raises(HorizonNotDeclared, match="hz-run declares no short horizon"):
        run_benchmark([source], options)
    assert not out.exists()  # not even the lock file
