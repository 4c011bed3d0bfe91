"""Judges of a reader's answer: the pinned LLM judge, and the rule judge over answer text.

The LLM judge (spec §7.4, §9) is one pinned model with public prompts
(``evaluation/prompts/judge_*.md``, hashed into the manifest). Every reply must be strict JSON
following the call's schema, parsed strictly: anything else (a failed call, extra text, a
missing or unknown key, a wrong type) is a :class:`Judgement` with an ``error`` and no verdict.
The caller records it as ``judge_error`` and leaves the probe out of every metric; nothing ever
stands in for the judge's verdict.

Three questions; a probe's family names the one it asks (``judge_prompt``):

- ``judge_answer`` (recall): is the answer correct against the latent answer (for a negative
  probe: does it avoid claiming the decoy)?
- ``judge_revision`` (revision): does the answer state the new value, and does it still assert
  the old one? (update and deprecation correctness, spec §7.3);
- ``judge_action`` (action): given the latent profile, is the memory-informed action better,
  equivalent or worse than the amnesiac's action (+1/0/−1, spec §7.4), and does it fit the
  profile (``correct``)? Two identical actions are equivalent by definition (score 0; the judge
  still decides the fit).

:class:`RuleJudge` reads the answer's text as the careful reader reads a memory
(:func:`~._judge.judge_answer`) and scores it with the same judge: deterministic, with the
reader's value lexicon for paraphrases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from drift_pipeline.llm import Completion, LLMClient, LLMError
from drift_pipeline.textmatch import normalise
from drift_pipeline.world.probe_families import get_probe_family

from ._judge import JUDGE_NAME, JUDGE_VERSION, Verdict, judge_answer
from ._prompts import load_prompt, prompts_sha256

__all__ = [
    "JUDGE_MAX_TOKENS",
    "JUDGE_PROMPTS",
    "JudgeItem",
    "Judgement",
    "LLMJudge",
    "RuleJudge",
    "parse_judge_reply",
]

JUDGE_PROMPTS: Final = ("judge_answer", "judge_revision", "judge_action")
JUDGE_MAX_TOKENS: Final = 200
_FRAMING_VERSION: Final = "1"
_REASON_CHARS: Final = 300

_REASON = {"type": "string"}
_SCHEMAS: Final[Mapping[str, dict[str, Any]]] = {
    "judge_answer": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["correct", "incorrect"]},
            "reason": _REASON,
        },
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    },
    "judge_revision": {
        "type": "object",
        "properties": {
            "new_value_stated": {"type": "boolean"},
            "old_value_asserted": {"type": "boolean"},
            "reason": _REASON,
        },
        "required": ["new_value_stated", "old_value_asserted", "reason"],
        "additionalProperties": False,
    },
    "judge_action": {
        "type": "object",
        "properties": {
            "comparison": {"type": "string", "enum": ["better", "equivalent", "worse"]},
            "fits_profile": {"type": "boolean"},
            "reason": _REASON,
        },
        "required": ["comparison", "fits_profile", "reason"],
        "additionalProperties": False,
    },
}
_SCORES: Final = {"better": 1, "equivalent": 0, "worse": -1}


@dataclass(frozen=True)
class JudgeItem:
    """One answer to judge.

    Attributes:
        probe: The probe record (a ``probes`` row: question, answer, aliases, deprecated, …).
        answer: The reader's answer.
        amnesiac_answer: Action probes: the action taken with no memory (``None``: ``answer``
            is itself the amnesiac's).
        profile: Action probes: the latent profile, one ``slot: value`` line each.
    """

    probe: Mapping[str, Any]
    answer: str
    amnesiac_answer: str | None = None
    profile: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """A verdict, or the reason there is none.

    Attributes:
        verdict: The scored answer (``None`` when the judge failed).
        error: One line: why there is no verdict.
    """

    verdict: Verdict | None
    error: str | None = None


def _kind(probe: Mapping[str, Any]) -> str:
    """The judge question the probe's family asks (its ``judge_prompt``)."""
    family = get_probe_family(probe["probe_type"])
    if family.judge_prompt not in _SCHEMAS:
        raise ValueError(
            f"probe family {family.name!r} asks for judge prompt {family.judge_prompt!r}; "
            f"the LLM judge asks {', '.join(JUDGE_PROMPTS)}"
        )
    return family.judge_prompt


def _spellings(values: Sequence[str]) -> str:
    return "; ".join(f'"{v}"' for v in values if v) or "(none)"


def _user_message(item: JudgeItem) -> str:
    probe, kind = item.probe, _kind(item.probe)
    question = f"Question: {probe['question']}"
    answer = f"Assistant's answer: {item.answer}"
    if kind == "judge_action":
        profile = "\n".join(f"- {line}" for line in item.profile) or "- (nothing known)"
        amnesiac = item.answer if item.amnesiac_answer is None else item.amnesiac_answer
        return (
            f"Latent profile of {probe['subject']}:\n{profile}\n\nTask: {probe['question']}\n\n"
            f"Memory-informed action: {item.answer}\nNo-memory action: {amnesiac}"
        )
    aliases = list(probe["aliases"] or [])
    if kind == "judge_revision":
        return (
            f"{question}\nNew value (holds now): {_spellings([probe['answer'], *aliases])}\n"
            f"Old value (no longer holds): {_spellings(list(probe['deprecated'] or []))}\n"
            f"{answer}"
        )
    if probe["polarity"] == "negative":
        return (
            f"{question}\nReference truth: this was never said; the right answer is no (or "
            f"that it is not known). The claim that was never made: {_spellings(aliases)}\n"
            f"{answer}"
        )
    return (
        f"{question}\nReference truth: {_spellings([probe['answer']])}; accepted spellings: "
        f"{_spellings(aliases)}\n{answer}"
    )


def parse_judge_reply(kind: str, text: str) -> dict[str, Any]:
    """A judge reply parsed strictly against its schema.

    Args:
        kind: ``judge_answer``, ``judge_revision`` or ``judge_action``.
        text: The reply: one JSON object and nothing else (surrounding whitespace allowed).

    Returns:
        The object.

    Raises:
        ValueError: One line naming what is wrong (not JSON, not an object, missing, unknown
            or mistyped keys, a value outside its enum).
    """
    schema = _SCHEMAS[kind]
    try:
        reply = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"reply is not JSON ({error.msg} at char {error.pos})") from None
    if not isinstance(reply, dict):
        raise ValueError(f"reply is a JSON {type(reply).__name__}, expected an object")
    expected = set(schema["required"])
    if set(reply) != expected:
        missing, extra = sorted(expected - set(reply)), sorted(set(reply) - expected)
        raise ValueError(f"reply keys wrong: missing {missing}, unexpected {extra}")
    for key, rule in schema["properties"].items():
        value = reply[key]
        if rule["type"] == "boolean" and not isinstance(value, bool):
            raise ValueError(f"reply {key!r} must be true or false, got {value!r}")
        if rule["type"] == "string" and not isinstance(value, str):
            raise ValueError(f"reply {key!r} must be a string, got {value!r}")
        if "enum" in rule and value not in rule["enum"]:
            raise ValueError(f"reply {key!r} must be one of {rule['enum']}, got {value!r}")
    return reply


def _verdict(item: JudgeItem, kind: str, reply: Mapping[str, Any]) -> Verdict:
    reason = " ".join(str(reply["reason"]).split())[:_REASON_CHARS]
    if kind == "judge_action":
        same = item.amnesiac_answer is None or normalise(item.answer) == normalise(
            item.amnesiac_answer
        )
        score = 0 if same else _SCORES[reply["comparison"]]
        why = "same action as without memory" if same else str(reply["comparison"])
        fits = bool(reply["fits_profile"])
        return Verdict(item.answer, fits, score, None, None, f"{why}: {reason}")
    if kind == "judge_revision":
        update, deprecation = bool(reply["new_value_stated"]), not reply["old_value_asserted"]
        return Verdict(item.answer, update and deprecation, None, update, deprecation, reason)
    verdict = Verdict(item.answer, reply["verdict"] == "correct", None, None, None, reason)
    # A family asking what the memory must not know scores the inverse of a match (canary).
    turn = get_probe_family(item.probe["probe_type"]).verdict_of
    return turn(verdict, item.probe) if turn is not None else verdict


class LLMJudge:
    """Scores answers through one pinned model with strict structured output.

    Args:
        client: The judge model's client.
    """

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self._prompts = {name: load_prompt(name) for name in JUDGE_PROMPTS}
        self.prompt_sha256 = prompts_sha256(JUDGE_PROMPTS)

    @property
    def name(self) -> str:
        """``llm:<model>@<prompt sha256[:12]>``: the ``judge`` column's value."""
        return f"llm:{self.client.config.model}@{self.prompt_sha256[:12]}"

    def pin(self) -> dict[str, Any]:
        """The judge as the run manifest records it (no key, no credentials)."""
        return {
            "name": "llm",
            **self.client.config.pin(),
            "prompts": [f"evaluation/prompts/{name}.md" for name in JUDGE_PROMPTS],
            "prompt_sha256": self.prompt_sha256,
            "structured_output": "json_schema (strict)",
        }

    def messages(self, item: JudgeItem) -> list[dict[str, str]]:
        """The chat messages that ask for ``item``'s verdict."""
        return [
            {"role": "system", "content": self._prompts[_kind(item.probe)].text},
            {"role": "user", "content": _user_message(item)},
        ]

    def judge_many(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        """Judge every item (concurrently, through the cache), in order."""
        requests = []
        for item in items:
            kind = _kind(item.probe)
            requests.append(
                {
                    "messages": self.messages(item),
                    "prompt_version": f"{kind}:{self._prompts[kind].sha256}:{_FRAMING_VERSION}",
                    "max_tokens": JUDGE_MAX_TOKENS,
                    "json_schema": {"name": kind, "schema": _SCHEMAS[kind], "strict": True},
                }
            )
        replies = self.client.complete_many(requests)
        return [_judgement(item, reply) for item, reply in zip(items, replies, strict=True)]


def _judgement(item: JudgeItem, reply: Completion | LLMError) -> Judgement:
    if isinstance(reply, LLMError):
        return Judgement(None, f"judge: {reply}")
    kind = _kind(item.probe)
    try:
        parsed = parse_judge_reply(kind, reply.text)
    except ValueError as error:
        return Judgement(None, f"judge: unparsable reply: {error}")
    return Judgement(_verdict(item, kind, parsed))


class RuleJudge:
    """The context judge's rules applied to an answer's text (deterministic, no model)."""

    name: Final = f"{JUDGE_NAME}@{JUDGE_VERSION}"

    def pin(self) -> dict[str, Any]:
        """The judge as the run manifest records it."""
        return {"name": "rule", "version": JUDGE_VERSION, "applies_to": "reader answer"}

    def judge_many(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        """Judge every item's answer text with :func:`~._judge.judge_answer`."""
        return [Judgement(judge_answer(dict(item.probe), item.answer)) for item in items]
