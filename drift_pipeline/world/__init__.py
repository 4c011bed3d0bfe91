"""Phase 01, world generation: latent profiles, schedules, transcripts, ground truth, probes."""

from ._audit import AuditError, audit_probes
from ._generate import (
    GenerationUnsupported,
    WorldReplicate,
    check_supported,
    generate_replicate,
    session_id,
    world_tables,
)
from ._model import EntityState, Event, Fact, Probe, ProbeOption, SessionPlan, Turn
from ._paradigms import (
    PARADIGM_GROUP,
    ParadigmGenerator,
    paradigm_generator,
    paradigm_names,
    register_paradigm,
    unregister_paradigm,
)
from ._pool import close_workers
from ._rng import derive_seed, rng_for
from ._write import (
    PARALLEL_MIN_SESSIONS,
    WorldSummary,
    default_workers,
    generate_horizon,
    generate_worlds,
    world_manifest,
    world_manifest_path,
)

__all__ = [
    "PARADIGM_GROUP",
    "PARALLEL_MIN_SESSIONS",
    "AuditError",
    "EntityState",
    "Event",
    "Fact",
    "GenerationUnsupported",
    "ParadigmGenerator",
    "Probe",
    "ProbeOption",
    "SessionPlan",
    "Turn",
    "WorldReplicate",
    "WorldSummary",
    "audit_probes",
    "check_supported",
    "close_workers",
    "default_workers",
    "derive_seed",
    "generate_horizon",
    "generate_replicate",
    "generate_worlds",
    "paradigm_generator",
    "paradigm_names",
    "register_paradigm",
    "rng_for",
    "session_id",
    "unregister_paradigm",
    "world_manifest",
    "world_manifest_path",
    "world_tables",
]
