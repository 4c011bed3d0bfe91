"""The revision family: its subtypes, audit rule, rule judge and the metrics it feeds."""

from __future__ import annotations

import pytest

from drift_pipeline.world import AuditError, WorldReplicate
from drift_pipeline.world.probe_families import get_probe_family, prepare_context
from drift_pipeline.world.probe_families.revision import REVISION

from ._support import audit_generated, audit_one, first, generated_subtypes

PROBE = {
    "probe_type": "revision",
    "subtype": "fact_update",
    "polarity": "positive",
    "aliases": ["Lisbon"],
    "deprecated": ["Porto"],
}


def test_it_is_registered_and_generates_exactly_its_declared_subtypes(
    small_worlds: list[WorldReplicate],
) -> None:
    assert get_probe_family("revision") is REVISION
    # knowledge_update is an imported dataset's subtype: declared, never generated.
    assert generated_subtypes(small_worlds, "revision") == set(REVISION.subtypes) - {
        "knowledge_update"
    }
    assert REVISION.judge_prompt == "judge_revision"


def test_fresh_changes_feed_accuracy_and_older_ones_persistence() -> None:
    accuracy = {s for s in REVISION.subtypes if REVISION.feeds_metric("revision_accuracy", s)}
    persistence = {s for s in REVISION.subtypes if REVISION.feeds_metric("revision_persistence", s)}
    assert accuracy == {"fact_update", "preference_reversal", "knowledge_update"}
    assert persistence == {"belief_half_life"}
    assert all(REVISION.feeds_metric("error_rate", s) for s in REVISION.subtypes)


def test_its_generated_probes_pass_its_audit(replicate: WorldReplicate) -> None:
    assert audit_generated(replicate, probe_type="revision") > 0


def test_a_revision_whose_old_value_was_never_said_fails(replicate: WorldReplicate) -> None:
    probe = first(replicate, probe_type="revision")
    with pytest.raises(AuditError, match="deprecated value was never expressed"):
        audit_one(replicate, probe, deprecated=("Quetzalcoatl Holdings",))


@pytest.mark.parametrize(
    ("context", "update", "deprecation"),
    [
        ("Lives in Lisbon now.", True, True),
        ("Lives in Lisbon, used to live in Porto.", True, False),
        ("Lives in Lisbon.\nPorto (no longer true since 2027-03-01)", True, True),
        ("Lives in Porto.", False, False),
        ("", False, True),
    ],
)
def test_the_new_value_must_be_found_and_the_old_one_gone(
    context: str, update: bool, deprecation: bool
) -> None:
    verdict = REVISION.judge(PROBE, prepare_context(context))
    assert (verdict.update_correct, verdict.deprecation_correct) == (update, deprecation)
    assert verdict.correct == (update and deprecation)
    assert verdict.action_score is None
