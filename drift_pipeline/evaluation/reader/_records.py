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
from typing import Any

from ._dates import parse_date
from ._rules import RULES

__all__ = ["render_record"]

_R, _WORDS = RULES.patterns, RULES.word_sets
_RELATIONS = _WORDS["relations"]
# Keys tried in the rules file's order: the first one a record has decides.
_OWNER_KEYS, _PREDICATE_KEYS, _OBJECT_KEYS, _SPEAKER_KEYS, _SAID_KEYS, _KIND_KEYS = (
    tuple(RULES.rule(f"{name}-keys").phrases or ())
    for name in ("owner", "predicate", "object", "speaker", "said", "kind")
)
_GROUPING = str.maketrans(dict.fromkeys('()[]{}"', " "))  # inside a record they only group
Sentences = list[tuple[str, str | None]]


def _words(key: str) -> str:
    return " ".join(_R["key-word-break"].sub(" ", key).replace("_", " ").split()).lower()


def _join(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _date_of(value: Any) -> str | None:
    is_text = isinstance(value, str | int) and not isinstance(value, bool)
    return parse_date(str(value)) if is_text else None


def _scalar(value: Any) -> str | None:
    """A value as words (a list of plain values joined), ``None`` for a record or nothing."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(
            " ".join(str(v).translate(_GROUPING).split()) for v in value if v is not None
        )
    if isinstance(value, dict | list):
        return None
    return " ".join(str(value).translate(_GROUPING).split())


def _owner_of_key(key: str, owner: str) -> str | None:
    """The person a nested record belongs to, when its key names one ("Xiomara_husband")."""
    parts = _words(key).split(" ")
    if parts[-1] in _RELATIONS:
        if len(parts) > 1:
            return f"{' '.join(key.replace('_', ' ').split()[:-1])}'s {parts[-1]}"
        return f"{owner}'s {parts[-1]}" if owner else f"the {parts[-1]}"
    return key if key[:1].isupper() and " " not in key.strip() and "_" not in key else None


def _owner(obj: dict[str, Any], owner: str, kind: str) -> str:
    """Whose record ``obj`` (a ``kind``) is, nested in ``owner``'s: owner key, name or relation."""
    owners = (obj[k].strip() for k in _OWNER_KEYS if isinstance(obj.get(k), str))
    named = next(filter(None, owners), "")
    name = obj.get("name")
    if named:
        owner = named
    elif (
        owner
        and kind not in _RELATIONS
        and isinstance(name, str)
        and name.strip() not in ("", owner)
    ):
        # A record nested in someone's record and carrying its own name is another person's:
        # {"user": "Isla", "relations": [{"name": "Mum", "employer": …}]}.
        word = name.strip().lower()
        owner = f"{owner}'s {word}" if word in _RELATIONS else name.strip()
    if kind in _RELATIONS:
        owner = f"{owner}'s {kind}" if owner else f"the {kind}"
    return owner


def _render(obj: Any, owner: str, prefix: str, date: str | None, out: Sentences) -> None:
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict | list):
                _render(item, owner, prefix, date, out)
            elif item is not None:
                out.append((_join(owner, prefix, str(item)), date))
        return
    if not isinstance(obj, dict):
        return
    role = next((obj[k] for k in _SPEAKER_KEYS if k in obj), None)
    said = next((obj[k] for k in _SAID_KEYS if k in obj), None)
    if isinstance(role, str) and isinstance(said, str):
        # A conversation turn: rendered as a transcript line so its speaker is known.
        out.append((f"{role}: {said}", _date_of(obj.get("ts") or obj.get("date")) or date))
        return
    kind = next((str(obj[k]).lower() for k in _KIND_KEYS if k in obj), "")
    owner = _owner(obj, owner, kind)
    closed: str | None = None
    parts: list[str] = []
    amends: list[str] = []
    nested: list[tuple[str, Any]] = []
    dated: list[tuple[str, Any, str]] = []
    used: set[str] = set()
    # A triple: {"subject": …, "predicate": "works_at", "object": …}.
    predicate = next((k for k in _PREDICATE_KEYS if isinstance(obj.get(k), str)), None)
    target = next((k for k in _OBJECT_KEYS if _scalar(obj.get(k)) is not None), None)
    if predicate and target and kind not in _RELATIONS:
        parts.append(f"{_words(obj[predicate])} {_scalar(obj[target])}")
        used.update((predicate, target))
    # Qualifiers first, so that they govern the values after them ("status hypothetical, …").
    for key, value in sorted(
        obj.items(), key=lambda kv: kv[0].lower() not in _WORDS["qualifier-keys"]
    ):
        low, key_date = key.lower(), _date_of(key)
        if (
            key in used
            or (key in _OWNER_KEYS and isinstance(value, str) and value.strip() == owner)
            or (key in _KIND_KEYS and kind in _RELATIONS)
        ):
            continue
        if key_date:  # {"2027-01-04": "rent budget $2,500"}: a date used as a key
            dated.append((key, value, key_date))
        elif low in _WORDS["date-keys"] and _date_of(value):
            date = _date_of(value) or date
        elif low in _WORDS["end-keys"] and _date_of(value):
            closed = _date_of(value)
        elif isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
        ):
            nested.append((key, value))
        elif (text := _scalar(value)) is None:
            continue
        elif _R["amend-key"].search(low):
            amends.append(text)
        elif low in _WORDS["modal-keys"]:
            parts.append(f"{_words(key)} (maybe {text})")
        elif isinstance(value, bool):
            parts.append(_words(key) if value else f"not {_words(key)}")
        elif (unit := _R["unit-key"].match(key)) and isinstance(value, int | float):
            parts.append(f"{_words(unit.group(1))} {text} {unit.group(2)}")
        else:
            parts.append(text if low in _WORDS["text-keys"] else f"{_words(key)} {text}")
    if parts:
        if any(k.lower() in _WORDS["condition-keys"] for k in obj):
            parts = [f"hypothetically {p}" for p in parts]
        text = _join(owner, prefix, ", ".join(parts))
        out.append((text + (f" (no longer true since {closed})" if closed else ""), date))
    # An amendment is read after the record it amends, as a later statement; so are entries
    # dated by their key: "correction_2027-05-02" amends the undated value beside it.
    out.extend((_join(owner, prefix, "correction:", text), date) for text in amends)
    for key, value, key_date in dated:
        rest = _words(_R["date-span"].sub(" ", key))
        if isinstance(value, dict | list):
            _render(value, owner, _join(prefix, rest), key_date, out)
        else:
            out.append((_join(owner, prefix, rest, _scalar(value) or ""), key_date))
    for key, value in nested:
        if person := _owner_of_key(key, owner):
            _render(value, person, "", date, out)
        else:
            words = "" if key.lower() in _WORDS["container-keys"] else _words(key)
            _render(value, owner, _join(prefix, words), date, out)


def _props(blocks: list[str]) -> tuple[list[str], str | None, str | None]:
    """Words, start date and end date of a graph edge's ``{…}`` property blocks."""
    words: list[str] = []
    start = end = None
    for item in (item for block in blocks for item in _R["prop-break"].split(block)):
        key, sep, value = item.partition(":") if ":" in item else item.partition("=")
        key, value = key.strip().strip("\"'"), value.strip().strip("\"'")
        low = key.lower().replace(" ", "_")
        if not sep:
            words.append(item.strip().strip("\"'"))
        elif low in _WORDS["date-keys"] and _date_of(value):
            start = _date_of(value)
        elif low in _WORDS["end-keys"] and _date_of(value):
            end = _date_of(value)
        else:
            words.append(f"{_words(key)} {value}")
    return words, start, end


def render_record(raw: str) -> Sentences | None:
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
            if isinstance(parsed, dict | list):
                out: Sentences = []
                _render(parsed, "", "", None, out)
                return out
        return None
    if triple := _R["triple"].match(text):  # "(Ruth, sold, Nissan Leaf) @2025-06-20"
        sentence = f"{triple.group('s')} {_words(triple.group('p'))} {triple.group('o')}"
        rest = triple.group("rest").strip()
        date = parse_date(rest) if rest.lstrip("@ ")[:4].isdigit() else None
        return [(f"{sentence} {rest}".strip() if rest and date is None else sentence, date)]
    edge = _R["edge"].match(text)
    if edge is None:
        return None
    relation, tail = edge.group("rel"), edge.group("rest")
    words, start, end = _props(_R["props"].findall(relation) + _R["props"].findall(tail))
    rest = _R["props"].sub(" ", tail).strip()
    sentence = f"{edge.group('src')} {_words(_R['props'].sub(' ', relation))} {edge.group('dst')}"
    sentence += (", " + ", ".join(words) if words else "") + (" " + rest if rest else "")
    return [(sentence + (f" (no longer true since {end})" if end else ""), start)]
