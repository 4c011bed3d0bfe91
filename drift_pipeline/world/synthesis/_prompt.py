"""The versioned synthesis prompts (``prompts/*.txt``) and how one session's prompt is built.

The prompt texts live in files shipped with the package. Their version is
:data:`PROMPT_VERSION` plus a hash of the files, so editing a prompt can never reuse replies
cached for the old wording.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from functools import cache
from importlib import resources

from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.entities import get_entity_type
from drift_pipeline.world._model import EntityState, Event, SessionPlan

from ._base import SessionContext
from ._template import PlannedSentence, SessionScript

PROMPT_VERSION = "synthesis-2"
"""Bumped by hand when the prompts change meaning (the file hash changes on any edit)."""

_PROMPT_FILES = (
    "session_system.txt",
    "session_user.txt",
    "brief_signal.txt",
    "brief_soft.txt",
    "brief_noise.txt",
    "plan.txt",
)
# Exchanges per session by verbosity: the template synthesizer's ranges, so both synthesizers
# write sessions of comparable length.
EXCHANGES = {"terse": (1, 3), "moderate": (2, 5), "verbose": (3, 7)}
_DEFAULT_STYLE: dict[str, object] = {
    "verbosity": "moderate",
    "formality": "neutral",
    "references_prior_context": 0.1,
}
_NOT_BACKGROUND = {"communication_style", "big_five", "capability_profile"}


@cache
def prompt_text(name: str) -> str:
    """One prompt file's text."""
    return (resources.files("drift_pipeline.world.synthesis") / "prompts" / name).read_text(
        encoding="utf-8"
    )


@cache
def prompt_sha256() -> str:
    """sha256 over every prompt file (name and text), in a fixed order."""
    digest = hashlib.sha256()
    for name in _PROMPT_FILES:
        digest.update(name.encode() + b"\0" + prompt_text(name).encode() + b"\0")
    return digest.hexdigest()


def full_prompt_version() -> str:
    """``synthesis-N+<hash prefix>``: what the cache key and the manifest record."""
    return f"{PROMPT_VERSION}+{prompt_sha256()[:12]}"


@dataclass(frozen=True)
class SessionPrompt:
    """One session's chat messages and the shape its reply must have."""

    messages: tuple[dict[str, str], ...]
    exchanges: int
    principal: str

    @property
    def max_turns(self) -> int:
        """The most turns a reply may have (a little slack over the exchanges asked for)."""
        return 2 * (self.exchanges + 2)


def principal_of(plan: SessionPlan, context: SessionContext) -> EntityState | None:
    """The session's human (the one whose messages are ``user`` turns), if any."""
    for entity_id in plan.participants:
        if context.profiles[entity_id].entity_type == "human":
            return context.profiles[entity_id]
    return None


def style_of(human: EntityState) -> dict[str, object]:
    """The human's communication style (the template synthesizer's defaults when absent)."""
    style = human.stable.get("communication_style", _DEFAULT_STYLE)
    return style if isinstance(style, dict) else _DEFAULT_STYLE


def build_prompt(
    plan: SessionPlan,
    context: SessionContext,
    human: EntityState,
    feedback: str | None = None,
    attempt: int = 0,
    script: SessionScript | None = None,
) -> SessionPrompt:
    """The messages asking for one session, constrained by profile, style, state and event.

    Random choices (length, decoys) come from a copy of the session's generator, so the prompt
    is reproducible and the session's own generator is left for a template fallback. A retry
    (``attempt`` > 0) carries the previous rejection's ``feedback``. With a ``script`` (the
    grammar's own writing of the session) the prompt lists its planned event and decoy
    sentences, so the model renders the same plan in its own words.
    """
    rng = random.Random()
    rng.setstate(context.rng.getstate())
    style = style_of(human)
    low, high = EXCHANGES.get(str(style.get("verbosity")), EXCHANGES["moderate"])
    exchanges = rng.randint(low, high)
    first_name = human.name.split()[0]
    agents = [p for p in plan.participants if p != human.entity_id]
    references = float(str(style.get("references_prior_context", 0.1)))
    fields = {
        "date": plan.sim_time.strftime("%A %d %B %Y, %H:%M"),
        "name": human.name,
        "verbosity": style.get("verbosity", "moderate"),
        "formality": style.get("formality", "neutral"),
        "references": "often" if references >= 0.3 else "sometimes" if references > 0 else "never",
        "background": _background(human),
        "state": _state(human, agents, context),
        "assistants": ", ".join(context.profiles[a].name for a in agents) or "none",
        "exchanges": exchanges,
        "brief": _brief(plan.event, human, first_name, context, rng),
    }
    user = prompt_text("session_user.txt").format(**fields).strip()
    if script is not None and script.planned:
        items = "\n".join(_plan_item(item, first_name) for item in script.planned)
        user += "\n\n" + prompt_text("plan.txt").format(items=items).strip()
    if feedback:
        # The attempt number keeps retries distinct even when the same reason repeats: a
        # deterministic endpoint would otherwise return the same rejected draft.
        user += (
            f"\n\nAttempt {attempt + 1}: an earlier draft was rejected: {feedback}. "
            "Write a new one that fixes this."
        )
    messages = (
        {"role": "system", "content": prompt_text("session_system.txt").strip()},
        {"role": "user", "content": user},
    )
    return SessionPrompt(messages, exchanges, human.entity_id)


def _background(human: EntityState) -> str:
    parts = []
    for key, value in sorted(human.stable.items()):
        if key in _NOT_BACKGROUND:
            continue
        text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        parts.append(f"{key.replace('_', ' ')}: {text}")
    return "; ".join(parts) or "none given"


def _slot_words(slot_name: str, label: str) -> str:
    family, _, key = slot_name.partition("/")
    if family == "opinion":
        return f"opinion on {vocab.OPINION_TOPICS.get(key, key.replace('_', ' '))}"
    if family == "preference" and key in vocab.PREFERENCE_DIMENSIONS:
        return f"preference in {vocab.PREFERENCE_DIMENSIONS[key][0]}"
    return label


def _state(human: EntityState, agents: list[str], context: SessionContext) -> str:
    lines = []
    for entity_id in (human.entity_id, *agents):
        profile = context.profiles[entity_id]
        for slot in get_entity_type(profile.entity_type).slots:
            if entity_id != human.entity_id and not slot.about_principal:
                continue
            held = context.current.get((entity_id, slot.name), ())
            if not held:
                continue
            words = _slot_words(slot.name, slot.label)
            where = "" if entity_id == human.entity_id else f" (known to {profile.name})"
            lines.append(f"- {words}{where}: {', '.join(held)}")
    return "\n".join(lines) or "- nothing on record"


def _change(event: Event, human: EntityState, first_name: str, context: SessionContext) -> str:
    subject = context.profiles[event.subject]
    slot = get_entity_type(subject.entity_type).slot(event.slot)
    words = _slot_words(slot.name, slot.label)
    value = f'"{event.value}"'
    if event.subject != human.entity_id:
        if slot.name == "completed_tasks":
            return f"{subject.name} has finished this task for {first_name}: {value}."
        return f"{first_name} tells {subject.name} a standing wish ({words}): {value}."
    if event.tier == "soft":
        return f"{words}: {value}."
    if event.op == "add":
        return f"{first_name}'s {words} now include {value}."
    was = f' (it was "{event.previous_value}")' if event.previous_value else ""
    return f"{first_name}'s {words} becomes {value}{was}."


def _brief(
    event: Event | None,
    human: EntityState,
    first_name: str,
    context: SessionContext,
    rng: random.Random,
) -> str:
    if event is None:
        return prompt_text("brief_noise.txt").format(
            first_name=first_name,
            count=rng.randint(1, 3),
            decoys=", ".join(f'"{d}"' for d in _decoys(human, context, rng)),
        )
    subject = context.profiles[event.subject]
    aliases = get_entity_type(subject.entity_type).slot(event.slot).value(event.value)
    noise = (
        "you may add one light distraction (small talk or a question about something else)."
        if rng.random() < 0.3
        else "keep the rest routine."
    )
    name = "brief_signal.txt" if event.tier == "signal" else "brief_soft.txt"
    return prompt_text(name).format(
        first_name=first_name,
        change=_change(event, human, first_name, context),
        phrases=" or ".join(f'"{a}"' for a in aliases.all_aliases()),
        noise=noise,
    )


def _decoys(human: EntityState, context: SessionContext, rng: random.Random) -> list[str]:
    """Values a distraction may use: often one the person really holds (fools naive memory)."""
    slots = [
        slot
        for slot in get_entity_type(human.entity_type).slots
        if "/" not in slot.name and slot.values
    ]
    picks: list[str] = []
    for slot in rng.sample(slots, min(3, len(slots))):
        held = context.current.get((human.entity_id, slot.name), ())
        picks.append(
            rng.choice(held) if held and rng.random() < 0.4 else rng.choice(slot.values).text
        )
    return picks


_POSITIONS = {
    "inline": "inside one of {name}'s requests about something else",
    "mid": "in the middle of a longer message of {name}'s, between routine remarks",
    "lead": "over two messages: {name} first says there is news, and gives it in the next one",
    "confirm": "when the assistant asks about it first ({before}) and {name} confirms it",
    "correct": "as a correction: in an earlier message {name} says {before}, and corrects it "
    "in the next one",
}
_ROLES = {
    "third_party": "news about someone else, not about {name}",
    "hypothetical": "a hypothetical, not a fact about {name}",
    "question": "a question {name} asks, as a message of its own",
    "sarcasm": "sarcasm or hyperbole that {name} does not mean",
    "small_talk": "small talk",
}


def _plan_item(item: PlannedSentence, first_name: str) -> str:
    """One line of the plan: what a planned sentence does, where it goes, and an example."""
    if item.role == "event":
        where = _POSITIONS[item.position].format(name=first_name, before=f'"{item.before}"')
        return f'- The change comes across {where}, for example: "{item.text}"'
    role = _ROLES.get(item.role, item.role).format(name=first_name)
    return f'- A distraction ({item.role}: {role}), for example: "{item.text}"'
