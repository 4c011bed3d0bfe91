"""Paradigm generators: one per scenario paradigm, registered lazily by import path.

A paradigm generator writes one replicate of one horizon of a scenario's world: it takes the
validated scenario, the horizon, the replicate index and the synthesizer, and returns the
audited :class:`~drift_pipeline.world.WorldReplicate` (profiles, session plans, turns, facts,
probes). Everything around it is shared by every paradigm: seeding, worker processes, the five
tables, staging and the world manifest.

``user_assistant`` and ``multi_peer`` are registered here. A new paradigm is one module with its
generator and one registration, in-process (:func:`register_paradigm`) or from an installed package
through the ``drift_pipeline.paradigms`` entry-point group::

    [project.entry-points."drift_pipeline.paradigms"]
    coding_agent = "my_package.coding:generate_replicate"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from drift_pipeline._lazy import Registry, callable_entry

if TYPE_CHECKING:
    from drift_pipeline.scenario import HorizonName, ScenarioSpec

    from ._generate import WorldReplicate
    from .synthesis import Synthesizer

__all__ = [
    "PARADIGM_GROUP",
    "ParadigmGenerator",
    "paradigm_generator",
    "paradigm_names",
    "register_paradigm",
    "unregister_paradigm",
]

PARADIGM_GROUP = "drift_pipeline.paradigms"
"""Entry-point group through which installed packages register paradigm generators."""


class ParadigmGenerator(Protocol):
    """Writes one replicate of one horizon of a scenario's world, audited."""

    def __call__(
        self,
        spec: ScenarioSpec,
        horizon: HorizonName,
        replicate: int,
        synthesizer: Synthesizer,
    ) -> WorldReplicate:
        """Generate the replicate.

        Args:
            spec: The validated scenario (its ``paradigm`` is this generator's).
            horizon: The horizon.
            replicate: The replicate index (seeds derive from it).
            synthesizer: Writes the sessions' turns.

        Raises:
            AuditError: If a probe fails the answerability audit (a generator bug).
        """
        ...


def _generator(name: str, value: object) -> ParadigmGenerator:
    return cast(ParadigmGenerator, callable_entry(name, value))


_PARADIGMS: Registry[ParadigmGenerator] = Registry("paradigm", PARADIGM_GROUP, _generator)
_PARADIGMS.register("user_assistant", "drift_pipeline.world._generate:generate_user_assistant")
_PARADIGMS.register("multi_peer", "drift_pipeline.world.paradigms.multi_peer:generate_multi_peer")


def register_paradigm(name: str, generator: str | ParadigmGenerator) -> None:
    """Register the generator of paradigm ``name``.

    Args:
        name: The paradigm, as scenario files spell it (``coding_agent``).
        generator: The generator, or its import path ``"package.module:function"`` (imported
            when a world of that paradigm is first generated).

    Raises:
        RegistryError: The name or import path is malformed, or another generator is
            registered under ``name``.
    """
    _PARADIGMS.register(name, generator)


def unregister_paradigm(name: str) -> None:
    """Forget paradigm ``name`` (tests; missing is fine)."""
    _PARADIGMS.unregister(name)


def paradigm_names() -> list[str]:
    """The paradigms that have a generator, sorted."""
    return sorted(_PARADIGMS.names())


def paradigm_generator(name: str) -> ParadigmGenerator | None:
    """The generator of paradigm ``name``, imported on first use; ``None`` if none is registered.

    Raises:
        RegistryError: The registered import path cannot be resolved, or does not name a
            function (one line).
    """
    if name not in _PARADIGMS:
        return None
    return _PARADIGMS.get(name)
