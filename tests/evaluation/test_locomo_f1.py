"""LoCoMo's token-F1 scorer against hand-computed cases, and its use under an LLM reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_server import FakeOpenAIServer
from memory.plugins import _support

from drift_pipeline.evaluation.locomo_f1 import (
    locomo_f1,
    multi_answer_f1,
    normalise_answer,
    token_f1,
)
from drift_pipeline.llm import LLMConfig
from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import EvaluationOptions, RunOptions, run_benchmark
from drift_pipeline.sources import open_source

LOCOMO_FILE = Path(__file__).parents[1] / "fixtures" / "sources" / "locomo_small.json"


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Lisbon marathon!", "lisbon marathon"),
        ("a dog, an owl, the cat", "dog owl cat"),
        ("7 May,   2023.", "7 may 2023"),
        ("Theatre and anthems", "theatre and anthems"),  # articles only as whole words
    ],
)
def test_normalisation(text: str, normal: str) -> None:
    assert normalise_answer(text) == normal


@pytest.mark.parametrize(
    ("prediction", "gold", "f1"),
    [
        ("Lisbon marathon", "the Lisbon marathon", 1.0),
        # Stemming: "marathons" and "marathon" share their stem; "ran" is extra.
        # shared 2, precision 2/3, recall 1 -> 0.8
        ("ran the Lisbon marathons", "Lisbon marathon", 0.8),
        # "adopted" and "adoption" stem alike ("adopt"): shared 1 of 2 and 1 of 1 -> 2/3
        ("adoption agency", "adopted", 2 / 3),
        ("Porto", "Lisbon", 0.0),
        ("", "Lisbon", 0.0),
        # Repeated tokens count as often as both sides hold them: shared 1, p 1/2, r 1/1.
        ("cats cats", "cat", 2 / 3),
    ],
)
def test_token_f1(prediction: str, gold: str, f1: float) -> None:
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_multi_answer_is_the_mean_over_gold_parts_of_the_best_predicted_part() -> None:
    # gold parts: pottery (1.0 from "pottery"), camping (0), painting (1.0 from "painting")
    assert multi_answer_f1("painting, pottery", "pottery, camping, painting") == pytest.approx(
        2 / 3
    )


@pytest.mark.parametrize(
    ("prediction", "gold", "category", "score"),
    [
        ("pottery, painting", "pottery, painting", 1, 1.0),
        ("8 May 2023", "7 May 2023", 2, 2 / 3),
        ("likely yes", "Likely yes; she loves dogs", 3, 1.0),
        ("yes", "Likely yes; she loves dogs", 3, 2 / 3),
        ("pottery class", "a pottery class", 4, 1.0),
        ("That is not mentioned in the conversation.", "", 5, 1.0),
        ("No information available", "", 5, 1.0),
        ("Yes, she did", "", 5, 0.0),
    ],
)
def test_each_category_rule(prediction: str, gold: str, category: int, score: float) -> None:
    assert locomo_f1(prediction, gold, category) == pytest.approx(score)


def test_an_unknown_category_is_refused() -> None:
    with pytest.raises(ValueError, match="category 6"):
        locomo_f1("x", "x", 6)


def _reader(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A scripted reader: one question answered from memory, every other one declined."""
    asked = messages[-1]["content"]
    return "a pottery class" if "What class did Ava join?" in asked else "Not mentioned."


def test_an_llm_readers_answers_to_locomo_get_its_f1_in_the_score_column(tmp_path: Path) -> None:
    sources = open_source(f"locomo:{LOCOMO_FILE}")
    with FakeOpenAIServer(_reader) as server:
        config = LLMConfig(server.base_url, "scripted-model", backoff_base_s=0.01)
        options = RunOptions(
            arms=[Arm.parse("full_context@hard")],
            out=tmp_path / "data",
            evaluation=EvaluationOptions("llm", "rule", config),
        )
        result = run_benchmark(sources, options)
    rows = _support.query(
        tmp_path / "data",
        "select probe_id, subtype, score from {probe_answers} "
        "where scenario = 'locomo-conv-7' and arm = 'full_context@hard' order by probe_id",
    )
    scores = {row["probe_id"]: row["score"] for row in rows}
    assert scores["qa-0000"] == 1.0  # "a pottery class" against "pottery class"
    assert scores["qa-0009"] == scores["qa-0010"] == 1.0  # adversarial: declined
    assert scores["qa-0001"] == 0.0  # "Not mentioned." shares no token with the marathon
    cell = next(c for c in result.cells if c.scenario == "locomo-conv-7")
    assert cell.metrics.score_by_subtype["adversarial"].value == 1.0
    assert cell.metrics.score_by_subtype["single_hop"].value == pytest.approx(1 / 4)
