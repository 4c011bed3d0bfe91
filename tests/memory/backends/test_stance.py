"""Stances keyed by their topic, hedges read through, and employer or home implied by news."""

from __future__ import annotations

import pytest

from drift_pipeline.memory.backends._extract import extract_statements, predicate_hint
from drift_pipeline.memory.backends._stance import implied_facts, stance_fact, strip_hedges

from ._sessions import user


def _facts(text: str) -> list[tuple[str, str]]:
    return [(s.predicate, s.value) for s in extract_statements([user(text, "2027-03-14")])]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("When it comes to remote work, I'm sceptical now.", "sceptical"),
        ("On remote work, count me as firmly against.", "firmly against"),
        ("As for remote work: lukewarm is my view.", "lukewarm"),
        ("Regarding remote work, I am now broadly supportive.", "broadly supportive"),
        ("My stance on remote work has shifted to cautiously positive.", "cautiously positive"),
        ("My view on remote work is now mixed.", "mixed"),
        ("I've come round on remote work; all for it is my position.", "all for it"),
        ("I changed my mind about remote work: I am opposed now.", "opposed"),
        ("My flatmate and I debated remote work and I came out unconvinced.", "unconvinced"),
        ("If I'm honest, when it comes to remote work, I'm on the fence.", "on the fence"),
        ("Where I stand on remote work now is lukewarm.", "lukewarm"),
        ("That long article about remote work has left me unconvinced.", "unconvinced"),
        ("I changed my mind about remote work and I am opposed now.", "opposed"),
        ("Over dinner we debated remote work and I came away sceptical.", "sceptical"),
        ("After reading the studies on remote work, I'm broadly supportive.", "broadly supportive"),
        ("The honest truth is that on remote work, I'm undecided.", "undecided"),
    ],
)
def test_a_stance_is_keyed_by_its_topic(text: str, value: str) -> None:
    assert _facts(text) == [("opinion remot work", value)]


def test_a_later_stance_on_the_topic_shares_the_key_of_i_think() -> None:
    [thought] = _facts("I think remote work is overrated.")
    [stance] = _facts("On remote work, I am undecided.")
    assert thought[0] == stance[0] == "opinion remot work"


@pytest.mark.parametrize(
    "text",
    [
        "On Tuesday, I am free.",
        "On the weekend, I am busy.",
        "On second thought, I am fine.",
        "My sister says that on remote work, she is firmly opposed.",
        "If remote work ends, I am going to be miserable.",
        "About the meeting: I am running late.",
        "On remote work, what do you think?",
    ],
)
def test_times_other_people_conditions_and_questions_are_no_stance(text: str) -> None:
    assert not any(predicate.startswith("opinion") for predicate, _ in _facts(text))


def test_stance_fact_reads_one_sentence() -> None:
    fact = stance_fact("when it comes to tidal energy, I am an enthusiast")
    assert fact is not None
    assert (fact.predicate, fact.value, fact.text) == (
        "opinion tidal energy",
        "an enthusiast",
        "stance on tidal energy: an enthusiast",
    )
    assert stance_fact("I like tidal energy") is None


def test_hedges_are_no_condition() -> None:
    assert strip_hedges("If I am honest, I suppose I moved to Oslo") == "I moved to Oslo"
    assert _facts("If I'm honest, I live in Oslo now.") == [("lives in", "Oslo")]
    assert _facts("To be fair, I work at Initech these days.") == [("works at", "Initech")]
    # A real condition still is one, hedge or not.
    assert _facts("If I'm honest, if I move to Oslo I will miss Leeds.") == []
    assert _facts("In case it matters, I moved to Oslo.") == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "My new colleagues at Umbrella Labs threw me a welcome lunch.",
            ("works at", "Umbrella Labs"),
        ),
        ("I accepted the offer from Hooli last night.", ("works at", "Hooli")),
        (
            "IT at Vandelay Industries handed me a laptop this morning.",
            ("works at", "Vandelay Industries"),
        ),
        ("My commute since the move to Galway is lovely.", ("lives in", "Galway")),
        ("The movers dropped off the furniture in Trieste on Monday.", ("lives in", "Trieste")),
        ("I got my library card in Tromsø this week.", ("lives in", "Tromsø")),
        ("Heads up, my first paycheck from Initech came through.", ("works at", "Initech")),
        ("My desk is now at Globex, for what it is worth.", ("works at", "Globex")),
        ("I signed up with a dentist in Porto last week.", ("lives in", "Porto")),
        ("Home base is Lyon these days.", ("lives in", "Lyon")),
    ],
)
def test_news_of_a_new_team_or_a_move_implies_employer_or_home(
    text: str, fact: tuple[str, str]
) -> None:
    assert _facts(text) == [fact]


def test_other_peoples_news_implies_nothing() -> None:
    assert implied_facts("My brother's new team at Initech is great") == []
    assert implied_facts("my sister got her library card in Oslo") == []
    assert _facts("If I took the offer from Hooli, I would move.") == []


def test_a_quoted_label_is_said_but_quoted_speech_and_a_joke_are_not() -> None:
    [label] = extract_statements([user("I ticked 'widowed' on the census form.", "2027-03-14")])
    assert "widowed" in label.text
    assert "relationship" in predicate_hint(label.predicate)
    assert _facts("I told him 'I will never move to Oslo' and laughed.") == []
    assert _facts("I am moving to Mars next year, I'm joking of course.") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Fyi my family has always called me Nico", "Nico"),
        ("Correct, ym family has always called me Teddy.", "Teddy"),
        ("Everyone calls me Bea these days.", "Bea"),
        ("MY FRIENDS CALL ME Teddy.", "Teddy"),
        ("Most people just call me Jo.", "Jo"),
        ("Nobody uses Sisa, I'm Robin to everyone, so there you go.", "Robin"),
        ("Nobody uses Sisa, everyone calls me Robin.", "Robin"),
        ("I'm just Jo to my friends.", "Jo"),
        ("Just Jo is fine when you address me.", "Jo"),
        ("Sam works if you need to call me something.", "Sam"),
        ("Quick update on my end: the name I use day to day is Max.", "Max"),
        ("The name I go by these days is Jo.", "Jo"),
    ],
)
def test_the_name_others_call_the_speaker_by_is_their_name(text: str, name: str) -> None:
    assert _facts(text) == [("name", name)]


@pytest.mark.parametrize(
    "text",
    [
        "Nobody calls me Sisa.",
        "I hate it when people call me Bob.",
        "My aunt used to call me Bea.",
        "He called me Tom by mistake.",
        "My family never called me Nico.",
        "My boss calls me lazy.",
        "My sister calls me every day.",
        "My colleague's family calls him Nico.",
        "My brother is called Tom.",
        "My sister is Robin to everyone.",
        "Sam is fine, thanks.",
        "Just Sam is fine.",
        "Tom is fine when you call him.",
        "If you like, Jo is fine when you address me.",
        "The name my sister uses is Jo.",
        "Does everyone call me Bea?",
        "My grandma calls me Sunshine.",
        "He always calls me Tommy.",
        "Contoso Health is basically calling me every day.",
        "Thistledown Games is calling me nonstop.",
        "Acme called me Monday about the role.",
        "Everyone called me Friday to check in.",
        "Please call me tomorrow.",
    ],
)
def test_a_name_refused_mistaken_past_or_someone_elses_is_no_name(text: str) -> None:
    assert all(predicate != "name" for predicate, _ in _facts(text))
