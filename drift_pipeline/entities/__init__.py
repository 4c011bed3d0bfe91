"""Typed entity definitions (spec §3.2): schemas, slots and event types, as a registry.

Entity definitions are data, not behaviour, so they sit on the lowest floor: the scenario layer
validates entity entries against them and the world layer generates from them. Adding a type is
one module here defining its :class:`EntityTypeDef`, plus one registration below.
"""

from ._registry import entity_types, get_entity_type, register_entity_type
from ._types import (
    ActionFrame,
    CanaryFrame,
    EntityTypeDef,
    EventTier,
    EventTypeDef,
    SlotDef,
    SlotKind,
    Value,
)
from .assistant import ASSISTANT
from .coding import CODING_AGENT
from .human import HUMAN
from .tool import TOOL_AGENT

# The order of registration is the order shown to users (errors, schema, docs).
for _definition in (HUMAN, ASSISTANT, CODING_AGENT, TOOL_AGENT):
    register_entity_type(_definition)

__all__ = [
    "ASSISTANT",
    "CODING_AGENT",
    "HUMAN",
    "TOOL_AGENT",
    "ActionFrame",
    "CanaryFrame",
    "EntityTypeDef",
    "EventTier",
    "EventTypeDef",
    "SlotDef",
    "SlotKind",
    "Value",
    "entity_types",
    "get_entity_type",
    "register_entity_type",
]
