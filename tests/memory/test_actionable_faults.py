"""Faults a person can act on: the faulting arm, its faults by call kind, the real exception.

The library is written here into a folder outside the repository, as a user's would be: a
search whose query parser raises on punctuation, as several lexical search libraries do on a
question mark. Its stores work; every question it is asked fails.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import unchecked

from drift_pipeline.cli import main
from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell

from .plugins import _support

LIBRARY = '''\
"""A tiny search library whose query parser refuses punctuation."""

import re


class QuerySyntaxError(Exception):
    pass


def parse(query):
    bad = re.search(r"[?!:]", query)
    if bad:
        raise QuerySyntaxError(f"unexpected {bad.group()!r} at column {bad.start()}")
    return query.lower().split()


class Index:
    def __init__(self):
        self.lines = []

    def add(self, line):
        self.lines.append(line)

    def search(self, query):
        words = parse(query)
        return [line for line in self.lines if any(w in line.lower() for w in words)]
'''

ADAPTER = """\
from drift_pipeline.memory import TokenCounts
from punct_search import Index


class PunctuationSearch:
    def __init__(self):
        self.index = Index()

    async def store(self, session_id, messages):
        for message in messages:
            self.index.add(message["content"])

    async def retrieve(self, session_id, entity_id, query):
        return "\\n".join(self.index.search(query)[:5])

    def token_counts(self):
        return TokenCounts()
"""

ARM = "punct_adapter:PunctuationSearch"


@pytest.fixture(scope="module")
def library() -> Iterator[Path]:
    """The library and its adapter, in a folder the sandboxed worker can read."""
    folder = Path(tempfile.mkdtemp(prefix="drift-punct-", dir="/tmp"))
    try:
        os.chmod(folder, 0o755)
        for name, text in (("punct_search.py", LIBRARY), ("punct_adapter.py", ADAPTER)):
            (folder / name).write_text(text, encoding="utf-8")
            os.chmod(folder / name, 0o644)
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(folder))
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("punct")
    return _support.generate_world(base / "scenarios", base / "data", "punct-t")


def _cell(world: Path) -> CellRun:
    return run_cell(
        world,
        "punct-t",
        "short",
        _support.REPLICATES,
        Arm(ARM, Gate("hard")),
        config=LoopConfig(call_timeout=20.0, protect=(world,)),
    )


def _raise_line(library: Path) -> int:
    lines = (library / "punct_search.py").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if "raise QuerySyntaxError" in line)


def test_retrieve_faults_never_skip_stores_and_name_the_librarys_line(library: Path, world: Path):
    cell = _cell(world)
    # Every store was made and answered, in every replicate: the read bug cost no write.
    assert cell.snapshots.num_rows == _support.REPLICATES * _support.SESSIONS
    assert cell.snapshots.column("error").null_count == cell.snapshots.num_rows
    assert cell.snapshots.column("storage_tokens").null_count == cell.snapshots.num_rows
    # Every probe is a question: each replicate made five, then skipped its retrieves.
    where = f"{library}/punct_search.py:{_raise_line(library)}"
    for replicate in range(_support.REPLICATES):
        probes = [r["error"] for r in cell.retrievals.to_pylist() if r["replicate"] == replicate]
        assert all(probes)  # every probe is a question
        reads = [
            e
            for r in cell.snapshots.to_pylist()
            if r["replicate"] == replicate
            for e in r["session_read_errors"]
        ]
        errors = [e for e in [*reads, *probes] if e]  # an opening line without "?" answers
        made = [e for e in errors if not e.startswith("skipped")]
        assert made and all(
            e.startswith("QuerySyntaxError: unexpected '?' at column")
            or e.startswith("QuerySyntaxError: unexpected '!' at column")
            or e.startswith("QuerySyntaxError: unexpected ':' at column")
            for e in made
        ), made
        assert all(e.endswith(f" at {where}") for e in made)
    summary = cell.fault_summary
    assert summary.faulted["store"] == 0
    assert summary.first_exception is not None
    assert summary.first_exception.where == where
    assert summary.first_exception.replicate == 0
    # The same faults and the same skips on a rerun: nothing depends on timing.
    again = _cell(world)
    for table in ("snapshots", "retrievals"):
        before, after = getattr(cell, table), getattr(again, table)
        columns = ["error", "session_read_errors"] if table == "snapshots" else ["error"]
        assert before.select(columns).equals(after.select(columns))


def test_the_run_names_the_arm_its_faults_by_kind_and_the_real_exception(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    unchecked(
        ARM,
        "its search raises on every question; what the run prints of its faults is tested",
        monkeypatch,
    )
    scenario = _support.write_scenario(tmp_path / "scenarios", "punct-cli-t")
    result = CliRunner().invoke(
        main,
        ["run", str(scenario), "--backend", ARM, "--out", str(tmp_path / "data")],
        catch_exceptions=False,
    )
    lines = result.output.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("faults in 1 arm(s)"))
    arm_line, first = lines[start + 1], lines[start + 2]
    assert arm_line.startswith(f"  {ARM}@hard: ")
    assert "(store 0, read before a session " in arm_line and ", probe " in arm_line
    assert "of them skipped, not made" in arm_line
    assert first.startswith("    first exception (punct-cli-t/short, replicate 0, retrieve ")
    assert ": QuerySyntaxError: unexpected " in first
    assert first.endswith(f" at {library}/punct_search.py:{_raise_line(library)})")
    # Its retrieves fault past the limit: not ranked, and the run says so.
    assert f"invalid: {ARM}@hard on punct-cli-t/short" in result.output
    assert result.exit_code == 5
