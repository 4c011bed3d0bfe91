"""The HTML report: one self-contained page (plots inlined as SVG, a few lines of own script).

Every figure in its tables carries the exact value of the record's row in ``data-value``
(the same number ``--json`` wrote); the text shows it rounded. Columns sort on a click. The
drill-down (arm → probe → stored memory, retrieved context, answer, verdict and the rule that
decided) is a set of anchors in the same file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, Final

from ._leaderboard import record_judge_mark
from ._plots import Plot
from ._privacy import ALLOWED_LEAK_MARK, allowed_leak_reason, price_line
from ._reading import MentionLine
from ._report_data import ProbeTrace, ReportData

__all__ = ["LEADERBOARD_COLUMNS", "arm_anchor", "render_html"]

LEADERBOARD_COLUMNS: Final = (
    ("drift_c", "DRIFT-C"),
    ("drift_c_lift", "Lift"),
    ("drift_e", "DRIFT-E"),
    ("mvot", "MVOT"),
    ("selectivity", "Selectivity"),
    ("revision_accuracy", "Revision"),
    ("action_alignment", "Action"),
    ("tes", "TES"),
    ("lps", "LPS"),
)
"""Row key → column label of the leaderboard tables (a privacy figure joins after DRIFT-C)."""

_STYLE: Final = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{cursor:pointer;background:#f4f4f4}th.sorted-asc::after{content:" ▲"}
th.sorted-desc::after{content:" ▼"}tr.invalid td{color:#999}
.verified{color:#176a2c}.unverified{color:#a15c00}
.ci{color:#777;font-size:.85em}td.reasons{max-width:22em}pre{background:#f7f7f7;padding:.6em;white-space:pre-wrap;max-height:22em;
overflow:auto}section.probe{border-left:3px solid #ccc;padding-left:1em;margin:1em 0}
.correct{color:#176a2c}.incorrect{color:#b00020}figure{margin:1em 0}
li.counted{color:#176a2c}li.ignored{color:#777}
"""
_SCRIPT: Final = """
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, index){
    th.addEventListener('click', function(){
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var descending = !th.classList.contains('sorted-desc');
      table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
      th.classList.add(descending ? 'sorted-desc' : 'sorted-asc');
      rows.sort(function(a, b){
        var x = a.cells[index].dataset.value, y = b.cells[index].dataset.value;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny
          : String(x || '').localeCompare(String(y || ''));
        if (isNaN(nx) !== isNaN(ny)) { c = isNaN(nx) ? 1 : -1; return c; }
        return descending ? -c : c;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
"""


def arm_anchor(arm: str) -> str:
    """The id of an arm's drill-down section."""
    return "arm-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in arm)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    privacy = sorted(
        {k for row in rows for k, v in row.items() if "privacy" in k and isinstance(v, dict)}
    )
    columns = list(LEADERBOARD_COLUMNS[:1])
    columns += [(key, key.replace("_", " ").capitalize()) for key in privacy]
    return columns + list(LEADERBOARD_COLUMNS[1:])


def _value(row: Mapping[str, Any], key: str) -> float | None:
    figure = row.get(key)
    value = figure.get("value") if isinstance(figure, dict) else None
    return float(value) if isinstance(value, int | float) else None


_BOUND_SIGNS: Final = {"lower": "≥", "upper": "≤"}
"""A figure that is a bound reads ``≥ x`` (at least) or ``≤ x`` (at most), as in the terminal."""


def _figure_cell(figure: object, not_measured: str | None = None) -> str:
    if not_measured is not None:
        reason = escape(not_measured)
        return f'<td data-value="" class="not-measured" title="{reason}">not measured</td>'
    if not isinstance(figure, dict) or figure.get("value") is None:
        return '<td data-value="">—</td>'
    value = float(figure["value"])
    low, high = figure.get("ci_low"), figure.get("ci_high")
    interval = (
        "" if low is None or high is None else f' <span class="ci">[{low:.3f}, {high:.3f}]</span>'
    )
    bound = _BOUND_SIGNS.get(str(figure.get("bound")), "")
    title = f' title="a bound: at {"least" if bound == "≥" else "most"} this"' if bound else ""
    return f'<td data-value="{value!r}"{title}>{bound}{value:.3f}{interval}</td>'


def _token_mark(row: Mapping[str, Any]) -> str:
    """What the arm's row says of its LLM tokens (as the terminal's mark)."""
    tokens = row.get("llm_tokens") or {}
    source = tokens.get("source")
    if source == "unknown":
        return "model tokens unknown; not ranked"
    if source == "self-reported":
        return "tokens self-reported"
    gap = tokens.get("gap")
    return f"token report gap {gap:+.0%}" if tokens.get("gap_shown") and gap is not None else ""


def _scoring_text(row: Mapping[str, Any]) -> str:
    parts = []
    for scoring in row.get("scoring") or []:
        figures = scoring.get("reader_figures") or []
        measured = ", ".join(
            f"{f.get('name')}: accuracy {f.get('accuracy', 0):.1%}"
            for f in figures
            # The pooled figures of each labelled collection, not every set within one.
            if "accuracy" in f and "/" not in str(f.get("name"))
        )
        parts.append(
            f"reader {scoring.get('reader')}, judge {scoring.get('judge')}"
            + (f" ({measured})" if measured else " (not measured)")
        )
    return "; ".join(parts)


def _scorers(row: Mapping[str, Any]) -> str:
    return "; ".join(f"{s.get('reader')}, {s.get('judge')}" for s in row.get("scoring") or [])


def _leaderboard(rows: Sequence[Mapping[str, Any]], table_id: str, record_name: str) -> str:
    columns = _columns(rows)
    head = "".join(
        f"<th>{escape(label)}</th>"
        for label in [
            "rank",
            "arm",
            *(c[1] for c in columns),
            "fault rate",
            "status",
            "scored by",
            "record",
        ]
    )
    body = []
    for row in rows:
        valid = bool(row.get("valid", True))
        verification = row.get("verification") or {}
        status = str(verification.get("status", "unverified"))
        reasons = "; ".join(verification.get("reasons") or [])
        arm = str(row["arm"])
        name = f'<a href="#{arm_anchor(arm)}">{escape(arm)}</a>'
        if not valid:
            name += f" (not ranked: {row.get('fault_rate', 0.0):.1%} of calls faulted)"
        elif row.get("reference"):
            name += " (reference, not ranked)"
        name += escape(record_judge_mark(row))
        if valid and (mark := _token_mark(row)):
            name += f' <span class="token-mark">[{escape(mark)}]</span>'
        if row.get("leak_allowed"):
            name += f' <span class="leak-mark">[{escape(ALLOWED_LEAK_MARK)}]</span>'
        not_measured = row.get("not_measured") or {}
        rank = row.get("rank")
        fault_rate = float(row.get("fault_rate", 0.0))
        cells = [
            f'<td data-value="{"" if rank is None else rank}">{"—" if rank is None else rank}</td>',
            f'<td data-value="{escape(arm)}">{name}</td>',
            *(_figure_cell(row.get(key), not_measured.get(key)) for key, _ in columns),
            f'<td data-value="{fault_rate!r}">{fault_rate:.1%}</td>',
            f'<td data-value="{status}" class="{status} reasons" title="{escape(reasons)}">{status}'
            + (f'<br><span class="ci">{escape(reasons)}</span>' if reasons else "")
            + "</td>",
            # Who scored it, short; the measured figures in its tooltip and under the table.
            f'<td title="{escape(_scoring_text(row))}">{escape(_scorers(row))}</td>',
            f"<td>{escape(str(row.get('record', record_name)))}</td>",
        ]
        body.append(
            f'<tr class="{"valid" if valid else "invalid"}" data-arm="{escape(arm)}">'
            f"{''.join(cells)}</tr>"
        )
    scored = dict.fromkeys(_scoring_text(row) for row in rows if row.get("scoring"))
    notes = "".join(
        f'<p class="ci cost-note">{escape(str(row["cost_note"]))}</p>'
        for row in rows
        if row.get("cost_note")
    )
    notes += "".join(
        f'<p class="ci leak-note">{escape(str(row["arm"]))}: Privacy not measured: '
        f"{escape(allowed_leak_reason(str(row['leak_allowed'])))}</p>"
        for row in rows
        if row.get("leak_allowed")
    )
    notes += "".join(f'<p class="ci scored">scored by {escape(text)}</p>' for text in scored)
    # Privacy is never shown without what it costs: keeping nothing scores it perfectly.
    notes += "".join(
        f'<p class="ci privacy">{escape(text)}</p>'
        for text in price_line(
            (
                str(row["arm"]),
                str(row.get("backend", "")),
                _value(row, "privacy"),
                _value(row, "drift_c"),
            )
            for row in rows
            if row.get("rank") is not None
        )
    )
    return (
        f'<table class="sortable leaderboard" id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{notes}"
    )


def _budget(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for row in rows:
        budget = row.get("budget") or {}
        figures = budget.get("figures") or {}
        if not figures:
            continue
        cells = []
        for kind in ("read", "write", "ttfrt", "dialectic"):
            f = figures.get(kind) or {}
            if not f.get("measured") or f.get("p99_ms") is None:
                cells.append("<td>not measured</td>")
                continue
            verdict = "pass" if f.get("pass") else "FAIL"
            mark = " m" if f.get("modelled") else ""
            cells.append(
                f'<td data-value="{f["p99_ms"]!r}">{f["p99_ms"]:.1f}{mark} {verdict} '
                f"(&lt; {f.get('target_ms'):.0f})</td>"
            )
        arm = escape(str(row["arm"]))
        lines.append(
            f'<tr data-arm="{arm}"><td data-value="{arm}">{arm}</td>'
            f"<td>{escape(str(budget.get('deployment')))}</td>{''.join(cells)}</tr>"
        )
    if not lines:
        return ""
    labels = ("arm", "runs", "Read p99 ms", "Write p99 ms", "TTFRT p99 ms", "Dialectic p99 ms")
    head = "<tr>" + "".join(f"<th>{label}</th>" for label in labels) + "</tr>"
    return (
        "<h2 id='budget'>Latency budget (spec §7.8)</h2><p>m: from a modelled reader TTFT.</p>"
        f'<table class="sortable budget" id="budget-table"><thead>{head}</thead>'
        f"<tbody>{''.join(lines)}</tbody></table>"
    )


PAGE_TEXT_LINES: Final = 60
"""Lines of a snapshot or retrieved context the page shows (``drift explain`` prints more)."""


def _clipped(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= PAGE_TEXT_LINES:
        return escape(text)
    rest = len(lines) - PAGE_TEXT_LINES
    shown = escape("\n".join(lines[:PAGE_TEXT_LINES]))
    return f"{shown}\n… and {rest} more lines (drift explain prints more)"


def _mention_list(mentions: Sequence[MentionLine], css: str) -> str:
    items = "".join(
        f'<li class="{"counted" if m.counted else "ignored"}">{escape(m.describe())}</li>'
        for m in mentions
    )
    return f'<ul class="{css}">{items or "<li>none</li>"}</ul>'


def _trace(trace: ProbeTrace) -> str:
    stored = "".join(
        f"<li>evidence session {s['session']}: "
        f"{'?' if s['stored_tokens'] is None else s['stored_tokens']} tokens stored; "
        + (f"fault: <code>{escape(s['error'])}</code>; " if s.get("error") else "")
        + (
            f"memory at the checkpoint after session {s['snapshot_session']}, its lines about the "
            f"asked values:{_mention_list(s.get('about') or [], 'memory-lines')}"
            f"<details><summary>the whole memory</summary>"
            f"<pre>{_clipped(s['snapshot'] or '')}</pre></details>"
            if s["snapshot_session"] is not None
            else "no snapshot (the backend takes none)"
        )
        + "</li>"
        for s in trace.stored
    )
    reading = (
        f"<p><b>line by line</b> <span class='ci'>({escape(trace.reread)})</span></p>"
        + _mention_list(trace.mentions, "reading")
        if trace.mentions or trace.reread
        else ""
    )
    return (
        f'<section class="probe" id="{trace.anchor}"><h4>{escape(trace.probe_id)} · '
        f"{escape(trace.probe_type)}:{escape(trace.subtype)} · checkpoint {trace.checkpoint} · "
        f'<span class="{trace.verdict}">{trace.verdict}</span></h4>'
        f"<p><b>question</b> {escape(trace.question)}<br>"
        f"<b>expected</b> {escape(trace.expected)}</p>"
        "<p><b>stored after each evidence session</b></p>"
        f"<ul>{stored or '<li>no evidence session</li>'}</ul>"
        f"<p><b>retrieve returned</b></p><pre>{_clipped(trace.retrieved) or '(nothing)'}</pre>"
        f"<p><b>reader's answer</b> {escape(trace.answer)}<br><b>verdict</b> {trace.verdict}: "
        f"<span class='rationale'>{escape(trace.rationale)}</span><br>"
        f"<span class='ci'>reader {escape(str(trace.reader))}</span></p>"
        f"{reading}"
        f'<p><a href="#{arm_anchor(trace.arm)}">back to {escape(trace.arm)}</a> · '
        '<a href="#leaderboard">back to the leaderboard</a></p></section>'
    )


def _drill_down(traces: Mapping[str, Sequence[ProbeTrace]]) -> str:
    parts = ["<h2 id='drill-down'>Drill-down: arm → probe → memory, context, answer, verdict</h2>"]
    for arm, arm_traces in traces.items():
        links = "".join(
            f'<li><a href="#{t.anchor}">{escape(t.probe_id)}</a> '
            f'<span class="{t.verdict}">{t.verdict}</span> — {escape(t.question)}</li>'
            for t in arm_traces
        )
        first = arm_traces[0] if arm_traces else None
        where = (
            f"{first.scenario}/{first.horizon}, replicate {first.replicate}; "
            f"drift explain RUN_FOLDER --arm {arm} --probe ID for any other"
            if first
            else "no answers stored"
        )
        parts.append(
            f'<section class="arm" id="{arm_anchor(arm)}"><h3>{escape(arm)}</h3>'
            f'<p class="ci">{escape(where)}</p><ul>{links}</ul>'
            + "".join(_trace(t) for t in arm_traces)
            + "</section>"
        )
    return "".join(parts)


def render_html(data: ReportData, plots: Sequence[Plot], svgs: Mapping[str, str]) -> str:
    """The whole page: leaderboards, plots, budget, drill-down, record and manifest."""
    record = data.record
    name = data.record_path.name
    horizons = "".join(
        f"<h3>horizon {escape(h)}</h3>" + _leaderboard(rows, f"leaderboard-{h}", name)
        for h, rows in sorted(record.get("horizons", {}).items(), key=lambda kv: _order(kv[0]))
    )
    figures = "".join(
        f'<figure id="plot-{p.name}"><figcaption><b>{escape(p.title)}</b> '
        f'(<a href="{p.name}.svg">SVG</a>, <a href="{p.name}.png">PNG</a>)</figcaption>'
        f"{svgs[p.name]}</figure>"
        for p in plots
    )
    signature = record.get("signature", {})
    code = record.get("code", {})
    meta = (
        f"<p>record <code>{escape(name)}</code>, created {escape(str(record.get('created')))}, "
        f"code {escape(str(code.get('commit')))}, signed ed25519 key "
        f"<code>{escape(str(signature.get('public_key', ''))[:16])}…</code> "
        "(<code>drift verify</code> checks it)</p>"
    )
    manifest = {
        "scenarios": record.get("scenarios"),
        "reader": record.get("reader"),
        "judge": record.get("judge"),
        "isolation": record.get("isolation"),
        "machine": record.get("machine"),
        "packages": record.get("packages"),
        "run": data.manifest,
    }
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>DRIFT report</title>"
        f"<style>{_STYLE}</style></head><body>"
        "<h1>DRIFT report</h1>"
        f"{meta}"
        "<h2 id='leaderboard'>Leaderboard (all horizons, spec §7.6 weights)</h2>"
        "<p>Click a column to sort. Unranked arms (past the fault-rate limit) are greyed, "
        "with their fault rate. An arm whose model tokens are unknown is listed after the "
        "ranked ones, its cost-dependent figures bounds (≥ at least, ≤ at most); so is an arm "
        "whose reader or judge calls failed, with the figures judged (none where no answer "
        "was). Click an arm for its probes.</p>"
        + _leaderboard(record.get("leaderboard", []), "leaderboard-all", name)
        + "<h2>Per horizon</h2>"
        + horizons
        + "<h2 id='plots'>Plots</h2>"
        + figures
        + _budget(record.get("leaderboard", []))
        + _drill_down(data.traces)
        + "<h2 id='manifest'>Run manifest</h2>"
        + f"<pre>{escape(json.dumps(manifest, indent=2, sort_keys=True))}</pre>"
        + f"<script>{_SCRIPT}</script></body></html>\n"
    )


def _order(horizon: str) -> tuple[int, str]:
    order = ("short", "medium", "long")
    return (order.index(horizon) if horizon in order else len(order), horizon)
