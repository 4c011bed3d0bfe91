"""The offline reader's measured figures, shipped with the package, and who scored a run.

Every leaderboard says which reader and judge produced it and how often they are right, so a
score never travels without its reader's limits. The figures are measured on the labelled sets
the package ships (``evaluation/data/``) and written to :data:`FIGURES_FILE` by
:data:`MEASURE_COMMAND`; each record names the reader version it was measured with, and a
figure measured with another version than the running one is reported as not measured, never
carried over.

- the hand-written contexts (``reader_check.jsonl``), read by the careful reader;
- the contexts written by other authors (``reader_check_others.jsonl``), whole and per set
  (each set's items share an id prefix of two letters);
- the labelled answers (``judge_check.jsonl``) scored by the rule judge, the judge of an LLM
  reader's answers under ``--reader llm --judge rule``;
- sets written by other authors that were never used to revise the rules and are kept outside
  the package, so that they stay unseen (``held_out``, whole and per set): the only figures of
  text the reader has not met. They are measured by whoever holds the files
  (``drift judge-check --write-figures --held-out FILE``), recorded with each file's digest, and
  kept only while the reader and judge they were measured with are the running ones.

An LLM reader or judge depends on the model behind it, so the package ships no figure for
either: ``drift judge-check`` measures the LLM judge against one's own model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Final, Literal

from ._answering import ContextEvaluator, LLMEvaluator
from ._judge import JUDGE_NAME, JUDGE_VERSION
from ._judge_check import load_check_set, run_judge_check
from ._judge_llm import LLMJudge, RuleJudge
from ._reader_check import (
    OTHERS_CONTEXT_SET,
    SHIPPED_CONTEXT_SET,
    ContextItem,
    load_context_set,
    score_reader,
)
from .reader import READER_NAME, READER_VERSION

__all__ = [
    "CURRENT_READER",
    "FIGURES_FILE",
    "MEASURE_COMMAND",
    "Scoring",
    "SetFigures",
    "ShippedFigures",
    "load_shipped_figures",
    "measure_shipped_figures",
    "scoring_from_answers",
    "scoring_of",
    "shipped_figures",
    "write_shipped_figures",
]

FIGURES_FILE: Final = "reader_figures.json"
"""The shipped figures, in ``drift_pipeline/evaluation/data/``."""
MEASURE_COMMAND: Final = "drift judge-check --write-figures"
"""The one command that re-measures every shipped figure and rewrites :data:`FIGURES_FILE`."""
CURRENT_READER: Final = f"{READER_NAME}@{READER_VERSION}"
"""The careful reader this code runs, as every figure records it."""
CONTEXT_JUDGE: Final = f"{JUDGE_NAME}@{JUDGE_VERSION}"
"""The context judge (and the rule judge, which applies its rules to an answer's text)."""
JUDGE_CHECK_SET: Final = "judge_check.jsonl"
HELD_OUT: Final = "held_out"
"""The name of the figures on sets kept outside the package (per set: ``held_out/<prefix>``)."""
SET_PREFIX_LENGTH: Final = 2
"""The items of one set written by other authors share an id prefix of this many letters."""

Written = Literal["this package", "other authors"]


@dataclass(frozen=True)
class SetFigures:
    """A reader's (or judge's) figures on one labelled set.

    Attributes:
        name: ``reader_check``, ``reader_check_others``, ``reader_check_others/<prefix>`` or
            ``judge_check``.
        file: The set's file under ``evaluation/data/``.
        written_by: ``this package`` (hand-written alongside the reader) or ``other authors``.
        scores: ``reader`` (contexts read by the careful reader and judged) or ``rule judge``
            (answers scored by the careful reader's rules).
        items: Labelled items.
        accuracy: Share decided as labelled.
        false_accept_rate: Share of should-reject items credited.
        false_reject_rate: Share of should-accept items not credited.
        reader: The careful reader's version string they were measured with.
        judge: The judge's version string.
        held_out: The set is kept outside the package and was never used to revise the rules.
        digest: A held-out set's file(s): the first 12 hex digits of each file's sha256.
    """

    name: str
    file: str
    written_by: Written
    scores: str
    items: int
    accuracy: float | None
    false_accept_rate: float | None
    false_reject_rate: float | None
    reader: str
    judge: str
    held_out: bool = False
    digest: str | None = None


@dataclass(frozen=True)
class ShippedFigures:
    """Every shipped figure, as :data:`FIGURES_FILE` holds them."""

    reader: str
    judge: str
    command: str
    sets: tuple[SetFigures, ...]

    def by_name(self, name: str) -> SetFigures | None:
        """The figures of one set, or ``None``."""
        return next((s for s in self.sets if s.name == name), None)

    def others_sets(self) -> list[SetFigures]:
        """The per-set figures of the contexts written by other authors."""
        return [s for s in self.sets if s.name.startswith(f"{_stem(OTHERS_CONTEXT_SET)}/")]

    def held_out_sets(self) -> list[SetFigures]:
        """The per-set figures of the held-out sets (kept outside the package)."""
        return [s for s in self.sets if s.name.startswith(f"{HELD_OUT}/")]

    def shipped_only(self) -> ShippedFigures:
        """These figures without the held-out ones (what the package alone can re-measure)."""
        return replace(self, sets=tuple(s for s in self.sets if not s.held_out))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (the file's content)."""
        return {
            "reader": self.reader,
            "judge": self.judge,
            "command": self.command,
            "sets": [asdict(s) for s in self.sets],
        }


def _stem(file: str) -> str:
    return file.removesuffix(".jsonl")


def _rounded(value: float | None) -> float | None:
    # Four places: the file stays byte-stable and a share of a few hundred items is exact enough.
    return None if value is None else round(value, 4)


def measure_shipped_figures(held_out: Sequence[Path] = ()) -> ShippedFigures:
    """Re-measure the careful reader and the rule judge on every labelled set the package ships.

    Args:
        held_out: Sets by other authors kept outside the package and never used to revise the
            rules; measured too (whole, and per set by the items' id prefix) when given.

    Raises:
        ValueError: One line naming a held-out file that cannot be read as a labelled set.
    """
    sets: list[SetFigures] = []

    def add(
        name: str, file: str, written_by: Written, scores: str, report: Any, digest: str = ""
    ) -> None:
        sets.append(
            SetFigures(
                name,
                file,
                written_by,
                scores,
                len(report.outcomes),
                _rounded(report.accuracy),
                _rounded(report.false_accept_rate),
                _rounded(report.false_reject_rate),
                CURRENT_READER,
                CONTEXT_JUDGE,
                bool(digest),
                digest or None,
            )
        )

    add(
        _stem(SHIPPED_CONTEXT_SET),
        SHIPPED_CONTEXT_SET,
        "this package",
        "reader",
        score_reader(load_context_set()),
    )
    others = load_context_set(others=True)
    add(
        _stem(OTHERS_CONTEXT_SET),
        OTHERS_CONTEXT_SET,
        "other authors",
        "reader",
        score_reader(others),
    )
    for prefix, mine in _by_set(others).items():
        add(
            f"{_stem(OTHERS_CONTEXT_SET)}/{prefix}",
            OTHERS_CONTEXT_SET,
            "other authors",
            "reader",
            score_reader(mine),
        )
    add(
        _stem(JUDGE_CHECK_SET),
        JUDGE_CHECK_SET,
        "this package",
        "rule judge",
        run_judge_check(RuleJudge(), load_check_set()),
    )
    if held_out:
        files = [(path.name, _digest(path), load_context_set(path)) for path in held_out]
        names = [name for name, _, _ in files]
        if len(set(names)) != len(names):
            raise ValueError(f"--held-out: two files are named {names}: name each set's file apart")
        every = [item for _, _, items in files for item in items]
        ids = [item.id for item in every]
        if len(set(ids)) != len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"--held-out: item id {twice!r} is in more than one held-out set")
        digests = ",".join(digest for _, digest, _ in files)
        add(HELD_OUT, ",".join(names), "other authors", "reader", score_reader(every), digests)
        for name, digest, items in files:
            for prefix, mine in _by_set(items).items():
                add(
                    f"{HELD_OUT}/{prefix}",
                    name,
                    "other authors",
                    "reader",
                    score_reader(mine),
                    digest,
                )
    return ShippedFigures(CURRENT_READER, CONTEXT_JUDGE, MEASURE_COMMAND, tuple(sets))


def _by_set(items: Sequence[ContextItem]) -> dict[str, list[ContextItem]]:
    """The items of each set (by the id prefix its author's items share), in first-seen order."""
    sets: dict[str, list[ContextItem]] = {}
    for item in items:
        sets.setdefault(item.id[:SET_PREFIX_LENGTH], []).append(item)
    return sets


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _package_file() -> Path:
    return Path(__file__).resolve().parent / "data" / FIGURES_FILE


def write_shipped_figures(
    path: Path | None = None, held_out: Sequence[Path] = ()
) -> tuple[Path, ShippedFigures]:
    """Re-measure and write :data:`FIGURES_FILE` (default: the package's own copy).

    Without ``held_out`` files, the held-out figures already in the target are kept when they
    were measured with the running reader and judge, and dropped otherwise (they would belong to
    another reader); with them, they are measured afresh.

    Returns:
        Where it was written, and the figures.
    """
    figures = measure_shipped_figures(held_out)
    target = path or _package_file()
    if not held_out and target.is_file():
        before = _parse(json.loads(target.read_text(encoding="utf-8")), str(target))
        kept = [
            s
            for s in before.sets
            if s.held_out and (s.reader, s.judge) == (CURRENT_READER, CONTEXT_JUDGE)
        ]
        figures = replace(figures, sets=figures.sets + tuple(kept))
    target.write_text(json.dumps(figures.to_json(), indent=2) + "\n", encoding="utf-8")
    return target, figures


def _parse(data: Any, where: str) -> ShippedFigures:
    try:
        sets = tuple(SetFigures(**record) for record in data["sets"])
        return ShippedFigures(str(data["reader"]), str(data["judge"]), str(data["command"]), sets)
    except (KeyError, TypeError) as error:
        raise ValueError(
            f"{where}: not a figures file ({error}); rerun {MEASURE_COMMAND}"
        ) from None


def load_shipped_figures(path: Path | None = None) -> ShippedFigures | None:
    """The figures as shipped (``None`` when the package has no figures file).

    Raises:
        ValueError: One line naming the file, when it is not a figures file.
    """
    if path is not None:
        return _parse(json.loads(path.read_text(encoding="utf-8")), str(path))
    source = resources.files("drift_pipeline.evaluation") / "data" / FIGURES_FILE
    if not source.is_file():
        return None
    where = f"drift_pipeline/evaluation/data/{FIGURES_FILE}"
    return _parse(json.loads(source.read_text(encoding="utf-8")), where)


_loaded: list[ShippedFigures | None] = []


def shipped_figures() -> ShippedFigures | None:
    """The shipped figures (read once per process), whichever reader they were measured with.

    A caller compares their ``reader`` with the reader it reports on: figures measured with
    another version (the reader changed and nobody re-measured) belong to a reader that is not
    the one that scored, and are reported as not measured.
    """
    if not _loaded:
        _loaded.append(load_shipped_figures())
    return _loaded[0]


# --- who scored a run ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scoring:
    """The reader and judge behind a cell's answers.

    Attributes:
        reader: ``careful@<version>`` or the LLM reader's name (``llm:<model>@<sha>/cap<N>``).
        judge: ``context@<version>`` (the reading's judge), ``rule:context@<version>+careful@<v>``
            (the careful reader's rules over an LLM reader's answer) or the LLM judge's name.
        offline: The careful offline reader read the contexts.
    """

    reader: str
    judge: str
    offline: bool

    @property
    def judge_kind(self) -> Literal["context", "rule", "llm"]:
        """Which of the three judges this is."""
        if self.judge.startswith("llm:"):
            return "llm"
        return "rule" if self.judge.startswith("rule:") else "context"


OFFLINE_SCORING: Final = Scoring(CURRENT_READER, CONTEXT_JUDGE, True)
"""The default: the careful reader, and the context judge over its readings."""


def scoring_of(evaluator: object | None) -> Scoring:
    """The :class:`Scoring` of an evaluator (``None``: the default context evaluator).

    Raises:
        TypeError: An evaluator this function does not know (its figures cannot be named).
    """
    if evaluator is None or isinstance(evaluator, ContextEvaluator):
        return OFFLINE_SCORING
    if isinstance(evaluator, LLMEvaluator):
        judge = evaluator.judge
        name = (
            judge.name if isinstance(judge, LLMJudge) else f"rule:{CONTEXT_JUDGE}+{CURRENT_READER}"
        )
        return Scoring(evaluator.reader.name, name, False)
    raise TypeError(f"scoring_of: unknown evaluator {type(evaluator).__name__}")


def scoring_from_answers(readers: Sequence[str], judges: Sequence[str]) -> Scoring | None:
    """The :class:`Scoring` recorded in stored answers' ``reader`` and ``judge`` columns.

    The context judge records ``context@<v>+careful@<r>`` in both; an LLM reader records its
    name, and its judge either the LLM judge's name or the rule judge's ``context@<v>`` (which
    does not say the careful reader's version). ``None`` when the answers hold no name or more
    than one reader or judge.
    """
    reader_names, judge_names = set(readers) - {""}, set(judges) - {""}
    if len(reader_names) != 1 or len(judge_names) != 1:
        return None
    reader, judge = reader_names.pop(), judge_names.pop()
    if not reader.startswith("llm:"):
        context, _, careful = judge.partition("+")
        return Scoring(careful or reader, context, True)
    return Scoring(reader, judge if judge.startswith("llm:") else f"rule:{judge}", False)


# --- the command --------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def main(argv: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    """Re-measure every shipped figure and rewrite the figures file; print one line per set."""
    parser = argparse.ArgumentParser(
        prog=MEASURE_COMMAND,
        description="Re-measure the careful reader and the rule judge on the labelled sets the "
        f"package ships and write evaluation/data/{FIGURES_FILE}.",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="write here instead of the package's own file"
    )
    parser.add_argument(
        "--held-out",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a set by other authors kept outside the package and never used to revise the "
        "rules (repeat for several)",
    )
    args = parser.parse_args(argv)
    echo_written(*write_shipped_figures(args.out, args.held_out), echo)
    return 0


def echo_written(path: Path, figures: ShippedFigures, echo: Callable[[str], None]) -> None:
    """One line per set measured, then the reader, the judge and where the file was written."""
    for s in figures.sets:
        echo(
            f"{s.name:<24} {s.items:>5} items  accuracy {_pct(s.accuracy):>6}  false accepts "
            f"{_pct(s.false_accept_rate):>6}  false rejects {_pct(s.false_reject_rate):>6}"
        )
    echo(f"{figures.reader}, {figures.judge} → {path}")
