from __future__ import annotations

import pytest

from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._extract import (
    REMARK_PREFIX,
    Operation,
    Statement,
    decide,
    extract_statements,
    insincere,
    predicate_hint,
    values_match,
)
from drift_pipeline.memory.backends._text import CaseModel

from ._sessions import agent, user


def _facts(text: str) -> list[tuple[str, str, bool]]:
    return [
        (s.predicate, s.text or s.value, s.retraction)
        for s in extract_statements([user(text, "2027-03-14")])
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I work at Acme Corp.", [("works at", "works at Acme Corp", False)]),
        ("I just started at Globex last week!", [("works at", "works at Globex", False)]),
        ("I moved to Lisbon last month with my partner.", [("lives in", "lives in Lisbon", False)]),
        ("So anyway, I live in New York City.", [("lives in", "lives in New York City", False)]),
        ("Please call me Dr. Smith from now on.", [("name", "goes by Dr. Smith", False)]),
        ("I'm vegetarian.", [("diet", "is vegetarian", False)]),
        ("I'm no longer vegetarian.", [("diet", "is vegetarian", True)]),
        ("I'm not vegetarian anymore.", [("diet", "is vegetarian", True)]),
        ("I'd rather fly economy.", [("prefers economy", "prefers fly economy", False)]),
        ("I work as a nurse.", [("occupation", "works as a nurse", False)]),
        ("I'm allergic to peanuts.", [("is allergic peanut", "is allergic to peanuts", False)]),
        ("I don't work at Acme anymore.", [("works at", "works at Acme", True)]),
        ("I stopped learning Spanish.", [("activity spanish", "learning Spanish", True)]),
        ("I'm learning Spanish.", [("activity spanish", "is learning Spanish", False)]),
        ("I've been running every morning.", [
            ("activity run", "has been running every morning", False),
        ]),
        ("I think remote work is overrated.", [
            ("opinion remot work", "thinks remote work is overrated", False),
        ]),
        ("I hate cilantro.", [("opinion cilantro", "hates cilantro", False)]),
        ("I can't eat gluten.", [("constraint eat gluten", "cannot eat gluten", False)]),
        ("My favourite colour is teal.", [("favourite colour", "favourite colour is teal", False)]),
        ("I'm 34.", [("age", "is 34 years old", False)]),
        ("I got married!", [("relationship status", "is married", False)]),
        ("i work at initech", []),  # no capital: not recognisably a name
        ("I work for the BBC now and I live in London.", [
            ("works at", "works at the BBC", False),
            ("lives in", "lives in London", False),
        ]),
        ("Please always reply in Spanish.", [
            ("instruction respond in", "standing instruction: always reply in Spanish", False),
        ]),
        ("From now on, keep answers short.", [
            (
                "instruction keep answer",
                "standing instruction: from now on, keep answers short",
                False,
            ),
        ]),
        ("Stop using emojis please.", [
            ("instruction use emojis", "standing instruction: stop using emojis", False),
        ]),
    ],
)  # fmt: skip
def test_first_person_statements_become_slot_facts(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # questions
        "Do you think I should move to Berlin?",
        "I work at Acme, right?",
        # hypotheticals and conditionals
        "If I moved to Berlin I'd be happier.",
        "Maybe I'll start running someday.",
        "I might join Globex.",
        "I would live in Paris if I could.",
        "Imagine I worked at NASA.",
        "What if I became vegan.",
        "I'm thinking about moving to Berlin.",
        # third parties
        "My sister works at Google.",
        "My best friend is vegan.",
        "She lives in Paris.",
        "He just moved to Berlin.",
        "They work at Initech.",
        # sarcasm
        "I love Mondays. Yeah right.",
        "I totally love working late 🙄",
        "Oh sure, I live in a palace /s",
        "As if I'd ever work at Globex.",
        # quoted or reported speech
        'She said "I work at Acme".',
        "He told me I'm vegan.",
        "According to my mum, I live in Leeds.",
        "'I work at Acme' is what I told the recruiter.",
        # passing states and small talk
        "I'm tired today.",
        "I'm so excited!",
        "I have a meeting at 3.",
        "I'm looking for a good book.",
        "I love this idea!",
        "I don't know.",
        "I like your suggestion.",
        "Thanks, that's helpful!",
        "Never mind, it's fine.",
        "Never again!",
        "I'm working on a presentation for Monday.",
        "My mum says hi.",
    ],
)
def test_non_facts_are_ignored(text: str) -> None:
    assert _facts(text) == []


def test_only_the_human_speaker_counts_and_dates_come_from_the_turn() -> None:
    messages = [
        agent("I work at OpenMemory Inc and I live in the cloud."),
        user("I live in Leeds.", "2027-06-01", speaker="grace"),
    ]
    assert extract_statements(messages) == [
        Statement("grace", "lives in", "Leeds", "lives in Leeds", "2027-06-01")
    ]


def test_prefer_x_over_y_withdraws_y() -> None:
    assert _facts("I prefer tea over coffee.") == [
        ("prefers coffe", "coffee", True),
        ("prefers tea", "prefers tea", False),
    ]


def _statement(value: str, retraction: bool = False, matchable: bool = True) -> Statement:
    return Statement("p", "works at", value, "", "2027-01-01", retraction, matchable)


def test_decide_add_update_delete_noop() -> None:
    assert decide(None, _statement("Acme")) is Operation.ADD
    assert decide("Acme", _statement("acme")) is Operation.NOOP
    assert decide("Acme", _statement("Globex")) is Operation.UPDATE
    assert decide("Acme Corp", _statement("Acme", retraction=True)) is Operation.DELETE
    assert decide("Globex", _statement("Acme", retraction=True)) is Operation.NOOP
    assert decide("Globex", _statement("Acme", True, matchable=False)) is Operation.DELETE
    assert decide(None, _statement("Acme", retraction=True)) is Operation.NOOP


def test_values_match_loosely() -> None:
    assert values_match("the BBC", "BBC")
    assert values_match("Acme Corp", "acme")
    assert not values_match("Acme", "Globex")
    assert not values_match("", "x")


def test_attributed_lines_of_a_system_summary_count_as_human_turns() -> None:
    summary = Message(
        speaker="summary",
        role="system",
        content="[2027-03-14]\ngrace: I work at Acme Corp.\ngrace: It rained all day.",
        timestamp="2027-03-14T09:00:00",
    )
    assert extract_statements([summary]) == [
        Statement("grace", "works at", "Acme Corp", "works at Acme Corp", "2027-03-14")
    ]


def test_lets_and_you_should_are_instructions() -> None:
    assert _facts("Let's use metric units from now on.") == [
        ("instruction use unit", "standing instruction: from now on, use metric units", False)
    ]
    assert _facts("You should always book aisle seats.") == [
        ("instruction book seat", "standing instruction: always book aisle seats", False)
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "IT finally gave me a laptop at the new place.",
            "IT finally gave me a laptop at the new place",
        ),
        ("I usually don't mind the rain.", "I usually do not mind the rain"),
        ("I always forget where I put my keys.", "I always forget where I put my keys"),
        ("Honestly, the commute to Leeds is killing me.", "the commute to Leeds is killing me"),
    ],
)  # fmt: skip
def test_sincere_remarks_no_rule_reads_are_kept_as_said(text: str, kept: str) -> None:
    [statement] = extract_statements([user(text, "2027-03-14")])
    assert statement.text == f"said: {kept}"
    assert not statement.matchable and not statement.retraction


def test_remarks_never_replace_one_another() -> None:
    laptop = "IT finally gave me a laptop at the new place."
    first = extract_statements([user(laptop, "2027-03-14")])
    second = extract_statements([user("The commute to Leeds is killing me.", "2027-03-15")])
    assert first[0].predicate != second[0].predicate


@pytest.mark.parametrize(
    "text",
    [
        "Could you draft a note to my landlord about the boiler?",
        "Thanks again, I will sleep much better tonight.",
        "I am heading out for a walk with my dog.",
        "My meeting got moved to 4pm so I have time.",
        "I am so relieved that it all worked out.",
        "Our flight leaves later than I thought.",
    ],
)
def test_requests_thanks_and_passing_moments_are_not_remarks(text: str) -> None:
    assert extract_statements([user(text, "2027-03-14")]) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Random aside: I moved to Lisbon last month.", [("lives in", "lives in Lisbon", False)]),
        ("Unlike my sister, I am vegetarian.", [("diet", "is vegetarian", False)]),
        ("From now on, quick update: I am based in Oslo.", [("lives in", "lives in Oslo", False)]),
        ("Dear assistant, in other news, my brother has taken up chess.", []),
        ("Before I forget, a guy on my team keeps sending me flat listings in Oslo.", []),
    ],
)  # fmt: skip
def test_framing_phrases_before_a_comma_or_colon_are_read_through(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _facts(text) == expected


def test_a_subordinate_clause_is_not_taken_for_framing() -> None:
    [statement] = extract_statements([user("When I was a kid, I lived in Paris.", "2027-03-14")])
    assert statement.text == "said: When I was a kid, I lived in Paris"


@pytest.mark.parametrize(
    "text",
    [
        "Good afternoon, I hope you are well.",
        "Give me three title ideas for a post about bridges.",
        "Convert 81 degrees Fahrenheit to Celsius for me.",
        "My spreadsheet formula for the budget column returns an error.",
        "One of the details you have for me is wrong, hang on.",
        "Part of me wants to pack it all in and move to Kyoto.",
    ],
)
def test_greetings_orders_breakages_and_wishes_are_not_remarks(text: str) -> None:
    assert extract_statements([user(text, "2027-03-14")]) == []


def test_one_remark_framed_two_ways_is_one_remark() -> None:
    said = "I sleep with the window open."
    first = extract_statements([user(f"Long story short, {said}", "2027-03-14")])
    second = extract_statements([user(f"About that, {said}", "2027-03-21")])
    assert first[0].predicate == second[0].predicate


def test_a_remark_is_indexed_under_the_topics_its_words_point_to() -> None:
    [statement] = extract_statements(
        [user("Correct, I handed in my notice at Acme and joined Initech.", "2027-03-14")]
    )
    assert statement.text.startswith("said: ")
    assert "job" in predicate_hint(statement.predicate).split()
    assert predicate_hint("said the weather was odd") == ""


def test_a_tail_offering_context_is_no_condition() -> None:
    text = "I switched to decaf because of my heart, in case that matters for anything."
    [statement] = extract_statements([user(text, "2027-03-14")])
    assert statement.text == "said: I switched to decaf because of my heart"
    assert _facts("In case it matters, I moved to Oslo.") == []


def test_an_instruction_inside_a_frame_is_still_an_instruction() -> None:
    assert _facts("I wanted to let you know that you should always cite sources.") == [
        ("instruction cit sourc", "standing instruction: always cite sources", False)
    ]


def test_a_statement_before_a_run_on_question_is_read() -> None:
    assert _facts("Fyi I moved to Oslo Can you suggest a good bakery?") == [
        ("lives in", "lives in Oslo", False)
    ]


def test_i_would_like_states_a_wish_held_now() -> None:
    [statement] = extract_statements(
        [user("I'd like your replies to open with a summary.", "2027-03-14")]
    )
    assert statement.text == "said: I would like your replies to open with a summary"
    assert _facts("I would like to move to Paris someday.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I want you to start every answer with a summary going forward.",
            (
                "instruction start answer",
                "standing instruction: from now on, start every answer with a summary",
            ),
        ),
        (
            "A friend showed me a better way, so please use metric units from today.",
            ("instruction use unit", "standing instruction: from now on, use metric units"),
        ),
    ],
)  # fmt: skip
def test_instructions_asked_for_in_other_words(text: str, expected: tuple[str, str]) -> None:
    assert _facts(text) == [(*expected, False)]


def test_i_want_you_to_know_frames_a_statement() -> None:
    assert _facts("I want you to know that I moved to Oslo.") == [
        ("lives in", "lives in Oslo", False)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Honestly, you should call me Bo from now on.", ("name", "goes by Bo")),
        ("For what it is worth, I'm with Initech these days.", ("works at", "works at Initech")),
        ("The update I promised: home is Tromsø now.", ("lives in", "lives in Tromsø")),
        (
            "Yo, I'm in an on-and-off relationship.",
            ("relationship status", "is in an on-and-off relationship"),
        ),
        (
            "Oh, I'm living with my partner now.",
            ("relationship status", "is living with my partner"),
        ),
        ("Truth is, I am seeing someone new.", ("relationship status", "is seeing someone new")),
    ],
)
def test_a_name_an_employer_a_home_or_a_status_said_in_other_words(
    text: str, expected: tuple[str, str]
) -> None:
    assert [(s.predicate, s.text) for s in extract_statements([user(text, "2027-03-14")])] == [
        expected
    ]


def test_a_lasting_state_dated_at_the_moment_is_kept_a_passing_day_is_not() -> None:
    [kept] = extract_statements([user("Health-wise, I'm managing gout at the moment.")])
    assert (kept.predicate, kept.text) == ("health", "is managing gout")
    assert extract_statements([user("Health-wise, my dad is managing gout at the moment.")]) == []
    assert "health" in predicate_hint(kept.predicate)
    assert extract_statements([user("I am managing the stand today.")]) == []
    [remark] = extract_statements([user("Health-wise, my knee has been acting up a lot lately.")])
    # The framing names the topic, so it stays with the remark.
    assert remark.text == "said: Health-wise, my knee has been acting up a lot lately"
    assert "health" in predicate_hint(remark.predicate)


def test_what_the_speaker_reports_having_told_someone_is_said_of_themselves() -> None:
    [own] = extract_statements([user("I emailed my landlord saying I'm allergic to cats.")])
    assert own.text == "said: I emailed my landlord saying I am allergic to cats"
    for reported in (
        "My doctor said I am fine.",
        "She told me I am stubborn.",
        'I told him "I am moving to Oslo" and laughed.',
    ):
        assert extract_statements([user(reported)]) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("You can keep calling me Jo.", [("name", "goes by Jo", False)]),
        ("Long story short, I'd rather be called Jo.", [("name", "goes by Jo", False)]),
        ("I want to be addressed as Dr. Lee.", [("name", "goes by Dr. Lee", False)]),
        ("Feel free to call me Kit, by the way.", [("name", "goes by Kit", False)]),
        ("You can drop the formal Priya, it's Bea.", [("name", "goes by Bea", False)]),
        ("Please don't call me Jo.", []),
        ("If you ever call me Sam, I will scream.", []),
        ("Call me back later.", []),
    ],
)
def test_the_name_the_speaker_asks_for_however_it_is_put(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "So, about that update: the doctor says I'm recovering from pneumonia.",
            [("health", "is recovering from pneumonia", False)],
        ),
        ("My physio told me I'm managing asthma.", [("health", "is managing asthma", False)]),
        (
            "I'm managing type 2 diabetes these days.",
            [("health", "is managing type 2 diabetes", False)],
        ),
        ("I was diagnosed with gout.", [("health", "was diagnosed with gout", False)]),
        (
            "I got a clean bill of health after a full check-up.",
            [("health", "health: got a clean bill of health after a full check-up", False)],
        ),
        (
            "I'm no longer recovering from pneumonia.",
            [("health", "is recovering from pneumonia", True)],
        ),
        # Someone else's word about the speaker is theirs; a hedge makes it no record.
        ("He told me I'm vegan.", []),
        ("Apparently the doctor says I'm recovering from flu.", []),
    ],
)
def test_health_news_is_one_current_status_told_by_the_speaker_or_their_doctor(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _facts(text) == expected


def test_managing_or_living_with_something_named_with_an_article_is_no_health_news() -> None:
    for text in ("I'm managing the new team.", "I'm living with my sister."):
        assert all(predicate != "health" for predicate, _, _ in _facts(text))


def test_a_move_told_as_saying_goodbye_and_settling_in() -> None:
    assert _facts("Please note that I said goodbye to Asheville and I'm settling into Denver.") == [
        ("works at", "Asheville", True),
        ("lives in", "Asheville", True),
        ("lives in", "lives in Denver", False),
    ]
    assert _facts("We settled into Porto last spring.") == [("lives in", "lives in Porto", False)]


def test_news_that_ends_in_from_now_on_is_no_instruction() -> None:
    assert _facts("Not sure I mentioned it, but I'm based in Bologna from now on.") == [
        ("lives in", "lives in Bologna", False)
    ]
    assert _facts("From now on, please reply in Spanish.") == [
        ("instruction respond in", "standing instruction: from now on, reply in Spanish", False)
    ]


def test_names_in_text_typed_without_case_are_read_with_the_case_the_memory_has_seen() -> None:
    session = [
        agent("Congratulations on the offer from Ravelin Security!"),
        user("long story short, i took the offer from ravelin security."),
        user("the movers unloaded the last boxes in wellington on monday."),
    ]
    assert [s.text for s in extract_statements(session)] == [
        "said: I took the offer from ravelin security"
    ]
    case = CaseModel()
    case.learn("Is Wellington cold in June?")
    assert [(s.predicate, s.value) for s in extract_statements(session, case)] == [
        ("works at", "Ravelin Security"),
        ("lives in", "Wellington"),
    ]


def test_a_new_name_typed_in_lower_case_after_a_preposition_is_read_as_a_name() -> None:
    case = CaseModel()
    # Text with case shows "move", "boxes" and "fear" as ordinary words; "tucson" is new.
    case.learn("Good luck with the move. The boxes can wait. There is no fear in that.")
    session = [
        user("quick update on my end: i'm still unpacking in tucson after the move."),
        user("honestly i'm living in fear of the boxes."),
    ]
    assert [(s.predicate, s.value) for s in extract_statements(session, case)] == [
        ("lives in", "Tucson")
    ]
    assert case.recase("i'm with initech these days") == "i'm with Initech these days"
    # A sentence typed with case says by its own capitals which words are names.
    assert case.recase("I'm allergic to peanuts.") == "I'm allergic to peanuts."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Truth be told, Pemberton Foods hired me a few days ago.", "works at Pemberton Foods"),
        ("Acme became my employer last month.", "works at Acme"),
    ],
)
def test_an_employer_named_as_the_subject(text: str, expected: str) -> None:
    assert _facts(text) == [("works at", expected, False)]
    assert _facts("My sister hired me.") == []
    assert _facts("Nobody hired me.") == []


def test_insincere_marks_a_mocking_sentence_and_what_a_bare_marker_mocks() -> None:
    assert insincere(["I love Mondays.", "Yeah right.", "I live in Leeds."]) == {0, 1}
    assert insincere(["I live in Leeds.", "Off to the Moon next spring, I’m joking."]) == {1}
    # A bare marker opening a message mocks nothing before it.
    assert insincere(["Yeah right.", "I live in Leeds."]) == {0}
    assert insincere(["I live in Leeds."]) == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Text messages is my usual choice.", ("prefers messag", "Text messages")),
        ("My default is bullet points.", ("prefers point", "bullet points")),
        ("Given the choice, I go for imperial units.", ("prefers unit", "imperial units")),
        ("I lean towards quiet indoor venues.", ("prefers venu", "quiet indoor venues")),
        ("I go for a run every morning.", ("habit go run", "go for a run every morning")),
        ("I moved from Lisbon to Porto.", ("lives in", "Porto")),
        ("My address changed to a street in Tallinn.", ("lives in", "Tallinn")),
        ("I joined Globex over the weekend.", ("works at", "Globex")),
        (
            "I've been dating someone new for a few weeks now.",
            ("relationship status", "dating someone new"),
        ),
        (
            "I'm on antibiotics for a chest infection.",
            ("health", "on antibiotics for a chest infection"),
        ),
        ("I'm still unpacking in Adelaide after the move.", ("lives in", "Adelaide")),
        ("I bought a transit pass for Tallinn, since that's home now.", ("lives in", "Tallinn")),
        (
            "Not sure I mentioned it, but the specialist I saw yesterday says I'm managing asthma.",
            ("health", "managing asthma"),
        ),
        (
            "The doctor I saw last week says I'm cleared after a full check-up.",
            ("health", "cleared after a full check-up"),
        ),
        ("It's easier for me to scan if you reply in short paragraphs.", None),
    ],
)
def test_choices_moves_and_statuses_said_in_everyday_words(
    text: str, expected: tuple[str, str] | None
) -> None:
    (statement,) = extract_statements([user(text)])
    if expected is None:  # kept, as a remark: how the speaker likes to be served is no condition
        assert statement.predicate.startswith(REMARK_PREFIX)
    else:
        assert (statement.predicate, statement.value) == expected


def test_everyday_words_typed_with_a_slip_are_read_as_meant() -> None:
    (statement,) = extract_statements([user("ym name is Kit, in case taht helps.")])
    assert (statement.predicate, statement.value) == ("name", "Kit")
    # A dropped and a doubled letter hide a move from the rules just as a swap does.
    (statement,) = extract_statements([user("I realy mvoed to Oslo.")])
    assert (statement.predicate, statement.value) == ("lives in", "Oslo")
    (statement,) = extract_statements([user("I livve in Bergen now.")])
    assert (statement.predicate, statement.value) == ("lives in", "Bergen")


def test_whom_the_speaker_saw_is_no_hearsay_but_a_friend_is_no_record_keeper() -> None:
    assert extract_statements([user("My friend I saw yesterday says I'm vegan.")]) == []
    assert extract_statements([user("I heard the doctor I saw says I am vegan.")]) == []


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("Yo, for the record, I signed the contract with Initech yesterday.", "Initech"),
        ("i signed the contract with Initech", "Initech"),
        ("I SIGNED THE CONTRACT WITH INITECH.", "INITECH"),
        ("Oh, and I signed the contract with Tessellate Bio this month, but that's a side note.",
         "Tessellate Bio"),
        ("I've just signed on with Hooli.", "Hooli"),
        ("I finally signed with Globex last week.", "Globex"),
        ("I signed my employment contract with Pied Piper on Friday.", "Pied Piper"),
        ("I have accepted the offer from Umbrella Corp.", "Umbrella Corp"),
        ("I accepted Acme's job offer.", "Acme"),
        ("I've put pen to paper with Globex Logistics.", "Globex Logistics"),
        ("i signed teh contract with Initech", "Initech"),  # a slip in an everyday word
    ],
)  # fmt: skip
def test_a_job_taken_by_its_paperwork_names_the_employer(text: str, employer: str) -> None:
    assert _facts(text) == [("works at", f"works at {employer}", False)]


@pytest.mark.parametrize(
    "text",
    [
        "My colleague signed the contract with Initech.",
        "A friend of mine accepted the offer from Initech.",
        "I almost signed the contract with Initech.",
        "I didn't sign the contract with Initech.",
        "I turned down the offer from Initech.",
        "I might sign the contract with Initech.",
        "If I sign the contract with Initech, I'll move.",
        "Should I sign the contract with Initech?",
        "I signed the contract with the landlord.",
        "I signed the contract for the Lisbon flat.",
        "I signed the lease on a flat in Porto.",
        "I signed up with Netflix.",
    ],
)
def test_paperwork_someone_else_signed_or_that_names_no_employer_changes_none(text: str) -> None:
    assert all(predicate != "works at" for predicate, _, _ in _facts(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My boss reads your summaries, so you should use a formal tone.",
         ("instruction use ton", "always use a formal tone")),
        ("Honestly, I read your answers on my phone, so you'd better write in British English.",
         ("instruction respond in", "always write in british english")),
        ("Oh, and my boss reads your summaries, so you should reply in short paragraphs, but "
         "that's a side note.", ("instruction respond in", "always reply in short paragraphs")),
        ("YOU SHOULD START EVERY ANSWER WITH A TL;DR.",
         ("instruction start answer", "always start every answer with a tl;dr")),
        ("You must keep answers short.", ("instruction keep answer", "always keep answers short")),
        ("You'd better avoid jargon in your replies.",
         ("instruction avoid jargon", "always avoid jargon in your replies")),
        ("you shouldn't use emojis in your replies",
         ("instruction use emojis", "never use emojis in your replies")),
        ("Please note that the default for me from now on is to reply in short paragraphs.",
         ("instruction respond in", "from now on, reply in short paragraphs")),
        ("My default going forward is bullet points.",
         ("instruction respond in", "from now on, reply in bullet points")),
        ("please note that the default for me from now on is to start every answer with a "
         "tl;dr. thx!", ("instruction start answer",
                         "from now on, start every answer with a tl;dr")),
        ("I read your answers on my phone, so you'd better write in British English lol cheers",
         ("instruction respond in", "always write in british english")),
        ("The default for me is to write in plain language.",
         ("instruction respond in", "always write in plain language")),
    ],
)  # fmt: skip
def test_advice_about_replies_and_a_default_for_the_speaker_are_standing_instructions(
    text: str, expected: tuple[str, str]
) -> None:
    (statement,) = extract_statements([user(text)])
    assert (statement.predicate, statement.value) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Should you use a formal tone?",
        "Should I use a formal tone?",
        "Maybe you should use a formal tone.",
        "If my boss reads it, you should use a formal tone.",
        "I think I should use a formal tone with my boss.",
        "You should try the new café on the corner.",
        "You should write a book.",
        "You should have seen the replies I got.",
        "you should see my emails from this week",
        "The default is 30 days.",
    ],
)
def test_questions_conditions_tips_and_defaults_of_settings_are_no_instructions(
    text: str,
) -> None:
    assert not any(s.predicate.startswith("instruction") for s in extract_statements([user(text)]))


@pytest.mark.parametrize(
    ("text", "predicate"),
    [("My default is bullet points.", "prefers point"),
     ("So, about that update: my default is text messages.", "prefers messag")],
)  # fmt: skip
def test_a_default_naming_a_thing_without_from_now_on_stays_a_preference(
    text: str, predicate: str
) -> None:
    (statement,) = extract_statements([user(text)])
    assert statement.predicate == predicate


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("For the record, it turns out I'm cleared after a full check-up, which explains a lot.",
         "cleared after a full check-up"),
        ("Turns out I'm recovering from a broken wrist.", "recovering from a broken wrist"),
        ("as it turns out, I'm dealing with chronic migraines", "dealing with chronic migraines"),
    ],
)  # fmt: skip
def test_news_told_as_what_turns_out_is_read_as_said(text: str, value: str) -> None:
    assert [(s.predicate, s.value) for s in extract_statements([user(text)])] == [("health", value)]


def test_what_turns_out_of_someone_else_is_not_the_speakers() -> None:
    assert extract_statements([user("Turns out my sister is vegan.")]) == []


def test_a_sentence_read_again_gives_what_reading_it_afresh_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The facts of a sentence and the casing it shows are kept per process; a memory that
    # meets the sentence again (in another session, in lower case) must read what it would
    # have read from scratch, and learn the same names as one that never met it.
    from drift_pipeline.memory.backends import _extract, _text

    sessions = [
        [user("I moved to Lisbon. I work at Acme Corp now.", "2027-03-01"), agent("Noted, Sam.")],
        [user("i moved to lisbon. Also, call me Sam from now on.", "2027-03-02")],
        [user("I moved to Lisbon. I work at Acme Corp now.", "2027-03-03")],
        # A question, hearsay and news told by whoever keeps the record: read alike each time.
        [user("Did I move to Lisbon? My doctor says I am recovering from pneumonia.")],
        [user("He told me I am vegan. My doctor says I am recovering from pneumonia.")],
    ]

    def read() -> tuple[list[list[Statement]], CaseModel]:
        case = CaseModel()
        return [extract_statements(session, case) for session in sessions], case

    _extract._sentence_facts.cache_clear()
    _text._casing.cache_clear()
    cached, cached_case = read()
    assert _extract._sentence_facts.cache_info().hits > 0  # the third session repeats the first
    assert _text._casing.cache_info().hits > 0
    with monkeypatch.context() as patch:  # no cache at all: every sentence read afresh
        patch.setattr(_extract, "_sentence_facts", _extract._sentence_facts.__wrapped__)
        patch.setattr(_text, "_casing", _text._casing.__wrapped__)
        patch.setattr(_text, "shows_case", _text.shows_case.__wrapped__)
        fresh, fresh_case = read()
    assert cached == fresh
    assert vars(cached_case) == vars(fresh_case)
    assert cached[2] and [s.value for s in cached[2]] == [s.value for s in cached[0]]
