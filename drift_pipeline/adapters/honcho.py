"""Honcho under the gate, through its SDK (``pip install drift-pipeline[honcho]``).

The mapping (spec §8.1): a scenario run is a workspace (one per replicate, so replicates never
share peers), an entity is a peer, a session is a session. ``store`` adds the session's
messages, each from its speaker's peer with the session's time as ``created_at``, the agents
observing the others; ``wait_until_queryable`` then waits until Honcho's background deriver
has drained the session's queue. ``retrieve`` asks as the asked entity: the agent's peer chats
(``read: chat``, the default) or returns its context (``read: context``) about each peer it has
met in its sessions. Only sessions the asked agent took part in shaped what it answers, so
Privacy is measurable.

Environment: ``HONCHO_API_KEY`` (required for the hosted service), ``HONCHO_URL`` (the API's
base URL when not given as the ``base_url`` option; default the SDK's production URL).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from drift_pipeline.memory import Message

from ._service import ServiceAdapter

_BATCH = 100  # messages per request: the API's limit
_READS = ("chat", "context")


class HonchoMemory(ServiceAdapter):
    """A Honcho workspace as one replicate's memory.

    Args:
        base_url: The API's base URL (default ``HONCHO_URL``, else the SDK's production URL).
        workspace: Prefix of the workspace's name (a random suffix keeps runs apart).
        scenario: The scenario's id, part of the workspace's name (filled in by the harness).
        read: ``chat`` (the peer's dialectic answer) or ``context`` (its representation).
        reasoning_level: The dialectic's reasoning level for ``chat``.
        poll_seconds: Seconds between two looks at the deriver's queue.
        queryable_limit_seconds: Longest wait for the queue to drain before the store faults.
        attempts: Attempts per request (rate limits and server errors are retried).
        retry_delay: Seconds before the first retry, doubled before each next one (a
            ``Retry-After`` from the service wins).
        request_timeout: Seconds before one request times out.
    """

    service = "honcho"
    title = "Honcho"
    sdk = "honcho-ai"
    key_variable = "HONCHO_API_KEY"
    url_variable = "HONCHO_URL"

    def __init__(
        self,
        base_url: str | None = None,
        workspace: str = "drift",
        scenario: str = "",
        read: str = "chat",
        reasoning_level: str = "low",
        poll_seconds: float = 1.0,
        queryable_limit_seconds: float = 600.0,
        attempts: int = 4,
        retry_delay: float = 0.5,
        request_timeout: float = 60.0,
    ) -> None:
        from honcho.client import ENVIRONMENTS

        if read not in _READS:
            raise ValueError(f"honcho: read must be one of {', '.join(_READS)}, got {read!r}")
        super().__init__(
            base_url=base_url,
            default_url=ENVIRONMENTS["production"],
            stem="-".join(part for part in (workspace, scenario) if part),
            poll_seconds=poll_seconds,
            queryable_limit_seconds=queryable_limit_seconds,
            attempts=attempts,
            retry_delay=retry_delay,
            request_timeout=request_timeout,
        )
        self.read = read
        self.reasoning_level = reasoning_level
        self._peers: dict[str, Any] = {}
        self._added: set[str] = set()

    def _per_process(self) -> dict[str, Any]:
        return {**super()._per_process(), "_peers": {}, "_added": set()}

    @property
    def workspace(self) -> str:
        """The workspace's name: ``workspace``, the scenario and a random suffix."""
        return self.prefix

    def _new_client(self) -> Any:
        from honcho import Honcho

        return Honcho(
            api_key=self._key,
            base_url=self.base_url,
            workspace_id=self.workspace,
            timeout=self.request_timeout,
            max_retries=0,
        )

    async def _peer(self, peer_id: str) -> Any:
        peer = self._peers.get(peer_id)
        if peer is None:
            honcho = self._client()
            peer = await self.retrying(f"peer {peer_id}", lambda: honcho.aio.peer(peer_id))
            self._peers[peer_id] = peer
        return peer

    async def store(self, session_id: str, messages: list[Message], *, entity_id: str) -> None:
        """Add the session's messages once; note whom ``entity_id`` met in it."""
        # Whom each agent has met: the peers its reads are about. Kept with the names, so a
        # restarted worker still reads about everyone its agent met before the restart.
        for message in messages:
            if message["speaker"] != entity_id:
                self._names.add_member(f"met:{entity_id}", message["speaker"])
        if session_id in self._added or not messages:
            return  # the other agents of the session: its messages are already there
        from honcho.api_types import MessageCreateParams, SessionPeerConfig

        honcho = self._client()
        roles = {m["speaker"]: m["role"] for m in messages}
        peers = [
            (speaker, SessionPeerConfig(observe_others=role == "assistant", observe_me=True))
            for speaker, role in roles.items()
        ]
        session = await self.retrying(
            f"session {session_id}", lambda: honcho.aio.session(session_id, peers=peers)
        )
        params = [
            MessageCreateParams(
                content=m["content"],
                peer_id=m["speaker"],
                created_at=_moment(m["timestamp"]),
                metadata={"role": m["role"]},
            )
            for m in messages
        ]
        for start in range(0, len(params), _BATCH):
            batch = params[start : start + _BATCH]
            await self.retrying(
                f"add messages to {session_id}",
                lambda batch=batch: session.aio.add_messages(batch),  # type: ignore[misc]
            )
        self._added.add(session_id)

    async def wait_until_queryable(self, session_id: str) -> None:
        """Wait until the deriver has processed every message of the session."""
        honcho = self._client()

        async def drained() -> bool:
            status = await self.retrying(
                f"queue status of {session_id}",
                lambda: honcho.aio.queue_status(session=session_id),
            )
            return bool(status.pending_work_units == 0 and status.in_progress_work_units == 0)

        await self._wait(f"honcho deriver queue of {session_id}", drained)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """What ``entity_id``'s peer knows of each peer it met, as it answers ``query``."""
        targets = self._names.members(f"met:{entity_id}")
        if not targets or not query.strip():
            return ""  # it took part in no session yet: it knows nothing
        peer = await self._peer(entity_id)
        parts = []
        for target in targets:
            if self.read == "chat":
                answer = await self.retrying(
                    f"chat as {entity_id} about {target}",
                    lambda target=target: peer.aio.chat(  # type: ignore[misc]
                        query, target=target, reasoning_level=self.reasoning_level
                    ),
                )
                text = answer if isinstance(answer, str) else ""
            else:
                context = await self.retrying(
                    f"context of {entity_id} about {target}",
                    lambda target=target: peer.aio.context(  # type: ignore[misc]
                        target=target, search_query=query
                    ),
                )
                text = context.representation or ""
            if text.strip():
                parts.append(f"{target}: {text.strip()}" if len(targets) > 1 else text.strip())
        return "\n\n".join(parts)

    def service_info(self) -> dict[str, str]:
        """Service, SDK and endpoint (no key), its workspace and how it reads."""
        return {**super().service_info(), "read": self.read}


def _moment(timestamp: str) -> dt.datetime:
    """A session's timestamp as a time Honcho keeps (a naive one is UTC)."""
    moment = dt.datetime.fromisoformat(timestamp)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
