"""The shipped synthetic BrainCore dataset: 100 sessions of invented people, made from a seed.

Every record is one person's session: a pet (a retrieval query), two dated activities in a
random order (a temporal query: which came first), a home city and a later move (a contradiction
query: where they live now) and a lunch that nothing asks about. People, places and dates are
invented from small word lists, so the data is public-safe. The same seed always gives the same
bytes; ``synthetic_dataset_path()`` is the copy that ships with the package.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "SYNTHETIC_RECORDS",
    "SYNTHETIC_SEED",
    "synthetic_dataset",
    "synthetic_dataset_bytes",
    "synthetic_dataset_path",
    "write_synthetic_dataset",
]

SYNTHETIC_SEED = 17
SYNTHETIC_RECORDS = 100

_FIRST = (
    "Amara",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Elif",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kavya",
    "Lior",
    "Mireille",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Soren",
    "Tamsin",
)
_LAST = (
    "Abernathy",
    "Bellweather",
    "Castellan",
    "Drummond",
    "Eastwick",
    "Fairweather",
    "Greenhalgh",
    "Hollins",
    "Ivers",
    "Jessup",
    "Kettering",
    "Lindqvist",
    "Marchetti",
    "Northcott",
    "Okonkwo",
)
_PETS = ("cat", "dog", "parrot", "tortoise", "rabbit", "goldfish", "hamster", "ferret")
_PET_NAMES = (
    "Biscuit",
    "Pepper",
    "Mochi",
    "Juniper",
    "Waffles",
    "Clementine",
    "Pickles",
    "Nimbus",
    "Tofu",
    "Marble",
    "Sprout",
    "Basil",
)
_CITIES = (
    "Lisbon",
    "Porto",
    "Lyon",
    "Ghent",
    "Tallinn",
    "Bologna",
    "Cork",
    "Bergen",
    "Graz",
    "Utrecht",
    "Valencia",
    "Krakow",
    "Aarhus",
    "Bilbao",
)
_ACTIVITIES = (
    ("pottery class", "took a pottery class"),
    ("dentist appointment", "went to a dentist appointment"),
    ("job interview", "had a job interview"),
    ("marathon", "ran a marathon"),
    ("piano recital", "played at a piano recital"),
    ("camping trip", "went on a camping trip"),
    ("wedding", "attended a wedding"),
    ("chess tournament", "played in a chess tournament"),
)
_LUNCHES = ("lentil soup", "a falafel wrap", "mushroom risotto", "a tuna salad", "dumplings")


def synthetic_dataset(
    records: int = SYNTHETIC_RECORDS, seed: int = SYNTHETIC_SEED
) -> list[dict[str, Any]]:
    """The synthetic dataset's records, generated from ``seed``.

    Args:
        records: Number of records (sessions); at most 300 distinct people exist.
        seed: Seed of the generator.

    Returns:
        One dict per record in the BrainCore schema.
    """
    people = [f"{first} {last}" for last in _LAST for first in _FIRST]
    if records > len(people):
        raise ValueError(f"at most {len(people)} records, got {records}")
    rng = random.Random(seed)
    rng.shuffle(people)
    return [_record(rng, index, people[index]) for index in range(records)]


def _record(rng: random.Random, index: int, person: str) -> dict[str, Any]:
    session = f"s{index + 1:03d}"
    pet, pet_name = rng.choice(_PETS), rng.choice(_PET_NAMES)
    old_city, new_city = rng.sample(_CITIES, 2)
    (first_label, first_did), (second_label, second_did) = rng.sample(_ACTIVITIES, 2)
    start = datetime(2024, 1, 1, 9) + timedelta(days=3 * index + rng.randrange(3))
    hours = sorted(rng.sample(range(1, 24 * 40), 5))
    when = [start + timedelta(hours=h) for h in (0, *hours)]

    def memory(number: int, content: str) -> dict[str, Any]:
        return {
            "memory_id": f"{session}-m{number}",
            "content": content,
            "timestamp": when[number - 1].isoformat(),
        }

    # The lunch (m6) is the one memory no query needs: a distractor for every query.
    memories = [
        memory(1, f"{person} lives in {old_city}."),
        memory(2, f"{person} adopted a {pet} named {pet_name}."),
        memory(3, f"{person} {first_did}."),
        memory(4, f"{person} {second_did}."),
        memory(5, f"{person} moved from {old_city} to {new_city}."),
    ]
    memories.append(memory(6, f"{person} had {rng.choice(_LUNCHES)} for lunch."))
    # Asked one way or the other at random, so "the first one named" is no shortcut.
    pair = [first_label, second_label]
    rng.shuffle(pair)
    queries = [
        {
            "query_id": f"{session}-q1",
            "query_text": f"What is the name of {person}'s {pet}?",
            "expected_answer": pet_name,
            "query_type": "retrieval",
            "required_memory_ids": [f"{session}-m2"],
        },
        {
            "query_id": f"{session}-q2",
            "query_text": f"Which came first for {person}: the {pair[0]} or the {pair[1]}?",
            "expected_answer": f"the {first_label}",
            "query_type": "temporal",
            "required_memory_ids": [f"{session}-m3", f"{session}-m4"],
        },
        {
            "query_id": f"{session}-q3",
            "query_text": f"Which city does {person} live in now?",
            "expected_answer": new_city,
            "query_type": "contradiction",
            "required_memory_ids": [f"{session}-m1", f"{session}-m5"],
        },
    ]
    return {"session_id": session, "memories": memories, "queries": queries}


def synthetic_dataset_bytes(records: int = SYNTHETIC_RECORDS, seed: int = SYNTHETIC_SEED) -> bytes:
    """The dataset as JSONL bytes: one compact record per line, keys in schema order."""
    lines = (json.dumps(r, ensure_ascii=False) for r in synthetic_dataset(records, seed))
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def write_synthetic_dataset(
    path: str | Path, records: int = SYNTHETIC_RECORDS, seed: int = SYNTHETIC_SEED
) -> Path:
    """Write the synthetic dataset to ``path`` (byte-identical for the same arguments).

    Args:
        path: The JSONL file to write; its folder is created.
        records: Number of records.
        seed: Seed of the generator.

    Returns:
        The path written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(synthetic_dataset_bytes(records, seed))
    return target


def synthetic_dataset_path() -> Path:
    """The shipped copy of the default synthetic dataset (100 records, seed 17)."""
    return Path(__file__).with_name("data") / "synthetic_benchmark.jsonl"
