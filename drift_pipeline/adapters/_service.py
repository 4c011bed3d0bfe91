"""What every adapter to a memory service shares: keys, retries recorded, state kept, versions.

- **Keys** come from the environment only (``HONCHO_API_KEY``…), which the harness passes into
  the adapter's worker and redacts from every record; an adapter never takes one as an option
  and never writes one anywhere.
- **Retries.** The SDKs' own retries are turned off so that none is hidden: :class:`Retrying`
  retries a call refused with 429 or a 5xx status, or cut by a connection error or timeout,
  with exponential backoff (honouring ``Retry-After``), and notes each retry; the harness takes
  the notes after every call (``drain_retries``) and records them as that call's faults. A
  call that still fails after the last attempt raises, with the service's own error.
- **Model tokens.** A service runs its own models (extraction, summaries, embeddings,
  dialectic answers) on its own servers, where the harness's meter cannot see them, and none of
  these services reports their tokens. So every adapter declares ``models_outside_meter`` and
  reports its counts as unknown (``TokenCounts(write=None, read=None)``), never as zero: the
  arm's token cost is then shown as a lower bound and it is not ranked against arms whose cost
  is known.
- **State across restarts.** A worker that is restarted (after a timeout or a crash) builds the
  adapter again; what the service holds survives, so the adapter keeps the names it created
  (its workspace, users, agents) and what its reads depend on in a small JSON file in the
  worker's state folder and finds them again. The file is opened in the worker, at first use:
  an adapter built in a script and sent to the workers gets each replicate's own names.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib.metadata
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

import httpx

from drift_pipeline.memory import TokenCounts

from ._state import KeptNames

T = TypeVar("T")

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth another attempt: rate limits, timeouts and server errors."""


def require_env(variable: str, adapter: str, purpose: str) -> str:
    """The value of ``variable``, or a one-line error naming it.

    Raises:
        ValueError: The variable is unset or empty.
    """
    value = os.environ.get(variable, "").strip()
    if not value:
        raise ValueError(
            f"{adapter}: set {variable} to {purpose} (read from the environment only, never "
            "from options or files)"
        )
    return value


def package_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``unknown``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def endpoint_text(url: str) -> str:
    """``url`` without credentials or query (for the manifest)."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))


def status_of(error: BaseException) -> int | None:
    """The HTTP status an SDK's exception carries, if any (each SDK names it differently)."""
    for name in ("status_code", "status"):
        value = getattr(error, name, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def retry_after_of(error: BaseException) -> float | None:
    """Seconds the service asked to wait (``Retry-After``), if it said."""
    value = getattr(error, "retry_after", None)
    if isinstance(value, int | float):
        return float(value)
    headers = getattr(error, "headers", None)
    if headers is None:
        headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    # An HTTP date: measured against the response's own Date, not this process's clock (which
    # reads the session's simulated time during a call).
    sent = headers.get("date")
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
        now = email.utils.parsedate_to_datetime(str(sent))
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - now).total_seconds())


def is_transient(error: BaseException) -> bool:
    """A refusal worth retrying: a rate limit, a server error, a dropped connection, a timeout."""
    status = status_of(error)
    if status is not None:
        return status in RETRY_STATUSES
    if isinstance(error, httpx.TransportError | asyncio.TimeoutError | ConnectionError):
        return True
    # The SDKs wrap transport errors in their own classes (APIConnectionError, TimeoutError…).
    cause = error.__cause__ or error.__context__
    name = type(error).__name__
    return ("Connection" in name or "Timeout" in name) or (
        cause is not None and isinstance(cause, httpx.TransportError)
    )


class Retrying:
    """Retries transient refusals with exponential backoff and notes every retry.

    Args:
        attempts: Most attempts per call (1: never retry).
        base_delay: Seconds before the first retry; doubled before each next one.
        max_delay: Longest wait between two attempts (also caps a ``Retry-After``).
        sleep: How to wait (the tests pass a recorder).
    """

    def __init__(
        self,
        attempts: int = 4,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if attempts < 1:
            raise ValueError(f"retry attempts must be >= 1, got {attempts}")
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self.notes: list[str] = []

    async def __call__(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """``await call()``, retried while it fails transiently and attempts remain."""
        for attempt in range(1, self.attempts + 1):
            try:
                return await call()
            except Exception as error:
                if attempt == self.attempts or not is_transient(error):
                    raise
                asked = retry_after_of(error)
                delay = self.base_delay * 2 ** (attempt - 1) if asked is None else asked
                delay = min(delay, self.max_delay)
                status = status_of(error)
                reason = f"HTTP {status}" if status is not None else type(error).__name__
                self.notes.append(
                    f"{what}: {reason}; retry {attempt} of {self.attempts - 1} after {delay:g}s"
                )
                await self._sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def drain(self) -> list[str]:
        """The retries noted since the last drain (the harness records them as faults)."""
        notes, self.notes = self.notes, []
        return notes


async def poll(
    what: str,
    done: Callable[[], Awaitable[bool]],
    *,
    interval: float,
    limit: float,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Call ``done`` until it says yes, ``interval`` apart, for at most ``limit`` seconds.

    Raises:
        TimeoutError: Still not done after ``limit`` seconds (one line naming ``what``).
    """
    started = time.monotonic()
    while not await done():
        if time.monotonic() - started >= limit:
            raise TimeoutError(f"{what}: not done after {limit:g}s")
        await sleep(interval)


def scenario_defaults(source: Any) -> dict[str, Any]:
    """The scenario's id, which names the adapter's workspace (or users, or agents)."""
    return {"scenario": str(source.id)}


def utc_text(timestamp: str) -> str:
    """A session's timestamp as an RFC 3339 time (one without a zone is UTC)."""
    return timestamp if timestamp.endswith("Z") or "+" in timestamp[10:] else f"{timestamp}Z"


def render_line(message: Any) -> str:
    """A message as ``[date] speaker: text`` (the form stored where a service keeps text)."""
    return f"[{str(message['timestamp'])[:10]}] {message['speaker']}: {message['content']}"


class ServiceAdapter:
    """What the adapters to memory services share: endpoint and key, retries, kept names, waits.

    A subclass names its service (``service``, and ``title`` as it is written), its SDK's
    distribution (``sdk``) and the variables of its key and URL, and builds its SDK client in
    ``_new_client`` (called on first use by ``_client``).

    Args:
        base_url: The service's URL (default the URL variable, else ``default_url``).
        default_url: The hosted service's URL; there a key is required.
        stem: The first part of the names the adapter creates (a random suffix follows).
        poll_seconds: Seconds between two looks while waiting until queryable.
        queryable_limit_seconds: Longest wait until queryable before the store faults.
        attempts: Attempts per request (rate limits and server errors are retried).
        retry_delay: Seconds before the first retry, doubled before each next one.
        request_timeout: Seconds before one request times out.
    """

    deployment = "cloud"
    models_outside_meter = True
    """The service's models run on its servers: the harness's meter never sees them."""
    service: ClassVar[str]
    title: ClassVar[str]
    sdk: ClassVar[str]
    key_variable: ClassVar[str]
    url_variable: ClassVar[str]
    key_always: ClassVar[bool] = False
    """A key is needed even for a self-hosted server."""

    def __init__(
        self,
        *,
        base_url: str | None,
        default_url: str,
        stem: str,
        poll_seconds: float,
        queryable_limit_seconds: float,
        attempts: int,
        retry_delay: float,
        request_timeout: float,
    ) -> None:
        self.base_url = base_url or os.environ.get(self.url_variable) or default_url
        hosted = self.base_url.rstrip("/") == default_url.rstrip("/")
        # A self-hosted server may run without keys; the hosted service never does.
        self._key = (
            require_env(self.key_variable, self.service, f"the {self.title} API key")
            if hosted or self.key_always
            else os.environ.get(self.key_variable) or None
        )
        self.poll_seconds = poll_seconds
        self.queryable_limit_seconds = queryable_limit_seconds
        self.request_timeout = request_timeout
        self.retrying = Retrying(attempts, retry_delay)
        self._stem = stem
        self._kept_names: KeptNames | None = None
        self._sdk_client: Any = None
        # As the service reports it, once asked (where it has a way to say).
        self.service_version = "unknown"

    def __getstate__(self) -> dict[str, Any]:
        # A copy sent to a worker opens its own SDK client and finds its names in that worker's
        # state folder (never in the folder of the process that built it).
        state = dict(self.__dict__)
        state.update(self._per_process())
        return state

    def _per_process(self) -> dict[str, Any]:
        """Fields that belong to one process, as a copy in another process starts them."""
        return {"_kept_names": None, "_sdk_client": None}

    @property
    def _names(self) -> KeptNames:
        if self._kept_names is None:
            self._kept_names = KeptNames(self.service)
        return self._kept_names

    @property
    def prefix(self) -> str:
        """The first part of every name the adapter creates: the stem and a random suffix."""
        return self._names.prefix(self._stem)

    def _client(self) -> Any:
        """The SDK's client, built on first use (in the worker, never sent to one)."""
        if self._sdk_client is None:
            self._sdk_client = self._new_client()
        return self._sdk_client

    def _new_client(self) -> Any:
        """A new SDK client for ``base_url`` and ``request_timeout``, its own retries off.

        Every retry is made, and recorded, by ``retrying``.
        """
        raise NotImplementedError

    async def _kept(self, key: str, create: Callable[[], Awaitable[str]] | None) -> str | None:
        """The name kept under ``key``; else made by ``create`` (and kept), or ``None``."""
        kept = self._names.get(key)
        if kept is not None or create is None:
            return kept
        made = await create()
        self._names.put(key, made)
        return made

    async def _wait(self, what: str, done: Callable[[], Awaitable[bool]]) -> None:
        """Poll ``done`` every ``poll_seconds`` until it says yes, at most the wait's limit."""
        await poll(what, done, interval=self.poll_seconds, limit=self.queryable_limit_seconds)

    def token_counts(self) -> TokenCounts:
        """Unknown: the service does not report its models' tokens (never read as zero)."""
        return TokenCounts(write=None, read=None)

    def drain_retries(self) -> list[str]:
        """The retries made since the last call (recorded by the harness as faults)."""
        return self.retrying.drain()

    def service_info(self) -> dict[str, str]:
        """Service, SDK and endpoint (no key), and the names the adapter created."""
        return {
            "service": self.service,
            "service_version": self.service_version,
            "sdk": self.sdk,
            "sdk_version": package_version(self.sdk),
            "endpoint": endpoint_text(self.base_url),
            "names": self.prefix,
            "llm_tokens": "unknown: the service's models run outside the harness's meter and "
            "it reports none of their tokens",
        }
