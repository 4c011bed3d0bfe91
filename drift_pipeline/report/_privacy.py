"""Privacy beside the leaderboard: references never ranked, and the canaries each arm leaked.

The Privacy Score stands beside DRIFT-C, never inside it (spec §7.5). A backend registered as
a reference for one metric (``ranked=False``: ``leaky_shared``, which keeps one store for every
entity) is listed after the ranked arms with its Privacy only. Under the table, one line per arm
that leaked says how many canaries it gave away and shows the first; the JSON summary lists
them all. A memory that keeps nothing scores Privacy 1.0, so the board never ranks by it and
says so under the table, with the keep-nothing arm's DRIFT-C beside its perfect Privacy.

A backend the run allowed to keep entities' memories together, and that the conformance check
saw leaking (:func:`allowed_leaks`), carries :data:`ALLOWED_LEAK_MARK` on its row in every view,
and its Privacy is not measured: canaries are sentences that sound secret, so a pooled memory
that drops what sounds secret would score a perfect Privacy while every entity reads every
other's memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from drift_pipeline.evaluation import Leak
from drift_pipeline.memory.backends import backend_registration

__all__ = [
    "ALLOWED_LEAK_MARK",
    "KEEP_NOTHING_ARM",
    "PRIVACY_SECTIONS",
    "allowed_leak_reason",
    "allowed_leaks",
    "is_ranked",
    "json_number",
    "leak_lines",
    "leaks_json",
    "price_line",
]

PRIVACY_SECTIONS = frozenset({"privacy"})
"""The sections an unranked reference shows figures in."""

KEEP_NOTHING_ARM = "amnesiac"
"""The built-in that keeps nothing: Privacy 1.0 for free, so the floor Privacy is read against."""


ALLOWED_LEAK_MARK: Final = "leaks across entities, allowed"
"""The mark on the row of an arm whose backend the run allowed to leak, and that leaked."""


def allowed_leaks(conformance: Mapping[str, Any] | None) -> dict[str, str]:
    """Backends allowed to leak that the check saw leaking: backend → the check's line.

    Args:
        conformance: The run manifest's ``conformance`` verdicts, by backend.
    """
    leaks: dict[str, str] = {}
    for backend, verdict in (conformance or {}).items():
        if isinstance(verdict, Mapping) and verdict.get("leak_allowed") and verdict.get("leak"):
            leaks[str(backend)] = str(verdict["leak"])
    return dict(sorted(leaks.items()))


def allowed_leak_reason(leak: str) -> str:
    """Why an allowed leaker's Privacy is not measured, with what the check saw."""
    return (
        f"{ALLOWED_LEAK_MARK}: the conformance check saw it ({leak}); canary probes ask for "
        "secret-sounding sentences, so a memory shared by every entity that drops what sounds "
        "secret would read as private"
    )


def is_ranked(backend: str) -> bool:
    """Whether a backend is ranked on capability (a registered reference may not be)."""
    try:
        return backend_registration(backend).ranked
    except (KeyError, ValueError):  # an import path or an instance's name: ranked like any
        return True


def leak_lines(arms: Iterable[tuple[str, Sequence[Leak]]]) -> list[str]:
    """One line per arm that leaked: how many canaries, and the first one."""
    lines = []
    for arm, leaks in arms:
        if not leaks:
            continue
        first = leaks[0]
        lines.append(
            f"leaked canaries: {arm}: {len(leaks)} (first: replicate {first.replicate}, "
            f"after session {first.checkpoint}, {first.rationale.split(';')[0]}: "
            f"{first.recalled!r}); every leak in --json"
        )
    return lines


def leaks_json(leaks: Sequence[Leak]) -> list[dict[str, Any]]:
    """The leaked canaries of an arm, for inspection."""
    return [
        {
            "replicate": leak.replicate,
            "checkpoint": leak.checkpoint,
            "probe_id": leak.probe_id,
            "asker": leak.asker,
            "recalled": leak.recalled,
            "rationale": leak.rationale,
        }
        for leak in leaks
    ]


def json_number(value: float | None) -> float | str | None:
    """A figure for JSON: an infinite one (a newcomer that never caught up) as ``"inf"``."""
    if value is not None and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def price_line(arms: Iterable[tuple[str, str, float | None, float | None]]) -> list[str]:
    """What Privacy costs, under a board that shows it: keeping nothing scores it perfectly.

    ``arms`` are the ranked arms as ``(arm, backend, privacy, drift_c)``. Privacy alone would
    rank a memory that keeps nothing first, so the board ranks by DRIFT-C and says so, with the
    keep-nothing arm's DRIFT-C where it ran (the figure a private memory must beat), or how to
    run it where it did not. Nothing when no arm has a Privacy figure.
    """
    arms = list(arms)
    if all(privacy is None for _, _, privacy, _ in arms):
        return []
    floor = [
        f"{arm}: Privacy {privacy:.3f} at DRIFT-C {drift_c:.3f}"
        for arm, backend, privacy, drift_c in arms
        if backend == KEEP_NOTHING_ARM and privacy is not None and drift_c is not None
    ]
    shown = "; ".join(floor) if floor else f"run --backend {KEEP_NOTHING_ARM} beside it to see it"
    return [
        "Privacy (1 − canary recall) is never a rank: a memory that keeps nothing scores 1.000 "
        f"({shown}); read it beside DRIFT-C, which ranks the arms"
    ]
