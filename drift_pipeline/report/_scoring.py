"""Who scored a leaderboard, and how often they are right: the lines and JSON every view shows.

A score travels with its reader's limits. Every leaderboard names the reader and judge behind
its cells (with versions) and quotes their figures on the labelled sets the package ships
(:func:`drift_pipeline.evaluation.shipped_figures`), as measured with that very version; a
reader or judge the package has no figure for is said to be not measured, never given one.
Under the offline reader, one line gives its figures on text it has not met (sets by other
authors kept outside the package and never used to revise its rules), or says they are not
measured for this reader, and one line says that ``--reader llm`` is the exact path.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any, Final

from drift_pipeline.evaluation import (
    HELD_OUT,
    MEASURE_COMMAND,
    OFFLINE_SCORING,
    Scoring,
    SetFigures,
    ShippedFigures,
    shipped_figures,
)

__all__ = ["EXACT_PATH_LINE", "cell_scoring", "scoring_json", "scoring_lines"]

EXACT_PATH_LINE: Final = (
    "offline reading is approximate, and less accurate on text it has not met: "
    "`--reader llm` is the exact path"
)
"""The visible line under every leaderboard the offline reader scored."""
HAND_WRITTEN: Final = "reader_check"
BY_OTHERS: Final = "reader_check_others"
ANSWERS: Final = "judge_check"


def cell_scoring(cell: object) -> Scoring:
    """The reader and judge a cell records (a cell that records none: the offline default)."""
    scoring = getattr(cell, "scoring", None)
    return scoring if isinstance(scoring, Scoring) else OFFLINE_SCORING


def distinct(scorings: Iterable[Scoring]) -> list[Scoring]:
    """Each scoring once, in first-seen order."""
    return list(dict.fromkeys(scorings))


def _careful_version(scoring: Scoring) -> str | None:
    """The careful reader whose rules decided the cell's verdicts (``None``: not known)."""
    if scoring.offline:
        return scoring.reader
    if scoring.judge_kind == "rule":
        _, _, careful = scoring.judge.partition("+")
        return careful or None
    return None


def _figures(scoring: Scoring) -> ShippedFigures | None:
    figures = shipped_figures()
    careful = _careful_version(scoring)
    return figures if figures is not None and figures.reader == careful else None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _span(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{_pct(min(present))}–{_pct(max(present))}" if present else "n/a"


def _reader_text(figures: ShippedFigures) -> str:
    parts = []
    own = figures.by_name(HAND_WRITTEN)
    if own is not None:
        parts.append(
            f"hand-written, {own.items:,} items: accuracy {_pct(own.accuracy)}, "
            f"false accepts {_pct(own.false_accept_rate)}"
        )
    others = figures.by_name(BY_OTHERS)
    if others is not None:
        per_set = figures.others_sets()
        spread = (
            f" ({_span([s.accuracy for s in per_set])} per set)" if per_set else "",
            f" ({_span([s.false_accept_rate for s in per_set])})" if per_set else "",
        )
        parts.append(
            f"by other authors and used to revise its rules, {len(per_set) or 1} sets, "
            f"{others.items:,} items: accuracy {_pct(others.accuracy)}{spread[0]}, false accepts "
            f"{_pct(others.false_accept_rate)}{spread[1]}"
        )
    return "; ".join(parts) if parts else "no context set measured"


def _held_out_line(figures: ShippedFigures) -> str:
    """The reader's figures on sets it has not met, or that they are not measured for it."""
    whole = figures.by_name(HELD_OUT)
    if whole is None or whole.reader != figures.reader:
        return (
            "on text it has not met (sets by other authors never used to revise its rules): "
            f"not measured for this reader ({MEASURE_COMMAND} --held-out FILE measures them)"
        )
    per_set = [s for s in figures.held_out_sets() if s.reader == figures.reader]
    return (
        f"on text it has not met (by other authors, kept outside the package and never used to "
        f"revise its rules), {len(per_set) or 1} sets, {whole.items:,} items: accuracy "
        f"{_pct(whole.accuracy)} ({_span([s.accuracy for s in per_set])} per set), false "
        f"accepts {_pct(whole.false_accept_rate)} "
        f"({_span([s.false_accept_rate for s in per_set])})"
    )


def _not_measured(what: str, scoring: Scoring) -> str:
    careful = _careful_version(scoring)
    shipped = shipped_figures()
    if careful is not None and shipped is not None and shipped.reader != careful:
        return (
            f"{what}: not measured (the shipped figures are for {shipped.reader}; "
            f"{MEASURE_COMMAND} re-measures them)"
        )
    return f"{what}: not measured"


def _lines_for(scoring: Scoring) -> list[str]:
    lines = [f"scored by: reader {scoring.reader}, judge {scoring.judge}"]
    figures = _figures(scoring)
    if scoring.offline:
        if figures is None:
            lines.append("  " + _not_measured(f"reader {scoring.reader}", scoring))
        else:
            lines.append(
                f"  reader and judge on the labelled contexts shipped with the package: "
                f"{_reader_text(figures)}"
            )
            lines.append("  " + _held_out_line(figures))
        lines.append("  " + EXACT_PATH_LINE)
        return lines
    lines.append(
        f"  reader {scoring.reader}: not measured (the package ships no labelled figure for an "
        "LLM reader)"
    )
    if scoring.judge_kind == "llm":
        lines.append(
            f"  judge {scoring.judge}: not measured here (`drift judge-check` measures it on the "
            "shipped labelled answers against your model)"
        )
        return lines
    answers = figures.by_name(ANSWERS) if figures is not None else None
    if answers is None:
        lines.append("  " + _not_measured(f"judge {scoring.judge}", scoring))
    else:
        lines.append(
            f"  judge {scoring.judge} (the careful reader's rules over the answer) on the "
            f"{answers.items} labelled answers shipped with the package: accuracy "
            f"{_pct(answers.accuracy)}, false accepts {_pct(answers.false_accept_rate)}"
        )
    return lines


def scoring_lines(scorings: Iterable[Scoring]) -> list[str]:
    """The lines under a leaderboard: per reader and judge, who they are and their figures."""
    return [line for scoring in distinct(scorings) for line in _lines_for(scoring)]


def _records(records: Sequence[SetFigures | None]) -> list[dict[str, Any]] | None:
    present = [asdict(r) for r in records if r is not None]
    return present or None


def scoring_json(scorings: Iterable[Scoring]) -> list[dict[str, Any]]:
    """Per reader and judge: names, their measured figures (``null``: not measured), the note.

    ``reader_figures`` are the careful reader's figures per labelled context set (read and
    judged together, so they are the context judge's too); ``judge_figures`` the rule judge's
    on the shipped labelled answers. Neither is given for an LLM reader or judge.
    """
    out = []
    for scoring in distinct(scorings):
        figures = _figures(scoring)
        reader: list[dict[str, Any]] | None = None
        judge: list[dict[str, Any]] | None = None
        if figures is not None and scoring.offline:
            reader = _records(
                [s for s in figures.sets if s.scores == "reader" and s.reader == figures.reader]
            )
            judge = reader
        elif figures is not None and scoring.judge_kind == "rule":
            judge = _records([figures.by_name(ANSWERS)])
        out.append(
            {
                "reader": scoring.reader,
                "judge": scoring.judge,
                "offline_reader": scoring.offline,
                "reader_figures": reader,
                "judge_figures": judge,
                "note": EXACT_PATH_LINE if scoring.offline else None,
            }
        )
    return out
