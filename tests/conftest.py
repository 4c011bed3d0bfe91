"""The whole suite's settings, its shared tiny run, and the order files go to the workers.

``scripts/test.sh`` hands whole files to two pytest-xdist workers in collection order, each
worker taking the next file when it is nearly done. A long file handed out last runs on one
worker while the other idles; handed out first, the short files fill in around it. The files
below took the longest (each over a minute on two loaded cores), longest first; every other
file keeps its place after them. The order changes which worker runs a file and when, never
what a test checks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from report.tiny_world import TinyRun

# Records are signed with a throwaway key, never one written under the real home; direct runs
# record nothing into a Dagster instance unless a test turns it on for itself.
os.environ.setdefault("DRIFT_SIGNING_KEY", "11" * 32)
os.environ.setdefault("DRIFT_DAGSTER_RECORD", "0")
# The conformance check runs before every run's arms that are not built-ins, as for a user.
# The tests that run a backend broken on purpose (to show how a run contains its faults) turn
# it off for themselves, each saying which backend and why (see ``unchecked`` in helpers.py).

LONGEST_FIRST = (
    "tests/pipeline/test_sanity_arms.py",
    "tests/test_cli_failures.py",
    "tests/defs/test_postgres_outage.py",
    "tests/defs/test_web_ui.py",
    "tests/test_cli_run.py",
    "tests/bench/test_bench.py",
    "tests/defs/test_run_via_dagster.py",
    "tests/defs/test_run_guards.py",
    "tests/storage/test_s3.py",
    "tests/sources/test_replay_runs.py",
    "tests/defs/test_definitions.py",
    "tests/pipeline/test_harness.py",
    "tests/pipeline/test_benchmark_checks.py",
    "tests/defs/test_cli_via_dagster.py",
    "tests/test_cli_secrets.py",
    # Files of one or two long runs each (20-30 s alone on a quiet machine): started early, the
    # short files fill in around them instead of one of them running last beside an idle worker.
    "tests/pipeline/test_llm_run.py",
    "tests/adapters/test_mem0_run.py",
    "tests/memory/test_hang_bound.py",
    "tests/defs/test_direct_record.py",
    "tests/pipeline/test_run_jobs.py",
    "tests/cli/test_leaderboard.py",
    "tests/pipeline/test_multi_peer_run.py",
)
"""Test files by their measured duration, longest first."""


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Keep the test modules' compiled code, asserts rewritten, while the workers collect.

    With ``PYTHONDONTWRITEBYTECODE`` set (as in many container images) pytest would rewrite
    and compile every test module again in every worker on every run, over half of what
    collecting costs. Its cached copy is checked against the source's size and time before use.
    Only collection writes them: what a test imports while it runs is left as the
    environment says.
    """
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the tests of the files in :data:`LONGEST_FIRST` to the front, in that order."""
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    root = config.rootpath

    def place(item: pytest.Item) -> int:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return rank.get(path, len(rank))

    # A stable sort: the tests of one file stay together and in their own order.
    items.sort(key=place)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    """``drift run`` of the report tests' tiny world, made once per test process."""
    from report.tiny_world import TinyRun, run_tiny

    folder = tmp_path_factory.mktemp("tiny-run")
    result, summary = run_tiny(folder)
    return TinyRun(folder, result.output, summary)
