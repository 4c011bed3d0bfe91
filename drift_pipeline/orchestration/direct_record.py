"""Direct runs recorded in the Dagster instance: ``dagster dev`` shows what ``drift run`` wrote.

After a direct run every asset it wrote gets an ``AssetMaterialization`` (reported without a
run, :meth:`dagster.DagsterInstance.report_runless_asset_event`) under the same asset key,
partition and metadata as the Dagster path (figures read back from the stored tables): world
tables, reference memory and baselines per world; memory, answers, metrics and cost curve per
cell; the leaderboard and cost curves once, with their tables and plots (see
:mod:`.report_metadata`). The checks are evaluated too: the answerability audit on ``probes``,
one row per session and the gate's lineage on the memory assets, and the leaderboard's trust
checks. The report assets carry data provenance, so they show as up to date.

Each recording reports its check evaluations under a run id of its own. Dagster keys a check's
execution by (asset, check, run id, partition) and gives every event reported without a run the
same empty run id, so a second runless evaluation of a partitioned check (the same world run
again into the same instance) is refused; under its own run id every rerun is kept as one more
evaluation in the check's history, beside the earlier ones.

The instance is the one ``DAGSTER_HOME`` names, else ``.dagster_home`` in the folder the run
was started from when it holds a ``dagster.yaml`` (the project root, as the README sets it
up); with neither, nothing is recorded. ``DRIFT_DAGSTER_RECORD=0`` turns recording off.

``drift run`` records from a child process that runs this module (:mod:`.record_child`), so
that the run's own process never imports Dagster.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import dagster as dg
import duckdb

from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM, CellResult

from . import metadata as md
from .asset_names import CELL_COST_CURVE, REFERENCE_MEMORY, WORLD_BASELINES
from .checks import GATE_LINEAGE, ROWS_PER_SESSION, gate_lineage_violations
from .partitions import cell_partition_key, register_partitions
from .record_child import RECORD_ENV, RecordingFailed, instance_home
from .report_metadata import (
    cost_curves_metadata,
    leaderboard_metadata,
    leaderboard_plots,
    trust_checks,
)

__all__ = ["RECORD_ENV", "NotRecorded", "direct_run_instance", "record_direct_run"]

ANSWERABILITY: Final = "answerability_audit"
"""The ``probes`` asset's check (the name the world asset declares it under)."""
RECORDED_BY: Final = "drift/recorded_by"
WORLD_TABLE_NAMES: Final = (
    "latent_profiles",
    "event_schedules",
    "transcripts",
    "ground_truth",
    "probes",
)
LEADERBOARD_DEPS: Final = (
    "cell_metrics",
    "probe_answers",
    "memory_snapshots",
    "retrievals",
    "probes",
    REFERENCE_MEMORY,
    WORLD_BASELINES,
)
"""The ``leaderboard`` asset's upstream assets (its data provenance names each)."""
COST_CURVES_DEPS: Final = (CELL_COST_CURVE, WORLD_BASELINES)


class NotRecorded(Exception):
    """An event of a direct run the instance refused: which asset (and check), and why."""


Event = dg.AssetMaterialization | dg.AssetCheckEvaluation


def _report(instance: dg.DagsterInstance, event: Event, run_id: str, before: int) -> None:
    """Report ``event`` on ``instance``; a check evaluation under ``run_id``.

    ``before`` events of this recording are in the instance already (the message says so).

    Raises:
        NotRecorded: The instance refused it (the message names the asset and the cause).
    """
    from dagster._core.events import DagsterEvent, DagsterEventType
    from dagster._core.instance.utils import RUNLESS_JOB_NAME

    try:
        if isinstance(event, dg.AssetCheckEvaluation):
            instance.report_dagster_event(
                DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_CHECK_EVALUATION.value,
                    job_name=RUNLESS_JOB_NAME,
                    event_specific_data=_targeting(instance, event),
                ),
                run_id=run_id,
            )
        else:
            instance.report_runless_asset_event(event)
    except Exception as error:
        if isinstance(event, dg.AssetCheckEvaluation):
            what = f"check {event.check_name} on {event.asset_key.to_user_string()}"
        else:
            what = event.asset_key.to_user_string()
        partition = f" [{event.partition}]" if event.partition else ""
        cause = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise NotRecorded(
            f"{what}{partition}: {cause} ({before} events of this run recorded before it)"
        ) from error


def _targeting(
    instance: dg.DagsterInstance, event: dg.AssetCheckEvaluation
) -> dg.AssetCheckEvaluation:
    """``event`` pointing at the materialisation it checked (recorded just before it).

    The check runs under a run id of its own, so Dagster cannot tie it to the run-less
    materialisation by run; without this pointer it compares timestamps, which its check table
    keeps to the second, and the UI shows a check made in the same second as "not evaluated".
    """
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )
    from dagster_shared.record import replace

    found = instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=event.asset_key,
            asset_partitions=[event.partition] if event.partition is not None else None,
        ),
        limit=1,
    ).records
    if not found:
        return event
    target = AssetCheckEvaluationTargetMaterializationData(
        storage_id=found[0].storage_id,
        run_id=found[0].run_id,
        timestamp=found[0].timestamp,
    )
    return replace(event, target_materialization_data=target)


def direct_run_instance() -> dg.DagsterInstance | None:
    """The instance direct runs record into, or ``None`` (turned off, or no instance here)."""
    home = instance_home()
    if home is None:
        return None
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.from_config(str(home))


def _views(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}


Figures = dict[tuple[str, ...], dict[str, Any]]
"""Metadata figures by (scenario, horizon) or (scenario, horizon, arm)."""


def _grouped(con: duckdb.DuckDBPyConnection, sql: str, keys: int) -> Figures:
    """Rows of ``sql`` by their first ``keys`` columns, each as a dict of the remaining ones."""
    relation = con.execute(sql)
    names = [d[0] for d in relation.description][keys:]
    return {
        tuple(str(v) for v in row[:keys]): dict(zip(names, row[keys:], strict=True))
        for row in relation.fetchall()
    }


_PERCENTILES: Final = ", ".join(
    f"quantile_cont({{column}}, {q / 100}) as {{column}}_p{q}" for q in (50, 95, 99)
)


def _world_figures(con: duckdb.DuckDBPyConnection, views: set[str]) -> dict[str, Figures]:
    """Each world table's figures per world, as the world asset reports them."""
    queries = {
        "latent_profiles": "count(distinct entity_id) as entities",
        "event_schedules": "count(event_id) as events",
        "transcripts": "count(*) as turns",
        "ground_truth": "count(*) as facts",
        "probes": "count(*) as probes, count(distinct checkpoint) as checkpoints",
    }
    out: dict[str, Figures] = {}
    for table, own in queries.items():
        if table not in views:
            out[table] = {}
            continue
        out[table] = _grouped(
            con,
            f"select scenario, horizon, count(*) as rows, count(distinct replicate) as replicates, "
            f"{own} from {table} group by all",
            2,
        )
    if "event_schedules" in views:
        sessions = _grouped(
            con,
            "select scenario, horizon, count(distinct session_index) as sessions "
            "from event_schedules group by all",
            2,
        )
        for figures in out.values():
            for world, values in figures.items():
                values.update(sessions.get(world, {}))
    return out


def _cell_figures(con: duckdb.DuckDBPyConnection, views: set[str]) -> dict[str, Figures]:
    """Each cell's memory and retrieval figures, as the memory assets report them."""
    out: dict[str, Figures] = {"memory_snapshots": {}, "retrievals": {}, "storage": {}}
    if "memory_snapshots" in views:
        out["memory_snapshots"] = _grouped(
            con,
            "select scenario, horizon, arm, count(*) as rows, "
            "count(distinct replicate) as replicates, count(distinct session_index) as sessions, "
            "sum(transcript_tokens) as transcript_tokens, sum(write_tokens) as write_tokens, "
            # Calls and faults as the loop counts them: stores, and the reads before them.
            "count(*) + sum(session_reads) as calls, count(error) + "
            "sum(list_aggregate(session_read_errors, 'count')) as faulted, "
            f"{_PERCENTILES.format(column='write_ms')} from memory_snapshots group by all",
            3,
        )
        # Storage after each replicate's last session, averaged; unmeasured if any is null.
        out["storage"] = _grouped(
            con,
            "select scenario, horizon, arm, "
            "case when count(*) = count(final) then avg(final) end as storage_tokens from ("
            "select scenario, horizon, arm, replicate, storage_tokens as final "
            "from memory_snapshots qualify row_number() over (partition by scenario, horizon, "
            "arm, replicate order by session_index desc) = 1) group by all",
            3,
        )
    if "retrievals" in views:
        out["retrievals"] = _grouped(
            con,
            "select scenario, horizon, arm, count(*) as rows, avg(read_tokens) as read_tokens, "
            "sum(llm_read_tokens) as llm_read_tokens, "
            "count(*) filter (where error is not null and error <> '') as read_faults, "
            "count(error) as faulted, "
            f"{_PERCENTILES.format(column='read_ms')} from retrievals group by all",
            3,
        )
    return out


def _faults(
    figures: Mapping[str, Figures], key: tuple[str, ...], limit: float
) -> tuple[int, float, bool]:
    """Faulted calls, fault rate and validity of a cell from its stored tables."""
    snap = figures["memory_snapshots"].get(key, {})
    reads = figures["retrievals"].get(key, {})
    calls = int(snap.get("calls") or 0) + int(reads.get("rows") or 0)
    faulted = int(snap.get("faulted") or 0) + int(reads.get("faulted") or 0)
    rate = faulted / calls if calls else 0.0
    return faulted, rate, rate <= limit


def _memory_values(
    cell: CellResult | None,
    figures: Mapping[str, Figures],
    key: tuple[str, ...],
    limit: float,
) -> dict[str, Any]:
    snap = figures["memory_snapshots"].get(key, {})
    reads = figures["retrievals"].get(key, {})
    faults, fault_rate, valid = (
        _faults(figures, key, limit)
        if cell is None
        else (len(cell.faults), cell.fault_rate, cell.valid)
    )
    return {
        md.ROWS: snap.get("rows"),
        md.REPLICATES: snap.get("replicates"),
        md.SESSIONS: snap.get("sessions"),
        md.TRANSCRIPT_TOKENS: snap.get("transcript_tokens"),
        md.WRITE_TOKENS: snap.get("write_tokens"),
        md.STORAGE_TOKENS: figures["storage"].get(key, {}).get("storage_tokens"),
        md.WRITE_MS_P50: snap.get("write_ms_p50"),
        md.WRITE_MS_P95: snap.get("write_ms_p95"),
        md.WRITE_MS_P99: snap.get("write_ms_p99"),
        md.FAULTS: faults,
        md.VALID: valid,
        md.FAULT_RATE: fault_rate,
        md.READ_TOKENS: reads.get("read_tokens"),
        md.LLM_READ_TOKENS: reads.get("llm_read_tokens"),
        md.READ_MS_P50: reads.get("read_ms_p50"),
        md.READ_MS_P95: reads.get("read_ms_p95"),
        md.READ_MS_P99: reads.get("read_ms_p99"),
    }


def _figure(cell: CellResult, metric: str) -> float | None:
    try:
        return cell.metrics.get(metric).value
    except KeyError:
        return None


def _event(
    asset: str,
    partition: str | None,
    values: Mapping[str, Any],
    keys: Sequence[str],
    extra: Mapping[str, dg.MetadataValue] | None = None,
) -> dg.AssetMaterialization:
    return dg.AssetMaterialization(
        asset_key=asset,
        partition=partition,
        metadata={
            # The figures of the asset's own vocabulary (the world tables share one dict).
            **md.numeric({k: v for k, v in values.items() if k in keys}, keys),
            **(extra or {}),
            RECORDED_BY: dg.MetadataValue.text("drift run"),
        },
    )


def _rows_check(
    asset: str, partition: str, rows: int | None, sessions: int | None, replicates: int
) -> dg.AssetCheckEvaluation:
    """The ``rows_per_session`` check: one stored row per session and replicate."""
    expected = None if sessions is None else sessions * replicates
    return dg.AssetCheckEvaluation(
        check_name=ROWS_PER_SESSION,
        asset_key=dg.AssetKey(asset),
        partition=partition,
        passed=rows is not None and rows == expected,
        description=f"{rows} rows for {sessions} sessions × {replicates} replicates",
        metadata={"rows": rows or 0, "expected": expected or 0},
    )


def _cell_events(
    cell: CellResult, figures: Mapping[str, Figures], lineage: str | None
) -> list[dg.AssetMaterialization | dg.AssetCheckEvaluation]:
    key = (cell.scenario, cell.horizon, cell.arm.key)
    partition = str(cell_partition_key(CellKey(WorldKey.of(*key[:2]), cell.arm.key)))
    values = _memory_values(cell, figures, key, cell.run.max_fault_rate)
    reads = figures["retrievals"].get(key, {})
    answers = figures["answers"].get(key, {})
    curve = figures["curves"].get(key, {})
    answered = {
        md.ROWS: answers.get("rows"),
        md.PROBES: answers.get("probes"),
        md.ACCURACY: answers.get("accuracy"),
        md.MEAN_SCORE: answers.get("mean_score"),
    }
    metrics = {
        md.ROWS: figures["metric_rows"].get(key, {}).get("rows"),
        md.VALID: cell.valid,
        md.FAULT_RATE: cell.fault_rate,
        **{key_: _figure(cell, name) for name, key_ in md.HEADLINE_METRICS.items()},
    }
    curve_values = {
        md.ROWS: curve.get("rows"),
        md.CHECKPOINTS: curve.get("rows"),
        md.FINAL_CUMULATIVE_TOKENS: curve.get("final_tokens"),
        md.FINAL_MVOT: curve.get("final_mvot"),
    }
    return [
        _event("memory_snapshots", partition, values, md.MEMORY_SNAPSHOTS_KEYS),
        _event(
            "retrievals",
            partition,
            {**values, md.ROWS: reads.get("rows"), md.FAULTS: reads.get("read_faults")},
            md.RETRIEVALS_KEYS,
        ),
        _event("probe_answers", partition, answered, md.PROBE_ANSWERS_KEYS),
        _event(
            "cell_metrics",
            partition,
            metrics,
            md.CELL_METRICS_KEYS,
            md.cost_metadata(cell.metrics),
        ),
        _event(CELL_COST_CURVE, partition, curve_values, md.CELL_COST_CURVE_KEYS),
        _rows_check(
            "memory_snapshots",
            partition,
            values[md.ROWS],
            values[md.SESSIONS],
            cell.replicates,
        ),
        dg.AssetCheckEvaluation(
            check_name=GATE_LINEAGE,
            asset_key=dg.AssetKey("memory_snapshots"),
            partition=partition,
            passed=lineage is None,
            severity=dg.AssetCheckSeverity.ERROR,
            description=lineage or "transcripts reach evaluation only through the gate",
        ),
    ]


def _world_events(
    world: WorldKey,
    con: duckdb.DuckDBPyConnection,
    tables: Mapping[str, Figures],
    reference: tuple[float, Mapping[str, Figures]],
) -> list[dg.AssetMaterialization | dg.AssetCheckEvaluation]:
    key = (world.source_id, world.horizon)
    events: list[dg.AssetMaterialization | dg.AssetCheckEvaluation] = []
    memory = reference[1]["memory_snapshots"].get((*key, REFERENCE_ARM.key), {})
    for table in WORLD_TABLE_NAMES:
        values = tables[table].get(key, {})
        own = {
            md.ROWS: values.get("rows"),
            md.REPLICATES: values.get("replicates"),
            md.SESSIONS: values.get("sessions"),
            md.ENTITIES: values.get("entities"),
            md.EVENTS: values.get("events"),
            md.TURNS: values.get("turns"),
            # Counted by the memory loop per session: the same count as the world asset's.
            md.TRANSCRIPT_TOKENS: memory.get("transcript_tokens"),
            md.FACTS: values.get("facts"),
            md.PROBES: values.get("probes"),
            md.CHECKPOINTS: values.get("checkpoints"),
        }
        events.append(_event(table, world.partition_key, own, md.WORLD_TABLE_KEYS[table]))
    limit = reference[0]
    values = _memory_values(None, reference[1], (*key, REFERENCE_ARM.key), limit)
    if values[md.ROWS] is not None:
        events.append(
            _event(REFERENCE_MEMORY, world.partition_key, values, md.REFERENCE_MEMORY_KEYS)
        )
        events.append(
            _rows_check(
                REFERENCE_MEMORY,
                world.partition_key,
                values[md.ROWS],
                values[md.SESSIONS],
                int(values[md.REPLICATES] or 0),
            )
        )
    found = dict(
        con.execute(
            "select metric, value from cell_metrics where scenario = ? and horizon = ? "
            "and arm = ? and checkpoint = 'all'",
            [world.source_id, world.horizon, REFERENCE_ARM.key],
        ).fetchall()
    )
    baseline = {
        md.PROBES: tables["probes"].get(key, {}).get("rows"),
        md.AMNESIAC_ERROR_RATE: found.get("error_rate_amnesiac"),
        md.REFERENCE_STORAGE_PER_SESSION: found.get("storage_per_session"),
        md.MVOT: found.get("mvot"),
        md.DRIFT_C: found.get("drift_c"),
        md.FAULTS: values[md.FAULTS],
    }
    events.append(_event(WORLD_BASELINES, world.partition_key, baseline, md.WORLD_BASELINES_KEYS))
    return events


def _provenance(instance: dg.DagsterInstance, deps: Sequence[str]) -> dict[str, str]:
    """Data provenance tags naming each upstream asset's latest event at this point.

    Without them Dagster takes any registered partition never materialised (an ablation arm
    the run did not run) as new input and shows the report assets unsynced; with them a
    report asset is stale only once an upstream partition is materialised after it.
    """
    from dagster._core.definitions.data_version import (
        CODE_VERSION_TAG,
        DEFAULT_DATA_VERSION,
        INPUT_DATA_VERSION_TAG_PREFIX,
        INPUT_EVENT_POINTER_TAG_PREFIX,
    )

    tags = {CODE_VERSION_TAG: "drift run"}
    for dep in deps:
        records = instance.fetch_materializations(dg.AssetKey(dep), limit=1).records
        if not records:
            continue
        tags[f"{INPUT_DATA_VERSION_TAG_PREFIX}/{dep}"] = DEFAULT_DATA_VERSION.value
        tags[f"{INPUT_EVENT_POINTER_TAG_PREFIX}/{dep}"] = str(records[0].storage_id)
    return tags


def record_direct_run(
    instance: dg.DagsterInstance,
    folder: Path,
    cells: Sequence[CellResult],
    summary: Mapping[str, Any],
    audits: Mapping[str, str | None],
    record: Path | None,
) -> int:
    """Report every asset a direct run wrote as materialised on ``instance``, with its checks.

    Returns:
        The number of events reported (materialisations and check evaluations).

    Raises:
        NotRecorded: The instance refused an event; the events before it are recorded.
    """
    from dagster._core.utils import make_new_run_id

    from drift_pipeline.pipeline import connect

    from .project import project_assets

    worlds = list(dict.fromkeys(WorldKey.of(c.scenario, c.horizon) for c in cells))
    arms = list(
        dict.fromkeys(Arm.parse(c.arm.key) for c in cells if c.arm.key != REFERENCE_ARM.key)
    )
    register_partitions(instance, worlds, arms)
    con = connect(folder)
    views = _views(con)
    tables = _world_figures(con, views)
    figures = _cell_figures(con, views)
    per_cell = {
        "metric_rows": ("cell_metrics", "count(*) as rows"),
        "answers": (
            "probe_answers",
            "count(*) as rows, count(distinct probe_id) as probes, "
            "avg(cast(correct as double)) as accuracy, avg(score) as mean_score",
        ),
        "curves": (
            "cost_curves",
            "count(*) as rows, arg_max(cumulative_tokens, checkpoint) as final_tokens, "
            "arg_max(mvot_so_far, checkpoint) as final_mvot",
        ),
    }
    for name, (table, columns) in per_cell.items():
        figures[name] = (
            _grouped(con, f"select scenario, horizon, arm, {columns} from {table} group by all", 3)
            if table in views
            else {}
        )
    # The run's fault-rate limit (the reference memory is held to it like any arm).
    limit = max((c.run.max_fault_rate for c in cells), default=0.05)
    violations = gate_lineage_violations(project_assets())
    lineage = "; ".join(violations) or None
    events: list[Event] = []
    for world in worlds:
        events += _world_events(world, con, tables, (limit, figures))
        failure = audits.get(f"{world.source_id}/{world.horizon}")
        events.append(
            dg.AssetCheckEvaluation(
                check_name=ANSWERABILITY,
                asset_key=dg.AssetKey("probes"),
                passed=failure is None,
                partition=world.partition_key,
                description=failure,
            )
        )
    for cell in cells:
        if cell.arm.key != REFERENCE_ARM.key:
            events += _cell_events(cell, figures, lineage)
    run_id = make_new_run_id()
    for done, event in enumerate(events):
        _report(instance, event, run_id, done)
    # Only the plots the leaderboard asset carries (the HTML report builds its own).
    plots = leaderboard_plots(folder, con, record) if record is not None else []
    curves, _, _ = cost_curves_metadata(con)
    reports: list[Event] = [
        dg.AssetMaterialization(
            asset_key="leaderboard",
            metadata={
                **leaderboard_metadata(cells, summary, plots, record, 0, audits),
                RECORDED_BY: dg.MetadataValue.text("drift run"),
            },
            tags=_provenance(instance, LEADERBOARD_DEPS),
        ),
        dg.AssetMaterialization(
            asset_key="cost_curves",
            metadata={**curves, RECORDED_BY: dg.MetadataValue.text("drift run")},
            tags=_provenance(instance, COST_CURVES_DEPS),
        ),
        *(
            dg.AssetCheckEvaluation(
                check_name=name,
                asset_key=dg.AssetKey("leaderboard"),
                passed=passed,
                description=description,
                severity=dg.AssetCheckSeverity.WARN,
            )
            for name, passed, description in trust_checks(summary)
        ),
    ]
    for done, event in enumerate(reports, len(events)):
        _report(instance, event, run_id, done)
    return len(events) + len(reports)


def _record_request(request: Path) -> int | None:
    """The recording child's work: the events of the run described in ``request``.

    Returns ``None`` when there is no instance to record into.

    Raises:
        RecordingFailed: The instance refused an event or could not be opened (one line).
    """
    with request.open("rb") as handle:
        folder, cells, summary, audits, record = pickle.load(handle)
    try:
        instance = direct_run_instance()
        if instance is None:
            return None
        with instance:
            return record_direct_run(instance, folder, cells, summary, audits, record)
    except NotRecorded as error:
        raise RecordingFailed(str(error)) from error
    except Exception as error:  # the instance itself: its configuration, its database
        cause = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise RecordingFailed(cause) from error


def main(argv: Sequence[str]) -> int:
    """The recording child (see :mod:`.record_child`): record, then answer in the result file."""
    request, answer = Path(argv[0]), Path(argv[1])
    try:
        reply: dict[str, Any] = {"count": _record_request(request)}
    except RecordingFailed as error:
        reply = {"error": str(error)}
    answer.write_text(json.dumps(reply), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
