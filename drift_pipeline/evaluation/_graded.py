"""Graded scores of free-text answers, for datasets that publish their own scorer.

An LLM reader's answer to an imported question is judged right or wrong like any answer
(``correct``); a dataset that reports a graded score instead (LoCoMo's token F1) also gets that
score in ``probe_answers.score``, so its figures compare with published ones. Which scorer
applies is read from the probe's slot family (the part of ``slot`` before ``/``), which the
importer sets. The context judge reads no free text, so its scores stay 1/0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import pyarrow as pa

from .locomo_f1 import CATEGORY_OF_SUBTYPE, locomo_f1

__all__ = ["GRADED_SCORERS", "graded_scores"]


def _locomo(answer: str, probe: Mapping[str, Any]) -> float:
    return locomo_f1(answer, str(probe["answer"]), CATEGORY_OF_SUBTYPE[str(probe["subtype"])])


GRADED_SCORERS: Final[Mapping[str, Callable[[str, Mapping[str, Any]], float]]] = {
    "locomo": _locomo,
}
"""Slot family → the dataset's own scorer of a free-text answer, in [0, 1]."""


def graded_scores(
    probes: pa.Table, answers: Sequence[str], scores: Sequence[float | None]
) -> list[float | None]:
    """``scores`` with every graded probe's entry replaced by its dataset's score.

    Args:
        probes: The probes, in the order of ``answers`` (``slot``, ``subtype``, ``answer``).
        answers: The reader's answer to each probe.
        scores: The scores so far; a ``None`` (a failed reader or judge call) stays ``None``.
    """
    out = list(scores)
    slots = probes.column("slot").to_pylist()
    if not any(str(slot).partition("/")[0] in GRADED_SCORERS for slot in slots):
        return out
    for index, probe in enumerate(probes.select(["slot", "subtype", "answer"]).to_pylist()):
        scorer = GRADED_SCORERS.get(str(probe["slot"]).partition("/")[0])
        if scorer is not None and out[index] is not None:
            out[index] = scorer(answers[index], probe)
    return out
