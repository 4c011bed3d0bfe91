"""The LLM judge (strict structured output, failures recorded) and the rule judge over answers."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from llm_server import FakeOpenAIServer
from probe_family_example import CANARY

from drift_pipeline.evaluation import JudgeItem, LLMJudge, RuleJudge, parse_judge_reply
from drift_pipeline.evaluation._prompts import load_prompt
from drift_pipeline.llm import LLMClient, LLMConfig
from drift_pipeline.world.probe_families import _registry, register_probe_family

RECALL: dict[str, Any] = {
    "probe_type": "recall",
    "subtype": "fact",
    "polarity": "positive",
    "subject": "ada",
    "question": "Where does Ada work now?",
    "answer": "Kestrel Aerospace",
    "aliases": ["Kestrel Aerospace", "Kestrel"],
    "deprecated": [],
    "options": [],
    "default_option": None,
    "correct_option": None,
}
NEGATIVE = {**RECALL, "polarity": "negative", "answer": "no", "aliases": ["TL;DR"]}
REVISION = {**RECALL, "probe_type": "revision", "deprecated": ["Thistledown Games"]}
ACTION = {
    **RECALL,
    "probe_type": "action",
    "question": "Sign Ada's email: where does she work?",
    "options": [
        {"text": "Leave the employer out", "terms": [], "utility": 0},
        {"text": "Sign as Kestrel Aerospace", "terms": ["Kestrel Aerospace"], "utility": 1},
    ],
    "default_option": 0,
    "correct_option": 1,
}


@pytest.mark.parametrize(
    ("kind", "text", "problem"),
    [
        ("judge_answer", 'Sure: {"verdict": "correct", "reason": "x"}', "not JSON"),
        ("judge_answer", '```json\n{"verdict": "correct", "reason": "x"}\n```', "not JSON"),
        ("judge_answer", '["correct"]', "list"),
        ("judge_answer", '{"verdict": "correct"}', "missing ['reason']"),
        ("judge_answer", '{"verdict": "correct", "reason": "x", "score": 1}', "unexpected"),
        ("judge_answer", '{"verdict": "right", "reason": "x"}', "one of"),
        ("judge_answer", '{"verdict": true, "reason": "x"}', "string"),
        (
            "judge_revision",
            '{"new_value_stated": "yes", "old_value_asserted": false, "reason": "x"}',
            "true or false",
        ),
        ("judge_action", '{"comparison": "better", "fits_profile": 1, "reason": "x"}', "true"),
    ],
)
def test_replies_are_parsed_strictly(kind: str, text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parse_judge_reply(kind, text)


def test_a_well_formed_reply_parses() -> None:
    reply = parse_judge_reply("judge_answer", ' {"verdict": "incorrect", "reason": "vague"}\n')
    assert reply == {"verdict": "incorrect", "reason": "vague"}


def scripted(replies: dict[str, str]) -> FakeOpenAIServer:
    """A server answering by the asked-for schema's name."""

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        return replies[body["response_format"]["json_schema"]["name"]]

    return FakeOpenAIServer(respond)


def judge_of(server: FakeOpenAIServer) -> LLMJudge:
    return LLMJudge(LLMClient(LLMConfig(server.base_url, "judge-model", max_retries=0), None))


def test_verdicts_come_from_the_structured_reply() -> None:
    replies = {
        "judge_answer": json.dumps({"verdict": "correct", "reason": "states Kestrel"}),
        "judge_revision": json.dumps(
            {"new_value_stated": True, "old_value_asserted": True, "reason": "hedges"}
        ),
        "judge_action": json.dumps({"comparison": "better", "fits_profile": True, "reason": "ok"}),
    }
    with scripted(replies) as server:
        judge = judge_of(server)
        recall, revision, action, same = judge.judge_many(
            [
                JudgeItem(RECALL, "She is at Kestrel."),
                JudgeItem(REVISION, "Kestrel, or Thistledown Games."),
                JudgeItem(ACTION, "Sign as Kestrel Aerospace", "Leave the employer out", ("a: b",)),
                JudgeItem(ACTION, "Leave the employer out", "leave the employer OUT"),
            ]
        )
        bodies = list(server.requests)
    assert recall.error is None and recall.verdict is not None and recall.verdict.correct
    assert revision.verdict is not None
    assert (revision.verdict.update_correct, revision.verdict.deprecation_correct) == (True, False)
    assert not revision.verdict.correct
    assert action.verdict is not None and action.verdict.action_score == 1
    # The same action as the amnesiac's is equivalent by definition, whatever the judge says.
    assert same.verdict is not None and same.verdict.action_score == 0
    schema = bodies[0]["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert not any(body.get("stream") for body in bodies)
    action_prompt = next(
        b["messages"][1]["content"]
        for b in bodies
        if "Memory-informed action: Sign as" in b["messages"][1]["content"]
    )
    assert "- a: b" in action_prompt and "No-memory action: Leave the employer out" in action_prompt


def test_a_malformed_or_failed_judge_call_gives_no_verdict() -> None:
    replies = {"judge_answer": "The answer is correct.", "judge_revision": "{}"}
    with scripted(replies) as server:
        judge = judge_of(server)
        malformed, empty = judge.judge_many([JudgeItem(RECALL, "x"), JudgeItem(REVISION, "x")])
        server.fail_next(400)
        failed = judge.judge_many([JudgeItem(NEGATIVE, "No.")])[0]
    assert malformed.verdict is None and malformed.error is not None
    assert malformed.error.startswith("judge: unparsable reply: reply is not JSON")
    assert empty.verdict is None and "missing" in (empty.error or "")
    assert failed.verdict is None and "HTTP 400" in (failed.error or "")


def test_the_judge_prompt_names_truth_old_value_and_decoy() -> None:
    judge = LLMJudge(LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None))
    recall = judge.messages(JudgeItem(RECALL, "Kestrel"))[1]["content"]
    assert (
        'Reference truth: "Kestrel Aerospace"' in recall and "Assistant's answer: Kestrel" in recall
    )
    revision = judge.messages(JudgeItem(REVISION, "x"))[1]["content"]
    assert 'Old value (no longer holds): "Thistledown Games"' in revision
    negative = judge.messages(JudgeItem(NEGATIVE, "No"))[1]["content"]
    assert 'never made: "TL;DR"' in negative
    assert len(judge.pin()["prompt_sha256"]) == 64 and judge.name.startswith("llm:m@")


def test_the_rule_judge_reads_the_answer_text() -> None:
    judge = RuleJudge()
    ok, paraphrase, negative, action = judge.judge_many(
        [
            JudgeItem(RECALL, "She works at Kestrel now."),
            JudgeItem(RECALL, "The aerospace firm named after a small falcon."),
            JudgeItem(NEGATIVE, "No, she never asked for a TL;DR."),
            JudgeItem(ACTION, "Sign as Kestrel Aerospace"),
        ]
    )
    assert ok.verdict is not None and ok.verdict.correct
    # Read like a memory: a denial that names the decoy does not assert it.
    assert negative.verdict is not None and negative.verdict.correct
    assert action.verdict is not None and action.verdict.action_score == 1
    # ... and a riddle without the name is not the value.
    assert paraphrase.verdict is not None and not paraphrase.verdict.correct


def test_each_family_asks_the_judge_question_it_declares() -> None:
    judge = LLMJudge(LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None))
    canary = {**RECALL, "probe_type": "canary", "subtype": "canary"}  # the example family
    for probe, prompt in (
        (RECALL, "judge_answer"),
        (NEGATIVE, "judge_answer"),
        (REVISION, "judge_revision"),
        (ACTION, "judge_action"),
        (canary, "judge_answer"),
    ):
        system = judge.messages(JudgeItem(probe, "x"))[0]["content"]
        assert system == load_prompt(prompt).text, probe["probe_type"]


ODD = dataclasses.replace(CANARY, name="odd", judge_prompt="judge_consistency")


def test_a_judge_question_the_llm_judge_does_not_ask_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_registry, "_FAMILIES", _registry._FAMILIES.copy())
    register_probe_family("odd", f"{__name__}:ODD")
    judge = LLMJudge(LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None))
    with pytest.raises(ValueError, match="probe family 'odd' asks for judge prompt"):
        judge.messages(JudgeItem({**RECALL, "probe_type": "odd"}, "x"))
