"""Zep under the gate, through its SDK (``pip install drift-pipeline[zep]``).

The mapping: each agent whose memory a session goes into is a Zep user, so its knowledge
graph holds only the sessions it took part in (Privacy is measurable); each session is a thread
of that user, its messages added with their speaker's name, role and the session's time as
``reference_time``. Zep extracts facts into the graph in the background: ``add_messages``
returns a task, and ``wait_until_queryable`` polls the session's tasks until they succeed (a
failed task is the store's fault). ``retrieve`` is a graph search of the asked agent's edges
(facts with their validity), as its memory.

Environment: ``ZEP_API_KEY`` (required), ``ZEP_URL`` (the API's base URL when not given as the
``base_url`` option; default Zep's cloud).
"""

from __future__ import annotations

from typing import Any

from drift_pipeline.memory import Message

from ._service import ServiceAdapter, utc_text

_BATCH = 30  # messages per request
_QUERY_CHARS = 400  # the longest search query the API takes
_ROLES = {"user": "user", "assistant": "assistant", "tool": "tool"}
_DONE = ("succeeded", "partial")


class ZepMemory(ServiceAdapter):
    """A Zep user per agent, a thread per session, graph search for reads.

    Args:
        base_url: The API's base URL (default ``ZEP_URL``, else Zep's cloud).
        users: Prefix of the users' ids (a random suffix keeps runs apart).
        scenario: The scenario's id, part of the users' ids (filled in by the harness).
        results: Facts returned per read.
        poll_seconds: Seconds between two looks at an ingestion task.
        queryable_limit_seconds: Longest wait for a session's tasks before the store faults.
        attempts: Attempts per request (rate limits and server errors are retried).
        retry_delay: Seconds before the first retry, doubled before each next one.
        request_timeout: Seconds before one request times out.
    """

    service = "zep"
    title = "Zep"
    sdk = "zep-cloud"
    key_variable = "ZEP_API_KEY"
    url_variable = "ZEP_URL"
    key_always = True  # the SDK refuses to start without one, wherever it points

    def __init__(
        self,
        base_url: str | None = None,
        users: str = "drift",
        scenario: str = "",
        results: int = 10,
        poll_seconds: float = 1.0,
        queryable_limit_seconds: float = 600.0,
        attempts: int = 4,
        retry_delay: float = 0.5,
        request_timeout: float = 60.0,
    ) -> None:
        from zep_cloud.environment import ZepEnvironment

        if results < 1:
            raise ValueError(f"zep: results must be >= 1, got {results}")
        super().__init__(
            base_url=base_url,
            default_url=ZepEnvironment.DEFAULT.value,
            stem="-".join(p for p in (users, scenario) if p),
            poll_seconds=poll_seconds,
            queryable_limit_seconds=queryable_limit_seconds,
            attempts=attempts,
            retry_delay=retry_delay,
            request_timeout=request_timeout,
        )
        self.results = results
        self._tasks: dict[str, list[str]] = {}

    def _new_client(self) -> Any:
        from zep_cloud import AsyncZep

        return AsyncZep(
            api_key=self._key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.request_timeout,
        )

    async def _user(self, entity_id: str, create: bool) -> str | None:
        """The uuid of the Zep user that is ``entity_id``'s memory (created on first store)."""
        zep = self._client()

        async def new_user() -> str:
            user = await self.retrying(
                f"create user {entity_id}",
                lambda: zep.user.create(
                    user_id=f"{self.prefix}-{entity_id}",
                    first_name=entity_id,
                    metadata={"drift_entity": entity_id},
                ),
            )
            return str(user.uuid_)

        return await self._kept(f"user:{entity_id}", new_user if create else None)

    async def store(self, session_id: str, messages: list[Message], *, entity_id: str) -> None:
        """Add the session as a new thread of ``entity_id``'s user."""
        if not messages:
            return
        from zep_cloud import AddMessage

        zep = self._client()
        user = await self._user(entity_id, create=True)
        thread = await self.retrying(
            f"create thread {session_id} for {entity_id}",
            lambda: zep.thread.create(user_uuid=user),
        )
        added = [
            AddMessage(
                content=m["content"],
                role=_ROLES.get(m["role"], "user"),
                name=m["speaker"],
                reference_time=utc_text(m["timestamp"]),
            )
            for m in messages
        ]
        for start in range(0, len(added), _BATCH):
            batch = added[start : start + _BATCH]
            result = await self.retrying(
                f"add messages to {session_id} for {entity_id}",
                lambda batch=batch: zep.thread.add_messages(  # type: ignore[misc]
                    str(thread.uuid_), messages=batch
                ),
            )
            if result.task is not None and result.task.uuid_:
                self._tasks.setdefault(session_id, []).append(str(result.task.uuid_))

    async def wait_until_queryable(self, session_id: str) -> None:
        """Wait until every ingestion task of the session has succeeded."""
        zep = self._client()
        for task_uuid in self._tasks.pop(session_id, []):

            async def done(task_uuid: str = task_uuid) -> bool:
                task = await self.retrying(f"task {task_uuid}", lambda: zep.task.get(task_uuid))
                if task.status == "failed":
                    detail = task.error.message if task.error is not None else "no detail"
                    raise RuntimeError(f"zep task {task_uuid} of {session_id} failed: {detail}")
                return task.status in _DONE

            await self._wait(f"zep task {task_uuid} of {session_id}", done)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """The facts of ``entity_id``'s graph that answer ``query``, with their validity."""
        user = await self._user(entity_id, create=False)
        if user is None or not query.strip():
            return ""  # it took part in no session yet: it knows nothing
        zep = self._client()
        page = await self.retrying(
            f"search edges as {entity_id}",
            lambda: zep.graph.search_edges(
                user, query=query[:_QUERY_CHARS], page_size=self.results
            ),
        )
        return "\n".join(_fact_line(edge) for edge in page.items or [] if edge.fact)


def _fact_line(edge: Any) -> str:
    """``fact (valid FROM[ until TO])``: when the fact held, as Zep dated it."""
    held = f"valid {edge.valid_at[:10]}" if edge.valid_at else ""
    if edge.invalid_at:
        held += f" until {edge.invalid_at[:10]}"
    return f"{edge.fact} ({held.strip()})" if held else str(edge.fact)
