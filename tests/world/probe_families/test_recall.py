"""The recall family: its subtypes, audit rule and rule judge."""

from __future__ import annotations

import pytest

from drift_pipeline.entities import get_entity_type
from drift_pipeline.world import AuditError, WorldReplicate
from drift_pipeline.world.probe_families import get_probe_family, prepare_context
from drift_pipeline.world.probe_families.recall import RECALL

from ._support import audit_generated, audit_one, first, generated_subtypes

NEGATIVE = {"probe_type": "recall", "subtype": "negative", "polarity": "negative"}
POSITIVE = {"probe_type": "recall", "subtype": "fact", "polarity": "positive"}


def test_it_is_registered_and_generates_exactly_its_declared_subtypes(
    small_worlds: list[WorldReplicate],
) -> None:
    assert get_probe_family("recall") is RECALL
    assert generated_subtypes(small_worlds, "recall") == set(RECALL.subtypes)
    assert RECALL.judge_prompt == "judge_answer" and not RECALL.compares_with_amnesiac


def test_it_feeds_the_error_rate_only() -> None:
    for subtype in RECALL.subtypes:
        assert RECALL.feeds_metric("error_rate", subtype)
        assert not RECALL.feeds_metric("privacy", subtype)


def test_its_generated_probes_pass_its_audit(replicate: WorldReplicate) -> None:
    for subtype in RECALL.subtypes:
        assert audit_generated(replicate, probe_type="recall", subtype=subtype) > 0, subtype


def test_a_decoy_that_was_expressed_fails(replicate: WorldReplicate) -> None:
    negative = first(replicate, subtype="negative", checkpoint=40)
    said = next(
        plan.event for plan in replicate.plans if plan.event is not None and plan.session_index < 40
    )
    assert said is not None
    entity_type = next(e.entity_type for e in replicate.profiles if e.entity_id == said.subject)
    aliases = get_entity_type(entity_type).slot(said.slot).value(said.value).all_aliases()
    with pytest.raises(AuditError, match="decoy expressed"):
        audit_one(replicate, negative, evidence_terms=aliases, aliases=aliases)


def test_a_wrong_temporal_answer_fails(replicate: WorldReplicate) -> None:
    probe = first(replicate, subtype="temporal")
    with pytest.raises(AuditError, match="date of its event session"):
        audit_one(replicate, probe, answer="1999-01-01")


def test_a_positive_answer_counts_from_any_line() -> None:
    probe = {**POSITIVE, "aliases": ["Lisbon", "Lisboa"]}
    found = RECALL.judge(probe, prepare_context("Moved to LISBOA (no longer true: Porto)"))
    assert (found.answer, found.correct) == ("Lisboa", True)
    missing = RECALL.judge(probe, prepare_context("Lives in Porto"))
    assert (missing.answer, missing.correct, missing.rationale) == (
        "",
        False,
        "answer not in context",
    )


def test_retracted_lines_do_not_assert_a_decoy() -> None:
    probe = {**NEGATIVE, "aliases": ["Lisbon"]}
    retracted = RECALL.judge(probe, prepare_context("moved to Lisbon (no longer true since 2027)"))
    assert (retracted.answer, retracted.correct) == ("no", True)
    asserted = RECALL.judge(probe, prepare_context("moved to Lisbon"))
    assert (asserted.answer, asserted.correct, asserted.rationale) == (
        "yes",
        False,
        "decoy 'Lisbon' asserted",
    )
