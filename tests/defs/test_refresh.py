"""Planning runs: everything asked for in dependency order; only what is stale, stage by stage."""

from __future__ import annotations

from collections.abc import Mapping

from drift_pipeline.defs._steps import Ledger, Stage, Step, plan_cells, plan_refresh
from drift_pipeline.defs.partitions import CellKey, WorldKey
from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM

WORLD = WorldKey("s", "short")
BM25 = Arm.parse("bm25@hard")
SOFT = Arm.parse("bm25@soft:3")
ARMS = [REFERENCE_ARM, BM25, SOFT]


def cell(arm: Arm, world: WorldKey = WORLD) -> str:
    return CellKey(world, arm.key).partition_key


def ledger(
    worlds: Mapping[str, int] | None = None,
    memory: Mapping[str, int] | None = None,
    baselines: Mapping[str, int] | None = None,
    evaluations: Mapping[str, int] | None = None,
    leaderboard: int | None = None,
) -> Ledger:
    return Ledger(worlds or {}, memory or {}, baselines or {}, evaluations or {}, leaderboard)


def stages(steps: list[Step]) -> list[tuple[str, str | None]]:
    return [(s.stage.value, s.partition) for s in steps]


def current(world: WorldKey) -> str | None:
    return None


def test_plan_cells_runs_reference_and_baselines_first() -> None:
    steps = plan_cells([WORLD], [BM25, REFERENCE_ARM], lambda w: True)
    assert stages(steps) == [
        ("world_job", "s/short"),
        ("memory_job", cell(REFERENCE_ARM)),
        ("baselines_job", "s/short"),
        ("evaluation_job", cell(REFERENCE_ARM)),
        ("cell_job", cell(BM25)),
        ("leaderboard_job", None),
    ]
    again = plan_cells([WORLD], [BM25], lambda w: False, leaderboard=False)
    assert [s.stage for s in again] == [
        Stage.MEMORY,
        Stage.BASELINES,
        Stage.EVALUATION,
        Stage.CELL,
    ]


def test_refresh_advances_one_stage_per_tick() -> None:
    assert stages(plan_refresh([WORLD], ARMS, ledger(), current)) == [("world_job", "s/short")]
    state = ledger(worlds={"s/short": 10})
    assert stages(plan_refresh([WORLD], ARMS, state, current)) == [
        ("memory_job", cell(REFERENCE_ARM))
    ]
    state = ledger(worlds={"s/short": 10}, memory={cell(REFERENCE_ARM): 11})
    assert stages(plan_refresh([WORLD], ARMS, state, current)) == [("baselines_job", "s/short")]
    state = ledger(
        worlds={"s/short": 10}, memory={cell(REFERENCE_ARM): 11}, baselines={"s/short": 12}
    )
    assert stages(plan_refresh([WORLD], ARMS, state, current)) == [
        ("evaluation_job", cell(REFERENCE_ARM)),
        ("cell_job", cell(BM25)),
        ("cell_job", cell(SOFT)),
    ]


def test_refresh_finishes_with_the_leaderboard_and_then_rests() -> None:
    done = ledger(
        worlds={"s/short": 10},
        memory={cell(REFERENCE_ARM): 11, cell(BM25): 13, cell(SOFT): 14},
        baselines={"s/short": 12},
        evaluations={cell(REFERENCE_ARM): 15, cell(BM25): 16, cell(SOFT): 17},
    )
    assert stages(plan_refresh([WORLD], ARMS, done, current)) == [("leaderboard_job", None)]
    rested = Ledger(done.worlds, done.memory, done.baselines, done.evaluations, 18)
    assert plan_refresh([WORLD], ARMS, rested, current) == []


def test_stale_inputs_rerun_only_what_depends_on_them() -> None:
    # The baselines were rescored after bm25's evaluation: only the evaluation reruns.
    state = ledger(
        worlds={"s/short": 10},
        memory={cell(REFERENCE_ARM): 11, cell(BM25): 12},
        baselines={"s/short": 20},
        evaluations={cell(REFERENCE_ARM): 21, cell(BM25): 13},
        leaderboard=30,
    )
    steps = plan_refresh([WORLD], [REFERENCE_ARM, BM25], state, current)
    assert stages(steps) == [("evaluation_job", cell(BM25))]
    assert steps[0].run_key == f"evaluation_job:{cell(BM25)}:20"
    # A changed scenario file regenerates the world, whatever was there.
    steps = plan_refresh([WORLD], ARMS, state, lambda w: "scenario-abc123")
    assert stages(steps) == [("world_job", "s/short")]
    assert steps[0].run_key == "world_job:s/short:scenario-abc123@10"


def test_run_keys_are_stable_per_input_version() -> None:
    state = ledger(worlds={"s/short": 10})
    first = plan_refresh([WORLD], ARMS, state, current)
    assert first == plan_refresh([WORLD], ARMS, state, current)
    later = plan_refresh([WORLD], ARMS, ledger(worlds={"s/short": 40}), current)
    assert first[0].run_key != later[0].run_key
