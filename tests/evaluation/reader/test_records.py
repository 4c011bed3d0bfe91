"""Structured memory records read as plain sentences."""

from __future__ import annotations

import pytest

from drift_pipeline.evaluation.reader._records import render_record


@pytest.mark.parametrize(
    ("line", "sentences"),
    [
        # An edge without properties is the bare sentence: no empty property after a comma.
        ("(maria)-[WORKS_AT]->(Lumen)", [("maria works at Lumen", None)]),
        ("(Hilde) --NOT works_at--> (Equinor)", [("Hilde not works at Equinor", None)]),
        # Properties inside the relation and after the edge: a start date orders the sentence,
        # an end date closes it, the other properties are words beside it.
        (
            "(maria)-[WORKS_AT {since: 2027-01-04}]->(Lumen) {valid_to: 2027-03-01, source: chat}",
            [("maria works at Lumen, source chat (no longer true since 2027-03-01)", "2027-01-04")],
        ),
        (
            '{"user": "Isla", "employer": "Lumen", "since": "2027-01-04"}',
            [("Isla employer Lumen", "2027-01-04")],
        ),
        ("Isla works at Lumen", None),
    ],
)
def test_a_record_line_reads_as_sentences_with_their_dates(
    line: str, sentences: list[tuple[str, str | None]] | None
) -> None:
    assert render_record(line) == sentences
