"""A probe's drill-down as terminal text: memory after each evidence session, context, verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ._report_data import ProbeTrace

__all__ = ["render_trace", "render_traces"]

SNAPSHOT_LINES: Final = 200
"""Lines of a memory snapshot printed (the rest counted); the tables hold it whole."""


def _clip(text: str, lines: int = SNAPSHOT_LINES) -> list[str]:
    shown = text.splitlines() or ["(empty)"]
    if len(shown) <= lines:
        return shown
    return [*shown[:lines], f"… and {len(shown) - lines} more lines"]


def render_trace(trace: ProbeTrace, full: bool = False) -> str:
    """One probe answered by one arm: question, stored memory, retrieved context, verdict.

    Args:
        trace: The probe's trace.
        full: Print each memory snapshot too (by default only its lines about the probe's
            values).
    """
    lines = [
        f"{trace.arm} · {trace.scenario}/{trace.horizon} replicate {trace.replicate} · "
        f"probe {trace.probe_id} ({trace.probe_type}:{trace.subtype}) at checkpoint "
        f"{trace.checkpoint}",
        f"question: {trace.question}",
        f"expected: {trace.expected}",
        f"evidence sessions: {', '.join(map(str, trace.evidence_sessions)) or 'none'}",
        "",
        "stored after each evidence session:",
    ]
    for stored in trace.stored:
        tokens = "?" if stored["stored_tokens"] is None else stored["stored_tokens"]
        fault = f"; fault: {stored['error']}" if stored.get("error") else ""
        lines.append(f"  session {stored['session']}: {tokens} tokens stored{fault}")
        if stored["snapshot_session"] is None:
            lines.append("    no snapshot (the backend takes none)")
            continue
        snapshot = stored["snapshot"] or ""
        about = stored.get("about") or []
        lines.append(
            f"    memory at the checkpoint after session {stored['snapshot_session']} "
            f"({len(snapshot.splitlines())} lines); its lines about the asked values:"
        )
        lines += [f"      {m.describe()}" for m in about] or ["      none"]
        if full:
            lines.append("    the whole memory:")
            lines += [f"      {line}" for line in _clip(snapshot)]
    lines += ["", "retrieve returned:"]
    lines += [f"  {line}" for line in _clip(trace.retrieved or "(nothing)")]
    lines += [
        "",
        f"reader's answer: {trace.answer}",
        f"verdict: {trace.verdict}",
        f"why: {trace.rationale}",
        f"reader: {trace.reader}",
    ]
    if trace.mentions or trace.reread:
        lines += ["", f"line by line ({trace.reread}):"]
        lines += [f"  {m.describe()}" for m in trace.mentions] or ["  no candidate value mentioned"]
    return "\n".join(lines)


def render_traces(traces: Sequence[ProbeTrace], full: bool = False) -> str:
    """Several traces (one per world and replicate holding the probe), separated by a rule."""
    return ("\n" + "-" * 60 + "\n").join(render_trace(t, full) for t in traces)
