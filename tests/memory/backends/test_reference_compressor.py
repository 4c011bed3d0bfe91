from __future__ import annotations

import pytest

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends import SUMMARY_CAP_TOKENS, ReferenceCompressor
from drift_pipeline.memory.backends.reference_compressor import (
    summarise_session,
)

from ._sessions import agent, ask, chat, run, store_all, user


def _long_session() -> list[Message]:
    messages: list[Message] = []
    for n in range(120):
        messages.append(
            user(f"I visited museum number {n} in district {n * 3} and saw painting {n * 11}.")
        )
        messages.append(agent(f"Museum {n} sounds lovely; district {n * 3} is famous for art."))
    return messages


def _stored(sessions: list[list[Message]], budget_tokens: int) -> ReferenceCompressor:
    """A compressor with ``budget_tokens`` of room that has stored ``sessions``."""
    backend = ReferenceCompressor(budget_tokens=budget_tokens)
    store_all(backend, sessions)
    return backend


def test_summary_never_exceeds_the_cap() -> None:
    summary = summarise_session(_long_session())
    assert summary.startswith("[2027-03-14]\n")
    assert tokens.count_tokens(summary) <= SUMMARY_CAP_TOKENS
    assert tokens.count_tokens(summary) > SUMMARY_CAP_TOKENS - 40  # the cap is actually used
    assert tokens.count_tokens(summarise_session(_long_session(), cap_tokens=50)) <= 50


def test_summary_prefers_first_person_statements_and_skips_assistant_and_questions() -> None:
    messages = [
        user("The weather has been strange lately."),
        user("Could you help with a recipe?"),
        user("I work at Acme Corp as an engineer."),
        agent("I love helping with recipes and engineering questions."),
    ]
    lines = summarise_session(messages).split("\n")
    # Chosen first-person first, written in the order they were said.
    assert lines == [
        "[2027-03-14]",
        "principal: The weather has been strange lately.",
        "principal: I work at Acme Corp as an engineer.",
    ]
    capped = summarise_session(messages, cap_tokens=24).split("\n")
    assert capped == ["[2027-03-14]", "principal: I work at Acme Corp as an engineer."]


def test_a_joke_or_a_mocking_sentence_is_left_out_of_the_summary() -> None:
    messages = [
        user("Home is Lyon these days."),
        user("Obviously I am off to live on the Moon next spring, I'm joking."),
        user("Yeah right, as if I would ever learn to ski."),
    ]
    assert summarise_session(messages) == "[2027-03-14]\nprincipal: Home is Lyon these days."


def test_repeated_content_adds_nothing_and_empty_sessions_store_nothing() -> None:
    messages = [user("I live in Leeds."), user("I live in Leeds."), user("Leeds, I live in.")]
    assert summarise_session(messages) == "[2027-03-14]\nprincipal: I live in Leeds."
    assert summarise_session([user("Is it?"), agent("Yes, I think so.")]) == ""


def test_the_extractive_summariser_is_charged_no_model_call() -> None:
    backend = ReferenceCompressor()
    sessions = [chat("2027-03-14", "I work at Acme Corp."), _long_session()]
    store_all(backend, sessions)
    # No model reads the transcript: what it stores and hands the reader is its whole cost.
    assert backend.token_counts().write == 0
    assert backend.token_counts().read == 0
    assert backend.storage_tokens() > 0
    ask(backend, "museum")
    assert backend.token_counts().read == 0


def test_retrieve_returns_relevant_dated_summaries_within_budget() -> None:
    sessions = [
        chat("2027-03-14", "I work at Acme Corp as an engineer."),
        chat("2027-04-01", "I adopted a greyhound called Biscuit."),
        chat("2027-05-09", "I started a new job at Globex, still engineering."),
    ]
    backend = ReferenceCompressor(budget_tokens=45)
    store_all(backend, sessions)
    text = ask(backend, "Where does the principal work?")
    # "a new job" is indexed under work, so both work summaries are taken; they are written
    # oldest first, so the reader meets the latest telling last.
    assert text.index("Acme Corp") < text.index("Globex")
    assert "Biscuit" not in text
    assert tokens.count_tokens(text) <= 45
    assert ask(backend, "greyhound").startswith("[2027-04-01]\nprincipal: I adopted a greyhound")
    snapshot = backend.snapshot()
    assert snapshot.index("Acme") < snapshot.index("Biscuit") < snapshot.index("Globex")
    # With room for one, the newest telling about work is the one taken.
    narrow = ReferenceCompressor(budget_tokens=30)
    store_all(narrow, sessions)
    assert ask(narrow, "Where does the principal work?") == (
        "[2027-05-09]\nprincipal: I started a new job at Globex, still engineering."
    )


def test_summaries_matching_no_query_word_fill_the_budget_newest_first() -> None:
    sessions = [
        chat("2027-03-14", "I adopted a greyhound called Biscuit."),
        chat("2027-04-01", "The movers unloaded the last boxes in Porto."),
        chat("2027-05-09", "I took up the cello."),
    ]
    backend = _stored(sessions, 45)
    text = ask(backend, "greyhound")
    assert text.split("\n")[0] == "[2027-03-14]"
    # What is left goes to the newest summary that shares no word with the question.
    assert "cello" in text and "Porto" not in text
    assert ask(backend, "submarines").endswith("[2027-05-09]\nprincipal: I took up the cello.")
    narrow = ask(_stored(sessions, 30), "submarines")
    assert narrow == "[2027-05-09]\nprincipal: I took up the cello."
    assert ask(backend, "submarines", entity="stranger") == ""


def test_summaries_are_scoped_to_their_session_speakers() -> None:
    backend = ReferenceCompressor()
    run(backend.store("a", chat("2027-03-14", "My locker code is 4471.", helper="assistant_a")))
    run(backend.store("b", chat("2027-03-15", "My locker is blue.", helper="assistant_b")))
    assert "4471" in ask(backend, "locker code", entity="assistant_a")
    seen_by_b = ask(backend, "locker code", entity="assistant_b")
    assert "blue" in seen_by_b
    assert "4471" not in seen_by_b


def test_the_newest_summary_about_the_question_comes_before_older_better_matches() -> None:
    sessions = [
        chat("2027-03-14", "I work at Acme Corp; work at Acme is steady work."),
        chat("2027-04-01", "I adopted a greyhound called Biscuit."),
        chat("2027-05-09", "I started at Globex this month."),
    ]
    backend = _stored(sessions, 20)
    # Room for one summary: the latest telling about work, not the older one that says "work"
    # three times.
    assert ask(backend, "Where does the principal work?") == (
        "[2027-05-09]\nprincipal: I started at Globex this month."
    )
    # A summary scoring under half the best is no telling of the asked topic: it comes later.
    roomy = _stored(sessions, 200)
    text = ask(roomy, "Where does the principal work? Acme Corp steady")
    assert text.index("Acme") < text.index("Globex")


def test_an_assistant_question_the_next_turn_confirms_stays_beside_it() -> None:
    messages = [
        agent("Shall I address you as Captain from now on?"),
        user("Yes, that's right: please do."),
        agent("Would you like a summary?"),
        user("I moved to Lyon in May."),
    ]
    assert summarise_session(messages).split("\n") == [
        "[2027-03-14]",
        "assistant: Shall I address you as Captain from now on?",
        "principal: Yes, that's right: please do.",
        "principal: I moved to Lyon in May.",
    ]


def test_the_last_address_of_the_listener_by_name_is_kept() -> None:
    messages = [
        agent("Hi Sam! What can I do for you?"),
        user("Please book the dentist for Friday."),
        agent("Done. Anything else, Sam?"),
        agent("Of course, Robin."),
        user("Thanks, see you."),
        agent("The museum opens at nine, so go early and skip the queue on the west side."),
    ]
    lines = summarise_session(messages).split("\n")
    # Only the last address is kept (a question naming them is no address); assistants' other
    # sentences are left out as before.
    assert lines == [
        "[2027-03-14]",
        "principal: Please book the dentist for Friday.",
        "assistant: Of course, Robin.",
        "principal: Thanks, see you.",
    ]
    # A long sentence merely naming someone, or a greeting to nobody, is no address.
    plain = [agent("Hello there!"), agent("I spoke to the venue and they can fit you in, Sam.")]
    assert summarise_session([*plain, user("I live in Lyon.")]).split("\n")[1:] == [
        "principal: I live in Lyon."
    ]


def test_a_session_addressing_the_listener_is_found_by_a_question_about_their_name() -> None:
    sessions = [
        chat("2027-03-14", "Please call me Rae."),
        [agent("Sure, Robin.", "2027-04-01"), user("What time is it in Tokyo?", "2027-04-01")],
    ]
    # With room for one line, the newest naming is taken, and the session's other line is not.
    text = ask(_stored(sessions, 20), "What does the principal want to be called?")
    assert text == "[2027-04-01]\nassistant: Sure, Robin."


def test_a_telling_on_the_asked_topic_comes_before_newer_passing_mentions() -> None:
    sessions = [
        chat("2027-03-14", "We moved to Kyoto last month."),
        chat("2027-04-01", "My sister signed a lease in Wellington."),
        chat("2027-05-09", "If we ever moved, Lisbon would be top of the list."),
    ]
    backend = _stored(sessions, 20)
    # Room for one summary: the only session stating where the principal lives, although two
    # newer ones speak of homes and moves.
    assert ask(backend, "Which city does the principal live in now?") == (
        "[2027-03-14]\nprincipal: We moved to Kyoto last month."
    )
    # Room for two: the daydream of a move is closer to the question than the sister's lease.
    text = ask(_stored(sessions, 40), "Which city does the principal live in now?")
    assert "Kyoto" in text and "Lisbon" in text and "Wellington" not in text


def test_a_change_of_a_value_stated_before_is_a_telling_on_its_topic() -> None:
    sessions = [
        chat("2027-03-14", "We moved to Galway last month."),
        chat("2027-04-01", "I swapped Galway for Cork."),
        chat("2027-05-09", "My sister signed a lease in Wellington."),
        chat("2027-06-02", "If we ever moved, Lisbon would be top of the list."),
    ]
    backend = _stored(sessions, 40)
    # "Galway" was the principal's home, so swapping it is a telling about where they live,
    # ahead of the newer sessions that only speak of homes.
    text = ask(backend, "Which city does the principal live in now?")
    assert "principal: I swapped Galway for Cork." in text
    assert "Wellington" not in text and "Lisbon" not in text
    assert ask(_stored(sessions, 30), "Which city does the principal live in now?") == (
        "[2027-04-01]\nprincipal: I swapped Galway for Cork."
    )
    # The same words from someone who never said Galway was their home are no such telling.
    other = _stored(
        [sessions[0], chat("2027-04-01", "I swapped Galway for Cork.", speaker="x")], 40
    )
    assert ask(other, "Which city does the principal live in now?").startswith("[2027-03-14]")


def test_what_a_stated_value_gave_way_to_is_known_for_the_next_change() -> None:
    backend = ReferenceCompressor(budget_tokens=30)
    store_all(
        backend,
        [
            chat("2027-03-14", "We moved to Galway last month."),
            chat("2027-04-01", "I swapped Galway for Cork."),
            chat("2027-05-09", "I swapped Cork for Oslo."),
            chat("2027-06-02", "My sister signed a lease in Wellington."),
            chat("2027-07-01", "If we ever moved, Lisbon would be top of the list."),
        ],
    )
    text = ask(backend, "Which city does the principal live in now?")
    assert text == "[2027-05-09]\nprincipal: I swapped Cork for Oslo."


def test_a_statement_run_into_a_question_is_kept_in_the_summary() -> None:
    summary = summarise_session(
        [user("Ok so I'm based in Tucson from now on How do I share a calendar?")]
    )
    assert summary == "[2027-03-14]\nprincipal: Ok so I'm based in Tucson from now on"


def test_a_question_is_read_by_its_topic_not_by_the_name_of_whom_it_asks_about() -> None:
    sessions = [
        [agent("Hi Kit!", "2027-03-01"), user("I work at Acme Corp.", "2027-03-01")],
        chat("2027-03-14", "I served my notice at Acme and moved over to Globex at work."),
        chat("2027-04-01", "Help me reply to Kit's email about the budget, Kit is my cousin."),
        chat("2027-04-02", "Draft a note to Kit, another Kit, about the picnic."),
    ]
    backend = _stored(sessions, 60)
    # "Kit" is rarer than "work" in the summaries; read as the topic, it would bring the two
    # sessions that merely mention someone called Kit first and leave no room for the news.
    text = ask(backend, "Where does Kit work now, when it comes to employers?")
    assert "Globex" in text
    assert "picnic" not in text


def test_among_tellings_of_a_topic_the_one_about_the_question_leads() -> None:
    sessions = [
        chat("2027-03-14", "I prefer metric units."),
        chat("2027-04-01", "I prefer phone calls."),
        chat("2027-05-09", "I prefer window seats."),
        chat("2027-06-02", "Convert metric units to imperial units and back to metric units."),
    ]
    backend = _stored(sessions, 20)
    # Every session but the last tells a preference; the one whose fact shares the question's
    # word leads, although the others are newer and the last shares more words.
    assert ask(backend, "What does the principal prefer when it comes to units?") == (
        "[2027-03-14]\nprincipal: I prefer metric units."
    )


def test_a_telling_leads_whatever_other_words_of_the_question_chatter_shares() -> None:
    sessions = [
        chat("2027-03-14", "You can keep calling me Jo."),
        chat("2027-03-20", "I baked bread."),
        chat("2027-03-28", "I watered the ferns."),
        chat("2027-04-01", "Our school principal wants a new bell."),
    ]
    backend = _stored(sessions, 20)
    # The newer session shares three of the question's words, the telling one.
    assert ask(backend, "What does the principal want to be called at school?") == (
        "[2027-03-14]\nprincipal: You can keep calling me Jo."
    )


def test_read_takes_the_lines_about_the_question_not_whole_summaries() -> None:
    sessions = [
        chat(
            "2027-03-14",
            "I baked sourdough on Sunday.",
            "The movers unloaded the last boxes in Porto, so we live in Porto now.",
            "My nephew starts school in the autumn.",
        ),
        chat("2027-04-01", "I watered the ferns.", "I repainted the hallway green."),
    ]
    text = ask(_stored(sessions, 30), "Which city does the principal live in now?")
    # The fact-bearing line comes with its session's date; the rest of that summary stays out.
    assert text == (
        "[2027-03-14]\n"
        "principal: The movers unloaded the last boxes in Porto, so we live in Porto now."
    )
    # With room for everything, each summary's date line is written once, lines in said order.
    whole = ask(_stored(sessions, 400), "Which city does the principal live in now?")
    assert whole.count("[2027-03-14]") == 1
    assert whole.index("sourdough") < whole.index("Porto") < whole.index("nephew")
    assert whole.index("nephew") < whole.index("[2027-04-01]") < whole.index("ferns")


def test_a_confirmed_question_is_read_with_its_confirmation() -> None:
    session = [
        agent("Should I use flowing prose rather than bullet points from here on?"),
        user("Correct."),
        user("I fed the cat."),
        user("The plumber comes on Tuesday about the leaking tap."),
    ]
    text = ask(_stored([session], 30), "How does the principal like information laid out?")
    # "Correct." says nothing alone: the question it confirms is taken with it, and the words
    # of the kind of preference its values belong to ("laid out") find it.
    assert text == (
        "[2027-03-14]\n"
        "assistant: Should I use flowing prose rather than bullet points from here on?\n"
        "principal: Correct."
    )


def test_storage_is_the_summaries_alone_and_much_less_than_the_transcripts() -> None:
    backend = ReferenceCompressor()
    sessions = [_long_session(), chat("2027-04-01", "I work at Acme Corp.", "I fed the cat.")]
    store_all(backend, sessions)
    snapshot = backend.snapshot()
    # What is kept is one capped summary per session, counted once however it is read.
    assert snapshot == "\n".join(summarise_session(messages) for messages in sessions)
    assert backend.storage_tokens() == tokens.count_tokens(snapshot)
    assert backend.storage_tokens() <= len(sessions) * SUMMARY_CAP_TOKENS
    transcript = sum(tokens.count_tokens(m["content"]) for s in sessions for m in s)
    assert backend.storage_tokens() < transcript / 2


def test_a_session_summarised_again_is_summarised_as_it_says_now() -> None:
    # A shared session is summarised once for all the memories it enters; any change to what
    # the summary reads (a word, a speaker, a date, the cap) is a new summary.
    from drift_pipeline.memory.backends.reference_compressor import _summarise

    messages = [user("I work at Acme Corp as an engineer."), user("I live in Leeds.")]
    first = summarise_session(messages)
    assert summarise_session(list(messages)) == first == _summarise(messages, SUMMARY_CAP_TOKENS)
    changed = [
        [user("I work at Initech as an engineer."), messages[1]],
        [user("I work at Acme Corp as an engineer.", speaker="ana"), messages[1]],
        [user("I work at Acme Corp as an engineer.", "2027-04-01"), messages[1]],
    ]
    for other in changed:
        assert summarise_session(other) == _summarise(other, SUMMARY_CAP_TOKENS) != first
    assert summarise_session(messages, cap_tokens=12) == _summarise(messages, 12) != first


def test_a_session_shared_by_several_memories_is_summarised_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from drift_pipeline.memory.backends import reference_compressor as module

    made: list[int] = []
    real = module._summarise

    def counted(messages: list[Message], cap_tokens: int) -> str:
        made.append(cap_tokens)
        return real(messages, cap_tokens)

    monkeypatch.setattr(module, "_summarise", counted)
    module._SUMMARIES.clear()
    session = [user("I work at Acme Corp as an engineer."), user("I live in Leeds.")]
    for _ in range(3):  # each memory the session enters asks for its summary
        assert module.summarise_session(list(session)) == real(session, SUMMARY_CAP_TOKENS)
    assert made == [SUMMARY_CAP_TOKENS]
