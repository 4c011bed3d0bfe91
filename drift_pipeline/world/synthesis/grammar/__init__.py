"""The phrasing grammar: stems × frames = families, partitioned into public and held-out splits.

Stems are the clauses that carry an event or a decoy, per slot family or decoy kind; frames say
how a clause sits in a turn (its syntactic frame, register and discourse position). Families are
composed into flat tables at import (:func:`tables_for`), one table per split.
"""

from __future__ import annotations

from ._compile import (
    ALL_DECOY_FAMILIES,
    ALL_EVENT_FAMILIES,
    Family,
    SplitTables,
    fields_of,
    tables_for,
)
from ._decoys import DECOY_STEMS, WHO
from ._frames import (
    CORRECTION_CUES,
    DECOY_FRAMES,
    EVENT_FRAMES,
    HEDGES,
    LEAD_INS,
    MID_TAILS,
    STILL,
    TYPOS,
)
from ._split import SALT_ENV, PhrasingSplit, split_from_env
from ._stems import CONFIRM_PROMPTS, CONSTRAINT_PHRASES, STEMS, TOPIC_WORDS, WHEN

__all__ = [
    "ALL_DECOY_FAMILIES",
    "ALL_EVENT_FAMILIES",
    "CONFIRM_PROMPTS",
    "CONSTRAINT_PHRASES",
    "CORRECTION_CUES",
    "DECOY_FRAMES",
    "DECOY_STEMS",
    "EVENT_FRAMES",
    "HEDGES",
    "LEAD_INS",
    "MID_TAILS",
    "SALT_ENV",
    "STEMS",
    "STILL",
    "TOPIC_WORDS",
    "TYPOS",
    "WHEN",
    "WHO",
    "Family",
    "PhrasingSplit",
    "SplitTables",
    "fields_of",
    "split_from_env",
    "tables_for",
]
