"""The ``coding_agent`` entity type (spec §3.2.3): schema, slots, events and canaries."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._canaries import AGENT_CANARIES
from ._spec_common import EntityId, StrictModel, Weight, check_event_distribution
from ._types import EntityTypeDef, EventTypeDef, SlotDef
from ._vocab import values
from .assistant import CapabilityProfile

SLOTS: tuple[SlotDef, ...] = (
    SlotDef(
        "decision/storage",
        "functional",
        values("PostgreSQL", "SQLite", "DynamoDB", "flat Parquet files"),
        "Which storage layer did the project decide on?",
        "storage decision",
    ),
    SlotDef(
        "decision/http",
        "functional",
        values("FastAPI", "Flask", "aiohttp", "gRPC"),
        "Which HTTP framework is the service built on?",
        "HTTP framework decision",
    ),
    SlotDef(
        "active_modules",
        "set",
        values("billing", "auth", "ingest", "scheduler", "reporting", "search"),
        "Which modules are under active development?",
        "active modules",
    ),
    SlotDef(
        "failing_tests",
        "set",
        values(
            "test_refund_rounding", "test_login_lockout", "test_csv_unicode", "test_retry_backoff"
        ),
        "Which tests are failing right now?",
        "failing tests",
    ),
    SlotDef(
        "anti_patterns",
        "set",
        values(
            "global mutable config",
            "catching bare exceptions",
            "N+1 queries",
            "sleep-based polling",
        ),
        "Which approaches are known to have failed in this project?",
        "known anti-patterns",
    ),
    SlotDef(
        "style/naming",
        "functional",
        values("snake_case", "camelCase"),
        "Which naming convention does the principal want?",
        "naming convention",
    ),
    SlotDef(
        "dependencies",
        "set",
        values("pydantic", "httpx", "structlog", "tenacity", "polars"),
        "Which third-party dependencies does the project use?",
        "dependencies",
    ),
)

EVENT_TYPES: tuple[EventTypeDef, ...] = (
    EventTypeDef(
        "commit", "soft", ("active_modules",), 0.2, "Routine commits that shift where work happens."
    ),
    EventTypeDef("test_failure", "signal", ("failing_tests",), 0.1, "A test starts failing."),
    EventTypeDef(
        "architectural_override",
        "signal",
        ("decision/storage", "decision/http"),
        0.05,
        "The principal overrides an architectural decision.",
    ),
    EventTypeDef(
        "refactor_request", "signal", ("style/naming", "anti_patterns"), 0.05, "A refactor request."
    ),
    EventTypeDef(
        "dependency_change", "signal", ("dependencies",), 0.05, "A dependency is added or swapped."
    ),
)


class CodingAgentSpec(StrictModel):
    """A ``coding_agent`` entity in a scenario file."""

    id: EntityId
    type: Literal["coding_agent"]
    name: str | None = None
    capability_profile: CapabilityProfile = Field(default_factory=CapabilityProfile)
    repository: str | None = Field(None, description="Name of the simulated repository.")
    language: Literal["python", "typescript", "go", "rust", "java"] = "python"
    event_distribution: dict[str, Weight] = Field(default_factory=dict)

    @field_validator("event_distribution")
    @classmethod
    def _known_events(cls, value: dict[str, float]) -> dict[str, float]:
        return check_event_distribution(value, (e.name for e in EVENT_TYPES), "coding_agent")


CODING_AGENT = EntityTypeDef(
    name="coding_agent",
    description="A coding agent working on a project graph with a decision log.",
    spec_model=CodingAgentSpec,
    stable_attributes=("name", "capability_profile", "repository", "language"),
    slots=SLOTS,
    event_types=EVENT_TYPES,
    ground_truth_repr="The correct project graph and decision log at the checkpoint.",
    canaries=AGENT_CANARIES,
)
