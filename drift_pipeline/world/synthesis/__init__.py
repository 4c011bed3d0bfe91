"""Transcript synthesis (spec §3.5): the interface, the offline template synthesizer, the LLM one.

``LLMSynthesizer``, ``SynthesisFallback`` and ``synthesizer_from_env`` load on first use, so
the template path never imports the ``openai`` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import SessionContext, Synthesizer
from ._template import PlannedSentence, SessionScript, TemplateSynthesizer

if TYPE_CHECKING:
    from ._llm import LLMSynthesizer, SynthesisFallback, synthesizer_from_env

__all__ = [
    "LLMSynthesizer",
    "PlannedSentence",
    "SessionContext",
    "SessionScript",
    "SynthesisFallback",
    "Synthesizer",
    "TemplateSynthesizer",
    "synthesizer_from_env",
]


def __getattr__(name: str) -> Any:
    if name in ("LLMSynthesizer", "SynthesisFallback", "synthesizer_from_env"):
        from . import _llm

        return getattr(_llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
