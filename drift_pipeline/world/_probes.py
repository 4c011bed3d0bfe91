"""Probe generation from ground truth (spec §6, DESIGN §6), deterministic and capped."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from drift_pipeline.entities import EntityTypeDef, SlotDef, Value, get_entity_type
from drift_pipeline.scenario import ResolvedCheckpoint

from ._model import EntityState, Fact, Probe, ProbeOption, SessionPlan

_REVERSAL_FAMILIES = {"opinion", "preference", "workflow_preferences"}
_GROUP_ORDER = (
    ("revision", "fact_update"),
    ("revision", "preference_reversal"),
    ("revision", "belief_half_life"),
    ("recall", "fact"),
    ("recall", "relationship"),
    ("recall", "temporal"),
    ("recall", "negative"),
    ("action", "preference_driven"),
    ("action", "constraint_aware"),
    ("action", "style_adaptive"),
)


def date_aliases(moment: datetime) -> tuple[str, ...]:
    """Ways of writing a session's date that a reader may use: ISO first."""
    return (
        moment.strftime("%Y-%m-%d"),
        f"{moment.strftime('%B')} {moment.day}, {moment.year}",
        f"{moment.day} {moment.strftime('%B')} {moment.year}",
    )


class ProbeBuilder:
    """Builds the probes of every checkpoint of one world replicate."""

    def __init__(
        self,
        profiles: list[EntityState],
        plans: list[SessionPlan],
        facts: list[Fact],
        event_mentions: dict[str, int],
        rng: random.Random,
        cap: int,
        id_prefix: str,
    ) -> None:
        self.profiles = {profile.entity_id: profile for profile in profiles}
        self.types: dict[str, EntityTypeDef] = {
            p.entity_id: get_entity_type(p.entity_type) for p in profiles
        }
        self.principal = next((p for p in profiles if p.entity_type == "human"), profiles[0])
        self.plans = plans
        self.facts = facts
        # Facts of each (subject, slot), in fact order: probes look them up for every candidate.
        self.by_key: dict[tuple[str, str], list[Fact]] = {}
        for fact in facts:
            self.by_key.setdefault((fact.subject, fact.slot), []).append(fact)
        self.event_mentions = event_mentions
        self.rng = rng
        self.cap = cap
        self.prefix = id_prefix

    # -- helpers -----------------------------------------------------------------------------

    def _first_name(self, entity_id: str) -> str:
        return self.profiles[entity_id].name.split()[0]

    def _question(self, template: str, subject: str) -> str:
        principal = self._first_name(self.principal.entity_id)
        return template.format(name=self._first_name(subject), principal=principal)

    def _asker(self, subject: str, session: int | None) -> str:
        if self.types[subject].name != "human":
            return subject  # an agent is asked about its own model of its principal
        participants = self.plans[session].participants if session is not None else ()
        for entity_id in participants:
            if self.types[entity_id].name != "human":
                return entity_id
        return next(e for e, t in self.types.items() if t.name != "human")

    def _slot(self, fact: Fact) -> SlotDef:
        return self.types[fact.subject].slot(fact.slot)

    def _unsaid(self, subject: str, slot: SlotDef, after: int) -> list[Value]:
        """Pool values the subject never held and no event turn before ``after`` ever said."""
        held = {f.value for f in self.by_key.get((subject, slot.name), ())}
        return [
            v
            for v in slot.values
            if v.text not in held and self.event_mentions.get(v.text, after) >= after
        ]

    def _closed_before(self, fact: Fact, after: int) -> list[Fact]:
        return [
            other
            for other in self.by_key[(fact.subject, fact.slot)]
            if other.valid_to is not None and other.valid_to < after and other.value != fact.value
        ]

    # -- probe families --------------------------------------------------------------------

    def _recall(self, fact: Fact, after: int) -> list[Probe]:
        slot = self._slot(fact)
        value = slot.value(fact.value)
        assert fact.source_session is not None
        deprecated = tuple(
            alias
            for old in self._closed_before(fact, after)
            for alias in slot.value(old.value).all_aliases()
        )
        asker = self._asker(fact.subject, fact.source_session)
        drafts = [
            Probe(
                "",  # the id is given once the checkpoint's probes are sampled
                after,
                "recall",
                slot.recall_subtype,
                asker,
                fact.subject,
                self._question(slot.question, fact.subject),
                value.text,
                value.all_aliases(),
                deprecated,
                (),
                None,
                None,
                fact.evidence_sessions,
                fact.event_id,
                "positive",
                fact.slot,
                fact.source_session,
                value.all_aliases(),
            )
        ]
        if slot.kind == "functional" and fact.tier == "signal":
            moment = self.plans[fact.source_session].sim_time
            who = "{principal}" if slot.about_principal else "{name}"
            question = f"On what date did {who} last tell you about a change in their {slot.label}?"
            drafts.append(
                Probe(
                    "",  # the id is given once the checkpoint's probes are sampled
                    after,
                    "recall",
                    "temporal",
                    asker,
                    fact.subject,
                    self._question(question, fact.subject),
                    date_aliases(moment)[0],
                    date_aliases(moment),
                    (),
                    (),
                    None,
                    None,
                    fact.evidence_sessions,
                    fact.event_id,
                    "positive",
                    fact.slot,
                    fact.source_session,
                    value.all_aliases(),
                )
            )
        return drafts

    def _negative(self, subject: str, slot: SlotDef, after: int) -> Probe | None:
        decoys = self._unsaid(subject, slot, after)
        if not decoys:
            return None
        decoy = self.rng.choice(decoys)
        who = "{principal}" if slot.about_principal else "{name}"
        template = (
            f"Has {who} ever told you that their {slot.label} is {decoy.text}?"
            if slot.kind == "functional"
            else f"Has {who} ever mentioned {decoy.text} among their {slot.label}?"
        )
        return Probe(
            "",  # the id is given once the checkpoint's probes are sampled
            after,
            "recall",
            "negative",
            self._asker(subject, after - 1),
            subject,
            self._question(template, subject),
            "no",
            decoy.all_aliases(),
            (),
            (),
            None,
            None,
            (),
            None,
            "negative",
            slot.name,
            None,
            decoy.all_aliases(),
        )

    def _action(self, fact: Fact, after: int) -> Probe | None:
        slot = self._slot(fact)
        frame = slot.action
        if frame is None:
            return None
        value = slot.value(fact.value)
        old = [
            slot.value(f.value)
            for f in self._closed_before(fact, after)
            if f.source_session is not None
        ]
        decoys = self._unsaid(fact.subject, slot, after)
        self.rng.shuffle(decoys)
        wrong = ([old[-1]] if old else []) + decoys[: 3 - min(len(old), 1)]
        options = [ProbeOption(frame.option.format(value=value.text), value.all_aliases(), 1)]
        options += [
            ProbeOption(frame.option.format(value=v.text), v.all_aliases(), -1) for v in wrong
        ]
        options.append(ProbeOption(frame.default_option, (), 0))
        self.rng.shuffle(options)
        # Option texts name the principal through the same placeholders as questions.
        options = [
            ProbeOption(self._question(o.text, fact.subject), o.terms, o.utility) for o in options
        ]
        correct = next(i for i, o in enumerate(options) if o.utility == 1)
        default = next(i for i, o in enumerate(options) if o.utility == 0 and not o.terms)
        return Probe(
            "",  # the id is given once the checkpoint's probes are sampled
            after,
            "action",
            frame.subtype,
            self._asker(fact.subject, fact.source_session),
            fact.subject,
            self._question(frame.question, fact.subject),
            options[correct].text,
            value.all_aliases(),
            tuple(a for v in old for a in v.all_aliases()),
            tuple(options),
            correct,
            default,
            fact.evidence_sessions,
            fact.event_id,
            "positive",
            fact.slot,
            fact.source_session,
            value.all_aliases(),
        )

    def _revision(self, new: Fact, old: Fact, previous_checkpoint: int, after: int) -> Probe:
        slot = self._slot(new)
        value = slot.value(new.value)
        assert new.source_session is not None
        family = new.slot.partition("/")[0]
        if new.source_session < previous_checkpoint:
            subtype = "belief_half_life"
        elif family in _REVERSAL_FAMILIES:
            subtype = "preference_reversal"
        else:
            subtype = "fact_update"
        return Probe(
            "",  # the id is given once the checkpoint's probes are sampled
            after,
            "revision",
            subtype,
            self._asker(new.subject, new.source_session),
            new.subject,
            self._question(slot.question, new.subject),
            value.text,
            value.all_aliases(),
            slot.value(old.value).all_aliases(),
            (),
            None,
            None,
            tuple(sorted({*old.evidence_sessions, *new.evidence_sessions})),
            new.event_id,
            "positive",
            new.slot,
            new.source_session,
            value.all_aliases(),
        )

    # -- per checkpoint ----------------------------------------------------------------------

    def checkpoint(self, checkpoint: ResolvedCheckpoint, previous: int) -> list[Probe]:
        """All probes of one checkpoint, sampled down to the cap with every group represented."""
        after = checkpoint.after_session
        valid = [f for f in self.facts if f.source_session is not None and f.valid_at(after)]
        groups: dict[tuple[str, str], list[Probe]] = {}

        def add(drafts: Iterable[Probe | None]) -> None:
            for draft in drafts:
                if draft is not None:
                    groups.setdefault((draft.probe_type, draft.subtype), []).append(draft)

        if "recall" in checkpoint.probe_types:
            for fact in valid:
                add(self._recall(fact, after))
            valid_keys = {(f.subject, f.slot) for f in valid}
            for subject, entity_type in self.types.items():
                for slot in entity_type.slots:
                    if (subject, slot.name) in valid_keys or self.rng.random() < 0.3:
                        add([self._negative(subject, slot, after)])
        if "action" in checkpoint.probe_types:
            add(self._action(fact, after) for fact in valid)
        if "revision" in checkpoint.probe_types:
            for new in valid:
                closed = [
                    f
                    for f in self._closed_before(new, after)
                    if f.source_session is not None and f.valid_to == new.valid_from
                ]
                if closed:
                    add([self._revision(new, closed[-1], previous, after)])

        return [
            replace(probe, probe_id=f"{self.prefix}c{after:05d}-{index:03d}")
            for index, probe in enumerate(self._sample(groups))
        ]

    def _sample(self, groups: dict[tuple[str, str], list[Probe]]) -> list[Probe]:
        """Round-robin over probe groups in a fixed order, each shuffled, up to the cap."""
        ordered = [groups[key] for key in _GROUP_ORDER if key in groups]
        for drafts in ordered:
            self.rng.shuffle(drafts)
        chosen: list[Probe] = []
        depth = 0
        while len(chosen) < self.cap and any(depth < len(d) for d in ordered):
            for drafts in ordered:
                if depth < len(drafts) and len(chosen) < self.cap:
                    chosen.append(drafts[depth])
            depth += 1
        return chosen
