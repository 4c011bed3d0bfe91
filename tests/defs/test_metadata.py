"""The ``cell_metrics`` asset's metadata keys come from the metric registry."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from metric_registry import example_importable, example_spec, registered

from drift_pipeline.memory import Arm
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.launch import build_definitions
from drift_pipeline.orchestration.partitions import CellKey, WorldKey, register_partitions
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog
from drift_pipeline.storage import TRANSCRIPTS, WORLD_TABLES, StorageRoot
from drift_pipeline.tokens import count_tokens_batch

from .conftest import TINY_ID

SUITE_KEYS = {
    "mvot": md.MVOT,
    "selectivity": md.SELECTIVITY,
    "revision_accuracy": md.REVISION_ACCURACY,
    "action_alignment": md.ACTION_ALIGNMENT,
    "tes": md.TES,
    "lps": md.LPS,
    "drift_c": md.DRIFT_C,
    "drift_c_lift": md.DRIFT_C_LIFT,
    "drift_e": md.DRIFT_E,
    # Privacy, and the multi-peer figures (null where a world has no canaries or peers).
    "privacy": "drift/privacy",
    "consistency": "drift/consistency",
    "consistency_agreement": "drift/consistency_agreement",
    "attribution": "drift/attribution",
    "handoff_sessions": "drift/handoff_sessions",
    "storage_per_session": md.STORAGE_PER_SESSION,
    "token_cost_per_session": md.TOKEN_COST_PER_SESSION,
    "read_ms_p50": md.READ_MS_P50,
    "read_ms_p95": md.READ_MS_P95,
    "read_ms_p99": md.READ_MS_P99,
    "write_ms_p50": md.WRITE_MS_P50,
    "write_ms_p95": md.WRITE_MS_P95,
    "write_ms_p99": md.WRITE_MS_P99,
}


@pytest.fixture(autouse=True)
def _example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    example_importable(monkeypatch)


def test_the_suite_keys_and_a_registered_one() -> None:
    assert dict(md.HEADLINE_METRICS) == SUITE_KEYS
    assert tuple(md.CELL_METRICS_KEYS) == (md.ROWS, md.VALID, md.FAULT_RATE, *SUITE_KEYS.values())
    with registered(example_spec("RECALL_ACCURACY")):
        assert md.HEADLINE_METRICS["recall_accuracy"] == "drift/recall_accuracy"
        assert md.CELL_METRICS_KEYS[-1] == "drift/recall_accuracy"
        assert len(md.CELL_METRICS_KEYS) == len(SUITE_KEYS) + 4
        assert md.numeric({"drift/recall_accuracy": 0.5}, md.CELL_METRICS_KEYS)[
            "drift/recall_accuracy"
        ] == dg.MetadataValue.float(0.5)
    assert "recall_accuracy" not in md.HEADLINE_METRICS
    assert "drift/recall_accuracy" not in md.CELL_METRICS_KEYS


@pytest.mark.slow
def test_a_registered_metric_reaches_the_cell_metrics_asset(tiny: Path, tmp_path: Path) -> None:
    world = WorldKey(TINY_ID, "short")
    bm25 = Arm.parse("bm25@hard")
    defs = build_definitions(
        DriftStorage(root=str(tmp_path / "data")),
        ScenarioCatalog(paths=[str(tiny.parent)]),
        MemoryLoop(),
    )
    cell = CellKey(world, bm25.key)
    with dg.DagsterInstance.ephemeral() as instance, registered(example_spec("RECALL_ACCURACY")):
        register_partitions(instance, [world], [bm25])
        # The world's run (tables, reference compressor, baselines), then the cell's.
        for job, partition in (
            ("world_job", world.partition_key),
            ("cell_job", cell.partition_key),
        ):
            result = defs.resolve_job_def(job).execute_in_process(
                instance=instance, partition_key=partition
            )
            assert result.success, job
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey("cell_metrics"), asset_partitions=[cell.partition_key]
            ),
            limit=1,
        ).records
        materialization = records[0].asset_materialization
        assert materialization is not None
        metadata = materialization.metadata
        assert set(metadata) == {*md.CELL_METRICS_KEYS, *md.CELL_METRICS_TEXT_KEYS}
    value = metadata["drift/recall_accuracy"].value
    assert isinstance(value, float) and 0.0 <= value <= 1.0


def test_the_transcripts_token_figure_counts_every_message(tiny: Path, tmp_path: Path) -> None:
    world = WorldKey(TINY_ID, "short")
    root = tmp_path / "data"
    defs = build_definitions(
        DriftStorage(root=str(root)), ScenarioCatalog(paths=[str(tiny.parent)]), MemoryLoop()
    )
    with dg.DagsterInstance.ephemeral() as instance:
        register_partitions(instance, [world], [])
        result = defs.resolve_job_def("world_job").execute_in_process(
            instance=instance,
            partition_key=world.partition_key,
            asset_selection=[dg.AssetKey(t.name) for t in WORLD_TABLES],
        )
        assert result.success
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(TRANSCRIPTS.name), asset_partitions=[world.partition_key]
            ),
            limit=1,
        ).records
    materialization = records[0].asset_materialization
    assert materialization is not None
    contents = StorageRoot.from_url(root).read_table(TRANSCRIPTS, world).column("content")
    expected = sum(count_tokens_batch(contents.to_pylist()))
    assert expected > 0
    assert materialization.metadata[md.TRANSCRIPT_TOKENS].value == expected


def test_a_cells_model_tokens_and_bounds_are_said_beside_its_figures() -> None:
    from report.test_cost_marks import _cell

    unknown = md.cost_metadata(_cell("service@hard", 0, None, outside=True).metrics)
    assert unknown[md.MODEL_TOKENS].value == (
        "unknown: it declares models the harness's meter cannot see, and reports no token counts"
    )
    assert unknown[md.COST_BOUNDS].value == (
        "drift_c ≤, drift_c_lift ≤, mvot ≤, read_llm_tokens_per_retrieve ≥, "
        "token_cost_per_session ≥, write_tokens_per_session ≥"
    )
    metered = md.cost_metadata(_cell("fact_store@hard", 10, 10).metrics)
    assert (metered[md.MODEL_TOKENS].value, metered[md.COST_BOUNDS].value) == ("metered", "none")
    over = md.cost_metadata(_cell("over@hard", 10, 40).metrics)
    assert over[md.MODEL_TOKENS].value == "self-reported (not checked by the meter)"


def test_the_cost_curves_mark_an_arm_whose_model_tokens_are_unknown() -> None:
    import duckdb

    from drift_pipeline.orchestration.report_metadata import cost_curves_metadata

    con = duckdb.connect()
    con.execute(
        "create view cost_curves as select * from (values "
        "('w', 'short', 'known@hard', 5, 100.0, 0.2, 'metered'), "
        "('w', 'short', 'service@hard', 5, 40.0, 0.5, 'unknown')) "
        "t(scenario, horizon, arm, checkpoint, cumulative_tokens, mvot_so_far, model_tokens)"
    )
    _, table, spec = cost_curves_metadata(con)
    row = next(line for line in table.splitlines() if "service@hard" in line)
    assert "service@hard [model tokens unknown]" in row and "≥40" in row and "≤0.500" in row
    known = next(line for line in table.splitlines() if "known@hard" in line)
    assert "[model" not in known and "≥" not in known
    arms = {point["arm"] for point in spec["data"]["values"]}
    assert arms == {"known@hard", "service@hard [model tokens unknown]"}
