"""Probe generation from ground truth (spec §6), deterministic and capped.

The registered probe families (:mod:`.probe_families`) generate the candidates, in registration
order, from one random stream; this module keeps what is common to all of them: which families a
checkpoint asks for, the grouping by (family, subtype), the sampling down to the cap and the ids.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace

from drift_pipeline.scenario import ResolvedCheckpoint

from ._model import EntityState, Fact, Probe, SessionPlan
from ._peer_model import PeerWorld
from .probe_families import (
    CheckpointFacts,
    ProbeContext,
    ProbeFamily,
    get_probe_family,
    probe_families,
)

_Group = tuple[str, str]  # (probe_type, subtype)


class ProbeBuilder:
    """Builds the probes of every checkpoint of one world replicate.

    Args:
        profiles: Every entity's latent profile.
        plans: The session plans, by session index.
        facts: Every latent fact, in fact order.
        event_mentions: First session whose event turn says each value text.
        rng: The probe stream of this replicate (candidate draws, then sampling).
        cap: Probes per checkpoint at most.
        id_prefix: Prefix of every probe id.
        peer: A multi-peer world's canaries, decisions and hand-overs.
        principal: The entity questions about a principal name (default: the first human).
    """

    def __init__(
        self,
        profiles: list[EntityState],
        plans: list[SessionPlan],
        facts: list[Fact],
        event_mentions: dict[str, int],
        rng: random.Random,
        cap: int,
        id_prefix: str,
        peer: PeerWorld | None = None,
        principal: str | None = None,
    ) -> None:
        self.context = ProbeContext(
            profiles, plans, facts, event_mentions, rng, peer=peer, principal=principal
        )
        self.rng = rng
        self.cap = cap
        self.prefix = id_prefix

    def checkpoint(self, checkpoint: ResolvedCheckpoint, previous: int) -> list[Probe]:
        """All probes of one checkpoint, sampled down to the cap with every group represented."""
        after = checkpoint.after_session
        valid = tuple(
            f for f in self.context.facts if f.source_session is not None and f.valid_at(after)
        )
        facts = CheckpointFacts(after, previous, valid)
        unsettled = self.context.unsettled(after)
        groups: dict[_Group, list[Probe]] = {}

        def add(family: ProbeFamily, drafts: Iterable[Probe | None]) -> None:
            for draft in drafts:
                if draft is None:
                    continue
                if draft.probe_type != family.name:
                    raise ValueError(
                        f"probe family {family.name!r} generated a probe of type "
                        f"{draft.probe_type!r}; its probes must have probe_type {family.name!r}"
                    )
                # Drawn and then dropped (not skipped before drawing), so a family's draws
                # from the shared stream do not depend on which slots are unsettled.
                if (draft.subject, draft.slot) in unsettled and family.asks_current_value(
                    draft.subtype
                ):
                    continue
                groups.setdefault((draft.probe_type, draft.subtype), []).append(draft)

        # Registration order is the order of draws from the stream: never reorder it.
        for family in probe_families():
            if family.name in checkpoint.probe_types:
                add(family, family.generate(self.context, facts))

        # A family may tag its drafts (their ``probe_id``): the tag ends the id, so probes
        # that belong together (asked of every participant of one session) can be found.
        return [
            replace(
                probe,
                probe_id=f"{self.prefix}c{after:05d}-{index:03d}"
                + (f"-{probe.probe_id}" if probe.probe_id else ""),
            )
            for index, probe in enumerate(self._sample(groups))
        ]

    def all_checkpoints(self, checkpoints: Iterable[ResolvedCheckpoint]) -> list[Probe]:
        """The probes of every checkpoint of a horizon, in order."""
        probes: list[Probe] = []
        previous = 0
        for checkpoint in checkpoints:
            probes.extend(self.checkpoint(checkpoint, previous))
            previous = checkpoint.after_session
        return probes

    def _sample(self, groups: dict[_Group, list[Probe]]) -> list[Probe]:
        """Round-robin over probe groups in a fixed order, each shuffled, up to the cap."""
        order = _group_order()
        undeclared = sorted(set(groups) - set(order))
        if undeclared:
            probe_type, subtype = undeclared[0]
            declared = ", ".join(get_probe_family(probe_type).subtypes)
            raise ValueError(
                f"probe family {probe_type!r} generated subtype {subtype!r}, which it does not "
                f"declare (declared: {declared})"
            )
        ordered = [groups[key] for key in order if key in groups]
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


def _group_order() -> list[_Group]:
    """Every declared (family, subtype) group: families by sampling rank, subtypes as declared."""
    ranked = sorted(probe_families(), key=lambda family: family.sampling_rank)
    return [(family.name, subtype) for family in ranked for subtype in family.subtypes]
