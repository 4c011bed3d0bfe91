"""Evaluators: the context judge's columns, and the LLM reader + judge pipeline of one cell."""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
from llm_server import FakeOpenAIServer

from drift_pipeline.evaluation import (
    ANSWER_TABLE_COLUMNS,
    JUDGE_ID,
    ContextEvaluator,
    LLMEvaluator,
    LLMJudge,
    LLMReader,
    RuleJudge,
    latent_profiles,
    measured_ttft,
)
from drift_pipeline.evaluation._prompts import load_prompt
from drift_pipeline.llm import LLMClient, LLMConfig

BASE: dict[str, Any] = {
    "replicate": 0,
    "checkpoint": 4,
    "subtype": "fact",
    "polarity": "positive",
    "subject": "ada",
    "answer": "Kestrel Aerospace",
    "aliases": ["Kestrel Aerospace", "Kestrel"],
    "deprecated": [],
    "options": [],
    "default_option": None,
    "correct_option": None,
}
PROBES = pa.Table.from_pylist(
    [
        {**BASE, "probe_id": "r1", "probe_type": "recall", "question": "Where does Ada work?"},
        {**BASE, "probe_id": "r2", "probe_type": "recall", "question": "FAIL where?"},
        {
            **BASE,
            "probe_id": "a1",
            "probe_type": "action",
            "subtype": "preference_driven",
            "question": "Sign Ada's email.",
            "options": [
                {"text": "Leave it out", "terms": [], "utility": 0},
                {"text": "Sign as Kestrel Aerospace", "terms": ["Kestrel"], "utility": 1},
            ],
            "default_option": 0,
            "correct_option": 1,
        },
    ]
)
CONTEXTS = {(0, "r1"): "Ada: I work at Kestrel now.", (0, "a1"): "Ada: I work at Kestrel."}
READER = load_prompt("reader").text


def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    system, user = messages[0]["content"], messages[1]["content"]
    if system == READER:
        if "FAIL" in user:
            return ""  # no text: the reader call fails
        if "Options:" in user:
            return (
                "Leave it out" if "(nothing was retrieved)" in user else "Sign as Kestrel Aerospace"
            )
        return "Kestrel Aerospace" if "Kestrel" in user else "I don't know."
    if "Memory-informed action" in user:
        same = "action: Leave it out\nNo-memory action: Leave it out" in user
        return json.dumps(
            {"comparison": "worse" if same else "better", "fits_profile": not same, "reason": "r"}
        )
    answer = user.rsplit("Assistant's answer: ", 1)[1]
    return json.dumps({"verdict": "correct" if "Kestrel" in answer else "incorrect", "reason": "r"})


def client(server: FakeOpenAIServer) -> LLMClient:
    return LLMClient(LLMConfig(server.base_url, "m", max_retries=0), None)


def test_the_context_evaluator_adds_reader_columns_and_measures_nothing() -> None:
    columns = ContextEvaluator().answer(PROBES, CONTEXTS)
    assert tuple(columns) == ANSWER_TABLE_COLUMNS
    assert columns["correct"] == [True, False, True]
    assert columns["reader"] == [JUDGE_ID] * 3
    assert columns["reader_ttft_ms"] == [None] * 3 and columns["judge_error"] == [None] * 3
    assert measured_ttft(pa.Table.from_pydict(columns), PROBES) is None


def test_the_llm_evaluator_reads_judges_and_records_failures() -> None:
    with FakeOpenAIServer(respond) as server:
        evaluator = LLMEvaluator(LLMReader(client(server)), LLMJudge(client(server)))
        amnesiac = pa.Table.from_pydict(evaluator.answer(PROBES, {}))
        columns = evaluator.answer(PROBES, CONTEXTS, amnesiac, {(0, 4, "ada"): ("employer: K",)})
    assert tuple(columns) == ANSWER_TABLE_COLUMNS
    assert columns["answer"] == ["Kestrel Aerospace", "", "Sign as Kestrel Aerospace"]
    assert columns["correct"] == [True, None, True]
    assert columns["judge_error"][0] is None and columns["judge_error"][2] is None
    assert (
        columns["judge_error"][1].startswith("reader: ") and "no text" in columns["judge_error"][1]
    )
    assert columns["action_score"][2] == 1  # better than the amnesiac's "Leave it out"
    # The amnesiac's own action is equivalent to itself, whatever the judge says.
    assert amnesiac["action_score"].to_pylist()[2] == 0
    assert amnesiac["correct"].to_pylist() == [False, None, False]
    ttft = measured_ttft(pa.Table.from_pydict(columns), PROBES)
    assert ttft is not None and math.isnan(ttft[1]) and ttft[0] >= 0 and ttft[2] >= 0


def test_an_action_without_an_amnesiac_answer_is_a_judge_error() -> None:
    with FakeOpenAIServer(respond) as server:
        evaluator = LLMEvaluator(LLMReader(client(server)), LLMJudge(client(server)))
        failed = pa.Table.from_pydict(evaluator.answer(PROBES, {}))
        errors = failed["judge_error"].to_pylist()
        failed = failed.set_column(
            failed.column_names.index("judge_error"),
            "judge_error",
            pa.array([e if i != 2 else "reader: timed out" for i, e in enumerate(errors)]),
        )
        columns = evaluator.answer(PROBES, CONTEXTS, failed)
        # The rule judge scores against the default option: it needs no amnesiac action.
        rule = LLMEvaluator(LLMReader(client(server)), RuleJudge()).answer(PROBES, CONTEXTS, failed)
    assert columns["correct"][2] is None and "no amnesiac action" in columns["judge_error"][2]
    assert rule["judge_error"][2] is None and rule["action_score"][2] == 1
    assert rule["judge"] == [RuleJudge.name] * 3


def test_latent_profiles_are_current_facts_per_checkpoint_and_subject() -> None:
    truth = pa.Table.from_pylist(
        [
            {
                "replicate": 0,
                "checkpoint": 4,
                "subject": "ada",
                "slot": "employer",
                "value": "K",
                "current": True,
            },
            {
                "replicate": 0,
                "checkpoint": 4,
                "subject": "ada",
                "slot": "employer",
                "value": "T",
                "current": False,
            },
            {
                "replicate": 0,
                "checkpoint": 4,
                "subject": "ada",
                "slot": "city",
                "value": "Porto",
                "current": True,
            },
        ]
    )
    assert latent_profiles(truth) == {(0, 4, "ada"): ("city: Porto", "employer: K")}
