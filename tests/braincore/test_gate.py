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
    synthetic_dataset_bytes,
)
from drift_pipeline.cli import main
from drift_pipeline.evaluation import reader_probe, with_reader_columns
from drift_pipeline.evaluation.reader import judge_reading, read_context
from drift_pipeline.memory import Message
from drift_pipeline.memory.backends import FullContextBackend
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
    # alpha's three timed items are three sessions; beta, untimed, is one.
    assert tables["event_schedules"].num_rows == 4
    assert tables["transcripts"].column("content").to_pylist()[3] == "Ilya plays the oboe."
    probes = tables["probes"].to_pylist()
    assert [(p["probe_id"], p["probe_type"], p["subtype"]) for p in probes] == [
        ("q1", "recall", "fact"),
        ("q2", "recall", "fact"),
        ("q3", "revision", "fact_update"),
        ("q4", "recall", "fact"),
        ("q5", "recall", "fact"),
    ]
    assert {p["checkpoint"] for p in probes} == {4}
    assert probes[3]["aliases"] == ["the oboe", "oboe"]
    # The sessions of each query's required memories.
    assert [p["evidence_sessions"] for p in probes] == [[1], [0, 1], [0, 2], [3], [3]]
    # Every question is asked by the memory, about the person its memories are notes on.
    assert {p["asker"] for p in probes} == {"memory"}
    assert [p["subject"] for p in probes] == ["noor", "noor", "noor", "ilya", "ilya"]
    profiles = {r["entity_id"]: r for r in tables["latent_profiles"].to_pylist()}
    assert {k: (r["entity_type"], r["name"]) for k, r in profiles.items()} == {
        "memory": ("tool_agent", "memory"),
        "noor": ("human", "Noor"),
        "ilya": ("human", "Ilya"),
    }
    assert source.not_applicable == {"action_alignment", "privacy", "selectivity", "drift_c"}
    # Importing the same file twice gives the same tables.
    again = open_braincore(str(tiny_dataset)).tables("short")
    assert all(again[name].equals(table) for name, table in tables.items())


def test_each_item_is_a_note_of_the_memory_dated_by_its_own_timestamp(tmp_path: Path) -> None:
    """Records are replayed in time order, and an untimed item keeps its neighbours' time."""
    records = [
        {
            "session_id": "later",
            "memories": [
                {"id": "l0", "text": "Tove Lund keeps bees."},  # untimed, listed first
                {"id": "l1", "text": "Tove Lund moved to Umea.", "time": "2024-03-02T08:00"},
                {"id": "l2", "text": "Tove Lund sold her bike."},  # untimed, after l1
                {"id": "l3", "text": "Tove Lund bought a canoe.", "time": "2024-03-09T18:30"},
            ],
            "queries": [],
        },
        {
            "session_id": "earlier",
            "memories": [
                {"id": "e1", "text": "Ama Okafor lives in Lagos.", "time": "2024-03-01T10:00"},
                {"id": "e2", "text": "Ama Okafor ran a marathon.", "time": "2024-03-05T10:00"},
            ],
            "queries": [
                {
                    "query_id": "q",
                    "query_text": "Did Ama Okafor run a marathon?",
                    "expected_answer": "yes",
                    "query_type": "retrieval",
                    "required_memory_ids": ["e2"],
                }
            ],
        },
    ]
    tables = open_braincore(str(write_jsonl(tmp_path / "dated.jsonl", records))).tables("short")
    turns = tables["transcripts"].to_pylist()
    assert {(t["speaker"], t["role"]) for t in turns} == {("memory", "tool")}
    dated = [(t["label_event_id"], t["session_index"], t["sim_time"].isoformat()) for t in turns]
    assert dated == [
        ("e1", 0, "2024-03-01T10:00:00"),
        ("l0", 1, "2024-03-02T08:00:00"),
        ("l1", 1, "2024-03-02T08:00:00"),
        ("l2", 1, "2024-03-02T08:00:00"),
        ("e2", 2, "2024-03-05T10:00:00"),
        ("l3", 3, "2024-03-09T18:30:00"),
    ]
    (probe,) = tables["probes"].to_pylist()
    # "Did" opens the question, not the name: the memories open with "Ama Okafor".
    assert (probe["subject"], probe["evidence_sessions"]) == ("ama-okafor", [2])
    tiers = tables["event_schedules"].column("tier").to_pylist()
    assert tiers == ["noise", "noise", "signal", "noise"]


def test_a_question_opening_with_a_function_word_names_no_one(tmp_path: Path) -> None:
    records = [
        {
            "session_id": "s",
            "memories": [
                {"id": "m1", "text": "The oboe is Ilya's.", "time": "2024-03-01T10:00"},
                {"id": "m2", "text": "Memory joined a choir.", "time": "2024-03-02T10:00"},
            ],
            "queries": [
                {
                    "query_id": "q1",
                    "query_text": "The oboe is whose?",
                    "expected_answer": "Ilya",
                    "query_type": "retrieval",
                    "required_memory_ids": ["m1"],
                },
                {
                    "query_id": "q2",
                    "query_text": "What did Memory join?",
                    "expected_answer": "a choir",
                    "query_type": "retrieval",
                    "required_memory_ids": ["m2"],
                },
            ],
        }
    ]
    tables = open_braincore(str(write_jsonl(tmp_path / "names.jsonl", records))).tables("short")
    subjects = [probe["subject"] for probe in tables["probes"].to_pylist()]
    # "The" is no person; a person called Memory is not the memory that holds the notes.
    assert subjects == ["user", "memory-person"]


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
            "--backend",
            "full_context",
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
    # by its own time (beta has no times: a day after alpha's last memory).
    assert contexts["q3"] == "[2024-01-09] memory: Noor moved to Rome."
    assert contexts["q5"] == "[2024-01-10] memory: Ilya joined a choir."
    assert contexts["q4"] == ""  # no word of "Which instrument?" is in any memory
    correct = {
        arm: sorted(probes or [])
        for arm, probes in duckdb.sql(
            f"select arm, list(probe_id) filter (where correct) from read_parquet("
            f"'{out}/probe_answers/**/*.parquet', hive_partitioning=true) group by arm"
        ).fetchall()
    }
    # Reading the whole memory, a careful reader finds every answer as the memory's own note
    # about the person asked about; with no memory, none. The adapter's one line (its latest
    # match) answers only the question about the move, the one where the latest is the answer.
    assert correct["full_context@hard"] == ["q1", "q2", "q3", "q4", "q5"]
    assert correct["amnesiac@hard"] == []
    assert correct["braincore@hard"] == ["q3"]
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    assert manifest["scenarios"][0]["source"] == "braincore"
    assert (
        manifest["scenarios"][0]["sha256"] == hashlib.sha256(tiny_dataset.read_bytes()).hexdigest()
    )
    arms = {row["arm"]: row for row in json.loads(summary.read_text())["arms"]}
    for arm in ("braincore@hard", "full_context@hard"):
        # No action or canary questions and no noise: not applicable, never a zero, and no
        # DRIFT-C composite renormalised over what is left to rank by.
        assert arms[arm]["action_alignment"]["value"] is None
        assert set(arms[arm]["not_applicable"]) >= {"drift_c", "drift_c_lift", "selectivity"}
        assert arms[arm]["drift_c"]["value"] is None
    recall = {arm: row["recall_by_subtype"] for arm, row in arms.items()}
    assert recall["full_context@hard"]["fact"]["value"] == 1.0
    assert recall["amnesiac@hard"]["fact"]["value"] == 0.0
    # Ranked by MVOT, the full memory above the one-line adapter.
    ranked = [row["arm"] for row in json.loads(summary.read_text())["arms"] if row["ranked"]]
    assert ranked.index("full_context@hard") < ranked.index("braincore@hard")


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
        assert _braincore_contexts(out)["q3"] == "[2024-01-09] memory: Noor moved to Rome."


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


def _read_whole_memory(path: Path) -> dict[str, bool]:
    """Whether the careful reader credits each probe, reading the whole memory."""
    tables = open_braincore(str(path)).tables("short")
    backend = FullContextBackend()
    turns = tables["transcripts"].to_pylist()
    for index in sorted({t["session_index"] for t in turns}):
        messages: list[Message] = [
            {
                "speaker": t["speaker"],
                "role": t["role"],
                "content": t["content"],
                "timestamp": t["sim_time"].isoformat(),
            }
            for t in turns
            if t["session_index"] == index
        ]
        asyncio.run(backend.store(f"s{index}", messages))
    probes = with_reader_columns(
        tables["probes"], tables["latent_profiles"], tables["ground_truth"]
    ).to_pylist()
    verdicts: dict[str, bool] = {}
    for row in probes:
        context = asyncio.run(backend.retrieve("last", row["asker"], row["question"]))
        probe = reader_probe(row)
        verdicts[row["probe_id"]] = judge_reading(read_context(context, probe), probe).correct
    return verdicts


def test_the_whole_memory_answers_most_questions_of_the_synthetic_dataset(
    tmp_path: Path,
) -> None:
    path = tmp_path / "synthetic.jsonl"
    path.write_bytes(synthetic_dataset_bytes(records=4))
    credited = _read_whole_memory(path)
    assert sum(credited.values()) > len(credited) / 2
