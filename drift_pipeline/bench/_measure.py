"""One function per bench figure; each documents exactly what it times.

In-process measurements call the same library functions ``drift run`` calls; the whole-command
figures (peak memory, Dagster overhead, suite wall time) run ``drift`` in a child process so
that nothing this process already loaded or allocated is counted.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from drift_pipeline.keys import WorldKey
from drift_pipeline.memory import Arm, Gate, LoopConfig, run_cell
from drift_pipeline.pipeline import amnesiac_answers, backend_options_for, evaluate_cell
from drift_pipeline.scenario import LoadedScenario, load_scenario
from drift_pipeline.sources import ScenarioSource
from drift_pipeline.storage import TRANSCRIPTS, StorageRoot
from drift_pipeline.tokens import count_tokens_batch
from drift_pipeline.world import generate_worlds

from ._process import Measured, run_measured
from ._targets import BUILT_INS
from ._worlds import LONG, BenchWorkspace

HEAVIEST_BACKEND = "full_context"
"""The built-in with the largest contexts: the long-horizon cell whose peak memory is reported."""

SCALING_BACKEND = "bm25"
LONG_SESSIONS = 5000
GENERATION_RUNS = 3


def _drift(*args: str) -> list[str]:
    return [sys.executable, "-m", "drift_pipeline.cli", *args]


def nearest_rank(values: list[float], percent: float) -> float:
    """Nearest-rank percentile (the one ``cell_metrics`` reports): always an observed value."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100.0 * len(ordered)) - 1)]


def _loop_config(root: Path) -> LoopConfig:
    # As `drift run`: isolation on, the data root covered, 4 concurrent replicates.
    return LoopConfig(protect=tuple(StorageRoot.from_url(root).protect_paths()))


def _cell_seconds(loaded: LoadedScenario, root: Path, backend: str) -> tuple[float, float]:
    """Seconds of one cell (memory loop + judging + metrics) and its read p99 in ms."""
    spec = loaded.spec
    arm = Arm(backend, Gate("hard"))
    started = time.perf_counter()
    run = run_cell(
        root,
        spec.id,
        LONG,
        spec.replicates,
        arm,
        backend_options_for(arm, ScenarioSource(loaded), {}),
        _loop_config(root),
    )
    probes, amnesiac = amnesiac_answers(root, WorldKey(spec.id, LONG))
    evaluate_cell(ScenarioSource(loaded), LONG, run, probes, amnesiac, None)
    seconds = time.perf_counter() - started
    read_ms = run.retrievals.column("read_ms").to_pylist()
    return seconds, nearest_rank(read_ms, 99.0)


def generate_sessions_per_s(ws: BenchWorkspace) -> float:
    """Canonical long horizon, every replicate, Parquet written; median of three runs.

    A short-horizon generation first warms the process's caches (compiled patterns, pools),
    as any second world of a ``drift run`` would find them. The last long world is kept for the
    measurements that need it.
    """
    loaded = load_scenario(ws.canonical)
    generate_worlds([loaded], ws.path("world-warmup"), ("short",))
    shutil.rmtree(ws.path("world-warmup"), ignore_errors=True)
    rates: list[float] = []
    for attempt in range(GENERATION_RUNS):
        root = ws.path(f"world-gen{attempt}")
        started = time.perf_counter()
        summaries = generate_worlds([loaded], root, (LONG,))
        seconds = time.perf_counter() - started
        rates.append(sum(s.sessions for s in summaries) / seconds)
        if attempt + 1 < GENERATION_RUNS:
            shutil.rmtree(root, ignore_errors=True)
        else:
            ws.adopt_long_world(loaded, root)
    return statistics.median(rates)


def amnesiac_cell(ws: BenchWorkspace) -> tuple[float, float]:
    """``floor_ratio`` and ``loop_overhead_us_per_session`` from one amnesiac long cell.

    Harness time: the memory loop over every replicate (isolated workers, 4 concurrent), the
    probes' retrievals, the judge and the metrics with their bootstrap intervals. The floor:
    reading the same world's transcripts once from Parquet and counting their tokens with
    :mod:`drift_pipeline.tokens` (best of three: it is the physical minimum).

    Loop overhead per session: the mean over sessions of the store call's round trip minus the
    time inside the backend's ``store()`` and inside the ``retrieve()`` of the agent's read
    before it, in µs, i.e. (wall time of the store phase − time inside the backend) ÷ sessions
    (:attr:`~drift_pipeline.memory.LoopTiming.overhead_us_per_session`). The mean, not the
    median: it includes the rare expensive sessions (checkpoints, with their snapshot recount)
    and is what adds up into a run's wall time. The amnesiac's ``store()`` and ``retrieve()``
    cost next to nothing, so this is the harness's own cost.
    """
    loaded, root = ws.long_world()
    spec = loaded.spec
    floor = transcripts_floor(root, [WorldKey(spec.id, LONG)]).wall_s
    arm = Arm("amnesiac", Gate("hard"))
    started = time.perf_counter()
    run = run_cell(root, spec.id, LONG, spec.replicates, arm, {}, _loop_config(root))
    probes, amnesiac = amnesiac_answers(root, WorldKey(spec.id, LONG))
    evaluate_cell(ScenarioSource(loaded), LONG, run, probes, amnesiac, None)
    harness = time.perf_counter() - started
    assert run.timing is not None  # run_cell always measures itself
    return harness / floor, run.timing.overhead_us_per_session


def read_p99_and_scaling(
    ws: BenchWorkspace,
    backends: tuple[str, ...] = BUILT_INS,
    sessions: int = LONG_SESSIONS,
) -> tuple[dict[str, float], float | None]:
    """Read p99 per backend on a 5000-session horizon, and the bm25 cell's scaling ratio.

    Every backend runs one cell (4 replicates concurrently, isolated) of the canonical
    scenario with its long horizon stretched to 5000 sessions; its read p99 is the nearest-rank
    99th percentile of every retrieval's time inside ``retrieve()``, pooled over replicates.
    The scaling ratio divides the bm25 cell's wall time there (loop + judging + metrics) by
    the same cell on the canonical 1000-session horizon.
    """
    loaded, root = ws.long_world(sessions)
    p99: dict[str, float] = {}
    long_seconds: float | None = None
    for backend in backends:
        ws.log(f"read p99: {backend} on {sessions} sessions")
        seconds, p99[backend] = _cell_seconds(loaded, root, backend)
        if backend == SCALING_BACKEND:
            long_seconds = seconds
    if long_seconds is None:
        return p99, None
    canonical, canonical_root = ws.long_world()
    ws.log(f"scaling: {SCALING_BACKEND} on the canonical 1000 sessions")
    short_seconds, _ = _cell_seconds(canonical, canonical_root, SCALING_BACKEND)
    return p99, long_seconds / short_seconds


def peak_rss_mb(ws: BenchWorkspace) -> float:
    """Peak resident memory of ``drift run`` on the canonical long horizon, heaviest built-in.

    The command (``--backend full_context``, which also runs the reference compressor, as
    every run does) runs in a fresh child process on an already generated world; the figure is
    the largest single process among the harness, its backend workers and the process that
    records the run in the Dagster instance (the checkout's ``.dagster_home``, as a user's run
    from the project root records; every process the command waited for is counted).
    """
    _, root = ws.long_world()
    out = ws.path("rss-run")
    shutil.copytree(root, out)
    measured = run_measured(
        _drift(
            "run",
            str(ws.canonical),
            "--horizon",
            LONG,
            "--backend",
            HEAVIEST_BACKEND,
            "--out",
            str(out),
        ),
        log=ws.path("rss-run.log"),
    )
    shutil.rmtree(out, ignore_errors=True)
    return measured.peak_rss_mb


PROJECT_DAGSTER_YAML = Path(__file__).resolve().parents[2] / "dagster.yaml"
"""The instance configuration users run Dagster with (``.dagster_home/dagster.yaml`` links to it):
Dagster's own SQLite storages under ``DAGSTER_HOME``."""

DAGSTER_PAIRS = 3
"""Direct and Dagster runs measured alternately, this many of each; the median ratio is kept."""


def dagster_overhead_ratio(ws: BenchWorkspace, pairs: int = DAGSTER_PAIRS) -> float:
    """``drift run`` of the canonical medium horizon, six built-ins: via Dagster ÷ direct.

    Each pair is a direct run then a Dagster run, both in fresh child processes into empty
    folders (both generate the world); the median of the pairs' wall-time ratios is returned,
    since one pair on a shared two-core machine can be off by a tenth. Each run, direct or via
    Dagster, gets a fresh instance configured by the project's ``dagster.yaml``, the
    configuration users run: a temporary ``DAGSTER_HOME`` holding a copy of it, where Dagster's
    stock SQLite storages keep their files. So the direct run records into Dagster as it does
    from a checkout (into an instance of its own: never the user's, never one an earlier pair
    filled), and the ratio is what running through Dagster adds to that. Each pair's wall and
    CPU times are logged; the CPU ratio barely moves with the machine's load.

    Raises:
        FileNotFoundError: The project's ``dagster.yaml`` is not beside the package (the bench
            runs from a checkout).
    """
    if not PROJECT_DAGSTER_YAML.is_file():
        raise FileNotFoundError(
            f"{PROJECT_DAGSTER_YAML}: the project's dagster.yaml is missing; run the bench "
            "from a checkout of the repository"
        )
    common = [str(ws.canonical.resolve()), "--horizon", "medium"]
    ratios: list[float] = []
    for pair in range(pairs):
        direct_out, via_out = ws.path(f"direct-{pair}"), ws.path(f"via-dagster-{pair}")
        direct = run_measured(
            _drift("run", *common, "--out", str(direct_out.resolve())),
            env=_fresh_instance(ws.path(f"direct-home-{pair}")),
            log=ws.path(f"direct-{pair}.log"),
        )
        via = run_measured(
            _drift("run", *common, "--via", "dagster", "--out", str(via_out.resolve())),
            env=_fresh_instance(ws.path(f"dagster-home-{pair}")),
            log=ws.path(f"via-dagster-{pair}.log"),
        )
        ratios.append(via.wall_s / direct.wall_s)
        ws.log(
            f"dagster_overhead_ratio pair {pair + 1}: direct {direct.wall_s:.1f} s "
            f"({direct.cpu_s:.1f} s CPU), via Dagster {via.wall_s:.1f} s ({via.cpu_s:.1f} s CPU): "
            f"wall {ratios[-1]:.2f}, CPU {via.cpu_s / direct.cpu_s:.2f}"
        )
        shutil.rmtree(direct_out, ignore_errors=True)
        shutil.rmtree(via_out, ignore_errors=True)
    return statistics.median(ratios)


def _fresh_instance(home: Path) -> dict[str, str]:
    """The environment of this process with ``DAGSTER_HOME`` at a new instance in ``home``.

    The instance holds a copy of the project's ``dagster.yaml`` and nothing else yet.
    """
    home = home.resolve()
    home.mkdir()
    shutil.copy(PROJECT_DAGSTER_YAML, home / "dagster.yaml")
    return {**os.environ, "DAGSTER_HOME": str(home)}


SUITE_JOBS = 2
"""Worlds at once in the README's main command (``scripts/run.sh`` passes ``--jobs 2``)."""


FLOOR_RUNS = 3
"""Floors are the best of this many readings: the floor is the physical minimum."""


@dataclass(frozen=True)
class Floor:
    """The best wall time and the best processor time of reading the transcripts once."""

    wall_s: float
    cpu_s: float


def transcripts_floor(root: Path, worlds: list[WorldKey]) -> Floor:
    """Reading every transcript of ``worlds`` once from Parquet and counting its tokens.

    The same floor as ``floor_ratio``'s, over many worlds: each world's ``transcripts`` table
    read through the storage layer, every turn's tokens counted with :mod:`drift_pipeline.tokens`;
    the best wall time and the best processor time of :data:`FLOOR_RUNS` readings.
    """
    storage = StorageRoot.from_url(root)
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(FLOOR_RUNS):
        started, started_cpu = time.perf_counter(), time.process_time()
        for world in worlds:
            transcripts = storage.read_table(TRANSCRIPTS, world)
            sum(count_tokens_batch(transcripts.column("content").to_pylist()))
            del transcripts
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    return Floor(min(walls), min(cpus))


@dataclass(frozen=True)
class SuiteTimes:
    """The main command's measurement and its floor's, from one bench run."""

    command: Measured
    floor: Floor


def suite_wall_and_floor(ws: BenchWorkspace) -> SuiteTimes:
    """The README's main command and its floor, measured in the same bench run.

    The command, ``drift run scenarios/ --out DIR --json FILE --jobs 2``, runs in a child
    process into an empty folder, so world generation is included; the environment set-up that
    ``scripts/run.sh`` does first (``uv sync``) is not. Then, with nothing else of the bench
    running, the floor: every transcript of the worlds it wrote (those its summary names) read
    once and its tokens counted (:func:`transcripts_floor`). Their ratio is what the target
    is set on: a loaded machine slows both. Beside them, processor times: the command's
    (every process it waited for, backend workers included) and the floor's, which hardly move
    with the load other processes put on the machine.

    Returns:
        The command's wall and processor time and the floor's.
    """
    out = ws.path("suite")
    measured = run_measured(
        _drift(
            "run",
            str(ws.suite),
            "--out",
            str(out),
            "--json",
            str(out / "summary.json"),
            "--jobs",
            str(SUITE_JOBS),
        ),
        log=ws.path("suite.log"),
    )
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    worlds = list(dict.fromkeys(WorldKey.of(c["scenario"], c["horizon"]) for c in summary["cells"]))
    return SuiteTimes(measured, transcripts_floor(out, worlds))
