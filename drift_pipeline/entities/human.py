"""The ``human`` entity type: a principal with a personality, a life, and opinions (spec §3.2.1)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from . import _vocab as vocab
from ._canaries import HUMAN_CANARIES
from ._spec_common import EntityId, StrictModel, Weight, check_event_distribution
from ._types import ActionFrame, EntityTypeDef, EventTypeDef, SlotDef

_Trait = float


class BigFive(StrictModel):
    """Big Five personality scores in [0, 1]."""

    O: _Trait = Field(0.5, ge=0.0, le=1.0, description="Openness")  # noqa: E741
    C: _Trait = Field(0.5, ge=0.0, le=1.0, description="Conscientiousness")
    E: _Trait = Field(0.5, ge=0.0, le=1.0, description="Extraversion")
    A: _Trait = Field(0.5, ge=0.0, le=1.0, description="Agreeableness")
    N: _Trait = Field(0.5, ge=0.0, le=1.0, description="Neuroticism")


class CommunicationStyle(StrictModel):
    """How the entity writes; when absent it is derived from ``big_five``."""

    verbosity: Literal["terse", "moderate", "verbose"] | None = None
    formality: Literal["casual", "neutral", "formal"] | None = None
    references_prior_context: float | None = Field(
        None, ge=0.0, le=1.0, description="Chance a turn alludes to an earlier conversation."
    )


SLOTS: tuple[SlotDef, ...] = (
    SlotDef(
        "employer",
        "functional",
        vocab.EMPLOYERS,
        "Where does {name} work now?",
        "employer",
        action=ActionFrame(
            "preference_driven",
            "Draft the signature line for {name}'s work email: where do they work?",
            "Sign it with '{value}' as the employer",
            "Leave the employer out of the signature",
        ),
    ),
    SlotDef(
        "city",
        "functional",
        vocab.CITIES,
        "Which city does {name} live in now?",
        "home city",
        action=ActionFrame(
            "preference_driven",
            "{name} needs a new dentist. In which city should you search?",
            "Search for dentists in {value}",
            "Ask {name} where to search first",
        ),
    ),
    SlotDef(
        "relationship",
        "functional",
        vocab.RELATIONSHIP,
        "What is the current status of {name}'s romantic relationship?",
        "relationship status",
        recall_subtype="relationship",
    ),
    SlotDef(
        "health",
        "functional",
        vocab.HEALTH,
        "What is {name}'s current health situation?",
        "health",
        action=ActionFrame(
            "constraint_aware",
            "Plan a weekend activity for {name} that suits their health.",
            "Pick something that works for someone {value}",
            "Suggest a long hike",
        ),
    ),
    *(
        SlotDef(
            f"opinion/{key}",
            "functional",
            vocab.OPINIONS,
            f"What is {{name}}'s current view on {topic}?",
            f"view on {topic}",
        )
        for key, topic in vocab.OPINION_TOPICS.items()
    ),
    SlotDef(
        "habits",
        "set",
        vocab.HABITS,
        "Which habits has {name} built up?",
        "habits",
        action=ActionFrame(
            "preference_driven",
            "Suggest how {name} could spend a free Saturday morning, given their habits.",
            "Make time for {value}",
            "Suggest a museum visit",
        ),
    ),
    SlotDef(
        "constraints",
        "set",
        vocab.CONSTRAINTS,
        "Which constraints should you respect when planning for {name}?",
        "constraints",
        action=ActionFrame(
            "constraint_aware",
            "Book a team dinner that {name} will attend, respecting their constraints.",
            "Choose a place that respects this constraint: {value}",
            "Book the most popular steakhouse in town",
        ),
    ),
    *(
        SlotDef(
            f"preference/{key}",
            "functional",
            pool,
            f"What does {{name}} prefer when it comes to {topic}?",
            f"preference for {topic}",
            action=ActionFrame(
                "style_adaptive"
                if key in ("response_length", "format", "units")
                else "preference_driven",
                f"Prepare something for {{name}}, keeping in mind their preference for {topic}.",
                "Go with {value}",
                "Use your usual default",
            ),
        )
        for key, (topic, pool) in vocab.PREFERENCE_DIMENSIONS.items()
    ),
)

EVENT_TYPES: tuple[EventTypeDef, ...] = (
    EventTypeDef("job_change", "signal", ("employer",), 0.05, "Changes employer."),
    EventTypeDef(
        "relationship_change", "signal", ("relationship",), 0.04, "Relationship status changes."
    ),
    EventTypeDef(
        "opinion_shift",
        "signal",
        tuple(f"opinion/{key}" for key in vocab.OPINION_TOPICS),
        0.05,
        "Changes their view on a contested topic.",
    ),
    EventTypeDef("health_event", "signal", ("health",), 0.03, "A diagnosis, injury or recovery."),
    EventTypeDef("relocation", "signal", ("city",), 0.03, "Moves to another city."),
    EventTypeDef(
        "constraint_reveal", "signal", ("constraints",), 0.05, "Reveals a lasting constraint."
    ),
    EventTypeDef(
        "habit_form", "soft", ("habits",), 0.10, "A habit that shows up mention by mention."
    ),
    EventTypeDef(
        "preference_reveal",
        "soft",
        tuple(f"preference/{key}" for key in vocab.PREFERENCE_DIMENSIONS),
        0.10,
        "A preference that becomes clear over repeated mentions.",
    ),
)


class HumanProfile(StrictModel):
    """The latent profile of a human principal."""

    big_five: BigFive = Field(default_factory=BigFive)
    event_distribution: dict[str, Weight] = Field(
        default_factory=dict,
        description="Relative weight per event type; listed types override the defaults, "
        "0 disables one.",
    )
    communication_style: CommunicationStyle = Field(default_factory=CommunicationStyle)
    cultural_background: str | None = None
    core_values: list[str] = Field(default_factory=list)
    long_term_goals: list[str] = Field(default_factory=list)

    @field_validator("event_distribution")
    @classmethod
    def _known_events(cls, value: dict[str, float]) -> dict[str, float]:
        return check_event_distribution(value, (e.name for e in EVENT_TYPES), "human")


class HumanSpec(StrictModel):
    """A ``human`` entity in a scenario file."""

    id: EntityId
    type: Literal["human"]
    name: str | None = Field(None, description="Display name; drawn from the seed when absent.")
    profile: HumanProfile = Field(default_factory=HumanProfile)


HUMAN = EntityTypeDef(
    name="human",
    description="A human principal whose life changes over the trajectory.",
    spec_model=HumanSpec,
    stable_attributes=(
        "name",
        "big_five",
        "cultural_background",
        "communication_style",
        "core_values",
        "long_term_goals",
    ),
    slots=SLOTS,
    event_types=EVENT_TYPES,
    ground_truth_repr="The valid facts of every mutable-state slot at the checkpoint.",
    canaries=HUMAN_CANARIES,
)
