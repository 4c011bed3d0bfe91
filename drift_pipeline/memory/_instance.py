"""Backend instances across the worker boundary: packed in the harness, rebuilt in the worker.

A backend given as an object (``DriftHarness(backend=MyBackend())``) runs like a named one: in
its own sandboxed worker process, under the same gate, timeouts and fault recording. The
harness serialises the object with cloudpickle when it is handed over; the bytes travel in the
worker's ``init`` request over the protocol pipe (no file the unprivileged worker would have to
read), and the worker unpickles them after isolation, so the instance's own code, like any
backend's, only ever runs inside the sandbox.

What travels by value: classes and functions defined in ``__main__`` (a script) and in any
module loaded from outside the installed environment (a project's own files, which the worker,
running as another user in a namespace that may hide them, cannot be expected to import).
Installed packages, the standard library and ``drift_pipeline`` are imported by the worker as
usual, so they must be installed in the harness's environment.
"""

from __future__ import annotations

import base64
import inspect
import os
import pickle
import re
import site
import sys
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ._protocol import REQUIRED_METHODS, MemoryBackend

INSTANCE_OPTION = "__drift_backend_instance__"
"""Key of the packed instance in a worker's options (never a constructor option)."""

ARM_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
"""What an instance's arm name must look like: the pattern of registered backend names."""

_REQUIRED_METHODS = REQUIRED_METHODS
_ASYNC_METHODS = ("store", "retrieve")
# cloudpickle's by-value registry is process-wide: one packing at a time changes it.
_REGISTRY_LOCK = threading.Lock()


@dataclass(frozen=True)
class BackendInstance:
    """A backend object, packed for its workers.

    Attributes:
        name: The arm's backend name (see :func:`instance_name`).
        class_path: ``module:QualName`` of the object's class, for messages.
        payload: The cloudpickle bytes; every worker (each replicate, each restart after a
            timeout or crash) starts from a copy of the object as it was when packed.
    """

    name: str
    class_path: str
    payload: bytes

    def worker_options(self) -> dict[str, Any]:
        """The options that make a worker rebuild this instance instead of constructing one."""
        return {INSTANCE_OPTION: base64.b64encode(self.payload).decode("ascii")}


def instance_name(backend: object) -> str:
    """The arm name of a backend object: its ``name`` attribute, else its class name lower-cased.

    Raises:
        ValueError: One line naming the class, when the name is not ``[a-z][a-z0-9_]*``.
    """
    cls = type(backend)
    declared = getattr(backend, "name", None)
    if declared is not None and not isinstance(declared, str):
        raise ValueError(
            f"backend {cls.__qualname__}: its name attribute is a {type(declared).__name__}, "
            "expected a str such as 'my_memory'"
        )
    name = declared if declared is not None else cls.__name__.lower()
    if not ARM_NAME.match(name):
        source = "its name attribute" if declared is not None else "its class name lower-cased"
        raise ValueError(
            f"backend {cls.__qualname__}: {source}, {name!r}, is not a valid backend name; "
            "set a name attribute matching [a-z][a-z0-9_]* (e.g. name = 'my_memory')"
        )
    return name


def check_backend_object(backend: object) -> None:
    """Check that an object implements :class:`MemoryBackend` before it is packed.

    Raises:
        ValueError: One line naming the class and what it lacks.
    """
    cls = type(backend)
    if inspect.isclass(backend):
        raise ValueError(
            f"backend {backend.__qualname__} is a class: pass an instance "
            f"({backend.__name__}()), a registered name or 'package.module:ClassName'"
        )
    missing = [m for m in _REQUIRED_METHODS if not callable(getattr(backend, m, None))]
    if missing:
        raise ValueError(
            f"backend {cls.__qualname__} lacks MemoryBackend method(s) {', '.join(missing)}"
        )
    not_async = [m for m in _ASYNC_METHODS if not inspect.iscoroutinefunction(getattr(backend, m))]
    if not_async:
        raise ValueError(
            f"backend {cls.__qualname__} must define {', '.join(not_async)} with 'async def'"
        )


def pack_backend(backend: object) -> BackendInstance:
    """Serialise a backend object for its workers (see the module docstring for what travels).

    Args:
        backend: An object implementing :class:`MemoryBackend`.

    Returns:
        The packed instance, named as :func:`instance_name` says.

    Raises:
        ValueError: One line naming the class and the reason, when the object is not a backend
            or cannot be serialised (an open connection, lock, thread or file, say).
    """
    check_backend_object(backend)
    name = instance_name(backend)
    cls = type(backend)
    import cloudpickle

    with _REGISTRY_LOCK:
        added = [m for m in _local_modules() if m.__name__ not in _by_value_names()]
        for module in added:
            cloudpickle.register_pickle_by_value(module)
        try:
            payload = cloudpickle.dumps(backend, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            raise ValueError(
                f"backend {cls.__qualname__} cannot be sent to its isolated worker ({reason}); "
                "create connections, locks, threads and open files in the backend's methods, "
                "or give it by 'package.module:ClassName' instead"
            ) from None
        finally:
            for module in added:
                cloudpickle.unregister_pickle_by_value(module)
    return BackendInstance(name, f"{cls.__module__}:{cls.__qualname__}", payload)


def unpack_backend(encoded: str, name: str) -> MemoryBackend:
    """Rebuild a packed backend in a worker (the inverse of :meth:`BackendInstance.worker_options`).

    Raises:
        ValueError: One line, when the bytes do not load or load as something else.
    """
    try:
        backend = pickle.loads(base64.b64decode(encoded))
    except Exception as error:
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        raise ValueError(
            f"cannot rebuild backend instance {name!r} in its worker: {reason}"
        ) from None
    if not isinstance(backend, MemoryBackend):
        raise ValueError(
            f"backend instance {name!r} rebuilt as a {type(backend).__name__}, which lacks the "
            f"MemoryBackend methods {', '.join(_REQUIRED_METHODS)}"
        )
    return backend


def _by_value_names() -> set[str]:
    import cloudpickle

    return set(cloudpickle.list_registry_pickle_by_value())


def _installed_roots() -> tuple[str, ...]:
    """Folders whose modules the worker imports itself: the interpreter's and the environment's."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    return tuple(os.path.join(os.path.realpath(root), "") for root in roots if root)


def _local_modules() -> list[ModuleType]:
    """Loaded pure-Python modules from outside the environment: a project's own files.

    ``__main__`` is left out (cloudpickle already sends its classes by value), and so is
    ``drift_pipeline``, which every worker imports anyway.
    """
    roots = _installed_roots()
    found: list[ModuleType] = []
    for name, module in list(sys.modules.items()):
        if name == "__main__" or name.split(".", 1)[0] in ("drift_pipeline", "__mp_main__"):
            continue
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue  # built-in, namespace or compiled: imported by reference
        real = os.path.realpath(path)
        if not real.startswith(roots):
            found.append(module)
    return found
