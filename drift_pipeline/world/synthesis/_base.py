"""The synthesizer interface: turn one planned session into transcript turns (spec §3.5)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from drift_pipeline.world._model import EntityState, SessionPlan, Turn


@dataclass(frozen=True)
class SessionContext:
    """What a synthesizer may know when writing one session.

    Attributes:
        profiles: Latent profiles by entity id (style, name, stable attributes).
        current: Values holding now per (subject, slot), for realistic noise.
        rng: The session's own seeded generator (independent of other sessions).
    """

    profiles: dict[str, EntityState]
    current: dict[tuple[str, str], tuple[str, ...]]
    rng: random.Random


class Synthesizer(Protocol):
    """Writes transcripts. The template synthesizer is the offline default; an LLM one plugs in.

    Implementations must express a session's event (if any) in at least one turn labelled with
    its event id, keep noise sessions free of events, and never put labels into message text.
    """

    name: str
    version: str

    def session(self, plan: SessionPlan, context: SessionContext) -> list[Turn]:
        """Write the turns of one session."""
        ...
