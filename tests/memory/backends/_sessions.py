"""Hand-written sessions and small helpers shared by the backend tests."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from drift_pipeline.memory._protocol import MemoryBackend, Message

T = TypeVar("T")

PRINCIPAL = "principal"
ASSISTANT = "assistant"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one backend coroutine to completion."""
    return asyncio.run(coroutine)


def user(text: str, date: str = "2027-03-14", speaker: str = PRINCIPAL) -> Message:
    return Message(speaker=speaker, role="user", content=text, timestamp=f"{date}T09:00:00")


def agent(text: str, date: str = "2027-03-14", speaker: str = ASSISTANT) -> Message:
    return Message(speaker=speaker, role="assistant", content=text, timestamp=f"{date}T09:00:00")


def chat(
    date: str, *user_lines: str, speaker: str = PRINCIPAL, helper: str = ASSISTANT
) -> list[Message]:
    """A user/assistant session: each user line answered by a short acknowledgement."""
    messages: list[Message] = []
    for line in user_lines:
        messages.append(user(line, date, speaker))
        messages.append(agent("Thanks for letting me know.", date, helper))
    return messages


def store_all(backend: MemoryBackend, sessions: list[list[Message]]) -> None:
    """Store sessions in order with ids s0, s1, …"""

    async def go() -> None:
        for number, messages in enumerate(sessions):
            await backend.store(f"s{number}", messages)

    run(go())


def ask(backend: MemoryBackend, query: str, entity: str = ASSISTANT, session_id: str = "q") -> str:
    return run(backend.retrieve(session_id, entity, query))


NOISE = [
    chat(
        "2027-03-20",
        "Can you recommend a podcast for my commute?",
        "Thanks, that's helpful!",
        "I'm so tired today.",
        "I have a meeting at 3 so I need to be quick.",
        "I love this idea!",
        "I'm looking for a good book about whales.",
    ),
    chat(
        "2027-03-22",
        "What's the weather like in general in spring?",
        "I think it'll rain later.",
        "Ok, I'm heading out for a walk now.",
        "Haha, that's funny.",
    ),
]
