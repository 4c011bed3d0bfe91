"""Fixtures of the BrainCore tests: tiny datasets and adapters written outside the package.

Every dataset and adapter here is written into the test's own folder, in the formats a user of
the BrainCore harness writes, so the tests go through the same paths a user's files do.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

TINY: list[dict[str, Any]] = [
    {
        "session_id": "alpha",
        "memories": [
            {
                "memory_id": "a1",
                "content": "Noor lives in Oslo.",
                "timestamp": "2024-01-01T09:00:00",
            },
            {
                "memory_id": "a2",
                "content": "Noor bought a kayak.",
                "timestamp": "2024-01-05T09:00:00",
            },
            {
                "memory_id": "a3",
                "content": "Noor moved to Rome.",
                "timestamp": "2024-01-09T09:00:00",
            },
        ],
        "queries": [
            {
                "query_id": "q1",
                "query_text": "What did Noor buy?",
                "expected_answer": "a kayak",
                "query_type": "retrieval",
                "required_memory_ids": ["a2"],
            },
            {
                "query_id": "q2",
                "query_text": "Oslo or kayak first?",
                "expected_answer": "Oslo",
                "query_type": "temporal",
                "required_memory_ids": ["a1", "a2"],
            },
            {
                "query_id": "q3",
                "query_text": "Where does Noor live?",
                "expected_answer": "Rome",
                "query_type": "contradiction",
                "required_memory_ids": ["a1", "a3"],
            },
        ],
    },
    {
        "session_id": "beta",
        # The other spellings of the three memory fields, and no times: order is list order.
        "memories": [
            {"id": "b1", "text": "Ilya plays the oboe."},
            {"id": "b2", "text": "Ilya joined a choir."},
        ],
        "queries": [
            {
                "query_id": "q4",
                "query_text": "Which instrument?",
                "expected_answer": "the oboe",
                "query_type": "retrieval",
                "required_memory_ids": ["b1"],
            },
            {
                "query_id": "q5",
                "query_text": "Oboe or choir first?",
                "expected_answer": "oboe",
                "query_type": "temporal",
                "required_memory_ids": ["b1", "b2"],
            },
        ],
    },
]
"""Two sessions, five queries of all three types; ``SCRIPT`` below fixes what is retrieved."""

SCRIPT: dict[str, list[dict[str, Any]]] = {
    # Top item's answer field equals the expected answer up to case and spaces: exact match.
    "q1": [{"memory_id": "a2", "content": "Noor bought a kayak.", "answer": "  A Kayak "}],
    # Both required, in time order (a1 before a2): temporal 1; text is not "Oslo": exact 0.
    "q2": [
        {"memory_id": "a1", "content": "Noor lives in Oslo."},
        {"memory_id": "a2", "content": "Noor bought a kayak."},
    ],
    # The revised fact is returned, though the old one outranks it: contradiction 1.
    "q3": [
        {"memory_id": "a1", "content": "Noor lives in Oslo."},
        {"memory_id": "a3", "content": "Noor moved to Rome."},
    ],
    # The top item's text is exactly the answer (case aside): exact 1.
    "q4": [{"id": "b1", "text": "THE OBOE"}],
    # Only one of the two required memories: temporal 0.
    "q5": [{"id": "b2", "text": "Ilya joined a choir."}],
}

SCRIPTED_ADAPTER = '''
"""A scripted BrainCore adapter: answers each query from a fixed list, records what it saw."""
import json

SCRIPT = json.loads({script!r})
BY_TEXT = json.loads({by_text!r})


class ScriptedAdapter:
    def __init__(self):
        self.batches = []

    def ingest(self, raw_memories):
        self.batches.append(raw_memories)

    def retrieve(self, query, top_k=1):
        return SCRIPT[BY_TEXT[query]]

    def storage_bytes(self):
        return 1000 + sum(len(batch) for batch in self.batches)
'''


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` as JSON lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    """The two-session dataset, written into the test's folder."""
    return write_jsonl(tmp_path / "tiny.jsonl", TINY)


@pytest.fixture
def scripted_adapter(tmp_path: Path) -> Path:
    """``scripted_adapter.py`` in the test's folder (class ``ScriptedAdapter``)."""
    by_text = {q["query_text"]: q["query_id"] for r in TINY for q in r["queries"]}
    source = SCRIPTED_ADAPTER.format(script=json.dumps(SCRIPT), by_text=json.dumps(by_text))
    path = tmp_path / "scripted_adapter.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path
