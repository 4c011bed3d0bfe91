"""The conformance and health check a backend passes before it is scored.

An adapter that silently stores nothing, leaks one entity's memory to another or never makes a
write readable would otherwise rank as a bad memory (or a good one). :func:`check_backend`
starts the backend in the same sandboxed worker a run uses, with the same options, and:

1. **round trip**: stores a session in which a user tells agent A a fact and, once the backend
   reports it queryable (at once for a backend without ``wait_until_queryable``), retrieves it
   as A;
2. **scope**: stores a session in which the same user tells agent B another fact, which must
   reach B and never A (nor A's fact B), unless the user allowed this backend to leak: then
   the leak is reported, and a run records it and scores the arm (its row marked as leaking,
   its Privacy not measured);
3. **awkward messages**: stores an empty message, a very long one and a non-ASCII one without a
   fault, and finds the non-ASCII fact unchanged;
4. **declared capabilities**: which optional protocols it implements (entity-scoped store,
   asynchronous ingestion, snapshot, its own storage count, a service description), that its
   token counters work, and that its own storage count matches its snapshot;
   **model tokens**: whether its models run where the meter cannot see them (declared, or model
   API calls its worker saw go around the meter) and whether its ``token_counts()`` covers them:
   the check says, by the rule a run charges with (:func:`._charging.token_source`), whether a
   run will know its model spend. An unknown spend does not fail the check (a run shows such an
   arm's figures as bounds and does not rank it), but the report says so before anything runs;
5. **latency**: time-to-queryable of each store, and read latency p50/p95 over a few reads.

Sessions have the shape of a run's (a user speaking to an agent, the agent asking its memory),
are stored for each agent that speaks in them as a run stores them, and, with the simulated
clock on (as in a run), at the simulated time of their messages. The first failure is the
report's one-line reason; the figures are reported either way. ``drift check-backend NAME``
prints the report, and ``drift run`` checks every arm that is not a built-in before it scores
anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import time
import unicodedata
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from drift_pipeline.tokens import count_tokens_lines

from ._charging import UNKNOWN, token_source
from ._client import BackendWorker, CallResult
from ._honesty import SnapshotIndex
from ._metering import start_cell_meter
from ._protocol import Message
from ._secrets import arm_secrets, redact
from ._session_reads import session_agents

__all__ = [
    "CheckScript",
    "ConformanceReport",
    "check_backend",
    "check_backend_async",
    "check_script",
]


class _Fact(NamedTuple):
    """A fact the check stores, the question that should find it, and the token that shows it."""

    said: str
    asked: str
    token: str


# What the check's sessions are made of. A run draws its agents, user, facts, tokens, date and
# session names from these with a seed of its own (see :func:`check_script`), so no fixed
# string tells a backend that it is being checked rather than scored.
_NAMES = (
    "ada", "bea", "cai", "dana", "eli", "fen", "gus", "hana", "ivo", "jun", "kit", "lena",
    "milo", "nia", "otto", "pia", "quin", "rafa", "sana", "theo", "uma", "vera", "wen", "yara",
)  # fmt: skip
_ROLES = ("assistant", "helper", "agent", "concierge", "planner", "coach", "tutor", "aide")
_THINGS = (
    ("harbour pass code", "the harbour pass code"),
    ("locker combination", "the locker combination"),
    ("storage unit code", "the storage unit code"),
    ("garage door code", "the garage door code"),
    ("gym locker code", "the gym locker code"),
    ("bike shed code", "the bike shed code"),
    ("mailbox key number", "the mailbox key number"),
    ("studio door code", "the studio door code"),
)
_HABITS = ("I always use {thing} {token}.", "I always keep {thing} at {token}.")
_WORDS = (
    "QUIVER", "OSPREY", "HERON", "MARLIN", "CEDAR", "EMBER", "FALCON", "GLACIER", "HAZEL",
    "JUNIPER", "KESTREL", "LANTERN", "MAPLE", "NEBULA", "ORCHID", "PELICAN", "RAVEN", "SPRUCE",
    "TALON", "VIOLET", "WILLOW", "ZEPHYR", "BADGER", "COBALT",
)  # fmt: skip
# Non-ASCII names (Latin letters beyond ASCII, one per alphabet) and places with accents.
_CAFES = ("Łódź-Ørsted", "Žižkov-Ærø", "Ñandú-Øresund", "Dvořák-Ålesund", "Şişli-Æbelø")
_PLACES = ("Kraków", "Córdoba", "Besançon", "Zürich", "Malmö", "Plzeň")
_NEAR = ("東京ラーメン", "ソウル食堂", "北京小馆", "Αθήνα")
# Everyday words of the very long message, and ways to ask for both agents' facts at once.
_FILLER_TEXT = (
    "the a of and to in we it that was on for with as at by this had not but from or have "
    "one all were when there can an your which their said if do will each about how up out "
    "them then she many some so these would other into has more her two like him see time "
    "could no make than first been its who now people my made over did down only way find "
    "use may water long little very after words called just where most know get through "
    "back much before go good new write our used me man too any day same right look think "
    "also around another came come work three word must because does part even place well "
    "such"
)
_FILLER = tuple(_FILLER_TEXT.split())
_POOLED = (
    "What codes and combinations do you know?",
    "Which codes do you remember, the {a} or the {b}?",
    "Do you know my {a} or my {b}?",
    "List every code I have told you.",
)
_REPLY = "Noted."
_LONG_WORDS = 16_000
"""Words of the very long message (about 16,000 tokens, longer than many models' windows)."""


@dataclass(frozen=True)
class CheckScript:
    """The agents, the user and the facts of one conformance check, drawn from its seed.

    Attributes:
        entities: The two agents whose memories get a fact each (A, then B).
        user: The one person who tells both agents their facts (as in a world with two
            assistants).
        when: The simulated time of every session of the check.
        session_prefix: The first part of its sessions' ids.
        fact_a: A's fact (a sincere first-person habit with a token no world contains).
        fact_b: B's fact.
        unicode: A non-ASCII fact that must come back unchanged.
        filler: The words the very long message starts with.
        long_fact: The fact at the end of the very long message, its question and its token.
        pooled_question: A question that could find either agent's fact.
        reads: The questions of the read-latency sample.
    """

    entities: tuple[str, str]
    user: str
    when: str
    session_prefix: str
    fact_a: _Fact
    fact_b: _Fact
    unicode: _Fact
    filler: str = field(repr=False)
    long_fact: _Fact
    pooled_question: str
    reads: tuple[str, ...]


def check_script(seed: str = "") -> CheckScript:
    """The check's agents, user and facts drawn from ``seed`` (the same seed, the same check).

    A run seeds it with what it runs (see ``drift_pipeline.pipeline``), so that its manifest
    reads the same on a rerun, while a backend cannot recognise the check by a name or a
    sentence written in the package.
    """
    rng = random.Random(hashlib.sha256(f"drift-conformance\0{seed}".encode()).digest())
    first, second, user = rng.sample(_NAMES, 3)
    role_a, role_b = rng.sample(_ROLES, 2)
    thing_a, thing_b, thing_long = rng.sample(_THINGS, 3)
    word_a, word_b, word_long = rng.sample(_WORDS, 3)

    def token(word: str) -> str:
        return f"{word}-{rng.randrange(1000, 10_000)}"

    def fact(thing: tuple[str, str], word: str) -> _Fact:
        said = rng.choice(_HABITS).format(thing=f"my {thing[0]}", token=token(word))
        return _Fact(said, f"What is {thing[1]}?", said.rsplit(" ", 1)[1].rstrip("."))

    fact_a, fact_b = fact(thing_a, word_a), fact(thing_b, word_b)
    cafe, place, near = rng.choice(_CAFES), rng.choice(_PLACES), rng.choice(_NEAR)
    unicode = _Fact(
        f"I love the café {cafe} in {place}, near {near}. ☕",
        f"What is the name of the café in {place}?",
        cafe,
    )
    day = rng.randrange(1, 29)
    return CheckScript(
        entities=(f"{first}-{role_a}", f"{second}-{role_b}"),
        user=user,
        when=f"203{rng.randrange(0, 10)}-{rng.randrange(1, 13):02d}-{day:02d}T"
        f"{rng.randrange(8, 20):02d}:{rng.randrange(0, 60):02d}:00",
        session_prefix=f"{user}-{rng.choice(('chat', 'talk', 'session', 'thread'))}",
        fact_a=fact_a,
        fact_b=fact_b,
        unicode=unicode,
        filler=" ".join(rng.choice(_FILLER) for _ in range(_LONG_WORDS)),
        long_fact=fact(thing_long, word_long),
        pooled_question=rng.choice(_POOLED).format(a=thing_a[0], b=thing_b[0]),
        reads=(
            fact_a.asked,
            "Where is the café?",
            "What did the user tell you?",
            thing_a[0].split(" ")[0],
            "Tell me everything you remember.",
        ),
    )


@dataclass(frozen=True)
class ConformanceReport:
    """What the check found, and why a backend failed it.

    Attributes:
        backend: The backend checked (a registered name or ``module:Class``).
        reason: One line saying why it failed; ``None`` when it passed.
        checks: Each check's outcome by name (``None``: not reached after an earlier failure).
        capabilities: The optional protocols it implements (each a bool: what its worker
            ``declares`` at start), the ``service`` it describes and its ``version``; empty
            when it did not start.
        queryable_ms: Time from each store's return until it was queryable (0 for a backend
            that reports nothing: queryable once ``store`` returns).
        read_ms: Time inside each ``retrieve``.
        isolation: The sandbox the backend ran in.
        notes: What a user should know that does not fail it (a snapshot that does not hold
            what was retrieved, a long message whose end was not found).
        leak: How it leaks across entities, in one line, when it does and the user allowed it
            (``allow_leak``); a leak not allowed is the ``reason`` instead.
        leak_allowed: Whether the user allowed this backend to leak across entities.
        start_error: Why it could not be built, when it could not (a run reports such an arm
            as a backend that could not start, not as a check it failed).
        model_tokens: Where a run would take its LLM tokens from, judged on the check's calls
            (one of ``memory.TOKEN_SOURCES``: ``metered``, ``self-reported`` or ``unknown``);
            empty when it did not start.
        unmetered_calls: Requests to model APIs its worker saw go anywhere but the meter.
    """

    backend: str
    reason: str | None
    checks: dict[str, bool | None]
    capabilities: dict[str, Any] = field(default_factory=dict)
    queryable_ms: tuple[float, ...] = ()
    read_ms: tuple[float, ...] = ()
    isolation: str = ""
    notes: tuple[str, ...] = ()
    leak: str | None = None
    leak_allowed: bool = False
    start_error: str | None = None
    model_tokens: str = ""
    unmetered_calls: int = 0

    @property
    def passed(self) -> bool:
        """Whether the backend may be scored."""
        return self.reason is None

    def read_p50_ms(self) -> float:
        """Median read latency (NaN without reads)."""
        return _percentile(self.read_ms, 0.50)

    def read_p95_ms(self) -> float:
        """95th-percentile read latency, nearest rank (NaN without reads)."""
        return _percentile(self.read_ms, 0.95)

    def queryable_max_ms(self) -> float:
        """The longest time-to-queryable of its stores (NaN without stores)."""
        return max(self.queryable_ms) if self.queryable_ms else math.nan

    def line(self) -> str:
        """One line: passed with its figures, or failed with the reason."""
        if self.reason is not None:
            return f"{self.backend}: failed the conformance check: {self.reason}"
        queryable = (
            f"queryable within {self.queryable_max_ms():.1f} ms"
            if self.capabilities.get("asynchronous")
            else "queryable once store() returns"
        )
        leaks = (
            f"; {self.leak}, allowed: its row is marked and its Privacy not measured"
            if self.leak is not None
            else ""
        )
        unknown = (
            "; model tokens unknown: a run will not rank it" if self.model_tokens == UNKNOWN else ""
        )
        return (
            f"{self.backend}: passed the conformance check ({queryable}, read p50 "
            f"{self.read_p50_ms():.1f} ms, p95 {self.read_p95_ms():.1f} ms{leaks}{unknown})"
        )

    def lines(self) -> list[str]:
        """The report for a terminal: the verdict, each check, the capabilities, the notes."""
        shown = {True: "pass", False: "FAIL", None: "not reached"}
        out = [self.line()]
        for name, outcome in self.checks.items():
            leaked = name == "scope" and self.leak is not None
            out.append(f"  {name}: {'leaks (allowed)' if leaked else shown[outcome]}")
        declared = self.capabilities
        if declared:
            flags = (
                "stores_for_entity",
                "asynchronous",
                "snapshot",
                "counts_own_storage",
                "models_outside_meter",
            )
            out.append(
                "  declares: "
                + ", ".join(f"{flag} {'yes' if declared.get(flag) else 'no'}" for flag in flags)
            )
            if "token_counts" in declared:
                out.append(f"  token counts: {declared['token_counts']}")
            for key, value in sorted(dict(declared.get("service") or {}).items()):
                out.append(f"  service {key}: {value}")
        if self.model_tokens:
            out.append(f"  model tokens: {self.model_tokens}")
        out += [f"  note: {note}" for note in self.notes]
        if self.isolation:
            out.append(f"  isolation: {self.isolation}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as the JSON summary holds it (figures in ms)."""
        return {
            "backend": self.backend,
            "passed": self.passed,
            "reason": self.reason,
            "checks": dict(self.checks),
            "capabilities": self.capabilities,
            "queryable_ms": list(self.queryable_ms),
            "read_ms_p50": _finite(self.read_p50_ms()),
            "read_ms_p95": _finite(self.read_p95_ms()),
            "isolation": self.isolation,
            "notes": list(self.notes),
            "leak": self.leak,
            "leak_allowed": self.leak_allowed,
            "model_tokens": self.model_tokens or None,
            "unmetered_calls": self.unmetered_calls,
        }


class _Failed(Exception):
    """One check failed; the message is the report's reason."""


CHECKS = ("starts", "round_trip", "scope", "awkward_messages", "capabilities")
"""The checks in the order they run."""


def check_backend(
    spec: str,
    options: Mapping[str, Any] | None = None,
    *,
    call_timeout: float = 30.0,
    isolate: bool = True,
    protect: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    settle_s: float = 2.0,
    simulated_clock: bool = True,
    allow_leak: bool = False,
    seed: str = "",
) -> ConformanceReport:
    """Run the conformance check on one backend, in its own sandboxed worker.

    Args:
        spec: A registered backend name or a ``package.module:Class`` import path.
        options: Its constructor options, as a run would give them.
        call_timeout: Seconds a store (with its wait until queryable) or a retrieve may take.
        isolate: Run it sandboxed, as a run does (off only for debugging).
        protect: Folders it must not see (a run's data root).
        env: Variables of the harness passed into its worker (a model's key).
        settle_s: How long a fact that was not found at once is looked for again, to tell a
            backend that stores nothing from one that ingests asynchronously without saying so.
        simulated_clock: The backend's clocks read the sessions' simulated time during its
            calls, as in a run (``False``: as ``drift run --real-clock``).
        allow_leak: The user accepts that this backend keeps entities' memories together: a
            fact that reaches another entity is reported (``report.leak``) instead of failing
            the check. Off by default: a store that leaks across entities is refused.
        seed: What the check's agents, user and facts are drawn from (:func:`check_script`):
            a run gives one of its own, so that a backend cannot tell the check from a run.

    Returns:
        The report; ``report.passed`` says whether it may be scored and ``report.reason``
        why not, in one line.
    """
    return asyncio.run(
        check_backend_async(
            spec,
            options,
            call_timeout=call_timeout,
            isolate=isolate,
            protect=protect,
            env=env,
            settle_s=settle_s,
            simulated_clock=simulated_clock,
            allow_leak=allow_leak,
            seed=seed,
        )
    )


async def check_backend_async(
    spec: str,
    options: Mapping[str, Any] | None = None,
    *,
    call_timeout: float = 30.0,
    isolate: bool = True,
    protect: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    settle_s: float = 2.0,
    simulated_clock: bool = True,
    allow_leak: bool = False,
    seed: str = "",
) -> ConformanceReport:
    """:func:`check_backend` inside a running event loop (same arguments and result)."""
    # Its model calls go through a token meter, as in a run: a backend that calls a model
    # through the endpoint its worker is given finds one, and the user's key stays here.
    metering = start_cell_meter(spec, dict(options or {}))
    account = metering.account(f"{spec}#conformance")
    passed = {**dict(env or {}), **metering.environment(account)}
    worker = BackendWorker(spec, metering.options, list(protect), call_timeout, isolate, passed)
    if simulated_clock:
        worker.init_extra = lambda: {"clock": True}
    run = _Run(spec, worker, settle_s, simulated_clock, allow_leak, check_script(seed))
    try:
        await run.all()
    except _Failed as failure:
        run.reason = str(failure)
    finally:
        await worker.close()
        spent = account.book()
        metering.close()
    if spent.calls or spent.refused:
        run.notes.append(
            f"its model calls during the check: {spent.calls} through the meter, "
            f"{spent.total} tokens, {spent.refused} refused (no endpoint configured)"
        )
    if run.checks["starts"]:
        run.judge_model_tokens(spent.total)
    # Keys it was given stay out of the report, as they stay out of a run's records (the
    # meter's key too: it differs between runs).
    return run.report((*arm_secrets(options or {}, (env or {}).keys()), account.key))


class _Run:
    """The state of one check: the worker, what was measured, how far it got."""

    def __init__(
        self,
        spec: str,
        worker: BackendWorker,
        settle_s: float,
        clock: bool,
        allow_leak: bool,
        script: CheckScript,
    ) -> None:
        self.spec = spec
        self.script = script
        self.worker = worker
        self.settle_s = settle_s
        self.clock = clock
        self.allow_leak = allow_leak
        self.leak: str | None = None
        self.start_error: str | None = None
        self.checks: dict[str, bool | None] = dict.fromkeys(CHECKS)
        self.capabilities: dict[str, Any] = {}
        self.queryable_ms: list[float] = []
        self.read_ms: list[float] = []
        self.notes: list[str] = []
        self.contexts: list[str] = []
        self.reason: str | None = None
        self.sessions = 0
        self.last_store: dict[str, Any] = {}
        self.keeps_nothing = False
        # The backend's own token counts at start and after its last call (None: it said it
        # does not know), and the model calls its worker saw go around the meter.
        self.counts_at_start: int | None = 0
        self.counts_now: int | None = 0
        self.counts_unknown = False
        self.unmetered = 0
        self.model_tokens = ""

    def report(self, secrets: Sequence[str]) -> ConformanceReport:
        capabilities = dict(self.capabilities)
        if "service" in capabilities:
            capabilities["service"] = {
                key: redact(value, secrets) or "" for key, value in capabilities["service"].items()
            }
        return ConformanceReport(
            self.spec,
            redact(self.reason, secrets),
            self.checks,
            capabilities,
            tuple(self.queryable_ms),
            tuple(self.read_ms),
            self.worker.isolation if self.checks["starts"] else "",
            tuple(redact(note, secrets) or "" for note in self.notes),
            redact(self.leak, secrets),
            self.allow_leak,
            redact(self.start_error, secrets),
            self.model_tokens,
            self.unmetered,
        )

    async def all(self) -> None:
        await self._step("starts", self.start())
        await self._step("round_trip", self.round_trip())
        await self._step("scope", self.scope())
        await self._step("awkward_messages", self.awkward())
        await self._step("capabilities", self.declared())

    async def _step(self, name: str, check: Awaitable[None]) -> None:
        try:
            await check
        except _Failed:
            self.checks[name] = False
            raise
        self.checks[name] = True

    # --- the checks ---------------------------------------------------------------------------

    async def start(self) -> None:
        # A service_info() that fails or says something unprintable fails the start, as in a run.
        started = await self.worker.start()
        if not started.ok:
            self.start_error = started.error or "unknown error"
            raise _Failed(f"it could not start: {self.start_error}")
        self.capabilities = {
            **dict(started.data.get("declares") or {}),
            "models_outside_meter": self.worker.models_outside_meter,
            "service": dict(self.worker.service),
            "version": self.worker.version,
        }
        self.keeps_nothing = bool(self.capabilities.get("keeps_nothing"))
        self.counts_at_start = self.counts_now = _total(started)
        self.counts_unknown = self.counts_at_start is None

    async def round_trip(self) -> None:
        a = self.script.entities[0]
        said, asked, token = self.script.fact_a
        await self.store(a, said, "a fact")
        if self.keeps_nothing:
            # A declared baseline (the amnesiac): its declaration is what is checked.
            if await self.finds(a, asked, token):
                raise _Failed(f"it declares keeps_nothing but returned the fact ({token})")
            self.notes.append("it declares it keeps nothing of what is said (a baseline)")
            return
        if not await self.finds(a, asked, token):
            raise _Failed(await self.not_found(a, asked, token, "the fact"))

    async def scope(self) -> None:
        a, b = self.script.entities
        said, asked, token = self.script.fact_b
        await self.store(b, said, "a second entity's fact")
        if not self.keeps_nothing and not await self.finds(b, asked, token):
            raise _Failed(await self.not_found(b, asked, token, "a second entity's fact"))
        for entity, question, other, owner in (
            (a, asked, token, b),
            (a, self.script.pooled_question, token, b),
            (b, self.script.fact_a.asked, self.script.fact_a.token, a),
        ):
            context = await self.read(entity, question)
            if other.casefold() in context.casefold():
                leak = (
                    f"it leaks across entities: a fact stored for {owner} ({other}) was "
                    f"returned to {entity}"
                )
                if not self.allow_leak:
                    raise _Failed(leak)
                self.leak = leak
                return
        if self.allow_leak:
            self.notes.append("it was allowed to leak across entities, and no leak was seen")

    async def awkward(self) -> None:
        a = self.script.entities[0]
        await self.store(a, "", "an empty message")
        long_fact = self.script.long_fact
        await self.store(a, f"{self.script.filler} {long_fact.said}", "a very long message")
        said, asked, token = self.script.unicode
        # The last store also brings back the snapshot and the backend's own count of it.
        self.last_store = await self.store(a, said, "a non-ASCII message", True)
        context = await self.read(a, asked)
        if self.keeps_nothing:
            return
        if token not in context:
            altered = _folded(token) in _folded(context)
            raise _Failed(
                f"it does not return non-ASCII text unchanged: {token!r} "
                + (
                    "came back altered"
                    if altered
                    else f"was not found for {a} ({asked!r} returned {len(context)} chars)"
                )
            )
        if long_fact.token not in await self.read(a, long_fact.asked):
            self.notes.append(
                "the end of a very long message was not found (it may keep only its start)"
            )

    async def declared(self) -> None:
        for question in self.script.reads:
            await self.read(self.script.entities[0], question)
        # Asked again, as a run asks at a replicate's end: a lazily connected service knows more.
        await self.worker.describe()
        self.capabilities["service"] = dict(self.worker.service)
        declared = self.capabilities
        if not declared.get("snapshot"):
            self.notes.append("no snapshot(): its Selectivity and storage will be not measured")
            return
        snapshot = str(self.last_store.get("snapshot") or "")
        reported = self.last_store.get("storage_tokens")
        counted = count_tokens_lines(snapshot)
        if declared.get("counts_own_storage") and reported != counted:
            raise _Failed(
                f"its storage_tokens() says {reported} but its snapshot() holds {counted} tokens"
            )
        index = SnapshotIndex(snapshot)
        hidden = next((line for c in self.contexts if (line := index.unreported(c))), None)
        if hidden is not None:
            self.notes.append(
                f"its snapshot() does not hold what retrieve() returned ({hidden!r}): a run "
                "will mark its storage under-reported"
            )

    def judge_model_tokens(self, metered: int) -> None:
        """Say where a run would take this backend's LLM tokens from, as a run's rule does.

        Args:
            metered: Tokens of its model calls that went through the check's meter.
        """
        self.capabilities["token_counts"] = "unknown" if self.counts_unknown else "counted"
        reported = (
            None
            if self.counts_unknown or self.counts_at_start is None or self.counts_now is None
            else self.counts_now - self.counts_at_start
        )
        declared = bool(self.capabilities.get("models_outside_meter"))
        self.model_tokens = token_source(metered, reported, declared or self.unmetered > 0)
        if self.unmetered:
            self.notes.append(
                f"its worker saw {self.unmetered} request(s) to a model API sent around the "
                "meter (a model client given its own URL)"
            )
        if self.model_tokens == UNKNOWN:
            why = (
                "it declares models_outside_meter"
                if declared
                else "it calls models around the meter"
            )
            self.notes.append(
                f"its model spend is unknown ({why}, and its token_counts() does not cover "
                "it): a run shows its token cost as a lower bound, MVOT and DRIFT-C as upper "
                "bounds, and does not rank it; report the tokens from token_counts() to be "
                "ranked"
            )

    def _counted(self, result: CallResult) -> None:
        """Keep a reply's token counts and the model calls seen around the meter."""
        self.unmetered += int(result.data.get("unmetered", 0) or 0)
        if "write" not in result.data:
            return  # no reply from the backend (a worker that died): nothing it said
        now = _total(result)
        if now is None:
            self.counts_unknown = True
        else:
            self.counts_now = now

    # --- calls --------------------------------------------------------------------------------

    def _session(self) -> str:
        self.sessions += 1
        return f"{self.script.session_prefix}-{self.sessions:02d}"

    async def store(
        self, agent: str, said: str, what: str, snapshot: bool = False
    ) -> dict[str, Any]:
        """Store a session of its own in which the user tells ``agent`` what is ``said``."""
        when = self.script.when
        messages: list[Message] = [
            {"speaker": self.script.user, "role": "user", "content": said, "timestamp": when},
            {"speaker": agent, "role": "assistant", "content": _REPLY, "timestamp": when},
        ]
        request = {
            "op": "store",
            "session_id": self._session(),
            "messages": messages,
            # Whose memory it goes into, worked out as a run does: the agent that speaks.
            "entities": session_agents(messages),
            "snapshot": snapshot,
        }
        if self.clock:
            request["at"] = when
        result = await self.worker.call(request)
        self._counted(result)
        if not result.ok:
            error = result.error or "unknown error"
            if self.capabilities.get("asynchronous") and (
                "wait_until_queryable" in error or "timeout" in error
            ):
                raise _Failed(f"it never became queryable after storing {what}: {error}")
            raise _Failed(f"storing {what} failed: {error}")
        problem = result.data.get("counts_error")
        if problem:
            raise _Failed(f"its token counters are broken: {problem}")
        self.queryable_ms.append(float(result.data.get("queryable_ms") or 0.0))
        return result.data

    async def read(self, entity: str, question: str) -> str:
        request = {
            "op": "retrieve",
            "session_id": f"{self.script.session_prefix}-{self.sessions:02d}",
            "entity_id": entity,
            "query": question,
        }
        if self.clock:
            request["at"] = self.script.when
        result = await self.worker.call(request)
        self._counted(result)
        if not result.ok:
            raise _Failed(f"retrieve for {entity} failed: {result.error}")
        problem = result.data.get("counts_error")
        if problem:
            raise _Failed(f"its token counters are broken: {problem}")
        self.read_ms.append(result.backend_ms)
        context = str(result.data.get("context") or "")
        self.contexts.append(context)
        return context

    async def finds(self, entity: str, question: str, token: str) -> bool:
        return token.casefold() in (await self.read(entity, question)).casefold()

    async def not_found(self, entity: str, question: str, token: str, what: str) -> str:
        """Why a fact stored for ``entity`` was not found: nothing kept, or kept late."""
        waited = 0.0
        started = time.monotonic()
        pause = 0.05
        while waited < self.settle_s:
            await asyncio.sleep(pause)
            waited = time.monotonic() - started
            pause = min(pause * 2, 0.5)
            if await self.finds(entity, question, token):
                return (
                    f"it reports a store done before it can be read: {what} appeared only "
                    f"{waited * 1000:.0f} ms later; implement wait_until_queryable()"
                )
        return (
            f"it stores nothing: {what} stored for {entity} was not returned to {entity} "
            f"({question!r}) once queryable, nor {self.settle_s:g}s later"
        )


def _total(result: CallResult) -> int | None:
    """A reply's write plus read tokens as the backend counts them (``None``: it does not know)."""
    write, read = result.data.get("write"), result.data.get("read")
    if not isinstance(write, int) or not isinstance(read, int):
        return None
    return write + read


def _folded(text: str) -> str:
    """``text`` without accents or case (how an ASCII-folding memory would give it back)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value
