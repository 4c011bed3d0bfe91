"""The careful offline reader: what a retrieved memory says the current answer is.

:func:`read_context` reads the text a memory system returned for a probe, counting a mention of
a candidate value only when it is the subject's sincere, current assertion (or the assistant
restating it, or the memory's own note about the subject); the latest dated assertion wins.
:func:`judge_reading` compares a reading with the latent truth, for this reader and for an LLM
reader alike (:func:`reading_from_answer`). ``drift_pipeline.evaluation.score_reader`` measures
a reader on a labelled set of contexts, per category.
"""

from ._dates import find_dates, find_relative
from ._probe import Candidate, ProbeKind, ReaderOption, ReaderProbe, Role, expand_phrases
from ._read import READER_NAME, READER_VERSION, Mention, Reading, read_context
from ._verdict import ReadingVerdict, judge_reading, reading_from_answer

__all__ = [
    "READER_NAME",
    "READER_VERSION",
    "Candidate",
    "Mention",
    "ProbeKind",
    "ReaderOption",
    "ReaderProbe",
    "Reading",
    "ReadingVerdict",
    "Role",
    "expand_phrases",
    "find_dates",
    "find_relative",
    "judge_reading",
    "read_context",
    "reading_from_answer",
]
