"""Selectivity from content: which sessions reached memory, signal and noise alike.

The world knows what each session carries (:func:`session_marks`): a signal or soft session the
value its event expressed, a noise session the decoy values its turns mention (values of the
world's slot pools that no event of the replicate ever gives and no entity holds: a cousin's
preference, a job someone might apply for some day). A session counts as *kept* when one of its
values occurs, word-bounded, in the memory's snapshot at the first checkpoint after it
(:func:`content_kept`). A signal session whose value no longer holds at that checkpoint is not
scored (a memory that let the value go did right), nor is a noise session without decoys, nor a
session after the last checkpoint (no snapshot follows it), nor a session whose values a later
session says again before that checkpoint: the value in memory could then come from the later
session, so it would credit a memory that forgets (a buffer of recent lines keeps a signal value
that noise keeps mentioning) with keeping this one.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterable
from functools import lru_cache
from typing import Final

import pyarrow as pa

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.memory import slot_values
from drift_pipeline.storage import table_fingerprint
from drift_pipeline.textmatch import normalise, occurs_in, runs_of

__all__ = ["CONTENT_KEPT", "content_kept", "session_marks"]

CONTENT_KEPT: Final = "content_kept"
"""The snapshots column :func:`content_kept` adds: kept (true), not kept (false), unscored."""

_MARKS_SCHEMA = pa.schema(
    [
        pa.field("replicate", pa.int32()),
        pa.field("session_index", pa.int32()),
        pa.field("tier", pa.string()),
        pa.field("phrases", pa.list_(pa.string())),
    ]
)


@lru_cache(maxsize=65536)
def _phrase_runs(phrase: str) -> frozenset[str]:
    return runs_of(normalise(phrase))


def _found(
    text: str,
    runs: frozenset[str],
    phrases: Iterable[str],
    seen: dict[str, bool] | None = None,
) -> bool:
    """Whether one of ``phrases`` occurs word-bounded in ``text`` (whose runs are ``runs``).

    Every letter-and-digit run of a word-bounded match is a run of the text, so the set test
    rejects most phrases before the text is searched. ``seen`` keeps each phrase's answer for
    this ``text`` (many sessions ask the same snapshot about the same values).
    """
    for phrase in phrases:
        if seen is not None and phrase in seen:
            hit = seen[phrase]
        else:
            need = _phrase_runs(phrase)
            hit = bool(need) and need <= runs and occurs_in(phrase, text)
            if seen is not None:
                seen[phrase] = hit
        if hit:
            return True
    return False


def _pools(latent_profiles: pa.Table) -> dict[str, tuple[str, ...]]:
    """Every value of every slot of the world's entity types: canonical text → spellings."""
    return slot_values(str(name) for name in latent_profiles.column("entity_type").to_pylist())


_TRUTH_COLUMNS = ["replicate", "checkpoint", "subject", "slot", "value", "current"]
_EVENT_COLUMNS = [
    "replicate",
    "session_index",
    "tier",
    "subject",
    "slot",
    "value",
    "previous_value",
]
_TURN_COLUMNS = ["replicate", "session_index", "content"]
# Marks of the last few worlds, by the content of what they are computed from: every cell of a
# world, and every stored arm read back, asks for the same world's marks.
_marks: BoundedCache[Hashable, pa.Table] = BoundedCache(4)


def session_marks(
    event_schedules: pa.Table,
    transcripts: pa.Table,
    ground_truth: pa.Table,
    latent_profiles: pa.Table,
) -> pa.Table:
    """What each scored session carries: ``replicate, session_index, tier, phrases``.

    Computed once per distinct input: the result is kept, keyed by a digest of the columns it
    reads and by the slot pools of the world's entity types.

    Args:
        event_schedules: The world's sessions (tier, subject, slot, value).
        transcripts: The world's turns (only the text of noise sessions is read).
        ground_truth: The world's facts per checkpoint (``current`` at each checkpoint).
        latent_profiles: The world's entities (their types give the slot pools).

    Returns:
        One row per scored session; sessions left out are not scored.
    """
    pool = _pools(latent_profiles)
    key = (
        table_fingerprint(event_schedules, _EVENT_COLUMNS),
        table_fingerprint(transcripts, _TURN_COLUMNS),
        table_fingerprint(ground_truth, _TRUTH_COLUMNS),
        tuple(pool.items()),
    )
    return _marks.get_or_build(
        key, lambda: _session_marks(event_schedules, transcripts, ground_truth, pool)
    )


def _session_marks(
    event_schedules: pa.Table,
    transcripts: pa.Table,
    ground_truth: pa.Table,
    pool: dict[str, tuple[str, ...]],
) -> pa.Table:
    current: set[tuple[int, int, str, str, str]] = set()
    held: dict[int, set[str]] = {}
    checkpoints: dict[int, list[int]] = {}
    for row in ground_truth.select(_TRUTH_COLUMNS).to_pylist():
        replicate = int(row["replicate"])
        held.setdefault(replicate, set()).add(str(row["value"]))
        checkpoints.setdefault(replicate, []).append(int(row["checkpoint"]))
        if row["current"]:
            current.add(
                (replicate, int(row["checkpoint"]), row["subject"], row["slot"], row["value"])
            )
    after = {r: sorted(set(c)) for r, c in checkpoints.items()}
    events = event_schedules.select(_EVENT_COLUMNS).to_pylist()
    for row in events:
        for name in ("value", "previous_value"):
            if row[name]:
                held.setdefault(int(row["replicate"]), set()).add(str(row[name]))
    turns: dict[tuple[int, int], list[str]] = {}
    for replicate, index, content in zip(
        transcripts.column("replicate").to_pylist(),
        transcripts.column("session_index").to_pylist(),
        transcripts.column("content").to_pylist(),
        strict=True,
    ):
        turns.setdefault((int(replicate), int(index)), []).append(str(content))
    # Each session's normalised text, its runs and the phrases already looked for in it.
    texts: dict[tuple[int, int], tuple[str, frozenset[str], dict[str, bool]]] = {}
    for where, lines in turns.items():
        text = normalise(" ".join(lines))
        texts[where] = (text, runs_of(text), {})
    out: dict[str, list[object]] = {name: [] for name in _MARKS_SCHEMA.names}
    for row in events:
        replicate, index, tier = int(row["replicate"]), int(row["session_index"]), row["tier"]
        cps = after.get(replicate, [])
        position = bisect.bisect_right(cps, index)
        if position == len(cps):
            continue  # no checkpoint follows the session
        checkpoint = cps[position]
        phrases: tuple[str, ...] = ()
        if tier in ("signal", "soft") and row["value"]:
            value = str(row["value"])
            fact = (replicate, checkpoint, str(row["subject"]), str(row["slot"]), value)
            if tier == "signal" and fact not in current:
                continue  # superseded before the checkpoint: letting it go is right
            phrases = pool.get(value, (value,))
        elif tier == "noise":
            text, runs, _ = texts.get((replicate, index), ("", frozenset(), {}))
            known = held.get(replicate, set())
            phrases = tuple(
                spelling
                for value, spellings in pool.items()
                if value not in known and _found(text, runs, spellings)
                for spelling in spellings
            )
        if not phrases or _said_again(texts, replicate, index, checkpoint, phrases):
            continue
        for name, item in (
            ("replicate", replicate),
            ("session_index", index),
            ("tier", tier),
            ("phrases", list(phrases)),
        ):
            out[name].append(item)
    return pa.Table.from_pydict(out, schema=_MARKS_SCHEMA)


def _said_again(
    texts: dict[tuple[int, int], tuple[str, frozenset[str], dict[str, bool]]],
    replicate: int,
    index: int,
    checkpoint: int,
    phrases: tuple[str, ...],
) -> bool:
    """Whether a session after ``index`` and before ``checkpoint`` says one of ``phrases``."""
    for later in range(index + 1, checkpoint):
        said = texts.get((replicate, later))
        if said is not None and _found(said[0], said[1], phrases, said[2]):
            return True
    return False


def content_kept(snapshots: pa.Table, marks: pa.Table) -> pa.Table:
    """``snapshots`` with :data:`CONTENT_KEPT`, null where a session is not scored.

    A marked session is kept when one of its phrases is in the memory's snapshot at the first
    checkpoint at or after it.

    Args:
        snapshots: An arm's ``memory_snapshots`` rows (``snapshot`` text at checkpoint rows).
        marks: :func:`session_marks` of the world.
    """
    wanted = {
        (int(r), int(i)): list(p)
        for r, i, p in zip(
            marks.column("replicate").to_pylist(),
            marks.column("session_index").to_pylist(),
            marks.column("phrases").to_pylist(),
            strict=True,
        )
    }
    replicates = snapshots.column("replicate").to_pylist()
    indices = snapshots.column("session_index").to_pylist()
    is_checkpoint = snapshots.column("checkpoint").to_pylist()
    texts = snapshots.column("snapshot")
    stops: dict[int, list[tuple[int, int]]] = {}  # replicate → (session_index, row) of snapshots
    for row, (replicate, index, flag) in enumerate(
        zip(replicates, indices, is_checkpoint, strict=True)
    ):
        if flag:
            stops.setdefault(int(replicate), []).append((int(index), row))
    for rows in stops.values():
        rows.sort()
    prepared: dict[int, tuple[str, frozenset[str], dict[str, bool]]] = {}
    kept: list[bool | None] = []
    for replicate, index in zip(replicates, indices, strict=True):
        phrases = wanted.get((int(replicate), int(index)))
        rows = stops.get(int(replicate), [])
        position = bisect.bisect_left(rows, (int(index), -1))
        if phrases is None or position == len(rows):
            kept.append(None)
            continue
        row = rows[position][1]
        if row not in prepared:
            text = normalise(str(texts[row].as_py() or ""))
            prepared[row] = (text, runs_of(text), {})
        text, runs, seen = prepared[row]
        kept.append(_found(text, runs, phrases, seen))
    column = pa.array(kept, pa.bool_())
    if CONTENT_KEPT in snapshots.column_names:
        return snapshots.set_column(
            snapshots.column_names.index(CONTENT_KEPT), CONTENT_KEPT, column
        )
    return snapshots.append_column(CONTENT_KEPT, column)
