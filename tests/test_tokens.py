"""The one tokenizer: cl100k_base through tiktoken, working offline from bundled BPE files."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

from drift_pipeline import tokens
from drift_pipeline.tokens import (
    ENCODING_NAME,
    LineCounter,
    LineSum,
    LineTally,
    count_line_tokens,
    count_tokens,
    count_tokens_batch,
    count_tokens_lines,
    encoding,
    splice_of,
    truncate_tail,
)

# Pieces that make line-wise counting interesting: breaks inside lines, runs of blank lines,
# trailing spaces, non-ASCII, and a period that cl100k merges with the following line break.
PIECES = ["a", "hello", "\n", "world.", "", " ", "x\ny", "\n\n", "The end.", "é", "  "]


def test_hello_world_is_two_tokens():
    assert ENCODING_NAME == "cl100k_base"
    assert count_tokens("hello world") == 2
    assert encoding().encode_ordinary("hello world") == [15339, 1917]


def test_empty_text_has_no_tokens():
    assert count_tokens("") == 0
    assert count_tokens_batch([]) == []


def test_special_token_text_is_counted_as_plain_text():
    assert count_tokens("<|endoftext|>") > 1


def test_batch_counts_equal_single_counts():
    texts = [
        "hello world",
        "",
        "Northwind Traders signed the offer.",
        "héllo wörld " * 20,
        "a lone surrogate \ud800 is counted as a replacement",
        "long " * 5000,
    ]
    assert count_tokens_batch(texts) == [count_tokens(text) for text in texts]
    assert count_tokens_batch(iter(texts)) == count_tokens_batch(texts)  # any iterable


def test_truncate_tail_keeps_the_most_recent_tokens():
    text = " ".join(f"word{i}" for i in range(200))
    tail = truncate_tail(text, 10)
    assert count_tokens(tail) <= 10
    assert text.endswith(tail) and tail.endswith("word199")
    assert truncate_tail(text, 10_000) == text
    assert truncate_tail(text, 0) == ""


def test_works_offline_with_a_fresh_cache(tmp_path: Path):
    """A new machine: empty tiktoken cache, and any network attempt fails fast."""
    cache = tmp_path / "tiktoken-cache"
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(cache),
        # Point every proxy at a closed port so a download attempt fails instead of succeeding.
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from drift_pipeline.tokens import count_tokens; print(count_tokens('hello world'))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"
    url = f"https://openaipublic.blob.core.windows.net/encodings/{ENCODING_NAME}.tiktoken"
    seeded = cache / hashlib.sha1(url.encode()).hexdigest()
    assert seeded.is_file() and seeded.stat().st_size > 1_000_000
    assert not list(cache.glob(".partial-*"))


def _line_wise(text: str) -> int:
    """The definition: every line with its break counted on its own, the last one without."""
    lines = text.split("\n")
    return sum(count_tokens(line + "\n") for line in lines[:-1]) + count_tokens(lines[-1])


def test_line_wise_counts_follow_the_definition_for_small_and_many_line_texts():
    rng = random.Random(3)
    for _ in range(200):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 12)))
        assert count_tokens_lines(text) == _line_wise(text)
    # Many unseen lines, then counted again from the cache.
    big = "\n".join(f"line {i} says something about {i * 7}." for i in range(1000))
    tokens._LINE_CACHE.clear()
    assert count_tokens_lines(big) == _line_wise(big) == count_tokens_lines(big)
    grown = big + "\nand one line never counted before"  # counted lines, and a line that is not
    assert count_tokens_lines(grown) == _line_wise(grown) == count_tokens_lines(grown)
    assert count_line_tokens("hello world\n") == count_tokens("hello world\n")


def test_line_tally_equals_the_count_of_the_joined_lines_after_every_append():
    rng = random.Random(5)
    for _ in range(200):
        tally, lines = LineTally(), []
        assert tally.count() == 0
        for _ in range(rng.randrange(0, 8)):
            line = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 5)))
            tally.append(line)
            lines.append(line)
            if rng.random() < 0.5:  # counting in between must not change what comes later
                assert tally.count() == count_tokens_lines("\n".join(lines))
        assert tally.count() == count_tokens_lines("\n".join(lines))


def test_line_counter_reuses_a_prefix_and_recounts_a_rewrite():
    counter = LineCounter()
    texts = ["I moved.", "I moved.\nTo Porto.", "I moved.\nTo Porto. Then", "Rewritten.\n\nAll."]
    for text in texts:
        assert counter.count(text) == count_tokens_lines(text)


def _window(lines: list[str], budget: int) -> str:
    """The newest ``budget`` characters of the joined lines, the oldest line cut at the front."""
    text = "\n".join(lines)
    return text[-budget:]


def test_a_sliding_window_is_a_splice_of_the_previous_one_and_counts_exactly():
    rng = random.Random(7)
    lines: list[str] = []
    counter, previous = LineCounter(), ""
    spliced = 0
    for session in range(300):
        lines += [
            f"[day {session}] {rng.choice(PIECES)} said {rng.randrange(10**6)}." for _ in range(3)
        ]
        text = _window(lines, 2_000)
        splice = splice_of(previous, text)
        if splice is not None:
            spliced += 1
            assert splice.head + previous[splice.keep_from :] + splice.tail == text
            assert splice.head == "" or splice.head.endswith("\n")
        assert counter.count(text) == _line_wise(text)
        previous = text
    assert spliced > 250  # once the window is full, each answer keeps most of the last


def test_splices_are_exact_or_absent_on_any_pair_of_texts():
    rng = random.Random(11)
    cut_inside = 0
    for _ in range(2_000):
        previous = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 400)))
        cut = rng.randrange(0, len(previous) + 1)
        head = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 3)))
        tail = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 6)))
        text = rng.choice([head + previous[cut:] + tail, previous[cut:], head + tail, previous])
        splice = splice_of(previous, text)
        if splice is not None:
            assert splice.head + previous[splice.keep_from :] + splice.tail == text
            cut_inside += splice.keep_from > 0
        counter = LineCounter()
        counter.count(previous)
        assert counter.count(text) == _line_wise(text)
    assert cut_inside > 100  # the counter's incremental path was taken, not only recounts


def test_line_sum_is_the_count_of_the_joined_lines_through_any_changes() -> None:
    # Blank lines, lines with breaks inside or at their end, merging punctuation, non-ASCII.
    pieces = ["", "\n", "\n\n", " ", ".", ".\n", "Hello world", "é", "x\n\ny", "  \n", "日本"]
    rng = random.Random(3)
    lines: list[str] = []
    tally = LineSum()
    assert tally.count("") == 0
    for step in range(400):
        action = rng.randrange(3) if lines else 0
        new = "".join(rng.choice(pieces) for _ in range(rng.randrange(4)))
        if action == 0:
            lines.insert(rng.randrange(len(lines) + 1), new)
            tally.add(new)
        elif action == 1:
            tally.remove(lines.pop(rng.randrange(len(lines))))
        else:
            at = rng.randrange(len(lines))
            tally.replace(lines[at], new)
            lines[at] = new
        expected = count_tokens_lines("\n".join(lines))
        assert tally.count(lines[-1] if lines else "") == expected, (step, lines)
