"""World sources: where worlds come from, generated from scenarios or imported from datasets.

Every source writes the same five world tables, so everything downstream takes sources:
:class:`ScenarioSource` generates a scenario file's worlds with its paradigm's registered
generator, :class:`TableSource` holds the rows an importer read from a dataset, and
:func:`open_source` opens ``PREFIX:PATH`` with the importer registered under the prefix (a
plain path is a scenario file or folder).
"""

from ._base import ProgressHook, SourceEntity, SourceError, SourceWorld, WorldSource
from ._registry import (
    SOURCE_GROUP,
    SourceLoader,
    data_path,
    imported_source_name,
    names_imported_data,
    open_scenarios,
    open_source,
    open_sources,
    register_source,
    source_prefixes,
    unregister_source,
)
from ._scenario import ScenarioSource
from ._tables import Rows, TableSource
from ._write import write_worlds

__all__ = [
    "SOURCE_GROUP",
    "ProgressHook",
    "Rows",
    "ScenarioSource",
    "SourceEntity",
    "SourceError",
    "SourceLoader",
    "SourceWorld",
    "TableSource",
    "WorldSource",
    "data_path",
    "imported_source_name",
    "names_imported_data",
    "open_scenarios",
    "open_source",
    "open_sources",
    "register_source",
    "source_prefixes",
    "unregister_source",
    "write_worlds",
]
