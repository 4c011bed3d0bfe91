from __future__ import annotations

from drift_pipeline.memory.backends._lexical import LexicalIndex
from drift_pipeline.memory.backends._text import (
    CaseModel,
    is_first_person,
    is_question,
    message_date,
    shows_case,
    split_sentences,
    split_statements,
    stem,
    strip_frames,
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


def test_a_statement_run_into_a_question_is_split_off_it() -> None:
    assert split_statements("Ok so I'm based in Tucson now How do I share a calendar?") == [
        "Ok so I'm based in Tucson now",
        "How do I share a calendar?",
    ]
    assert split_statements("Is it far? I moved.") == ["Is it far?", "I moved."]
    # Typed without case, the question opens in lower case; "how do" stays one question.
    assert split_statements("i updated my contact because i'm married lol how do i share it?") == [
        "i updated my contact because i'm married lol",
        "how do i share it?",
    ]
    assert split_statements("can you tell me how do i fix this?") == [
        "can you tell me",
        "how do i fix this?",
    ]
    # Opening with a capital, a sentence is cased: its lower-case question words are inside it.
    assert split_statements("Like I said, can you explain what a pivot table does?") == [
        "Like I said, can you explain what a pivot table does?"
    ]


def test_names_are_learnt_from_cased_text_and_restored_in_text_typed_without_case() -> None:
    case = CaseModel()
    case.learn("My sister got a job at Ravelin Security. Is Wellington cold in June?")
    case.learn("I care about security at Acme. Sister acts are fun. I care about security a lot.")
    assert case.is_name("ravelin") and case.is_name("WELLINGTON")
    # Capitalised once inside a sentence and once in lower case: not more often than not. A
    # sentence typed without case ("I care about security a lot") shows nothing either way.
    assert not case.is_name("security")
    # A capital that opens a sentence is no evidence.
    assert not case.is_name("sister") and not case.is_name("acts")
    assert case.recase("i took the offer from ravelin security, so i moved to wellington.") == (
        "i took the offer from Ravelin security, so i moved to Wellington."
    )
    # A sentence that uses case keeps it as written.
    assert case.recase("I moved to wellington, near Ravelin.") == (
        "I moved to wellington, near Ravelin."
    )
    assert shows_case("Random aside: I moved to Oslo") and not shows_case("Random aside: I moved")


def test_phrases_that_only_mean_about_are_dropped_from_a_query() -> None:
    assert terms(strip_frames("What does Kit prefer when it comes to units?")) == [
        "kit",
        "prefer",
        "unit",
    ]
    assert terms(strip_frames("In terms of diet, what does Kit eat?")) == ["diet", "kit", "eat"]
