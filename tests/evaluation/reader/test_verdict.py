"""The judge on readings, and free-text answers turned into readings by the same rules."""

from __future__ import annotations

import pytest

from drift_pipeline.evaluation.reader import judge_reading, reading_from_answer

from .helpers import EMPLOYER, NEW_EMPLOYER, probe

REVISION = dict(aliases=NEW_EMPLOYER, deprecated=EMPLOYER)


@pytest.mark.parametrize(
    ("answer", "update", "deprecation"),
    [
        ("She works at Lumen Cartography now; she left Kestrel in March.", True, True),
        ("Lumen", True, True),
        ("Lumen Cartography (previously Kestrel Aerospace)", True, True),
        ("She works at Kestrel Aerospace.", False, False),
        # Saying nothing definite is neither an update nor a deprecation.
        ("She may have moved to Lumen, not sure.", False, False),
        ("I don't know.", False, False),
    ],
)
def test_an_llm_answer_is_judged_like_a_memory(
    answer: str, update: bool, deprecation: bool
) -> None:
    revision = probe(**REVISION)
    verdict = judge_reading(reading_from_answer(answer, revision), revision)
    assert (verdict.update_correct, verdict.deprecation_correct) == (update, deprecation)
    assert verdict.correct is (update and deprecation)


def test_yes_no_and_temporal_answers() -> None:
    decoy = probe(aliases=["Edinburgh"], polarity="negative", answer="no", slot="city")
    assert judge_reading(reading_from_answer("No, never.", decoy), decoy).correct
    assert not judge_reading(reading_from_answer("Yes, in 2027.", decoy), decoy).correct
    temporal = probe(
        subtype="temporal",
        aliases=["2027-03-01", "March 1, 2027"],
        answer="2027-03-01",
        evidence_terms=NEW_EMPLOYER,
    )
    assert judge_reading(reading_from_answer("On 1 March 2027.", temporal), temporal).correct
    assert not judge_reading(reading_from_answer("Early 2027.", temporal), temporal).correct
