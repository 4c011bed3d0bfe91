"""The pinned LLM reader: one model, prompt and context cap for every memory system.

The reader gets the probe's question (and its options, when it has any, as an action probe
does) and the text the
memory system returned (plus the soft-gate buffer), cut to ``context_cap_tokens`` tokens of
:mod:`drift_pipeline.tokens` from the start (backends return their most relevant text first, so
a cut keeps it; the cut is deterministic). It is called with streaming, so its time to first
token is measured: TTFRT = read latency + that time (spec §7.8).

It is built by the harness from the command line and the environment only; no backend option
reaches it, so no memory system can change what reads its output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from drift_pipeline import tokens
from drift_pipeline.llm import Completion, LLMClient, LLMError
from drift_pipeline.world.probe_families import get_probe_family, probe_families

from ._prompts import Prompt, load_prompt, prompts_sha256

__all__ = [
    "DEFAULT_CONTEXT_CAP_TOKENS",
    "READER_MAX_TOKENS",
    "LLMReader",
    "ReaderAnswer",
    "cap_context",
]

DEFAULT_CONTEXT_CAP_TOKENS: Final = 8192
"""The reader's context cap: the context size the spec's local latency targets assume."""

READER_MAX_TOKENS: Final = 96
"""Cap of a reader's answer: one short sentence or one option's text."""

_FRAMING_VERSION: Final = "1"
"""Version of how :meth:`LLMReader.messages` lays out a question (part of the cache key)."""

_NO_MEMORY: Final = "(nothing was retrieved)"


@dataclass(frozen=True)
class ReaderAnswer:
    """The reader's reply to one probe.

    Attributes:
        text: The answer (``None`` when the call failed).
        ttft_ms: Time to its first streamed token on the original call (``None`` if unmeasured).
        error: One line describing a failed call.
    """

    text: str | None
    ttft_ms: float | None
    error: str | None


def cap_context(text: str, cap_tokens: int) -> str:
    """The first ``cap_tokens`` tokens of ``text`` (all of it when it fits)."""
    if cap_tokens <= 0 or not text:
        return ""
    ids = tokens.encoding().encode_ordinary(text)
    if len(ids) <= cap_tokens:
        return text
    return tokens.encoding().decode(ids[:cap_tokens])


class LLMReader:
    """Answers probes from retrieved text through one pinned model.

    Args:
        client: The reader model's client (its cache makes reruns free and reproducible).
        context_cap_tokens: Tokens of context the reader sees at most.
    """

    def __init__(
        self, client: LLMClient, context_cap_tokens: int = DEFAULT_CONTEXT_CAP_TOKENS
    ) -> None:
        if context_cap_tokens < 1:
            raise ValueError(f"reader context cap must be >= 1 token, got {context_cap_tokens}")
        self.client = client
        self.context_cap_tokens = context_cap_tokens
        # Every registered family's reader prompt, in registration order (one, "reader", for
        # the built-in families).
        names = tuple(dict.fromkeys(family.reader_prompt for family in probe_families()))
        self._prompts = {name: load_prompt(name) for name in names}
        self._sha256 = self._prompts[names[0]].sha256 if len(names) == 1 else prompts_sha256(names)

    def _prompt(self, probe: Mapping[str, Any]) -> Prompt:
        return self._prompts[get_probe_family(probe["probe_type"]).reader_prompt]

    def prompt_version(self, probe: Mapping[str, Any]) -> str:
        """What pins the reader's reply to ``probe`` besides the model: prompt, framing, cap."""
        prompt = self._prompt(probe)
        return f"{prompt.name}:{prompt.sha256}:{_FRAMING_VERSION}:cap{self.context_cap_tokens}"

    @property
    def name(self) -> str:
        """``llm:<model>@<prompt sha256[:12]>/cap<N>``: the ``reader`` column's value."""
        model = self.client.config.model
        return f"llm:{model}@{self._sha256[:12]}/cap{self.context_cap_tokens}"

    def pin(self) -> dict[str, Any]:
        """The reader as the run manifest records it (no key, no credentials)."""
        paths = [f"evaluation/prompts/{name}.md" for name in self._prompts]
        return {
            "name": "llm",
            **self.client.config.pin(),
            **({"prompt": paths[0]} if len(paths) == 1 else {"prompts": paths}),
            "prompt_sha256": self._sha256,
            "context_cap_tokens": self.context_cap_tokens,
            "max_tokens": READER_MAX_TOKENS,
            "streamed": True,
        }

    def messages(self, probe: Mapping[str, Any], context: str) -> list[dict[str, str]]:
        """The chat messages that ask ``probe``'s question over ``context``."""
        memory = cap_context(context, self.context_cap_tokens).strip() or _NO_MEMORY
        question = str(probe["question"])
        # A multiple-choice probe (an action probe) is asked with its options.
        choices = probe.get("options") or []
        if choices:
            options = "\n".join(f"{i + 1}. {option['text']}" for i, option in enumerate(choices))
            question = f"{question}\n\nOptions:\n{options}"
        user = f"MEMORY\n{memory}\nEND OF MEMORY\n\nQuestion: {question}"
        return [
            {"role": "system", "content": self._prompt(probe).text},
            {"role": "user", "content": user},
        ]

    def read_many(self, items: Sequence[tuple[Mapping[str, Any], str]]) -> list[ReaderAnswer]:
        """Answer every (probe, context) pair, streamed, in order; failures are kept per item."""
        requests = [
            {
                "messages": self.messages(probe, context),
                "prompt_version": self.prompt_version(probe),
                "max_tokens": READER_MAX_TOKENS,
                "stream": True,
            }
            for probe, context in items
        ]
        return [_answer(reply) for reply in self.client.complete_many(requests)]


def _answer(reply: Completion | LLMError) -> ReaderAnswer:
    if isinstance(reply, LLMError):
        return ReaderAnswer(None, None, f"reader: {reply}")
    return ReaderAnswer(reply.text.strip(), reply.ttft_ms, None)
