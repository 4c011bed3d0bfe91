"""The entity type registry: adding an entity type is one module and one ``register`` call.

Installed packages add types through the entry-point group ``drift_pipeline.entity_types``
(``name = "package.module:DEFINITION"``, naming an :class:`EntityTypeDef` of that name).
"""

from __future__ import annotations

from drift_pipeline._lazy import Registry

from ._types import EntityTypeDef

__all__ = ["ENTITY_TYPE_GROUP", "entity_types", "get_entity_type", "register_entity_type"]

ENTITY_TYPE_GROUP = "drift_pipeline.entity_types"
"""Entry-point group through which installed packages register entity types."""


def _definition(name: str, value: object) -> EntityTypeDef:
    if not isinstance(value, EntityTypeDef):
        raise TypeError(f"{value!r:.60} is not an EntityTypeDef")
    if value.name != name:
        raise TypeError(f"its EntityTypeDef is named {value.name!r}")
    return value


_TYPES: Registry[EntityTypeDef] = Registry("entity type", ENTITY_TYPE_GROUP, _definition)


def register_entity_type(definition: EntityTypeDef) -> EntityTypeDef:
    """Add an entity type; its ``name`` becomes a valid ``type`` in scenario files.

    Raises:
        RegistryError: If another type of that name is already registered.
    """
    _TYPES.register(definition.name, definition)
    return definition


def get_entity_type(name: str) -> EntityTypeDef:
    """Return a registered entity type.

    Raises:
        RegistryError: A ``KeyError`` listing the registered names, if ``name`` is not one.
    """
    return _TYPES.get(name)


def entity_types() -> tuple[EntityTypeDef, ...]:
    """All registered entity types, in registration order."""
    return tuple(_TYPES.get(name) for name in _TYPES.names())
