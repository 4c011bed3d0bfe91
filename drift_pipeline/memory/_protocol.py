"""The contract between the harness and a memory system under test (spec §8.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypedDict, runtime_checkable


class Message(TypedDict):
    """One turn of a session as a memory system sees it: nothing but the text and who said it.

    These four keys are all a message has; a session is a list of them in the order spoken.

    Attributes:
        speaker: Entity id of the author, as the scenario names it (``principal``,
            ``assistant``, ``work_assistant``…); the same id a probe's ``entity_id`` uses.
        role: ``user`` for humans, ``assistant`` for agents, ``tool`` for tool output.
        content: The message text, written in the speaker's own voice.
        timestamp: Simulated time of the session, ISO 8601 without a zone
            (``2027-03-14T09:00:00``); every message of a session has the same one. During the
            call the backend's clocks read it too, unless the run turned that off.
    """

    speaker: str
    role: str
    content: str
    timestamp: str


@dataclass(frozen=True)
class TokenCounts:
    """LLM tokens a backend spent so far (spec §7.7): in ``store`` (write), ``retrieve`` (read).

    Cumulative over the backend's lifetime, prompt and completion (and embedding input)
    tokens together. ``None`` says the backend does not know: ``TokenCounts(write=None,
    read=None)`` is the answer of an adapter to a service that does not report its models'
    tokens. Unknown is never read as zero; whether it leaves the arm's cost incomplete depends
    on where its models run (see :data:`MODELS_OUTSIDE_METER`).
    """

    write: int | None = 0
    read: int | None = 0


REQUIRED_METHODS = ("store", "retrieve", "token_counts")
"""The methods every backend has (spec §8.2); ``snapshot`` (:class:`HasSnapshot`) is optional."""


@runtime_checkable
class MemoryBackend(Protocol):
    """What a memory system implements to be benchmarked (spec §8.2).

    The harness calls ``store`` once per session, in order, and then forgets the transcript.
    At checkpoints it calls ``retrieve`` once per probe; the returned text is all the reader sees.
    Backends are constructed without arguments (options, if any, as keyword arguments).

    These three methods are enough to be run and ranked. What the harness can only measure by
    reading the memory itself, Selectivity and the storage tokens (S), needs ``snapshot()``
    (:class:`HasSnapshot`): without it those figures are reported as not measured, never as
    zero. A backend with a large memory may also implement :class:`CountsOwnStorage`.

    LLM tokens: the harness meters the model calls a backend makes through the endpoint it is
    given (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` in its worker, or the endpoint option of a
    backend that declares a model); those metered tokens are what the cost figures use.
    ``token_counts()`` is recorded beside them, and a gap of more than 5% is shown. A report
    more than 5% above the metered tokens is charged instead (the backend says it spent tokens
    the meter did not see), marked ``self-reported``. A backend whose models run where the
    meter cannot see them (a memory service's own models, its own key to a remote host)
    declares it with :data:`MODELS_OUTSIDE_METER`; unless its report covers that spend, its
    token cost is marked unknown and it is not ranked against arms whose cost is known.
    """

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Persist whatever the system chooses from one whole session."""
        ...

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the memory text that answers ``query``, as seen by entity ``entity_id``.

        ``session_id`` is the session after which the question is asked. Scope is the backend's
        job: facts from sessions ``entity_id`` did not take part in must never be returned.
        """
        ...

    def token_counts(self) -> TokenCounts:
        """LLM tokens spent inside ``store`` (write) and ``retrieve`` (read) so far."""
        ...


@runtime_checkable
class HasSnapshot(Protocol):
    """Optional, and the way to earn Selectivity and storage figures: the memory as text.

    After every session the harness counts the snapshot's tokens (the storage S and its growth
    per session, which enter the token cost), and at each checkpoint it reads which of the
    session's values the memory holds (Selectivity). A backend without it is run and ranked,
    with those figures marked not measured and its token cost counted without storage growth.
    """

    def snapshot(self) -> str:
        """Everything the system persists now, as text; the harness counts its tokens (S)."""
        ...


@runtime_checkable
class CountsOwnStorage(Protocol):
    """Optional: a backend that can say how many tokens its snapshot holds without building it.

    The harness needs the storage size after every session. By default it builds ``snapshot()``
    each time and counts it, which costs the size of the whole memory per session: quadratic
    over a horizon for a memory that keeps everything. A backend that also implements
    ``storage_tokens()`` is asked that instead between checkpoints. It must equal
    ``drift_pipeline.tokens.count_tokens_lines(self.snapshot())``;
    ``drift_pipeline.tokens.LineTally`` keeps that count for an append-only log. At every
    checkpoint the harness still builds the snapshot and recounts it itself, and a report that
    differs is recorded as an error on that session (the recount is what enters the tables).
    """

    def storage_tokens(self) -> int:
        """Token count of what ``snapshot()`` would return now."""
        ...


@runtime_checkable
class IngestsAsynchronously(Protocol):
    """Optional: a backend whose ``store`` returns before what it stored can be found.

    Memory services often extract, embed or index in the background after accepting a write.
    The harness calls ``wait_until_queryable`` right after each ``store`` (inside the same gate
    and timeout) and records the time it took as that session's time-to-queryable, so
    asynchronous ingestion is counted, not hidden. It returns once the session's content can be
    retrieved, and raises if that never happens within the backend's own limit.
    """

    async def wait_until_queryable(self, session_id: str) -> None:
        """Return once what ``store(session_id, …)`` kept is visible to ``retrieve``."""
        ...


@runtime_checkable
class RecordsRetries(Protocol):
    """Optional: an adapter that retries a service's refusals says so after every call.

    Retries are not hidden: after each ``store`` and ``retrieve`` the harness takes the notes
    (one line each, e.g. ``add messages: HTTP 429; retry 1 of 3 after 0.5s``) and records them
    as faults of that call, in the run's fault list and the cell's fault summary. A call that
    succeeded after retries still counts as answered (it is not a faulted call).
    """

    def drain_retries(self) -> list[str]:
        """The retries made since the last time this was called."""
        ...


MODELS_OUTSIDE_METER = "models_outside_meter"
"""A backend with this attribute set to ``True`` calls models the harness's meter cannot see.

``models_outside_meter = True`` (a class attribute, or set by the constructor from its own
configuration) says that some of the backend's model calls never pass through the endpoint the
harness gives its worker: a memory service that runs extraction, summaries or embeddings with
its own models on its own servers, or a library given its own key to a remote host. The
harness then cannot count those tokens, so the arm's token cost is known only in part unless
``token_counts()`` reports more than the meter saw (its report is then charged, marked
``self-reported``). With the spend unknown, the arm's row says so: its token cost is shown as a
lower bound, MVOT and DRIFT-C as upper bounds, TES and DRIFT-E as not measured, and it is
listed after the ranked arms instead of being ranked among them. Leave it unset (``False``)
when every model call goes through the endpoint the worker is given.
"""

STORE_ENTITY_KEYWORD = "entity_id"
"""A backend whose ``store`` takes this keyword is told whose memory the session goes into.

``async def store(self, session_id, messages, *, entity_id: str)``: the memory is an agent's,
the same entity that later asks the probes (``retrieve``'s ``entity_id``). The harness calls
``store`` once for each agent that speaks in the session (role ``assistant``, in order; a
session no agent speaks in goes to its first speaker), then once for each other entity that
attended it and is asked probes in the world (a person asked a canary in a multi-peer world),
so with two assistants in a session it is stored twice, once into each one's memory, and the
calls' time and tokens are that session's write. An entity that did not attend a session is
never given it. Backends written to the spec's two-argument ``store`` are called once per
session, unchanged, and scope by the messages' speakers themselves.
"""


KEEPS_NOTHING = "keeps_nothing"
"""A backend whose ``keeps_nothing`` attribute is ``True`` declares it remembers nothing said.

Baselines such as ``amnesiac`` do so. The conformance check then verifies that its reads return
none of what was stored, instead of refusing it as a memory that silently stores nothing.
"""


@runtime_checkable
class DescribesService(Protocol):
    """Optional: an adapter to a memory service or library says what it runs against.

    The harness records the returned mapping in the run manifest under the arm, so a row can be
    traced to the service and SDK it measured. Typical keys: ``service``, ``service_version``
    (as the service reports it, or ``unknown``), ``sdk``, ``sdk_version``, ``endpoint`` (a URL
    without credentials), ``embedder``, ``llm``. Values must never contain a key or token.
    """

    def service_info(self) -> dict[str, str]:
        """What this arm runs against, as short strings."""
        ...
