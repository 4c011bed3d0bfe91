"""Latent profiles: who each entity is before any transcript exists (spec §3.2)."""

from __future__ import annotations

import random
from typing import Any

from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.scenario import ScenarioSpec

from ._model import EntityState

# Functional slots whose initial value is latent (true but never said), so that the first
# change can mention what it replaces without making the old value an answerable fact.
_INITIAL_SLOTS = {"employer": vocab.EMPLOYERS, "city": vocab.CITIES}


def _style(profile: Any) -> dict[str, object]:
    """Communication style: explicit fields win, the rest follow from Big Five scores."""
    big_five = profile.big_five
    declared = profile.communication_style
    verbosity = declared.verbosity or (
        "verbose" if big_five.E > 0.65 else "terse" if big_five.E < 0.35 else "moderate"
    )
    formality = declared.formality or (
        "formal"
        if big_five.C > 0.7
        else "casual"
        if big_five.O > 0.7 and big_five.C < 0.5
        else "neutral"
    )
    references = declared.references_prior_context
    if references is None:
        references = round(0.05 + 0.2 * big_five.C, 3)
    return {"verbosity": verbosity, "formality": formality, "references_prior_context": references}


def build_profiles(spec: ScenarioSpec, rng: random.Random) -> list[EntityState]:
    """Draw every entity's latent profile for one replicate."""
    profiles: list[EntityState] = []
    used_names: set[str] = set()
    for entity in spec.entities:
        if entity.type == "human":
            name = entity.name or _fresh_name(rng, used_names)
            stable: dict[str, object] = {
                "big_five": entity.profile.big_five.model_dump(),
                "communication_style": _style(entity.profile),
                "cultural_background": entity.profile.cultural_background,
                "core_values": list(entity.profile.core_values),
                "long_term_goals": list(entity.profile.long_term_goals),
            }
            initial: dict[str, object] = {
                slot: rng.choice(pool).text for slot, pool in _INITIAL_SLOTS.items()
            }
        else:
            name = entity.name or entity.id.replace("_", " ").title()
            stable = entity.model_dump(exclude={"id", "type", "name", "event_distribution"})
            initial = {}
        used_names.add(name)
        profiles.append(EntityState(entity.id, entity.type, name, stable, initial))
    return profiles


def _fresh_name(rng: random.Random, used: set[str]) -> str:
    while True:
        name = f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.SURNAMES)}"
        if name not in used:
            return name
