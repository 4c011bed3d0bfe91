"""The diversity audit: how many phrasings worlds use, and how many another world set shares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._baseline import extract
from ._read import WorldText


@dataclass(frozen=True)
class GroupCount:
    """Sentences and distinct skeletons of one event type or decoy kind.

    Attributes:
        group: The event type or decoy kind.
        sentences: How many sentences carry it.
        skeletons: How many distinct skeletons they reduce to.
        shared: Share of the sentences whose skeleton the other world set also has
            (``None`` without one).
    """

    group: str
    sentences: int
    skeletons: int
    shared: float | None


@dataclass(frozen=True)
class DiversityReport:
    """Everything ``drift audit diversity`` prints.

    Attributes:
        worlds: Worlds read.
        events: Per event type.
        decoys: Per decoy kind.
        event_shared: Share of all event sentences whose skeleton the other set has.
        decoy_shared: The same for decoy sentences.
        baseline_signal: Share of event turns from which the regex baseline keeps the value.
        baseline_decoys: Share of decoy turns from which it stores some value.
    """

    worlds: int
    events: tuple[GroupCount, ...]
    decoys: tuple[GroupCount, ...]
    event_shared: float | None
    decoy_shared: float | None
    baseline_signal: float
    baseline_decoys: float

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "worlds": self.worlds,
            "events": {g.group: [g.sentences, g.skeletons, g.shared] for g in self.events},
            "decoys": {g.group: [g.sentences, g.skeletons, g.shared] for g in self.decoys},
            "event_shared": self.event_shared,
            "decoy_shared": self.decoy_shared,
            "baseline_signal": self.baseline_signal,
            "baseline_decoys": self.baseline_decoys,
        }


def _groups(
    by_group: dict[str, list[str]], other: dict[str, list[str]] | None
) -> tuple[tuple[GroupCount, ...], float | None]:
    known = {shape for shapes in (other or {}).values() for shape in shapes}
    counts = []
    total = hits = 0
    for group in sorted(by_group):
        shapes = by_group[group]
        shared = sum(shape in known for shape in shapes)
        total += len(shapes)
        hits += shared
        counts.append(
            GroupCount(
                group,
                len(shapes),
                len(set(shapes)),
                shared / len(shapes) if other is not None and shapes else None,
            )
        )
    return tuple(counts), (hits / total if other is not None and total else None)


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def diversity_report(worlds: WorldText, against: WorldText | None = None) -> DiversityReport:
    """Skeleton counts per group, the share ``against`` already has, and the baseline's reach."""
    events, event_shared = _groups(worlds.events, against.events if against else None)
    decoys, decoy_shared = _groups(worlds.decoys, against.decoys if against else None)
    signal = _share(
        (slot.partition("/")[0], value) in extract(turn)
        for _, slot, value, turn in worlds.event_turns
    )
    admitted = _share(bool(extract(turn)) for _, turn in worlds.decoy_turns)
    return DiversityReport(
        worlds.worlds, events, decoys, event_shared, decoy_shared, signal, admitted
    )


def render(report: DiversityReport) -> str:
    """The report as the text ``drift audit diversity`` prints."""
    lines = [f"{report.worlds} worlds"]
    for title, groups, shared in (
        ("event type", report.events, report.event_shared),
        ("decoy kind", report.decoys, report.decoy_shared),
    ):
        lines.append(f"{title:<24} {'sentences':>9} {'skeletons':>9} {'shared':>7}")
        for group in groups:
            share = "" if group.shared is None else f"{group.shared:.0%}"
            lines.append(f"{group.group:<24} {group.sentences:>9} {group.skeletons:>9} {share:>7}")
        if shared is not None:
            lines.append(f"{'all':<24} {'':>9} {'':>9} {shared:>7.0%}")
    lines.append(
        f"regex baseline: keeps {report.baseline_signal:.0%} of signal values, "
        f"stores a value from {report.baseline_decoys:.0%} of decoy turns"
    )
    return "\n".join(lines)
