"""``drift braincore`` and ``python -m drift_pipeline.braincore`` on files written elsewhere."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main

from .conftest import TINY, write_jsonl

PACKAGE_ADAPTER = '''
class PackagedAdapter:
    """Keeps everything; returns the newest items first."""

    def __init__(self):
        self.items = []

    def ingest(self, raw_memories):
        self.items.extend(raw_memories)

    def retrieve(self, query, top_k=1):
        return list(reversed(self.items))[:top_k]

    def storage_bytes(self):
        return sum(len(i["content"]) for i in self.items)
'''


def _without_latency(payload: dict[str, Any]) -> dict[str, Any]:
    clean = copy.deepcopy(payload)
    for row in clean["queries"]:
        del row["latency_ms"]
    del clean["metrics"]["overall"]["latency_ms"]
    for figures in clean["metrics"]["by_query_type"].values():
        del figures["latency_ms"]
    return clean


def test_a_module_adapter_runs_from_its_folder_and_writes_the_result(
    tmp_path: Path, tiny_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "packaged_adapter.py").write_text(PACKAGE_ADAPTER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    output, report = tmp_path / "results" / "run.json", tmp_path / "results" / "run.md"
    result = CliRunner().invoke(
        main,
        [
            "braincore",
            "--adapter",
            "src.packaged_adapter",
            "--dataset",
            str(tiny_dataset),
            "--output",
            str(output),
            "--top-k",
            "2",
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(output.read_text())
    assert payload["adapter"] == "src.packaged_adapter" and payload["top_k"] == 2
    assert payload["dataset"]["records"] == 2 and payload["dataset"]["queries"] == 5
    overall = payload["metrics"]["overall"]
    # Newest two of alpha: [a3, a2]; a3 is the revised fact: resolved. Temporal q2 needs a1.
    assert overall["contradiction_resolution_score"]["value"] == 1.0
    assert overall["storage_bytes"]["value"] == sum(
        len(m.get("content", m.get("text", ""))) for r in TINY for m in r["memories"]
    )
    markdown = report.read_text()
    assert "| `contradiction_resolution_score` | 1.000 |" in markdown
    assert "| retrieval | " in markdown and "n/a" in markdown
    assert payload["dataset"]["sha256"] in markdown
    assert "contradiction_resolution_score: 1" in result.stdout


def test_same_inputs_give_byte_identical_results_apart_from_latency(
    tmp_path: Path, tiny_dataset: Path, scripted_adapter: Path
) -> None:
    outputs = []
    for run in ("one", "two"):
        output = tmp_path / f"{run}.json"
        result = CliRunner().invoke(
            main,
            [
                "braincore",
                "--adapter",
                f"{scripted_adapter}:ScriptedAdapter",
                "--dataset",
                str(tiny_dataset),
                "--output",
                str(output),
            ],
        )
        assert result.exit_code == 0, result.output
        text = output.read_text()
        payload = json.loads(text)
        # The file is exactly its canonical dump: only the latency values can differ by run.
        assert text == json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        outputs.append(payload)
    first, second = (_without_latency(o) for o in outputs)
    assert json.dumps(first) == json.dumps(second)
    assert first["embedding_model"]["name"].startswith("sentence-transformers/all-MiniLM-L6-v2")


def test_python_dash_m_takes_the_same_flags(
    tmp_path: Path, tiny_dataset: Path, scripted_adapter: Path
) -> None:
    output = tmp_path / "run.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "drift_pipeline.braincore",
            "--adapter",
            f"{scripted_adapter}:ScriptedAdapter",
            "--dataset",
            str(tiny_dataset),
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(output.read_text())["metrics"]["overall"]["exact_match"]["value"] == 0.4


def test_a_drift_backend_runs_on_a_braincore_dataset(tmp_path: Path, tiny_dataset: Path) -> None:
    output = tmp_path / "bm25.json"
    result = CliRunner().invoke(
        main,
        [
            "braincore",
            "--backend",
            "full_context",
            "--dataset",
            str(tiny_dataset),
            "--output",
            str(output),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(output.read_text())
    assert payload["adapter"] == "backend:full_context"
    rows = {row["query_id"]: row for row in payload["queries"]}
    # full_context hands back everything in time order: the memories are found in it in order.
    assert rows["q2"]["retrieved_memory_ids"][:3] == ["a1", "a2", "a3"]
    assert rows["q2"]["temporal_order_score"] == 1.0
    assert rows["q5"]["temporal_order_score"] == 1.0
    # ... and the revised fact is in it (after the one it replaced): returned, so resolved.
    assert rows["q3"]["contradiction_resolution_score"] == 1.0
    assert payload["metrics"]["overall"]["storage_bytes"]["value"] > 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--adapter", "no_such_module_here"], "cannot import module 'no_such_module_here'"),
        (["--adapter", "json"], "defines 0 adapter classes"),
        (["--backend", "no_such_backend"], "unknown backend 'no_such_backend'"),
        ([], "give exactly one of --adapter"),
    ],
)
def test_bad_adapters_are_one_line_and_write_nothing(
    tmp_path: Path, tiny_dataset: Path, arguments: list[str], message: str
) -> None:
    output = tmp_path / "run.json"
    result = CliRunner().invoke(
        main,
        ["braincore", *arguments, "--dataset", str(tiny_dataset), "--output", str(output)],
    )
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not output.exists()


def test_a_malformed_dataset_writes_nothing(tmp_path: Path, scripted_adapter: Path) -> None:
    records = copy.deepcopy(TINY)
    del records[1]["queries"][1]["query_text"]
    dataset = write_jsonl(tmp_path / "bad.jsonl", records)
    output = tmp_path / "run.json"
    result = CliRunner().invoke(
        main,
        [
            "braincore",
            "--adapter",
            str(scripted_adapter),
            "--dataset",
            str(dataset),
            "--output",
            str(output),
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{dataset}:2: queries[1]: no query_text"
    assert not output.exists()


def test_an_adapter_failing_mid_run_names_the_query_and_writes_nothing(
    tmp_path: Path, tiny_dataset: Path
) -> None:
    adapter = tmp_path / "breaks.py"
    adapter.write_text(
        "class Breaks:\n"
        "    def ingest(self, raw_memories):\n"
        "        pass\n"
        "    def retrieve(self, query, top_k=1):\n"
        "        if 'oboe' in query.lower() or 'instrument' in query.lower():\n"
        "            raise KeyError('no index')\n"
        "        return [{'content': 'x'}]\n"
        "    def storage_bytes(self):\n"
        "        return 0\n"
    )
    output = tmp_path / "run.json"
    result = CliRunner().invoke(
        main,
        [
            "braincore",
            "--adapter",
            f"{adapter}:Breaks",
            "--dataset",
            str(tiny_dataset),
            "--output",
            str(output),
        ],
    )
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"{tiny_dataset}:2: query 'q4': the adapter's retrieve raised KeyError: 'no index'"
    )
    assert not output.exists() and list(tmp_path.glob(".run.json*")) == []


THREE_METHODS = '''
from drift_pipeline.memory import TokenCounts


class ThreeMethods:
    """The spec's interface and nothing more: no snapshot() to size."""

    def __init__(self):
        self.lines = []

    async def store(self, session_id, messages):
        self.lines.extend(m["content"] for m in messages)

    async def retrieve(self, session_id, entity_id, query):
        return "\\n".join(self.lines)

    def token_counts(self):
        return TokenCounts()
'''


def test_a_backend_without_snapshot_has_its_storage_not_measured(
    tmp_path: Path, tiny_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "three_methods_backend.py").write_text(THREE_METHODS)
    monkeypatch.syspath_prepend(str(tmp_path))
    output = tmp_path / "three.json"
    result = CliRunner().invoke(
        main,
        [
            "braincore",
            "--backend",
            "three_methods_backend:ThreeMethods",
            "--dataset",
            str(tiny_dataset),
            "--output",
            str(output),
        ],
    )
    assert result.exit_code == 0, result.output
    overall = json.loads(output.read_text())["metrics"]["overall"]
    # Scored like any backend, its footprint unknown rather than zero.
    assert overall["exact_match"]["value"] is not None
    assert overall["storage_bytes"]["value"] is None
    assert "storage_bytes: not measured" in result.output
