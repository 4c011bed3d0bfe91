"""The entity type registry: adding an entity type is one module and one ``register`` call."""

from __future__ import annotations

from ._types import EntityTypeDef

_REGISTRY: dict[str, EntityTypeDef] = {}


def register_entity_type(definition: EntityTypeDef) -> EntityTypeDef:
    """Add an entity type; its ``name`` becomes a valid ``type`` in scenario files.

    Raises:
        ValueError: If a type of that name is already registered.
    """
    if definition.name in _REGISTRY:
        raise ValueError(f"entity type {definition.name!r} is already registered")
    _REGISTRY[definition.name] = definition
    return definition


def get_entity_type(name: str) -> EntityTypeDef:
    """Return a registered entity type.

    Raises:
        KeyError: With the allowed names, if ``name`` is not registered.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        allowed = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown entity type {name!r}; allowed: {allowed}") from None


def entity_types() -> tuple[EntityTypeDef, ...]:
    """All registered entity types, in registration order."""
    return tuple(_REGISTRY.values())
