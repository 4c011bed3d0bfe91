"""Backends written outside the package for the conformance check: one honest, the rest wrong.

Each wrong one fails in a way the check (or the run's snapshot honesty) must name: storing
nothing, leaking between entities, never becoming queryable, showing a write late without
saying so, folding accents away, and hiding what it keeps from its snapshot. ``ModelNotes`` is
honest and calls a model through the endpoint its worker is given, as a run gives it one;
``OwnModelNotes`` calls one at a URL of its own (around the meter), and ``ServiceModels``
declares models the meter cannot see and knows none of their tokens.
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata

from drift_pipeline.entities import entity_types
from drift_pipeline.memory import Message, TokenCounts, slot_values


class Honest:
    """Every line, in the memory of the entity it is stored for (its speakers without one)."""

    version = "1"

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self.written: list[float] = []

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        owners = {entity_id} if entity_id else {message["speaker"] for message in messages}
        for message in messages:
            for owner in sorted(owners):
                self.lines.append((owner, f"{message['speaker']}: {message['content']}"))
                self.written.append(time.monotonic())

    async def wait_until_queryable(self, session_id: str) -> None:
        await asyncio.sleep(0.01)  # as a service that indexes in the background would

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return "\n".join(line for owner, line in self.lines if owner == entity_id)

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def service_info(self) -> dict[str, str]:
        return {"service": "a log kept outside the package", "sdk_version": "0.1"}


class Forgetful(Honest):
    """Accepts every session and keeps nothing, silently (a broken adapter)."""

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        return None


class Leaky(Honest):
    """Keeps everything in one pool that every entity reads."""

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return self.snapshot()


class LeakyOutsideTheCheck(Honest):
    """Keeps entities apart only while it believes it is being checked (by the check's names)."""

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        if entity_id.startswith("conformance-"):
            return await super().retrieve(session_id, entity_id, query)
        return self.snapshot()


class MaskedValues(Honest):
    """Hands every line over, but its snapshot shows them with the world's values masked."""

    def snapshot(self) -> str:
        spellings = sorted(
            {s for t in entity_types() for v in slot_values([t.name]).values() for s in v},
            key=len,
            reverse=True,
        )
        values = re.compile(r"\b(" + "|".join(map(re.escape, spellings)) + r")\b", re.IGNORECASE)
        return values.sub("that", super().snapshot())


class NeverQueryable(Honest):
    """Accepts writes that never become readable."""

    async def wait_until_queryable(self, session_id: str) -> None:
        await asyncio.sleep(3600)


class Laggard(Honest):
    """Ingests in the background without declaring it: a write shows a moment later."""

    wait_until_queryable = None  # type: ignore[assignment]

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        ready = time.monotonic() - 0.3
        kept = zip(self.lines, self.written, strict=True)
        return "\n".join(line for (owner, line), at in kept if owner == entity_id and at < ready)


class Folding(Honest):
    """Gives text back without its accents."""

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        text = await super().retrieve(session_id, entity_id, query)
        decomposed = unicodedata.normalize("NFKD", text)
        return "".join(c for c in decomposed if not unicodedata.combining(c))


class UnderReporting(Honest):
    """Keeps every line, but its snapshot shows only the first line of each session."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        await super().store(session_id, messages, entity_id=entity_id)
        if messages:
            self.shown.append(f"{messages[0]['speaker']}: {messages[0]['content']}")

    def snapshot(self) -> str:
        return "\n".join(self.shown)


class ModelNotes(Honest):
    """Keeps what a model makes of each session, asked through ``OPENAI_BASE_URL``."""

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        import openai

        said = "\n".join(message["content"] for message in messages)
        reply = openai.OpenAI(max_retries=0).chat.completions.create(
            model="notes-model", messages=[{"role": "user", "content": said[:2000]}]
        )
        note = str(reply.choices[0].message.content)
        for owner in {entity_id} if entity_id else {m["speaker"] for m in messages}:
            self.lines.append((owner, note.replace("\n", " ")))
            self.written.append(time.monotonic())


class KeyQuoter(Honest):
    """Refuses every store, quoting the key it was given (as a client's auth error may)."""

    def __init__(self, api_key: str) -> None:
        super().__init__()
        self.api_key = api_key

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        raise PermissionError(f"key {self.api_key} was refused")


class OwnModelNotes(Honest):
    """Keeps what a model at a URL of its own (not the meter) makes of each session.

    With ``report`` it reports the tokens the endpoint said it spent; without, zero.
    """

    def __init__(self, url: str, key: str, report: bool = False) -> None:
        super().__init__()
        self.url, self.key, self.report = url, key, report
        self.spent = 0

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        import openai

        client = openai.OpenAI(base_url=self.url, api_key=self.key, max_retries=0)
        said = "\n".join(message["content"] for message in messages)
        reply = client.chat.completions.create(
            model="own-model", messages=[{"role": "user", "content": said[:2000]}]
        )
        self.spent += reply.usage.total_tokens if reply.usage else 0
        await super().store(session_id, messages, entity_id=entity_id)

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=self.spent if self.report else 0, read=0)


class ServiceModels(Honest):
    """A memory whose models run on its service, where no meter sees them; it knows no tokens."""

    models_outside_meter = True

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=None, read=None)
