"""The bench's plumbing: keys, table, --only, derived scenarios, the RSS helper.

Timings are never asserted (they belong to the bench's output, not to a test); only that the
figures exist, are numbers where measured and null where not.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from drift_pipeline.bench import (
    BUILT_INS,
    KEYS,
    TARGETS,
    BenchReport,
    BenchWorkspace,
    MeasuredFailure,
    derive_horizon,
    parse_only,
    run_bench,
    run_measured,
)
from drift_pipeline.bench import _measure as measure
from drift_pipeline.cli import main
from drift_pipeline.keys import WorldKey
from drift_pipeline.scenario import load_scenario

ISSUE_KEYS = (
    "generate_sessions_per_s",
    "loop_overhead_us_per_session",
    "floor_ratio",
    "read_p99_ms",
    "scaling_ratio_5000_vs_1000",
    "peak_rss_mb",
    "dagster_overhead_ratio",
    "suite_ratio",
    "suite_wall_s",
    "suite_floor_s",
    "suite_cpu_ratio",
    "meter_overhead_ms_p99",
)

# A small stand-in for the canonical scenario: same shape, far fewer sessions and replicates.
TINY_CANONICAL = """\
id: ua-baseline-001
paradigm: user_assistant
seed: 77
replicates: 2
horizon:
  short: { sessions: 6, session_gap_hours: 8 }
  medium: { sessions: 12, session_gap_days: 3 }
  long: { sessions: 24, session_gap_days: 14 }
noise_ratio: 0.6
entities:
  - id: principal
    type: human
    profile:
      big_five: { O: 0.4, C: 0.6, E: 0.5, A: 0.5, N: 0.4 }
  - id: assistant
    type: assistant_agent
    capability_profile:
      context_window: 4000
topology:
  - { session_range: [0, -1], active: [principal, assistant], pattern: linear }
checkpoints:
  - { after_session: 6, probe_types: [recall, action] }
  - { after_session: 24, probe_types: [recall, action, revision] }
"""


# The end-to-end steps (the suite command, the Dagster pairs) only need their plumbing shown:
# one replicate, and for the suite two small worlds, which still run in two processes.
ONE_REPLICATE = TINY_CANONICAL.replace("replicates: 2", "replicates: 1")
SHORT_SUITE = ONE_REPLICATE.replace("  long: { sessions: 24, session_gap_days: 14 }\n", "").replace(
    "after_session: 24", "after_session: 12"
)


def _suite(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "ua-baseline-001.yaml").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return _suite(tmp_path / "suite", TINY_CANONICAL)


def test_keys_are_exactly_the_issue_keys_in_order() -> None:
    assert KEYS == ISSUE_KEYS
    assert list(BenchReport().json()) == list(ISSUE_KEYS)
    assert all(value is None for value in BenchReport().json().values())


def test_parse_only() -> None:
    assert parse_only(None) == frozenset(ISSUE_KEYS)
    assert parse_only("floor_ratio, peak_rss_mb") == {"floor_ratio", "peak_rss_mb"}
    with pytest.raises(ValueError, match="unknown key 'floor'"):
        parse_only("floor")


def test_table_marks_ok_short_and_not_measured() -> None:
    report = BenchReport()
    report.figures["floor_ratio"] = 2.5
    suite_target = next(t.bound for t in TARGETS if t.key == "suite_ratio")
    assert suite_target is not None
    report.figures["suite_ratio"] = suite_target * 1.25
    report.figures["suite_wall_s"] = 420.0
    report.figures["generate_sessions_per_s"] = 25_000.0
    report.figures["read_p99_ms"] = {"bm25": 18.9, "amnesiac": 0.2}
    rows = {row[0]: row for row in report.rows()}
    assert rows["floor_ratio"][3] == "ok"
    assert rows["suite_ratio"][3] == "short"
    # The absolute time is reported beside the ratio, as information with no target.
    assert rows["suite_wall_s"][2:] == ("info", "info")
    assert rows["generate_sessions_per_s"][3] == "ok"
    assert rows["read_p99_ms.bm25"][3] == "short"
    assert rows["read_p99_ms.amnesiac"][3] == "ok"
    assert rows["peak_rss_mb"][3] == "not measured"
    assert report.short() == ["read_p99_ms.bm25", "suite_ratio"]
    table = report.table()
    assert table.splitlines()[0].split() == ["key", "value", "target", "ok/short"]
    assert "read_p99_ms.bm25" in table and "not measured" in table
    payload = report.json()
    assert payload["read_p99_ms"] == {"bm25": 18.9, "amnesiac": 0.2}
    assert payload["peak_rss_mb"] is None


def test_non_finite_figures_are_short_and_null() -> None:
    report = BenchReport()
    report.figures["floor_ratio"] = math.nan
    assert report.short() == ["floor_ratio"]
    assert report.json()["floor_ratio"] is None


def test_derive_horizon_changes_only_the_long_horizon(tmp_path: Path, suite: Path) -> None:
    derived = derive_horizon(suite / "ua-baseline-001.yaml", 50, tmp_path / "variants")
    assert derived.parent == tmp_path / "variants"
    loaded = load_scenario(derived)
    original = load_scenario(suite / "ua-baseline-001.yaml")
    assert loaded.spec.id == original.spec.id
    assert [name for name, _ in loaded.spec.horizon.items()] == ["long"]
    assert loaded.spec.horizon.long is not None
    assert loaded.spec.horizon.long.sessions == 50
    assert loaded.spec.seed == original.spec.seed
    assert loaded.spec.checkpoints == original.spec.checkpoints


def test_run_measured_reports_the_peak_of_the_child_and_its_workers(tmp_path: Path) -> None:
    allocate = "b = bytearray({mb} * 2**20); b[::4096] = b'x' * len(b[::4096])"
    # This process being large must not leak into the child's figure (Linux starts a child's
    # ru_maxrss at its parent's resident size).
    ballast = bytearray(300 * 2**20)
    ballast[:: 2**12] = b"x" * len(ballast[:: 2**12])
    small = run_measured([sys.executable, "-c", "pass"])
    del ballast
    big = run_measured([sys.executable, "-c", allocate.format(mb=200)])
    # A worker (grandchild) that the measured process waits for counts as its own process.
    worker = (
        "import subprocess, sys; "
        f"subprocess.run([sys.executable, '-c', {allocate.format(mb=200)!r}], check=True)"
    )
    nested = run_measured([sys.executable, "-c", worker])
    assert small.returncode == 0 and small.wall_s > 0
    assert big.peak_rss_mb >= 200 > 100 > small.peak_rss_mb
    assert nested.peak_rss_mb >= 200


def test_run_measured_counts_the_cpu_of_the_workers_it_waited_for() -> None:
    spin = "import time; t = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    worker = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spin!r}], check=True)"
    idle = run_measured([sys.executable, "-c", "import time; time.sleep(0.3)"])
    nested = run_measured([sys.executable, "-c", worker])
    # The grandchild's 0.3 s of CPU counts; sleeping does not.
    assert nested.cpu_s >= 0.3 > idle.cpu_s
    assert idle.wall_s >= 0.3


def test_run_measured_raises_with_the_output_tail(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    with pytest.raises(MeasuredFailure, match="boom"):
        run_measured([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"], log=log)
    with pytest.raises(MeasuredFailure, match="timed out"):
        run_measured([sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5)


def test_run_bench_measures_only_what_it_is_asked(suite: Path, tmp_path: Path) -> None:
    workspace = BenchWorkspace(suite, folder=tmp_path / "work")
    report = run_bench(
        suite,
        {"floor_ratio", "read_p99_ms", "scaling_ratio_5000_vs_1000"},
        workspace=workspace,
        stretched_sessions=30,
    )
    payload = report.json()
    assert list(payload) == list(ISSUE_KEYS)
    assert isinstance(payload["floor_ratio"], float) and payload["floor_ratio"] > 0
    assert isinstance(payload["scaling_ratio_5000_vs_1000"], float)
    assert set(payload["read_p99_ms"]) == set(BUILT_INS)
    assert all(isinstance(v, float) for v in payload["read_p99_ms"].values())
    unmeasured = set(ISSUE_KEYS) - {"floor_ratio", "read_p99_ms", "scaling_ratio_5000_vs_1000"}
    assert all(payload[key] is None for key in unmeasured)
    # The derived 30-session world went into the bench's folder, not the suite.
    assert sorted(p.name for p in suite.iterdir()) == ["ua-baseline-001.yaml"]
    assert (tmp_path / "work" / "scenarios" / "ua-baseline-001-long30.yaml").is_file()


@pytest.mark.slow
def test_dagster_overhead_runs_dagster_with_the_projects_dagster_yaml(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    suite = _suite(tmp_path / "suite", ONE_REPLICATE)
    lines: list[str] = []
    workspace = BenchWorkspace(suite, folder=tmp_path / "work", log=lines.append)
    ratio = measure.dagster_overhead_ratio(workspace, pairs=1)
    assert math.isfinite(ratio) and ratio > 0
    # Each run had a fresh instance of its own, configured as the project's.
    for name in ("dagster-home-0", "direct-home-0"):
        home = tmp_path / "work" / name
        assert (home / "dagster.yaml").read_text() == measure.PROJECT_DAGSTER_YAML.read_text()
    # Dagster's own SQLite storages, in their default layout under DAGSTER_HOME.
    runs = tmp_path / "work" / "dagster-home-0" / "history" / "runs"
    assert (runs / "index.db").is_file() and len(list(runs.glob("*.db"))) > 1
    assert "1 worlds generated" in (tmp_path / "work" / "via-dagster-0.log").read_text()
    (pair,) = [line for line in lines if line.startswith("dagster_overhead_ratio pair 1:")]
    assert f"wall {ratio:.2f}, CPU " in pair and "s CPU), via Dagster" in pair


def test_each_measured_run_gets_a_fresh_instance_never_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "user-home"))
    env = measure._fresh_instance(tmp_path / "direct-home-0")
    home = Path(env["DAGSTER_HOME"])
    assert home == (tmp_path / "direct-home-0").resolve()
    assert [p.name for p in home.iterdir()] == ["dagster.yaml"]
    assert (home / "dagster.yaml").read_text() == measure.PROJECT_DAGSTER_YAML.read_text()
    # A folder an earlier run filled is never reused.
    with pytest.raises(FileExistsError):
        measure._fresh_instance(tmp_path / "direct-home-0")


def test_cli_bench_writes_json_and_exits_zero(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "--scenarios",
            str(suite),
            "--only",
            "loop_overhead_us_per_session,peak_rss_mb",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert list(payload) == list(ISSUE_KEYS)
    assert isinstance(payload["loop_overhead_us_per_session"], float)
    assert payload["peak_rss_mb"] > 0
    assert payload["suite_wall_s"] is None
    assert "not measured" in result.output
    assert "peak_rss_mb" in result.output


def test_cli_bench_rejects_unknown_keys_and_missing_canonical(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(main, ["bench", "--only", "speed"])
    assert bad.exit_code == 2
    assert "unknown key 'speed'" in bad.output
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = runner.invoke(main, ["bench", "--scenarios", str(empty)])
    assert missing.exit_code == 2
    assert "no ua-baseline-001.yaml" in missing.output


def test_the_floor_reads_each_world_s_transcripts_once(suite: Path, tmp_path: Path) -> None:
    workspace = BenchWorkspace(suite, folder=tmp_path / "work")
    loaded, root = workspace.long_world()
    world = WorldKey(loaded.spec.id, "long")
    floor = measure.transcripts_floor(root, [world])
    assert math.isfinite(floor.wall_s) and floor.wall_s > 0
    assert floor.cpu_s > 0
    with pytest.raises(FileNotFoundError):
        measure.transcripts_floor(root, [world, WorldKey(loaded.spec.id, "short")])


@pytest.mark.slow
def test_the_suite_ratio_is_the_wall_time_over_the_floor_of_the_same_run(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    suite = _suite(tmp_path / "suite", SHORT_SUITE)
    workspace = BenchWorkspace(suite, folder=tmp_path / "work")
    keys = {"suite_ratio", "suite_wall_s", "suite_floor_s", "suite_cpu_ratio"}
    report = run_bench(suite, keys, workspace=workspace)
    # The unrounded figures: a tiny suite's floor is a few milliseconds.
    wall, floor, ratio = (
        report.figures[k] for k in ("suite_wall_s", "suite_floor_s", "suite_ratio")
    )
    assert isinstance(wall, float) and isinstance(floor, float) and wall > floor > 0
    assert ratio == pytest.approx(wall / floor)
    # The processor-time ratio counts the backend workers too, so the command's processor time
    # exceeds what its own process used; it is finite and above one like the wall ratio.
    cpu_ratio = report.figures["suite_cpu_ratio"]
    assert isinstance(cpu_ratio, float) and math.isfinite(cpu_ratio) and cpu_ratio > 1
    assert all(report.json()[key] is None for key in set(ISSUE_KEYS) - keys)
