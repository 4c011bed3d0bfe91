"""Transcript synthesis (spec §3.5): the interface and the offline template synthesizer."""

from ._base import SessionContext, Synthesizer
from ._template import TemplateSynthesizer

__all__ = ["SessionContext", "Synthesizer", "TemplateSynthesizer"]
