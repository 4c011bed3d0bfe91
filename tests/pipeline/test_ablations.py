"""``ablations.yaml``: named groups of arms, found beside the scenarios, selected by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import AblationError, ablation_arms, find_ablations, load_ablations

REPO_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_the_repository_ablations_parse() -> None:
    ablations = {a.name: a for a in load_ablations(REPO_SCENARIOS / "ablations.yaml")}
    assert {"soft-gates", "summary-gates"} <= set(ablations)
    assert Arm.parse("bm25@soft:3") in ablations["soft-gates"].arms
    assert ablations["soft-gates"].description


def test_a_missing_file_means_no_ablations(tmp_path: Path) -> None:
    assert load_ablations(tmp_path / "ablations.yaml") == []


def test_malformed_ablations_name_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "ablations.yaml"
    path.write_text("ablations:\n  leaky:\n    arms: [bm25@leaky:3]\n", encoding="utf-8")
    with pytest.raises(AblationError, match=r"ablations\.leaky: gate 'leaky:3'"):
        load_ablations(path)
    path.write_text("ablations: [bm25@hard]\n", encoding="utf-8")
    with pytest.raises(AblationError, match="expected a mapping"):
        load_ablations(path)
    path.write_text("ablations:\n  x: {arms: bm25@hard}\n", encoding="utf-8")
    with pytest.raises(AblationError, match=r"ablations\.x: expected a mapping with a list"):
        load_ablations(path)


def test_found_beside_scenario_files_and_in_folders(tmp_path: Path) -> None:
    (tmp_path / "ablations.yaml").write_text(
        "ablations:\n  one: {arms: [bm25@soft:1, amnesiac@hard]}\n", encoding="utf-8"
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text("id: s\n", encoding="utf-8")
    # A file stands for its folder; the same folder twice is read once.
    found = find_ablations([scenario, tmp_path])
    assert [a.name for a in found] == ["one"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_ablations([empty]) == []


def test_arms_of_named_ablations_in_order_each_once() -> None:
    ablations = load_ablations(REPO_SCENARIOS / "ablations.yaml")
    arms = ablation_arms(ablations, ["summary-gates", "soft-gates", "summary-gates"])
    assert [a.key for a in arms] == [
        "full_context@summary:256",
        "bm25@summary:128",
        "bm25@soft:3",
        "fact_store@soft:1",
        "temporal_graph@soft:1",
    ]
    with pytest.raises(AblationError, match=r"'leaky' is not in ablations\.yaml \(known: soft"):
        ablation_arms(ablations, ["leaky"])
