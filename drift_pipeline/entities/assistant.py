"""The ``assistant_agent`` entity type: an assistant and its principal model (spec §3.2.2)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from . import _vocab as vocab
from ._canaries import AGENT_CANARIES
from ._spec_common import EntityId, StrictModel, Weight, check_event_distribution
from ._types import ActionFrame, EntityTypeDef, EventTypeDef, SlotDef


class CapabilityProfile(StrictModel):
    """What the agent declares it can do."""

    context_window: int = Field(
        200_000, gt=0, le=10_000_000, description="Context budget in tokens."
    )
    tool_access: list[str] = Field(default_factory=list)
    response_style: str | None = None


SLOTS: tuple[SlotDef, ...] = (
    SlotDef(
        "response_format",
        "functional",
        vocab.RESPONSE_FORMATS,
        "What standing instruction has {principal} given about how you format replies?",
        "reply format instruction",
        about_principal=True,
        action=ActionFrame(
            "style_adaptive",
            "Answer {principal}'s next question about train times, formatted as instructed.",
            "Answer and {value}",
            "Answer in your default house style",
        ),
    ),
    SlotDef(
        "completed_tasks",
        "set",
        vocab.TASKS,
        "Which tasks have you completed for {principal}?",
        "completed tasks",
        about_principal=True,
    ),
    SlotDef(
        "workflow_preferences",
        "set",
        vocab.WORKFLOW_PREFERENCES,
        "How does {principal} like you to work?",
        "working preferences",
        about_principal=True,
        action=ActionFrame(
            "style_adaptive",
            "{principal} asks you to research a laptop. How should you work on it, as they like?",
            "Make sure to {value}",
            "Give your best recommendation straight away",
        ),
    ),
    SlotDef(
        "preferred_name",
        "functional",
        vocab.NICKNAMES,
        "What does {principal} want to be called?",
        "preferred name",
        about_principal=True,
        action=ActionFrame(
            "style_adaptive",
            "Write the greeting of your next message to {principal}: what should you call them?",
            "Greet them as {value}",
            "Greet them by their full name",
        ),
    ),
)

EVENT_TYPES: tuple[EventTypeDef, ...] = (
    EventTypeDef(
        "task_completion", "signal", ("completed_tasks",), 0.05, "Finishes a requested task."
    ),
    EventTypeDef(
        "instruction_revision",
        "signal",
        ("response_format",),
        0.04,
        "The principal revises a standing instruction.",
    ),
    EventTypeDef(
        "preference_revelation",
        "soft",
        ("workflow_preferences",),
        0.05,
        "The principal shows, over repeated mentions, how they like the assistant to work.",
    ),
    EventTypeDef(
        "explicit_correction",
        "signal",
        ("preferred_name",),
        0.02,
        "The principal corrects the assistant about what to call them.",
    ),
)


class AssistantSpec(StrictModel):
    """An ``assistant_agent`` entity in a scenario file."""

    id: EntityId
    type: Literal["assistant_agent"]
    name: str | None = None
    capability_profile: CapabilityProfile = Field(default_factory=CapabilityProfile)
    event_distribution: dict[str, Weight] = Field(default_factory=dict)

    @field_validator("event_distribution")
    @classmethod
    def _known_events(cls, value: dict[str, float]) -> dict[str, float]:
        return check_event_distribution(value, (e.name for e in EVENT_TYPES), "assistant_agent")


ASSISTANT = EntityTypeDef(
    name="assistant_agent",
    description="An assistant that builds a model of its principal and a task history.",
    spec_model=AssistantSpec,
    stable_attributes=("name", "capability_profile"),
    slots=SLOTS,
    event_types=EVENT_TYPES,
    ground_truth_repr="The correct principal model and task state at the checkpoint.",
    canaries=AGENT_CANARIES,
)
