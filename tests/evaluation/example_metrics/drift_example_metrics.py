"""Two metrics outside the DRIFT suite: one module, one registration each.

``recall_accuracy`` is the share of recall probes answered correctly (a probe rate, so it also
has one row per checkpoint); ``empty_reads`` the share of retrievals that handed the reader an
empty context. Their computations are named as ``module:function`` strings, so this module is
imported when a cell is scored, not when the registry lists them.
"""

from __future__ import annotations

import numpy as np

from drift_pipeline.evaluation import CellInputs, MetricSpec, UnitRate

RECALL_ACCURACY = MetricSpec(
    name="recall_accuracy",
    label="Recall",
    unit="share",
    direction="higher",
    description="Recall probes answered correctly",
    headline=True,
    json=True,
    compare=True,
    metadata=True,
    compute="drift_example_metrics:recall_accuracy",
)

EMPTY_READS = MetricSpec(
    name="empty_reads",
    label="Empty reads",
    unit="share",
    direction="neutral",
    description="Retrievals that handed the reader an empty context",
    json=True,
    compute="drift_example_metrics:empty_reads",
)


def recall_accuracy(cell: CellInputs) -> UnitRate:
    """Per answer: 1 if correct; counted for recall probes the judge scored."""
    correct = cell.answers.column("correct").to_pylist()
    recall = np.array([t == "recall" for t in cell.answers.column("probe_type").to_pylist()])
    scored = np.array([c is not None for c in correct]) & cell.judged()
    return UnitRate("probe", [1.0 if c else 0.0 for c in correct], recall & scored)


def empty_reads(cell: CellInputs) -> UnitRate:
    """Per retrieval: 1 if the reader got no context tokens."""
    tokens = np.asarray(cell.retrievals.column("read_tokens").to_numpy(), dtype=np.float64)
    return UnitRate("retrieval", (tokens == 0).astype(np.float64))
