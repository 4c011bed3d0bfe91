"""Metrics a world's data cannot support: undefined rows, never zeros, and the list kept."""

from __future__ import annotations

import numpy as np

from drift_pipeline.evaluation import CellMetrics, MetricRow, Sample, mark_not_applicable


def test_marked_metrics_lose_their_values_and_others_keep_theirs() -> None:
    metrics = CellMetrics(
        rows=(
            MetricRow("drift_c", None, 0.4, 0.3, 0.5, 12),
            MetricRow("drift_c", 3, 0.2, 0.1, 0.3, 6),
            MetricRow("mvot", None, 0.6, 0.5, 0.7, 12),
            MetricRow("drift_c_lift", None, 0.2, 0.1, 0.3, 12),
        ),
        samples={
            "drift_c": Sample(0.4, np.full(3, 0.4), 12),
            "drift_c_lift": Sample(0.2, np.full(3, 0.2), 12),
            "mvot": Sample(0.6, np.full(3, 0.6), 12),
        },
    )
    marked = mark_not_applicable(metrics, ["drift_c"])
    assert marked.get("drift_c") == MetricRow("drift_c", None, None, None, None, 0)
    assert marked.get("drift_c", 3) == MetricRow("drift_c", 3, None, None, None, 0)
    assert marked.get("mvot") == metrics.get("mvot")
    assert marked.samples["drift_c"].value is None
    assert np.isnan(marked.samples["drift_c"].draws).all()
    # No DRIFT-C, no lift over the amnesiac's DRIFT-C.
    assert marked.get("drift_c_lift") == MetricRow("drift_c_lift", None, None, None, None, 0)
    assert marked.not_applicable == {"drift_c", "drift_c_lift"}
    assert mark_not_applicable(metrics, []) is metrics
