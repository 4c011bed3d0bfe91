"""An ``s3://bucket/prefix`` storage root against a real S3 HTTP endpoint on loopback.

The endpoint is moto's server (``ThreadedMotoServer``) in this process; the code under test
reaches it over HTTP through s3fs exactly as it would reach AWS or MinIO, configured only by
environment variables (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` and
``DRIFT_S3_ENDPOINT_URL``). ``drift`` subprocesses get the same environment. Everything read
back goes through DuckDB hive globs or s3fs, never through what the writer held in memory.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import drift_pipeline.world._write as world_write
from drift_pipeline.cli import main
from drift_pipeline.memory import LoopConfig
from drift_pipeline.pipeline import RunOptions, connect, run_benchmark, world_is_current
from drift_pipeline.scenario import HorizonName, LoadedScenario, load_scenario
from drift_pipeline.sources import ScenarioSource
from drift_pipeline.storage import (
    LATENT_PROFILES,
    PROBES,
    S3_ENDPOINT_ENV,
    WORLD_TABLES,
    StorageRoot,
    staged,
)
from drift_pipeline.world import generate_worlds
from drift_pipeline.world._generate import generate_replicate

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

DRIFT = str(Path(sys.executable).with_name("drift"))
SCENARIO_ID = "s3-tiny-t"
SESSIONS = {"short": 14, "medium": 20}
REPLICATES = 2
SCENARIO = f"""\
id: {SCENARIO_ID}
paradigm: user_assistant
seed: 8086
replicates: {REPLICATES}
horizon:
  short: {{ sessions: {SESSIONS["short"]}, session_gap_hours: 8 }}
  medium: {{ sessions: {SESSIONS["medium"]}, session_gap_hours: 20 }}
noise_ratio: 0.35
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.5, C: 0.6, E: 0.4, A: 0.6, N: 0.4 }}
      event_distribution:
        job_change: 0.25
        relocation: 0.20
        habit_form: 0.20
        preference_reveal: 0.20
  - id: assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
checkpoints:
  - {{ after_session: 7, probe_types: [recall, action, revision] }}
  - {{ after_session: 14, probe_types: [recall, revision] }}
"""
# Measured latencies, and the two scores built on them, differ between any two runs.
MEASURED = ("_ms_p50", "_ms_p95", "_ms_p99")
FROM_LATENCY = ("lps", "drift_e")


@dataclass
class S3:
    """The running endpoint: its URL, the environment that reaches it, a client of our own."""

    endpoint: str
    env: dict[str, str]
    fs: Any

    def bucket(self) -> str:
        """A new empty bucket (names need 3+ characters)."""
        name = f"drift-{uuid.uuid4().hex[:12]}"
        self.fs.mkdir(name)
        return name

    def objects(self, url: str) -> dict[str, bytes]:
        """Every object under ``url`` (relative key → bytes)."""
        base = url.removeprefix("s3://").rstrip("/")
        return {
            str(key)[len(base) + 1 :]: bytes(self.fs.cat_file(key)) for key in self.fs.find(base)
        }


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """A real S3 HTTP endpoint on 127.0.0.1 for this module, with credentials in the env."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one log line per request else
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        nowhere = str(tmp_path_factory.mktemp("aws") / "none")
        env = {
            "AWS_ACCESS_KEY_ID": "drift-test-key",
            "AWS_SECRET_ACCESS_KEY": "drift-test-secret",
            # No profile or config file of the machine may change where requests go.
            "AWS_CONFIG_FILE": nowhere,
            "AWS_SHARED_CREDENTIALS_FILE": nowhere,
            S3_ENDPOINT_ENV: endpoint,
        }
        with pytest.MonkeyPatch.context() as patch:
            for name in (
                "AWS_PROFILE",
                "AWS_SESSION_TOKEN",
                "AWS_ENDPOINT_URL",
                "AWS_ENDPOINT_URL_S3",
            ):
                patch.delenv(name, raising=False)
            for name, value in env.items():
                patch.setenv(name, value)
            fs = s3fs.S3FileSystem(
                endpoint_url=endpoint,
                key=env["AWS_ACCESS_KEY_ID"],
                secret=env["AWS_SECRET_ACCESS_KEY"],
                use_listings_cache=False,
                skip_instance_cache=True,
            )
            yield S3(endpoint, env, fs)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenarios") / f"{SCENARIO_ID}.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def loaded(scenario: Path) -> LoadedScenario:
    return load_scenario(scenario)


@pytest.fixture(scope="module")
def generated(
    s3: S3, scenario: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, str]:
    """The same worlds generated by ``drift generate`` to S3 and to a local folder."""
    url = f"s3://{s3.bucket()}/runs/gen"
    local = tmp_path_factory.mktemp("local") / "data"
    outputs = []
    for out in (url, str(local)):
        result = CliRunner().invoke(main, ["generate", str(scenario), "--out", out])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return url, local, outputs[0]


def _local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _stage_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("drift-stage-*")}


@pytest.fixture(autouse=True)
def _private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Staging folders of this test only: other processes staging in /tmp must not count."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))


# --- the root itself ----------------------------------------------------------------------


def test_from_url_tells_local_folders_from_s3_prefixes(tmp_path: Path) -> None:
    local = StorageRoot.from_url(tmp_path)
    assert local.is_local and local.local_path == tmp_path and str(local) == str(tmp_path)
    assert StorageRoot.from_url(str(tmp_path)) == local == StorageRoot.from_url(local)
    assert StorageRoot.from_url(f"file://{tmp_path}") == local
    assert local.protect_paths() == (tmp_path.resolve(),)
    assert local.partition_path(PROBES, {"scenario": "a", "horizon": "short"}) == (
        tmp_path / "probes" / "scenario=a" / "horizon=short" / "part-0.parquet"
    )

    remote = StorageRoot.from_url("s3://my-bucket/some/prefix/")
    assert not remote.is_local and remote.local_path is None
    assert str(remote) == remote.url == "s3://my-bucket/some/prefix"
    assert remote.protect_paths() == ()
    assert remote.partition_path(PROBES, {"scenario": "a", "horizon": "short"}) == (
        "s3://my-bucket/some/prefix/probes/scenario=a/horizon=short/part-0.parquet"
    )
    assert remote.glob(LATENT_PROFILES) == "s3://my-bucket/some/prefix/latent_profiles/**/*.parquet"
    assert StorageRoot.from_url("s3://my-bucket").url == "s3://my-bucket"


@pytest.mark.parametrize("bad", ["gs://bucket/x", "s3://ab/x", "s3://", "s3://bucket/../x"])
def test_unsupported_or_malformed_urls_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="storage root"):
        StorageRoot.from_url(bad)


def test_a_bad_out_url_exits_2_naming_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["query", "select 1", "--out", "gs://bucket/x"])
    assert result.exit_code == 2
    assert "gs://bucket/x" in result.output and "unsupported scheme" in result.output


def test_text_files_and_existence_round_trip(s3: S3) -> None:
    root = StorageRoot.from_url(f"s3://{s3.bucket()}/p")
    assert not root.exists("_manifests/x.json")
    with pytest.raises(FileNotFoundError):
        root.read_text("_manifests/x.json")
    assert root.write_text("_manifests/x.json", '{"a": 1}\n') == (f"{root.url}/_manifests/x.json")
    assert root.exists("_manifests/x.json")
    assert root.read_text("_manifests/x.json") == '{"a": 1}\n'
    with pytest.raises(ValueError, match="relative"):
        root.exists("../escape")


# --- generation ---------------------------------------------------------------------------


def test_generate_writes_every_table_readable_by_duckdb_hive_globs(
    s3: S3, generated: tuple[str, Path, str]
) -> None:
    url, local, output = generated
    assert f"→ {url}" in output
    con = duckdb.connect()
    con.register_filesystem(s3.fs)
    for table in WORLD_TABLES:
        remote = con.sql(
            f"select * from read_parquet('{url}/{table.name}/**/*.parquet', "
            "hive_partitioning=true) order by all"
        ).fetchall()
        here = con.sql(
            f"select * from read_parquet('{local}/{table.name}/**/*.parquet', "
            "hive_partitioning=true) order by all"
        ).fetchall()
        assert remote == here and remote, table.name
        per_world = con.sql(
            f"select horizon, count(distinct replicate) from read_parquet("
            f"'{url}/{table.name}/**/*.parquet', hive_partitioning=true) group by 1 order by 1"
        ).fetchall()
        assert per_world == [("medium", REPLICATES), ("short", REPLICATES)], table.name
    sessions = con.sql(
        f"select horizon, count(*) from read_parquet('{url}/event_schedules/**/*.parquet', "
        "hive_partitioning=true) group by 1 order by 1"
    ).fetchall()
    assert sessions == [(h, n * REPLICATES) for h, n in sorted(SESSIONS.items())]


def test_objects_are_byte_identical_to_a_local_generation(
    s3: S3, generated: tuple[str, Path, str]
) -> None:
    url, local, _ = generated
    objects = s3.objects(url)
    files = _local_files(local)
    assert sorted(objects) == sorted(files)
    assert len([k for k in files if k.endswith(".parquet")]) == len(WORLD_TABLES) * 2
    assert f"_manifests/worlds/scenario={SCENARIO_ID}/horizon=short.json" in files
    for key, data in files.items():
        assert objects[key] == data, key


def test_reads_through_the_root_equal_local_reads(
    generated: tuple[str, Path, str], loaded: LoadedScenario
) -> None:
    url, local, _ = generated
    remote, here = StorageRoot.from_url(url), StorageRoot.from_url(local)
    keys = {"scenario": SCENARIO_ID, "horizon": "short"}
    for table in WORLD_TABLES:
        assert remote.partition_exists(table, keys) and remote.has_table(table)
        assert remote.read_table(table, keys).equals(here.read_table(table, keys), True)
        assert remote.read_table(table, keys).equals(
            pq.read_table(here.partition_path(table, keys))
        )
    some = ["replicate", "probe_id"]
    for root in (remote, here):
        assert root.read_table(PROBES, keys, some).equals(
            here.read_table(PROBES, keys).select(some)
        )
    assert not remote.partition_exists(PROBES, {**keys, "horizon": "long"})
    source = ScenarioSource(loaded)
    assert world_is_current(url, source, "short") and world_is_current(url, source, "medium")
    assert not world_is_current(url, source, "long")
    con = connect(url)
    assert (
        con.sql("select count(*) from probes").fetchall()
        == connect(local).sql("select count(*) from probes").fetchall()
    )


def test_a_failed_generation_leaves_no_objects(
    s3: S3, loaded: LoadedScenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = s3.bucket()

    def fail_on_medium(spec: Any, horizon: HorizonName, replicate: int, synthesizer: Any) -> Any:
        if horizon == "medium":  # the short world is already staged by now
            raise RuntimeError("generator broke")
        return generate_replicate(spec, horizon, replicate, synthesizer)

    monkeypatch.setattr(world_write, "generate_replicate", fail_on_medium)
    stages = _stage_folders()
    with pytest.raises(RuntimeError, match="generator broke"):
        generate_worlds([loaded], f"s3://{bucket}/prefix")
    assert s3.fs.find(bucket) == []
    assert _stage_folders() == stages  # the local staging folder is gone too


def test_a_commit_failing_part_way_removes_the_objects_it_created(
    s3: S3, loaded: LoadedScenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"s3://{s3.bucket()}/prefix"
    real = StorageRoot.put_file
    calls: list[str] = []

    def flaky(self: StorageRoot, source: Path, relative: str) -> None:
        calls.append(relative)
        if len(calls) == 4:
            raise ConnectionError("network dropped")
        real(self, source, relative)

    monkeypatch.setattr(StorageRoot, "put_file", flaky)
    stages = _stage_folders()
    with pytest.raises(ConnectionError):
        generate_worlds([loaded], url, ["short"])
    assert len(calls) == 4
    assert s3.objects(url) == {}
    assert _stage_folders() == stages


def test_a_staged_write_uploads_nothing_before_commit(s3: S3, loaded: LoadedScenario) -> None:
    url = f"s3://{s3.bucket()}/prefix"
    keys = {"scenario": SCENARIO_ID, "horizon": "short"}
    source = StorageRoot.from_url(url)
    generate_worlds([loaded], url, ["short"])
    probes = source.read_table(PROBES, keys)
    before = s3.objects(url)
    with staged(url) as writer:
        final = writer.put(PROBES, keys, probes.slice(0, 3))
        assert final == source.partition_path(PROBES, keys)
        assert s3.objects(url) == before  # the old object is untouched until commit
    assert source.read_table(PROBES, keys).num_rows == 3
    assert sorted(s3.objects(url)) == sorted(before)


# --- runs ---------------------------------------------------------------------------------


def test_an_s3_root_puts_no_local_path_under_protection(
    s3: S3, loaded: LoadedScenario, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import drift_pipeline.pipeline._run as run_module

    seen: list[LoopConfig] = []

    class Stop(Exception):
        pass

    def capture(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[6])
        raise Stop

    monkeypatch.setattr(run_module, "run_cell", capture)
    extra = tmp_path / "secret"
    for out, expected in (
        (f"s3://{s3.bucket()}/p", (extra,)),
        (str(tmp_path / "data"), (extra, (tmp_path / "data").resolve())),
    ):
        options = RunOptions(
            arms=[], horizons=["short"], out=out, loop=LoopConfig(protect=(extra,))
        )
        with pytest.raises(Stop):
            run_benchmark([ScenarioSource(loaded)], options)
        assert sorted(seen.pop().protect) == sorted(expected)


@pytest.fixture(scope="module")
def runs(s3: S3, scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``drift run`` subprocesses on the same scenario, one to S3 and one to a local folder."""
    folder = tmp_path_factory.mktemp("runs")
    url = f"s3://{s3.bucket()}/bench/v1"
    done = {}
    for name, out in (("s3", url), ("local", str(folder / "data"))):
        result = subprocess.run(
            [DRIFT, "run", str(scenario), "--horizon", "short", "--backend", "bm25", "--out", out],
            capture_output=True,
            text=True,
            env={**os.environ, **s3.env},
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        done[name] = result
    return {"url": url, "local": folder / "data", "done": done}


CELL_METRICS_SQL = (
    "select arm, backend, gate, checkpoint, metric, value, ci_low, ci_high, n from cell_metrics "
    f"where metric not in {FROM_LATENCY} "
    + "".join(f"and metric not like '%{suffix}' " for suffix in MEASURED)
    + "order by arm, checkpoint, metric"
)


def test_drift_run_to_s3_gives_the_cell_metrics_of_a_local_run(runs: dict[str, Any]) -> None:
    assert runs["url"] in runs["done"]["s3"].stdout
    remote = connect(runs["url"]).sql(CELL_METRICS_SQL).fetchall()
    here = connect(runs["local"]).sql(CELL_METRICS_SQL).fetchall()
    assert {row[0] for row in remote} == {"bm25@hard", "reference_compressor@hard"}
    assert len(remote) > 20
    assert remote == here
    for table in ("probe_answers", "cost_curves"):
        sql = f"select * from {table} order by all"
        assert (
            connect(runs["url"]).sql(sql).fetchall() == connect(runs["local"]).sql(sql).fetchall()
        )
    remote_root = StorageRoot.from_url(runs["url"])
    assert json.loads(remote_root.read_text("_manifests/run.json")) == json.loads(
        (runs["local"] / "_manifests" / "run.json").read_text()
    )


def test_query_and_compare_read_a_finished_s3_run(
    runs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    url = runs["url"]
    result = runner.invoke(
        main,
        [
            "query",
            "select arm, count(*) as n from probe_answers group by arm order by arm",
            "--out",
            url,
            "--format",
            "csv",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "arm,n" and [line.split(",")[0] for line in lines[1:]] == [
        "bm25@hard",
        "reference_compressor@hard",
    ]

    def no_rerun(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the stored cells should have been reused")

    monkeypatch.setattr("drift_pipeline.pipeline.run_benchmark", no_rerun)
    scenario_file = Path(runs["done"]["s3"].args[2])
    result = runner.invoke(
        main,
        [
            "compare",
            str(scenario_file),
            "--backend-a",
            "bm25",
            "--backend-b",
            "reference_compressor",
            "--horizon",
            "short",
            "--out",
            url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "bm25@hard − reference_compressor@hard" in result.output
    assert "drift_c" in result.output


@pytest.mark.slow
def test_dagster_materializes_to_s3_with_the_figures_of_a_local_run(
    runs: dict[str, Any], s3: S3, scenario: Path, tmp_path: Path
) -> None:
    """``drift run --via dagster --out s3://…``: the assets write through the same StorageRoot."""
    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "dagster.yaml").write_text((repo / "dagster.yaml").read_text())
    url = f"s3://{s3.bucket()}/dagster/v1"
    result = subprocess.run(
        [
            DRIFT,
            "run",
            str(scenario),
            "--horizon",
            "short",
            "--backend",
            "bm25",
            "--out",
            url,
            "--via",
            "dagster",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **s3.env, "DAGSTER_HOME": str(tmp_path)},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    remote = connect(url).sql(CELL_METRICS_SQL).fetchall()
    assert remote == connect(runs["local"]).sql(CELL_METRICS_SQL).fetchall()
    assert StorageRoot.from_url(url).exists("_manifests/run.json")
