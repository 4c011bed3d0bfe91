"""Gate and arm parsing: the one place where ``hard``, ``soft:K``, ``summary:N`` are read."""

from __future__ import annotations

import pytest

from drift_pipeline.memory import Arm, Gate


@pytest.mark.parametrize(
    ("text", "kind", "size"),
    [
        ("hard", "hard", 0),
        ("  hard\n", "hard", 0),
        ("soft:1", "soft", 1),
        ("soft:3", "soft", 3),
        ("soft:9999", "soft", 9999),
        ("summary:64", "summary", 64),
        ("summary:512", "summary", 512),
        ("summary:999999", "summary", 999999),
    ],
)
def test_gates_parse(text: str, kind: str, size: int):
    gate = Gate.parse(text)
    assert (gate.kind, gate.size) == (kind, size)
    assert Gate.parse(str(gate)) == gate


def test_gate_text_round_trips():
    assert str(Gate("hard")) == "hard"
    assert str(Gate("soft", 2)) == "soft:2"
    assert str(Gate("summary", 64)) == "summary:64"
    assert Gate("hard") == Gate.parse("hard") and hash(Gate("soft", 2)) == hash(
        Gate.parse("soft:2")
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "bogus",
        "Hard",
        "SOFT:2",
        "soft",
        "soft:",
        "soft:-1",
        "soft:2.5",
        "soft: 2",
        "soft:12345",
        "summary",
        "summary:1234567",
        "hard:2",
        "soft:2:3",
        "summary:64k",
    ],
)
def test_bad_gates_are_refused_with_the_accepted_forms(text: str):
    with pytest.raises(ValueError) as caught:
        Gate.parse(text)
    message = str(caught.value)
    assert "\n" not in message
    assert repr(text) in message
    assert "hard, soft:K, summary:N" in message


@pytest.mark.parametrize("text", ["soft:0", "summary:0", "soft:0000"])
def test_zero_sizes_are_refused(text: str):
    with pytest.raises(ValueError, match=r"must be > 0"):
        Gate.parse(text)


@pytest.mark.parametrize(
    ("key", "backend", "gate"),
    [
        ("bm25@hard", "bm25", Gate("hard")),
        ("full_context@soft:2", "full_context", Gate("soft", 2)),
        ("reference_compressor@summary:64", "reference_compressor", Gate("summary", 64)),
        ("plugins.keeper:RecentLines@hard", "plugins.keeper:RecentLines", Gate("hard")),
        ("my_pkg.memory:Backend@soft:3", "my_pkg.memory:Backend", Gate("soft", 3)),
    ],
)
def test_arms_parse_and_round_trip(key: str, backend: str, gate: Gate):
    arm = Arm.parse(key)
    assert arm == Arm(backend, gate)
    assert arm.key == key
    assert Arm.parse(arm.key) == arm


@pytest.mark.parametrize("key", ["bm25", "@hard", "bm25@", "bm25@bogus", "bm25@soft:0", ""])
def test_bad_arms_are_refused(key: str):
    with pytest.raises(ValueError) as caught:
        Arm.parse(key)
    assert "\n" not in str(caught.value)


def test_arms_are_distinct_by_backend_and_gate():
    arms = {Arm.parse(k) for k in ("bm25@hard", "bm25@soft:2", "amnesiac@hard", "bm25@hard")}
    assert len(arms) == 3
