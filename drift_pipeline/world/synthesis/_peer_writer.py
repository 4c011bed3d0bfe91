"""Sessions of several peers: who speaks when (the interaction pattern), in many voices.

A multi-peer session is written in two passes. First its *skeleton*: the order of speakers its
pattern gives (spec §4.1): ``linear`` (the lead and one responder take turns), ``broadcast``
(the lead posts, every other participant answers), ``mesh`` (rounds in which everyone speaks),
``hierarchical`` (the lead briefs an orchestrator, who delegates to each worker and reports
back) and ``async`` (everyone's messages interleaved in no fixed order). Every participant
speaks at least once, so the speakers of a session are its participants. Then the *content*:
routine requests and replies, the event (from the phrasing grammar, in the voice of the person
it is about, or of the principal for an agent's state), a canary disclosure, a decision and its
acceptance, hand-over lines for a newcomer, decoys in people's turns and tool output after
agents' turns (role ``tool``, mostly noise).
"""

from __future__ import annotations

from bisect import bisect
from dataclasses import dataclass, field

from drift_pipeline.entities import get_entity_type
from drift_pipeline.world._model import EntityState, SessionPlan, Turn
from drift_pipeline.world._peer_model import Briefing, Canary, Decision

from . import _templates as t
from ._base import SessionContext
from ._template import (
    _NEEDS_PREVIOUS,
    _NOISE_CUMULATIVE,
    _NOISE_KINDS,
    _TASKS,
    _TYPO_RATE,
    TemplateSynthesizer,
    Uniform,
    _cap,
    _NoiseFills,
    _pick,
    _task_exchange,
)
from ._tool_output import tool_output

__all__ = ["PeerSession", "PeerVoices", "write_peer_session"]

_AGENTIC = frozenset({"coding_agent", "tool_agent"})
_DEFAULT_STYLE: dict[str, object] = {"verbosity": "moderate", "formality": "neutral"}
_ROUNDS = {"terse": 1, "moderate": 2, "verbose": 3}


@dataclass(frozen=True)
class PeerVoices:
    """The words of multi-peer sessions (from the paradigm's vocabulary).

    Attributes:
        proposals: How a decision is proposed (``{v}``, ``{topic}``).
        agreements: How it is accepted.
        briefing_leads: How a hand-over line opens (``{newcomer}``, ``{c}``).
        briefings: A holding fact restated, per slot family (``{v}``, ``{topic}``, ``{fp}``).
        agent_tasks: An agent's routine (request, reply) pairs.
        task_fills: Fills of the task lines.
        agent_acks: Short replies of an agent with nothing else to say.
        delegations: How an orchestrator hands a task on (``{worker}``, ``{task}``).
        topics: Opinion topic key → words.
    """

    proposals: tuple[str, ...]
    agreements: tuple[str, ...]
    briefing_leads: tuple[str, ...]
    briefings: dict[str, str]
    agent_tasks: tuple[tuple[str, str], ...]
    task_fills: dict[str, tuple[str, ...]]
    agent_acks: tuple[str, ...]
    delegations: tuple[str, ...]
    topics: dict[str, str]


@dataclass(frozen=True)
class PeerSession:
    """What one session of a multi-peer world must carry besides its event.

    Attributes:
        principal: Who voices agents' changes and leads sessions it attends.
        canary: A canary disclosed in it, if any.
        decision: A decision agreed in it, if any.
        briefings: Facts restated to newcomers in it.
        names: How each entity is called (first name of a person, an agent's display name).
    """

    principal: str
    canary: Canary | None
    decision: Decision | None
    briefings: tuple[Briefing, ...]
    names: dict[str, str]


@dataclass
class _Draft:
    """A turn being written."""

    speaker: str
    role: str
    parts: list[str] = field(default_factory=list)
    label: str | None = None
    kind: str = "task"


class _Session:
    def __init__(
        self,
        plan: SessionPlan,
        context: SessionContext,
        extras: PeerSession,
        voices: PeerVoices,
    ) -> None:
        self.plan, self.context, self.extras, self.voices = plan, context, extras, voices
        self.u: Uniform = context.rng.random
        self.profiles = context.profiles
        present = plan.participants
        self.people = {e for e in present if self._type(e) == "human" or e == extras.principal}
        humans = [e for e in present if self._type(e) == "human"]
        self.lead = (
            extras.principal
            if extras.principal in present
            else (humans[0] if humans else present[0])
        )
        self.agents = [e for e in present if e not in self.people]
        self.turns: list[_Draft] = []

    def _type(self, entity: str) -> str:
        return self.profiles[entity].entity_type

    def _role(self, entity: str) -> str:
        return "user" if entity in self.people else "assistant"

    def _style(self, entity: str) -> dict[str, object]:
        style = self.profiles[entity].stable.get("communication_style")
        return dict(style) if isinstance(style, dict) else _DEFAULT_STYLE

    # --- skeleton --------------------------------------------------------------------------

    def skeleton(self) -> list[str]:
        u, lead = self.u, self.lead
        others = [e for e in self.plan.participants if e != lead]
        rounds = _ROUNDS[str(self._style(lead).get("verbosity", "moderate"))]
        pattern = self.plan.pattern
        order: list[str] = []
        if pattern == "broadcast":
            for _ in range(rounds):
                order += [lead, *others]
        elif pattern == "mesh":
            for _ in range(max(2, rounds)):
                order += [lead, *others]
        elif pattern == "hierarchical" and len(self.agents) >= 2:
            orchestrator, workers = self.agents[0], self.agents[1:]
            order = [lead, orchestrator]
            for worker in workers:
                order += [orchestrator, worker]
            order += [orchestrator, lead]
            order += [e for e in others if e not in order]
        elif pattern == "async":
            order = [lead] + [e for e in self.plan.participants for _ in range(1 + int(u() * 2))]
            head, rest = order[:1], order[1:]
            for i in range(len(rest) - 1, 0, -1):  # a seeded shuffle of everyone's messages
                j = int(u() * (i + 1))
                rest[i], rest[j] = rest[j], rest[i]
            order = head + rest
        else:  # linear: the lead and one responder at a time, A -> B -> A
            responders = others or [lead]
            for index in range(rounds + 1):
                order += [lead, responders[index % len(responders)]]
            order += [e for e in others if e not in order]
        return order

    # --- content ---------------------------------------------------------------------------

    def write(self) -> list[_Draft]:
        u = self.u
        reply: str | None = None
        hierarchical = self.plan.pattern == "hierarchical" and len(self.agents) >= 2
        order = self.skeleton()
        for position, speaker in enumerate(order):
            draft = _Draft(speaker, self._role(speaker))
            if speaker in self.people:
                request, reply = self._request(speaker)
                draft.parts.append(request)
            elif hierarchical and speaker == self.agents[0] and reply is None:
                task, reply = self._agent_task()
                # The task goes to the worker who answers next.
                worker = next(
                    (e for e in order[position + 1 :] if e in self.agents[1:]), self.agents[1]
                )
                template = _pick(u, self.voices.delegations)
                draft.parts.append(template.format(worker=self.extras.names[worker], task=task))
            else:
                if reply is None:
                    # An agent with nothing to answer acknowledges, or (a tool-using agent)
                    # reports on work of its own.
                    agentic = self._type(speaker) in _AGENTIC and u() < 0.6
                    reply = self._agent_task()[1] if agentic else _pick(u, self.voices.agent_acks)
                draft.parts.append(reply)
                reply = None
            self.turns.append(draft)
            if speaker not in self.people and self._type(speaker) in _AGENTIC and u() < 0.5:
                self.turns.append(_Draft(speaker, "tool", [tool_output(u)], kind="tool"))
        return self.turns

    def _request(self, speaker: str) -> tuple[str, str]:
        if self._type(speaker) == "human":
            return _task_exchange(self.u, _TASKS[int(self.u() * len(_TASKS))])
        return self._agent_task()

    def _agent_task(self) -> tuple[str, str]:
        u = self.u
        request, answer = self.voices.agent_tasks[int(u() * len(self.voices.agent_tasks))]
        fills = {name: _pick(u, pool) for name, pool in self.voices.task_fills.items()}
        fills["n"] = str(2 + int(u() * 180))
        return request.format_map(fills), answer.format_map(fills)

    # --- statements ------------------------------------------------------------------------

    def _turn_of(self, speaker: str, after: int = -1) -> int:
        """Index of a turn of ``speaker`` after ``after`` free of labels; added when none is."""
        for index, draft in enumerate(self.turns):
            free = draft.label is None and draft.role != "tool"
            if index > after and draft.speaker == speaker and free:
                return index
        position = len(self.turns)
        self.turns.append(_Draft(speaker, self._role(speaker)))
        return position

    def _say(self, speaker: str, sentence: str, label: str, kind: str) -> int:
        index = self._turn_of(speaker)
        draft = self.turns[index]
        if self.u() < 0.5:
            draft.parts.insert(0, sentence)
        else:
            draft.parts.append(sentence)
        draft.label, draft.kind = label, kind
        return index

    def event(self, synthesizer: TemplateSynthesizer) -> None:
        event = self.plan.event
        if event is None:
            return
        voice = event.subject if self._type(event.subject) == "human" else self.extras.principal
        if voice not in self.plan.participants:
            voice = self.lead
        profile = self.profiles[voice]
        typo_rate = _TYPO_RATE[str(self._style(voice).get("formality", "neutral"))]
        written = synthesizer._event_text(
            event, profile, self.context, synthesizer._tables, typo_rate, self.u
        )
        index = self._turn_of(voice, after=0 if written.family.position in _NEEDS_PREVIOUS else -1)
        draft = self.turns[index]
        draft.parts.insert(0, written.sentence)
        draft.label, draft.kind = event.event_id, "event"
        if written.before:
            # A confirmation answers an agent's question; a lead-in or a restated old value
            # is the speaker's own earlier line.
            asker = (
                self.agents[0] if written.family.position == "confirm" and self.agents else voice
            )
            self.turns.insert(index, _Draft(asker, self._role(asker), [written.before]))
            index += 1
        self._acknowledge(index)

    def _acknowledge(self, index: int) -> None:
        for draft in self.turns[index + 1 :]:
            if draft.role == "assistant" and draft.label is None:
                draft.parts.insert(0, _pick(self.u, t.ACKS))
                draft.kind = "ack"
                return

    def canary(self) -> None:
        canary = self.extras.canary
        if canary is None:
            return
        sentence = _cap(self._canary_sentence(canary)) + "."
        self._say(canary.owner, sentence, canary.canary_id, "canary")

    def _canary_sentence(self, canary: Canary) -> str:
        frames = get_entity_type(self._type(canary.owner)).canaries
        frame = next(f for f in frames if f.key == canary.key)
        return _pick(self.u, frame.statements).format(v=canary.value)

    def decision(self) -> None:
        decision = self.extras.decision
        if decision is None:
            return
        # A proposal and its acceptances are turns of their own, one after another: what a
        # decision says is never mixed with the routine chatter around it.
        u = self.u
        fills = {"v": decision.value, "topic": decision.topic_label}
        at = 1 + int(u() * len(self.turns))  # after the lead's opening turn
        said = [
            _Draft(
                decision.proposer,
                self._role(decision.proposer),
                [_pick(u, self.voices.proposals).format_map(fills)],
                decision.decision_id,
                "decision",
            )
        ]
        for entity in self.plan.participants:
            if entity != decision.proposer:
                agreement = _cap(_pick(u, self.voices.agreements).format_map(fills))
                said.append(
                    _Draft(entity, self._role(entity), [agreement], decision.decision_id, "agree")
                )
        self.turns[at:at] = said

    def briefings(self) -> None:
        for briefing in self.extras.briefings:
            family, _, key = briefing.slot.partition("/")
            fills = {
                "v": briefing.value,
                "topic": self.voices.topics.get(key, key.replace("_", " ")),
                "fp": _pick(self.u, t.FIRST_PERSON.get(briefing.value, (briefing.value,))),
            }
            line = self.voices.briefings[family].format_map(fills)
            lead = _pick(self.u, self.voices.briefing_leads)
            sentence = _cap(lead.format(newcomer=self.extras.names[briefing.newcomer], c=line))
            self._say(briefing.speaker, sentence, briefing.briefing_id, "briefing")

    def noise(self, synthesizer: TemplateSynthesizer) -> None:
        humans = [e for e in self.plan.participants if self._type(e) == "human"]
        if not humans:
            return  # agents' sessions are noisy through their tool output
        u = self.u
        count = 1 + int(u() * 3) if self.plan.event is None else int(u() < 0.3)
        for _ in range(count):
            speaker = humans[int(u() * len(humans))]
            free = [i for i, d in enumerate(self.turns) if d.speaker == speaker and d.label is None]
            if not free:
                return
            index = free[int(u() * len(free))]
            fills = _NoiseFills(u, self.context.current, speaker)
            kind = _NOISE_KINDS[bisect(_NOISE_CUMULATIVE, u() * _NOISE_CUMULATIVE[-1])]
            typo = _TYPO_RATE[str(self._style(speaker).get("formality", "neutral"))]
            _, sentence = synthesizer._noise_sentence(synthesizer._tables.decoys[kind], fills, typo)
            self.turns[index].parts.insert(0, sentence)
            self.turns[index].kind = kind


def write_peer_session(
    plan: SessionPlan,
    context: SessionContext,
    extras: PeerSession,
    voices: PeerVoices,
    synthesizer: TemplateSynthesizer,
) -> list[Turn]:
    """Write one multi-peer session: its pattern's skeleton, then everything it carries.

    Draws only from ``context.rng``, in a fixed order, so a session is a function of its plan,
    its extras and its seed.
    """
    session = _Session(plan, context, extras, voices)
    session.write()
    session.event(synthesizer)
    session.canary()
    session.decision()
    session.briefings()
    session.noise(synthesizer)
    turns: list[Turn] = []
    for index, draft in enumerate(session.turns):
        text = " ".join(part for part in draft.parts if part)
        turns.append(
            Turn(
                plan.session_index, index, draft.speaker, draft.role, text, draft.label, draft.kind
            )
        )
    return turns


def display_names(profiles: dict[str, EntityState]) -> dict[str, str]:
    """How each entity is called in speech: a person's first name, an agent's display name."""
    return {
        entity: profile.name.split()[0] if profile.entity_type == "human" else profile.name
        for entity, profile in profiles.items()
    }
