"""What a backend needs from its environment: a model, a cache, the network, optional packages.

A registration declares its needs (see :class:`BackendNeeds`); the harness reads them before it
starts a worker, so a missing package or an unset endpoint is one line at the start of a run, not
a fault in every replicate, and only a backend that calls a model receives the model's key.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BackendNeeds", "LLMAccess", "Package"]


@dataclass(frozen=True)
class Package:
    """An optional package a backend imports.

    Attributes:
        module: The name it is imported by (``bm25s``).
        install: What to ``pip install`` to get it, usually an extra
            (``drift-pipeline[bm25]``, ``my-adapter[server]``).
    """

    module: str
    install: str

    def installed(self) -> bool:
        """Whether the module can be imported here (checked without importing it)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):  # a parent package missing, or a broken module
            return False


@dataclass(frozen=True)
class LLMAccess:
    """The backend calls an OpenAI-compatible model from inside its worker.

    The harness fills the endpoint and model into the backend's options (unless they are given)
    from ``DRIFT_LLM_BASE_URL`` and from ``model_variables`` then ``DRIFT_LLM_MODEL``; the key
    reaches the worker only through the environment, as ``DRIFT_LLM_API_KEY``.

    Attributes:
        purpose: Said in errors after the backend's name (``summariser llm``).
        base_url_option: The constructor option that takes the endpoint.
        model_option: The constructor option that takes the model.
        model_variables: Variables tried, in order, before ``DRIFT_LLM_MODEL``.
    """

    purpose: str = "llm"
    base_url_option: str = "llm_base_url"
    model_option: str = "llm_model"
    model_variables: tuple[str, ...] = ()

    def fill(self, backend: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` with the endpoint and model filled in from the environment.

        Raises:
            ValueError: One line naming the unset variable and the option that would do instead.
        """
        from drift_pipeline.llm import BASE_URL_ENV, MODEL_ENV

        filled = dict(options)
        for option, variables in (
            (self.base_url_option, (BASE_URL_ENV,)),
            (self.model_option, (*self.model_variables, MODEL_ENV)),
        ):
            if filled.get(option):
                continue
            value = next((os.environ[v] for v in variables if os.environ.get(v, "").strip()), "")
            if not value:
                raise ValueError(
                    f"{backend} {self.purpose}: {variables[-1]} is not set "
                    f"(or give {option} in the backend config)"
                )
            filled[option] = value.strip()
        return filled


@dataclass(frozen=True)
class BackendNeeds:
    """What one backend needs beyond the harness itself.

    Attributes:
        llm: It calls a model (endpoint and model filled into its options, key passed in).
        cache: It keeps a completion cache in ``$DRIFT_STATE_DIR/llm_cache``, which the harness
            seeds from and collects into ``<data root>/llm_cache/<backend>`` around every
            replicate, so reruns send nothing.
        network: It talks to a service over the network (declared for listings and for whoever
            runs it offline; the worker's network is not cut either way).
        packages: Optional packages it imports, each with what to install.
        env: Further variables of the harness's environment passed to its worker (the model's
            key is implied by ``llm``).
    """

    llm: LLMAccess | None = None
    cache: bool = False
    network: bool = False
    packages: tuple[Package, ...] = ()
    env: tuple[str, ...] = field(default=())

    @property
    def worker_env(self) -> tuple[str, ...]:
        """Names of the harness's variables its worker receives (an allowlist)."""
        if self.llm is None:
            return self.env
        from drift_pipeline.llm import API_KEY_ENV

        return tuple(dict.fromkeys((API_KEY_ENV, *self.env)))

    def missing(self) -> list[Package]:
        """The declared packages that are not installed."""
        return [package for package in self.packages if not package.installed()]

    def check(self, backend: str) -> None:
        """Raise if a declared package is missing.

        Raises:
            ValueError: One line naming the backend, the package and what to install.
        """
        missing = self.missing()
        if missing:
            names = ", ".join(repr(p.module) for p in missing)
            installs = " ".join(dict.fromkeys(f"'{p.install}'" for p in missing))
            raise ValueError(
                f"backend {backend!r} needs the package(s) {names}: pip install {installs}"
            )
