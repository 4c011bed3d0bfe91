"""Snapshot honesty: which retrieved lines a checkpoint's snapshot accounts for."""

from __future__ import annotations

import itertools
import re

from drift_pipeline.memory._honesty import SnapshotIndex, WorldValues, slot_values

SNAPSHOT = "\n".join(
    [
        "[2031-05-03] ines: I just moved to Porto for the new job.",
        "ines: works at Azul (valid 2031-01-02 to 2031-05-03; superseded, no longer true since "
        "2031-05-03)",
        "[2031-05-09] ines: Ich trinke keinen Kaffee mehr, nur grünen Tee.",
    ]
)


def test_lines_of_the_snapshot_and_parts_of_them_are_accounted_for() -> None:
    index = SnapshotIndex(SNAPSHOT)
    assert index.unreported("[2031-05-03] ines: I just moved to Porto for the new job.") is None
    assert index.unreported("moved to Porto for the new job.\n\n") is None  # cut to a budget
    indented = "  [2031-05-09] ines: Ich trinke keinen Kaffee mehr, nur grünen Tee."
    assert index.unreported(indented) is None
    assert index.unreported("") is None and index.unreported("---\n...") is None


def test_a_line_rendered_differently_from_the_same_words_is_accounted_for() -> None:
    index = SnapshotIndex(SNAPSHOT)
    # A graph memory labels a superseded fact at read time in words of its own.
    assert index.unreported("ines: works at Azul (no longer true since 2031-05-03)") is None
    assert index.unreported("Porto") is None


def test_content_the_snapshot_does_not_hold_is_reported() -> None:
    index = SnapshotIndex(SNAPSHOT)
    hidden = "[2031-05-14] ines: My sister Rosa works as a pilot for Azul."
    assert index.unreported(f"[2031-05-03] ines: I just moved to Porto.\n{hidden}") == hidden
    # What it holds said again in other words passes; a line mostly of something else does not.
    assert index.unreported("the new job is in Porto, I just moved") is None
    mixed = "I just moved to Porto and my sister Rosa flies for Azul"
    assert index.unreported(mixed) == mixed
    assert index.unreported("Lisbon") == "Lisbon"
    long = "ines: " + " ".join(f"secret{n}" for n in range(100))
    assert index.unreported(long) == long[:159] + "…"


def test_a_snapshot_that_grew_is_indexed_like_a_fresh_one() -> None:
    grown = SNAPSHOT + "\n[2031-05-14] ines: My sister Rosa works as a pilot for Azul."
    reused = SnapshotIndex(SNAPSHOT)
    reused.unreported("Rosa the pilot")  # builds the word pairs of the first snapshot
    # A line's answer is kept for the next probe, and only until the snapshot changes.
    assert reused.unreported("sister Rosa works as a pilot") is not None
    reused.update(grown)
    fresh = SnapshotIndex(grown)
    for context in ("sister Rosa works as a pilot", "Rosa is a pilot for Porto", "pilot"):
        assert reused.unreported(context) == fresh.unreported(context)
    # A snapshot that shrank or changed is indexed afresh: what it dropped is unreported.
    reused.update("[2031-05-09] ines: Ich trinke keinen Kaffee mehr, nur grünen Tee.")
    assert reused.unreported("I just moved to Porto for the new job.") is not None


def _human_values() -> WorldValues:
    return WorldValues(slot_values(["human"]))


def test_a_snapshot_that_masks_the_values_it_hands_over_is_caught() -> None:
    # The whole log is retrieved; the snapshot shows the same lines with the values of doubtful
    # sentences replaced, so they read as noise kept without its content.
    log = [
        "ines: My cousin might move to Tallinn some day, maybe.",
        "ines: I just moved to Porto for the new job.",
    ]
    masked = "\n".join([log[0].replace("Tallinn", "that"), log[1]])
    index = SnapshotIndex(masked, _human_values())
    assert index.unreported("\n".join(log)) == log[0]
    # A value spelt another way in the snapshot (an alias) holds it; an honest render passes.
    values = _human_values()
    aliased = SnapshotIndex("ines: works at Northwind Traders since March", values)
    assert aliased.unreported("ines works at Northwind (since March)") is None
    # Without the world's values the masked line passes on its word pairs alone.
    assert SnapshotIndex(masked).unreported("\n".join(log)) is None


def test_a_grown_snapshot_keeps_the_values_it_held_and_adds_the_new_parts() -> None:
    values = _human_values()
    first = "ines: I just moved to Porto for the new job."
    grown = first + "\nines: My cousin moved to Tallinn, she works at Northwind Traders."
    reused = SnapshotIndex(first, values)
    # Builds the values held by the first snapshot: Tallinn is not among them yet.
    assert reused.unreported("ines moved to Tallinn for the new job") is not None
    reused.update(grown)
    fresh = SnapshotIndex(grown, values)
    for context in ("ines moved to Tallinn for the new job", "cousin works at Northwind Traders"):
        assert reused.unreported(context) == fresh.unreported(context) is None, context
    assert reused.unreported("ines moved to Lisbon for the new job") is not None


def test_a_part_of_a_snapshot_line_must_not_name_a_value_only_inside_a_longer_word() -> None:
    index = SnapshotIndex("ines: the Portofino trip was lovely", _human_values())
    assert index.unreported("Porto") == "Porto"
    assert index.unreported("the Portofino trip") is None


def test_a_bag_of_word_pairs_pooled_from_every_line_is_caught() -> None:
    lines = SNAPSHOT.split("\n")
    pairs = sorted(
        {" ".join(pair) for line in lines for pair in itertools.pairwise(re.findall(r"\w+", line))}
    )
    bag = SnapshotIndex("\n".join(pairs))
    assert bag.unreported(lines[0]) == lines[0]
    # Each line still passes against the snapshot that holds it whole, or a part of it.
    index = SnapshotIndex(SNAPSHOT)
    assert index.unreported("\n".join(lines)) is None
    assert index.unreported("ines: I just moved to Porto, then works at Azul") is None


def test_a_line_rendered_from_runs_of_two_snapshot_lines_is_accounted_for() -> None:
    # A graph memory says a fact ended on the day its successor began: the fact's words from
    # one line, the date from the other.
    index = SnapshotIndex(
        "researcher: is engaged (since 2027-02-11)\nresearcher: is divorced (since 2027-05-16)",
        _human_values(),
    )
    assert index.unreported("researcher: is engaged (no longer true since 2027-05-16)") is None
