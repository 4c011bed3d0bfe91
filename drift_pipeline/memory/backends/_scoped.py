"""The scoping layer the built-in backends share: a memory per entity, or one for everyone.

:func:`entity_scoped` turns a backend class written without scopes into one whose ``store``
takes ``entity_id``: the harness then stores each session once for every entity that attended
it (see :mod:`drift_pipeline.memory._entities`), each into that entity's own instance of the
backend, and ``retrieve`` asks the asking entity's instance only. What one entity was told
never reaches another's memory, whatever the backend does inside: an entity's store holds its
private sessions and the shared sessions it took part in, and nothing else.

:func:`shared_store` does the opposite, on purpose: one instance for every entity, asked on
behalf of everyone. It exists to show that the Privacy Score detects a leak (``leaky_shared``).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts

if TYPE_CHECKING:
    from drift_pipeline.tokens import LineCounter

__all__ = [
    "EVERYONE",
    "EntityScoped",
    "SharedStore",
    "entity_scoped",
    "shared_store",
    "stored_for",
    "stored_owners",
]

EVERYONE = "*everyone*"
"""The entity a shared store files every session under and answers every question as."""


_OWNERS: ContextVar[frozenset[str]] = ContextVar("drift_session_owners", default=frozenset())


@contextmanager
def stored_for(owners: frozenset[str]) -> Iterator[None]:
    """Inside the block, the session being stored is also visible to ``owners``.

    A session is stored into an entity's own memory under this, so that the entity sees every
    session it attended, including one it listened to without speaking: the built-ins' own
    scope (``_text.session_speakers``) is the speakers plus :func:`stored_owners`.
    """
    token = _OWNERS.set(owners)
    try:
        yield
    finally:
        _OWNERS.reset(token)


def stored_owners() -> frozenset[str]:
    """Whom the session being stored is for, besides its speakers (see :func:`stored_for`)."""
    return _OWNERS.get()


class EntityScoped:
    """A memory per entity, each an instance of :attr:`inner` built with the same options.

    The instances are built on an entity's first session, so an entity that joins late starts
    empty. Token counts and snapshots are the instances' together (an entity's copy of a shared
    session is stored, and paid for, once per entity). While there is one memory, the layer is
    invisible: its snapshot and storage count are that memory's.
    """

    inner: ClassVar[type[Any]]
    name: ClassVar[str]
    version: str
    """The class's, or the instance's where the options change it (see ``__init__``)."""

    def __init__(self, **options: Any) -> None:
        # Built now, so options the backend refuses fail when the arm starts, not at its first
        # session; it becomes the first entity's memory.
        self._spare: Any = self.inner(**options)
        self._options = options
        self._memories: dict[str, Any] = {}
        # Each memory's snapshot, recounted as it grows (see _joined_tokens).
        self._counters: dict[str, LineCounter] = {}
        # Every memory is built with the same options, so the first one's version is theirs
        # (a backend may name its configuration in it, as the LLM compressor names its model).
        self.version = str(getattr(self._spare, "version", type(self).version))

    def __getattr__(self, name: str) -> Any:
        # An option of the backend's reads as its own (``budget_tokens``, ``top_k``); and the
        # storage count is the memory's own while there is one: with several, it is the count
        # of the joined snapshot, built from the memories' snapshots (see _joined_tokens).
        if name.startswith("_") or "_spare" not in self.__dict__:
            raise AttributeError(name)
        memories = list(self.__dict__["_memories"].values()) or [self.__dict__["_spare"]]
        if name == "storage_tokens" and len(memories) > 1:
            if not callable(getattr(memories[0], "snapshot", None)):
                raise AttributeError(name)
            return self._joined_tokens
        if name == "snapshot_tail" and len(memories) > 1:
            raise AttributeError(name)  # the first memory's would not be the joined snapshot's
        return getattr(memories[0], name)

    def _memory(self, entity: str) -> Any:
        memory = self._memories.get(entity)
        if memory is None:
            if self._spare is not None:
                memory, self._spare = self._spare, None
            else:
                memory = self.inner(**self._options)
            self._memories[entity] = memory
        return memory

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        """Store the session into ``entity_id``'s memory, visible to it as an attendee.

        Called without ``entity_id`` (as the spec's two-argument ``store``), the session goes
        into the memory of each entity that speaks in it.
        """
        owners = (
            [entity_id]
            if entity_id is not None
            else sorted({message["speaker"] for message in messages})
        )
        for owner in owners:
            with stored_for(frozenset({owner})):
                await self._memory(owner).store(session_id, messages)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """What ``entity_id``'s own memory returns; an entity that attended nothing has none."""
        memory = self._memories.get(entity_id)
        if memory is None:
            return ""
        return str(await memory.retrieve(session_id, entity_id, query))

    def token_counts(self) -> TokenCounts:
        """Every memory's model tokens together."""
        counts = [memory.token_counts() for memory in self._memories.values()]
        return TokenCounts(sum(c.write for c in counts), sum(c.read for c in counts))

    def snapshot(self) -> str:
        """Every entity's memory, by entity id (one memory: exactly its snapshot)."""
        texts = [self._memories[entity].snapshot() for entity in sorted(self._memories)]
        return "\n".join(text for text in texts if text)

    def _joined_tokens(self) -> int:
        r"""The storage count of :meth:`snapshot` with several memories, without joining it.

        The count of a text is the sum of its lines' counts, each line with its break
        (:func:`~drift_pipeline.tokens.count_tokens_lines`), so the joined text counts as its
        parts do, every part but the last with the break that joins it to the next. Each part
        is recounted by a counter of its own, at the cost of what changed in it since the last
        session; the joined text would change in its middle, where a count of it starts over.
        A memory that counts its own storage and names its snapshot's last line
        (``storage_tokens`` and ``snapshot_tail``, as the built-ins do) is not built at all.
        """
        # Here, not at the top: the registry imports this module, and must load no tokenizer.
        from drift_pipeline.tokens import LineCounter, count_line_tokens

        total = 0
        last_line: str | None = None  # the previous part's (maybe empty) last line
        for entity in sorted(self._memories):
            memory = self._memories[entity]
            counts, tail = (
                getattr(memory, "storage_tokens", None),
                getattr(memory, "snapshot_tail", None),
            )
            if callable(counts) and callable(tail):
                tokens, end = int(counts()), str(tail())
                if not tokens:  # only an empty text counts no token
                    continue
            else:
                text = memory.snapshot()
                if not text:
                    continue
                counter = self._counters.get(entity)
                if counter is None:
                    counter = self._counters[entity] = LineCounter()
                tokens, end = counter.count(text), text
            if last_line is not None:  # it gets the break that joins it to this part
                total += count_line_tokens(last_line + "\n") - count_line_tokens(last_line)
            total += tokens
            last_line = end[end.rfind("\n") + 1 :]
        return total


_SCOPED: dict[type[Any], type[EntityScoped]] = {}


def entity_scoped(inner: type[Any]) -> type[EntityScoped]:
    """The class of ``inner`` with a memory per entity (the same class for the same ``inner``)."""
    known = _SCOPED.get(inner)
    if known is not None:
        return known
    scoped = type(
        inner.__name__,
        (EntityScoped,),
        {
            "inner": inner,
            "name": getattr(inner, "name", inner.__name__),
            "version": getattr(inner, "version", ""),
            "deployment": getattr(inner, "deployment", "local"),
            "__module__": inner.__module__,
            "__doc__": f"{inner.__doc__ or inner.__name__}\n\nA memory per entity (scoped).",
            "__qualname__": f"entity_scoped({inner.__qualname__})",
            "__signature__": inspect.signature(inner),
        },
    )
    _SCOPED[inner] = scoped
    return scoped


class SharedStore:
    """One memory for every entity: sessions filed for everyone, questions answered for anyone.

    A deliberately leaky reference: whatever one entity was told, any other can retrieve.
    """

    inner: ClassVar[type[Any]]
    name: ClassVar[str]
    version: str
    """The class's, or the instance's where the options change it (see ``__init__``)."""

    def __init__(self, **options: Any) -> None:
        self._memory = self.inner(**options)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Store the session once, visible to everyone."""
        with stored_for(frozenset({EVERYONE})):
            await self._memory.store(session_id, messages)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """What the one memory returns, whoever asks."""
        return str(await self._memory.retrieve(session_id, EVERYONE, query))

    def token_counts(self) -> TokenCounts:
        """The memory's model tokens."""
        counts: TokenCounts = self._memory.token_counts()
        return counts

    def snapshot(self) -> str:
        """The one memory."""
        return str(self._memory.snapshot())

    def storage_tokens(self) -> int:
        """The one memory's storage count."""
        return int(self._memory.storage_tokens())


def shared_store(inner: type[Any], name: str, version: str) -> type[SharedStore]:
    """The class of ``inner`` with one memory for every entity, registered as ``name``."""
    return type(
        name,
        (SharedStore,),
        {
            "inner": inner,
            "name": name,
            "version": f"{version}+{getattr(inner, 'name', inner.__name__)}"
            f"@{getattr(inner, 'version', '')}",
            "__signature__": inspect.signature(inner),
        },
    )
