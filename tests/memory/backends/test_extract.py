"""The rule-based extractor shared by ``fact_store`` and ``temporal_graph``.

Every sentence here is hand-written for these tests (names, places and phrasings are not taken
from the world generator's templates or value pools): the rules must be ordinary English.
"""

from __future__ import annotations

import pytest

from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._extract import (
    Operation,
    QueryFocus,
    Statement,
    decide,
    extract_statements,
    off_topic_views,
    predicate_family,
    query_families,
    values_match,
)

from ._sessions import agent, user


def _facts(text: str) -> list[tuple[str, str, bool]]:
    return [
        (s.predicate, s.text or s.value, s.retraction)
        for s in extract_statements([user(text, "2027-03-14")])
    ]


def _texts(text: str) -> list[str]:
    return [s.text for s in extract_statements([user(text)]) if not s.retraction]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I work at Acme Corp.", [("works at", "works at Acme Corp", False)]),
        ("I just started at Globex last week!", [("works at", "works at Globex", False)]),
        ("I moved to Lisbon last month with my partner.", [("lives in", "lives in Lisbon", False)]),
        ("So anyway, I live in New York City.", [("lives in", "lives in New York City", False)]),
        ("Please call me Dr. Smith from now on.", [("name", "goes by Dr. Smith", False)]),
        ("I'm vegetarian.", [("constraint vegetarian", "constraint: is vegetarian", False)]),
        ("I'm no longer vegetarian.", [
            ("constraint vegetarian", "constraint: is vegetarian", True),
        ]),
        ("I'm not vegetarian anymore.", [
            ("constraint vegetarian", "constraint: is vegetarian", True),
        ]),
        ("I'd rather fly economy.", [("prefers economy", "prefers fly economy", False)]),
        ("I work as a nurse.", [("occupation", "works as a nurse", False)]),
        ("I'm allergic to peanuts.", [
            ("constraint allergic peanut", "constraint: is allergic to peanuts", False),
        ]),
        ("I don't work at Acme anymore.", [("works at", "works at Acme", True)]),
        ("I stopped learning Spanish.", [("habit spanish", "learning Spanish", True)]),
        ("I'm learning Spanish.", [("habit spanish", "habit: learning Spanish", False)]),
        ("I've been running every morning.", [
            ("habit run", "habit: running every morning", False),
        ]),
        ("I think remote work is overrated.", [
            ("opinion remot work", "thinks remote work is overrated", False),
        ]),
        ("I hate cilantro.", [("opinion cilantro", "hates cilantro", False)]),
        ("I can't eat gluten.", [
            ("constraint eat gluten", "constraint: cannot eat gluten", False),
        ]),
        ("My favourite colour is teal.", [("favourite colour", "favourite colour is teal", False)]),
        ("I'm 34.", [("age", "is 34 years old", False)]),
        ("I got married!", [
            ("relationship status", "relationship status: married", False),
        ]),
        ("I work at initech", []),  # no capital: not recognisably a name
        # ...unless the whole message is typed in lower case
        ("i work at initech now", [("works at", "works at Initech", False)]),
        ("i live in porto, it's lovely", [("lives in", "lives in Porto", False)]),
        ("I work for the BBC now and I live in London.", [
            ("works at", "works at the BBC", False),
            ("lives in", "lives in London", False),
        ]),
        ("Please always reply in Spanish.", [
            ("instruction replies", "standing instruction: always reply in Spanish", False),
        ]),
        ("From now on, keep answers short.", [
            ("instruction replies", "standing instruction: keep answers short", False),
        ]),
        ("Stop using emojis please.", [
            ("instruction replies", "standing instruction: stop using emojis", False),
        ]),
    ],
)  # fmt: skip
def test_first_person_statements_become_slot_facts(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # employer: many ways of saying where one works now
        ("Quick update: I've accepted a position with Brightline Labs.",
         "works at Brightline Labs"),
        ("Today was my first day at Quantafold, and the coffee is terrible.",
         "works at Quantafold"),
        ("Second week at Marlow Freight done, still finding the toilets.",
         "works at Marlow Freight"),
        ("For my CV: I'm with Harbor & Finch now, not Pelican Media.", "works at Harbor & Finch"),
        ("The recruiter from Ostrander Group emailed me my contract this morning.",
         "works at Ostrander Group"),
        ("My boss at Kinetica wants the slides by noon.", "works at Kinetica"),
        ("Sorting out the farewell drinks; I'm joining Pellucid in March.", "works at Pellucid"),
        ("Job stuff changed again. It's Norrland Freight now.", "works at Norrland Freight"),
        ("Redwick Software offered me a job I could not refuse.", "works at Redwick Software"),
        # home
        ("We finally moved into our new apartment in Porto.", "lives in Porto"),
        ("The removal van dropped everything off in Galway at midnight.", "lives in Galway"),
        ("After the move from Leeds to Bristol I sleep much better.", "lives in Bristol"),
        ("Set my default airport to Tromsø, please. That's home now.", "lives in Tromsø"),
        ("I love the markets here in Valencia since we moved.", "lives in Valencia"),
        ("We moved, so the town we call home is Ludlow now.", "lives in Ludlow"),
        # relationship
        ("Big news: I'm engaged to Priyanka!", "relationship status: engaged (to Priyanka)"),
        ("Heads up, I'm in a committed relationship now.",
         "relationship status: in a committed relationship"),
        ("We broke up last month.", "relationship status: single"),
        # health: one current situation
        ("I'm recovering from a torn ligament, so no running for now.",
         "health: recovering from a torn ligament"),
        ("I've been diagnosed with coeliac disease.", "health: diagnosed with coeliac disease"),
        ("Got my scan back: I'm dealing with a slipped disc.",
         "health: dealing with a slipped disc"),
        ("Good news, I'm fully recovered after the operation.",
         "health: fully recovered after the operation"),
        # views keyed by topic, with the topic named once
        ("I've changed my mind about nuclear energy: I'm cautiously in favour now.",
         "view on nuclear energy: cautiously in favour"),
        ("On self-driving cars, I'm still sceptical.", "view on self-driving cars: sceptical"),
        ("I'm strongly opposed to the new bypass.", "view on the new bypass: strongly opposed"),
        ("That podcast about basic income got to me. I'm a convert.",
         "view on basic income: a convert"),
        # constraints
        ("I'm pescatarian.", "constraint: is pescatarian"),
        ("Shellfish is a no-go for me.", "constraint: Shellfish is a no-go"),
        ("No spicy food for me, please.", "constraint: no spicy food"),
        ("I can't do calls after 6pm.", "constraint: cannot do calls after 6pm"),
        ("I have a mild allergy to cats.", "constraint: has a mild allergy to cats"),
        ("For the venue: I rely on a walking stick.", "constraint: uses a walking stick"),
        # habits
        ("Morning pages are slowly becoming part of my routine.", "habit: Morning pages"),
        ("Day ten of learning the banjo and I'm hooked.", "habit: learning the banjo"),
        ("My new habit of stretching before bed is going well.", "habit: stretching before bed"),
        ("Skipped my evening walk yesterday and felt grumpy.", "habit: evening walk"),
        # preferences, keyed by what they are about
        ("Window seats suit me best.", "prefers Window seats"),
        ("As usual, oat milk please.", "prefers oat milk"),
        ("Can we stick with video calls? That works better for me.", "prefers video calls"),
        # standing instructions and working preferences
        ("Going forward, please answer in Spanish.", "standing instruction: answer in Spanish"),
        ("New rule: no emojis in your replies.", "standing instruction: no emojis in your replies"),
        ("Could you keep answers under 100 words from now on?",
         "standing instruction: keep answers under 100 words"),
        ("It helps a lot when you show your working.", "likes you to show your working"),
        ("I appreciate it when you flag risks up front.", "likes you to flag risks up front"),
        ("Please double-check the dates, like last time.", "likes you to double-check the dates"),
        ("Double-check every date; that's how I like it.", "likes you to Double-check every date"),
        # finished tasks
        ("The visa application is finally submitted.", "completed task: The visa application"),
        ("I've finished my thesis draft!", "completed task: my thesis draft"),
        ("Please mark the kitchen quote as done.", "completed task: the kitchen quote"),
        ("Lovely, that wraps up the seating chart.", "completed task: the seating chart"),
        # names
        ("I'd like to be called Jo.", "goes by Jo"),
        ("It's Kit, not Christopher, when you address me.", "goes by Kit"),
        ("Oh, I prefer Bex. Please use that from now on.", "goes by Bex"),
    ],
)  # fmt: skip
def test_general_english_state_statements(text: str, expected: str) -> None:
    assert expected in _texts(text)


def test_employer_changes_replace_and_withdraw_the_old_one() -> None:
    assert _facts("I handed in my notice at Mapleton; Kestrel Dynamics hired me.") == [
        ("works at", "Mapleton", True),
        ("works at", "works at Kestrel Dynamics", False),
    ]
    assert _facts("Tomorrow is my last day at Mapleton.") == [("works at", "Mapleton", True)]
    assert _facts("We accepted the offer from Lindqvist, so my last day at Mapleton is May 2.") == [
        ("works at", "works at Lindqvist", False),
        ("works at", "Mapleton", True),
    ]


def test_a_view_needs_its_topic_and_later_views_share_the_key() -> None:
    assert _facts("I'm sceptical.") == []
    first = _facts("I changed my mind about carbon taxes. I'm undecided.")
    second = _facts("On carbon taxes I'm firmly in favour these days.")
    assert first == [("opinion carbon tax", "view on carbon taxes: undecided", False)]
    assert second == [("opinion carbon tax", "view on carbon taxes: firmly in favour", False)]


def test_keys_group_what_a_later_value_replaces() -> None:
    # Preferences about the same thing share a key, so the newer one replaces the older one.
    assert _facts("I prefer email.")[0][0] == _facts("Texts suit me better.")[0][0]
    assert _facts("I prefer short answers.")[0][0] == _facts("I prefer long answers.")[0][0]
    # Habits and constraints are keyed by their content: several hold at once.
    assert _facts("I'm vegan.")[0][0] != _facts("I'm allergic to sesame.")[0][0]
    assert (
        _facts("Taking cold baths is becoming a habit.")[0][0]
        == _facts("Skipped cold baths yesterday and felt awful.")[0][0]
    )
    # Every rule about the form of replies governs the same thing.
    assert (
        _facts("From now on, reply in French.")[0][0]
        == _facts("New rule for your answers: use a casual tone.")[0][0]
        == "instruction replies"
    )


@pytest.mark.parametrize(
    "text",
    [
        # questions
        "Do you think I should move to Berlin?",
        "I work at Acme, right?",
        "Is Valencia nice in winter?",
        "Do vegans find it hard to travel?",
        # hypotheticals and conditionals
        "If I moved to Berlin I'd be happier.",
        "Maybe I'll start running someday.",
        "I might join Globex.",
        "I would live in Paris if I could.",
        "Imagine I worked at NASA.",
        "What if I became vegan.",
        "I'm thinking about moving to Berlin.",
        "I could be persuaded on carbon taxes if the costs fell.",
        "Someday I want to live in Kyoto.",
        # third parties
        "My sister works at Google.",
        "My best friend is vegan.",
        "She lives in Paris.",
        "He just moved to Berlin.",
        "They work at Initech.",
        "My uncle is sceptical about self-driving cars.",
        "My neighbour's new habit of singing is driving me mad.",
        "My flatmate got engaged last week.",
        "My cousin prefers texts; so annoying.",
        # sarcasm
        "I love Mondays. Yeah right.",
        "I totally love working late 🙄",
        "Oh sure, I live in a palace /s",
        "As if I'd ever work at Globex.",
        "Oh sure, I'm moving to the Moon next week.",
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
        "I usually don't mind the rain.",
        "I'm a huge fan of your summaries.",
        "I always forget where I put my keys.",
        "I'm working on a presentation for Monday.",
        "My mum says hi.",
        "Day two of the conference.",
        "Finally finished that novel about whales.",
        "I can't find my charger.",
        "One thing I never told you: the cat hates me.",
        "I'm hooked.",
        # routine requests
        "Can you help me plan Tuesday? I've got 318 things to fit in.",
        "Pack list for a 5-day work trip, please.",
        "I've got two calls to make before lunch.",
        "I have 3 errands to run today.",
        "Please proofread this.",
        "Can you factor that in from now on?",
        "Book the same hotel as last time.",
        "Convert 12 miles to kilometres for me.",
        "I prefer the second option you gave.",
        "Please send it to Ana, like last time.",
        "No problem for me, whatever works.",
        "I'm learning a lot from this book.",
        "I started the washing machine.",
        "I'm at the airport now, flight's delayed.",
        "I'm in Berlin for a conference this week.",
        "Remember to buy milk.",
        "From now on I'll try to sleep earlier.",
        "The meeting is done, finally.",
        "Let's go with the blue one.",
        "I'm with a client until 4.",
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
        ("instruction use unit", "standing instruction: use metric units", False)
    ]
    assert _facts("You should always book aisle seats.") == [
        ("instruction book seat", "standing instruction: always book aisle seats", False)
    ]


@pytest.mark.parametrize(
    ("query", "family"),
    [
        ("Where does Ines work now?", "work"),
        ("Which city does Ines live in these days?", "home"),
        ("What is Ines's current view on carbon taxes?", "opinion"),
        ("Which constraints should you respect when planning for Ines?", "constraint"),
        ("What standing instruction has Ines given about how you format replies?", "instruction"),
        ("What does Ines want to be called?", "name"),
        ("Which habits has Ines built up?", "habit"),
        ("How does Ines like you to work?", "workflow"),
        ("What is the state of Ines's romantic relationship?", "relationship"),
        ("What is Ines's current health situation?", "health"),
        ("Which tasks have you completed for Ines?", "completed"),
        ("Book a team dinner that Ines will attend, respecting their constraints.", "constraint"),
    ],
)
def test_questions_name_the_families_they_ask_about(query: str, family: str) -> None:
    assert family in query_families(query)


def test_fact_families_and_off_topic_views() -> None:
    assert predicate_family("works at") == "work"
    assert predicate_family("opinion carbon tax") == "opinion"
    assert predicate_family("constraint vegan") == "constraint"
    focus = QueryFocus.of("What is Ines's view on carbon taxes?")
    keys = ["opinion carbon tax", "opinion remot work", "works at"]
    assert off_topic_views(keys, focus.terms) == {"opinion remot work"}
    # A question that names no known topic leaves every view in.
    assert off_topic_views(keys, QueryFocus.of("What are Ines's views?").terms) == frozenset()
