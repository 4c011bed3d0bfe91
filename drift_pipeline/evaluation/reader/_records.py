"""Structured memory records read as sentences: JSON objects and graph edges.

Memories often store what they know as records (``{"entity": "Thalia's mother", "lives_in":
"Athens"}``, ``(Hilde) --NOT works_at--> (Equinor)``). A careful reader reads a record's keys as
words: whose record it is, what relation it states, and the qualifiers beside it (a planned
move, a closed validity interval, a query log). Each record is rendered as one plain sentence
("Thalia's mother lives in Athens"), so that the same cue rules that read prose decide it;
its own date (``ts``, ``date``, ``since``, a date used as a key) orders it, and an end date
(``valid_to``, ``until``) marks it as no longer true.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._dates import find_dates
from ._rules import RULES

_R = RULES.patterns
_WORDS = RULES.word_sets

__all__ = ["RELATIONS", "render_record"]


# Keys tried in the rules file's order: the first one a record has decides.
_OWNER_KEYS, _PREDICATE_KEYS, _OBJECT_KEYS, _SPEAKER_KEYS, _SAID_KEYS, _KIND_KEYS = (
    tuple(RULES.rule(f"{name}-keys").phrases or ())
    for name in ("owner", "predicate", "object", "speaker", "said", "kind")
)
RELATIONS = RULES.words("relations")


def _words(key: str) -> str:
    return " ".join(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").split()).lower()


def _date_of(value: Any) -> str | None:
    if isinstance(value, str | int) and not isinstance(value, bool):
        found = find_dates(str(value))
        if found:
            return found[0][2]
    return None


def _owner_of_key(key: str, owner: str) -> str | None:
    """The person a nested record belongs to, when its key names one ("Xiomara_husband")."""
    parts = _words(key).split(" ")
    if parts[-1] in RELATIONS:
        if len(parts) > 1:
            return f"{' '.join(key.replace('_', ' ').split()[:-1])}'s {parts[-1]}"
        return f"{owner}'s {parts[-1]}" if owner else f"the {parts[-1]}"
    if key[:1].isupper() and " " not in key.strip() and "_" not in key:
        return key
    return None


def _scalar(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(_flat(str(v)) for v in value if v is not None)
    if isinstance(value, dict | list):
        return None
    return _flat(str(value))


def _flat(text: str) -> str:
    """A value's text with brackets and quotes blanked: inside a record they only group."""
    return " ".join(text.translate(_GROUPING).split())


_GROUPING = str.maketrans(dict.fromkeys('()[]{}"', " "))


def _render(
    obj: Any, owner: str, prefix: str, date: str | None, out: list[tuple[str, str | None]]
) -> None:
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict | list):
                _render(item, owner, prefix, date, out)
            elif item is not None:
                out.append((" ".join(p for p in (owner, prefix, str(item)) if p), date))
        return
    if not isinstance(obj, dict):
        return
    role = next((obj[k] for k in _SPEAKER_KEYS if k in obj), None)
    said = next((obj[k] for k in _SAID_KEYS if k in obj), None)
    if isinstance(role, str) and isinstance(said, str):
        # A conversation turn: rendered as a transcript line so its speaker is known.
        out.append((f"{role}: {said}", _date_of(obj.get("ts") or obj.get("date")) or date))
        return
    for key in _OWNER_KEYS:
        if isinstance(obj.get(key), str) and obj[key].strip():
            owner = obj[key].strip()
            break
    else:
        name = obj.get("name")
        relation = next((str(obj[k]).lower() for k in _KIND_KEYS if k in obj), "")
        if (
            owner
            and relation not in RELATIONS
            and isinstance(name, str)
            and name.strip()
            and name.strip() != owner
        ):
            # A record nested in someone's record and carrying its own name is another
            # person's: {"user": "Isla", "relations": [{"name": "Mum", "employer": …}]}.
            word = name.strip().lower()
            owner = f"{owner}'s {word}" if word in RELATIONS else name.strip()
    kind = next((str(obj[k]).lower() for k in _KIND_KEYS if k in obj), "")
    if kind in RELATIONS:
        owner = f"{owner}'s {kind}" if owner else f"the {kind}"
    closed: str | None = None
    parts: list[str] = []
    nested: list[tuple[str, Any]] = []
    used: set[str] = set()
    dated: list[tuple[str, Any, str]] = []
    amends: list[str] = []
    conditional = any(k.lower() in _WORDS["condition-keys"] for k in obj)
    # Qualifiers first, so that they govern the values after them ("status hypothetical, …").
    ordered = sorted(obj.items(), key=lambda item: item[0].lower() not in _WORDS["qualifier-keys"])
    # A triple: {"subject": …, "predicate": "works_at", "object": …}.
    predicate = next((k for k in _PREDICATE_KEYS if isinstance(obj.get(k), str)), None)
    target = next((k for k in _OBJECT_KEYS if _scalar(obj.get(k)) is not None), None)
    if predicate and target and kind not in RELATIONS:
        parts.append(f"{_words(obj[predicate])} {_scalar(obj[target])}")
        used.update((predicate, target))
    for key, value in ordered:
        if key in used:
            continue
        if key in _OWNER_KEYS and isinstance(value, str) and value.strip() == owner:
            continue
        if key in _KIND_KEYS and kind in RELATIONS:
            continue
        key_date = _date_of(key)
        if key_date:  # {"2027-01-04": "rent budget $2,500"}: a date used as a key
            dated.append((key, value, key_date))
            continue
        low = key.lower()
        if low in _WORDS["date-keys"] and _date_of(value):
            date = _date_of(value) or date
            continue
        if low in _WORDS["end-keys"] and _date_of(value):
            closed = _date_of(value)
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
        ):
            nested.append((key, value))
            continue
        said = _scalar(value)
        if said is None:
            continue
        unit = _R["unit-key"].match(key)
        if _R["amend-key"].search(low):
            amends.append(said)
        elif low in _WORDS["modal-keys"]:
            parts.append(f"{_words(key)} (maybe {said})")
        elif isinstance(value, bool):
            parts.append(_words(key) if value else f"not {_words(key)}")
        elif unit and isinstance(value, int | float):
            parts.append(f"{_words(unit.group(1))} {said} {unit.group(2)}")
        elif low in _WORDS["text-keys"]:
            parts.append(said)
        else:
            parts.append(f"{_words(key)} {said}")
    if parts:
        if conditional:
            parts = [f"hypothetically {p}" for p in parts]
        text = " ".join(p for p in (owner, prefix, ", ".join(parts)) if p)
        if closed:
            text += f" (no longer true since {closed})"
        out.append((text, date))
    # An amendment is read after the record it amends, as a later statement.
    for said in amends:
        out.append((" ".join(p for p in (owner, prefix, "correction:", said) if p), date))
    # Entries dated by their key come after the record they sit in: "correction_2027-05-02"
    # amends the undated value beside it.
    for key, value, key_date in dated:
        rest = _words(DATE_SPAN.sub(" ", key))
        if isinstance(value, dict | list):
            _render(value, owner, " ".join(p for p in (prefix, rest) if p), key_date, out)
        else:
            text = " ".join(p for p in (owner, prefix, rest, _scalar(value) or "") if p)
            out.append((text, key_date))
    for key, value in nested:
        person = _owner_of_key(key, owner)
        if person:
            _render(value, person, "", date, out)
        elif key.lower() in _WORDS["container-keys"]:
            _render(value, owner, prefix, date, out)
        else:
            _render(value, owner, " ".join(p for p in (prefix, _words(key)) if p), date, out)


DATE_SPAN = RULES.pattern("date-span")


def _props(text: str) -> tuple[list[str], str | None, str | None]:
    """Words, start date and end date of a graph edge's ``{…}`` properties."""
    words: list[str] = []
    start: str | None = None
    end: str | None = None
    for block in _R["props"].findall(text):
        for item in re.split(r",\s*(?=(?:[\w ]+\s*[:=])|\")", block):
            key, sep, value = item.partition(":") if ":" in item else item.partition("=")
            key, value = key.strip().strip("\"'"), value.strip().strip("\"'")
            if not sep:
                words.append(item.strip().strip("\"'"))
                continue
            low = key.lower().replace(" ", "_")
            if low in _WORDS["date-keys"] and _date_of(value):
                start = _date_of(value)
            elif low in _WORDS["end-keys"] and _date_of(value):
                end = _date_of(value)
            else:
                words.append(f"{_words(key)} {value}")
    return words, start, end


def render_record(raw: str) -> list[tuple[str, str | None]] | None:
    """A record line as sentences with their dates, or ``None`` when the line is not a record.

    Args:
        raw: One line of a context.
    """
    text = raw.strip()
    if text[:1] in "[{" and text[-1:] in "]},":
        body = text.rstrip(",")
        for candidate in (body, body.lstrip("["), body.rstrip("]"), body.strip("[]")):
            try:
                parsed = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(parsed, dict | list) and not isinstance(parsed, str):
                out: list[tuple[str, str | None]] = []
                _render(parsed, "", "", None, out)
                return out
        return None
    triple = _R["triple"].match(text)
    if triple:  # "(Ruth, sold, Nissan Leaf) @2025-06-20"
        sentence = f"{triple.group('s')} {_words(triple.group('p'))} {triple.group('o')}"
        rest = triple.group("rest").strip()
        found = find_dates(rest)
        date = found[0][2] if found and rest.lstrip("@ ")[:4].isdigit() else None
        return [(f"{sentence} {rest}".strip() if rest and date is None else sentence, date)]
    edge = _R["edge"].match(text)
    if edge is None:
        return None
    rel_props = _R["props"].findall(edge.group("rel"))
    rel = _R["props"].sub(" ", edge.group("rel"))
    words, start, end = _props("{" + "}{".join(rel_props) + "}" + edge.group("rest"))
    rest = _R["props"].sub(" ", edge.group("rest")).strip()
    sentence = f"{edge.group('src')} {_words(rel)} {edge.group('dst')}"
    if words:
        sentence += ", " + ", ".join(words)
    if rest:
        sentence += " " + rest
    if end:
        sentence += f" (no longer true since {end})"
    return [(sentence, start)]
