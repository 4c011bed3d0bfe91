"""Hand-written sessions and small helpers shared by the backend tests."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine
from datetime import date, timedelta
from typing import Any, TypeVar

from drift_pipeline.memory._protocol import MemoryBackend, Message
from drift_pipeline.tokens import count_tokens_lines

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


# Statements a memory adds, replaces, redates, retracts or ignores, for random histories.
_CHANGES = (
    "I live in {city}.",
    "I moved to {city}.",
    "I moved back to {city}.",
    "I work at {company}.",
    "Big news: I just started at {company}!",
    "I left {company}.",
    "I'm vegetarian.",
    "I'm no longer vegetarian.",
    "I prefer {contact}.",
    "I'm allergic to {allergen}.",
    "I have a dog named {pet}.",
    "Please always reply in {language}.",
    "From now on, respond in {language}.",
    "Never book red-eye flights.",
    "I'm so tired today.",
    "Can you recommend a podcast for my commute?",
    "I moved to {city}.\nLine two of the same message.",
    "I live in {city}.\n\n",
)
_FILLS = {
    "city": ("Leeds", "York", "Zürich", "Oslo", "São Paulo"),
    "company": ("Acme Corp", "Globex", "Initech"),
    "contact": ("phone calls", "text messages", "email"),
    "allergen": ("peanuts", "shellfish"),
    "pet": ("Rex", "Ödi"),
    "language": ("Spanish", "English"),
}


def random_history(
    seed: int, sessions: int, speakers: tuple[str, ...], helpers: tuple[str, ...]
) -> list[list[Message]]:
    """Dated sessions of random statements: each by one of ``speakers`` to one of ``helpers``.

    Restated values (a redated preference or home), changes and retractions come often, since
    every statement picks among a few values of a few slots. Some sessions are dated in words.
    """
    rng = random.Random(seed)
    history: list[list[Message]] = []
    day = date(2027, 1, 1)
    for _ in range(sessions):
        day += timedelta(days=rng.randrange(0, 9))
        lines = [
            rng.choice(_CHANGES).format(**{k: rng.choice(v) for k, v in _FILLS.items()})
            for _ in range(rng.randrange(0, 4))
        ]
        session = chat(
            day.isoformat(), *lines, speaker=rng.choice(speakers), helper=rng.choice(helpers)
        )
        if rng.randrange(4) == 0:  # a date as an importer may give it: kept as written
            written = f"{day.day} {day:%B %Y}, 9:00 am"
            session = [Message(**{**message, "timestamp": written}) for message in session]
        history.append(session)
    return history


def store_counting(backend: Any, history: list[list[Message]]) -> list[str]:
    """Store ``history``; after every store the backend's own storage count must be exact.

    ``storage_tokens()`` stands in for counting ``snapshot()`` between checkpoints, so it must
    equal that count at every moment. Returns the snapshot after each store.
    """
    snapshots: list[str] = []
    for number, messages in enumerate(history):
        run(backend.store(f"s{number}", messages))
        snapshot = backend.snapshot()
        assert backend.storage_tokens() == count_tokens_lines(snapshot), (number, snapshot)
        # What a memory per entity reads to join the counts of several (see ``_scoped``).
        tail = getattr(backend, "snapshot_tail", None)
        if callable(tail):
            last = tail()
            assert snapshot == last or snapshot.endswith(f"\n{last}"), (number, last)
        snapshots.append(snapshot)
    return snapshots
