"""Whose memory a session goes into: entities that attended it, never one that did not.

The scope gate of a multi-peer world (spec §4.2, §5.3): a session is handed to a backend once
for each entity whose memory it enters, through the ``entity_id`` keyword of ``store``
(:data:`~._protocol.STORE_ENTITY_KEYWORD`). Those are the agents that speak in it (the memory
the agent consults before a session, see :func:`~._session_reads.session_agents`) and the
entities that attended it and are asked probes anywhere in the world, so each asked entity's
memory holds the sessions it attended and no other. A backend whose ``store`` takes no such
keyword (the spec's two-argument form) is called once per session and scopes by the messages'
speakers itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ._protocol import Message
from ._session_reads import session_agents

__all__ = ["memory_owners"]


def memory_owners(
    messages: list[Message], participants: Iterable[str], askers: Collection[str]
) -> list[str]:
    """The entities a session is stored for, each once: its speaking agents, then its askers.

    An attending entity nobody asks and that does not speak keeps no memory worth paying for;
    an entity absent from the session never gets it (a speaker is an attendee by definition).
    """
    attending_askers = (entity for entity in participants if entity in askers)
    return list(dict.fromkeys([*session_agents(messages), *attending_askers]))
