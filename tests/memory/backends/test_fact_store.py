from __future__ import annotations

import itertools

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import TokenCounts
from drift_pipeline.memory.backends import FactStoreBackend
from drift_pipeline.memory.backends._extract import Operation

from ._sessions import NOISE, agent, ask, chat, random_history, store_all, store_counting


def test_a_new_value_updates_the_slot() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I work at Acme Corp.", "I live in Leeds."),
            chat("2027-05-02", "Big news: I just started at Globex!"),
        ],
    )
    assert backend.snapshot() == (
        "[2027-03-14] principal: lives in Leeds\n[2027-05-02] principal: works at Globex"
    )
    answer = ask(backend, "Where does the principal work now?")
    # Lines come oldest first, so the last one about a slot is its latest telling.
    assert answer.split("\n") == [
        "[2027-03-14] principal: lives in Leeds",
        "[2027-05-02] principal: works at Globex",
    ]
    assert "Acme" not in answer
    assert backend.operation_counts[Operation.UPDATE] == 1
    assert backend.token_counts() == TokenCounts()


def test_repeating_a_fact_is_a_noop_that_keeps_its_date() -> None:
    backend = FactStoreBackend()
    store_all(
        backend, [chat("2027-03-14", "I live in Leeds."), chat("2027-04-01", "I live in Leeds.")]
    )
    assert backend.snapshot() == "[2027-03-14] principal: lives in Leeds"
    assert backend.operation_counts[Operation.NOOP] == 1


def test_no_longer_deletes() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I'm vegetarian.", "I work at Acme Corp."),
            chat("2027-04-01", "I'm no longer vegetarian."),
            chat("2027-04-05", "I left Initech."),  # not the stored employer: nothing happens
        ],
    )
    assert backend.snapshot() == "[2027-03-14] principal: works at Acme Corp"
    assert "vegetarian" not in ask(backend, "Is the principal vegetarian? diet food")
    assert backend.operation_counts[Operation.DELETE] == 1


def test_questions_hypotheticals_third_parties_and_sarcasm_are_not_stored() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat(
                "2027-03-14",
                "Should I move to Berlin?",
                "If I moved to Berlin I'd learn German.",
                "My sister works at Google.",
                "I love Mondays. Yeah right.",
                "He said I'm vegan.",
            )
        ],
    )
    assert backend.snapshot() == ""
    assert ask(backend, "Berlin Google Mondays vegan") == ""


def test_noise_sessions_add_nothing() -> None:
    backend = FactStoreBackend()
    store_all(backend, [chat("2027-03-01", "I live in Leeds.")])
    before = backend.snapshot()
    store_all(backend, NOISE)
    assert backend.snapshot() == before


def test_standing_instructions_are_kept_by_what_they_govern() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "Please always reply in Spanish.", "Never book red-eye flights."),
            chat("2027-04-01", "From now on, respond in English."),
        ],
    )
    snapshot = backend.snapshot().split("\n")
    assert snapshot == [
        "[2027-03-14] principal: standing instruction: never book red-eye flights",
        "[2027-04-01] principal: standing instruction: from now on, respond in English",
    ]
    assert ask(backend, "Which language should replies be in?").endswith(
        "[2027-04-01] principal: standing instruction: from now on, respond in English"
    )


def test_retrieve_ranks_by_overlap_then_recency_within_budget() -> None:
    backend = FactStoreBackend(budget_tokens=25)
    store_all(
        backend,
        [
            chat("2027-03-14", "I have a dog named Rex.", "I live in Leeds."),
            chat("2027-03-20", "I hate cilantro.", "I'm allergic to peanuts."),
        ],
    )
    text = ask(backend, "Tell me about the dog")
    assert text.split("\n")[0] == "[2027-03-14] principal: has a dog named Rex"
    assert tokens.count_tokens(text) <= 25
    # With no overlap the most recently set facts come first.
    assert ask(backend, "zzz").split("\n")[0].startswith("[2027-03-20]")


def test_facts_are_scoped_to_their_session_speakers() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I live in Leeds.", helper="assistant_a"),
            chat("2027-03-15", "I'm allergic to peanuts.", helper="assistant_b"),
        ],
    )
    assert "Leeds" not in ask(backend, "Where does the principal live?", entity="assistant_b")
    assert "peanuts" in ask(backend, "allergies", entity="assistant_b")
    assert "Leeds" in ask(backend, "Where does the principal live?", entity="assistant_a")
    # Repeating a fact in front of someone new shares it with them.
    store_all(backend, [chat("2027-03-16", "I live in Leeds.", helper="assistant_b")])
    assert "Leeds" in ask(backend, "Where does the principal live?", entity="assistant_b")


def test_an_update_heard_by_one_entity_does_not_reach_another() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I live in Leeds.", helper="assistant_a"),
            chat("2027-04-01", "I moved to York.", helper="assistant_b"),
        ],
    )
    question = "Where does the principal live?"
    assert ask(backend, question, entity="assistant_a") == "[2027-03-14] principal: lives in Leeds"
    assert ask(backend, question, entity="assistant_b") == "[2027-04-01] principal: lives in York"
    assert ask(backend, question, entity="principal") == "[2027-04-01] principal: lives in York"
    # Once assistant_a hears the move too, Leeds is held by nobody and is gone.
    store_all(backend, [chat("2027-04-09", "I live in York.", helper="assistant_a")])
    assert ask(backend, question, entity="assistant_a") == "[2027-04-01] principal: lives in York"
    assert backend.snapshot() == "[2027-04-01] principal: lives in York"


def test_a_stance_told_with_its_topic_apart_replaces_the_old_one() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I think remote work is overrated.", "I like tidal energy."),
            chat("2027-04-01", "When it comes to nuclear power, I'm in favour."),
            chat("2027-05-02", "Anyway, on remote work, count me as undecided now."),
        ],
    )
    answer = ask(backend, "What is the principal's view on remote work?")
    assert answer.split("\n")[-1] == "[2027-05-02] principal: stance on remote work: undecided"
    assert "overrated" not in backend.snapshot()
    # A stance on another topic is a slot of its own: nothing replaced it.
    assert "stance on nuclear power: in favour" in backend.snapshot()
    assert backend.operation_counts[Operation.UPDATE] == 1


def test_news_of_a_move_or_a_new_team_supersedes_home_and_employer() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I work at Acme Corp.", "I live in Leeds."),
            chat("2027-05-02", "If I'm honest, the movers unloaded the last boxes in Porto."),
            chat("2027-06-09", "My new team at Globex took me out for lunch on my first day."),
        ],
    )
    assert backend.snapshot() == (
        "[2027-05-02] principal: lives in Porto\n[2027-06-09] principal: works at Globex"
    )


def test_a_restated_preference_is_dated_by_its_latest_mention_a_home_by_its_first() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I live in Leeds.", "I prefer phone calls."),
            chat("2027-04-01", "I'd pick text messages every time."),
            chat("2027-05-09", "I live in Leeds.", "I prefer phone calls."),
        ],
    )
    assert backend.snapshot().splitlines() == [
        "[2027-03-14] principal: lives in Leeds",
        "[2027-05-09] principal: prefers phone calls",
        "[2027-04-01] principal: prefers text messages",
    ]
    # The newer line now says phone calls: a reader taking the latest dated assertion sees it.
    context = ask(backend, "How does the principal like to be contacted?")
    assert "[2027-05-09] principal: prefers phone calls" in context


def test_lines_are_returned_oldest_first_in_the_order_they_were_said() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I work at Acme Corp.", "I live in Leeds."),
            chat("2027-04-01", "I'm vegetarian."),
        ],
    )
    # "live" ranks the home first, but the reader gets the lines in the order they were said.
    assert ask(backend, "Where does the principal live?").split("\n") == [
        "[2027-03-14] principal: works at Acme Corp",
        "[2027-03-14] principal: lives in Leeds",
        "[2027-04-01] principal: is vegetarian",
    ]


def test_a_fact_read_from_one_clause_is_shown_with_its_whole_sentence() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [chat("2027-03-14", "After a month of reading about the dairy industry, I love oat milk.")],
    )
    assert backend.snapshot() == (
        "[2027-03-14] principal: said: After a month of reading about the dairy industry, "
        "I love oat milk"
    )
    assert "oat milk" in ask(backend, "What does the principal think of oat milk?")


def test_a_fact_that_names_its_topic_is_shown_without_the_asides_around_it() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat(
                "2027-03-14",
                "This is a bit random and I keep meaning to mention it, but text messages is "
                "my usual choice, so there you go.",
                "After a month of reading about the dairy industry, I'm vegan.",
            )
        ],
    )
    assert backend.snapshot() == (
        "[2027-03-14] principal: prefers text messages\n[2027-03-14] principal: is vegan"
    )


def test_leaving_one_place_for_another_moves_the_slot_that_held_it() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I work at Globex Logistics.", "I live in Lisbon."),
            chat("2027-04-02", "For the record, I left Globex Logistics for Zephyr."),
            chat("2027-05-09", "I left Lisbon for Porto."),
            # Neither slot holds it: the newcomer is taken for an employer, the usual reading.
            chat("2027-06-20", "I left Cobalt for Initech."),
        ],
    )
    assert backend.snapshot() == (
        "[2027-05-09] principal: lives in Porto\n[2027-06-20] principal: works at Initech"
    )
    assert backend.operation_counts[Operation.UPDATE] == 3


def test_a_later_status_said_in_other_words_replaces_the_earlier_one() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "It's official, I'm engaged."),
            chat("2027-05-02", "As it happens, I've been married for a few weeks now."),
            chat("2027-06-11", "I suppose the short version is that I've been divorced since May."),
            chat("2027-07-01", "The pharmacist set up a plan for me because I'm managing asthma."),
            chat("2027-08-19", "I'm in physiotherapy for a back injury, nothing dramatic."),
            chat("2027-09-03", "Work relocated me to Gothenburg for good, in case taht matters."),
        ],
    )
    assert backend.snapshot() == (
        "[2027-06-11] principal: is divorced\n"
        "[2027-08-19] principal: is in physiotherapy for a back injury\n"
        "[2027-09-03] principal: lives in Gothenburg"
    )


def test_the_speakers_own_state_in_a_sentence_someone_else_opens_is_kept() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat(
                "2027-03-14",
                "My physio knows I'm recovering from a torn hamstring and adjusted my plan.",
                "My brother is recovering from the flu, so I've been driving him around.",
            )
        ],
    )
    snapshot = backend.snapshot()
    assert "recovering from a torn hamstring" in snapshot
    assert "flu" not in snapshot


def test_a_home_restated_after_other_news_on_its_topic_is_dated_anew() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I live in Leeds."),
            chat("2027-04-01", "I finally unpacked the last boxes in the new flat."),
            chat("2027-05-02", "I live in Leeds."),
        ],
    )
    assert "[2027-05-02] principal: lives in Leeds" in backend.snapshot().split("\n")


def test_the_latest_health_news_replaces_the_status_before_it() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I'm recovering from a broken wrist."),
            chat("2027-05-02", "So, about that update: the doctor says I'm managing asthma."),
        ],
    )
    assert backend.snapshot() == "[2027-05-02] principal: is managing asthma"


def test_a_home_typed_without_case_is_read_with_the_case_seen_before() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I live in Leeds.", "Is Wellington cold in June?"),
            chat("2027-05-02", "the movers unloaded the last boxes in wellington on monday"),
        ],
    )
    assert backend.snapshot() == "[2027-05-02] principal: lives in Wellington"


def test_a_health_status_restated_after_other_health_news_is_dated_anew() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I'm dealing with chronic migraines."),
            chat("2027-04-01", "My check-up went better than I expected, so I feel relieved."),
            chat("2027-05-02", "The scans came back and I'm dealing with chronic migraines."),
        ],
    )
    assert "[2027-05-02] principal: is dealing with chronic migraines" in backend.snapshot()


def test_a_change_back_supersedes_the_change_between() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I'm dealing with chronic migraines."),
            chat("2027-04-01", "For the record, it turns out I'm cleared after a full check-up."),
            chat("2027-05-02", "The results came back and I'm dealing with chronic migraines."),
        ],
    )
    assert backend.snapshot() == "[2027-05-02] principal: is dealing with chronic migraines"


def test_a_signed_contract_moves_the_employer_and_a_colleagues_does_not() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "I joined Lumen Cartography recently."),
            [*chat("2027-04-01", "yo, for the record, i signed the contract with initech"),
             agent("Congratulations on Initech!", "2027-04-01")],
            chat("2027-05-02", "My colleague signed the contract with Globex.",
                 "A friend of mine accepted the offer from Hooli."),
        ],
    )  # fmt: skip
    assert backend.snapshot() == "[2027-04-01] principal: works at Initech"


def test_names_given_by_how_others_call_the_speaker_replace_one_another() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "Nobody uses Sisa, I'm Robin to everyone, so there you go."),
            chat("2027-04-01", "Fyi my family has always called me Nico"),
            chat("2027-05-02", "My grandma calls me Sunshine.", "Nobody calls me Robin now."),
            chat("2027-06-01", "Just Jo is fine when you address me."),
        ],
    )
    names = [line for line in backend.snapshot().split("\n") if "goes by" in line]
    assert names == ["[2027-06-01] principal: goes by Jo"]


def test_instructions_about_replies_given_as_advice_replace_one_another() -> None:
    backend = FactStoreBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "My boss reads your summaries, so you should reply in bullets."),
            chat("2027-04-01", "Should you use a formal tone? You should try the café downstairs."),
            chat("2027-05-02", "Please note that the default for me from now on is to reply in "
                 "short paragraphs."),
        ],
    )  # fmt: skip
    assert backend.snapshot() == (
        "[2027-05-02] principal: standing instruction: from now on, reply in short paragraphs"
    )


def test_storage_tokens_are_the_snapshot_count_after_every_change() -> None:
    """Facts added, updated, redated and deleted, by two people before two assistants."""
    redated = 0
    for seed in range(3):
        backend = FactStoreBackend()
        history = random_history(seed, 70, ("principal", "partner"), ("assistant_a", "assistant_b"))
        snapshots = store_counting(backend, history)
        for before, after in itertools.pairwise(["", *snapshots]):
            old = {line.split("] ", 1)[1]: line for line in before.split("\n") if line}
            redated += sum(
                old.get(line.split("] ", 1)[1], line) != line for line in after.split("\n") if line
            )
        assert all(backend.operation_counts[operation] for operation in Operation)
    assert redated
