"""TTFRT measured at each session start (spec §7.8), where the run has a reader model.

At the start of a session the agent reads its memory (see :mod:`._session_reads`) and then
answers the opening user message from it. With a reader model configured (the LLM reader), the
harness asks that model exactly this, streamed, and records the time to its first token:
TTFRT = read latency + that time. Without one, TTFRT at session start is modelled from the size
of the text read (see :mod:`drift_pipeline.evaluation`), and marked so.

The model sees the text read, cut to the reader's context cap from the start (as the reader
cuts it), and the opening message; its reply is not kept (nothing is scored from it). Its
client's cache makes a rerun send nothing and reproduce the measured times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from drift_pipeline import tokens
from drift_pipeline.llm import LLMClient, LLMError

__all__ = ["FIRST_TOKEN_PROMPT", "FirstToken"]

FIRST_TOKEN_PROMPT: Final = (
    "You are the user's assistant. What you remember of earlier conversations is between "
    "MEMORY and END OF MEMORY. Reply to the user's message."
)
_PROMPT_VERSION: Final = "session-start:1"
_MAX_TOKENS: Final = 16
"""Only the first token is timed; a short reply keeps the call cheap."""


def _head(text: str, cap_tokens: int) -> str:
    """The first ``cap_tokens`` tokens of ``text``."""
    ids = tokens.encoding().encode_ordinary(text)
    return text if len(ids) <= cap_tokens else tokens.encoding().decode(ids[:cap_tokens])


@dataclass(frozen=True)
class FirstToken:
    """Times the reader model's first token over what a session-start read returned.

    Attributes:
        client: The reader model's client (the one the LLM reader uses).
        context_cap_tokens: The reader's context cap.
    """

    client: LLMClient
    context_cap_tokens: int

    def measure(self, context: str, message: str) -> float | None:
        """Time to the first streamed token of the reply to ``message`` over ``context`` (ms).

        ``None`` when the call failed or the endpoint did not stream (not measured: modelled).
        """
        memory = _head(context, self.context_cap_tokens).strip() or "(nothing was retrieved)"
        messages = [
            {"role": "system", "content": FIRST_TOKEN_PROMPT},
            {"role": "user", "content": f"MEMORY\n{memory}\nEND OF MEMORY\n\n{message}"},
        ]
        try:
            reply = self.client.complete(
                messages, prompt_version=_PROMPT_VERSION, max_tokens=_MAX_TOKENS, stream=True
            )
        except LLMError:
            return None
        return reply.ttft_ms
