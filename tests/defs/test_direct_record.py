"""A direct run is recorded in the Dagster instance: the Dagster path's keys and partitions."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from report.tiny_world import ARMS, run_tiny

from drift_pipeline.cli import run_records
from drift_pipeline.defs.assets.world import ANSWERABILITY
from drift_pipeline.orchestration import record_child
from drift_pipeline.orchestration.direct_record import direct_run_instance
from drift_pipeline.orchestration.project import project_assets
from drift_pipeline.orchestration.report_metadata import LEADERBOARD_CHECKS

from .conftest import PROJECT, postgres_instance

Recording = tuple[Path, dict[str, Any], tuple[Any, ...]]
"""The instance's home, the run's summary, and what the run handed to its recording."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    base = tmp_path_factory.mktemp("direct")
    home = base / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster.yaml", home / "dagster.yaml")
    handed: list[tuple[Any, ...]] = []
    original = run_records.record_in_dagster

    def spy(*args: Any) -> bool:
        handed.append(args)
        return original(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home))
        patch.setenv("DRIFT_DAGSTER_RECORD", "1")
        patch.setattr(run_records, "record_in_dagster", spy)
        result, summary = run_tiny(base)
    # Its own line ("not recorded in the Dagster instance: …" would be a failure).
    assert re.search(r"^recorded in the Dagster instance: \d+ asset events$", result.output, re.M)
    return home, summary, handed[0]


def _history(home: Path) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Materialisations per asset and check evaluations per (asset, check) in the instance."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        materialised: Counter[str] = Counter()
        evaluated: Counter[tuple[str, str]] = Counter()
        for assets in project_assets():
            for spec in assets.specs:
                records = instance.fetch_materializations(spec.key, limit=1000).records
                materialised[spec.key.to_user_string()] = len(records)
            for check in assets.check_keys:
                history = instance.event_log_storage.get_asset_check_execution_history(
                    check, limit=1000
                )
                evaluated[(check.asset_key.to_user_string(), check.name)] = len(history)
    return +materialised, +evaluated


def _record_again(home: Path, handed: tuple[Any, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """Record the run once more into ``home`` (``DAGSTER_HOME``); every count must double."""
    first = _history(home)
    assert first[0]["memory_snapshots"] and first[1][("probes", ANSWERABILITY)] == 2
    capsys.readouterr()
    # What the second `drift run` of the world hands its recording (same worlds, same cells).
    assert run_records.record_in_dagster(*handed)
    assert re.fullmatch(
        r"recorded in the Dagster instance: \d+ asset events\n", capsys.readouterr().out
    )
    second = _history(home)
    # Every asset and every check twice: the rerun is complete and the first run is kept.
    assert second[0] == {name: 2 * count for name, count in first[0].items()}
    assert second[1] == {key: 2 * count for key, count in first[1].items()}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        history = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey("probes"), ANSWERABILITY), limit=10
        )
        # One evaluation per world per recording, each recording under a run id of its own.
        assert Counter(record.partition for record in history) == {
            "report-tiny/short": 2,
            "report-tiny/medium": 2,
        }
        assert len({record.run_id for record in history}) == 2
        assert "" not in {record.run_id for record in history}
        _assert_checks_target_the_latest_materialisations(instance)


def _assert_checks_target_the_latest_materialisations(instance: dg.DagsterInstance) -> None:
    """Each check's newest evaluation per partition points at what is materialised now.

    That is how the UI shows a check as evaluated for the asset it shows: a check recorded in
    the same second as its materialisation must not read as "not evaluated".
    """
    for assets in project_assets():
        for check in assets.check_keys:
            history = instance.event_log_storage.get_asset_check_execution_history(
                check, limit=1000
            )
            newest: dict[str | None, Any] = {}
            for record in sorted(history, key=lambda record: record.id):
                newest[record.partition] = record
            for partition, record in newest.items():
                materialised = instance.fetch_materializations(
                    dg.AssetRecordsFilter(
                        asset_key=check.asset_key,
                        asset_partitions=None if partition is None else [partition],
                    ),
                    limit=1,
                ).records[0]
                target = record.evaluation.target_materialization_data
                assert target is not None and target.storage_id == materialised.storage_id, (
                    check,
                    partition,
                )


def _copy_as_instance(home: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the recorded instance in ``folder``, the one direct runs now record into."""
    copy = folder / "home"
    shutil.copytree(home, copy)
    monkeypatch.setenv("DAGSTER_HOME", str(copy))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    return copy


def test_a_second_run_of_the_same_world_is_recorded_beside_the_first(
    recorded: Recording,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    home, _, handed = recorded
    _record_again(_copy_as_instance(home, tmp_path, monkeypatch), handed, capsys)


def test_reruns_are_recorded_in_full_on_postgresql(
    recorded: Recording,
    postgres_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    _, _, handed = recorded
    home = tmp_path / "pg-home"
    postgres_instance(home, postgres_env, monkeypatch).dispose()  # empty, on the server
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    assert run_records.record_in_dagster(*handed)
    _record_again(home, handed, capsys)


def test_an_event_the_instance_refuses_is_one_line_naming_the_asset(
    recorded: Recording,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    home, _, handed = recorded
    copy = _copy_as_instance(home, tmp_path, monkeypatch)
    # The instance's own database refuses every check evaluation from now on.
    con = sqlite3.connect(copy / "history" / "runs" / "index.db")
    con.execute(
        "create trigger refuse before insert on asset_check_executions "
        "begin select raise(abort, 'check evaluations are read-only here'); end"
    )
    con.commit()
    con.close()
    assert not run_records.record_in_dagster(*handed)
    captured = capsys.readouterr()
    assert captured.out == ""
    # The first check evaluated: the world's reference memory, after the world's tables.
    assert re.fullmatch(
        r"not recorded in the Dagster instance: check rows_per_session on reference_memory "
        r"\[report-tiny/short\]: \(sqlite3\.IntegrityError\) check evaluations are read-only "
        r"here \(6 events of this run recorded before it\)\n",
        captured.err,
    ), captured.err


def test_every_asset_of_the_run_shows_as_materialised(recorded: Recording):
    home, summary, _ = recorded
    with dg.DagsterInstance.from_config(str(home)) as instance:
        keys = {spec.key for assets in project_assets() for spec in assets.specs}
        cells = {f"{arm}@hard|report-tiny/{h}" for arm in ARMS for h in ("short", "medium")}
        worlds = {"report-tiny/short", "report-tiny/medium"}
        for name in ("memory_snapshots", "retrievals", "probe_answers", "cell_metrics"):
            assert dg.AssetKey(name) in keys
            assert instance.get_materialized_partitions(dg.AssetKey(name)) == cells
        for name in ("transcripts", "probes", "reference_memory", "world_baselines"):
            assert instance.get_materialized_partitions(dg.AssetKey(name)) == worlds
        event = instance.get_latest_materialization_event(dg.AssetKey("leaderboard"))
        assert event is not None and event.asset_materialization is not None
        metadata = event.asset_materialization.metadata
        best = next(row for row in summary["arms"] if row["valid"])["drift_c"]["value"]
        assert metadata["drift/best_drift_c"].value == pytest.approx(best)
        assert "| arm | DRIFT-C |" in str(metadata["leaderboard"].value)
        assert str(metadata["plot_cost_curve"].value).startswith("![Token cost curve")
        assert "data:image/png;base64," in str(metadata["plot_mvot_by_horizon"].value)
        cell = instance.get_latest_materialization_event(dg.AssetKey("cell_metrics"))
        assert cell is not None and cell.asset_materialization is not None
        assert "drift/drift_c" in cell.asset_materialization.metadata
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("probes"), ANSWERABILITY)]
        )
        assert check, "the answerability audit was not reported"
        assert all(record.status.value == "SUCCEEDED" for record in check.values()), check
        # The leaderboard's trust checks, evaluated as its rows' verification says.
        # The memory assets' checks too: nothing in the UI is left "not evaluated".
        memory_checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [
                dg.AssetCheckKey(dg.AssetKey("memory_snapshots"), "rows_per_session"),
                dg.AssetCheckKey(dg.AssetKey("memory_snapshots"), "gate_lineage"),
                dg.AssetCheckKey(dg.AssetKey("reference_memory"), "rows_per_session"),
            ]
        )
        assert len(memory_checks) == 3
        assert all(record.status.value == "SUCCEEDED" for record in memory_checks.values())
        trust = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("leaderboard"), name) for name in LEADERBOARD_CHECKS]
        )
        assert set(trust) == {
            dg.AssetCheckKey(dg.AssetKey("leaderboard"), name) for name in LEADERBOARD_CHECKS
        }


def test_recording_is_off_with_the_switch_or_without_an_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "0")
    assert direct_run_instance() is None
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    monkeypatch.delenv("DAGSTER_HOME")
    monkeypatch.chdir(tmp_path)  # no .dagster_home here
    assert direct_run_instance() is None


def test_every_figure_of_the_dagster_path_is_reported(
    recorded: Recording,
):
    home, _, _ = recorded
    with dg.DagsterInstance.from_config(str(home)) as instance:
        world = "report-tiny/short"
        for table in ("latent_profiles", "transcripts", "probes", "reference_memory"):
            event = instance.get_latest_materialization_event(dg.AssetKey(table))
            assert event is not None and event.asset_materialization is not None
            values = {k: v.value for k, v in event.asset_materialization.metadata.items()}
            # Every key the Dagster path reports has a figure (none left null).
            assert [k for k, v in values.items() if v is None] == [], (table, values)
        cell = f"fact_store@hard|{world}"
        for table in ("memory_snapshots", "retrievals", "probe_answers", "cell_cost_curve"):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey(table), asset_partitions=[cell]), limit=1
            ).records
            materialization = records[0].asset_materialization
            assert materialization is not None
            values = {k: v.value for k, v in materialization.metadata.items()}
            assert [k for k, v in values.items() if v is None] == [], (table, values)
        leaderboard = instance.get_latest_materialization_event(dg.AssetKey("leaderboard"))
        assert leaderboard is not None and leaderboard.asset_materialization is not None
        metadata = leaderboard.asset_materialization.metadata
        assert "| status |" in str(metadata["leaderboard"].value)  # with the rows' status
        assert "budget (spec §7.8, p99 ms)" in str(metadata["budget"].value)
        assert str(metadata["plot_session_reads"].value).startswith("![Read latency")


def test_nothing_is_started_when_there_is_nothing_to_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def started(*args: Any, **kwargs: Any) -> int:
        raise AssertionError(f"a recording process was started: {args}")

    monkeypatch.setattr(record_child.subprocess, "call", started)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "0")
    assert record_child.record_in_child(tmp_path, [], {}, {}, None) is None
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    monkeypatch.delenv("DAGSTER_HOME")
    monkeypatch.chdir(tmp_path)  # no .dagster_home here
    assert record_child.record_in_child(tmp_path, [], {}, {}, None) is None


def test_an_instance_that_cannot_be_opened_is_one_line(
    recorded: Recording,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, handed = recorded
    home = tmp_path / "broken"
    home.mkdir()
    (home / "dagster.yaml").write_text(
        "run_storage:\n  module: drift_no_such_module\n  class: Nowhere\n", encoding="utf-8"
    )
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    capsys.readouterr()
    assert not run_records.record_in_dagster(*handed)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert re.fullmatch(
        r"not recorded in the Dagster instance: [^\n]*drift_no_such_module[^\n]*\n", captured.err
    ), captured.err


def test_the_process_that_ran_the_cells_never_imports_dagster(
    recorded: Recording, tmp_path: Path
) -> None:
    """The recording happens in a child: the run's own process, holding its data, stays light."""
    home, _, handed = recorded
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    request = tmp_path / "handed.pickle"
    request.write_bytes(pickle.dumps(handed))
    script = (
        "import pickle, sys\n"
        "from drift_pipeline.cli import run_records\n"
        f"handed = pickle.loads(open({str(request)!r}, 'rb').read())\n"
        "assert run_records.record_in_dagster(*handed)\n"
        "print('dagster imported:', 'dagster' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "DAGSTER_HOME": str(copy), "DRIFT_DAGSTER_RECORD": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert re.search(r"^recorded in the Dagster instance: \d+ asset events$", done.stdout, re.M)
    assert done.stdout.rstrip().endswith("dagster imported: False"), done.stdout + done.stderr
    # The events reached the instance: every asset and check once more.
    assert _history(copy)[0] == {name: 2 * n for name, n in _history(home)[0].items()}


def test_cells_that_cannot_be_handed_over_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFT_DAGSTER_RECORD", "1")
    with pytest.raises(record_child.RecordingFailed) as failed:
        record_child.record_in_child(tmp_path, [lambda: None], {}, {}, None)  # type: ignore[list-item]
    assert "cannot be handed to the recording process" in str(failed.value)
    assert "\n" not in str(failed.value)
