"""Scenario specs: pydantic models, YAML loading with one-line errors, JSON Schema export."""

# Horizon names are the world keys' vocabulary (floor 0); scenario files use them.
from drift_pipeline.keys import HORIZON_NAMES, HorizonName

from ._errors import Problem, ScenarioError
from ._load import (
    LoadedScenario,
    load_scenario,
    parse_scenario,
    parse_scenario_text,
    scenario_files,
)
from ._resolve import (
    ResolvedCheckpoint,
    SessionTopology,
    checkpoints_for,
    principal_of,
    root_seed,
    topology_for,
)
from ._spec import (
    PARADIGM_PROBE_TYPES,
    CheckpointSpec,
    Horizons,
    HorizonSpec,
    ScenarioSpec,
    TopologyEntry,
)


def json_schema() -> dict[str, object]:
    """Return the JSON Schema of scenario files, for editors and external validators."""
    schema = ScenarioSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "DRIFT scenario"
    return schema


__all__ = [
    "HORIZON_NAMES",
    "PARADIGM_PROBE_TYPES",
    "CheckpointSpec",
    "HorizonName",
    "HorizonSpec",
    "Horizons",
    "LoadedScenario",
    "Problem",
    "ResolvedCheckpoint",
    "ScenarioError",
    "ScenarioSpec",
    "SessionTopology",
    "TopologyEntry",
    "checkpoints_for",
    "json_schema",
    "load_scenario",
    "parse_scenario",
    "parse_scenario_text",
    "principal_of",
    "root_seed",
    "scenario_files",
    "topology_for",
]
