"""Shared by the memory-loop tests: a small scenario of their own, world generation, DuckDB reads.

Not a backend. The scenario is written here (not taken from ``scenarios/``) with a short
horizon and two replicates, so a whole cell runs in a second or two.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest

from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_worlds

PLUGINS_ROOT = Path(__file__).resolve().parent.parent
"""The folder to put on ``PYTHONPATH`` so that ``plugins.<module>:<Class>`` imports."""

SESSIONS = 16
REPLICATES = 2
CHECKPOINTS = (8, 16)

SCENARIO = """\
id: {id}
paradigm: user_assistant
seed: 5150
replicates: 2
horizon:
  short: {{ sessions: 16, session_gap_hours: 7 }}
noise_ratio: 0.40
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }}
      event_distribution:
        job_change: 0.25
        relocation: 0.20
        habit_form: 0.20
        preference_reveal: 0.20
  - id: assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
checkpoints:
  - {{ after_session: 8, probe_types: [recall, action, revision] }}
"""


def write_scenario(folder: Path, scenario_id: str) -> Path:
    """Write the test scenario under ``folder`` with the given id; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario_id}.yaml"
    path.write_text(SCENARIO.format(id=scenario_id), encoding="utf-8")
    return path


def generate_world(scenario_folder: Path, root: Path, scenario_id: str) -> Path:
    """Write the scenario and generate its world under ``root``; return ``root``."""
    generate_worlds([load_scenario(write_scenario(scenario_folder, scenario_id))], root)
    return root


def make_world_readable(root: Path) -> None:
    """chmod 0755 on every folder and a+r on every file under (and including) ``root``."""
    os.chmod(root, 0o755)
    for folder, subfolders, files in os.walk(root):
        for name in subfolders:
            os.chmod(os.path.join(folder, name), 0o755)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | 0o444)


def read_sql(root: Path, table: str) -> str:
    """The read expression for one table's files under ``root``."""
    return f"read_parquet('{root}/{table}/**/*.parquet', hive_partitioning=true)"


def query(root: Path, sql: str, *params: object) -> list[dict[str, Any]]:
    """Run ``sql`` with ``{table}`` placeholders replaced by reads of that table under ``root``."""
    tables = (
        "transcripts",
        "probes",
        "event_schedules",
        "memory_snapshots",
        "retrievals",
        "probe_answers",
    )
    expanded = sql.format(**{name: read_sql(root, name) for name in tables})
    with duckdb.connect() as con:
        result = con.execute(expanded, list(params))
        names = [column[0] for column in result.description]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


@contextmanager
def outside_module(name: str, text: str) -> Iterator[Path]:
    """A module written outside the repository, as a user's would be, importable by workers.

    It goes into a world-readable folder under /tmp (a sandboxed worker runs as another user)
    that is put on the path for the ``with`` block and removed after it.
    """
    folder = Path(tempfile.mkdtemp(prefix="drift-user-module-", dir="/tmp"))
    try:
        os.chmod(folder, 0o755)
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        os.chmod(folder / f"{name}.py", 0o644)
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(folder))
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
