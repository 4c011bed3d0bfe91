from __future__ import annotations

from drift_pipeline.memory.backends._lexical import LexicalIndex
from drift_pipeline.memory.backends._text import (
    is_first_person,
    is_question,
    message_date,
    split_sentences,
    stem,
    terms,
)


def test_dates_come_from_iso_timestamps() -> None:
    assert message_date("2027-03-14T09:00:00") == "2027-03-14"
    assert message_date("2027-03-14") == "2027-03-14"
    assert message_date("tomorrow") == "tomorrow"
    assert message_date("  ") == "undated"


def test_sentences_split_on_end_punctuation_and_lines_but_not_titles() -> None:
    text = "I met Dr. Smith today! Was it fun? Yes.\nNew line here"
    assert split_sentences(text) == [
        "I met Dr. Smith today!",
        "Was it fun?",
        "Yes.",
        "New line here",
    ]
    assert is_question('Really?" ')
    assert not is_question("Really.")
    assert is_first_person("We moved")
    assert not is_first_person("They moved")


def test_stemming_joins_inflections() -> None:
    for group in (
        ["move", "moved", "moving", "moves"],
        ["work", "works", "worked", "working"],
        ["run", "runs", "running"],
        ["city", "cities"],
    ):
        assert len({stem(word) for word in group}) == 1, group
    assert terms("The principal's works, and IS working!") == ["principal", "work", "work"]


def test_lexical_index_scores_rare_words_higher_and_forgets() -> None:
    index = LexicalIndex()
    index.add(1, "works at Acme")
    index.add(2, "works at Globex")
    scores = index.scores("Acme works")
    assert scores[1] > scores[2] > 0
    index.remove(1)
    assert set(index.scores("Acme works")) == {2}
    index.add(2, "lives in Leeds")
    assert index.scores("works") == {}
    assert len(index) == 1
