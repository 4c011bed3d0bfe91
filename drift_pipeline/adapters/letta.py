"""Letta under the gate, through its client (``pip install drift-pipeline[letta]``).

The mapping: each agent whose memory a session goes into is a Letta agent, and the session goes
into that agent's archival memory, one passage per message (``[date] speaker: text``, dated
with the session's time and tagged with its id), so an agent's archive holds only the sessions
it took part in (Privacy is measurable). ``wait_until_queryable`` lists the archive until the
session's last passage is there; ``retrieve`` is the archive's semantic search as the asked
agent.

Environment: ``LETTA_API_KEY`` (required for Letta Cloud), ``LETTA_BASE_URL`` (a self-hosted
server's URL when not given as the ``base_url`` option; default Letta Cloud). The agents'
``model`` and ``embedding`` are options (Letta handles such as ``openai/gpt-4o-mini`` and
``openai/text-embedding-3-small``); the embedding model is what archival search uses.
"""

from __future__ import annotations

from typing import Any

from drift_pipeline.memory import Message

from ._service import ServiceAdapter, render_line, utc_text


class LettaMemory(ServiceAdapter):
    """A Letta agent per DRIFT agent; sessions into its archival memory.

    Args:
        base_url: The server's URL (default ``LETTA_BASE_URL``, else Letta Cloud).
        agents: Prefix of the agents' names (a random suffix keeps runs apart).
        scenario: The scenario's id, part of the agents' names (filled in by the harness).
        model: The agents' model handle.
        embedding: The agents' embedding model handle (archival search uses it).
        results: Passages returned per read.
        poll_seconds: Seconds between two looks at the archive after a store.
        queryable_limit_seconds: Longest wait for the passages to be listed.
        attempts: Attempts per request (rate limits and server errors are retried).
        retry_delay: Seconds before the first retry, doubled before each next one.
        request_timeout: Seconds before one request times out.
    """

    service = "letta"
    title = "Letta"
    sdk = "letta-client"
    key_variable = "LETTA_API_KEY"
    url_variable = "LETTA_BASE_URL"

    def __init__(
        self,
        base_url: str | None = None,
        agents: str = "drift",
        scenario: str = "",
        model: str = "openai/gpt-4o-mini",
        embedding: str = "openai/text-embedding-3-small",
        results: int = 10,
        poll_seconds: float = 0.5,
        queryable_limit_seconds: float = 300.0,
        attempts: int = 4,
        retry_delay: float = 0.5,
        request_timeout: float = 60.0,
    ) -> None:
        from letta_client._client import ENVIRONMENTS

        if results < 1:
            raise ValueError(f"letta: results must be >= 1, got {results}")
        super().__init__(
            base_url=base_url,
            default_url=ENVIRONMENTS["cloud"],
            stem="-".join(p for p in (agents, scenario) if p),
            poll_seconds=poll_seconds,
            queryable_limit_seconds=queryable_limit_seconds,
            attempts=attempts,
            retry_delay=retry_delay,
            request_timeout=request_timeout,
        )
        self.model = model
        self.embedding = embedding
        self.results = results
        self._last: dict[str, list[tuple[str, str]]] = {}  # session -> (agent id, passage id)

    def _new_client(self) -> Any:
        from letta_client import AsyncLetta

        return AsyncLetta(
            api_key=self._key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.request_timeout,
        )

    async def _agent(self, entity_id: str, create: bool) -> str | None:
        """The id of the Letta agent that is ``entity_id``'s memory (created on first store)."""
        letta = self._client()

        async def new_agent() -> str:
            agent = await self.retrying(
                f"create agent {entity_id}",
                lambda: letta.agents.create(
                    name=f"{self.prefix}-{entity_id}",
                    model=self.model,
                    embedding=self.embedding,
                    memory_blocks=[],
                    tags=[self.prefix],
                ),
            )
            return str(agent.id)

        return await self._kept(f"agent:{entity_id}", new_agent if create else None)

    async def store(self, session_id: str, messages: list[Message], *, entity_id: str) -> None:
        """Insert the session into ``entity_id``'s archival memory, a passage per message."""
        if not messages:
            return
        letta = self._client()
        if self.service_version == "unknown":  # the server's version, for the run record
            health = await self.retrying("health", lambda: letta.health())
            self.service_version = str(health.version) or "unknown"
        agent = await self._agent(entity_id, create=True)
        assert agent is not None
        last = ""
        for message in messages:
            created = await self.retrying(
                f"insert passage of {session_id} for {entity_id}",
                lambda message=message: letta.agents.passages.create(  # type: ignore[misc]
                    agent,
                    text=render_line(message),
                    created_at=utc_text(message["timestamp"]),
                    tags=[session_id],
                ),
            )
            if created and created[-1].id:
                last = str(created[-1].id)
        if last:
            self._last.setdefault(session_id, []).append((agent, last))

    async def wait_until_queryable(self, session_id: str) -> None:
        """Wait until each agent's archive lists the session's last passage."""
        letta = self._client()
        for agent, passage in self._last.pop(session_id, []):

            async def listed(agent: str = agent, passage: str = passage) -> bool:
                page = await self.retrying(
                    f"list archive of {agent}",
                    lambda: letta.agents.passages.list(agent, limit=50, ascending=False),
                )
                return any(str(p.id) == passage for p in page)

            await self._wait(f"letta passage {passage} of {session_id}", listed)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """The passages of ``entity_id``'s archive nearest to ``query``."""
        agent = await self._agent(entity_id, create=False)
        if agent is None or not query.strip():
            return ""  # it took part in no session yet: it knows nothing
        letta = self._client()
        found = await self.retrying(
            f"search archive as {entity_id}",
            lambda: letta.agents.passages.search(agent, query=query, top_k=self.results),
        )
        return "\n".join(result.content for result in found.results)

    def service_info(self) -> dict[str, str]:
        """Service, client and endpoint (no key), its agents' names and models."""
        return {**super().service_info(), "model": self.model, "embedding": self.embedding}
