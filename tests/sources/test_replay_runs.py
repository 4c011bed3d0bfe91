"""``drift run locomo:…`` and ``drift run longmemeval:…`` end to end: every arm, tables, JSON."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner
from memory.plugins import _support

from drift_pipeline.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"
LOCOMO_FILE = FIXTURES / "locomo_small.json"
LONGMEMEVAL_FILE = FIXTURES / "longmemeval_small.json"


def _run(tmp_path: Path, source: str, *backends: str) -> tuple[str, dict[str, Any], Path]:
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    args = ["run", source, "--out", str(out), "--json", str(summary)]
    for backend in backends:
        args += ["--backend", backend]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads(summary.read_text()), out


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], Path]:
    """One direct run of the LoCoMo file on three arms; the tests below only read it."""
    folder = tmp_path_factory.mktemp("locomo")
    return _run(folder, f"locomo:{LOCOMO_FILE}", "full_context", "bm25", "amnesiac")


def test_a_locomo_file_runs_end_to_end_with_inapplicable_metrics_marked(
    locomo_run: tuple[str, dict[str, Any], Path],
) -> None:
    stdout, summary, out = locomo_run
    board = stdout.splitlines()
    line = next(row for row in board[2:5] if row.startswith("full_context@hard"))
    for column in ("DRIFT-C", "Select.", "Revision", "Action"):
        start = board[0].index(column)
        assert line[start:].split("  ")[0] == "n/a", column
    assert line[board[0].index("MVOT") :].split("  ")[0] != "n/a"
    assert "recall by probe subtype (pooled over questions):" in stdout
    # DRIFT-C is not applicable: MVOT orders the arms.
    listed = [row.split()[0] for row in board[2:5]]
    by_mvot = {a["arm"]: a["mvot"]["value"] for a in summary["arms"]}
    assert listed == sorted(by_mvot, key=lambda arm: -by_mvot[arm])
    assert by_mvot[listed[0]] > by_mvot[listed[-1]]
    assert summary["scenarios"] == ["locomo-conv-7", "locomo-conv-8"]
    cell = next(c for c in summary["cells"] if c["arm"] == "full_context@hard")
    assert cell["metrics"]["drift_c"]["value"] is None
    assert cell["metrics"]["revision_accuracy"]["value"] is None
    assert cell["metrics"]["mvot"]["value"] is not None
    assert "drift_c" in cell["not_applicable"] and "mvot" not in cell["not_applicable"]
    arms = {a["arm"]: a for a in summary["arms"]}
    recall = {arm: a["recall_by_subtype"] for arm, a in arms.items()}
    assert recall["full_context@hard"]["single_hop"]["n"] == 6
    # Everything the conversation said is in full context, so every single-hop gold phrase is
    # found; the amnesiac finds none.
    assert recall["full_context@hard"]["single_hop"]["value"] == 1.0
    assert recall["amnesiac@hard"]["single_hop"]["value"] == 0.0
    assert (
        recall["full_context@hard"]["single_hop"]["value"]
        >= recall["bm25@hard"]["single_hop"]["value"]
    )
    # "I ran the Lisbon marathon yesterday", said on 25 May 2023, dates the marathon 24 May;
    # the first bowl, shown on 8 May 2023, was made in 2023.
    assert recall["full_context@hard"]["temporal"]["value"] == 1.0
    assert recall["amnesiac@hard"]["temporal"]["value"] == 0.0
    # The manifest names the data file by content.
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    digest = hashlib.sha256(LOCOMO_FILE.read_bytes()).hexdigest()
    assert {(s["id"], s["sha256"], s["source"]) for s in manifest["scenarios"]} == {
        ("locomo-conv-7", digest, "locomo"),
        ("locomo-conv-8", digest, "locomo"),
    }
    # The Parquet tables, read back by DuckDB, hold every question once per arm and an
    # undefined DRIFT-C row (not a zero).
    counts = _support.query(
        out,
        "select subtype, count(*) as n from {probe_answers} "
        "where arm = 'bm25@hard' group by subtype order by subtype",
    )
    assert {row["subtype"]: row["n"] for row in counts} == {
        "adversarial": 2,
        "multi_hop": 2,
        "open_domain": 1,
        "single_hop": 6,
        "temporal": 2,
    }
    metrics = out / "cell_metrics"
    with duckdb.connect() as con:
        values = con.execute(
            f"select value, n from read_parquet('{metrics}/**/*.parquet', hive_partitioning=1) "
            "where metric = 'drift_c' and checkpoint = 'all'"
        ).fetchall()
    assert values and all(value is None and n == 0 for value, n in values)


def test_a_longmemeval_file_runs_end_to_end(tmp_path: Path) -> None:
    _, summary, _ = _run(tmp_path, f"longmemeval:{LONGMEMEVAL_FILE}", "full_context")
    assert len(summary["cells"]) == 3
    cells = {c["scenario"]: c for c in summary["cells"] if c["arm"] == "full_context@hard"}
    update = cells["longmemeval-6a1eabeb"]
    # A knowledge update is a revision probe: Revision Accuracy is measured, DRIFT-C is not.
    assert update["metrics"]["revision_accuracy"]["value"] == 1.0
    assert update["metrics"]["drift_c"]["value"] is None
    # Selectivity is measured on content: haystacks carry no event values or decoys to look for.
    assert cells["longmemeval-e47becba"]["metrics"]["selectivity"]["value"] is None
    assert "selectivity" in cells["longmemeval-e47becba"]["not_applicable"]
    recall = summary["arms"][0]["recall_by_subtype"]
    assert set(recall) == {"single_session_user", "knowledge_update", "abstention"}
    assert recall["single_session_user"]["value"] == 1.0


def test_dagster_takes_the_same_source_names_and_writes_the_same_answers(
    locomo_run: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    source = f"locomo:{LOCOMO_FILE}"
    _, direct_summary, direct_out = locomo_run
    direct = next(arm for arm in direct_summary["arms"] if arm["arm"] == "bm25@hard")
    out, summary = tmp_path / "dagster" / "data", tmp_path / "dagster" / "summary.json"
    home = tmp_path / "home"
    home.mkdir()
    args = ["run", source, "--via", "dagster", "--backend", "bm25", "--out", str(out)]
    result = CliRunner(env={"DAGSTER_HOME": str(home)}).invoke(
        main, [*args, "--json", str(summary)]
    )
    assert result.exit_code == 0, result.output
    assert "world_job locomo-conv-7/long" in result.stderr
    via = json.loads(summary.read_text())
    assert [arm["arm"] for arm in via["arms"]] == ["bm25@hard"]
    assert via["arms"][0]["recall_by_subtype"] == direct["recall_by_subtype"]
    assert via["arms"][0]["not_applicable"] == direct["not_applicable"]
    answers = "select probe_id, correct from {probe_answers} where arm = 'bm25@hard' order by all"
    assert _support.query(out, answers) == _support.query(direct_out, answers)
