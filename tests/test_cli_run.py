"""``drift run`` end to end, as a user runs it: a subprocess, plugins on ``PYTHONPATH``, Parquet
read back through DuckDB."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from finished_run import FinishedRun as Run
from finished_run import drift_run as finished_run
from helpers import unchecked
from memory.plugins import _support
from memory.plugins.crasher import EXIT_CODE

from drift_pipeline.cli import main
from drift_pipeline.evaluation import OFFLINE_SCORING
from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.report import EXACT_PATH_LINE
from drift_pipeline.sources import register_source, unregister_source
from drift_pipeline.storage import CELL_TABLES, WORLD_TABLES, partition_file

DRIFT = str(Path(sys.executable).with_name("drift"))
STRONGEST = "unprivileged-user+mount-namespace"
SECRETS = {"OPENAI_API_KEY": "sk-test-cli-secret", "DRIFT_TEST_SECRET": "cli-secret-1618"}
KEEPER = "plugins.keeper:RecentLines"
ENV_PROBE = "plugins.env_probe:EnvProbe"
FAULTY = "plugins.faulty:FaultyBackend"
CRASHER = "plugins.crasher:CrashOnce"


def drift_run(
    folder: Path,
    *args: str,
    scenario_id: str = "cli-loop-t",
    env: Mapping[str, str] | None = None,
) -> Run:
    """Run ``drift run`` on the test scenario with plugins importable and secrets set."""
    scenario = _support.write_scenario(folder / "scenarios", scenario_id)
    plugins = {"PYTHONPATH": str(_support.PLUGINS_ROOT)}
    return finished_run(scenario, folder, args, {**SECRETS, **plugins, **(env or {})})


def drift_run_in_process(
    folder: Path, *args: str, env: dict[str, str] | None = None, scenario_id: str = "cli-loop-t"
) -> Run:
    """:func:`drift_run`'s command in this process: for runs refused before any world is read."""
    scenario = _support.write_scenario(folder / "scenarios", scenario_id)
    out = folder / "data"
    summary = folder / "summary.json"
    result = CliRunner(env=SECRETS if env is None else env).invoke(
        main, ["run", str(scenario), "--out", str(out), "--json", str(summary), *args]
    )
    # An exception other than the command's exit would be a traceback in a user's terminal.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    payload = json.loads(summary.read_text()) if summary.exists() else {}
    return Run(result.exit_code, result.stdout, result.stderr, out, payload)


def _rows_per_arm(run: Run) -> dict[str, list[tuple[int, int, int, int]]]:
    rows = run.query(
        "select arm, replicate, count(*) as n, count(distinct session_index) as d, "
        "min(session_index) as lo, max(session_index) as hi "
        "from {memory_snapshots} group by arm, replicate order by arm, replicate"
    )
    found: dict[str, list[tuple[int, int, int, int]]] = {}
    for row in rows:
        found.setdefault(row["arm"], []).append((row["n"], row["d"], row["lo"], row["hi"]))
    return found


def _assert_complete(run: Run, arms: set[str]) -> None:
    """Every arm: each replicate has each session exactly once (sessions × replicates rows)."""
    per_arm = _rows_per_arm(run)
    assert set(per_arm) == arms
    full = (_support.SESSIONS, _support.SESSIONS, 0, _support.SESSIONS - 1)
    for arm in arms:
        assert per_arm[arm] == [full] * _support.REPLICATES, arm
    totals = run.query("select arm, count(*) as n from {memory_snapshots} group by arm")
    assert {r["n"] for r in totals} == {_support.SESSIONS * _support.REPLICATES}


# --- a plugin next to the built-ins ------------------------------------------------------------


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("plugin-run")
    return drift_run(folder, "--backend", "bm25", "--backend", KEEPER, "--backend", ENV_PROBE)


def test_a_plugin_backend_runs_next_to_the_built_ins(plugin_run: Run):
    assert plugin_run.code == 0, plugin_run.stderr
    assert "Traceback" not in plugin_run.stderr
    _assert_complete(
        plugin_run,
        {"bm25@hard", f"{KEEPER}@hard", f"{ENV_PROBE}@hard", "reference_compressor@hard"},
    )
    # The plugin is on the leaderboard and its costs were recorded like any built-in's.
    assert f"{KEEPER}@hard" in plugin_run.stdout
    assert "\n3 cells (1 world × 3 arms), 1 worlds generated, 0 faults" in plugin_run.stdout
    costs = plugin_run.query(
        "select sum(write_tokens) as w, min(storage_tokens) as s from {memory_snapshots} "
        "where backend = ?",
        KEEPER,
    )[0]
    assert costs["w"] == 10 * _support.SESSIONS * _support.REPLICATES and costs["s"] > 0
    answered = plugin_run.query(
        "select count(*) as n, count(error) as e, min(llm_read_tokens) as r from {retrievals} "
        "where backend = ?",
        KEEPER,
    )[0]
    probes = plugin_run.query("select count(*) as n from {probes}")[0]["n"]
    assert answered == {"n": probes, "e": 0, "r": 3}


def test_the_leaderboard_names_its_reader_and_judge_with_their_figures(plugin_run: Run):
    lines = plugin_run.stdout.splitlines()
    scored = lines.index(f"scored by: reader {OFFLINE_SCORING.reader}, judge context@2")
    assert "used to revise its rules, 11 sets" in lines[scored + 1]
    assert "accuracy" in lines[scored + 1]
    # The figures on text the reader has not met, measured for this very reader.
    assert lines[scored + 2].startswith("  on text it has not met (by other authors, kept outside")
    assert "accuracy" in lines[scored + 2]
    assert lines[scored + 3].strip() == EXACT_PATH_LINE
    [scoring] = plugin_run.summary["scoring"]
    assert (scoring["reader"], scoring["judge"]) == (OFFLINE_SCORING.reader, "context@2")
    assert scoring["reader_figures"][0]["name"] == "reader_check"


def test_the_manifest_records_the_isolation_that_held_and_the_plugin(plugin_run: Run):
    manifest = plugin_run.manifest()
    if os.geteuid() == 0:
        assert manifest["isolation"] == [STRONGEST]
    assert manifest["backends"][KEEPER] == "0.3"
    assert f"{KEEPER}@hard" in manifest["arms"]
    assert f"isolation: {', '.join(manifest['isolation'])}" in plugin_run.stdout
    assert not any(value in json.dumps(manifest) for value in SECRETS.values())


def test_read_latency_percentiles_are_ordered_for_every_arm(plugin_run: Run):
    cells = plugin_run.summary["cells"]
    assert {c["arm"] for c in cells} == {"bm25@hard", f"{KEEPER}@hard", f"{ENV_PROBE}@hard"}
    for cell in cells:
        for kind in ("read", "write"):
            p = cell["latency_ms"][kind]
            assert 0 <= p["p50"] <= p["p95"] <= p["p99"], (cell["arm"], kind, p)
        assert cell["faults"] == 0


def test_a_plugin_sees_no_harness_secrets_and_runs_unprivileged_in_its_own_folder(
    plugin_run: Run,
):
    contexts = plugin_run.query(
        "select context from {retrievals} where backend = ? and error is null", ENV_PROBE
    )
    assert contexts
    for row in contexts:
        report = json.loads(row["context"])
        for key, value in SECRETS.items():
            # OPENAI_API_KEY is there, but it is the harness's token-meter key, not the user's.
            assert report["env"].get(key) != value and value not in row["context"]
        assert report["env"]["OPENAI_API_KEY"].startswith("drift-meter-")
        assert report["cwd"] == os.path.realpath(report["env"]["HOME"])
        assert report["cwd_writable"] is True
        if os.geteuid() == 0:
            assert report["uid"] != 0 and report["euid"] != 0
            assert report["env"]["DRIFT_ISOLATION"] == STRONGEST


# --- faults ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("faults-run")
    return drift_run(
        folder,
        *("--backend", "bm25", "--backend", FAULTY, "--backend", CRASHER),
        *("--call-timeout", "2", "--fail-on-error"),
        # Every call is made, however many fault: the recording of each is what is checked.
        *("--max-fault-rate", "1"),
        env=unchecked(
            f"{FAULTY} and {CRASHER}",
            "the first raises on some calls and the second kills its worker once; how a run "
            "records their faults is what is tested",
        ),
    )


def test_faults_are_recorded_and_fail_on_error_exits_1(faults_run: Run):
    assert faults_run.code == 1, faults_run.stderr
    assert "Traceback" not in faults_run.stderr + faults_run.stdout
    _assert_complete(
        faults_run,
        {"bm25@hard", f"{FAULTY}@hard", f"{CRASHER}@hard", "reference_compressor@hard"},
    )
    store_errors = [
        r["error"]
        for r in faults_run.query(
            "select error from {memory_snapshots} where backend = ? and error is not null", FAULTY
        )
    ]
    # The probes' retrieves and the agent's reads before each session.
    read_errors = [
        r["error"]
        for r in faults_run.query(
            "select error from {retrievals} where backend = ? and error is not null "
            "union all select error from (select backend, unnest(session_read_errors) as error "
            "from {memory_snapshots}) where backend = ? and error is not null",
            FAULTY,
            FAULTY,
        )
    ]
    assert store_errors
    assert all(e.startswith("RuntimeError: planned failure on store call") for e in store_errors)
    assert read_errors.count("timeout after 2s; worker restarted") == _support.REPLICATES
    assert "retrieve() returned dict, expected str" in read_errors
    crashes = faults_run.query(
        "select replicate, session_index, error from {memory_snapshots} "
        "where backend = ? and error is not null order by replicate",
        CRASHER,
    )
    assert crashes == [
        {"replicate": r, "session_index": 4, "error": f"worker crashed (exit {EXIT_CODE}); "
         "worker restarted"}
        for r in range(_support.REPLICATES)
    ]  # fmt: skip


def test_the_summary_lists_the_faults(faults_run: Run):
    errors = faults_run.query(
        "select backend, count(error) as n from "
        "(select backend, error from {memory_snapshots} "
        " union all select backend, unnest(session_read_errors) as error from {memory_snapshots}"
        " union all select backend, error from {retrievals}) group by backend"
    )
    per_backend = {r["backend"]: r["n"] for r in errors}
    total = sum(per_backend.values())
    assert total > 0 and per_backend["bm25"] == 0
    summary_line = next(line for line in faults_run.stdout.splitlines() if " faults, " in line)
    assert f", {total} faults, " in summary_line, (summary_line, per_backend)
    # Per faulting arm: its name, its faults by call kind, and the first exception with the
    # line of the backend's code that raised it (bm25 did not fault: not listed).
    lines = faults_run.stdout.splitlines()
    start = lines.index(
        "faults in 2 arm(s) (each one is in the `error` columns of memory_snapshots and "
        "retrievals, and in the cell manifests):"
    )
    listed = {line.split(": ")[0].strip(): n for n, line in enumerate(lines) if n > start}
    faulty = lines[listed[f"{FAULTY}@hard"]]
    assert faulty.startswith(f"  {FAULTY}@hard: {per_backend[FAULTY]} of ")
    assert "(store " in faulty and ", read before a session " in faulty and ", probe " in faulty
    first = lines[listed[f"{FAULTY}@hard"] + 1]
    assert first.startswith("    first exception (cli-loop-t/short, replicate 0, store short-r0-s")
    assert "RuntimeError: planned failure on store call 3 at " in first
    assert re.search(r"/plugins/faulty\.py:\d+\)$", first), first
    crasher = lines[listed[f"{CRASHER}@hard"] + 1]
    assert crasher.startswith("    first fault (cli-loop-t/short, replicate 0, store short-r0-s")
    assert "worker crashed" in crasher
    assert "bm25@hard" not in listed
    cells = {c["backend"]: c["faults"] for c in faults_run.summary["cells"]}
    assert cells == {"bm25": 0, FAULTY: per_backend[FAULTY], CRASHER: per_backend[CRASHER]}


def test_other_arms_are_intact_next_to_a_faulty_one(faults_run: Run, plugin_run: Run):
    probes = faults_run.query("select count(*) as n from {probes}")[0]["n"]
    bm25 = faults_run.query(
        "select count(*) as n, count(error) as e, sum(length(context)) as chars "
        "from {retrievals} where backend = 'bm25'"
    )[0]
    assert bm25["n"] == probes and bm25["e"] == 0 and bm25["chars"] > 0
    assert faults_run.query(
        "select count(error) as e from {memory_snapshots} where backend = 'bm25'"
    ) == [{"e": 0}]
    # Same scenario, same world: bm25 answered exactly as it did in a run without faulty arms.
    sql = (
        "select replicate, probe_id, context from {retrievals} where backend = 'bm25' order by all"
    )
    assert faults_run.query(sql) == plugin_run.query(sql)


def test_without_fail_on_error_a_faulty_run_exits_0(tmp_path: Path):
    # Within the fault-rate limit (here: any rate), faults are data and the run succeeds.
    run = drift_run(
        tmp_path,
        *("--backend", FAULTY, "--call-timeout", "2", "--max-fault-rate", "1"),
        env=unchecked(FAULTY, "faults on purpose; that the run still exits 0 is tested"),
    )
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert " 0 faults" not in run.stdout and f"  {FAULTY}@hard: " in run.stdout
    _assert_complete(run, {f"{FAULTY}@hard", "reference_compressor@hard"})


# --- gates ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gates_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("gates-run")
    return drift_run(
        folder,
        *("--backend", "full_context", "--backend", "bm25"),
        *("--gate", "hard", "--gate", "soft:2", "--gate", "summary:64"),
    )


def test_every_gate_of_every_backend_is_an_arm(gates_run: Run):
    assert gates_run.code == 0, gates_run.stderr
    arms = {f"{b}@{g}" for b in ("full_context", "bm25") for g in ("hard", "soft:2", "summary:64")}
    _assert_complete(gates_run, {*arms, "reference_compressor@hard"})
    assert {c["arm"] for c in gates_run.summary["cells"]} == arms


def test_soft_gate_appends_the_last_transcripts_to_contexts(gates_run: Run):
    buffers = gates_run.query(
        "select gate, min(soft_buffer_tokens) as lo, max(soft_buffer_tokens) as hi, "
        "bool_and(read_tokens >= soft_buffer_tokens) as within from {retrievals} group by gate"
    )
    by_gate = {r["gate"]: r for r in buffers}
    assert by_gate["soft:2"]["lo"] > 0 and by_gate["soft:2"]["within"]
    assert by_gate["hard"]["hi"] == 0 and by_gate["summary:64"]["hi"] == 0
    # The soft arm's contexts are the hard arm's plus the buffer.
    pairs = gates_run.query(
        "select h.context as hard, s.context as soft, s.soft_buffer_tokens as buffer "
        "from {retrievals} h join {retrievals} s using (replicate, probe_id) "
        "where h.arm = 'bm25@hard' and s.arm = 'bm25@soft:2'"
    )
    assert pairs
    assert all(p["soft"].startswith(p["hard"]) and len(p["soft"]) > len(p["hard"]) for p in pairs)


def test_summary_gate_hands_backends_summaries(gates_run: Run):
    last = gates_run.query(
        "select gate, replicate, storage_tokens, write_ms from {memory_snapshots} "
        "where backend = 'full_context' and session_index = ?",
        _support.SESSIONS - 1,
    )
    storage = {(r["gate"], r["replicate"]): r["storage_tokens"] for r in last}
    for replicate in range(_support.REPLICATES):
        assert 0 < storage[("summary:64", replicate)] < storage[("hard", replicate)]
    writes = gates_run.query(
        "select count(*) as n, count(error) as e from {memory_snapshots} "
        "where gate = 'summary:64' and backend = 'full_context'"
    )
    assert writes == [{"n": _support.SESSIONS * _support.REPLICATES, "e": 0}]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--gate", "bogus"), "bogus"),
        (("--gate", "soft:0"), "soft:0"),
        (("--backend", "no_such_backend"), "no_such_backend"),
        (("--backend", "not a:path"), "not a:path"),
    ],
)
def test_bad_arms_exit_2_with_one_line_and_write_nothing(
    tmp_path: Path, args: tuple[str, ...], expected: str
):
    # In process: `drift run` refusing a bad backend by name in a subprocess is in
    # test_cli_failures.py, with the same one-line, exit-2 path.
    run = drift_run_in_process(tmp_path, *args)
    assert run.code == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0]
    assert "Traceback" not in run.stderr
    assert not run.out.exists()


# --- the LLM reader and judge ----------------------------------------------------------

LLM_KEY = "sk-test-DRIFT-SECRET-123"


def drift_llm(folder: Path, server: Any, *args: str, env: dict[str, str] | None = None) -> Run:
    """``drift run`` with the LLM endpoint of ``server`` in the environment (plus ``env``)."""
    scenario = _support.write_scenario(folder / "scenarios", "cli-llm-t")
    out, summary = folder / "data", folder / "summary.json"
    environment = {
        **os.environ,
        "DRIFT_LLM_API_KEY": LLM_KEY,
        "DRIFT_LLM_MODEL": "scripted-model",
        "DRIFT_LLM_MAX_RETRIES": "1",
        **({"DRIFT_LLM_BASE_URL": server.base_url} if server is not None else {}),
        **(env or {}),
    }
    done = subprocess.run(
        [DRIFT, "run", str(scenario), "--out", str(out), "--json", str(summary), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    payload = json.loads(summary.read_text()) if summary.exists() else {}
    return Run(done.returncode, done.stdout, done.stderr, out, payload)


def test_drift_run_with_the_llm_reader_and_judge(tmp_path: Path) -> None:
    import scripted_llm
    from llm_server import FakeOpenAIServer

    with FakeOpenAIServer(scripted_llm.respond, api_key=LLM_KEY) as server:
        run = drift_llm(
            tmp_path, server, "--backend", "fact_store", "--reader", "llm", "--judge", "llm"
        )
        sent = len(server.requests)
        again = drift_llm(
            tmp_path, server, "--backend", "fact_store", "--reader", "llm", "--judge", "llm"
        )
        resent = len(server.requests) - sent
    # Every revision verdict is unparsable: a judge failure, so exit 1 (its cached replies fail
    # the same way on the rerun), the arm listed with what was judged, never ranked.
    assert run.code == 1, run.stderr
    assert again.code == 1, again.stderr
    assert sent > 0 and resent == 0
    assert "judge errors (left out of the metrics)" in run.stdout
    assert "fact_store@hard (not ranked: judge failed on" in run.stdout
    assert "fact_store@hard on cli-llm-t/short: the reader or judge failed on" in run.stderr
    # The leaderboard names the LLM reader and judge, and says the package has no figure for them.
    assert "scored by: reader llm:scripted-model@" in run.stdout
    assert "not measured" in run.stdout and EXACT_PATH_LINE not in run.stdout
    manifest = run.manifest()
    assert manifest["reader"]["model"] == manifest["judge"]["model"] == "scripted-model"
    revision = run.query(
        "select count(*) as n, count(judge_error) as e from {probe_answers} "
        "where arm = 'fact_store@hard' and probe_type = 'revision'"
    )[0]
    assert revision["n"] == revision["e"] > 0
    cell = next(c for c in run.summary["cells"] if c["arm"] == "fact_store@hard")
    assert cell["judge_errors"] == revision["e"] and cell["ttft_measured"] == 1.0
    assert cell["judge_failures"]["arm"] == revision["e"]
    assert "revision_accuracy" in cell["not_measured"]
    # The key reached the server (it answers 401 otherwise) and nothing written holds it.
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("llm_cache" in p.parts for p in written)
    for path in written:
        assert LLM_KEY.encode() not in path.read_bytes(), path
    for text in (run.stdout, run.stderr, again.stdout, again.stderr):
        assert LLM_KEY not in text


@pytest.mark.parametrize(
    ("args", "unset", "message"),
    [
        (("--reader", "llm"), "DRIFT_LLM_BASE_URL", "DRIFT_LLM_BASE_URL is not set"),
        (("--reader", "llm", "--judge", "llm"), "DRIFT_LLM_MODEL", "DRIFT_LLM_MODEL is not set"),
        (("--judge", "llm"), None, "--judge llm needs --reader llm"),
    ],
)
def test_llm_switches_without_their_config_exit_2_in_one_line(
    tmp_path: Path, args: tuple[str, ...], unset: str | None, message: str
) -> None:
    # The environment drift_llm gives, in process (the installed command reads the same
    # variables in test_drift_run_with_the_llm_reader_and_judge).
    env = {
        "DRIFT_LLM_API_KEY": LLM_KEY,
        "DRIFT_LLM_MODEL": "scripted-model",
        "DRIFT_LLM_MAX_RETRIES": "1",
        "DRIFT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    }
    if unset is not None:
        env[unset] = ""
    run = drift_run_in_process(tmp_path, "--backend", "bm25", *args, env=env)
    assert run.code == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert not run.out.exists()


def test_judge_check_reports_rates_for_the_rule_and_the_llm_judge(tmp_path: Path) -> None:
    import scripted_llm
    from llm_server import FakeOpenAIServer

    env = {**os.environ, "DRIFT_LLM_API_KEY": LLM_KEY, "DRIFT_LLM_MODEL": "scripted-model"}
    rule = subprocess.run(
        [DRIFT, "judge-check", "--judge", "rule", "--json", str(tmp_path / "rule.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert rule.returncode == 0, rule.stderr
    report = json.loads((tmp_path / "rule.json").read_text())
    # The offline check reads the shipped labelled contexts with the careful reader.
    assert report["judge"].startswith("contexts: careful@") and report["judge_errors"] == 0
    assert report["items"] >= 150 and report["meets_targets"]
    assert report["accuracy"] >= 0.9 and report["false_accept_rate"] <= 0.05
    assert f"false-reject rate {100 * report['false_reject_rate']:5.1f}%" in rule.stdout
    assert "hypothetical" in {row["category"] for row in report["categories"]}
    with FakeOpenAIServer(scripted_llm.respond, api_key=LLM_KEY) as server:
        llm = subprocess.run(
            [
                DRIFT,
                "judge-check",
                "--out",
                str(tmp_path / "data"),
                "--json",
                str(tmp_path / "l.json"),
            ],
            capture_output=True,
            text=True,
            env={**env, "DRIFT_LLM_BASE_URL": server.base_url},
            timeout=120,
        )
    assert llm.returncode == 0, llm.stderr
    judged = json.loads((tmp_path / "l.json").read_text())
    revisions = sum(1 for o in judged["outcomes"] if o["error"])
    assert (
        judged["judge"].startswith("llm:scripted-model@")
        and judged["judge_errors"] == revisions > 0
    )
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert LLM_KEY.encode() not in path.read_bytes(), path


# --- imported sources -----------------------------------------------------------------------

EXAMPLE_DATA = Path(__file__).parent / "fixtures" / "sources" / "example.jsonl"
EXAMPLE_IMPORTER = "sources.example_importer:open_example"


@pytest.fixture
def example_source() -> Iterator[str]:
    """The example importer registered in this process, by registration alone."""
    register_source("example", EXAMPLE_IMPORTER)
    try:
        yield f"example:{EXAMPLE_DATA}"
    finally:
        unregister_source("example")


def test_an_imported_source_runs_end_to_end(example_source: str, tmp_path: Path) -> None:
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    result = CliRunner().invoke(
        main,
        [
            "run",
            example_source,
            "--backend",
            "fact_store",
            "--backend",
            "amnesiac",
            "--out",
            str(out),
            "--json",
            str(summary),
        ],
    )
    assert result.exit_code == 0, result.output
    board = result.stdout.splitlines()
    assert board[0].startswith("arm") and "DRIFT-C" in board[0]
    assert {line.split()[0] for line in board[2:4]} == {"fact_store@hard", "amnesiac@hard"}
    assert "1 worlds generated, 0 faults" in result.stdout
    world = WorldKey("example-chat-001", "short")
    for table in WORLD_TABLES:
        assert (out / partition_file(table, world)).is_file()
    for arm in ("fact_store@hard", "amnesiac@hard", "reference_compressor@hard"):
        for table in CELL_TABLES:
            assert (out / partition_file(table, CellKey(world, arm))).is_file()
    payload = json.loads(summary.read_text())
    assert payload["scenario"] == "example-chat-001"
    assert {row["arm"] for row in payload["arms"]} == {"fact_store@hard", "amnesiac@hard"}
    assert payload["arms"][0]["arm"] == "fact_store@hard"  # ranked first: it remembered
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    assert manifest["scenarios"] == [
        {
            "id": "example-chat-001",
            "version": "1",
            "sha256": hashlib.sha256(EXAMPLE_DATA.read_bytes()).hexdigest(),
            "source": "example",
            "replicates": 1,
        }
    ]
    # The memory loop really read the imported sessions: fact_store answers from them.
    correct = {
        row["arm"]: row["n"]
        for row in _support.query(
            out,
            "select arm, count(*) filter (where correct) as n from {probe_answers} group by arm",
        )
    }
    assert correct["amnesiac@hard"] == 0 < correct["fact_store@hard"] == 4
    again = CliRunner().invoke(
        main, ["run", example_source, "--backend", "amnesiac", "--out", str(out)]
    )
    assert again.exit_code == 0 and "0 worlds generated" in again.stdout


def test_generate_writes_an_imported_source(example_source: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", example_source, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    world = WorldKey("example-chat-001", "short")
    assert all((tmp_path / partition_file(t, world)).is_file() for t in WORLD_TABLES)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "lcm:x.json"], "unknown prefix 'lcm' (known: braincore, example, locomo,"),
        (["generate", "example:missing.jsonl"], "no such file or folder missing.jsonl"),
        (["run", "example:DATA?when=later"], "importer 'example' does not take these options"),
    ],
)
def test_bad_sources_exit_2_with_one_line(
    example_source: str, tmp_path: Path, args: list[str], message: str
) -> None:
    args = [a.replace("DATA", str(EXAMPLE_DATA)) for a in args]
    result = CliRunner(env={"DAGSTER_HOME": str(tmp_path)}).invoke(
        main, [*args, "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert not (tmp_path / "out").exists()


def test_judge_check_reads_the_sets_written_by_others(tmp_path: Path) -> None:
    run = subprocess.run(
        [DRIFT, "judge-check", "--judge", "rule", "--others", "--json", str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "o.json").read_text())
    assert report["items"] >= 1300 and report["judge_errors"] == 0
    assert "accuracy" in run.stdout and "targets:" in run.stdout
