"""``drift bench``: every performance figure, measured in one run, as a table and as JSON."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _measure as measure
from ._meter_overhead import meter_overhead_ms_p99
from ._targets import BUILT_INS, KEYS, TARGET_BY_KEY, TARGETS
from ._worlds import BenchWorkspace

Figure = float | dict[str, float] | None
"""A figure: a number, one number per backend (``read_p99_ms``), or ``None`` (not measured)."""


def parse_only(text: str | None) -> frozenset[str]:
    """The keys ``--only KEY[,KEY]`` names (every key when ``text`` is empty).

    Raises:
        ValueError: Naming an unknown key and listing the known ones.
    """
    if not text:
        return frozenset(KEYS)
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [key for key in chosen if key not in KEYS]
    if unknown:
        raise ValueError(f"--only: unknown key {unknown[0]!r}; keys: {', '.join(KEYS)}")
    return frozenset(chosen)


@dataclass
class BenchReport:
    """The figures of one bench run; ``None`` where a key was not measured."""

    figures: dict[str, Figure] = field(default_factory=lambda: dict.fromkeys(KEYS))

    def json(self) -> dict[str, Any]:
        """Exactly the issue's keys, in order; numbers rounded to what the timing supports."""
        out: dict[str, Any] = {}
        for key in KEYS:
            value = self.figures.get(key)
            if isinstance(value, dict):
                out[key] = {name: _round(v) for name, v in value.items()}
            else:
                out[key] = None if value is None else _round(value)
        return out

    def rows(self) -> list[tuple[str, str, str, str]]:
        """Table rows ``(key, value, target, verdict)``; one row per backend for read p99."""
        rows: list[tuple[str, str, str, str]] = []
        for target in TARGETS:
            value = self.figures.get(target.key)
            if value is None:
                rows.append((target.key, "—", target.shown, "not measured"))
                continue
            items = (
                [(f"{target.key}.{name}", v) for name, v in value.items()]
                if isinstance(value, dict)
                else [(target.key, value)]
            )
            for label, number in items:
                verdict = "ok" if math.isfinite(number) and target.met(number) else "short"
                if target.bound is None:
                    verdict = "info" if math.isfinite(number) else "short"
                rows.append((label, f"{_shown(number)} {target.unit}", target.shown, verdict))
        return rows

    def short(self) -> list[str]:
        """Labels of the measured figures that miss their target."""
        return [label for label, _, _, verdict in self.rows() if verdict == "short"]

    def table(self) -> str:
        """The fixed-width table ``drift bench`` prints."""
        header = ("key", "value", "target", "ok/short")
        rows = [header, *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _round(value: float) -> float | None:
    if not math.isfinite(value):
        return None
    return round(value, 3) if abs(value) < 1000 else round(value, 1)


def _shown(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def run_bench(
    suite: Path,
    only: Iterable[str] = KEYS,
    log: Callable[[str], None] = lambda _line: None,
    workspace: BenchWorkspace | None = None,
    stretched_sessions: int = measure.LONG_SESSIONS,
) -> BenchReport:
    """Measure the chosen figures, in an order that reuses the worlds between them.

    Args:
        suite: The canonical suite folder (holding ``ua-baseline-001.yaml``).
        only: Keys to measure (default: all).
        log: Progress lines.
        workspace: Where worlds and outputs go (default: a new temporary folder, removed after).
        stretched_sessions: Sessions of the derived long horizon for read p99 and scaling
            (the issue's 5000; smaller only to test the plumbing).

    Returns:
        The report; keys not in ``only`` are ``None``.
    """
    chosen = set(only)
    for key in chosen:
        if key not in TARGET_BY_KEY:
            raise ValueError(f"unknown bench key {key!r}")
    ws = workspace or BenchWorkspace(suite, log=log)
    report = BenchReport()
    put = report.figures.__setitem__
    try:
        if "generate_sessions_per_s" in chosen:
            log("generate_sessions_per_s …")
            put("generate_sessions_per_s", measure.generate_sessions_per_s(ws))
        if chosen & {"floor_ratio", "loop_overhead_us_per_session"}:
            log("floor_ratio, loop_overhead_us_per_session: amnesiac long cell …")
            ratio, overhead = measure.amnesiac_cell(ws)
            if "floor_ratio" in chosen:
                put("floor_ratio", ratio)
            if "loop_overhead_us_per_session" in chosen:
                put("loop_overhead_us_per_session", overhead)
        if chosen & {"read_p99_ms", "scaling_ratio_5000_vs_1000"}:
            backends = BUILT_INS if "read_p99_ms" in chosen else (measure.SCALING_BACKEND,)
            p99, scaling = measure.read_p99_and_scaling(ws, backends, stretched_sessions)
            if "read_p99_ms" in chosen:
                put("read_p99_ms", p99)
            if "scaling_ratio_5000_vs_1000" in chosen:
                put("scaling_ratio_5000_vs_1000", scaling)
        if "peak_rss_mb" in chosen:
            log("peak_rss_mb: drift run, long horizon, full_context …")
            put("peak_rss_mb", measure.peak_rss_mb(ws))
        if "dagster_overhead_ratio" in chosen:
            log(
                f"dagster_overhead_ratio: medium horizon, direct then --via dagster, "
                f"{measure.DAGSTER_PAIRS} times …"
            )
            put("dagster_overhead_ratio", measure.dagster_overhead_ratio(ws))
        suite_keys = {"suite_ratio", "suite_wall_s", "suite_floor_s", "suite_cpu_ratio"}
        if chosen & suite_keys:
            log("suite_ratio: drift run scenarios/, then reading its transcripts …")
            times = measure.suite_wall_and_floor(ws)
            for key, value in (
                ("suite_ratio", times.command.wall_s / times.floor.wall_s),
                ("suite_wall_s", times.command.wall_s),
                ("suite_floor_s", times.floor.wall_s),
                ("suite_cpu_ratio", times.command.cpu_s / times.floor.cpu_s),
            ):
                if key in chosen:
                    put(key, value)
        if "meter_overhead_ms_p99" in chosen:
            log("meter_overhead_ms_p99: chat calls direct and through the token meter …")
            put("meter_overhead_ms_p99", meter_overhead_ms_p99())
    finally:
        if workspace is None:
            ws.close()
    return report
