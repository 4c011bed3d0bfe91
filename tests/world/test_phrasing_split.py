"""Public and held-out phrasing splits: chosen by a salt, disjoint, recorded, deterministic."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path

import pytest
from helpers import COMMUTER, TWO_DESKS, tree_bytes, write_scenario

from drift_pipeline.entities import get_entity_type
from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_replicate, generate_worlds, world_manifest_path
from drift_pipeline.world._write import world_manifest
from drift_pipeline.world.synthesis import TemplateSynthesizer
from drift_pipeline.world.synthesis.grammar import (
    ALL_DECOY_FAMILIES,
    ALL_EVENT_FAMILIES,
    DECOY_STEMS,
    SALT_ENV,
    STEMS,
    PhrasingSplit,
    split_from_env,
    tables_for,
)

SALTS = ("alpha", "leaderboard-2027", "x", "held out with spaces", "ünïcode")


def test_no_salt_is_the_public_split(monkeypatch: pytest.MonkeyPatch) -> None:
    assert PhrasingSplit.from_salt(None).label == "public"
    assert PhrasingSplit.from_salt("") == PhrasingSplit.from_salt(None)
    monkeypatch.delenv(SALT_ENV, raising=False)
    assert split_from_env().public
    monkeypatch.setenv(SALT_ENV, "")
    assert split_from_env().label == "public"
    monkeypatch.setenv(SALT_ENV, "alpha")
    assert split_from_env() == PhrasingSplit.from_salt("alpha")
    assert TemplateSynthesizer().split == PhrasingSplit.from_salt("alpha")


def test_a_heldout_label_names_the_split_but_not_the_salt() -> None:
    labels = {PhrasingSplit.from_salt(salt).label for salt in SALTS}
    assert len(labels) == len(SALTS)
    for salt in SALTS:
        split = PhrasingSplit.from_salt(salt)
        assert split.label.startswith("heldout:") and len(split.label) == len("heldout:") + 8
        assert salt not in split.label and salt not in repr(split)
        assert PhrasingSplit.from_salt(salt).label == split.label


def _groups() -> list[tuple[str, list[str]]]:
    return [
        *((f"event:{family}", [stem for stem, _ in stems]) for family, stems in STEMS.items()),
        *((f"decoy:{kind}", [stem for stem, _ in stems]) for kind, stems in DECOY_STEMS.items()),
    ]


def test_heldout_stems_are_never_public_and_salts_choose_differently() -> None:
    public = PhrasingSplit.from_salt("")
    for group, stems in _groups():
        shown = public.stems(group, stems)
        assert shown and shown < set(stems)
        chosen = [PhrasingSplit.from_salt(salt).stems(group, stems) for salt in SALTS]
        for held_out in chosen:
            assert held_out and not held_out & shown, group
    # Across groups, different salts pick different stems somewhere.
    first, second = (PhrasingSplit.from_salt(salt) for salt in SALTS[:2])
    assert any(first.stems(g, s) != second.stems(g, s) for g, s in _groups())


@pytest.mark.parametrize("salt", ("", *SALTS))
def test_every_event_type_and_decoy_kind_has_50_families_in_every_split(salt: str) -> None:
    tables = tables_for(PhrasingSplit.from_salt(salt))
    for type_name in ("human", "assistant_agent"):
        for event_type in get_entity_type(type_name).event_types:
            for slot in event_type.slots:
                family = slot.partition("/")[0]
                assert len(tables.events[(family, True)]) >= 50, (event_type.name, salt)
                # The first change of a slot without latent state has no old value to name.
                assert len(tables.events[(family, False)]) >= 30, (event_type.name, salt)
    for kind, families in tables.decoys.items():
        assert len(families) >= 50, (kind, salt)


def test_every_family_has_sentence_skeletons_of_its_own() -> None:
    # A family is a stem in a frame: no two families, of any event type or decoy kind, compose
    # the same sentence template (so a skeleton names its family).
    families = [
        family
        for pools in (ALL_EVENT_FAMILIES, ALL_DECOY_FAMILIES)
        for group in pools.values()
        for family in group
    ]
    templates = Counter(family.template.lower() for family in families)
    assert [text for text, count in templates.items() if count > 1] == []
    assert len({family.family_id for family in families}) == len(families)


def test_same_salt_and_seed_give_the_same_world_and_another_salt_another(tmp_path: Path) -> None:
    spec = load_scenario(write_scenario(tmp_path, COMMUTER)).spec
    held_out = PhrasingSplit.from_salt("alpha")
    first = generate_replicate(spec, "short", 0, TemplateSynthesizer(held_out))
    again = generate_replicate(spec, "short", 0, TemplateSynthesizer(held_out))
    public = generate_replicate(
        spec, "short", 0, TemplateSynthesizer(PhrasingSplit.from_salt(None))
    )
    assert first.turns == again.turns and first.probes == again.probes
    assert first.turns != public.turns
    # The plan does not depend on phrasing: the same sessions carry the same events.
    assert first.plans == public.plans


def test_the_manifest_records_the_split_never_the_salt(tmp_path: Path) -> None:
    loaded = load_scenario(write_scenario(tmp_path, TWO_DESKS))
    salt = "a-secret-salt"
    held_out = world_manifest(loaded, "short", TemplateSynthesizer(PhrasingSplit.from_salt(salt)))
    public = world_manifest(loaded, "short", TemplateSynthesizer(PhrasingSplit.from_salt("")))
    assert held_out["synthesizer"] == public["synthesizer"] == "template@4"
    assert held_out["synthesizer_pin"] == {"phrasing_split": PhrasingSplit.from_salt(salt).label}
    assert public["synthesizer_pin"] == {"phrasing_split": "public"}
    assert salt not in json.dumps(held_out)
    # A world made under one split is not current under another.
    assert held_out != public


def test_a_world_from_another_split_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stored world is current when its manifest equals the one the run's synthesizer (the
    # template one, from the environment) would write.
    loaded = load_scenario(write_scenario(tmp_path, COMMUTER))
    manifest = tmp_path / "out" / world_manifest_path(loaded.spec.id, "short")
    monkeypatch.setenv(SALT_ENV, "alpha")
    generate_worlds([loaded], tmp_path / "out", ("short",))
    recorded = json.loads(manifest.read_text())
    assert recorded == world_manifest(loaded, "short", TemplateSynthesizer())
    monkeypatch.delenv(SALT_ENV)
    assert recorded != world_manifest(loaded, "short", TemplateSynthesizer())
    monkeypatch.setenv(SALT_ENV, "beta")
    assert recorded != world_manifest(loaded, "short", TemplateSynthesizer())


def test_worker_processes_write_the_same_heldout_world(tmp_path: Path) -> None:
    loaded = load_scenario(write_scenario(tmp_path, COMMUTER))
    synthesizer = TemplateSynthesizer(PhrasingSplit.from_salt("alpha"))
    copy = pickle.loads(pickle.dumps(synthesizer))
    assert copy.split == synthesizer.split and copy.pin() == synthesizer.pin()
    trees = []
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        generate_worlds([loaded], out, ("short",), synthesizer, workers=workers)
        trees.append(tree_bytes(out))
    assert trees[0] == trees[1]
