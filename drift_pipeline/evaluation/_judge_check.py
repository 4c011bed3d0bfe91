"""The judge leniency check (``drift judge-check``): how strict a reader and judge are.

An item is a probe with either an ``answer`` (a reader's answer, for a judge to score) or a
``context`` (the retrieved memory text, for the careful offline reader to read and the judge to
score); ``category`` is any string and rates are reported per category. The package ships two
labelled sets: contexts (``evaluation/data/reader_check.jsonl``, the offline reader's default)
and answers (``evaluation/data/judge_check.jsonl``: vague but on-topic, specific but wrong,
correct but phrased differently, plain controls; the LLM judge's default). The report gives the
accuracy, the false-accept rate (share of should-reject items accepted) and the false-reject
rate (share of should-accept items rejected) against the targets (:data:`TARGET_ACCURACY`,
:data:`TARGET_FALSE_ACCEPT`). Items whose judge call failed are counted and left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from ._judge_llm import JudgeItem, LLMJudge, RuleJudge
from ._reader_check import (
    OTHERS_CONTEXT_SET,
    SHIPPED_CONTEXT_SET,
    ContextItem,
    _pct,
    _rate,
    context_item,
)
from .reader import READER_NAME, READER_VERSION, judge_reading, read_context

__all__ = [
    "CHECK_CATEGORIES",
    "TARGET_ACCURACY",
    "TARGET_FALSE_ACCEPT",
    "CheckItem",
    "CheckOutcome",
    "CheckReport",
    "load_check_set",
    "run_judge_check",
]

CHECK_CATEGORIES: Final = (
    "vague_on_topic",
    "specific_wrong",
    "paraphrase_correct",
    "plain_correct",
    "plain_incorrect",
)
"""The categories of the shipped answer set (any string is accepted in a set of one's own)."""

TARGET_ACCURACY: Final = 0.90
TARGET_FALSE_ACCEPT: Final = 0.05
_KINDS: Final = {
    # kind: (probe_type, subtype, polarity) of the probe an item stands for
    "recall": ("recall", "fact", "positive"),
    "negative": ("recall", "negative", "negative"),
    "revision": ("revision", "fact_update", "positive"),
}
_LABELS: Final = ("accept", "reject")
_FIELDS: Final = ("id", "category", "kind", "question", "reference", "aliases", "deprecated")
_SHIPPED: Final = "judge_check.jsonl"


@dataclass(frozen=True)
class CheckItem:
    """One labelled answer.

    Attributes:
        id: Item id.
        category: Any string (rates are reported per category).
        kind: ``recall`` (positive), ``negative`` (the truth is that it was never said) or
            ``revision`` (a value changed; ``deprecated`` holds the old one).
        question: The probe's question.
        reference: The latent answer.
        aliases: Accepted spellings of the latent answer (for ``negative``: the decoy's).
        deprecated: The old value's spellings (``revision`` only).
        answer: The answer to judge (empty for a context item).
        label: ``accept`` or ``reject``: what a sound judge decides.
        context: The retrieved memory text, when the item is read by the offline reader.
        reader_item: The context item as the careful reader sees it (context items only).
    """

    id: str
    category: str
    kind: str
    question: str
    reference: str
    aliases: tuple[str, ...]
    deprecated: tuple[str, ...]
    answer: str
    label: str
    context: str | None = None
    reader_item: ContextItem | None = None

    def probe(self) -> dict[str, Any]:
        """The item as a probe record, as both judges read probes."""
        probe_type, subtype, polarity = _KINDS[self.kind]
        return {
            "probe_id": self.id,
            "probe_type": probe_type,
            "subtype": subtype,
            "polarity": polarity,
            "subject": "subject",
            "question": self.question,
            "answer": self.reference,
            "aliases": list(self.aliases),
            "deprecated": list(self.deprecated),
            "options": [],
            "correct_option": None,
            "default_option": None,
        }


def _item(record: Any, where: str) -> CheckItem:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object")
    if "context" in record:
        read = context_item(record, where)
        return CheckItem(
            id=read.id,
            category=read.category,
            kind=read.kind,
            question=str(record["question"]),
            reference=str(record["reference"]),
            aliases=tuple(record["aliases"]),
            deprecated=tuple(record["deprecated"]),
            answer="",
            label=read.label,
            context=read.context,
            reader_item=read,
        )
    missing = [name for name in (*_FIELDS, "answer", "label") if name not in record]
    if missing:
        raise ValueError(
            f"{where}: missing field(s) {', '.join(missing)} (an item needs an answer or a context)"
        )
    if not isinstance(record["category"], str) or not record["category"]:
        raise ValueError(f"{where}: category must be a non-empty string")
    for name, allowed in (
        ("kind", tuple(_KINDS)),
        ("label", _LABELS),
    ):
        if record[name] not in allowed:
            raise ValueError(f"{where}: {name} {record[name]!r} is not one of {', '.join(allowed)}")
    for name in ("aliases", "deprecated"):
        value = record[name]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}: {name} must be a list of strings")
    return CheckItem(
        id=str(record["id"]),
        category=record["category"],
        kind=record["kind"],
        question=str(record["question"]),
        reference=str(record["reference"]),
        aliases=tuple(record["aliases"]),
        deprecated=tuple(record["deprecated"]),
        answer=str(record["answer"]),
        label=record["label"],
    )


def load_check_set(
    path: Path | None = None, *, contexts: bool = False, others: bool = False
) -> list[CheckItem]:
    """The labelled set: ``path`` (JSON lines) or one the package ships.

    Args:
        path: A set of one's own; items carry an ``answer`` or a ``context``.
        contexts: Without ``path``: the shipped context set instead of the answer set.
        others: With ``contexts``: the context sets written by other authors.

    Raises:
        ValueError: One line naming the file, the line and what is wrong.
    """
    if path is None:
        shipped = SHIPPED_CONTEXT_SET if contexts else _SHIPPED
        if contexts and others:
            shipped = OTHERS_CONTEXT_SET
        source = resources.files("drift_pipeline.evaluation") / "data" / shipped
        text = source.read_text(encoding="utf-8")
        name = f"drift_pipeline/evaluation/data/{shipped}"
    else:
        text, name = path.read_text(encoding="utf-8"), str(path)
    items: list[CheckItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name}:{number}: not JSON ({error.msg})") from None
        items.append(_item(record, f"{name}:{number}"))
    if not items:
        raise ValueError(f"{name}: no items")
    ids = [item.id for item in items]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise ValueError(f"{name}: item id {duplicate!r} is used twice")
    return items


@dataclass(frozen=True)
class CheckOutcome:
    """What the judge decided on one item.

    Attributes:
        item: The labelled item.
        accepted: The judge accepted the answer (``None`` when its call failed).
        error: One line, when the judge failed.
    """

    item: CheckItem
    accepted: bool | None
    error: str | None


@dataclass(frozen=True)
class CheckReport:
    """A judge's decisions on the labelled set, and its error rates.

    Attributes:
        judge: The judge's name (``context@2``, ``llm:<model>@<prompt hash>``); with
            context items, also the reader that read them.
        outcomes: One per item, in the set's order.
    """

    judge: str
    outcomes: tuple[CheckOutcome, ...]

    @property
    def accuracy(self) -> float | None:
        """Share of judged items decided as labelled (failed calls left out)."""
        judged = [o for o in self.outcomes if o.accepted is not None]
        return _rate(sum(o.accepted == (o.item.label == "accept") for o in judged), len(judged))

    @property
    def meets_targets(self) -> bool:
        """Accuracy ≥ :data:`TARGET_ACCURACY` and false accepts ≤ :data:`TARGET_FALSE_ACCEPT`."""
        accuracy, false_accept = self.accuracy, self.false_accept_rate
        return (
            accuracy is not None
            and accuracy >= TARGET_ACCURACY
            and (false_accept or 0.0) <= TARGET_FALSE_ACCEPT
        )

    def _judged(self, label: str) -> list[CheckOutcome]:
        return [o for o in self.outcomes if o.item.label == label and o.accepted is not None]

    @property
    def false_accept_rate(self) -> float | None:
        """Share of should-reject answers the judge accepted (failed calls left out)."""
        judged = self._judged("reject")
        return _rate(sum(1 for o in judged if o.accepted), len(judged))

    @property
    def false_reject_rate(self) -> float | None:
        """Share of should-accept answers the judge rejected (failed calls left out)."""
        judged = self._judged("accept")
        return _rate(sum(1 for o in judged if not o.accepted), len(judged))

    @property
    def n_errors(self) -> int:
        """Items whose judge call failed."""
        return sum(1 for o in self.outcomes if o.accepted is None)

    def categories(self) -> list[dict[str, Any]]:
        """Per category (first-seen order): items, accepted, false accepts and rejects, errors."""
        rows = []
        for category in dict.fromkeys(o.item.category for o in self.outcomes):
            mine = [o for o in self.outcomes if o.item.category == category]
            judged = [o for o in mine if o.accepted is not None]
            wrong = sum(1 for o in judged if o.accepted != (o.item.label == "accept"))
            labels = sorted({o.item.label for o in mine})
            rows.append(
                {
                    "category": category,
                    "expected": labels[0] if len(labels) == 1 else "mixed",
                    "items": len(mine),
                    "accepted": sum(1 for o in judged if o.accepted),
                    "false_accepts": sum(
                        1 for o in judged if o.accepted and o.item.label == "reject"
                    ),
                    "false_rejects": sum(
                        1 for o in judged if not o.accepted and o.item.label == "accept"
                    ),
                    "errors": len(mine) - len(judged),
                    "error_rate": _rate(wrong, len(judged)),
                }
            )
        return rows

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (rates, categories, each item's decision)."""
        return {
            "judge": self.judge,
            "items": len(self.outcomes),
            "accuracy": self.accuracy,
            "false_accept_rate": self.false_accept_rate,
            "false_reject_rate": self.false_reject_rate,
            "judge_errors": self.n_errors,
            "targets": {"accuracy": TARGET_ACCURACY, "false_accept_rate": TARGET_FALSE_ACCEPT},
            "meets_targets": self.meets_targets,
            "categories": self.categories(),
            "outcomes": [
                {
                    "id": o.item.id,
                    "category": o.item.category,
                    "label": o.item.label,
                    "accepted": o.accepted,
                    "error": o.error,
                }
                for o in self.outcomes
            ],
        }

    def render(self) -> str:
        """A plain-text table: categories, then the two rates."""
        lines = [
            f"judge: {self.judge}",
            f"{'category':<28} {'expected':<8} {'items':>5} {'accepted':>8} {'f-acc':>5} "
            f"{'f-rej':>5} {'errors':>6} {'wrong':>7}",
        ]
        for row in self.categories():
            lines.append(
                f"{row['category']:<28} {row['expected']:<8} {row['items']:>5} "
                f"{row['accepted']:>8} {row['false_accepts']:>5} {row['false_rejects']:>5} "
                f"{row['errors']:>6} {_pct(row['error_rate']):>7}"
            )
        lines.append(
            f"accuracy {_pct(self.accuracy)}   "
            f"false-accept rate {_pct(self.false_accept_rate)}   "
            f"false-reject rate {_pct(self.false_reject_rate)}   "
            f"judge errors {self.n_errors} of {len(self.outcomes)} (left out of the rates)"
        )
        lines.append(
            f"targets: accuracy >= {100 * TARGET_ACCURACY:.0f}%, false accepts <= "
            f"{100 * TARGET_FALSE_ACCEPT:.0f}%: {'met' if self.meets_targets else 'NOT met'}"
        )
        return "\n".join(lines)


def run_judge_check(judge: LLMJudge | RuleJudge, items: Sequence[CheckItem]) -> CheckReport:
    """Judge every labelled item and report accuracy, false accepts and false rejects.

    Answer items are scored by ``judge``; context items are read by the careful offline reader
    (the reader the context judge uses) and scored by the same rules as every probe.
    """
    answered = [item for item in items if item.reader_item is None]
    judgements = iter(judge.judge_many([JudgeItem(item.probe(), item.answer) for item in answered]))
    outcomes: list[CheckOutcome] = []
    for item in items:
        read = item.reader_item
        if read is not None:
            verdict = judge_reading(read_context(read.context, read.probe), read.probe)
            outcomes.append(CheckOutcome(item, verdict.correct, None))
            continue
        j = next(judgements)
        outcomes.append(
            CheckOutcome(item, None if j.verdict is None else bool(j.verdict.correct), j.error)
        )
    name = judge.name if answered else ""
    if len(answered) < len(items):
        name = ", ".join(n for n in (name, f"contexts: {READER_NAME}@{READER_VERSION}") if n)
    return CheckReport(name, tuple(outcomes))
