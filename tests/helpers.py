"""Shared helpers and fixtures for the world-generation tests (world, storage, entities, CLI).

Scenarios here are not in the repository: they are written in the spec's own format (spec §3.1)
with other values, so the tests exercise the generator on inputs it was not tuned on. Generated
tables are always read back from real Parquet files through DuckDB, never from memory.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest

from drift_pipeline.entities import get_entity_type
from drift_pipeline.pipeline import CHECK_ENV
from drift_pipeline.scenario import HorizonName, LoadedScenario, load_scenario
from drift_pipeline.storage import WORLD_TABLES
from drift_pipeline.world import WorldSummary, generate_worlds

# --- scenarios in the spec's format, with values of their own -----------------------------

# Written exactly like spec §3.1 (blank lines holding a space, trailing comments).
COMMUTER = """\
id: test-commuter-a
 
paradigm: user_assistant # user_assistant | coding_agent | crawler_agent | multi_peer
 
seed: 4242
 
replicates: 3
 
horizon:
  short: { sessions: 40, session_gap_hours: 6 }
 
  medium: { sessions: 160, session_gap_days: 2 }
 
noise_ratio: 0.55 # fraction of sessions with no signal events
 
entities:
  - id: principal
 
    type: human
 
    profile:
      big_five: { O: 0.3, C: 0.8, E: 0.2, A: 0.6, N: 0.7 }
 
      event_distribution:
        job_change: 0.20
 
        relocation: 0.10
 
        habit_form: 0.15
 
        preference_reveal: 0.10
 
        constraint_reveal: 0.08
 
  - id: assistant
 
    type: assistant_agent
 
    capability_profile:
      context_window: 64000
 
      tool_access: [calendar, email]
 
topology:
  - { session_range: [0, -1], active: [principal, assistant], pattern: linear }
 
checkpoints:
  - { after_session: 20, probe_types: [recall, action] }
 
  - { after_session: 40, probe_types: [recall, action, revision] }
 
  - { every: 80, probe_types: [recall, revision] }
"""  # noqa: W293 (the spec's blank lines hold a space)

TWO_DESKS = """\
id: test-two-desks-b
version: 2
description: Sparse signal, two assistants, one of them only mid-trajectory.
paradigm: user_assistant
seed: 97
replicates: 2

horizon:
  medium: { sessions: 300, session_gap_hours: 30 }

noise_ratio: 0.80
signal_ratio: 0.08
soft_ratio: 0.12
soft_signal_mentions: 2

entities:
  - id: principal
    type: human
    name: Ottilie Brandvold
    profile:
      big_five: { O: 0.6, C: 0.9, E: 0.85, A: 0.4, N: 0.2 }
      communication_style: { verbosity: verbose, formality: formal, references_prior_context: 0.5 }
      core_values: [precision]
      event_distribution:
        opinion_shift: 0.20
        health_event: 0.10
        relationship_change: 0.05
        preference_reveal: 0.20

  - id: desk
    type: assistant_agent
    capability_profile: { context_window: 128000, tool_access: [search] }
    event_distribution:
      instruction_revision: 0.10
      explicit_correction: 0.05

  - id: travel
    type: assistant_agent
    name: Travel Desk
    event_distribution:
      task_completion: 0.20
      preference_revelation: 0.10

topology:
  - { session_range: [0, -1], active: [principal, desk], pattern: linear }
  - { session_range: [100, 199], active: [principal, desk, travel], pattern: linear }

checkpoints:
  - { after_session: 50, probe_types: [recall] }
  - { every: 100, probe_types: [recall, action, revision] }
"""

HABIT_LOOP = """\
id: test-habit-loop-c
paradigm: user_assistant
replicates: 2
horizon:
  short: { sessions: 50, session_gap_hours: 3 }
noise_ratio: 0.40
signal_ratio: 0.10
soft_ratio: 0.50
soft_signal_mentions: 4
entities:
  - id: me
    type: human
    profile:
      big_five: { O: 0.9, C: 0.2, E: 0.1, A: 0.5, N: 0.5 }
      communication_style: { verbosity: terse, formality: casual }
      event_distribution:
        habit_form: 0.50
        preference_reveal: 0.30
  - id: helper
    type: assistant_agent
    event_distribution:
      preference_revelation: 0.20
"""

TEST_SCENARIOS: dict[str, str] = {
    "test-commuter-a": COMMUTER,
    "test-two-desks-b": TWO_DESKS,
    "test-habit-loop-c": HABIT_LOOP,
}

CODING = """\
id: test-coding-x
paradigm: coding_agent
horizon:
  short: { sessions: 20, session_gap_hours: 4 }
noise_ratio: 0.6
entities:
  - { id: lead, type: human }
  - { id: coder, type: coding_agent, repository: ledger, language: go }
"""


def write_scenario(folder: Path, text: str, name: str | None = None) -> Path:
    """Write one scenario file named after its id (or ``name``) and return its path."""
    if name is None:
        found = re.search(r"^id:\s*(\S+)", text, re.MULTILINE)
        assert found, "scenario text has no id"
        name = f"{found.group(1)}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def generate(
    paths: Sequence[Path], out: Path, horizons: Sequence[HorizonName] = ()
) -> list[WorldSummary]:
    """Load scenario files and generate their worlds under ``out`` (as ``drift generate``)."""
    return generate_worlds([load_scenario(path) for path in paths], out, horizons)


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def table_files(root: Path) -> list[Path]:
    """Every file (tables, manifests, staging leftovers) under ``root``."""
    return sorted(path for path in root.rglob("*") if path.is_file()) if root.exists() else []


# --- reading tables back through DuckDB ------------------------------------------------------


def table_sql(root: Path, table: str) -> str:
    """The read expression the issue prescribes for one table."""
    return f"read_parquet('{root}/{table}/**/*.parquet', hive_partitioning=true)"


@dataclass
class Worlds:
    """Generated worlds under one storage root, queried through DuckDB."""

    root: Path
    scenarios: dict[str, LoadedScenario]
    summaries: list[WorldSummary]

    def query(self, sql: str, *params: object) -> list[dict[str, Any]]:
        """Run ``sql`` with ``{table}`` placeholders replaced by reads of that table's files."""
        expanded = sql.format(**{t.name: table_sql(self.root, t.name) for t in WORLD_TABLES})
        with duckdb.connect() as con:
            result = con.execute(expanded, list(params))
            names = [column[0] for column in result.description]
            return [dict(zip(names, row, strict=True)) for row in result.fetchall()]

    def worlds(self) -> list[tuple[str, HorizonName, int]]:
        """Every generated (scenario, horizon, replicate)."""
        return [
            (row["scenario"], row["horizon"], row["replicate"])
            for row in self.query(
                "select distinct scenario, horizon, replicate from {event_schedules} order by all"
            )
        ]


def make_worlds(root: Path, texts: Iterable[str], horizons: Sequence[HorizonName] = ()) -> Worlds:
    """Write scenario texts to ``root/_scenarios`` and generate them under ``root/out``."""
    paths = [write_scenario(root / "_scenarios", text) for text in texts]
    out = root / "out"
    summaries = generate(paths, out, horizons)
    scenarios = {loaded.spec.id: loaded for loaded in map(load_scenario, paths)}
    return Worlds(out, scenarios, summaries)


@pytest.fixture(scope="session")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Worlds:
    """The three test scenarios, every horizon, generated once per test session."""
    return make_worlds(tmp_path_factory.mktemp("worlds"), TEST_SCENARIOS.values())


# --- latent state replayed independently of the generator ----------------------------------


def slot_kind(entity_type: str, slot: str) -> str:
    """``functional`` or ``set``, from the entity registry."""
    return get_entity_type(entity_type).slot(slot).kind


def replay_current(
    worlds: Worlds, scenario: str, horizon: str, replicate: int
) -> dict[int, set[tuple[str, str, str]]]:
    """State after each session count, replayed from latent_profiles and event_schedules alone.

    Returns:
        ``after_session`` → the set of ``(subject, slot, value)`` holding once that many
        sessions happened (key 0 is the latent initial state).
    """
    key = (scenario, horizon, replicate)
    profiles = worlds.query(
        "select entity_id, entity_type, initial_state from {latent_profiles} "
        "where scenario = ? and horizon = ? and replicate = ?",
        *key,
    )
    types = {row["entity_id"]: row["entity_type"] for row in profiles}
    state: dict[tuple[str, str], list[str]] = {}
    for row in profiles:
        for slot, value in json.loads(row["initial_state"]).items():
            state[(row["entity_id"], slot)] = [str(value)]
    schedule = worlds.query(
        "select session_index, subject, slot, value, op, tier, enters_ground_truth "
        "from {event_schedules} where scenario = ? and horizon = ? and replicate = ? "
        "order by session_index",
        *key,
    )
    snapshots = {0: _flatten(state)}
    for row in schedule:
        if row["subject"] is not None and row["enters_ground_truth"]:
            slot_key = (row["subject"], row["slot"])
            if slot_kind(types[row["subject"]], row["slot"]) == "functional":
                state[slot_key] = [row["value"]]
            else:
                state.setdefault(slot_key, []).append(row["value"])
        snapshots[row["session_index"] + 1] = _flatten(state)
    return snapshots


def _flatten(state: dict[tuple[str, str], list[str]]) -> set[tuple[str, str, str]]:
    return {(subject, slot, value) for (subject, slot), values in state.items() for value in values}


def write_entry_point(folder: Path, group: str, name: str, target: str) -> Path:
    """An installed distribution's metadata declaring one entry point, under ``folder``.

    With ``folder`` on ``sys.path``, importlib.metadata finds it as it finds any installed
    package: the path a third-party importer or paradigm takes.
    """
    info = folder / "drift_example_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: drift-example-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n", encoding="utf-8")
    return info


def unchecked(
    backend: str, why: str, monkeypatch: pytest.MonkeyPatch | None = None
) -> dict[str, str]:
    """Turn the conformance check off for a run whose ``backend`` is broken on purpose.

    The check refuses such a backend before the run; the tests that show how a run contains
    one (its faults recorded, its cell not ranked, its hung worker ended) need it to run. Every
    other run in the tests is checked, as a user's is, and a test of the check itself never
    calls this. ``backend`` and ``why`` (what it breaks, and what the test looks at instead)
    are required so that each such run says so where it is made.

    Returns:
        The variable to add to a subprocess's environment; with ``monkeypatch``, it is also set
        in this process (for an in-process run) until the test ends.
    """
    if not backend.strip() or not why.strip():
        raise ValueError("unchecked: name the backend broken on purpose and why")
    if monkeypatch is not None:
        monkeypatch.setenv(CHECK_ENV, "0")
    return {CHECK_ENV: "0"}


@contextmanager
def worker_temp() -> Iterator[Path]:
    """A temp folder for the workers of a run, removed afterwards with whatever is left in it.

    A run's workers make their folders in the temp folder. Given this one (as ``TMPDIR`` to a
    ``drift run``, or as ``tempfile.tempdir`` in this process), a test can see what a run left
    there, and a run the test kills outright (``SIGKILL``, as an OOM kill would; it cannot
    remove its workers' folders itself) leaves nothing in the machine's temp folder. It is open
    to every user, as a sandboxed worker of another uid must be able to enter it.
    """
    folder = Path(tempfile.mkdtemp(prefix="drift-workers-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def process_alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that never reaps it has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
