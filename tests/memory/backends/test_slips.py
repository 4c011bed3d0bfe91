from __future__ import annotations

import pytest

from drift_pipeline.memory.backends._slips import EVERYDAY_WORDS, mend_slips


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Teh news: taht is ym team, becuase I konw", "The news: that is my team, because I know"),
        ("I realy moevd there", "I really moved there"),  # a dropped letter, a swap
        ("I prefered tea, not anymroe", "I preferred tea, not anymore"),
        ("I stoped; insted, I walk", "I stopped; instead, I walk"),
        ("Tthat was wiht Ann", "That was with Ann"),  # a doubled letter, a swap
        ("I livve in Bergen", "I live in Bergen"),
        ("I swotched jobs", "I switched jobs"),  # a letter struck for its neighbour
    ],
)
def test_one_slip_in_an_everyday_word_is_mended(typed: str, meant: str) -> None:
    assert mend_slips(typed) == meant


@pytest.mark.parametrize(
    "text",
    [
        "I form a club with a knot of wit and a hat.",  # real words one slip from an everyday one
        "three AWS regions",  # a word of its own; a word in capitals
        "Hwo knows",  # a swap of "who" and of "how": either could be meant
        "th tho thy",  # short words are mended for a swap only
        "I met Thaat at work",  # capitalised inside a sentence: a name
        "Anyway, the rest stands.",  # everyday words as typed
        # The stem of a contraction is no slip of the word it contracts.
        "You shouldn't, couldn't and wouldn't; I wasn't and we aren't.",
        "You SHOULDN’T use emojis.",
    ],
)
def test_words_that_may_be_meant_as_typed_are_left(text: str) -> None:
    assert mend_slips(text) == text


def test_a_name_the_memory_knows_is_left_at_a_sentence_opening() -> None:
    assert mend_slips("Thaat called.") == "That called."
    assert mend_slips("Thaat called.", is_name=lambda word: word.lower() == "thaat") == (
        "Thaat called."
    )


def test_the_everyday_words_are_lower_case_letters() -> None:
    assert all(word.isalpha() and word.islower() for word in EVERYDAY_WORDS)


def test_every_listed_real_word_is_one_slip_from_an_everyday_word() -> None:
    # The list guards real words from being mended; a word on it that no everyday word is one
    # slip from means the everyday words changed and the list was not made again.
    from drift_pipeline.memory.backends._slips import _near_everyday, _other_slips, _swaps

    slips = {typed for word in EVERYDAY_WORDS for typed in (*_swaps(word), *_other_slips(word))}
    stale = sorted(word for word in _near_everyday() if word not in slips)
    assert not stale, f"near_everyday.txt lists words no everyday word is one slip from: {stale}"
    assert not _near_everyday() & EVERYDAY_WORDS
