"""``sentence_log``: every first-person user sentence with its session date, all returned on read.

A floor for memories that claim to keep the latest belief. It decides nothing: no slot, no
supersession, no ranking, no budget. Because the careful reader lets the latest dated assertion
win, a dated log of everything a user said about themselves already answers many revision
questions; a reference memory has to do better than handing that log over whole.
"""

from __future__ import annotations

from typing import ClassVar

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._text import (
    first_date,
    is_first_person,
    session_speakers,
    split_sentences,
)

__all__ = ["SentenceLogBackend"]


class SentenceLogBackend:
    """Keep ``[session date] speaker: sentence`` for every first-person user sentence.

    ``store`` splits each user turn into sentences and keeps those in the first person (I, me,
    my, we…), dated with the session's date. ``retrieve`` ignores the query and returns every
    kept line from the sessions the asker took part in, oldest first. No model is called.
    """

    name: ClassVar[str] = "sentence_log"
    version: ClassVar[str] = "1"

    def __init__(self) -> None:
        self._lines: list[str] = []
        # Per entity: positions in ``_lines`` of the sentences it was present for.
        self._seen_by: dict[str, list[int]] = {}
        # Per entity: how many of its lines the last read joined, and that text. A read only
        # joins what arrived since, so a long log is not rebuilt for every probe.
        self._joined: dict[str, tuple[int, str]] = {}
        self._storage = tokens.LineTally()

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Append the session's first-person user sentences, dated with the session date."""
        date = first_date(messages)
        speakers = sorted(session_speakers(messages))
        for message in messages:
            if message["role"] != "user":
                continue
            for sentence in split_sentences(message["content"]):
                if not is_first_person(sentence):
                    continue
                line = f"[{date}] {message['speaker']}: {sentence}"
                position = len(self._lines)
                self._lines.append(line)
                self._storage.append(line)
                for speaker in speakers:
                    self._seen_by.setdefault(speaker, []).append(position)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Every kept line from sessions ``entity_id`` took part in, oldest first."""
        positions = self._seen_by.get(entity_id, [])
        joined, text = self._joined.get(entity_id, (0, ""))
        if joined < len(positions):
            fresh = "\n".join(self._lines[position] for position in positions[joined:])
            text = f"{text}\n{fresh}" if text else fresh
            self._joined[entity_id] = (len(positions), text)
        return text

    def token_counts(self) -> TokenCounts:
        """No model calls."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Every kept line, oldest first."""
        return "\n".join(self._lines)

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, counted as lines arrive (see ``CountsOwnStorage``)."""
        return self._storage.count()
