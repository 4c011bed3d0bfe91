"""Which stored worlds are out of date, read from the instance's materialization records.

The ``changed_scenarios`` sensor requests a regeneration for each world found here; the
nightly schedule compares its inputs' latest records with the leaderboard's.
"""

import dagster as dg

from drift_pipeline.pipeline import world_is_current

from .partitions import WORLD, WorldKey
from .resources import DriftStorage, ScenarioCatalog


def latest_materializations(instance: dg.DagsterInstance, asset: str) -> dict[str, int]:
    """The latest materialization's event storage id of each partition of ``asset``."""
    return dict(
        instance.get_latest_storage_id_by_partition(
            dg.AssetKey(asset), dg.DagsterEventType.ASSET_MATERIALIZATION
        )
    )


def changed_worlds(
    instance: dg.DagsterInstance, storage: DriftStorage, scenarios: ScenarioCatalog
) -> list[dg.RunRequest]:
    """A ``world_job`` request for every generated world whose stored tables are not current.

    Each request's run key names the scenario file's content and the world's materialization,
    so a world is regenerated once per change of its file.
    """
    known = {source.id: source for source in scenarios.scenarios()}
    generated = latest_materializations(instance, "probes")
    registered = set(instance.get_dynamic_partitions(WORLD))
    root = storage.path()
    requests = []
    for key, storage_id in sorted(generated.items()):
        world = WorldKey.parse(key)
        source = known.get(world.source_id)
        if key not in registered or source is None:
            continue
        if not world_is_current(root, source, world.horizon):
            run_key = f"world_job:{key}:scenario-{source.content_hash[:12]}@{storage_id}"
            requests.append(dg.RunRequest(run_key=run_key, partition_key=key))
    return requests
