"""Answering and judging probes: the context judge (default) or an LLM reader with a judge.

An :class:`Evaluator` turns retrieved texts into the answer columns of ``probe_answers``
(:data:`ANSWER_TABLE_COLUMNS`). It is built by the harness from the command line and the
environment; a backend's options never reach it, so no memory system can change how its output
is read or judged.

- :class:`ContextEvaluator`: the deterministic careful reader (:mod:`.reader`) reads each
  retrieved text and the context judge scores the reading; the default.
- :class:`LLMEvaluator`: the pinned :class:`~._reader_llm.LLMReader` answers each probe from its
  retrieved text (streamed, so its time to first token is measured), then a judge scores the
  answer: the pinned :class:`~._judge_llm.LLMJudge` or the :class:`~._judge_llm.RuleJudge` (which
  reads the answer by the careful reader's rules and scores it with the same judge). A
  failed reader or judge call leaves ``correct`` null and says why in ``judge_error``; the
  metrics leave such rows out and count them (``judge_errors``).

Amnesiac answers come from the same evaluator with empty contexts; for the probes of a family that
``compares_with_amnesiac`` (action), the LLM judge compares each arm's answer with that amnesiac
answer (spec §7.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.world.probe_families import get_probe_family, probe_families

from ._judge import ANSWER_COLUMNS, JUDGE_ID, JUDGE_NAME, JUDGE_VERSION, judge_all
from ._judge_llm import JudgeItem, LLMJudge, RuleJudge
from ._reader_llm import LLMReader
from .reader import READER_NAME, READER_VERSION

__all__ = [
    "ANSWER_TABLE_COLUMNS",
    "ContextEvaluator",
    "Evaluator",
    "LLMEvaluator",
    "latent_profiles",
    "measured_ttft",
]

ANSWER_TABLE_COLUMNS: Final = (*ANSWER_COLUMNS, "reader", "reader_ttft_ms", "judge_error")
"""Columns an evaluator returns, in order: the context judge's, then reader and failure."""

ProbeKey = tuple[int, str]
ProfileKey = tuple[int, int, str]


class Evaluator(Protocol):
    """Reads retrieved texts and judges the answers."""

    def pins(self) -> dict[str, dict[str, Any]]:
        """``{"reader": {...}, "judge": {...}}``: what the run manifest records."""
        ...

    def answer(
        self,
        probes: pa.Table,
        contexts: Mapping[ProbeKey, str],
        amnesiac: pa.Table | None = None,
        profiles: Mapping[ProfileKey, tuple[str, ...]] | None = None,
    ) -> dict[str, list[Any]]:
        """Answer and judge every probe of ``probes``.

        Args:
            probes: The world's probes.
            contexts: Retrieved text per (replicate, probe_id); missing → empty.
            amnesiac: The amnesiac's answers (this evaluator's, with empty contexts); ``None``
                when these answers are the amnesiac's.
            profiles: Latent profile lines per (replicate, checkpoint, subject).

        Returns:
            Columns :data:`ANSWER_TABLE_COLUMNS`, rows in the order of ``probes``.
        """
        ...


class ContextEvaluator:
    """The careful reader and the context judge: deterministic, offline, the default."""

    def pins(self) -> dict[str, dict[str, Any]]:
        """The careful reader reads; the context judge scores its readings."""
        return {
            "reader": {"name": READER_NAME, "version": READER_VERSION},
            "judge": {"name": JUDGE_NAME, "version": JUDGE_VERSION},
        }

    def answer(
        self,
        probes: pa.Table,
        contexts: Mapping[ProbeKey, str],
        amnesiac: pa.Table | None = None,
        profiles: Mapping[ProfileKey, tuple[str, ...]] | None = None,
    ) -> dict[str, list[Any]]:
        """:func:`~._judge.judge_all`, plus the reader columns (no model, nothing measured)."""
        columns = judge_all(probes, dict(contexts))
        n = len(columns["probe_id"])
        columns["reader"] = [JUDGE_ID] * n
        columns["reader_ttft_ms"] = [None] * n
        columns["judge_error"] = [None] * n
        return columns


class LLMEvaluator:
    """The pinned LLM reader, then a judge (the pinned LLM judge or the rule judge).

    Args:
        reader: The reader.
        judge: The judge of the reader's answers.
    """

    def __init__(self, reader: LLMReader, judge: LLMJudge | RuleJudge) -> None:
        self.reader = reader
        self.judge = judge

    def pins(self) -> dict[str, dict[str, Any]]:
        """Model, prompt hash and settings of the reader and the judge."""
        return {"reader": self.reader.pin(), "judge": self.judge.pin()}

    def answer(
        self,
        probes: pa.Table,
        contexts: Mapping[ProbeKey, str],
        amnesiac: pa.Table | None = None,
        profiles: Mapping[ProfileKey, tuple[str, ...]] | None = None,
    ) -> dict[str, list[Any]]:
        """Read every probe's context, judge the answers; failures are recorded, not scored."""
        rows = probes.to_pylist()
        keys = [(int(row["replicate"]), str(row["probe_id"])) for row in rows]
        replies = self.reader.read_many(
            [(row, contexts.get(key, "")) for row, key in zip(rows, keys, strict=True)]
        )
        no_memory = _compared_amnesiac_answers(amnesiac)
        compares = isinstance(self.judge, LLMJudge)
        items: list[JudgeItem] = []
        waiting: list[int] = []
        errors: list[str | None] = [reply.error for reply in replies]
        for index, (row, key, reply) in enumerate(zip(rows, keys, replies, strict=True)):
            if reply.text is None:
                continue
            other: str | None = None
            # Only the LLM judge compares with the amnesiac's answer (the rule judge scores an
            # action against the default option).
            family = get_probe_family(row["probe_type"])
            if family.compares_with_amnesiac and amnesiac is not None and compares:
                other = no_memory.get(key)
                if other is None:
                    errors[index] = "judge: no amnesiac action to compare with (its call failed)"
                    continue
            profile = (profiles or {}).get(
                (key[0], int(row["checkpoint"]), str(row["subject"])), ()
            )
            items.append(JudgeItem(row, reply.text, other, profile))
            waiting.append(index)
        judgements = self.judge.judge_many(items)
        verdicts: list[Any] = [None] * len(rows)
        for index, judgement in zip(waiting, judgements, strict=True):
            verdicts[index] = judgement.verdict
            if judgement.error:
                errors[index] = judgement.error
        columns: dict[str, list[Any]] = {name: [] for name in ANSWER_TABLE_COLUMNS}
        for row, reply, verdict, error in zip(rows, replies, verdicts, errors, strict=True):
            scored = verdict is not None and error is None
            values = {
                "replicate": row["replicate"],
                "checkpoint": row["checkpoint"],
                "probe_id": row["probe_id"],
                "probe_type": row["probe_type"],
                "subtype": row["subtype"],
                "answer": reply.text or "",
                "correct": verdict.correct if scored else None,
                "action_score": verdict.action_score if scored else None,
                "update_correct": verdict.update_correct if scored else None,
                "deprecation_correct": verdict.deprecation_correct if scored else None,
                "judge": self.judge.name,
                "rationale": verdict.rationale if scored else "",
                "reader": self.reader.name,
                "reader_ttft_ms": reply.ttft_ms,
                "judge_error": error,
            }
            for name in ANSWER_TABLE_COLUMNS:
                columns[name].append(values[name])
        return columns


def _compared_amnesiac_answers(amnesiac: pa.Table | None) -> dict[ProbeKey, str]:
    """The amnesiac's answers that answers are judged against, by (replicate, probe_id).

    Only probes of a family that ``compares_with_amnesiac``; failed calls are left out.
    """
    if amnesiac is None:
        return {}
    compared = [family.name for family in probe_families() if family.compares_with_amnesiac]
    if not compared:
        return {}
    keep = pc.equal(amnesiac["probe_type"], compared[0])
    for name in compared[1:]:
        keep = pc.or_(keep, pc.equal(amnesiac["probe_type"], name))
    wanted = amnesiac.filter(keep)
    out: dict[ProbeKey, str] = {}
    errors = (
        wanted["judge_error"].to_pylist()
        if "judge_error" in wanted.column_names
        else [None] * wanted.num_rows
    )
    for replicate, probe_id, answer, error in zip(
        wanted["replicate"].to_pylist(),
        wanted["probe_id"].to_pylist(),
        wanted["answer"].to_pylist(),
        errors,
        strict=True,
    ):
        if not (error or "").startswith("reader:"):
            out[(int(replicate), str(probe_id))] = str(answer)
    return out


def latent_profiles(ground_truth: pa.Table) -> dict[ProfileKey, tuple[str, ...]]:
    """Current latent facts as ``slot: value`` lines per (replicate, checkpoint, subject)."""
    current = ground_truth.filter(pc.equal(ground_truth["current"], True))
    grouped: dict[ProfileKey, list[str]] = {}
    for replicate, checkpoint, subject, slot, value in zip(
        current["replicate"].to_pylist(),
        current["checkpoint"].to_pylist(),
        current["subject"].to_pylist(),
        current["slot"].to_pylist(),
        current["value"].to_pylist(),
        strict=True,
    ):
        grouped.setdefault((int(replicate), int(checkpoint), str(subject)), []).append(
            f"{slot}: {value}"
        )
    return {key: tuple(sorted(lines)) for key, lines in grouped.items()}


def measured_ttft(answers: pa.Table, retrievals: pa.Table) -> npt.NDArray[np.float64] | None:
    """The reader's measured TTFT per ``retrievals`` row (NaN where unmeasured), or ``None``.

    ``None`` when no answer carries a measurement (the context judge): TTFRT is then modelled.
    """
    if "reader_ttft_ms" not in answers.column_names:
        return None
    ttft = answers["reader_ttft_ms"].to_pylist()
    if all(value is None for value in ttft):
        return None
    by_key: dict[ProbeKey, float] = {
        (int(r), str(p)): float("nan") if t is None else float(t)
        for r, p, t in zip(
            answers["replicate"].to_pylist(), answers["probe_id"].to_pylist(), ttft, strict=True
        )
    }
    return np.asarray(
        [
            by_key.get((int(r), str(p)), float("nan"))
            for r, p in zip(
                retrievals["replicate"].to_pylist(),
                retrievals["probe_id"].to_pylist(),
                strict=True,
            )
        ],
        dtype=np.float64,
    )
