"""Every example of the rules file, tried: a pattern by its rule, a reading by the reader."""

from __future__ import annotations

import re

from drift_pipeline.evaluation.reader import ReaderProbe, read_context
from drift_pipeline.evaluation.reader._rules import Example, Rules

__all__ = ["example_failure", "failing_examples"]


def _example_probe(example: Example) -> ReaderProbe:
    row: dict[str, object] = {
        "probe_id": "example",
        "probe_type": "recall",
        "subtype": "temporal" if example.kind == "temporal" else "fact",
        "polarity": "negative" if example.kind == "yes_no" else "positive",
        "subject": "principal",
        "question": example.question,
        "answer": "2027-05-03" if example.kind == "temporal" else example.value,
        "aliases": ["2027-05-03"] if example.kind == "temporal" else [example.value],
        "slot": example.slot,
        "evidence_terms": [example.value] if example.kind == "temporal" else [],
    }
    others = [[other] for other in example.others]
    return ReaderProbe.from_row(row, subject_names=["Rhiannon Price"], others=others)


def example_failure(rules: Rules, rule_id: str, example: Example) -> str | None:
    """Why one example of a rule does not pass (``None`` when it does).

    A pattern example is tried with the rule's pattern (or word list); a reading example is
    read by the careful reader, and passes when a mention of the value gets the example's
    frame decided by this rule.
    """
    if example.text is not None:
        rule = rules.rule(rule_id)
        found: re.Match[str] | bool | None
        if rule.listed:  # a word list: is the text one of its words
            found = example.text in rules.words(rule_id)
        elif rule.alternatives is not None:
            found = rules.alternation(rule_id).search(example.text)
        else:
            found = rules.pattern(rule_id).search(example.text)
        got = found.group(0) if isinstance(found, re.Match) else bool(found)
        wanted = example.matches
        ok = bool(got) == wanted if isinstance(wanted, bool) else got == wanted
        return None if ok else f"{rule_id}: {example.text!r} gives {got!r}, not {wanted!r}"
    assert example.context is not None  # the model makes sure
    reading = read_context(example.context, _example_probe(example))
    frames = [(m.frame, m.rule) for m in reading.mentions if m.value == example.value]
    if (example.frame, rule_id) in frames:
        return None
    return f"{rule_id}: {example.context!r} reads {example.value!r} as {frames or 'unmentioned'}"


def failing_examples(rules: Rules) -> list[str]:
    """Every example of every rule and compound case that does not pass, one line each."""
    failures = []
    for rule in rules.spec.rules:
        for example in rule.examples:
            failure = example_failure(rules, rule.id, example)
            if failure:
                failures.append(f"{rules.source}: rule {failure}")
    return failures
