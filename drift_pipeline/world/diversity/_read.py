"""Reading the sentences an audit needs from generated worlds' Parquet tables."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from drift_pipeline.entities import entity_types
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    LATENT_PROFILES,
    TRANSCRIPTS,
    RootLike,
    StorageRoot,
)
from drift_pipeline.textmatch import contains_any

from ._skeleton import sentences, skeleton

DECOY_KINDS = ("third_party", "hypothetical", "question", "sarcasm", "small_talk")
"""The decoy kinds the synthesizer labels turns with."""


@dataclass
class WorldText:
    """What the diversity audit reads from one or more world roots.

    Attributes:
        events: Per event type: the skeletons of event sentences (those of an event turn that
            say the value and that no routine turn also has).
        decoys: Per decoy kind: the skeletons of decoy sentences (not also in routine turns).
        event_turns: (event type, slot, value, turn text) of every event turn.
        decoy_turns: (decoy kind, turn text) of every decoy turn.
        worlds: How many (scenario, horizon, replicate) worlds were read.
    """

    events: dict[str, list[str]] = field(default_factory=dict)
    decoys: dict[str, list[str]] = field(default_factory=dict)
    event_turns: list[tuple[str, str, str, str]] = field(default_factory=list)
    decoy_turns: list[tuple[str, str]] = field(default_factory=list)
    worlds: int = 0


@lru_cache(maxsize=1)
def _aliases() -> dict[tuple[str, str], tuple[str, ...]]:
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for definition in entity_types():
        for slot in definition.slots:
            for value in slot.values:
                found.setdefault((slot.name, value.text), value.all_aliases())
    return found


def _rows(root: StorageRoot, sql: str) -> list[tuple[object, ...]]:
    con = root.duckdb_connect()
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


def read_worlds(roots: Iterable[RootLike]) -> WorldText:
    """Event and decoy sentences of every world under ``roots``.

    Raises:
        FileNotFoundError: If a root holds no transcripts or no event schedules.
    """
    text = WorldText()
    task_skeletons: set[str] = set()
    decoy_sentences: list[tuple[str, str]] = []
    event_sentences: list[tuple[str, str]] = []
    aliases = _aliases()
    for given in roots:
        root = StorageRoot.from_url(given)
        for table in (TRANSCRIPTS, EVENT_SCHEDULES):
            if not root.has_table(table):
                raise FileNotFoundError(f"{root}: no {table.name} table (not a world root)")
        events = {
            (row[0], row[1], row[2], row[3]): (str(row[4]), str(row[5]), str(row[6]))
            for row in _rows(
                root,
                "select scenario, horizon, replicate, event_id, event_type, slot, value "
                f"from read_parquet('{root.glob(EVENT_SCHEDULES)}') where event_id is not null",
            )
        }
        names = tuple(
            str(row[0]).split()[0]
            for row in _rows(
                root,
                f"select distinct name from read_parquet('{root.glob(LATENT_PROFILES)}') "
                "where entity_type = 'human'",
            )
        )
        text.worlds += len(
            _rows(
                root,
                "select distinct scenario, horizon, replicate "
                f"from read_parquet('{root.glob(TRANSCRIPTS)}')",
            )
        )
        turns = _rows(
            root,
            "select scenario, horizon, replicate, label_event_id, label_kind, content "
            f"from read_parquet('{root.glob(TRANSCRIPTS)}') where role = 'user'",
        )
        for scenario, horizon, replicate, event_id, kind, content in turns:
            body = str(content)
            if kind == "event" and event_id is not None:
                event_type, slot, value = events[(scenario, horizon, replicate, event_id)]
                text.event_turns.append((event_type, slot, value, body))
                said = aliases.get((slot, value), (value,))
                for sentence in sentences(body):
                    if contains_any(sentence, said):
                        event_sentences.append((event_type, skeleton(sentence, names)))
            elif kind in DECOY_KINDS:
                text.decoy_turns.append((str(kind), body))
                decoy_sentences.extend(
                    (str(kind), skeleton(sentence, names)) for sentence in sentences(body)
                )
            else:
                task_skeletons.update(skeleton(sentence, names) for sentence in sentences(body))
    # Event and decoy turns also hold their routine request (which may name a value, "miles"):
    # only sentences that routine turns never show count.
    for groups, found in ((text.events, event_sentences), (text.decoys, decoy_sentences)):
        for group, shape in found:
            if shape not in task_skeletons:
                groups.setdefault(group, []).append(shape)
    return text
