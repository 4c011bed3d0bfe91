"""The diversity audit of generated worlds: phrasings per event type and decoy kind.

Sentences are reduced to skeletons (values, names, dates and numbers masked); the audit counts
distinct skeletons, measures how many of one world set's skeletons another already has (the
held-out split against the public one), and how much a regex baseline fitted to the public
split keeps.
"""

from __future__ import annotations

from ._audit import DiversityReport, GroupCount, diversity_report, render
from ._baseline import BLACKLIST, CUES, extract
from ._read import DECOY_KINDS, WorldText, read_worlds
from ._skeleton import sentences, skeleton

__all__ = [
    "BLACKLIST",
    "CUES",
    "DECOY_KINDS",
    "DiversityReport",
    "GroupCount",
    "WorldText",
    "diversity_report",
    "extract",
    "read_worlds",
    "render",
    "sentences",
    "skeleton",
]
