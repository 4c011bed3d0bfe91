"""Scenario-file fields shared by every entity type's spec model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

EntityId = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$",
        description="Used by topology and probes: a letter, then letters, digits, _ or -.",
    ),
]
Weight = Annotated[float, Field(ge=0.0, le=1.0)]
"""A relative event weight; the spec writes them as per-session probabilities in [0, 1]."""


class StrictModel(BaseModel):
    """Base for every scenario-file model: unknown keys are errors, not silently dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def check_event_distribution(
    distribution: dict[str, float], allowed: Iterable[str], type_name: str
) -> dict[str, float]:
    """Reject event-distribution keys the entity type does not define.

    Raises:
        ValueError: Naming the unknown key and the allowed ones.
    """
    allowed_names = tuple(allowed)
    unknown = [key for key in distribution if key not in allowed_names]
    if unknown:
        raise ValueError(
            f"unknown event type {unknown[0]!r} for {type_name}; "
            f"allowed: {', '.join(allowed_names)}"
        )
    return distribution
