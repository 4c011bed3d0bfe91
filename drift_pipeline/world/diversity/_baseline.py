"""A regex-and-blacklist extractor written against the public phrasing split: the baseline.

It stands for a memory system fitted to the public templates: per slot family, a few cue
patterns taken from the public split's stems, and a blacklist of the public decoys' tell-tale
words. A sentence that matches a slot family's cue, carries none of the blacklisted words and
names one of the family's values yields that value. On worlds of the public split it keeps
most signal and admits few decoys; the diversity audit reports how much of another split's
signal it still keeps, which is what held-out phrasing is meant to take away.
"""

from __future__ import annotations

import re
from functools import lru_cache

from drift_pipeline.entities import entity_types
from drift_pipeline.textmatch import contains_any, normalise

from ._skeleton import sentences

CUES: dict[str, str] = {
    "employer": r"badge from|it at|notice at|moved over to|new team at|offer from|where i work",
    "city": r"movers|settling into|library card|move to|based in|goodbye to",
    "relationship": r"relationship status|that i'm|emergency contact|things have settled|chapter",
    "health": r"\bi'm\b|doctor says|i've been|clinic confirmed|weeks will be slow",
    "opinion": r"\bi'm .* on\b|count me as|my position|came out|stance on",
    "constraints": r"\bi'm\b|\bi (?:don't|have|can't|keep|avoid|need|use|went|eat)\b|for me from"
    r" now on|conference form|colleagues know|hard way",
    "response_format": r"rule for your replies|need you to|standing instruction|replies should"
    r"|always .* with me",
    "completed_tasks": r"is done|finished|wraps up|sent off|signed off",
    "preferred_name": r"drop the formal|i prefer|greetings to say|even says|rather be called",
    "habits": r"part of my routine|skipped|new gear|talk about|mornings now start",
    "preference": r"every time|end up choosing|works best|said .* again|enjoy",
    "workflow_preferences": r"i'd like you to|saves me time|keep making sure|appreciate it when",
}
"""Per slot family: cue patterns (on normalised text) seen in the public split's stems."""

BLACKLIST = (
    r"\?|\bif\b|\bmaybe\b|\bwould\b|\bcould\b|/s\b|\bas if\b|\bqueen\b|\bcheeseburger\b"
    r"|\bmy (?:sister|brother|friend|colleague|neighbour|cousin|boss|dad)\b|\bflatmate\b"
    r"|\bguy on my team\b|\bpart of me\b|\bconsider\b|\byeah right\b|\boh sure\b|\bkidding\b"
    r"|\bjoking\b|\bnot\b|\bclearly\b|\bdefinitely\b|\blove nothing more\b|\bpigs fly\b"
)
"""Words of the public split's decoys that mark a sentence as not the principal's own fact."""


@lru_cache(maxsize=1)
def _compiled() -> tuple[re.Pattern[str], dict[str, tuple[re.Pattern[str], tuple[str, ...]]]]:
    values: dict[str, list[str]] = {}
    for definition in entity_types():
        for slot in definition.slots:
            family = slot.name.partition("/")[0]
            values.setdefault(family, []).extend(v.text for v in slot.values)
    cues = {
        family: (re.compile(pattern), tuple(dict.fromkeys(values.get(family, ()))))
        for family, pattern in CUES.items()
    }
    return re.compile(BLACKLIST), cues


@lru_cache(maxsize=1)
def _aliases() -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for definition in entity_types():
        for slot in definition.slots:
            for value in slot.values:
                found.setdefault(value.text, value.all_aliases())
    return found


def extract(turn: str) -> set[tuple[str, str]]:
    """(slot family, value) pairs the baseline would store from one user turn."""
    aliases = _aliases()
    blacklist, cues = _compiled()
    found: set[tuple[str, str]] = set()
    for sentence in sentences(turn):
        text = normalise(sentence)
        if blacklist.search(text):
            continue
        for family, (cue, pool) in cues.items():
            if cue.search(text):
                for value in pool:
                    if contains_any(text, aliases[value], normalised=True):
                        found.add((family, value))
    return found
