"""What a backend object declares beyond the three required methods, read where it runs.

The worker answers ``{"op": "describe"}`` with :func:`capabilities` of its backend, so the
conformance check (and whoever starts a worker) learns which optional protocols the backend
implements and what service it says it runs against, without importing it in the harness.
"""

from __future__ import annotations

import inspect
from typing import Any

from ._protocol import KEEPS_NOTHING, STORE_ENTITY_KEYWORD

__all__ = ["capabilities", "service_info", "stores_for_entity"]

_SERVICE_VALUE_CHARS = 200


def stores_for_entity(backend: object) -> bool:
    """Whether ``backend.store`` takes the entity whose memory a session goes into.

    That is, whether it accepts the keyword :data:`~._protocol.STORE_ENTITY_KEYWORD`.
    """
    store = getattr(backend, "store", None)
    if not callable(store):
        return False
    try:
        parameters = inspect.signature(store).parameters
    except (TypeError, ValueError):
        return False
    parameter = parameters.get(STORE_ENTITY_KEYWORD)
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def service_info(backend: object) -> dict[str, str]:
    """What ``backend.service_info()`` says (see ``DescribesService``); empty without one.

    Raises:
        ValueError: It is not a mapping of short strings to short strings (one line).
    """
    describe = getattr(backend, "service_info", None)
    if not callable(describe):
        return {}
    info = describe()
    if not isinstance(info, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in info.items()
    ):
        raise ValueError("service_info() must return a dict of str to str")
    return {key[:_SERVICE_VALUE_CHARS]: value[:_SERVICE_VALUE_CHARS] for key, value in info.items()}


def capabilities(backend: object) -> dict[str, Any]:
    """The optional protocols ``backend`` implements, and what service it describes.

    Keys: ``stores_for_entity``, ``asynchronous`` (``wait_until_queryable``), ``snapshot``,
    ``counts_own_storage``, ``describes_service``, ``keeps_nothing`` (each a bool),
    ``service`` (the mapping, or ``{"error": ...}`` when ``service_info()`` failed) and
    ``version``.
    """
    try:
        service = service_info(backend)
    except Exception as error:  # a broken description is reported, never a crash
        service = {"error": f"{type(error).__name__}: {error}"[:_SERVICE_VALUE_CHARS]}
    return {
        "stores_for_entity": stores_for_entity(backend),
        "asynchronous": callable(getattr(backend, "wait_until_queryable", None)),
        "snapshot": callable(getattr(backend, "snapshot", None)),
        "counts_own_storage": callable(getattr(backend, "storage_tokens", None)),
        "describes_service": callable(getattr(backend, "service_info", None)),
        "keeps_nothing": getattr(backend, KEEPS_NOTHING, False) is True,
        "service": service,
        "version": str(getattr(backend, "version", "")),
    }
