"""Each rule of the careful reader, on hand-written contexts."""

from __future__ import annotations

import pytest

from drift_pipeline.evaluation.reader import judge_reading, read_context

from .helpers import EMPLOYER, NEW_EMPLOYER, probe

CREDITED = [
    "[2027-01-04] user: I work at Kestrel Aerospace now.",
    "Rhiannon's employer: Kestrel Aerospace",
    "- Works at Kestrel Aerospace",
    "principal: works at Kestrel Aerospace (since 2027-01-04)",
]


@pytest.mark.parametrize("context", CREDITED)
def test_a_sincere_current_statement_is_credited(context: str) -> None:
    reading = read_context(context, probe())
    assert reading.answer == "Kestrel Aerospace" and reading.support
    assert judge_reading(reading, probe()).correct


@pytest.mark.parametrize(
    ("frame", "context"),
    [
        ("question", "user: What is it like working at Kestrel Aerospace?"),
        ("question", "user: I wonder whether Kestrel Aerospace pays relocation."),
        ("hypothetical", "user: If I ever quit, I'd apply to Kestrel Aerospace."),
        ("hypothetical", "user: I might join Kestrel Aerospace if the offer is right."),
        ("hypothetical", "user: I'd love to work at Kestrel Aerospace one day."),
        ("hypothetical", "user: Thinking of applying to Kestrel Aerospace next month."),
        ("third_party", "user: My sister got a job at Kestrel Aerospace, lucky her."),
        ("third_party", "user: Priya just joined Kestrel Aerospace."),
        ("sarcasm", "user: Oh sure, like Kestrel Aerospace would ever hire me."),
        ("sarcasm", "user: Yeah, I work at Kestrel Aerospace now, said no one ever."),
        ("negated", "user: I don't work at Kestrel Aerospace, people keep assuming that."),
        ("retracted", "user: I used to work at Kestrel Aerospace."),
        ("retracted", "user: Today was my last day at Kestrel Aerospace."),
        ("retracted", "- Employer: Kestrel Aerospace (outdated)"),
        ("retracted", "principal: works at Kestrel Aerospace (no longer true since 2027-03-01)"),
        ("retracted", "user: I worked at Kestrel Aerospace for years before the layoffs."),
        ("hypothetical", "user: I'm joining Kestrel Aerospace next month."),
        ("retracted", "user: Earlier I said Kestrel Aerospace. That was wrong."),
        ("retracted", '{"fact": "works at Kestrel Aerospace", "valid_until": "2027-05-01"}'),
        ("visit", "user: Visiting the Kestrel Aerospace office for a conference."),
        ("question", "- Rhiannon asked about Kestrel Aerospace's pension scheme."),
        ("third_party", "user: My tech lead just joined Kestrel Aerospace."),
        ("third_party", "user: Sent a reference to Kestrel Aerospace for my brother."),
        ("generic_word", "user: We put up kestrel nesting boxes in the garden."),
        ("generic_word", "user: The Kestrel office is closed today."),
        ("not_about_subject", "assistant: Kestrel Aerospace has a good graduate scheme."),
    ],
)
def test_a_mention_in_another_frame_is_not_credited(frame: str, context: str) -> None:
    reading = read_context(context, probe())
    assert reading.answer is None, reading.rationale
    assert [m.frame for m in reading.mentions] == [frame], reading.rationale
    assert not judge_reading(reading, probe()).correct


@pytest.mark.parametrize(
    "context",
    [
        "assistant: Got it, you're at Kestrel Aerospace now.",
        "assistant: Congratulations on joining Kestrel Aerospace, Rhiannon!",
    ],
)
def test_the_assistant_restating_the_subject_is_credited(context: str) -> None:
    assert read_context(context, probe()).answer == "Kestrel Aerospace"


def test_a_capitalised_short_alias_mid_sentence_is_the_name() -> None:
    reading = read_context("user: First week at Kestrel done, exhausted.", probe())
    assert reading.answer == "Kestrel Aerospace"


def test_someone_elses_fact_next_to_ones_own_keeps_the_own() -> None:
    context = "user: My sister moved to Porto, and I moved to Lisbon the same month."
    city = probe(aliases=["Lisbon"], slot="city", others=[["Porto"]])
    assert read_context(context, city).current == ("Lisbon",)


def test_a_move_from_a_place_gives_up_that_place_not_the_one_moved_to() -> None:
    # The place left is not a value of the slot the reader was told of: the change still ends
    # where the new place is named.
    question = "Which town does Rhiannon live in now?"
    city = probe(aliases=["Ghent"], slot="city", question=question)
    for context in (
        "memory: Rhiannon moved from Utrecht to Ghent.",
        "user: switched from a flat in Utrecht to a house in Ghent",
        "user: finally moved out of Utrecht into Ghent",
    ):
        assert read_context(context, city).current == ("Ghent",), context
    left = probe(aliases=["Utrecht"], slot="city", question=question)
    assert read_context("memory: Rhiannon moved from Utrecht to Ghent.", left).current == ()


def test_the_subject_named_in_full_is_the_subject_not_another_person() -> None:
    for context in (
        "memory: Rhiannon Price adopted a hamster named Pepper.",
        "[2027-02-01] note: Rhiannon Price works at Kestrel Aerospace",
    ):
        pet = "Pepper" in context
        asked = (
            probe(
                aliases=["Pepper"], slot="pet_name", question="What is Rhiannon's hamster called?"
            )
            if pet
            else probe()
        )
        reading = read_context(context, asked)
        assert reading.answer == ("Pepper" if pet else "Kestrel Aerospace"), reading.rationale
    # Another person with the subject's surname is still another person.
    other = read_context("user: Tom Price works at Kestrel Aerospace.", probe())
    assert other.answer is None, other.rationale


REVISION = dict(aliases=NEW_EMPLOYER, deprecated=EMPLOYER)
OLD = "[2027-01-04] user: I work at Kestrel Aerospace."
NEW = "[2027-03-01] user: New job! I'm at Lumen Cartography from today."


@pytest.mark.parametrize("context", [f"{OLD}\n{NEW}", f"{NEW}\n{OLD}"])
def test_the_latest_dated_assertion_wins_in_either_order(context: str) -> None:
    reading = read_context(context, probe(**REVISION))
    verdict = judge_reading(reading, probe(**REVISION))
    assert reading.answer == "Lumen Cartography" and not reading.deprecated_current
    assert verdict.correct and verdict.update_correct and verdict.deprecation_correct


def test_a_later_return_to_the_old_value_presents_it_as_current() -> None:
    context = f"{NEW}\n[2027-05-20] user: Lumen didn't work out, I'm back at Kestrel Aerospace."
    reading = read_context(context, probe(**REVISION))
    verdict = judge_reading(reading, probe(**REVISION))
    assert reading.deprecated_current and verdict.deprecation_correct is False
    assert not verdict.correct


def test_section_headers_date_the_lines_below_them() -> None:
    context = (
        "[2027-03-01]\nprincipal: Joined Lumen Cartography this morning.\n"
        "[2027-01-04]\nprincipal: I work at Kestrel Aerospace."
    )
    assert read_context(context, probe(**REVISION)).answer == "Lumen Cartography"


def test_undated_lines_are_read_in_text_order() -> None:
    context = "- works at Lumen Cartography\n- works at Kestrel Aerospace"
    assert read_context(context, probe(**REVISION)).answer == "Kestrel Aerospace"


def test_an_empty_memory_neither_updates_nor_deprecates() -> None:
    # Forgetting the old value is not moving on from it: deprecation needs a current value.
    verdict = judge_reading(read_context("", probe(**REVISION)), probe(**REVISION))
    assert verdict.update_correct is False and verdict.deprecation_correct is False
    assert "old value still current" not in verdict.rationale


def test_a_memory_that_moved_on_deprecates() -> None:
    verdict = judge_reading(read_context(NEW, probe(**REVISION)), probe(**REVISION))
    assert verdict.update_correct is True and verdict.deprecation_correct is True


TEMPORAL = dict(
    subtype="temporal",
    aliases=["2027-03-01", "March 1, 2027", "1 March 2027"],
    answer="2027-03-01",
    evidence_terms=NEW_EMPLOYER,
    question="On what date did Rhiannon last tell you about a change in their employer?",
)


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("[2027-03-01] user: I joined Lumen Cartography today!", True),
        ("principal: works at Lumen Cartography (since 2027-03-01)", True),
        ("- Joined Lumen Cartography on 1 March 2027", True),
        ("[2027-03-01]\nprincipal: First day at Lumen, great team.", True),
        ("Dentist on 2027-03-01.\nuser: I joined Lumen Cartography recently.", False),
        ("user: My sister's birthday is March 1, 2027. I'm at Lumen Cartography now.", False),
        ("[2027-03-01] user: Can you book the dentist?\n[2027-04-15] user: I'm at Lumen.", False),
    ],
)
def test_a_temporal_answer_needs_the_date_attached_to_the_event(
    context: str, credited: bool
) -> None:
    temporal = probe(**TEMPORAL)
    reading = read_context(context, temporal)
    assert judge_reading(reading, temporal).correct is credited, reading.rationale


def test_a_temporal_answer_is_the_start_of_the_current_run() -> None:
    context = (
        "[2027-03-01] user: Starting at Lumen Cartography today.\n"
        "[2027-03-20] user: Third week at Lumen, still love it."
    )
    assert read_context(context, probe(**TEMPORAL)).date == "2027-03-01"


@pytest.mark.parametrize(
    ("context", "aliases"),
    [
        ("user: fyi I'm veggie, so no steak places", ["vegetarian"]),
        ("user: Finally signed a lease in NYC.", ["New York"]),
        ("user: I'm teetotal these days.", ["does not drink alcohol"]),
        ("user: Moved to Lisboa in the end!", ["Lisbon"]),
    ],
)
def test_the_lexicon_reads_paraphrases(context: str, aliases: list[str]) -> None:
    value = probe(aliases=aliases, slot="constraints" if "veg" in aliases[0] else "city")
    assert read_context(context, value).answer == aliases[0]


def test_a_negation_inside_the_value_is_not_a_negation() -> None:
    value = probe(aliases=["does not drink alcohol"], slot="constraints")
    reading = read_context("user: I don't drink alcohol, so a mocktail bar please.", value)
    assert reading.answer == "does not drink alcohol"


def test_a_hedging_tag_neither_credits_nor_penalises() -> None:
    tagged = "[2027-01-04] user: I work at Kestrel Aerospace. (may be outdated)"
    assert read_context(tagged, probe()).answer == "Kestrel Aerospace"
    superseded = f"{tagged}\n[2027-03-01] user: Joined Lumen Cartography last week!"
    assert read_context(superseded, probe(**REVISION)).answer == "Lumen Cartography"


def test_a_decoy_counts_as_said_only_when_sincerely_stated() -> None:
    decoy = probe(
        aliases=["Edinburgh"],
        polarity="negative",
        answer="no",
        slot="city",
        question="Has Rhiannon ever told you that they live in Edinburgh?",
    )
    noise = (
        "user: Is Edinburgh nice in spring?\nuser: My brother lives in Edinburgh.\n"
        "user: If we moved, Edinburgh would be top of the list."
    )
    assert read_context(noise, decoy).polarity == "no"
    assert judge_reading(read_context(noise, decoy), decoy).correct
    said = f"{noise}\nuser: We moved to Edinburgh last weekend."
    assert read_context(said, decoy).polarity == "yes"
    assert not judge_reading(read_context(said, decoy), decoy).correct


def test_an_opinion_counts_only_on_its_topic() -> None:
    view = probe(
        aliases=["undecided"],
        slot="opinion/remote_work",
        question="What is Rhiannon's view on remote work?",
    )
    other = "user: I read the report on nuclear power, and now I'm undecided."
    assert read_context(other, view).answer is None
    same = "user: After the debate I changed my mind about remote work. I'm undecided."
    assert read_context(same, view).answer == "undecided"


ACTION = dict(
    probe_type="action",
    subtype="preference_driven",
    aliases=NEW_EMPLOYER,
    answer="Sign it with 'Lumen Cartography' as the employer",
    options=[
        {"text": "Sign it with 'Lumen Cartography'", "terms": NEW_EMPLOYER, "utility": 1},
        {"text": "Sign it with 'Kestrel Aerospace'", "terms": EMPLOYER, "utility": -1},
        {"text": "Leave the employer out", "terms": [], "utility": 0},
    ],
    correct_option=0,
    default_option=2,
)


@pytest.mark.parametrize(
    ("context", "option", "score"),
    [
        (f"{OLD}\n{NEW}", 0, 1.0),
        (f"{OLD}\n[2027-03-01] user: I might move to Lumen Cartography.", 1, -1.0),
        ("user: My friend works at Lumen Cartography.", 2, 0.0),
    ],
)
def test_an_action_follows_the_option_the_memory_sincerely_supports(
    context: str, option: int, score: float
) -> None:
    action = probe(**ACTION)
    reading = read_context(context, action)
    verdict = judge_reading(reading, action)
    assert reading.option == option and verdict.score == score
    assert verdict.correct is (option == 0)


def test_a_long_context_is_read_by_its_mentions_only() -> None:
    filler = "\n".join(
        f"[2027-01-{d % 28 + 1:02d}] user: Convert {d} miles to km." for d in range(5000)
    )
    context = f"{OLD}\n{filler}\n[2027-03-01] user: I joined Lumen Cartography today."
    reading = read_context(context, probe(**REVISION))
    assert reading.answer == "Lumen Cartography" and len(reading.mentions) == 2
