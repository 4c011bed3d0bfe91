"""Probes for the reader tests, built the way the harness builds them: from a probes row."""

from __future__ import annotations

from typing import Any

from drift_pipeline.evaluation.reader import ReaderProbe

EMPLOYER = ["Kestrel Aerospace", "Kestrel"]
NEW_EMPLOYER = ["Lumen Cartography", "Lumen"]


def probe(
    *,
    aliases: list[str] | None = None,
    deprecated: list[str] | None = None,
    subtype: str = "fact",
    probe_type: str = "recall",
    polarity: str = "positive",
    slot: str = "employer",
    question: str = "Where does Rhiannon work now?",
    answer: str | None = None,
    evidence_terms: list[str] | None = None,
    options: list[dict[str, Any]] | None = None,
    correct_option: int | None = None,
    default_option: int | None = None,
    others: list[list[str]] | None = None,
) -> ReaderProbe:
    """A probe about Rhiannon (entity ``principal``); by default "where does she work"."""
    aliases = EMPLOYER if aliases is None else aliases
    row = {
        "probe_id": "p1",
        "probe_type": probe_type,
        "subtype": subtype,
        "subject": "principal",
        "question": question,
        "answer": answer if answer is not None else (aliases[0] if aliases else ""),
        "aliases": aliases,
        "deprecated": deprecated or [],
        "options": options or [],
        "correct_option": correct_option,
        "default_option": default_option,
        "polarity": polarity,
        "slot": slot,
        "evidence_terms": evidence_terms or [],
    }
    return ReaderProbe.from_row(row, subject_names=["Rhiannon Price"], others=others or [])
