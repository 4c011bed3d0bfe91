"""The diversity audit: skeletons, held-out overlap against the public split, the regex baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import COMMUTER, HABIT_LOOP, TWO_DESKS, write_scenario

from drift_pipeline.cli import main
from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_worlds
from drift_pipeline.world.diversity import (
    DECOY_KINDS,
    WorldText,
    diversity_report,
    extract,
    read_worlds,
    sentences,
    skeleton,
)
from drift_pipeline.world.synthesis import TemplateSynthesizer
from drift_pipeline.world.synthesis.grammar import PhrasingSplit

HELD_OUT = PhrasingSplit.from_salt("diversity-test-salt")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("diversity")
    loaded = [
        load_scenario(write_scenario(folder, text)) for text in (COMMUTER, TWO_DESKS, HABIT_LOOP)
    ]
    found = {}
    for name, split in (("public", PhrasingSplit.from_salt("")), ("held_out", HELD_OUT)):
        generate_worlds(loaded, folder / name, synthesizer=TemplateSynthesizer(split))
        found[name] = folder / name
    return found


@pytest.fixture(scope="module")
def texts(roots: dict[str, Path]) -> dict[str, WorldText]:
    return {name: read_worlds([root]) for name, root in roots.items()}


def test_skeletons_mask_values_names_dates_and_numbers() -> None:
    assert skeleton(
        "Hi Maren! I joined Northwind on Monday, 12 days after leaving Globex Logistics."
    ) == ("hi <name>! i joined <v> on <date>, <n> days after leaving <v>.")
    assert (
        skeleton("It's 2027-03-01 and 16.7°C in Bergen.", ("Zed",))
        == "it's <date> and <n>°c in <v>."
    )
    assert skeleton("Zed says hi", ("Zed",)) == "<name> says hi"


def test_a_trailing_emoji_or_marker_closes_its_own_sentence() -> None:
    said = "Oh sure, I'm moving to Kyoto. 🙄 How long do I roast potatoes? Fine /s ok."
    assert sentences(said) == [
        "Oh sure, I'm moving to Kyoto. 🙄",
        "How long do I roast potatoes?",
        "Fine /s ok.",
    ]


def test_every_event_sentence_and_decoy_kind_is_read(texts: dict[str, WorldText]) -> None:
    public = texts["public"]
    assert public.worlds > 0
    assert {"job_change", "relocation", "habit_form"} <= set(public.events)
    assert set(public.decoys) == set(DECOY_KINDS)
    # Nearly every event turn has a sentence of its own that says its value (a routine request
    # naming a unit or a channel is not one).
    assert sum(map(len, public.events.values())) >= 0.95 * len(public.event_turns)


def test_heldout_worlds_share_at_most_30_percent_of_skeletons_with_public(
    texts: dict[str, WorldText],
) -> None:
    report = diversity_report(texts["held_out"], texts["public"])
    assert report.event_shared is not None and report.event_shared <= 0.30
    assert report.decoy_shared is not None and report.decoy_shared <= 0.30
    for group in (*report.events, *report.decoys):
        assert group.shared is not None and group.shared <= 0.30, group
    # The same split regenerated shares everything: the measure can fail.
    itself = diversity_report(texts["public"], texts["public"])
    assert itself.event_shared == 1.0 and itself.decoy_shared == 1.0


def test_the_regex_baseline_is_fitted_to_public_phrasing_and_misses_held_out(
    texts: dict[str, WorldText],
) -> None:
    public = diversity_report(texts["public"])
    held_out = diversity_report(texts["held_out"])
    assert public.baseline_signal >= 0.8
    assert held_out.baseline_signal <= 0.5
    assert public.baseline_decoys <= 0.1


def test_the_baseline_extracts_cued_values_and_skips_blacklisted_sentences() -> None:
    assert ("employer", "Northwind Traders") in extract("IT at Northwind just handed me a laptop.")
    assert not extract("My sister got a job at Northwind Traders.")
    assert not extract("Is Northwind hiring at the moment?")


def test_drift_audit_diversity_prints_counts_and_overlap(
    roots: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        [
            "audit",
            "diversity",
            str(roots["held_out"]),
            "--against",
            str(roots["public"]),
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "job_change" in result.output and "third_party" in result.output
    assert "regex baseline: keeps" in result.output
    figures = json.loads(out.read_text())
    assert figures["event_shared"] <= 0.3 and figures["worlds"] > 0
    missing = CliRunner().invoke(main, ["audit", "diversity", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "no transcripts table" in missing.output
