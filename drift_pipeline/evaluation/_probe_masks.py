"""Which answer rows enter which metric: read from the probe families' ``feeds``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from drift_pipeline.world.probe_families import get_probe_family

__all__ = ["metric_masks"]

Mask = npt.NDArray[np.bool_]


def metric_masks(
    probe_type: npt.NDArray[np.object_], subtype: npt.NDArray[np.object_]
) -> Callable[[str], Mask]:
    """A function from a metric name to the rows whose (family, subtype) feeds that metric.

    Args:
        probe_type: Each answer row's ``probe_type``.
        subtype: Each answer row's ``subtype``.

    Raises:
        KeyError: Naming the registered families, if a row's ``probe_type`` is not one.
    """
    pairs = sorted({(str(t), str(s)) for t, s in zip(probe_type, subtype, strict=True)})
    families = {name: get_probe_family(name) for name in {t for t, _ in pairs}}
    rows = {pair: (probe_type == pair[0]) & (subtype == pair[1]) for pair in pairs}

    def feeding(metric: str) -> Mask:
        mask = np.zeros(probe_type.shape, dtype=np.bool_)
        for (name, sub), where in rows.items():
            if families[name].feeds_metric(metric, sub):
                mask |= where
        return mask

    return feeding
