"""Whose memory a session goes into: each entity that attended it (spec §4.2, §5.3).

The scope gate of a multi-peer world: a session is handed to a backend once for each entity
that took part in it and is asked anything in the world, through the ``entity_id`` keyword of
``store`` (:data:`~._protocol.STORE_ENTITY_KEYWORD`), so that entity's memory holds the
sessions it attended and no other. A backend whose ``store`` takes no such keyword (the spec's
two-argument form) is called once per session and scopes by the messages' speakers itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterable
from typing import Any

from ._protocol import STORE_ENTITY_KEYWORD

__all__ = ["memory_owners", "store_for_entities", "takes_entity"]


def takes_entity(store: Any) -> bool:
    """Whether a ``store`` method accepts ``entity_id`` by name (not only through ``**kwargs``)."""
    try:
        parameter = inspect.signature(store).parameters.get(STORE_ENTITY_KEYWORD)
    except (TypeError, ValueError):  # no signature to read
        return False
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def memory_owners(participants: Iterable[str], askers: Collection[str]) -> list[str]:
    """The entities a session is stored for: its participants that are asked probes, in order.

    An entity nobody asks has no memory worth keeping; one asked but absent from the session
    must never get it.
    """
    return [entity for entity in participants if entity in askers]


async def store_for_entities(
    backend: Any, session_id: str, messages: Any, entities: list[str]
) -> None:
    """Store one session into each entity's memory: ``store(..., entity_id=e)`` per entity.

    A session no asked entity attended goes into nobody's memory.
    """
    for entity in entities:
        result = backend.store(session_id, messages, **{STORE_ENTITY_KEYWORD: entity})
        if inspect.isawaitable(result):
            await result
