"""Selectivity from content: session marks, kept flags, and what they make of simple memories."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from drift_pipeline.evaluation import (
    ArmData,
    compute_cell,
    content_kept,
    session_marks,
)
from drift_pipeline.textmatch import normalise, phrase_pattern

# One replicate, four sessions, one checkpoint after session 3 (ground truth checkpoint 4):
# 0 signal: moved to Lisbon (still true at the checkpoint)
# 1 noise: a cousin works at Globex Logistics (a decoy: nobody holds it)
# 2 signal: joined Contoso Health, then 3 signal: left it for Northwind Traders (so session 2's
#   value no longer holds at the checkpoint and is not scored)
EVENTS = [
    (0, "signal", "principal", "city", "Lisbon", "Porto"),
    (1, "noise", None, None, None, None),
    (2, "signal", "principal", "employer", "Contoso Health", "Fabrikam Robotics"),
    (3, "signal", "principal", "employer", "Northwind Traders", "Contoso Health"),
]
TURNS = [
    (0, "I moved to Lisbon last week."),
    (1, "My cousin just started at Globex Logistics, wild."),
    (1, "Anyway, how do I roast potatoes?"),
    (2, "I joined Contoso Health."),
    (3, "I left Contoso for Northwind Traders."),
]
FACTS = [
    (4, "principal", "city", "Lisbon", True),
    (4, "principal", "employer", "Northwind Traders", True),
    (4, "principal", "employer", "Contoso Health", False),
    (4, "principal", "employer", "Fabrikam Robotics", False),
    (4, "principal", "city", "Porto", False),
]


def _world(turns: list[tuple[int, str]] = TURNS) -> pa.Table:
    events = pa.Table.from_pylist(
        [
            dict(
                zip(
                    ("session_index", "tier", "subject", "slot", "value", "previous_value"),
                    row,
                    strict=True,
                ),
                replicate=0,
            )
            for row in EVENTS
        ]
    )
    transcripts = pa.Table.from_pylist(
        [{"replicate": 0, "session_index": i, "content": text} for i, text in turns]
    )
    truth = pa.Table.from_pylist(
        [
            dict(
                zip(("checkpoint", "subject", "slot", "value", "current"), row, strict=True),
                replicate=0,
            )
            for row in FACTS
        ]
    )
    principal = {"entity_id": "principal", "name": "Rhiannon Price", "entity_type": "human"}
    profiles = pa.Table.from_pylist([{"replicate": 0, **principal}])
    return session_marks(events, transcripts, truth, profiles)


def test_marks_name_each_sessions_values_and_leave_out_superseded_signal() -> None:
    marks = {row["session_index"]: row for row in _world().to_pylist()}
    assert sorted(marks) == [0, 1, 3]  # session 2's Contoso no longer holds at the checkpoint
    assert marks[0]["phrases"] == ["Lisbon"]
    assert "Globex Logistics" in marks[1]["phrases"] and marks[1]["tier"] == "noise"
    assert "Northwind" in marks[3]["phrases"]


def test_a_session_whose_values_a_later_session_says_again_is_not_scored() -> None:
    # Lisbon said again in noise (session 1) and Globex again in session 2, both before the
    # checkpoint: a memory could hold either from the later session alone, so keeping it says
    # nothing about sessions 0 and 1. Northwind, said only in session 3, is still scored.
    turns = [
        *TURNS,
        (1, "My sister says Lisbon is overrated."),
        (2, "Globex Logistics rang my cousin again."),
    ]
    marks = {row["session_index"]: row for row in _world(turns).to_pylist()}
    assert sorted(marks) == [3]
    # Said again only by the session itself (two turns of one session): still scored.
    again = [*TURNS, (0, "Lisbon is home now.")]
    assert sorted(row["session_index"] for row in _world(again).to_pylist()) == [0, 1, 3]


def _snapshots(final: str) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for index, (_, tier, *_rest) in enumerate(EVENTS):
        rows.append(
            {
                "replicate": 0,
                "session_index": index,
                "tier": tier,
                "write_tokens": 0,
                "storage_tokens": 10,
                "storage_delta_tokens": 10 if index == 0 else 0,
                "write_ms": 1.0,
                "checkpoint": index == 3,
                "snapshot": final if index == 3 else None,
                "error": None,
            }
        )
    return pa.Table.from_pylist(rows)


def _parts(snapshots: pa.Table, checkpoint: int) -> tuple[float | None, float | None, float | None]:
    """Selectivity, noise TNR and signal FNR of an arm with these snapshots and one probe."""
    answers = pa.Table.from_pylist(
        [
            {
                "replicate": 0,
                "checkpoint": checkpoint,
                "probe_id": "p1",
                "probe_type": "recall",
                "subtype": "fact",
                "correct": True,
            }
        ]
    )
    retrievals = pa.Table.from_pylist(
        [
            {
                "replicate": 0,
                "checkpoint": checkpoint,
                "probe_id": "p1",
                "read_ms": 1.0,
                "read_tokens": 10,
                "llm_read_tokens": 0,
            }
        ]
    )
    arm = ArmData(answers, snapshots, retrievals)
    amnesiac = answers.set_column(5, "correct", pa.array([False]))
    cell = compute_cell(arm, amnesiac, arm, "short")
    return tuple(  # type: ignore[return-value]
        cell.get(name).value for name in ("selectivity", "noise_tnr", "signal_fnr")
    )


def _selectivity(final: str) -> tuple[float | None, float | None, float | None]:
    return _parts(content_kept(_snapshots(final), _world()), 4)


def test_content_not_storage_growth_decides() -> None:
    transcript = "\n".join(text for _, text in TURNS)
    # Every memory below grows by the same tokens; only what it holds differs.
    everything = _selectivity(transcript)
    nothing = _selectivity("")
    selective = _selectivity("Lives in Lisbon. Works at Northwind Traders.")
    noisy = _selectivity("Cousin works at Globex Logistics.")
    assert everything == (0.5, 0.0, 0.0)  # keeps every signal, stores the noise
    assert nothing == (0.5, 1.0, 1.0)  # keeps nothing
    assert selective == (1.0, 1.0, 0.0)
    assert noisy == (0.0, 0.0, 1.0)
    # Two summaries of the same size no longer score alike.
    assert selective[0] != noisy[0]
    # Sessions are compared within age bands: Lisbon (3 sessions before the checkpoint) with the
    # noise (2 before); Northwind, right before it, has no noise of its age to be compared with.
    assert _selectivity("Works at Northwind Traders.")[0] == pytest.approx(0.5)
    assert _selectivity("Lives in Lisbon.")[0] == pytest.approx(1.0)


def test_a_value_inside_a_longer_word_is_not_kept() -> None:
    assert _selectivity("Lisbonese food; Northwindish")[2] == 1.0


def test_kept_flags_match_a_pattern_search_of_each_snapshot() -> None:
    # Several sessions ask the same checkpoint snapshot about the same phrases (answers are
    # kept per snapshot); every flag must still be what a fresh pattern search says.
    marks = pa.Table.from_pylist(
        [
            {"replicate": 0, "session_index": i, "tier": "signal", "phrases": phrases}
            for i, phrases in enumerate(
                [["Lisbon"], ["Porto"], ["Lisbon", "Porto"], ["(net)"], ["Lisbon"], ["Porto"]]
            )
        ]
    )
    texts = {2: "Moved to LISBON — for good.", 5: "Portos; net (net) only"}
    snapshots = pa.Table.from_pylist(
        [
            {
                "replicate": 0,
                "session_index": i,
                "checkpoint": i in texts,
                "snapshot": texts.get(i),
            }
            for i in range(6)
        ]
    )
    kept = content_kept(snapshots, marks).column("content_kept").to_pylist()
    expected = []
    for i, phrases in enumerate(marks.column("phrases").to_pylist()):
        text = normalise(texts[2 if i <= 2 else 5])
        expected.append(any(phrase_pattern(p).search(text) for p in phrases))
    assert kept == expected == [True, False, True, True, False, False]


def test_marks_are_kept_per_content_and_recomputed_when_it_changes() -> None:
    from drift_pipeline.evaluation import _selectivity

    first = _world()
    assert _world() is first  # same content: the kept table
    # Change one transcript: the noise session no longer mentions its decoy.
    events = pa.Table.from_pylist(
        [
            dict(
                zip(
                    ("session_index", "tier", "subject", "slot", "value", "previous_value"),
                    row,
                    strict=True,
                ),
                replicate=0,
            )
            for row in EVENTS
        ]
    )
    quiet = pa.Table.from_pylist(
        [
            {"replicate": 0, "session_index": i, "content": "nothing" if i == 1 else text}
            for i, text in TURNS
        ]
    )
    truth = pa.Table.from_pylist(
        [
            dict(
                zip(("checkpoint", "subject", "slot", "value", "current"), row, strict=True),
                replicate=0,
            )
            for row in FACTS
        ]
    )
    profiles = pa.Table.from_pylist(
        [{"replicate": 0, "entity_id": "principal", "name": "R", "entity_type": "human"}]
    )
    changed = session_marks(events, quiet, truth, profiles)
    assert 1 not in changed.column("session_index").to_pylist()
    uncached = _selectivity._session_marks(events, quiet, truth, _selectivity._pools(profiles))
    assert changed.equals(uncached)


def _cell_from_kept(kept_from: int) -> tuple[float, float, float]:
    """Selectivity parts of a memory that holds exactly the sessions from ``kept_from`` on.

    Twenty sessions, one checkpoint after the last: noise at the even sessions, signal at the
    odd ones from 11 (signal sits nearer the checkpoint, as superseded and repeated signal is
    not scored).
    """
    rows: list[dict[str, Any]] = []
    for index in range(20):
        tier = "noise" if index % 2 == 0 else "signal" if index >= 11 else "soft"
        rows.append(
            {
                "replicate": 0,
                "session_index": index,
                "tier": tier,
                "write_tokens": 0,
                "storage_tokens": 10,
                "storage_delta_tokens": 0,
                "write_ms": 1.0,
                "checkpoint": index == 19,
                "snapshot": None,
                "error": None,
                "content_kept": None if tier == "soft" else index >= kept_from,
            }
        )
    return _parts(pa.Table.from_pylist(rows), 20)  # type: ignore[return-value]


def test_keeping_only_what_is_recent_is_not_selectivity() -> None:
    everything = _cell_from_kept(0)
    recent = _cell_from_kept(12)
    assert everything[0] == pytest.approx(0.5)
    # Over all sessions the recent-only memory keeps 4/5 signal and drops 6/10 noise (0.70);
    # within bands of like age it keeps both alike, up to the spread inside a band.
    assert recent[1:] == (pytest.approx(0.6), pytest.approx(0.2))
    assert recent[0] == pytest.approx((2 * 0.5 + 4 * 0.5 + 6 * 0.625) / 12)
    assert _cell_from_kept(20)[0] == pytest.approx(0.5)  # keeps nothing


def test_a_replicate_without_a_checkpoint_snapshot_scores_no_session() -> None:
    rows = [
        {
            "replicate": 0,
            "session_index": index,
            "tier": "noise" if index % 2 == 0 else "signal",
            "write_tokens": 0,
            "storage_tokens": 10,
            "storage_delta_tokens": 0,
            "write_ms": 1.0,
            "checkpoint": False,
            "snapshot": None,
            "error": None,
            "content_kept": True,
        }
        for index in range(4)
    ]
    assert _parts(pa.Table.from_pylist(rows), 4)[0] is None
