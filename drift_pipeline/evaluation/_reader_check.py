"""Labelled contexts and the reader's error rates on them, per category.

A context item is a judge-check item whose ``context`` (the retrieved memory text) replaces the
``answer``: ``id, kind, question, reference, aliases, deprecated, label, context, category``.
``label`` is ``accept`` when a sound reader, reading the context, answers the probe correctly
(for a ``negative`` item: the decoy was never sincerely stated), ``reject`` otherwise. Optional
fields give what a probe row carries beyond that: ``subject`` (the subject's name),
``decoys`` / ``others`` (spellings of other values of the slot), ``evidence_terms`` (for
``temporal`` items, the value whose change is asked about), ``exclusive`` (false for slots that
hold several values at once) and, for ``action`` items, ``options``, ``correct_option`` and
``default_option``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from .reader import READER_NAME, READER_VERSION, ReaderProbe, Reading, judge_reading, read_context

__all__ = [
    "ContextItem",
    "ContextOutcome",
    "ContextReport",
    "context_item",
    "load_context_set",
    "score_reader",
]

CONTEXT_KINDS: Final = ("recall", "negative", "revision", "temporal", "action")
_REQUIRED: Final = (
    "id",
    "category",
    "kind",
    "question",
    "reference",
    "aliases",
    "deprecated",
    "context",
    "label",
)
SHIPPED_CONTEXT_SET: Final = "reader_check.jsonl"
OTHERS_CONTEXT_SET: Final = "reader_check_others.jsonl"
"""Eleven sets written by other authors without sight of the reader (a regression check)."""


@dataclass(frozen=True)
class ContextItem:
    """One labelled context.

    Attributes:
        id: Item id.
        category: Any string; rates are reported per category.
        kind: ``recall``, ``negative``, ``revision``, ``temporal`` or ``action``.
        context: The retrieved memory text.
        label: ``accept`` or ``reject``.
        probe: The item as the reader sees it.
    """

    id: str
    category: str
    kind: str
    context: str
    label: str
    probe: ReaderProbe


def _strings(value: Any, name: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: {name} must be a list of strings")
    return list(value)


def context_item(record: Any, where: str) -> ContextItem:
    """One labelled context from its JSON record.

    Args:
        record: The parsed JSON object.
        where: ``file:line``, for the error message.

    Raises:
        ValueError: One line naming ``where`` and what is wrong.
    """
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object")
    missing = [name for name in _REQUIRED if name not in record]
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
    if record["kind"] not in CONTEXT_KINDS:
        allowed = ", ".join(CONTEXT_KINDS)
        raise ValueError(f"{where}: kind {record['kind']!r} is not one of {allowed}")
    if record["label"] not in ("accept", "reject"):
        raise ValueError(f"{where}: label {record['label']!r} is not accept or reject")
    kind = record["kind"]
    aliases = _strings(record["aliases"], "aliases", where)
    groups: dict[str, list[list[str]]] = {}
    for name in ("decoys", "others"):
        value = record.get(name, [])
        if not isinstance(value, list):
            raise ValueError(f"{where}: {name} must be a list of lists of strings")
        groups[name] = [_strings(v, name, where) for v in value]
    # ``deprecated`` is one value's spellings, or (as some writers give it) a list of values
    # each with its spellings: the first is the replaced value, any further ones are other
    # values of the slot.
    old = record["deprecated"]
    if isinstance(old, list) and old and all(isinstance(v, list) for v in old):
        old_groups = [_strings(v, "deprecated", where) for v in old]
        deprecated = old_groups[0]
        groups["others"] = [*groups["others"], *old_groups[1:]]
    else:
        deprecated = _strings(old, "deprecated", where)
    evidence = _strings(record.get("evidence_terms", []), "evidence_terms", where)
    if kind == "temporal" and not evidence:
        evidence = event_terms(str(record["question"]), str(record.get("subject", "")))
        if not evidence:
            raise ValueError(f"{where}: a temporal item needs evidence_terms (the changed value)")
    options = record.get("options", [])
    if kind == "action" and not options:
        # Options not spelled out: one per value, the reference's the right one, and a
        # no-memory default that leaves the value out.
        options = [
            {
                "text": str(record["reference"]),
                "terms": aliases or [str(record["reference"])],
                "utility": 1,
            },
            *({"text": v[0], "terms": v, "utility": -1} for v in groups["others"] if v),
            {"text": "Ask first", "terms": [], "utility": 0},
        ]
        record = {**record, "correct_option": 0, "default_option": len(options) - 1}
    if kind == "action" and not isinstance(options, list):
        raise ValueError(f"{where}: an action item needs options")
    if kind == "action" and record.get("correct_option") is None:
        # Options spelled out without indices: the right one is the reference's (else the one
        # of highest utility), and an agent without memory takes the neutral one.
        record = {**record, **_option_indices(options, str(record["reference"]), where)}
    row = {
        "probe_id": str(record["id"]),
        "probe_type": {"negative": "recall", "temporal": "recall"}.get(kind, kind),
        "subtype": {"temporal": "temporal", "negative": "negative"}.get(kind, "fact"),
        "polarity": "negative" if kind == "negative" else "positive",
        "subject": str(record.get("subject", "")),
        "question": str(record["question"]),
        "answer": str(record["reference"]),
        "aliases": aliases,
        "deprecated": deprecated,
        "options": options,
        "correct_option": record.get("correct_option"),
        "default_option": record.get("default_option"),
        "slot": str(record.get("slot", "")),
        "evidence_terms": evidence,
    }
    exclusive = record.get("exclusive")
    probe = ReaderProbe.from_row(
        row,
        subject_names=[str(record["subject"])] if record.get("subject") else [],
        decoys=groups["decoys"],
        others=groups["others"],
        exclusive=bool(exclusive) if exclusive is not None else True,
    )
    return ContextItem(
        str(record["id"]),
        str(record["category"]),
        kind,
        str(record["context"]),
        record["label"],
        probe,
    )


_QUESTION_TEXT: Final = (
    "when what which who whom whose where why how did does do is was were are will has have had "
    "the a an his her their its they them he she on at in to of for from by with date day "
    "last first tell told you about change changed new get got go went start started move "
    "moved run ran learn begin began say said"
)
_QUESTION_WORDS: Final = frozenset(_QUESTION_TEXT.split(" "))


def event_terms(question: str, subject: str) -> list[str]:
    """The event a temporal question asks about, from its words, when an item does not say.

    The proper names in the question other than the subject's ("When did Ruben start at
    Lidl?" → ``Lidl``), else its remaining content words ("When is Mei's wedding?" →
    ``wedding``).
    """
    names = {w.lower() for w in subject.split()}
    words = [w.strip("?.,!'\"") for w in question.replace("'s ", " ").split()]
    words = [w for w in words if w and w.lower() not in names]
    proper = [w for w in words[1:] if w[:1].isupper()]
    if proper:
        return [" ".join(proper), *proper] if len(proper) > 1 else proper
    return [w for w in words if w.lower() not in _QUESTION_WORDS and len(w) > 2]


def _option_indices(options: list[Any], reference: str, where: str) -> dict[str, int | None]:
    utilities = []
    for number, option in enumerate(options):
        if not isinstance(option, dict) or not isinstance(option.get("text"), str):
            raise ValueError(f"{where}: options[{number}] needs a text")
        utilities.append(option.get("utility", 0))
    texts = [o["text"].strip().lower() for o in options]
    if reference.strip().lower() in texts:
        correct = texts.index(reference.strip().lower())
    else:
        correct = max(range(len(options)), key=lambda i: utilities[i])
    neutral = next((i for i, u in enumerate(utilities) if u == 0), None)
    return {"correct_option": correct, "default_option": neutral}


def load_context_set(path: Path | None = None, *, others: bool = False) -> list[ContextItem]:
    """Labelled contexts from ``path`` (JSON lines), or a set the package ships.

    Args:
        path: A set of one's own.
        others: Without ``path``: the sets written by other authors instead of the
            hand-written one.

    Raises:
        ValueError: One line naming the file, the line and what is wrong.
    """
    if path is None:
        shipped = OTHERS_CONTEXT_SET if others else SHIPPED_CONTEXT_SET
        source = resources.files("drift_pipeline.evaluation") / "data" / shipped
        text, name = source.read_text(encoding="utf-8"), f"evaluation/data/{shipped}"
    else:
        text, name = path.read_text(encoding="utf-8"), str(path)
    items: list[ContextItem] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name}:{number}: not JSON ({error.msg})") from None
        item = context_item(record, f"{name}:{number}")
        if item.id in seen:
            raise ValueError(f"{name}:{number}: item id {item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise ValueError(f"{name}: no items")
    return items


@dataclass(frozen=True)
class ContextOutcome:
    """The reader's decision on one item.

    Attributes:
        item: The labelled item.
        accepted: The judge credited the reading (the probe would be scored correct).
        reading: What the reader concluded.
    """

    item: ContextItem
    accepted: bool
    reading: Reading

    @property
    def right(self) -> bool:
        """Whether the decision matches the label."""
        return self.accepted == (self.item.label == "accept")


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _pct(value: float | None) -> str:
    """A rate as a 5-wide percentage, ``n/a`` when there was nothing to count."""
    return "n/a" if value is None else f"{100 * value:5.1f}%"


@dataclass(frozen=True)
class ContextReport:
    """A reader's decisions on a labelled context set.

    Attributes:
        reader: The reader's name.
        outcomes: One per item, in the set's order.
    """

    reader: str
    outcomes: tuple[ContextOutcome, ...]

    @property
    def accuracy(self) -> float | None:
        """Share of items decided as labelled."""
        return _rate(sum(o.right for o in self.outcomes), len(self.outcomes))

    @property
    def false_accept_rate(self) -> float | None:
        """Share of ``reject`` items the reader credited."""
        rejects = [o for o in self.outcomes if o.item.label == "reject"]
        return _rate(sum(o.accepted for o in rejects), len(rejects))

    @property
    def false_reject_rate(self) -> float | None:
        """Share of ``accept`` items the reader did not credit."""
        accepts = [o for o in self.outcomes if o.item.label == "accept"]
        return _rate(sum(not o.accepted for o in accepts), len(accepts))

    def categories(self) -> list[dict[str, Any]]:
        """Per category (in first-seen order): items, accuracy, false accepts, false rejects."""
        order = list(dict.fromkeys(o.item.category for o in self.outcomes))
        rows = []
        for category in order:
            mine = [o for o in self.outcomes if o.item.category == category]
            rows.append(
                {
                    "category": category,
                    "items": len(mine),
                    "accuracy": _rate(sum(o.right for o in mine), len(mine)),
                    "false_accepts": sum(o.accepted and o.item.label == "reject" for o in mine),
                    "false_rejects": sum(
                        (not o.accepted) and o.item.label == "accept" for o in mine
                    ),
                }
            )
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: rates, categories and each item's decision with the reader's rationale."""
        return {
            "reader": self.reader,
            "items": len(self.outcomes),
            "accuracy": self.accuracy,
            "false_accept_rate": self.false_accept_rate,
            "false_reject_rate": self.false_reject_rate,
            "categories": self.categories(),
            "outcomes": [
                {
                    "id": o.item.id,
                    "category": o.item.category,
                    "label": o.item.label,
                    "accepted": o.accepted,
                    "answer": o.reading.answer,
                    "rationale": o.reading.rationale,
                }
                for o in self.outcomes
            ],
        }

    def render(self) -> str:
        """A plain-text table: one row per category, then the overall rates."""
        lines = [
            f"reader: {self.reader}",
            f"{'category':<28} {'items':>5} {'accuracy':>8} {'f-acc':>5} {'f-rej':>5}",
        ]
        for row in self.categories():
            lines.append(
                f"{row['category']:<28} {row['items']:>5} {_pct(row['accuracy']):>8} "
                f"{row['false_accepts']:>5} {row['false_rejects']:>5}"
            )
        lines.append(
            f"accuracy {_pct(self.accuracy)}   false-accept rate {_pct(self.false_accept_rate)}   "
            f"false-reject rate {_pct(self.false_reject_rate)}   items {len(self.outcomes)}"
        )
        return "\n".join(lines)


Reader = Callable[[str, ReaderProbe], Reading]


def score_reader(
    items: Sequence[ContextItem],
    reader: Reader = read_context,
    name: str = f"{READER_NAME}@{READER_VERSION}",
) -> ContextReport:
    """Read every item's context with ``reader``, judge it, and compare with the labels.

    Args:
        items: Labelled contexts (:func:`load_context_set`).
        reader: Any function from (context, probe) to a :class:`Reading`; the careful reader
            by default.
        name: The reader's name, for the report.
    """
    outcomes = []
    for item in items:
        reading = reader(item.context, item.probe)
        accepted = judge_reading(reading, item.probe).correct
        outcomes.append(ContextOutcome(item, accepted, reading))
    return ContextReport(name, tuple(outcomes))
