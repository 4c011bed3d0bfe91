"""Details a reader would check: realistic numbers, right conversions, one request per turn,
grammatical options, and names the transcripts actually use."""

from __future__ import annotations

import random
import re
from collections import Counter

from helpers import Worlds

from drift_pipeline.entities import get_entity_type
from drift_pipeline.world.synthesis._template import _TASKS, _task_exchange

_FLOAT = r"(-?\d+(?:\.\d+)?)"


def _exchanges(count: int = 6000) -> list[tuple[str, str]]:
    rng = random.Random(7)
    return [_task_exchange(rng.random, _TASKS[index % len(_TASKS)]) for index in range(count)]


def _numbers(pattern: str, texts: list[tuple[str, str]]) -> list[tuple[float, ...]]:
    found = []
    for request, reply in texts:
        match = re.search(pattern, f"{request} || {reply}")
        if match:
            found.append(tuple(float(group) for group in match.groups()))
    assert len(found) > 20, pattern  # each quantity is drawn often enough to be checked
    return found


def test_conversions_are_computed() -> None:
    texts = _exchanges()
    miles = _numbers(rf"{_FLOAT} miles\? \|\| .* is about {_FLOAT} kilometres", texts)
    assert all(abs(km - m * 1.609344) <= 0.05 for m, km in miles)
    heat = _numbers(rf"{_FLOAT} degrees Fahrenheit .*\|\| .*°F is {_FLOAT}°C", texts)
    assert all(abs(c - (f - 32) * 5 / 9) <= 0.05 for f, c in heat)
    weight = _numbers(rf"{_FLOAT} grams in ounces\? \|\| .* about {_FLOAT} ounces", texts)
    assert all(abs(oz - g / 28.349523125) <= 0.05 for g, oz in weight)
    split = rf"bill of {_FLOAT} euros between {_FLOAT} people .*\|\| .* {_FLOAT} euros each"
    bills = _numbers(split, texts)
    assert all(abs(each * people - bill * 1.1) <= 0.01 * people for bill, people, each in bills)
    scales = _numbers(rf"from 4 to {_FLOAT} servings .*\|\| .* by {_FLOAT} ", texts)
    assert all(abs(factor - servings / 4) < 1e-9 for servings, factor in scales)


def test_counts_and_durations_stay_in_realistic_ranges() -> None:
    texts = _exchanges()
    eggs = _numbers(rf"spinach and {_FLOAT} eggs.*\|\| .*all {_FLOAT} eggs", texts)
    assert all(2 <= asked <= 12 and used == asked for asked, used in eggs)
    layovers = _numbers(rf"layover of {_FLOAT} hours.*\|\| With {_FLOAT} hours", texts)
    assert all(1 <= hours < 24 and said == hours for hours, said in layovers)
    trips = _numbers(rf"work trip of {_FLOAT} days.*\|\| .*{_FLOAT} shirts for the", texts)
    assert all(2 <= days <= 14 and 1 <= shirts <= days for days, shirts in trips)
    roasts = _numbers(rf"at {_FLOAT} degrees Celsius\? \|\| At .*roughly {_FLOAT} minutes", texts)
    assert all(160 <= oven <= 240 and 30 <= minutes <= 60 for oven, minutes in roasts)
    budgets = _numbers(rf"Budget is about {_FLOAT} euros", texts)
    assert all(10 <= budget <= 150 for (budget,) in budgets)
    rates = _numbers(rf"Is {_FLOAT}% interest", texts)
    assert all(0 < rate <= 6 for (rate,) in rates)
    things = _numbers(rf"I've got {_FLOAT} things to fit in", texts)
    assert all(2 <= count <= 10 for (count,) in things)


def test_every_user_turn_makes_at_most_one_request(worlds: Worlds) -> None:
    turns = worlds.query("select content from {transcripts} where role = 'user'")
    spliced = [
        row["content"]
        for row in turns
        if sum(part.endswith("?") for part in re.split(r"(?<=[.!?])\s+", row["content"])) > 1
    ]
    assert not spliced, spliced[:3]


def test_action_options_read_grammatically_for_every_value() -> None:
    for type_name in ("human", "assistant_agent"):
        for slot in get_entity_type(type_name).slots:
            if slot.action is None:
                continue
            for value in slot.values:
                option = slot.action.option.format(value=value.text)
                assert not re.search(r"\bwho is (?:needs|does|keeps|avoids|cannot|no)\b", option)
                assert not re.search(r"\bsomeone (?:needs|does|keeps|avoids|cannot)\b", option)


def test_every_name_a_probe_uses_occurs_in_its_worlds_transcripts(worlds: Worlds) -> None:
    names = worlds.query(
        "select distinct scenario, horizon, replicate, name from {latent_profiles}"
    )
    probes = worlds.query("select scenario, horizon, replicate, question from {probes}")
    said: Counter[tuple[str, str, int, str]] = Counter()
    for row in names:
        first = row["name"].split()[0]
        key = (row["scenario"], row["horizon"], row["replicate"])
        hits = worlds.query(
            "select count(*) as n from {transcripts} where scenario = ? and horizon = ? "
            "and replicate = ? and contains(content, ?)",
            *key,
            first,
        )
        said[(*key, first)] = hits[0]["n"]
    checked = 0
    for probe in probes:
        key = (probe["scenario"], probe["horizon"], probe["replicate"])
        for (scenario, horizon, replicate, first), count in said.items():
            if (scenario, horizon, replicate) == key and re.search(
                rf"\b{re.escape(first)}\b", probe["question"]
            ):
                checked += 1
                assert count > 0, (first, probe["question"])
    assert checked > 50
