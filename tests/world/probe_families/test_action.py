"""The action family: its subtypes, well-formed choices, audit rule and rule judge."""

from __future__ import annotations

import pytest
from helpers import Worlds

from drift_pipeline.world import AuditError, WorldReplicate
from drift_pipeline.world.probe_families import get_probe_family, prepare_context
from drift_pipeline.world.probe_families.action import ACTION

from ._support import audit_generated, audit_one, first, generated_subtypes

# Option 0 fits the current value, 1 an old value, 2 is the no-memory default.
PROBE = {
    "probe_type": "action",
    "subtype": "preference_driven",
    "polarity": "positive",
    "options": [
        {"text": "Book the tram", "terms": ["tram"], "utility": 1},
        {"text": "Book a taxi", "terms": ["taxi"], "utility": -1},
        {"text": "Ask how they travel", "terms": [], "utility": 0},
    ],
    "correct_option": 0,
    "default_option": 2,
}


def test_it_is_registered_and_generates_exactly_its_declared_subtypes(
    small_worlds: list[WorldReplicate],
) -> None:
    assert get_probe_family("action") is ACTION
    assert generated_subtypes(small_worlds, "action") == set(ACTION.subtypes)
    assert ACTION.judge_prompt == "judge_action" and ACTION.compares_with_amnesiac
    assert all(ACTION.feeds_metric("action_alignment", s) for s in ACTION.subtypes)


def test_action_probes_are_well_formed_multiple_choice(worlds: Worlds):
    rows = worlds.query("select * from {probes} where probe_type = 'action'")
    assert rows
    for probe in rows:
        options = probe["options"]
        assert 2 <= len(options) <= 5
        utilities = [option["utility"] for option in options]
        assert utilities.count(1) == 1 and utilities.count(0) == 1, probe
        assert options[probe["correct_option"]]["utility"] == 1
        assert probe["answer"] == options[probe["correct_option"]]["text"]
        default = options[probe["default_option"]]
        assert default["utility"] == 0 and not default["terms"]
        assert list(options[probe["correct_option"]]["terms"]) == list(probe["aliases"])
        assert len({option["text"] for option in options}) == len(options)
        assert "{" not in probe["question"] and all("{" not in o["text"] for o in options)


def test_its_generated_probes_pass_its_audit(replicate: WorldReplicate) -> None:
    assert audit_generated(replicate, probe_type="action") > 0


def test_an_action_whose_value_was_never_said_fails(replicate: WorldReplicate) -> None:
    probe = first(replicate, probe_type="action")
    with pytest.raises(AuditError, match="never expressed"):
        audit_one(replicate, probe, evidence_terms=("Quetzalcoatl Holdings",))


@pytest.mark.parametrize(
    ("context", "chosen", "score"),
    [
        ("Takes the tram to work.", 0, 1),
        ("Always takes a taxi.", 1, -1),
        ("Tram or taxi, whatever comes first.", 2, 0),
        ("", 2, 0),
        ("Takes the tram.\nTaxi (no longer true since 2027-03-01)", 0, 1),
    ],
)
def test_one_supported_option_is_chosen_else_the_default(
    context: str, chosen: int, score: int
) -> None:
    verdict = ACTION.judge(PROBE, prepare_context(context))
    options: list[dict[str, object]] = PROBE["options"]  # type: ignore[assignment]
    assert verdict.answer == options[chosen]["text"]
    assert (verdict.action_score, verdict.correct) == (score, chosen == 0)
