"""Typed entity definitions (spec §3.2): schemas, slots and event types, as a registry.

Entity definitions are data, not behaviour, so they sit on the lowest floor: the scenario layer
validates entity entries against them and the world layer generates from them. Adding a type is
one module here that calls :func:`register_entity_type`, plus its import below.
"""

from ._registry import entity_types, get_entity_type, register_entity_type
from ._types import (
    ActionFrame,
    EntityTypeDef,
    EventTier,
    EventTypeDef,
    SlotDef,
    SlotKind,
    Value,
)
from .assistant import ASSISTANT
from .coding import CODING_AGENT

# Built-in types register themselves on import; the order is the order shown to users.
from .human import HUMAN
from .tool import TOOL_AGENT

__all__ = [
    "ASSISTANT",
    "CODING_AGENT",
    "HUMAN",
    "TOOL_AGENT",
    "ActionFrame",
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
