"""``drift explain``: a correct and an incorrect probe of one arm, on a world of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from report.tiny_world import invoke, run_tiny

from drift_pipeline.pipeline import connect


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("explain")
    run_tiny(base)
    return base / "data"


def _probe(folder: Path, arm: str, correct: bool) -> tuple[str, str, str]:
    row = (
        connect(folder)
        .execute(
            "select a.probe_id, p.question, a.rationale from probe_answers a join probes p "
            "using (scenario, horizon, replicate, probe_id) where a.arm = ? and a.correct = ? "
            "and a.probe_type = 'recall' order by a.horizon, a.probe_id limit 1",
            [arm, correct],
        )
        .fetchone()
    )
    assert row is not None, f"{arm} has no {'correct' if correct else 'incorrect'} recall probe"
    return row[0], row[1], row[2]


@pytest.mark.parametrize("correct", [True, False])
def test_a_probe_is_explained_from_memory_to_verdict(folder: Path, correct: bool):
    arm = "sentence_log@hard"
    probe_id, question, rationale = _probe(folder, arm, correct)
    result = invoke("explain", str(folder), "--arm", arm, "--probe", probe_id)
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"probe {probe_id} (recall:" in text and f"question: {question}" in text
    assert "stored after each evidence session:" in text and "memory at checkpoint session" in text
    assert "retrieve returned:" in text and "reader's answer: " in text
    assert f"verdict: {'correct' if correct else 'incorrect'}" in text
    # Why: the judge's own rationale, naming the rule that decided where a rule did.
    assert f"why: {rationale}" in text


def test_an_unknown_arm_or_probe_exits_2_naming_what_exists(folder: Path):
    wrong_arm = invoke("explain", str(folder), "--arm", "nope@hard", "--probe", "x")
    assert wrong_arm.exit_code == 2 and "sentence_log@hard" in wrong_arm.output
    wrong_probe = invoke("explain", str(folder), "--arm", "amnesiac@hard", "--probe", "x")
    assert wrong_probe.exit_code == 2 and "--probe x" in wrong_probe.output
