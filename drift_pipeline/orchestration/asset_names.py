"""Names of assets that other assets, checks and the launcher refer to.

Kept below ``defs/`` so an asset module names another asset without importing it.
"""

REFERENCE_MEMORY = "reference_memory"
"""The world-partitioned asset holding the reference compressor's memory run."""
WORLD_BASELINES = "world_baselines"
"""The world-partitioned asset scoring that run (and the amnesiac): every cell's baselines."""
CELL_COST_CURVE = "cell_cost_curve"
"""Asset holding one cell's rows of the ``cost_curves`` table (``cost_curves`` is the roll-up)."""
