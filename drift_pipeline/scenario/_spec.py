"""Pydantic models of a scenario file (spec §3.1)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Field, ValidationInfo, field_validator, model_validator

from drift_pipeline.entities import entity_types
from drift_pipeline.entities._spec_common import EntityId, StrictModel
from drift_pipeline.keys import HORIZON_NAMES as HORIZON_NAMES
from drift_pipeline.keys import HorizonName as HorizonName

Paradigm = Literal["user_assistant", "coding_agent", "crawler_agent", "multi_peer"]
MemoryReads = Literal["session_start", "user_turn"]
"""When the agent consults memory in each session: at its start, or before every user turn."""
InteractionPattern = Literal["linear", "broadcast", "mesh", "hierarchical", "async"]
ProbeType = Literal[
    "recall", "action", "revision", "frontier", "consistency", "attribution", "canary", "handoff"
]

PARADIGM_PROBE_TYPES: dict[str, tuple[str, ...]] = {
    "user_assistant": ("recall", "action", "revision"),
    "coding_agent": ("recall", "action", "revision", "frontier"),
    "crawler_agent": ("recall", "action", "revision", "frontier"),
    "multi_peer": (
        "recall",
        "action",
        "revision",
        "frontier",
        "consistency",
        "attribution",
        "canary",
        "handoff",
    ),
}
"""Probe types each paradigm defines (spec §6)."""

_DEFAULT_PROBE_TYPES: tuple[ProbeType, ...] = ("recall", "action", "revision")
_RATIO_TOLERANCE = 1e-6


class HorizonSpec(StrictModel):
    """One horizon's trajectory: how many sessions, and the simulated gap between them."""

    sessions: int = Field(gt=0, le=100_000)
    session_gap_hours: float | None = Field(None, gt=0, le=24 * 365)
    session_gap_days: float | None = Field(None, gt=0, le=3650)

    @model_validator(mode="after")
    def _one_gap(self) -> HorizonSpec:
        if (self.session_gap_hours is None) == (self.session_gap_days is None):
            raise ValueError("give exactly one of session_gap_hours or session_gap_days")
        return self

    @property
    def gap(self) -> timedelta:
        """The simulated time between consecutive sessions."""
        if self.session_gap_hours is not None:
            return timedelta(hours=self.session_gap_hours)
        assert self.session_gap_days is not None  # guaranteed by _one_gap
        return timedelta(days=self.session_gap_days)


class Horizons(StrictModel):
    """The horizons a scenario runs; each is its own trajectory."""

    short: HorizonSpec | None = None
    medium: HorizonSpec | None = None
    long: HorizonSpec | None = None

    @model_validator(mode="after")
    def _at_least_one(self) -> Horizons:
        if not self.items():
            raise ValueError("declare at least one of short, medium, long")
        return self

    def items(self) -> list[tuple[HorizonName, HorizonSpec]]:
        """Return the declared horizons in short → long order."""
        return [(name, spec) for name in HORIZON_NAMES if (spec := getattr(self, name)) is not None]


class TopologyEntry(StrictModel):
    """Who is active in a range of sessions and how they interact (spec §4.1)."""

    session_range: tuple[int, int] = Field(
        description="[first, last] session index, 0-based and inclusive; -1 means the last session."
    )
    active: list[EntityId] = Field(min_length=1)
    pattern: InteractionPattern = "linear"
    every: int = Field(
        1,
        ge=1,
        le=10_000,
        description="Applies to every K-th session of the range only (1: every session), so "
        "entries can interleave: private sessions, then a joint one every third session.",
    )
    offset: int = Field(
        0,
        ge=0,
        le=10_000,
        description="With every: K, the first session it applies to is the range's first plus "
        "this offset.",
    )

    @field_validator("session_range", mode="before")
    @classmethod
    def _list_as_tuple(cls, value: object) -> object:
        # YAML writes `[0, -1]` as a list; files are validated strictly, which wants a tuple.
        return tuple(value) if isinstance(value, list) else value

    @field_validator("session_range")
    @classmethod
    def _ordered(cls, value: tuple[int, int]) -> tuple[int, int]:
        first, last = value
        if first < 0:
            raise ValueError("the first session index must be ≥ 0")
        if last < -1 or (last != -1 and last < first):
            raise ValueError("the last session index must be -1 or ≥ the first")
        return value


class CheckpointSpec(StrictModel):
    """When probes are asked: after a given session count, or every K sessions."""

    after_session: int | None = Field(None, ge=1, description="Probe after this many sessions.")
    every: int | None = Field(None, ge=1, description="Probe after every K sessions.")
    probe_types: list[ProbeType] = Field(default_factory=lambda: list(_DEFAULT_PROBE_TYPES))

    @model_validator(mode="after")
    def _one_trigger(self) -> CheckpointSpec:
        if (self.after_session is None) == (self.every is None):
            raise ValueError("give exactly one of after_session or every")
        return self


def _entity_union() -> Any:
    models = tuple(entity_type.spec_model for entity_type in entity_types())
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007


if TYPE_CHECKING:
    # The runtime union is built from the registry, which a type checker cannot follow; it sees
    # the built-in types, so `if entity.type == "human":` narrows to HumanSpec.
    from drift_pipeline.entities.assistant import AssistantSpec
    from drift_pipeline.entities.coding import CodingAgentSpec
    from drift_pipeline.entities.human import HumanSpec
    from drift_pipeline.entities.tool import ToolAgentSpec

    EntitySpec = HumanSpec | AssistantSpec | CodingAgentSpec | ToolAgentSpec
else:
    EntitySpec = _entity_union()
    """Any registered entity type's spec model, chosen by its ``type`` key."""


class ScenarioSpec(StrictModel):
    """A DRIFT scenario: a declarative description from which a whole world is generated."""

    id: str = Field(
        # A leading letter: DuckDB's hive partitioning would read an all-digit id as a number.
        pattern=r"^[a-z][a-z0-9._-]{0,79}$",
        description="Scenario id: a lower-case letter, then letters, digits, '.', '_' or '-' "
        "(at most 80).",
    )
    version: str = Field(
        "1",
        description="Recorded in every result, bump when the file changes.",
        # YAML users write `version: 2`; the validator below reads numbers as their text.
        json_schema_extra={"type": ["string", "number"]},
    )
    description: str | None = None
    paradigm: Paradigm
    seed: int | None = Field(
        None, ge=0, lt=2**63, description="Root seed; derived from the id when absent."
    )
    replicates: int = Field(4, ge=1, le=64, description="Independent seeds per horizon.")
    horizon: Horizons
    noise_ratio: float = Field(ge=0.0, le=0.95, description="Share of sessions with no event.")
    signal_ratio: float | None = Field(None, ge=0.0, le=1.0)
    soft_ratio: float | None = Field(None, ge=0.0, le=1.0)
    soft_signal_mentions: int = Field(
        3, ge=1, le=10, description="Mentions before a soft-signal preference enters ground truth."
    )
    probes_per_checkpoint: int = Field(
        120,
        ge=4,
        le=5000,
        description="Cap per checkpoint and replicate; sampled deterministically.",
    )
    entities: list[EntitySpec] = Field(min_length=1)
    principal: EntityId | None = Field(
        None,
        description="The entity whose objective and constraints are the ground truth: by "
        "default the first human. A world of agents only names the agent that issued the "
        "objective here (spec §4.3.4).",
    )
    topology: list[TopologyEntry] = Field(default_factory=list)
    checkpoints: list[CheckpointSpec] = Field(default_factory=list)
    memory_reads: MemoryReads = Field(
        "session_start",
        description="When the agent reads its memory in a session (spec §5.1 step 4): "
        "'session_start', once, with the opening user message as the query, or 'user_turn', "
        "before every user message. Sets Q_rate (retrieves per session); nothing scored on "
        "probes depends on it.",
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        # YAML reads `version: 2` as an int and `version: 1.1` as a float; both mean the text.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    # The shares are checked on the field the user wrote last, so the error names a field
    # rather than the whole file; pydantic validates fields in declaration order.
    @field_validator("signal_ratio")
    @classmethod
    def _signal_fits(cls, value: float | None, info: ValidationInfo) -> float | None:
        noise = info.data.get("noise_ratio")
        if value is not None and noise is not None and value > 1.0 - noise + _RATIO_TOLERANCE:
            raise ValueError(
                f"must be at most 1 - noise_ratio = {1.0 - noise:.3g} (got {value:.3g})"
            )
        return value

    @field_validator("soft_ratio")
    @classmethod
    def _soft_fits(cls, value: float | None, info: ValidationInfo) -> float | None:
        noise = info.data.get("noise_ratio")
        if value is None or noise is None or "signal_ratio" not in info.data:
            return value  # an invalid noise_ratio or signal_ratio is reported on its own
        signal = info.data["signal_ratio"]
        if signal is None:
            if value > 1.0 - noise + _RATIO_TOLERANCE:
                raise ValueError(
                    f"must be at most 1 - noise_ratio = {1.0 - noise:.3g} (got {value:.3g})"
                )
        elif abs(signal + value + noise - 1.0) > _RATIO_TOLERANCE:
            raise ValueError(
                f"signal_ratio + soft_ratio + noise_ratio must be 1 "
                f"(got {signal:.3g} + {value:.3g} + {noise:.3g})"
            )
        return value

    def tier_ratios(self) -> tuple[float, float, float]:
        """Return (signal, soft, noise) shares, defaulting to 1/3 and 2/3 of the non-noise share.

        Raises:
            ValueError: If the three shares do not add up to 1 (only possible for a spec built
                without validation, e.g. with ``model_construct``).

        """
        rest = 1.0 - self.noise_ratio
        signal, soft = self.signal_ratio, self.soft_ratio
        if signal is None and soft is None:
            signal, soft = rest / 3.0, rest * 2.0 / 3.0
        elif signal is None:
            assert soft is not None
            signal = rest - soft
        elif soft is None:
            soft = rest - signal
        off = abs(signal + soft + self.noise_ratio - 1.0)
        if signal < -_RATIO_TOLERANCE or soft < -_RATIO_TOLERANCE or off > _RATIO_TOLERANCE:
            raise ValueError(
                f"signal_ratio + soft_ratio + noise_ratio must be 1 "
                f"(got {signal:.3g} + {soft:.3g} + {self.noise_ratio:.3g})"
            )
        return max(signal, 0.0), max(soft, 0.0), self.noise_ratio

    def entity(self, entity_id: str) -> EntitySpec:
        """Return the entity spec with this id.

        Raises:
            KeyError: If no entity has this id.

        """
        for entity in self.entities:
            if entity.id == entity_id:
                return entity
        raise KeyError(f"scenario {self.id!r} has no entity {entity_id!r}")
