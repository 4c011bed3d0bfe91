"""The judge leniency check: the shipped labelled set, and the rates of two judges on it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import scripted_llm
from llm_server import FakeOpenAIServer

from drift_pipeline.evaluation import (
    CHECK_CATEGORIES,
    JudgeItem,
    LLMJudge,
    RuleJudge,
    load_check_set,
    run_judge_check,
)
from drift_pipeline.llm import LLMClient, LLMConfig


def test_the_shipped_set_covers_every_category_with_both_labels() -> None:
    items = load_check_set()
    assert len(items) >= 30
    counts = Counter(item.category for item in items)
    assert set(counts) == set(CHECK_CATEGORIES) and min(counts.values()) >= 5
    labels = {
        item.category: {i.label for i in items if i.category == item.category} for item in items
    }
    assert labels["vague_on_topic"] == labels["specific_wrong"] == {"reject"}
    assert labels["paraphrase_correct"] == labels["plain_correct"] == {"accept"}
    assert {item.kind for item in items} == {"recall", "negative", "revision"}


def test_the_rule_judge_reads_answers_like_memories() -> None:
    items = load_check_set()
    report = run_judge_check(RuleJudge(), items)
    assert report.judge == RuleJudge.name and report.n_errors == 0
    paraphrases = [o for o in report.outcomes if o.item.category == "paraphrase_correct"]
    # The value lexicon sees some paraphrases (abbreviations, synonyms), not riddles.
    assert 0 < sum(bool(o.accepted) for o in paraphrases) < len(paraphrases)
    accept = [o for o in report.outcomes if o.item.label == "accept"]
    reject = [o for o in report.outcomes if o.item.label == "reject"]
    assert report.false_reject_rate == sum(not o.accepted for o in accept) / len(accept)
    assert report.false_accept_rate == sum(bool(o.accepted) for o in reject) / len(reject)
    assert report.false_accept_rate <= 0.05
    assert "false-reject rate" in report.render()


def test_the_llm_judge_rates_are_those_of_its_script(tmp_path: Path) -> None:
    items = load_check_set()
    with FakeOpenAIServer(scripted_llm.respond) as server:
        client = LLMClient(LLMConfig(server.base_url, "judge-model", max_retries=0), tmp_path)
        judge = LLMJudge(client)
        report = run_judge_check(judge, items)
        # What the script decides for each item, from the very messages the judge sent.
        predicted: dict[str, bool | None] = {}
        for item in items:
            user = judge.messages(JudgeItem(item.probe(), item.answer))[1]["content"]
            if item.kind == "revision":
                predicted[item.id] = None  # the script's revision replies are malformed
            else:
                predicted[item.id] = scripted_llm.judge_answer(user)["verdict"] == "correct"
    assert {o.item.id: o.accepted for o in report.outcomes} == predicted
    revisions = sum(1 for item in items if item.kind == "revision")
    assert report.n_errors == revisions > 0
    judged = [o for o in report.outcomes if o.accepted is not None]
    reject = [o for o in judged if o.item.label == "reject"]
    accept = [o for o in judged if o.item.label == "accept"]
    assert report.false_accept_rate == sum(bool(o.accepted) for o in reject) / len(reject)
    assert report.false_reject_rate == sum(not o.accepted for o in accept) / len(accept)
    data = report.to_dict()
    assert data["judge_errors"] == revisions and len(data["outcomes"]) == len(items)
    json.dumps(data)


def test_a_bad_set_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    good = load_check_set()[0]
    record = {
        "id": good.id,
        "category": "vague",
        "kind": good.kind,
        "question": good.question,
        "reference": good.reference,
        "aliases": list(good.aliases),
        "deprecated": [],
        "answer": "x",
        "label": "reject",
    }
    path.write_text(json.dumps({**record, "label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match=rf"^{path}:1: label 'maybe' is not one of"):
        load_check_set(path)
    path.write_text(json.dumps({**record, "context": "x", "kind": "opinion"}) + "\n")
    with pytest.raises(ValueError, match=rf"^{path}:1: kind 'opinion' is not one of"):
        load_check_set(path)
    path.write_text("{not json\n")
    with pytest.raises(ValueError, match=rf"^{path}:1: not JSON"):
        load_check_set(path)


def _context_record(item_id: str, category: str, context: str, label: str) -> dict[str, object]:
    return {
        "id": item_id,
        "category": category,
        "kind": "recall",
        "subject": "Rhiannon",
        "question": "Where does Rhiannon live now?",
        "reference": "Lisbon",
        "aliases": ["Lisbon"],
        "deprecated": [],
        "others": [["Porto"]],
        "context": context,
        "label": label,
    }


def test_a_set_may_mix_contexts_and_answers_with_categories_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    answer = {
        "id": "a1",
        "category": "my answers",
        "kind": "recall",
        "question": "Where does Rhiannon live now?",
        "reference": "Lisbon",
        "aliases": ["Lisbon"],
        "deprecated": [],
        "answer": "Lisbon.",
        "label": "accept",
    }
    records = [
        answer,
        _context_record("c1", "my contexts", "user: I live in Lisbon now.", "accept"),
        # A wrong label on purpose: the reader rejects a question, so this is a false reject.
        _context_record("c2", "my contexts", "user: Is Lisbon nice in spring?", "accept"),
        _context_record("c3", "hypotheticals", "user: If we moved, Lisbon would win.", "reject"),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    items = load_check_set(path)
    report = run_judge_check(RuleJudge(), items)
    assert [o.accepted for o in report.outcomes] == [True, True, False, False]
    rows = {row["category"]: row for row in report.categories()}
    assert list(rows) == ["my answers", "my contexts", "hypotheticals"]
    assert rows["my contexts"]["false_rejects"] == 1 and rows["hypotheticals"]["false_accepts"] == 0
    assert report.accuracy == 0.75 and report.false_accept_rate == 0.0
    assert not report.meets_targets and "NOT met" in report.render()
    assert "contexts: careful@" in report.judge


def test_the_shipped_context_set_meets_the_targets() -> None:
    items = load_check_set(contexts=True)
    assert len(items) >= 150 and all(item.context is not None for item in items)
    report = run_judge_check(RuleJudge(), items)
    assert report.meets_targets, report.render()
