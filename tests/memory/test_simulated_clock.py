"""Backends read the simulated time of each session on their own clocks, unless turned off.

The backends are written here into a folder outside the repository, as a user's library would
be, and read the clock the way libraries do: ``datetime.now()``, ``time.time()``,
``date.today()``. The world spans months (12 sessions, 20 days apart).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_scenario

from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell
from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_worlds

from .plugins import _support

SCENARIO = """\
id: clock-t
paradigm: user_assistant
seed: 808
replicates: 2
horizon:
  short: { sessions: 12, session_gap_days: 20 }
noise_ratio: 0.4
entities:
  - id: principal
    type: human
    profile:
      big_five: { O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }
  - id: assistant
    type: assistant_agent
    capability_profile: { context_window: 32000 }
checkpoints:
  - { after_session: 6, probe_types: [recall] }
  - { after_session: 12, probe_types: [recall] }
"""

# A user's module: one backend that writes down what its clocks read, one that forgets by age
# (memories older than 60 days are no longer returned), as recency-ranking libraries do.
LIBRARY = """\
import datetime
import time

from drift_pipeline.memory import TokenCounts


class ClockWatch:
    def __init__(self):
        self.lines = []

    async def store(self, session_id, messages):
        now = datetime.datetime.now()
        self.lines.append(
            f"{session_id} {messages[0]['timestamp']} {now.isoformat()} {time.time()} "
            f"{datetime.date.today().isoformat()}"
        )

    async def retrieve(self, session_id, entity_id, query):
        return f"{session_id} {datetime.datetime.now().isoformat()}"

    def snapshot(self):
        return "\\n".join(self.lines)

    def token_counts(self):
        return TokenCounts()


class ForgetsAfterSixtyDays:
    DAY = 86400.0

    def __init__(self):
        self.kept = []

    async def store(self, session_id, messages):
        self.kept.append((time.time(), session_id))

    async def retrieve(self, session_id, entity_id, query):
        now = time.time()
        fresh = [(now - at) / self.DAY for at, _ in self.kept if now - at < 60 * self.DAY]
        oldest = max(fresh, default=0.0)
        return f"kept {len(fresh)} of {len(self.kept)}; oldest returned {oldest:.1f} days"

    def token_counts(self):
        return TokenCounts()
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The world, and the user's module in a folder the sandboxed worker can read."""
    base = tmp_path_factory.mktemp("clock")
    path = write_scenario(base / "scenarios", SCENARIO)
    generate_worlds([load_scenario(path)], base / "data")
    with _support.outside_module("clock_library", LIBRARY):
        yield base / "data"


def _cell(world: Path, backend: str, simulated: bool = True) -> CellRun:
    cell = run_cell(
        world,
        "clock-t",
        "short",
        2,
        Arm(f"clock_library:{backend}", Gate("hard")),
        config=LoopConfig(call_timeout=20.0, protect=(world,), simulated_clock=simulated),
    )
    assert cell.faults == []
    return cell


def _close(reading: str, expected: dt.datetime, seconds: float = 30.0) -> bool:
    return abs((dt.datetime.fromisoformat(reading) - expected).total_seconds()) < seconds


def test_each_store_and_probe_reads_the_simulated_time_of_its_session(world: Path):
    cell = _cell(world, "ClockWatch")
    last = [r for r in cell.snapshots.to_pylist() if r["session_index"] == 11]
    assert len(last) == 2
    times = {}
    for row in last:
        lines = row["snapshot"].splitlines()
        assert len(lines) == 12
        for line in lines:
            session_id, stamp, now, epoch, today = line.split()
            session_time = dt.datetime.fromisoformat(stamp)
            times[session_id] = session_time
            # The wall clock, its epoch seconds and today's date all read the session's time.
            assert _close(now, session_time), line
            assert abs(float(epoch) - session_time.astimezone().timestamp()) < 30, line
            assert today == session_time.date().isoformat(), line
    span = max(times.values()) - min(times.values())
    assert span > dt.timedelta(days=200)
    for row in cell.retrievals.to_pylist():
        # Asked right after the checkpoint's session: its time, never earlier.
        session_id, now = row["context"].split()
        assert _close(now, times[session_id]), row["context"]
        assert dt.datetime.fromisoformat(now) >= times[session_id]
    session_reads = [r for r in cell.snapshots.to_pylist() if r["session_reads"]]
    assert session_reads and not any(e for r in session_reads for e in r["session_read_errors"])


def test_a_library_that_forgets_by_age_sees_months_pass_and_forgets(world: Path):
    simulated = _cell(world, "ForgetsAfterSixtyDays")
    at_the_end = {r["context"] for r in simulated.retrievals.to_pylist() if r["checkpoint"] == 12}
    # 12 sessions 20 days apart: three are younger than 60 days at the last checkpoint.
    assert len(at_the_end) == 1
    (line,) = at_the_end
    assert line.startswith("kept 3 of 12; oldest returned 4")
    real = _cell(world, "ForgetsAfterSixtyDays", simulated=False)
    contexts = {r["context"] for r in real.retrievals.to_pylist() if r["checkpoint"] == 12}
    # On the real clock the whole world is seconds old: nothing is ever forgotten.
    assert {c.split(";")[0] for c in contexts} == {"kept 12 of 12"}
    assert all(c.endswith(" 0.0 days") for c in contexts)
