"""One test per rule of the careful reader that reads beyond single prose sentences."""

from __future__ import annotations

import pytest

from drift_pipeline.evaluation.reader import (
    ReaderProbe,
    expand_phrases,
    find_dates,
    find_relative,
    judge_reading,
    read_context,
)

from .helpers import EMPLOYER, NEW_EMPLOYER, probe

REVISION = dict(aliases=NEW_EMPLOYER, deprecated=EMPLOYER)


def _value(
    answer: str,
    *,
    others: list[list[str]] | None = None,
    question: str = "Which town does Priya live in now?",
    kind: str = "recall",
) -> ReaderProbe:
    row = {
        "probe_id": "r1",
        "probe_type": "recall",
        "subtype": "negative" if kind == "negative" else "fact",
        "polarity": "negative" if kind == "negative" else "positive",
        "subject": "principal",
        "question": question,
        "answer": "no" if kind == "negative" else answer,
        "aliases": [answer],
        "deprecated": [],
        "slot": "city",
    }
    return ReaderProbe.from_row(row, subject_names=["Priya"], others=others or [])


def _credited(context: str, asked: ReaderProbe) -> bool:
    return judge_reading(read_context(context, asked), asked).correct


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("user: I've been reading a lot lately, mostly sci-fi.", False),
        ("user: Reading on the train keeps me sane.", False),
        ("user: we moved to reading in march", True),
        ("- Home town: Reading", True),
        ("user: Life here is great, Reading suits us.", True),
    ],
)
def test_a_name_that_is_a_common_word_needs_a_name_frame(context: str, credited: bool) -> None:
    assert _credited(context, _value("Reading", others=[["Bath"]])) is credited


def test_a_common_word_name_after_an_article_is_the_common_word() -> None:
    apple = _value("Apple", question="Where does Priya work now?")
    assert not _credited("user: had an apple for lunch", apple)
    assert _credited("user: I work at Apple, in the Maps team.", apple)


@pytest.mark.parametrize(
    "context",
    [
        "user: I start at Kestrel Aerospace on the 1st of next month!",
        "user: starting at Kestrel Aerospace in September (offer accepted)",
        "user: going to Kestrel Aerospace after the summer, the offer is signed - start date TBD",
    ],
)
def test_a_change_still_ahead_is_not_current(context: str) -> None:
    reading = read_context(context, probe())
    assert reading.answer is None and reading.mentions[0].frame == "hypothetical"


@pytest.mark.parametrize(
    ("context", "frame"),
    [
        ("user: We had a Kestrel Aerospace badge when I was a kid", "retracted"),
        ("user: Kestrel Aerospace let me go after probation.", "retracted"),
        ("user: Kestrel Aerospace contract ended last week.", "retracted"),
        ("user: Forget what I said about Kestrel Aerospace, it was a typo.", "retracted"),
        ("user: I'm at Kestrel Aerospace - sorry, I mean Lumen Cartography.", "retracted"),
        ("user: Kestrel Aerospace was the old job.", "retracted"),
        ("user: Kestrel Aerospace interviewed me but nothing yet.", "hypothetical"),
        ("user: I said I joined Kestrel Aerospace, but I was joking.", "retracted"),
    ],
)
def test_endings_corrections_and_reports_after_the_value_take_it_back(
    context: str, frame: str
) -> None:
    first = read_context(context, probe()).mentions[0]
    assert first.frame == frame, first.cue


def test_an_aside_in_brackets_after_another_value_is_not_asserted() -> None:
    context = "- 2027-05-19 employer: Lumen Cartography (Kestrel Aerospace was too far)"
    reading = read_context(context, probe(**REVISION))
    assert reading.answer == "Lumen Cartography" and not reading.deprecated_current


@pytest.mark.parametrize(
    ("reply", "answer"),
    [("user: yep, since March", "Kestrel Aerospace"), ("user: no, I left them", None)],
)
def test_an_assistant_question_takes_the_subject_s_reply(reply: str, answer: str | None) -> None:
    context = f"assistant: So you're at Kestrel Aerospace now?\n{reply}"
    assert read_context(context, probe()).answer == answer


def test_a_line_that_takes_back_the_last_statement_without_naming_it() -> None:
    context = "user: I got the job at Kestrel Aerospace!!!\nuser: wait no... they rescinded it"
    assert read_context(context, probe()).answer is None


def test_a_condition_ends_at_its_comma() -> None:
    helsinki = _value("Helsinki")
    context = "user: if I lived somewhere warmer I'd be happier lol, helsinki in feb is brutal"
    assert _credited(context, helsinki)
    assert not _credited("user: If we ever moved, Helsinki would be top of the list.", helsinki)


def test_no_before_a_pause_is_an_answer_not_a_negation() -> None:
    context = "assistant: You live in Bath, right?\nuser: no, Reading - Bath is where I work"
    assert _credited(context, _value("Reading", others=[["Bath"]]))


def test_the_other_side_of_a_comparison_is_not_asserted() -> None:
    bath = _value("Bath", others=[["Leeds"]])
    assert not _credited("user: living in Leeds is so much calmer than Bath", bath)


def test_the_asked_relation_names_the_value_other_relations_do_not() -> None:
    partner = _value("Alex", question="What is the name of Priya's partner?", others=[["Jess"]])
    assert _credited("user: my gf Alex says hi", partner)
    assert not _credited("user: my sister Alex says hi", partner)
    assert _credited("- Priya's partner: Alex", partner)


def test_a_description_of_the_subject_is_not_a_third_party() -> None:
    context = "Summary: Priya is a teacher who lives in Leeds and bikes to work."
    assert _credited(context, _value("Leeds"))


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ('{"entity": "Priya", "lives_in": "Leeds", "since": "2027-02-01"}', True),
        ('{"entity": "Priya\'s mother", "lives_in": "Leeds"}', False),
        ('{"user": "Priya", "planned_move": {"city": "Leeds", "when": "next spring"}}', False),
        ("(Priya) --NOT lives_in--> (Leeds)", False),
        ("(Priya) --lives_in {from: 2026-01, to: 2027-01}--> (Leeds)", False),
        ("(Priya) --lives_in {valid 2027-03 → now}--> (Leeds)", True),
        ('{"type": "user_question", "subject": "Priya", "text": "Is Leeds nice?"}', False),
        (
            '{"turns": [{"role": "assistant", "text": "So you live in Leeds now?"}, '
            '{"role": "user", "text": "Yes, since February."}]}',
            True,
        ),
    ],
)
def test_records_are_read_as_sentences_whose_keys_are_words(context: str, credited: bool) -> None:
    assert _credited(context, _value("Leeds", others=[["York"]])) is credited


def test_dated_records_and_bulleted_dates_order_the_values() -> None:
    context = (
        '{"entity": "Priya", "history": [{"2027-06-01": "lives in York"}, '
        '{"2027-01-01": "lives in Leeds"}]}\n- 2027-03-01: lives in Leeds'
    )
    assert read_context(context, _value("York", others=[["Leeds"]])).answer == "York"


def test_retrieval_scores_before_a_memory_are_skipped() -> None:
    context = (
        "1. (score 0.88) [2027-03-01] user: started at Lumen Cartography\n"
        "2. (score 0.61) [2027-01-04] user: Kestrel Aerospace is restructuring again"
    )
    assert read_context(context, probe(**REVISION)).answer == "Lumen Cartography"


TEMPORAL = dict(
    subtype="temporal",
    answer="2027-02-01",
    aliases=["2027-02-01"],
    evidence_terms=NEW_EMPLOYER,
)


def test_an_event_s_own_date_answers_when_it_happened() -> None:
    started = probe(question="When did Rhiannon start at Lumen?", **TEMPORAL)
    context = "[2027-02-03] user: started at Lumen on Feb 1, first week is induction"
    assert read_context(context, started).date == "2027-02-01"
    told = probe(question="On what date did Rhiannon tell you about her new job?", **TEMPORAL)
    assert read_context(context, told).date == "2027-02-03"


def test_a_date_belongs_to_the_part_of_the_clause_it_sits_in() -> None:
    started = probe(question="When did Rhiannon start at Lumen?", **TEMPORAL)
    context = "Summary: the car service is on 2027-01-20 and the first day at Lumen was 2027-02-01."
    assert read_context(context, started).date == "2027-02-01"


def test_month_dates_are_read_as_their_first_day() -> None:
    assert [d[2] for d in find_dates("valid 2026-09 → 2027-02")] == ["2026-09-01", "2027-02-01"]


def test_the_lexicon_converts_units_and_sums_of_money() -> None:
    assert {"6.2 miles", "ten kilometres"} <= set(expand_phrases(["10 km"]))
    assert {"two grand", "2000 dollars", "USD 2k"} <= set(expand_phrases(["$2,000"]))
    assert "fifteen hundred euros" in expand_phrases(["€1,500"])
    assert "6 miles" not in expand_phrases(["10 km"])  # a careful reader does not round that far


def test_a_plural_names_the_same_value() -> None:
    latte = _value("matcha latte", question="What does Priya drink now?", others=[["americano"]])
    assert _credited("user: officially switched to matcha lattes", latte)


def test_a_value_held_in_part_is_vague() -> None:
    vegan = _value("vegan", question="What is Priya's diet?")
    assert not _credited("user: I'm mostly vegan", vegan)
    assert not _credited("user: we cook plant-based at home mostly", vegan)


def test_a_question_can_presuppose_the_subject_s_fact() -> None:
    context = "user: Which pharmacies near my flat in Leeds are open late?"
    assert _credited(context, _value("Leeds"))
    assert not _credited("user: Are pharmacies in Leeds open late?", _value("Leeds"))


def test_a_slash_date_is_read_only_when_one_part_cannot_be_a_month() -> None:
    assert [d[2] for d in find_dates("Sat 18/09/2027 and 09/18/2027")] == ["2027-09-18"] * 2
    assert find_dates("03/01/2027") == []


def test_a_value_spelled_only_in_a_record_s_rendering_is_found() -> None:
    weight = _value("30 kg", question="How much does Priya's dog weigh?", others=[["20 kg"]])
    assert _credited('{"entity": "Priya", "dog": {"weight_lb": 66}}', weight)


def test_a_mistake_owned_later_belongs_to_the_nearest_value_before_it() -> None:
    context = "correction: lives in Leeds (user: 'I typed York by mistake')"
    assert read_context(context, _value("Leeds", others=[["York"]])).answer == "Leeds"


def test_a_verb_of_change_must_come_before_the_value_to_make_it_a_plan() -> None:
    daughter = _value("Layla", question="What is the name of Priya's daughter?")
    assert _credited("user: my daughter Layla starts school in September", daughter)
    assert not _credited("user: my niece Layla starts school in September", daughter)


def test_an_assistant_acknowledging_a_constraint_restates_it() -> None:
    shellfish = _value("shellfish", question="What is Priya allergic to?")
    assert _credited("assistant: Got it, Priya - I'll avoid shellfish in every recipe.", shellfish)
    assert not _credited("assistant: Shellfish allergies are common in adults.", shellfish)


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("user: Layla turned 5 today, my little girl is growing up so fast", True),
        ("user: rent cap twelve hundred pounds, no more", True),
        ("user: cancelled my Kestrel Aerospace contract, too far", False),
        ("- 2027-02-14: one-off trial at Kestrel Aerospace", False),
    ],
)
def test_words_that_look_like_cues_but_are_not(context: str, credited: bool) -> None:
    asked = {
        "Layla": _value("Layla", question="What is the name of Priya's daughter?"),
        "rent": _value("£1,200", question="What is Priya's rent budget?"),
    }
    which = "Layla" if "Layla" in context else "rent" if "rent" in context else ""
    reading_probe = asked.get(which, probe())
    assert _credited(context, reading_probe) is credited


def test_relative_days_are_read_from_the_line_s_own_date() -> None:
    started = probe(question="When did Rhiannon start at Lumen?", **TEMPORAL)
    assert read_context("[2027-01-31] user: I start at Lumen tomorrow", started).date is None
    context = "[2027-02-02] user: joined Lumen yesterday, the team is lovely"
    assert read_context(context, started).date == "2027-02-01"
    assert find_relative("dentist on tuesday the 9th", "2027-11-02")[0][2] == "2027-11-09"


@pytest.mark.parametrize(
    ("context", "accepted"),
    [
        ("user: I started at Kestrel Aerospace last month, any tips for the first review?", True),
        ("user: Just joined Kestrel Aerospace - what should I read first?", False),
        ("user: I work at Kestrel Aerospace now; how do I book leave?", True),
        ("user: Do I still work at Kestrel Aerospace, do you think?", False),
        ("user: Should I apply to Kestrel Aerospace, or is it a long shot?", False),
    ],
)
def test_a_statement_followed_by_its_own_question_is_stated(context: str, accepted: bool) -> None:
    reading = read_context(context, probe())
    assert (reading.answer == "Kestrel Aerospace") is accepted, reading.rationale


def test_rather_being_called_something_is_a_standing_request() -> None:
    name = probe(
        aliases=["Lou"],
        deprecated=["Jo"],
        slot="preferred_name",
        question="What does Rhiannon want to be called?",
    )
    context = (
        "[2027-03-17] principal: Oh, and I'd rather be called Jo, but that's a side note.\n"
        "[2027-03-19] principal: Truth be told, I'd rather be called Lou. Thank you very much."
    )
    assert read_context(context, name).answer == "Lou"
    assert read_context("principal: My brother would rather be called Lou.", name).answer is None


def test_wanting_to_tell_is_a_report_not_a_wish() -> None:
    context = "principal: I wanted to let you know that I work at Kestrel Aerospace these days."
    assert read_context(context, probe()).answer == "Kestrel Aerospace"
    wish = "principal: I wanted to work at Kestrel Aerospace when I was a kid."
    assert read_context(wish, probe()).answer is None


def _temporal(question: str, evidence: list[str]) -> ReaderProbe:
    return probe(
        aliases=["2027-05-03"],
        answer="2027-05-03",
        subtype="temporal",
        question=question,
        evidence_terms=evidence,
    )


def _decoy(value: str) -> ReaderProbe:
    return _value(value, question=f"Has Priya ever told you about {value}?", kind="negative")


def test_turns_on_one_line_are_read_as_turns() -> None:
    partner = _value("Noor", question="What is the name of Priya's partner?", others=[["Sam"]])
    context = "[0.81] assistant: So your partner is called Noor?  |  Priya: that's her!"
    assert _credited(context, partner)


@pytest.mark.parametrize(
    "context",
    [
        "user: finally moved to Leeds, York rents were silly",
        "user: back in Leeds after the York stint",
        "user: now in Leeds, York wasn't for us",
    ],
)
def test_the_value_moved_to_outranks_one_named_in_passing(context: str) -> None:
    leeds = _value("Leeds", others=[["York"]])
    assert _credited(context, leeds)


def test_a_value_named_later_with_its_own_state_still_counts() -> None:
    york = _value("York", others=[["Leeds"]])
    assert _credited("user: my sister moved to Leeds; I'm still in York", york)


@pytest.mark.parametrize(
    ("context", "question", "date"),
    [
        ("[2027-05-04] user: our son was born yesterday!", "When was the baby born?", "2027-05-03"),
        (
            "[2027-04-20] user: going to propose on 3 May 2027, ring's hidden",
            "When is Priya planning to propose?",
            "2027-05-03",
        ),
        (
            "- Rhiannon's graduation — 03.05.2027, two guest tickets",
            "When is Rhiannon's graduation?",
            "2027-05-03",
        ),
        (
            "[Sat 30 Apr 2027 09:12] user: the move is three days from today",
            "When is Priya's move?",
            "2027-05-03",
        ),
    ],
)
def test_the_date_of_an_event_told_or_planned(context: str, question: str, date: str) -> None:
    words = {"born": ["born", "baby"], "propose": ["propose"], "graduation": ["graduation"]}
    evidence = next((v for k, v in words.items() if k in question), ["move"])
    reading = read_context(context, _temporal(question, evidence))
    assert reading.date == date, reading.rationale


def test_an_event_ahead_is_not_dated_by_the_day_it_was_mentioned() -> None:
    asked = _temporal("When is Priya's recital?", ["recital"])
    reading = read_context("[2027-03-12] user: the recital is on a Saturday, not sure which", asked)
    assert reading.date is None


def test_a_date_put_right_on_the_next_line_replaces_the_first() -> None:
    asked = _temporal("When is Priya's appointment?", ["appointment"])
    context = "[2027-04-20] user: appointment is 30 April\n[2027-04-20] user: sorry, 3 May 2027"
    assert read_context(context, asked).date == "2027-05-03"


def test_a_later_dated_line_that_moves_the_event_gives_its_new_date() -> None:
    asked = _temporal("When is Priya's driving test?", ["driving test"])
    context = (
        "[2027-04-01] user: driving test booked for 20 April 2027\n"
        "[2027-04-15] user: examiner off sick, moved to 3 May 2027"
    )
    assert read_context(context, asked).date == "2027-05-03"


@pytest.mark.parametrize(
    ("record", "credited"),
    [
        ('{"user": "Priya", "intent": "move to Leeds", "timeline": "spring"}', False),
        ('{"user": "Priya", "scenario": "if the job comes through", "city": "Leeds"}', False),
        ('{"user": "Priya", "relations": [{"name": "Mum", "city": "Leeds"}]}', False),
        ('{"user": "Priya", "city": "York", "user_correction": "make that Leeds"}', True),
        ('{\n  "fact": "Priya lives in Leeds",\n  "invalid_at": "2027-01-01"\n}', False),
    ],
)
def test_records_read_their_keys(record: str, credited: bool) -> None:
    assert _credited(record, _value("Leeds", others=[["York"]])) is credited


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("[fact] Priya lives in Leeds.\n  valid_at: 2020-01-01   invalid_at: 2026-06-30", False),
        ("profile:\n  - Former city: Leeds\n  - Job: nurse", False),
        ("Priya — goals for 2027:\n  1. move to Leeds\n  2. run a 10k", False),
        ("user: new year's resolution: move to Leeds", False),
    ],
)
def test_qualifiers_heads_and_goal_lists_govern_their_lines(context: str, credited: bool) -> None:
    assert _credited(context, _value("Leeds", others=[["York"]])) is credited


@pytest.mark.parametrize(
    ("context", "aliases", "credited"),
    [
        ('{"user": "Priya", "commute_h": 0.75}', ["45 minutes"], True),
        ("- holiday budget: 3k sterling", ["£3,000"], True),
        ("Rhiannon is a nurse in the NHS.", ["National Health Service"], True),
        ("- Rhiannon: doesn't eat meat, does eat eggs", ["vegetarian", "don't eat meat"], True),
        ("user: my rent budget is 3000 pounds", ["£3,000", "3000 pounds"], True),
    ],
)
def test_paraphrases_by_unit_acronym_and_person(
    context: str, aliases: list[str], credited: bool
) -> None:
    asked = probe(aliases=aliases, question="What about Rhiannon?")
    assert judge_reading(read_context(context, asked), asked).correct is credited


def test_a_money_value_is_never_read_as_a_weight() -> None:
    assert "1360.8 kg" not in expand_phrases(["£3,000", "3000 pounds"])


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("assistant: You could try the cafés in Leeds, they're great.", False),
        (
            "assistant: Since you're in Leeds, here are some tips.\nuser: I'm in York actually",
            False,
        ),
        ("user: Leeds is lovely, the arcades alone", False),
        ("user: Leeds came over for pizza", False),
        ("user: not gonna lie, Leeds has grown on me since we moved here", True),
        ("user: it's not like I don't live in Leeds, I just travel a lot", True),
        ("user: I wouldn't say I live in Leeds, more like on a train", False),
        ('user: favourite line from the song: "I live in Leeds, baby"', False),
        ("user: back when I lived in Leeds I cycled everywhere", False),
    ],
)
def test_suggestions_opinions_double_negatives_and_quotes(context: str, credited: bool) -> None:
    assert _credited(context, _value("Leeds", others=[["York"]])) is credited


@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ("user: had a Saab for years, sold it last spring", None),
        ("user: switched to a Pixel after my Saab died", "Pixel"),
        ("user: the Saab was such a good car today on the motorway", "Saab"),
    ],
)
def test_what_was_done_with_the_value_later_in_the_sentence(
    context: str, answer: str | None
) -> None:
    asked = _value("Saab", question="What car does Priya drive?", others=[["Pixel"]])
    assert read_context(context, asked).answer == answer


@pytest.mark.parametrize(
    ("context", "said"),
    [
        ("user: WE'RE ENGAGED 💍\nuser: jk april fools", False),
        ("user: engaged!!\nuser: omg wrong chat, that was a typo", False),
        ("user: we got engaged last spring, then called it off", True),
    ],
)
def test_a_joke_or_slip_was_never_said(context: str, said: bool) -> None:
    reading = read_context(context, _decoy("engaged"))
    assert (reading.answer == "yes") is said, reading.rationale


@pytest.mark.parametrize(
    "text",
    ["Mon 3 May 2027 — Priya:", "[3 May 2027 09:02] Priya:", "Priya • 21/04/2027:"],
)
def test_a_line_stamp_with_weekday_clock_or_bullet_dates_the_line(text: str) -> None:
    context = f"{text} moved to York\n[2027-01-01] user: I live in Leeds"
    assert _credited(context, _value("York", others=[["Leeds"]]))


@pytest.mark.parametrize(
    ("text", "today", "iso"),
    [
        ("three days ago", "2027-05-06", "2027-05-03"),
        ("a week from today", "2027-04-26", "2027-05-03"),
        ("next Monday", "2027-04-28", "2027-05-03"),
        ("the day after tomorrow", "2027-05-01", "2027-05-03"),
    ],
)
def test_relative_dates_from_the_line_s_date(text: str, today: str, iso: str) -> None:
    assert [d[2] for d in find_relative(text, today)] == [iso]


@pytest.mark.parametrize(
    ("text", "iso"), [("since March 2027", "2027-03-01"), ("• 03/2027", "2027-03-01")]
)
def test_a_month_without_a_day_is_its_first_day(text: str, iso: str) -> None:
    assert [d[2] for d in find_dates(text)] == [iso]


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("Priya works remotely for a York agency and lives in\nLeeds with two cats.", True),
        ("- Priya: works for a Leeds agency, lives in York", False),
        ("user: officially a Leeds resident as of tonight", True),
        ("Priya travels a lot, most often to Leeds for client meetings.", False),
        ("Priya daydreams about a flat in Leeds one day.", False),
        ('Priya: "If I ever left York, it\'d be for Leeds."', False),
        ("user: saving up for a place in Leeds, for now it's York", False),
        ("(Priya, lives_in, Leeds) @2027-01-03\n(Priya, moved_out_of, Leeds) @2027-05-01", False),
        ("edge: Priya LIVES_IN Leeds | valid_at 2020-01-01 | invalid_at 2026-01-15", False),
        ("2027-05-12 | Priya: settled in York now; Leeds is behind her.", False),
    ],
)
def test_places_told_in_passing_in_wishes_or_in_records(context: str, credited: bool) -> None:
    assert _credited(context, _value("Leeds", others=[["York"]])) is credited


def test_the_value_said_to_be_someone_else_s_is_theirs() -> None:
    team = _value("under-12s", question="Which team does Priya coach?", others=[["under-14s"]])
    context = "Priya coaches the under-14s; the under-12s are her husband's squad."
    assert read_context(context, team).answer == "under-14s"


def test_the_asked_relation_with_a_possessive_is_the_slot() -> None:
    wife = _value("Anneliese", question="What is Priya's wife's name?", others=[["Annalisa"]])
    assert _credited("- Wife's name is Anneliese (spelling corrected)", wife)


@pytest.mark.parametrize(
    ("context", "question", "date"),
    [
        ("user: flight to Lima 21 Apr 2027 … sorry, typo, it's the 22nd", "flight", "2027-04-22"),
        ("* 2027-10-12  Rhiannon runs the Lyon half-marathon.", "half-marathon", "2027-10-12"),
        (
            "Logged 2027-01-03: adopted Biscuit (terrier mix) on 14 Oct 2026.",
            "adopted",
            "2026-10-14",
        ),
    ],
)
def test_dates_corrected_in_the_line_noted_or_a_few_words_on(
    context: str, question: str, date: str
) -> None:
    asked = _temporal(f"When is Rhiannon's {question}?", [question])
    assert read_context(context, asked).date == date


@pytest.mark.parametrize(
    ("context", "credited"),
    [
        ("user: moved to Leeds!!\nuser: ugh ignore that, the sale fell through", False),
        ('{"subject": "Priya", "city": "Leeds", "move_status": "PENDING - awaiting keys"}', False),
        ("The note saying Priya lives in Leeds was archived after she corrected it.", False),
        ("Priya --lived_in (2014-2025)--> Leeds", False),
        ("Priya first said she lived in Leeds, then corrected herself: it's York.", False),
    ],
)
def test_pending_archived_and_taken_back_values_are_not_current(
    context: str, credited: bool
) -> None:
    assert _credited(context, _value("Leeds", others=[["York"]])) is credited


def test_an_appointment_is_where_the_latest_word_about_it_puts_it() -> None:
    asked = _temporal("When is Rhiannon's dentist appointment?", ["dentist"])
    context = (
        "2027-03-02 | Rhiannon | dentist on the 20th of April 2027, the filling\n"
        "2027-04-10 | Rhiannon | dentist rang: moved to 2027-05-03, hygienist off sick"
    )
    assert read_context(context, asked).date == "2027-05-03"
