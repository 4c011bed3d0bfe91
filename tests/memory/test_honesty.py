"""Snapshot honesty: which retrieved lines a checkpoint's snapshot accounts for."""

from __future__ import annotations

from drift_pipeline.memory._honesty import SnapshotIndex

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
