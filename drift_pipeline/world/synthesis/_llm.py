"""The LLM synthesizer (spec §3.5): a model writes each session, a deterministic verifier checks it.

Every session of a world is asked for at once (:meth:`LLMSynthesizer.prepare`, called by the
generator before it walks the sessions), through :class:`~drift_pipeline.llm.LLMClient` and its
cache, so a rerun or a resumed run sends no request and writes byte-identical transcripts. A
reply that fails to parse or to verify is asked for again with the reason (a new attempt index
in the prompt version, so the bad reply is not a cache hit); after ``max_attempts`` the session
is written by the template synthesizer instead and the failure is recorded
(:meth:`LLMSynthesizer.take_fallbacks`, stored in the ``synthesis_fallbacks`` table).
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drift_pipeline.llm import Completion, LLMClient, LLMConfig, LLMError
from drift_pipeline.world._model import SessionPlan, Turn

from ._base import SessionContext, Synthesizer
from ._prompt import SessionPrompt, build_prompt, full_prompt_version, principal_of
from ._template import SessionScript, TemplateSynthesizer
from ._verify import (
    NOISE_KINDS,
    REPLY_SCHEMA,
    DraftTurn,
    ReplyError,
    event_aliases,
    event_turns,
    first_person_assertions,
    parse_reply,
)

_REASON_CHARS = 240
# Output cap per session: the longest session asked for (7 exchanges) fits with room to spare.
_MAX_TOKENS = 2048


@dataclass(frozen=True)
class SynthesisFallback:
    """A session the LLM could not write acceptably, written by the template synthesizer.

    Attributes:
        session_index: The session.
        reason: Why the last attempt was rejected (one line).
        attempts: How many replies were rejected.
        planned: The phrasing families the session's plan used (space-separated ids), which
            the grammar then wrote it with.
    """

    session_index: int
    reason: str
    attempts: int
    planned: str = ""


class LLMSynthesizer:
    """Writes sessions with an LLM, verified; the template synthesizer covers what fails.

    Sessions without a human participant (agents' status chatter) are always templated: there
    is no principal to voice, nothing to verify.
    """

    name = "llm"
    version = "1"

    def __init__(
        self,
        client: LLMClient,
        *,
        max_attempts: int = 3,
        fallback: Synthesizer | None = None,
    ) -> None:
        """An LLM synthesizer over ``client``.

        Args:
            client: The model client (its cache makes reruns free).
            max_attempts: Replies asked for per session before falling back (at least 1).
            fallback: Writes the sessions the model fails (default: the template synthesizer).
        """
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.client = client
        self.max_attempts = max_attempts
        self.fallback = fallback or TemplateSynthesizer()
        self._ready: dict[int, list[Turn]] = {}
        self._fallbacks: list[SynthesisFallback] = []
        self.fallback_count = 0
        """Sessions handed to the fallback since this synthesizer was made (all worlds)."""

    def __repr__(self) -> str:
        return f"LLMSynthesizer({self.client!r}, max_attempts={self.max_attempts})"

    def describe_usage(self) -> str:
        """One line for a command's summary: requests, cache hits, tokens, fallbacks."""
        usage = self.client.usage
        cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else ""
        return (
            f"synthesizer llm ({self.client.config.model}): {usage.requests} requests, "
            f"{usage.cache_hits} cache hits, {usage.retries} retries, "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens{cost}, "
            f"{self.fallback_count} sessions fell back to the template (synthesis_fallbacks)"
        )

    def pin(self) -> dict[str, str]:
        """What a world's manifest records: model and prompt, never the key or the endpoint.

        The endpoint's address is left out on purpose: the same model served elsewhere writes
        the same world (and its cache entries still apply).
        """
        config = self.client.config
        return {
            "model": config.model,
            "temperature": repr(config.temperature),
            "prompt_version": full_prompt_version(),
            "max_attempts": str(self.max_attempts),
            "fallback": f"{self.fallback.name}@{self.fallback.version}",
            # The fallback's own pin (the template synthesizer's phrasing split).
            **{f"fallback_{key}": value for key, value in _pin_of(self.fallback).items()},
        }

    # --- the synthesizer interface ----------------------------------------------------------

    def prepare(self, plans: Sequence[SessionPlan], contexts: Sequence[SessionContext]) -> None:
        """Write every session of a world at once (concurrently, through the cache).

        ``contexts[i]`` must be the context of ``plans[i]`` as :meth:`session` will receive it
        (its ``current`` a snapshot of the state before that session).

        Raises:
            LLMError: When a call fails for good (replies already received stay cached, so a
                rerun resumes where this one stopped).
        """
        self._fallbacks = []
        self._ready = self._write(list(zip(plans, contexts, strict=True)))

    def session(self, plan: SessionPlan, context: SessionContext) -> list[Turn]:
        """The session's turns: prepared ones when :meth:`prepare` ran, else written now."""
        ready = self._ready.pop(plan.session_index, None)
        if ready is not None:
            return ready
        return self._write([(plan, context)])[plan.session_index]

    def take_fallbacks(self) -> list[SynthesisFallback]:
        """The fallbacks since the last call, by session (the generator stores them per world)."""
        taken = sorted(self._fallbacks, key=lambda f: f.session_index)
        self._fallbacks = []
        return taken

    # --- internals ----------------------------------------------------------------------------

    def _write(self, items: list[tuple[SessionPlan, SessionContext]]) -> dict[int, list[Turn]]:
        written: dict[int, list[Turn]] = {}
        pending: list[tuple[SessionPlan, SessionContext]] = []
        scripts: dict[int, SessionScript] = {}
        for plan, context in items:
            if principal_of(plan, context) is None:
                written[plan.session_index] = self.fallback.session(plan, context)
            else:
                pending.append((plan, context))
                script = _script(self.fallback, plan, context)
                if script is not None:
                    scripts[plan.session_index] = script
        reasons: dict[int, str] = {}
        for attempt in range(self.max_attempts):
            if not pending:
                break
            prompts = [
                self._prompt(plan, context, reasons, attempt, scripts.get(plan.session_index))
                for plan, context in pending
            ]
            replies = self.client.complete_many(
                [self._request(prompt, attempt) for prompt in prompts]
            )
            errors = [reply for reply in replies if isinstance(reply, LLMError)]
            if errors:
                raise errors[0]
            retry: list[tuple[SessionPlan, SessionContext]] = []
            for (plan, context), prompt, reply in zip(pending, prompts, replies, strict=True):
                assert isinstance(reply, Completion)
                turns, reason = self._accept(plan, context, prompt, reply.text)
                if turns is not None:
                    written[plan.session_index] = turns
                else:
                    reasons[plan.session_index] = reason
                    retry.append((plan, context))
            pending = retry
        self.fallback_count += len(pending)
        for plan, context in pending:
            script = scripts.get(plan.session_index)
            planned = " ".join(item.family_id for item in script.planned) if script else ""
            self._fallbacks.append(
                SynthesisFallback(
                    plan.session_index, reasons[plan.session_index], self.max_attempts, planned
                )
            )
            written[plan.session_index] = self.fallback.session(plan, context)
        return written

    @staticmethod
    def _prompt(
        plan: SessionPlan,
        context: SessionContext,
        reasons: dict[int, str],
        attempt: int,
        script: SessionScript | None,
    ) -> SessionPrompt:
        human = principal_of(plan, context)
        assert human is not None
        feedback = reasons.get(plan.session_index)
        return build_prompt(plan, context, human, feedback, attempt, script)

    @staticmethod
    def _request(prompt: SessionPrompt, attempt: int) -> dict[str, Any]:
        return {
            "messages": list(prompt.messages),
            # The attempt is part of the key: a retry must never be served the rejected reply.
            "prompt_version": f"{full_prompt_version()}/attempt-{attempt}",
            "max_tokens": _MAX_TOKENS,
            "json_schema": {"name": "transcript", "schema": REPLY_SCHEMA, "strict": True},
        }

    def _accept(
        self, plan: SessionPlan, context: SessionContext, prompt: SessionPrompt, text: str
    ) -> tuple[list[Turn] | None, str]:
        """The session's turns if the reply parses and verifies, else the reason it does not."""
        try:
            drafts = parse_reply(text, max_turns=prompt.max_turns)
        except ReplyError as error:
            return None, _short(f"unparsable reply: {error}")
        event = plan.event
        carriers: list[int] = []
        if event is not None:
            carriers = event_turns(drafts, event, context.profiles)
            if not carriers:
                phrases = " or ".join(repr(a) for a in event_aliases(event, context.profiles))
                return None, _short(f"the event value was not said by the person ({phrases})")
        asserted = first_person_assertions(
            drafts, prompt.principal, plan.participants, context.profiles, context.current, event
        )
        if asserted:
            return None, _short(f"a first-person claim that is not true now: {asserted[0]}")
        return self._turns(plan, prompt.principal, drafts, carriers), ""

    @staticmethod
    def _turns(
        plan: SessionPlan, principal: str, drafts: list[DraftTurn], carriers: list[int]
    ) -> list[Turn]:
        """Transcript turns with the harness-private labels, as the template synthesizer sets them.

        The event label goes to every turn of the person that the verifier found carrying the
        event's value (the model's own "event" label is not trusted); assistant replies rotate
        over the assistants, and the reply to an event about an assistant is that assistant's.
        """
        event = plan.event
        repliers = [p for p in plan.participants if p != principal] or [principal]
        turns: list[Turn] = []
        exchange = 0
        for index, draft in enumerate(drafts):
            if draft.speaker == "user":
                carried = index in carriers
                kind = "event" if carried else draft.kind if draft.kind in NOISE_KINDS else "task"
                event_id = event.event_id if carried and event is not None else None
                turns.append(
                    Turn(plan.session_index, index, principal, "user", draft.text, event_id, kind)
                )
                continue
            speaker = repliers[exchange % len(repliers)]
            acknowledges = index - 1 in carriers
            if acknowledges and event is not None and event.subject in repliers:
                speaker = event.subject
            turns.append(
                Turn(
                    plan.session_index,
                    index,
                    speaker,
                    "assistant",
                    draft.text,
                    None,
                    "ack" if acknowledges else "task",
                )
            )
            exchange += 1
        return turns


SYNTHESIZER_MODEL_ENV = "DRIFT_SYNTHESIZER_MODEL"
"""Optional: the synthesizer's model, when it is not ``DRIFT_LLM_MODEL``."""


def synthesizer_from_env(cache_dir: str | os.PathLike[str] | None) -> LLMSynthesizer:
    """An LLM synthesizer configured by ``DRIFT_LLM_*`` (and ``DRIFT_SYNTHESIZER_MODEL``).

    Args:
        cache_dir: Where replies are cached (normally ``<data root>/llm_cache``).

    Raises:
        LLMError: One line naming the missing or malformed variable.
    """
    model = os.environ.get(SYNTHESIZER_MODEL_ENV, "").strip()
    config = LLMConfig.from_env(**({"model": model} if model else {}))
    return LLMSynthesizer(LLMClient(config, cache_dir))


def _script(
    fallback: Synthesizer, plan: SessionPlan, context: SessionContext
) -> SessionScript | None:
    """The fallback grammar's plan of a session, drawn from a copy of the session's generator.

    The copy leaves the session's own generator untouched, so a session that falls back is
    written by the grammar exactly as planned.
    """
    script = getattr(fallback, "script", None)
    if script is None:
        return None
    rng = random.Random()
    rng.setstate(context.rng.getstate())
    planned: SessionScript = script(plan, SessionContext(context.profiles, context.current, rng))
    return planned


def _pin_of(synthesizer: Synthesizer) -> dict[str, str]:
    pin = getattr(synthesizer, "pin", None)
    return dict(pin()) if pin is not None else {}


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _REASON_CHARS else flat[: _REASON_CHARS - 1] + "…"
