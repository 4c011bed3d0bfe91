"""``drift bench``: the harness's own speed and memory, against its performance targets.

It drives every phase (world generation, the memory loop, evaluation, the Dagster path and the
whole suite), so it sits on the top floor next to the command line.
"""

from ._bench import BenchReport, Figure, parse_only, run_bench
from ._process import Measured, MeasuredFailure, run_measured
from ._targets import BUILT_INS, KEYS, TARGETS, Target
from ._worlds import BenchWorkspace, derive_horizon

__all__ = [
    "BUILT_INS",
    "KEYS",
    "TARGETS",
    "BenchReport",
    "BenchWorkspace",
    "Figure",
    "Measured",
    "MeasuredFailure",
    "Target",
    "derive_horizon",
    "parse_only",
    "run_bench",
    "run_measured",
]
