"""The judge leniency check (``drift judge-check``): how strict a judge is.

The package ships a small labelled set of answers (``evaluation/data/judge_check.jsonl``): vague
but on-topic (should be rejected), specific but wrong (rejected), correct but phrased differently
(accepted), and plain correct / incorrect controls. Running a judge over it gives its
false-accept rate (share of should-reject answers it accepted) and false-reject rate (share of
should-accept answers it rejected), so a user sees how lenient or literal their judge is before
trusting its scores. Items whose judge call failed are counted and left out of both rates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from ._judge_llm import JudgeItem, LLMJudge, RuleJudge

__all__ = [
    "CHECK_CATEGORIES",
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
        category: One of :data:`CHECK_CATEGORIES`.
        kind: ``recall`` (positive), ``negative`` (the truth is that it was never said) or
            ``revision`` (a value changed; ``deprecated`` holds the old one).
        question: The probe's question.
        reference: The latent answer.
        aliases: Accepted spellings of the latent answer (for ``negative``: the decoy's).
        deprecated: The old value's spellings (``revision`` only).
        answer: The answer to judge.
        label: ``accept`` or ``reject``: what a sound judge decides.
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
    missing = [name for name in (*_FIELDS, "answer", "label") if name not in record]
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
    for name, allowed in (
        ("category", CHECK_CATEGORIES),
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


def load_check_set(path: Path | None = None) -> list[CheckItem]:
    """The labelled set: ``path`` (JSON lines) or the one the package ships.

    Raises:
        ValueError: One line naming the file, the line and what is wrong.
    """
    if path is None:
        source = resources.files("drift_pipeline.evaluation") / "data" / _SHIPPED
        text = source.read_text(encoding="utf-8")
        name = f"drift_pipeline/evaluation/data/{_SHIPPED}"
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


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class CheckReport:
    """A judge's decisions on the labelled set, and its error rates.

    Attributes:
        judge: The judge's name (``context@1``, ``llm:<model>@<prompt hash>``).
        outcomes: One per item, in the set's order.
    """

    judge: str
    outcomes: tuple[CheckOutcome, ...]

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
        """Per category: items, judged, accepted, errors and the category's error rate."""
        rows = []
        for category in CHECK_CATEGORIES:
            mine = [o for o in self.outcomes if o.item.category == category]
            if not mine:
                continue
            judged = [o for o in mine if o.accepted is not None]
            wrong = sum(1 for o in judged if o.accepted != (o.item.label == "accept"))
            rows.append(
                {
                    "category": category,
                    "expected": mine[0].item.label,
                    "items": len(mine),
                    "accepted": sum(1 for o in judged if o.accepted),
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
            "false_accept_rate": self.false_accept_rate,
            "false_reject_rate": self.false_reject_rate,
            "judge_errors": self.n_errors,
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

        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{100 * value:5.1f}%"

        lines = [
            f"judge: {self.judge}",
            f"{'category':<20} {'expected':<8} {'items':>5} {'accepted':>8} {'errors':>6} "
            f"{'wrong':>7}",
        ]
        for row in self.categories():
            lines.append(
                f"{row['category']:<20} {row['expected']:<8} {row['items']:>5} "
                f"{row['accepted']:>8} {row['errors']:>6} {pct(row['error_rate']):>7}"
            )
        lines.append(
            f"false-accept rate {pct(self.false_accept_rate)}   "
            f"false-reject rate {pct(self.false_reject_rate)}   "
            f"judge errors {self.n_errors} of {len(self.outcomes)} (left out of both rates)"
        )
        return "\n".join(lines)


def run_judge_check(judge: LLMJudge | RuleJudge, items: Sequence[CheckItem]) -> CheckReport:
    """Judge every labelled answer and report the judge's false-accept / false-reject rates."""
    judgements = judge.judge_many([JudgeItem(item.probe(), item.answer) for item in items])
    outcomes = tuple(
        CheckOutcome(item, None if j.verdict is None else bool(j.verdict.correct), j.error)
        for item, j in zip(items, judgements, strict=True)
    )
    return CheckReport(judge.name, outcomes)
