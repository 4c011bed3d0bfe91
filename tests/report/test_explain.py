"""A probe's trace in the terminal and on the page: a faulted store shows its fault."""

from __future__ import annotations

from pathlib import Path

from drift_pipeline.report import ProbeTrace, render_trace
from drift_pipeline.report._html import render_html
from drift_pipeline.report._report_data import ReportData

FAULT = "RuntimeError: vector store unavailable (at my_pkg/memory.py:41)"


def _trace(error: str | None) -> ProbeTrace:
    stored = {"session": 2, "stored_tokens": 0, "snapshot_session": 5, "snapshot": "Oslo"}
    return ProbeTrace(
        "w", "short", 0, "my_memory@hard", "p1", 6, "recall", "fact", "Where?", "Oslo", (2,),
        ({**stored, "error": error},), "", "", False, "the memory does not say", "careful@6",
    )  # fmt: skip


def test_a_faulted_evidence_session_shows_its_fault_beside_its_count(tmp_path: Path):
    text = render_trace(_trace(FAULT))
    assert f"  session 2: 0 tokens stored; fault: {FAULT}" in text.splitlines()
    assert "fault" not in render_trace(_trace(None))
    record = {"leaderboard": [], "horizons": {}, "signature": {}}
    trace = _trace(FAULT)
    data = ReportData(tmp_path / "r.json", record, {}, [], [], [], [], [], {trace.arm: [trace]})
    page = render_html(data, [], {})
    assert "0 tokens stored; fault: <code>RuntimeError: vector store unavailable" in page
