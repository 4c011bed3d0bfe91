"""Reading BrainCore datasets: the accepted spellings, and one line per malformed record."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.braincore import BrainCoreError, load_dataset

from .conftest import TINY, write_jsonl


def test_both_spellings_of_each_memory_field_load(tiny_dataset: Path) -> None:
    dataset = load_dataset(tiny_dataset)
    assert dataset.sha256 == hashlib.sha256(tiny_dataset.read_bytes()).hexdigest()
    alpha, beta = dataset.records
    assert (alpha.line, beta.line) == (1, 2)
    assert [m.memory_id for m in beta.memories] == ["b1", "b2"]
    assert beta.memories[0].content == "Ilya plays the oboe."
    assert beta.memories[0].timestamp is None and alpha.memories[2].timestamp is not None
    assert dataset.queries == 5


def test_time_spelled_time_orders_memories(tmp_path: Path) -> None:
    record = {
        "session_id": "s",
        "memories": [
            {"id": "late", "text": "x", "time": "2024-05-01T00:00:00+02:00"},
            {"id": "early", "text": "y", "time": "2024-04-30T23:00:00"},
        ],
        "queries": [],
    }
    dataset = load_dataset(write_jsonl(tmp_path / "d.jsonl", [record]))
    late, early = dataset.records[0].memories
    # 00:00 at +02:00 is 22:00 UTC, before 23:00: the list order is not the time order.
    assert late.time_order < early.time_order


def _broken(change: str) -> list[dict[str, Any]]:
    records = copy.deepcopy(TINY)
    second = records[1]
    memory, query = second["memories"][0], second["queries"][0]
    if change == "no id":
        del memory["id"]
    elif change == "unknown id spelling":
        memory["mem_id"] = memory.pop("id")
    elif change == "spellings disagree":
        memory["memory_id"] = "other"
    elif change == "integer answer":
        query["expected_answer"] = 42
    elif change == "bad time":
        memory["time"] = "last Tuesday"
    elif change == "unknown type":
        query["query_type"] = "summary"
    elif change == "dangling id":
        query["required_memory_ids"] = ["a1"]  # a memory of the other record
    elif change == "no memories":
        del second["memories"]
    elif change == "repeated session":
        second["session_id"] = "alpha"
    elif change == "time in capitals":
        memory["Timestamp"] = "2024-01-01T00:00:00"
    elif change == "camel-case id":
        memory["memoryId"] = memory.pop("id")
    elif change == "repeated memory id":
        second["memories"][1]["id"] = "b1"
    elif change == "repeated query id":
        query["query_id"] = "q1"
    return records


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no id", "memories[0]: no memory_id (spelled memory_id or id)"),
        ("unknown id spelling", "memories[0]: no memory_id (spelled memory_id or id)"),
        ("spellings disagree", "memories[0]: memory_id and id disagree"),
        ("integer answer", "queries[0]: expected_answer must be a string, got 42"),
        ("bad time", "memories[0]: time 'last Tuesday' is not an ISO 8601 date-time"),
        ("unknown type", "queries[0]: query_type 'summary' is not one of"),
        ("dangling id", "required_memory_ids names 'a1', which is not a memory of this record"),
        ("no memories", "no memories"),
        ("repeated session", "session_id 'alpha' is used twice"),
        (
            "time in capitals",
            "memories[0]: key 'Timestamp' is not a spelling this schema reads; use timestamp or "
            "time",
        ),
        ("camel-case id", "memories[0]: key 'memoryId' is not a spelling this schema reads"),
        ("repeated memory id", "memories[1]: id 'b1' is used twice in the record (memories[0])"),
        ("repeated query id", "queries[0]: query_id 'q1' is used twice (line 1)"),
    ],
)
def test_a_malformed_record_is_one_line_naming_its_line_and_field(
    tmp_path: Path, change: str, message: str
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", _broken(change))
    with pytest.raises(BrainCoreError) as caught:
        load_dataset(path)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"{path}:2: ")
    assert message in text


def test_invalid_json_and_missing_files_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"session_id": "a", "memories": [], "queries": []}\n{oops\n')
    with pytest.raises(BrainCoreError, match=r"bad\.jsonl:2: not valid JSON"):
        load_dataset(path)
    with pytest.raises(BrainCoreError, match="cannot read the dataset"):
        load_dataset(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(BrainCoreError, match="no records"):
        load_dataset(tmp_path / "empty.jsonl")


def test_a_raw_unicode_line_separator_inside_a_string_stays_in_its_record(tmp_path: Path) -> None:
    """JSON lines end at ``\\n`` only: U+2028, U+0085 and form feeds are valid inside strings."""
    record = copy.deepcopy(TINY[1])
    record["memories"][0]["text"] = "Ilya plays\u2028the oboe.\x85\x0c"
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\r\n", encoding="utf-8")
    dataset = load_dataset(path)
    assert dataset.records[0].memories[0].content == "Ilya plays\u2028the oboe.\x85\x0c"
    assert dataset.records[0].line == 1


def test_a_memory_without_a_time_keeps_its_place_among_timed_ones(tmp_path: Path) -> None:
    """The list is chronological: an untimed item comes after the timed ones listed before it."""
    record = {
        "session_id": "s",
        "memories": [
            {"id": "first", "text": "x", "time": "2024-01-01T00:00:00"},
            {"id": "second", "text": "y"},
            {"id": "third", "text": "z", "time": "2024-01-03T00:00:00"},
        ],
        "queries": [],
    }
    memories = load_dataset(write_jsonl(tmp_path / "d.jsonl", [record])).records[0].memories
    ordered = sorted(memories, key=lambda m: m.time_order)
    assert [m.memory_id for m in ordered] == ["first", "second", "third"]


def test_a_byte_order_mark_at_the_start_is_read_as_text_encoding_not_content(
    tiny_dataset: Path,
) -> None:
    """Editors on Windows save UTF-8 with a BOM; the hash stays that of the file's bytes."""
    raw = b"\xef\xbb\xbf" + tiny_dataset.read_bytes()
    tiny_dataset.write_bytes(raw)
    dataset = load_dataset(tiny_dataset)
    assert dataset.records[0].session_id == "alpha"
    assert dataset.sha256 == hashlib.sha256(raw).hexdigest()
