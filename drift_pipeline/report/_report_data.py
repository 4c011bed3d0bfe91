"""What the HTML report shows, read once from a run folder: its record and its tables.

The leaderboard's figures come from the folder's latest record (the very rows ``--json``
wrote, signed), so the page and the JSON agree number for number; the curves and the
drill-down come from the stored tables through DuckDB.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._reading import MentionLine, Rereader
from ._records import latest_record, load_record, trend_rows

if TYPE_CHECKING:
    import duckdb

__all__ = ["DRILL_DOWN_PROBES", "ProbeTrace", "ReportData", "gather", "probe_traces"]

DRILL_DOWN_PROBES: Final = 24
"""Probes per arm the page explains (the first world's, wrong answers first, then by id);
``drift explain`` explains any."""


@dataclass(frozen=True)
class ProbeTrace:
    """One probe answered by one arm, from memory to verdict.

    Attributes:
        stored: Per evidence session: the session, the tokens the arm stored then, and the
            snapshot of its memory at the first checkpoint from that session on (snapshots are
            taken at checkpoints only), with that checkpoint's session.
        retrieved: What ``retrieve`` returned for the probe (the reader's whole context).
        rationale: Why the verdict: the line that counted and the rule id that decided.
        mentions: The reader's reading again, line by line: each mention of a candidate
            value in what it read, counted or ignored, with the cue and rule id (empty for a
            family scored by its own rule judge).
        reread: Who read it again, and whether that reading gives the stored answer.
    """

    scenario: str
    horizon: str
    replicate: int
    arm: str
    probe_id: str
    checkpoint: int
    probe_type: str
    subtype: str
    question: str
    expected: str
    evidence_sessions: tuple[int, ...]
    stored: tuple[dict[str, Any], ...]
    retrieved: str
    answer: str
    correct: bool | None
    rationale: str
    reader: str | None
    mentions: tuple[MentionLine, ...] = ()
    reread: str = ""

    @property
    def anchor(self) -> str:
        """The id of the probe's section on the page (unique per arm, world and replicate)."""
        raw = f"probe-{self.arm}-{self.scenario}-{self.horizon}-{self.replicate}-{self.probe_id}"
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in raw)

    @property
    def verdict(self) -> str:
        """``correct``, ``incorrect``, or ``not judged`` (a failed reader or judge call)."""
        return "not judged" if self.correct is None else "correct" if self.correct else "incorrect"


@dataclass(frozen=True)
class ReportData:
    """Everything the page draws, as plain rows."""

    record_path: Path
    record: dict[str, Any]
    manifest: dict[str, Any]
    trend: list[dict[str, Any]]
    cost_curve: list[dict[str, Any]]
    error_curve: list[dict[str, Any]]
    probe_accuracy: list[dict[str, Any]]
    abilities: list[dict[str, Any]]
    traces: dict[str, list[ProbeTrace]] = field(default_factory=dict)
    session_reads: list[dict[str, Any]] = field(default_factory=list)


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()
) -> list[dict[str, Any]]:
    relation = con.execute(sql, list(params))
    names = [d[0] for d in relation.description]
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def _views(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}


def gather(
    folder: Path,
    con: duckdb.DuckDBPyConnection,
    record: Path | None = None,
    *,
    drill_down: bool = True,
) -> ReportData:
    """Read the report's rows from ``folder`` (its latest record unless ``record`` is given).

    ``drill_down=False`` leaves out the probe traces (``traces`` is empty): they read every
    explained probe's context again, which costs more than all the other rows, and a caller
    that draws only plots has no use for them.

    Raises:
        RecordError: The folder has no record, or the record cannot be read.
    """
    path = record or latest_record(folder)
    loaded = load_record(path)
    manifest_path = folder / "_manifests" / "run.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    views = _views(con)
    arms = [str(row["arm"]) for row in loaded["leaderboard"]]
    cost = error = accuracy = []
    if "cost_curves" in views:
        columns = {d[0] for d in con.execute("select * from cost_curves limit 0").description}
        # An arm whose model spend is unknown: its tokens are a lower bound (the plot says so).
        unknown = "bool_or(model_tokens = 'unknown')" if "model_tokens" in columns else "false"
        cost = _rows(
            con,
            "select arm, horizon, checkpoint, avg(cumulative_write_tokens) as write_tokens, "
            "avg(storage_tokens) as storage_tokens, avg(cumulative_read_tokens) as read_tokens, "
            f"{unknown} as tokens_unknown "
            "from cost_curves group by all order by arm, horizon, checkpoint",
        )
    if "cell_metrics" in views:
        error = _rows(
            con,
            "select arm, horizon, cast(checkpoint as integer) as checkpoint, "
            "avg(value) as error_rate from cell_metrics where metric = 'error_rate' "
            "and checkpoint <> 'all' group by all order by arm, horizon, checkpoint",
        )
    if "probe_answers" in views:
        accuracy = _rows(
            con,
            "select arm, probe_type, subtype, avg(cast(correct as double)) as accuracy, "
            "count(correct) as n from probe_answers group by all order by all",
        )
    reads = _session_reads(con) if "session_reads" in views else []
    # An arm that is not ranked has no figure anywhere, its curves and charts included.
    unranked = {str(row["arm"]) for row in loaded["leaderboard"] if not row.get("valid", True)}

    def ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [row for row in rows if row["arm"] not in unranked]

    return ReportData(
        record_path=path,
        record=loaded,
        manifest=manifest,
        trend=trend_rows(folder),
        cost_curve=ranked(cost),
        error_curve=ranked(error),
        probe_accuracy=ranked(accuracy),
        abilities=ranked(_abilities(con, loaded["leaderboard"], views)),
        traces={arm: probe_traces(con, arm, limit=DRILL_DOWN_PROBES) for arm in arms}
        if drill_down and {"probe_answers", "probes", "retrievals"} <= views
        else {},
        session_reads=ranked(reads),
    )


SESSION_READ_BINS: Final = 20
"""Bins of stored sessions per horizon the read curves are averaged over (the view has a row
per read: hundreds of thousands on the canonical suite)."""


def _session_reads(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Read latency and read tokens of the agent's session reads against sessions stored.

    Per arm and horizon, the reads are binned by how many sessions were stored before them
    (:data:`SESSION_READ_BINS` bins per horizon); each bin gives the mean and p95 read latency,
    the mean tokens returned and the reads counted. Faulted reads are left out.
    """
    return _rows(
        con,
        "with r as (select arm, horizon, sessions_stored, read_ms, read_tokens "
        "from session_reads where error is null), "
        "w as (select horizon, greatest(ceil((max(sessions_stored) + 1) / ?), 1) as width "
        "from r group by horizon) "
        "select arm, horizon, cast(floor(sessions_stored / width) * width as integer) "
        "as sessions_stored, avg(read_ms) as read_ms, quantile_cont(read_ms, 0.95) "
        "as read_ms_p95, avg(read_tokens) as read_tokens, count(*) as reads "
        "from r join w using (horizon) group by all order by arm, horizon, sessions_stored",
        [float(SESSION_READ_BINS)],
    )


ABILITIES: Final = ("recall", "revision", "action", "privacy", "efficiency")


def _abilities(
    con: duckdb.DuckDBPyConnection, rows: Sequence[Mapping[str, Any]], views: set[str]
) -> list[dict[str, Any]]:
    """Per arm, one figure per ability (0–1): recall, revision, action, privacy, efficiency.

    Recall is the share of recall probes answered correctly; revision and action are the
    row's figures; privacy is any stored metric named ``privacy`` (left out where none was
    measured); efficiency is the arm's TES over the best TES on the board.
    """
    recall: dict[str, float] = {}
    privacy: dict[str, float] = {}
    if "probe_answers" in views:
        for found in _rows(
            con,
            "select arm, avg(cast(correct as double)) as value from probe_answers "
            "where probe_type = 'recall' group by arm",
        ):
            if found["value"] is not None:
                recall[found["arm"]] = float(found["value"])
    if "cell_metrics" in views:
        for found in _rows(
            con,
            "select arm, avg(value) as value from cell_metrics where metric like '%privacy%' "
            "and checkpoint = 'all' and value is not null group by arm",
        ):
            privacy[found["arm"]] = float(found["value"])

    def value(row: Mapping[str, Any], metric: str) -> float | None:
        figure = row.get(metric)
        return None if not isinstance(figure, dict) else figure.get("value")

    tes = [v for row in rows if (v := value(row, "tes")) is not None]
    best_tes = max(tes, default=0.0)
    out = []
    for row in rows:
        arm = str(row["arm"])
        tes_value = value(row, "tes")
        figures = {
            "recall": recall.get(arm),
            "revision": value(row, "revision_accuracy"),
            "action": value(row, "action_alignment"),
            "privacy": privacy.get(arm),
            "efficiency": None if tes_value is None or not best_tes else tes_value / best_tes,
        }
        out += [
            {"arm": arm, "ability": name, "value": figure}
            for name, figure in figures.items()
            if figure is not None
        ]
    return out


def probe_traces(
    con: duckdb.DuckDBPyConnection,
    arm: str,
    probe_id: str | None = None,
    limit: int | None = None,
) -> list[ProbeTrace]:
    """How ``arm`` answered its probes (or the one ``probe_id``), from memory to verdict.

    Without ``probe_id`` and with ``limit``: the first ``limit`` probes of the arm's first
    world and replicate, by probe id.
    """
    where = "a.arm = ?" + (" and a.probe_id = ?" if probe_id is not None else "")
    params: list[object] = [arm]
    if probe_id is not None:
        params.append(probe_id)
    if probe_id is None and limit is not None:
        first = con.execute(
            "select scenario, horizon, replicate from probe_answers where arm = ? "
            "order by all limit 1",
            [arm],
        ).fetchone()
        if first is None:
            return []
        where += " and a.scenario = ? and a.horizon = ? and a.replicate = ?"
        params += list(first)
    answers = _rows(
        con,
        "select a.scenario, a.horizon, a.replicate, a.arm, a.probe_id, a.checkpoint, "
        "a.probe_type, a.subtype, a.answer, a.correct, a.rationale, a.reader, p.question, "
        "p.answer as expected, p.evidence_sessions, r.context from probe_answers a "
        "join probes p on p.scenario = a.scenario and p.horizon = a.horizon "
        "and p.replicate = a.replicate and p.probe_id = a.probe_id "
        "left join retrievals r on r.scenario = a.scenario and r.horizon = a.horizon "
        "and r.replicate = a.replicate and r.arm = a.arm and r.probe_id = a.probe_id "
        # Wrong answers first: they are what a reader of the page comes to understand.
        f"where {where} order by a.scenario, a.horizon, a.replicate, "
        "coalesce(a.correct, false), a.probe_id"
        + (f" limit {int(limit)}" if limit is not None else ""),
        params,
    )
    rereader = Rereader(con)
    reading = rereader.available()
    return [_trace(con, row, rereader if reading else None) for row in answers]


MEMORY_LINES_SHOWN: Final = 12
"""Lines of a memory snapshot about the probe's values shown per evidence session."""


def _trace(
    con: duckdb.DuckDBPyConnection, row: Mapping[str, Any], rereader: Rereader | None
) -> ProbeTrace:
    evidence = tuple(int(s) for s in row["evidence_sessions"] or ())
    sessions = _rows(
        con,
        "select session_index, storage_delta_tokens, checkpoint, snapshot, error "
        "from memory_snapshots "
        "where scenario = ? and horizon = ? and replicate = ? and arm = ? order by session_index",
        [row["scenario"], row["horizon"], row["replicate"], row["arm"]],
    )
    view = (
        rereader.probe(row["scenario"], row["horizon"], int(row["replicate"]), row["probe_id"])
        if rereader is not None
        else None
    )
    about: dict[int, tuple[MentionLine, ...]] = {}
    stored = []
    for session in evidence:
        delta = next((s for s in sessions if s["session_index"] == session), None)
        snap = next(
            (s for s in sessions if s["session_index"] >= session and s["checkpoint"]), None
        )
        if view is not None and snap is not None and snap["session_index"] not in about:
            text = snap["snapshot"] or ""
            found = Rereader.mentions(Rereader.read(text, view), text)
            # One entry per line of memory, however many values it names.
            lines = {m.line: m for m in found}
            about[snap["session_index"]] = tuple(lines.values())[:MEMORY_LINES_SHOWN]
        stored.append(
            {
                "session": session,
                "stored_tokens": None if delta is None else delta["storage_delta_tokens"],
                # The fault recorded on that session (a failed store), shown beside its count.
                "error": None if delta is None else delta["error"],
                "snapshot_session": None if snap is None else snap["session_index"],
                "snapshot": None if snap is None else snap["snapshot"],
                # The memory's lines about the probe's values (the careful reader's mentions).
                "about": [] if snap is None else list(about.get(snap["session_index"], ())),
            }
        )
    mentions, reread = _reread(view, row)
    return ProbeTrace(
        scenario=row["scenario"],
        horizon=row["horizon"],
        replicate=int(row["replicate"]),
        arm=row["arm"],
        probe_id=row["probe_id"],
        checkpoint=int(row["checkpoint"]),
        probe_type=row["probe_type"],
        subtype=row["subtype"],
        question=row["question"],
        expected=row["expected"],
        evidence_sessions=evidence,
        stored=tuple(stored),
        retrieved=row["context"] or "",
        answer=row["answer"],
        correct=row["correct"],
        rationale=row["rationale"],
        reader=row["reader"],
        mentions=mentions,
        reread=reread,
    )


def _reread(view: Any, row: Mapping[str, Any]) -> tuple[tuple[MentionLine, ...], str]:
    """The reading of the probe again, and a line saying who read it and if it agrees."""
    if view is None:
        return (), "scored by its probe family's own rule (see the rationale)"
    from drift_pipeline.evaluation import JUDGE_ID

    stored = str(row["reader"] or "")
    # The careful reader read the retrieved context; an LLM reader's answer is read instead.
    by_context = stored.startswith("context@")
    text = str(row["context"] or "") if by_context else str(row["answer"] or "")
    reading = Rereader.read(text, view, answer=not by_context)
    mentions = Rereader.mentions(reading, text)
    what = "the retrieved context" if by_context else "the reader's answer"
    if by_context and stored != JUDGE_ID:
        return mentions, f"{what} read again by {JUDGE_ID}; the verdict was by {stored}"
    agrees = (reading.answer or "") == (row["answer"] or "")
    return mentions, f"{what} read again by {JUDGE_ID}" + (
        "" if agrees else f"; it now answers {reading.answer!r}"
    )
