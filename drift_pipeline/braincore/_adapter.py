"""BrainCore adapters: loading one by ``MODULE[:Class]``, and any DRIFT backend seen as one.

A BrainCore adapter is any object with ``ingest(raw_memories)``,
``retrieve(query, top_k) -> list[dict]`` and ``storage_bytes() -> int``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast, runtime_checkable

from drift_pipeline._lazy import RegistryError, import_module_named

from ._dataset import BrainCoreError

__all__ = ["BrainCoreAdapter", "DriftBackendAdapter", "absolute_adapter_spec", "load_adapter"]

_METHODS = ("ingest", "retrieve", "storage_bytes")
DEFAULT_TOP_K = 5
"""``top_k`` of every ``retrieve`` call unless the caller says otherwise."""


@runtime_checkable
class BrainCoreAdapter(Protocol):
    """The BrainCore harness's adapter interface."""

    def ingest(self, raw_memories: list[dict[str, Any]]) -> None:
        """Store a batch of memory items (one session's)."""
        ...

    def retrieve(self, query: str, top_k: int = 1) -> list[dict[str, Any]]:
        """Return ranked memory items for ``query``."""
        ...

    def storage_bytes(self) -> int:
        """Report the current on-disk or in-memory footprint in bytes."""
        ...


def load_adapter(spec: str) -> BrainCoreAdapter:
    """Build the adapter named by ``spec``: ``MODULE[:Class]`` or ``FILE.py[:Class]``.

    ``MODULE`` is imported as Python would from the current folder (``src.baseline_adapter``
    works from the folder that holds ``src/``). Without ``:Class`` the module must define exactly
    one class with the adapter's three methods. The class is built without arguments.

    Args:
        spec: The adapter's module (or file) and optional class name.

    Returns:
        The adapter.

    Raises:
        BrainCoreError: One line: the module or class cannot be found, is ambiguous, lacks a
            method, or its constructor fails.
    """
    target, _, class_name = spec.partition(":")
    if not target:
        raise BrainCoreError(f"adapter {spec!r}: give MODULE[:Class] or FILE.py[:Class]")
    module = _import(spec, target)
    factory: Any
    if class_name:
        factory = getattr(module, class_name, None)
        if factory is None:
            raise BrainCoreError(f"adapter {spec!r}: {target} has no {class_name!r}")
    else:
        candidates = [
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if value.__module__ == module.__name__ and _has_methods(value)
        ]
        if len(candidates) != 1:
            found = ", ".join(c.__name__ for c in candidates) or "none"
            raise BrainCoreError(
                f"adapter {spec!r}: {target} defines {len(candidates)} adapter classes "
                f"({found}); name one as {target}:Class"
            )
        factory = candidates[0]
    try:
        adapter = factory()
    except Exception as error:
        raise BrainCoreError(
            f"adapter {spec!r}: building it raised {type(error).__name__}: {error}"
        ) from None
    missing = [m for m in _METHODS if not callable(getattr(adapter, m, None))]
    if missing:
        raise BrainCoreError(f"adapter {spec!r} has no {', '.join(missing)} method")
    return cast(BrainCoreAdapter, adapter)


def absolute_adapter_spec(spec: str, base: str | Path | None = None) -> str:
    """``spec`` with a relative ``FILE.py`` made absolute against ``base`` (the current folder).

    A sandboxed worker starts in a folder of its own, so a file named relative to the caller's
    folder must be fixed before the worker reads it. Module names pass unchanged.

    Args:
        spec: ``MODULE[:Class]`` or ``FILE.py[:Class]``.
        base: The folder a relative file is in; the current folder when ``None``.

    Returns:
        The spec, its file absolute.
    """
    target, separator, class_name = spec.partition(":")
    if not target.endswith(".py") or Path(target).is_absolute():
        return spec
    folder = Path.cwd() if base is None else Path(base)
    return f"{(folder / target).resolve()}{separator}{class_name}"


def not_items(returned: object) -> str | None:
    """What ``retrieve`` returned when it is not a list of dicts (``None`` when it is)."""
    if not isinstance(returned, list):
        return type(returned).__name__
    odd = next((i for i in returned if not isinstance(i, dict)), None)
    return None if odd is None else f"a list holding {type(odd).__name__}"


def _has_methods(cls: type) -> bool:
    return all(callable(getattr(cls, m, None)) for m in _METHODS)


def _import(spec: str, target: str) -> ModuleType:
    path = Path(target)
    if target.endswith(".py"):
        if not path.is_file():
            raise BrainCoreError(f"adapter {spec!r}: no such file {target}")
        name = f"braincore_adapter_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise BrainCoreError(f"adapter {spec!r}: cannot load {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        # The file's folder is importable, as for ``python FILE.py``: helpers beside it load.
        sys.path.insert(0, str(path.parent.resolve()))
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            raise BrainCoreError(
                f"adapter {spec!r}: importing it raised {type(error).__name__}: {error}"
            ) from None
        return module
    # As ``python src/evaluator.py --adapter src.baseline_adapter`` does from the repository root.
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return import_module_named(target, f"adapter {spec!r}")
    except RegistryError as error:
        raise BrainCoreError(str(error)) from None


class DriftBackendAdapter:
    """Any DRIFT memory backend seen through the BrainCore adapter interface.

    ``ingest`` stores one batch as one session whose messages are the memory items (said by the
    entity ``user``, at the item's time). ``retrieve`` asks the backend as that entity after the
    last session stored, and turns the context text it returns back into items: the stored items
    whose text occurs in it, in the order they occur there, each with its id; when none occurs
    verbatim (a backend that rewrites what it keeps), the whole context is one item. The
    context's own size stands: ``top_k`` is not applied.
    ``storage_bytes`` is the UTF-8 size of the backend's snapshot; a backend without
    ``snapshot()`` (the spec's three methods only) has no measured footprint
    (:attr:`measures_storage` is false) and is reported as not measured, never as zero.

    Args:
        backend: The backend (``drift_pipeline.memory.backends.load_backend`` builds one by name).
        name: Its name, for messages.
    """

    ENTITY = "user"
    """The one entity every memory item is said by, and the one that asks."""

    _NO_TIME = "1970-01-01T00:00:00"

    def __init__(self, backend: Any, name: str) -> None:
        self.backend = backend
        self.name = name
        self._runner = asyncio.Runner()
        self._items: list[dict[str, Any]] = []
        self._session = ""
        self._batches = 0

    def ingest(self, raw_memories: list[dict[str, Any]]) -> None:
        """Store the batch as one session of the backend."""
        session = str(raw_memories[0].get("session_id", "")) if raw_memories else ""
        self._session = session or f"braincore-{self._batches}"
        self._batches += 1
        messages = [
            {
                "speaker": self.ENTITY,
                "role": "user",
                "content": _text(item),
                "timestamp": str(item.get("timestamp") or self._NO_TIME),
            }
            for item in raw_memories
        ]
        self._items.extend(dict(item) for item in raw_memories)
        self._runner.run(self.backend.store(self._session, messages))

    def retrieve(self, query: str, top_k: int = 1) -> list[dict[str, Any]]:
        """The stored items the backend's context contains, in context order.

        ``top_k`` does not apply: a DRIFT backend sizes its own context, and all of it is what
        its reader would see.
        """
        context = self._runner.run(self.backend.retrieve(self._session, self.ENTITY, query))
        if not isinstance(context, str):
            raise BrainCoreError(
                f"backend {self.name!r} returned {type(context).__name__} from retrieve, not str"
            )
        found: list[tuple[int, int, dict[str, Any]]] = []
        for order, item in enumerate(self._items):
            text = _text(item)
            at = context.find(text) if text else -1
            if at >= 0:
                found.append((at, order, item))
        if not found:
            return [{"content": context}] if context.strip() else []
        found.sort(key=lambda f: (f[0], f[1]))
        return [dict(item) for _, _, item in found]

    @property
    def measures_storage(self) -> bool:
        """Whether the backend shows what it holds (``snapshot()``), so its size can be read."""
        return callable(getattr(self.backend, "snapshot", None))

    def storage_bytes(self) -> int:
        """UTF-8 bytes of the backend's snapshot.

        Raises:
            BrainCoreError: The backend has no ``snapshot()`` (see :attr:`measures_storage`).
        """
        if not self.measures_storage:
            raise BrainCoreError(f"backend {self.name!r} has no snapshot(): storage not measured")
        return len(str(self.backend.snapshot()).encode("utf-8"))

    def close(self) -> None:
        """Close the event loop the backend's calls ran on."""
        self._runner.close()


def _text(item: Mapping[str, Any]) -> str:
    value = item.get("content", item.get("text", ""))
    return value if isinstance(value, str) else ""
