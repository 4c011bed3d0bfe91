"""The gate registry: built-in strategies, parsing from registrations, and a new variant that
runs through the memory loop by its registration alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drift_pipeline.memory import (
    Arm,
    Gate,
    GateStrategy,
    LoopConfig,
    Message,
    ReaderBuffer,
    _gates,
    gate_kinds,
    register_gate,
    run_cell,
)
from drift_pipeline.memory._gates import HardGate, SoftGate, SummaryGate
from drift_pipeline.tokens import count_tokens_lines

from .plugins import _support

SCENARIO = "gates-t"
RECORDER = "memory.plugins.recorder:Recorder"


def _messages() -> list[Message]:
    return [
        Message(
            speaker="principal",
            role="user",
            content="I moved to Porto.",
            timestamp="2027-04-01T09:00:00",
        ),
        Message(
            speaker="assistant",
            role="assistant",
            content="Noted, Porto it is.",
            timestamp="2027-04-01T09:00:05",
        ),
    ]


class FirstMessages(GateStrategy):
    """``first:N``: the backend receives the first N messages; the reader gets a tally."""

    def backend_messages(self, messages: list[Message], timestamp: str) -> list[Message]:
        return messages[: self.size]

    def reader_buffer(self) -> ReaderBuffer:
        return Tally()


class Tally(ReaderBuffer):
    def __init__(self) -> None:
        self.stored = 0

    def add(self, messages: list[Message]) -> None:
        self.stored += 1

    def text(self) -> str:
        return f"sessions stored so far: {self.stored}"


@pytest.fixture
def first_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """``first:N`` registered in a private copy of the registry."""
    monkeypatch.setattr(_gates, "_GATES", _gates._GATES.copy())
    register_gate("first", FirstMessages, size_name="N", max_digits=2)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("gates")
    return _support.generate_world(base / "scenarios", base / "data", SCENARIO)


def test_the_built_in_kinds_are_registered_in_order():
    assert gate_kinds()[:3] == ["hard", "soft", "summary"]
    assert isinstance(Gate.parse("hard").strategy(), HardGate)
    soft = Gate.parse("soft:3").strategy()
    assert isinstance(soft, SoftGate) and soft.size == 3
    assert isinstance(Gate.parse("summary:64").strategy(), SummaryGate)


def test_hard_passes_the_transcript_itself_and_adds_nothing():
    messages = _messages()
    gate = Gate.parse("hard").strategy()
    assert gate.backend_messages(messages, "2027-04-01T09:00:00") is messages
    buffer = gate.reader_buffer()
    buffer.add(messages)
    assert buffer.text() == ""


def test_soft_keeps_the_last_k_transcripts_rendered():
    buffer = Gate.parse("soft:2").strategy().reader_buffer()
    for day in ("01", "02", "03"):
        buffer.add(
            [
                Message(
                    speaker="principal",
                    role="user",
                    content=f"day {day}",
                    timestamp=f"2027-04-{day}T09:00:00",
                )
            ]
        )
    assert buffer.text() == "[2027-04-02] principal: day 02\n\n[2027-04-03] principal: day 03"
    assert Gate.parse("soft:2").strategy().reader_buffer() is not buffer  # one per replicate


def test_summary_gives_every_speaker_one_message_of_their_summary_lines():
    summarised = Gate.parse("summary:64").strategy().backend_messages(_messages(), "2027-04-01")
    assert [(m["speaker"], m["role"], m["timestamp"]) for m in summarised] == [
        ("principal", "user", "2027-04-01"),
        ("assistant", "assistant", "2027-04-01"),
    ]
    assert "Porto" in summarised[0]["content"]


def test_an_unregistered_kind_is_refused_naming_the_registered_forms():
    with pytest.raises(ValueError) as caught:
        Gate.parse("first:2")
    assert str(caught.value) == ("gate 'first:2' is not one of: hard, soft:K, summary:N (K, N > 0)")
    with pytest.raises(ValueError, match="unknown gate kind 'first'"):
        Gate("first", 2).strategy()


@pytest.mark.usefixtures("first_gate")
def test_a_registered_variant_parses_and_round_trips():
    gate = Gate.parse("first:3")
    assert gate == Gate("first", 3) and str(gate) == "first:3"
    arm = Arm.parse("bm25@first:3")
    assert arm.key == "bm25@first:3" and Arm.parse(arm.key) == arm
    assert isinstance(gate.strategy(), FirstMessages)
    for bad in ("first", "first:", "first:123", "first:x"):
        with pytest.raises(ValueError) as caught:
            Gate.parse(bad)
        assert str(caught.value).endswith(
            "is not one of: hard, soft:K, summary:N, first:N (K, N > 0)"
        )
    with pytest.raises(ValueError, match="must be > 0"):
        Gate.parse("first:0")
    with pytest.raises(ValueError, match="already registered"):
        register_gate("soft", FirstMessages, size_name="K")


@pytest.mark.usefixtures("first_gate")
def test_a_registered_variant_is_imported_lazily_from_its_path():
    register_gate("later", f"{__name__}:FirstMessages", size_name="N")
    assert isinstance(Gate.parse("later:1").strategy(), FirstMessages)
    register_gate("broken", "no_such_module_xyz:Gate")
    with pytest.raises(ValueError, match="gate 'broken': cannot import"):
        Gate.parse("broken").strategy()


@pytest.mark.usefixtures("first_gate")
def test_a_registered_variant_runs_through_the_loop(world: Path):
    def cell(gate: str):
        return run_cell(
            world,
            SCENARIO,
            "short",
            _support.REPLICATES,
            Arm(RECORDER, Gate.parse(gate)),
            config=LoopConfig(call_timeout=20.0, protect=(world,)),
        )

    plain, first = cell("hard"), cell("first:1")
    assert first.faults == [] and set(first.snapshots.column("gate").to_pylist()) == {"first:1"}
    final = {
        r["replicate"]: r["snapshot"]
        for r in first.snapshots.to_pylist()
        if r["session_index"] + 1 == _support.SESSIONS
    }
    full = {
        r["replicate"]: r["snapshot"]
        for r in plain.snapshots.to_pylist()
        if r["session_index"] + 1 == _support.SESSIONS
    }
    for replicate in range(_support.REPLICATES):
        gated = [json.loads(line) for line in final[replicate].splitlines()]
        whole = [json.loads(line) for line in full[replicate].splitlines()]
        assert [s["session_id"] for s in gated] == [s["session_id"] for s in whole]
        assert [s["messages"] for s in gated] == [min(1, s["messages"]) for s in whole]
    for row in first.retrievals.to_pylist():
        tally = f"sessions stored so far: {row['checkpoint']}"
        assert row["context"].endswith(f"\n\n{tally}")
        assert row["soft_buffer_tokens"] == count_tokens_lines(tally)
    # The transcripts' own costs are recorded as ever, against what the gate replaced.
    assert first.snapshots.column("transcript_tokens") == plain.snapshots.column(
        "transcript_tokens"
    )
