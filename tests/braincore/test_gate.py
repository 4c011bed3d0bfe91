"""BrainCore through DRIFT: the ``braincore:`` world source and an adapter as a gated backend."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from drift_pipeline.braincore import (
    BrainCoreBackend,
    BrainCoreError,
    caller_options,
    open_braincore,
)
from drift_pipeline.cli import main
from drift_pipeline.memory import Message
from drift_pipeline.sources import SourceError, open_source

from .conftest import TINY, write_jsonl

LATEST_ONLY = '''
"""Returns only the most recently ingested item that shares a word with the query."""


class LatestOnly:
    def __init__(self):
        self.items = []

    def ingest(self, raw_memories):
        self.items.extend(raw_memories)

    def retrieve(self, query, top_k=1):
        words = set(query.lower().replace("?", "").split())
        hits = [i for i in self.items if words & set(i["content"].lower().strip(".").split())]
        return hits[-1:]

    def storage_bytes(self):
        return 7
'''


@pytest.fixture
def readable_folder() -> Iterator[Path]:
    """A folder the sandboxed worker's unprivileged user can read (pytest's tmp is 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="braincore-adapter-"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _message(speaker: str, content: str) -> Message:
    return {"speaker": speaker, "role": "user", "content": content, "timestamp": "2024-02-03T10:00"}


def test_a_session_becomes_items_and_the_top_items_the_context() -> None:
    backend = BrainCoreBackend(top_k=2)  # the keyword baseline
    asyncio.run(backend.store("s0", [_message("ana", "Ana keeps bees."), _message("bo", "Hi")]))
    asyncio.run(backend.store("s1", [_message("cy", "Cy keeps goats.")]))
    context = asyncio.run(backend.retrieve("s1", "ana", "Who keeps bees or goats?"))
    # Cy's session did not include Ana: its item never reaches her context.
    assert context == "[2024-02-03] ana: Ana keeps bees."
    assert asyncio.run(backend.retrieve("s1", "cy", "goats")) == "[2024-02-03] cy: Cy keeps goats."
    assert backend.snapshot().splitlines() == [
        "[2024-02-03] ana: Ana keeps bees.",
        "[2024-02-03] bo: Hi",
        "[2024-02-03] cy: Cy keeps goats.",
    ]
    assert backend.storage_bytes() > 0


def test_the_source_imports_records_as_sessions_and_queries_as_probes(
    tiny_dataset: Path,
) -> None:
    (source,) = open_source(f"braincore:{tiny_dataset}")
    assert source.id == "braincore-tiny" and source.kind == "braincore"
    assert source.content_hash == hashlib.sha256(tiny_dataset.read_bytes()).hexdigest()
    tables = source.tables("short")
    assert tables["event_schedules"].num_rows == 2
    assert tables["transcripts"].column("content").to_pylist()[3] == "Ilya plays the oboe."
    probes = tables["probes"].to_pylist()
    assert [(p["probe_id"], p["probe_type"], p["subtype"]) for p in probes] == [
        ("q1", "recall", "fact"),
        ("q2", "recall", "fact"),
        ("q3", "revision", "fact_update"),
        ("q4", "recall", "fact"),
        ("q5", "recall", "fact"),
    ]
    assert {p["checkpoint"] for p in probes} == {2}
    assert probes[3]["aliases"] == ["the oboe", "oboe"]
    assert [p["evidence_sessions"] for p in probes] == [[0], [0], [0], [1], [1]]
    # Importing the same file twice gives the same tables.
    again = open_braincore(str(tiny_dataset)).tables("short")
    assert all(again[name].equals(table) for name, table in tables.items())


def test_a_malformed_record_stops_the_import_in_one_line(tmp_path: Path) -> None:
    records = copy.deepcopy(TINY)
    records[0]["memories"][1]["timestamp"] = 20240105
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(SourceError) as caught:
        open_source(f"braincore:{path}")
    assert str(caught.value) == (
        f"{path}:1: memories[1]: timestamp must be a non-empty string, got 20240105"
    )


def test_an_adapter_written_elsewhere_runs_under_the_gate_on_an_imported_dataset(
    tmp_path: Path, tiny_dataset: Path, readable_folder: Path
) -> None:
    adapter = readable_folder / "latest_only.py"
    adapter.write_text(LATEST_ONLY)
    os.chmod(adapter, 0o644)
    config = tmp_path / "backends.yaml"
    config.write_text(json.dumps({"braincore": {"adapter": f"{adapter}:LatestOnly", "top_k": 3}}))
    out, summary = tmp_path / "data", tmp_path / "summary.json"
    result = CliRunner().invoke(
        main,
        [
            "run",
            f"braincore:{tiny_dataset}",
            "--backend",
            "braincore",
            "--backend",
            "amnesiac",
            "--backend-config",
            str(config),
            "--out",
            str(out),
            "--json",
            str(summary),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "0 faults" in result.stdout
    contexts = {
        row[0]: row[1]
        for row in duckdb.sql(
            f"select probe_id, context from read_parquet('{out}/retrievals/**/*.parquet', "
            "hive_partitioning=true) where arm = 'braincore@hard'"
        ).fetchall()
    }
    # The worker built the adapter from its file: one line per context, the latest match, dated
    # by its session (beta has no times: a day after alpha's first memory).
    assert contexts["q3"] == "[2024-01-01] user: Noor moved to Rome."
    assert contexts["q5"] == "[2024-01-02] user: Ilya joined a choir."
    assert contexts["q4"] == ""  # no word of "Which instrument?" is in any memory
    correct = dict(
        duckdb.sql(
            f"select arm, count(*) filter (where correct) from read_parquet("
            f"'{out}/probe_answers/**/*.parquet', hive_partitioning=true) group by arm"
        ).fetchall()
    )
    assert correct["amnesiac@hard"] == 0 < correct["braincore@hard"]
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    assert manifest["scenarios"][0]["source"] == "braincore"
    assert (
        manifest["scenarios"][0]["sha256"] == hashlib.sha256(tiny_dataset.read_bytes()).hexdigest()
    )
    arms = {row["arm"]: row for row in json.loads(summary.read_text())["arms"]}
    # No action probes in a BrainCore dataset: not applicable, never a zero.
    assert arms["braincore@hard"]["action_alignment"]["value"] is None


def _braincore_contexts(out: Path) -> dict[str, str]:
    return {
        row[0]: row[1]
        for row in duckdb.sql(
            f"select probe_id, context from read_parquet('{out}/retrievals/**/*.parquet', "
            "hive_partitioning=true) where arm = 'braincore@hard'"
        ).fetchall()
    }


def test_an_adapter_named_relative_to_the_callers_folder_runs_in_the_worker(
    tmp_path: Path,
    tiny_dataset: Path,
    readable_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A relative FILE.py on the command line, and a module in the backend config, are found
    from the caller's folder although the sandboxed worker starts in a folder of its own."""
    (readable_folder / "adapters").mkdir()
    for name in ("adapters/latest_only.py", "adapters/__init__.py"):
        (readable_folder / name).write_text(LATEST_ONLY if "latest" in name else "")
    for path in [readable_folder / "adapters", *(readable_folder / "adapters").iterdir()]:
        os.chmod(path, 0o755)
    monkeypatch.chdir(readable_folder)
    config = tmp_path / "backends.yaml"
    config.write_text(json.dumps({"braincore": {"adapter": "adapters.latest_only:LatestOnly"}}))
    runs = {
        "file": ["--braincore-adapter", "adapters/latest_only.py:LatestOnly"],
        "module": ["--backend-config", str(config)],
    }
    for label, naming in runs.items():
        out = tmp_path / label
        arguments = ["run", f"braincore:{tiny_dataset}", "--backend", "braincore", *naming]
        result = CliRunner().invoke(main, [*arguments, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "0 faults" in result.stdout, label
        assert _braincore_contexts(out)["q3"] == "[2024-01-01] user: Noor moved to Rome."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--backend", "braincore", "--braincore-adapter", "missing.py:X"],
            "braincore adapter 'missing.py:X': no such file ",
        ),
        (
            ["--backend", "bm25", "--braincore-adapter", "a.py"],
            "--braincore-adapter names the adapter of --backend braincore, which is not given",
        ),
    ],
)
def test_a_braincore_adapter_that_cannot_run_is_one_line_before_any_worker(
    tmp_path: Path, tiny_dataset: Path, arguments: list[str], message: str
) -> None:
    out = tmp_path / "data"
    result = CliRunner().invoke(
        main, ["run", f"braincore:{tiny_dataset}", *arguments, "--out", str(out)]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert not out.exists()


def test_the_command_line_and_the_config_must_not_name_two_adapters(tmp_path: Path) -> None:
    with pytest.raises(BrainCoreError, match="disagree"):
        caller_options({"adapter": "a.py"}, "b.py", tmp_path)
    fixed = caller_options({"top_k": 2}, "pkg.mod:Cls", tmp_path)
    assert fixed == {"top_k": 2, "adapter": "pkg.mod:Cls", "search_path": str(tmp_path.resolve())}


@pytest.mark.parametrize("returned", ["'not a list'", "[{'memory_id': 's0:0'}, 'oops']", "None"])
def test_an_adapter_returning_garbage_under_the_gate_is_a_recorded_fault(
    tmp_path: Path, returned: str
) -> None:
    """Not an empty context: the worker records the call's exception as the arm's fault."""
    adapter = tmp_path / "garbage.py"
    adapter.write_text(
        "class Garbage:\n"
        "    def ingest(self, raw_memories):\n"
        "        pass\n"
        "    def retrieve(self, query, top_k=1):\n"
        f"        return {returned}\n"
        "    def storage_bytes(self):\n"
        "        return 0\n"
    )
    backend = BrainCoreBackend(f"{adapter}:Garbage")
    asyncio.run(backend.store("s0", [_message("ana", "Ana keeps bees.")]))
    with pytest.raises(BrainCoreError, match=r"retrieve returned .*, expected a list of dicts"):
        asyncio.run(backend.retrieve("s0", "ana", "bees?"))
