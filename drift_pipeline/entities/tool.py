"""The ``tool_agent`` entity type (spec §3.2.4): crawlers and test runners, their frontier."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._canaries import AGENT_CANARIES
from ._spec_common import EntityId, StrictModel, Weight, check_event_distribution
from ._types import EntityTypeDef, EventTypeDef, SlotDef
from ._vocab import values

SLOTS: tuple[SlotDef, ...] = (
    SlotDef(
        "objective",
        "functional",
        values(
            "map the product catalogue",
            "collect pricing pages",
            "find broken links",
            "index the API docs",
        ),
        "What is the current objective?",
        "objective",
    ),
    SlotDef(
        "visited_patterns",
        "set",
        values("/products/*", "/blog/*", "/docs/api/*", "/careers/*", "/support/*"),
        "Which URL patterns have been crawled successfully?",
        "crawled patterns",
    ),
    SlotDef(
        "dead_ends",
        "set",
        values("/search?q=*", "/login", "/cart/*", "/archive/2019/*"),
        "Which paths are known dead ends?",
        "dead ends",
    ),
    SlotDef(
        "environment/site_layout",
        "functional",
        values("server-rendered HTML", "single-page app", "paginated JSON API"),
        "How is the target site currently served?",
        "site layout",
    ),
)

EVENT_TYPES: tuple[EventTypeDef, ...] = (
    EventTypeDef(
        "objective_completion",
        "signal",
        ("objective",),
        0.05,
        "An objective completes or is revised.",
    ),
    EventTypeDef(
        "environment_change",
        "signal",
        ("environment/site_layout",),
        0.05,
        "The environment changes.",
    ),
    EventTypeDef(
        "traversal_dead_end", "signal", ("dead_ends",), 0.05, "A path turns out to be a dead end."
    ),
    EventTypeDef("coverage_milestone", "soft", ("visited_patterns",), 0.1, "Coverage grows."),
)


class ToolAgentSpec(StrictModel):
    """A ``tool_agent`` entity (crawler or test runner) in a scenario file."""

    id: EntityId
    type: Literal["tool_agent"]
    name: str | None = None
    role: Literal["crawler", "test_runner"] = "crawler"
    objective: str | None = Field(None, description="The objective issued at the start.")
    event_distribution: dict[str, Weight] = Field(default_factory=dict)

    @field_validator("event_distribution")
    @classmethod
    def _known_events(cls, value: dict[str, float]) -> dict[str, float]:
        return check_event_distribution(value, (e.name for e in EVENT_TYPES), "tool_agent")


TOOL_AGENT = EntityTypeDef(
    name="tool_agent",
    description="A crawler or test runner pursuing an objective across sessions.",
    spec_model=ToolAgentSpec,
    stable_attributes=("name", "role"),
    slots=SLOTS,
    event_types=EVENT_TYPES,
    ground_truth_repr="The correct frontier model and objective state at the checkpoint.",
    canaries=AGENT_CANARIES,
)
