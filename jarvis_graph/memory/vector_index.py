"""One vector index per namespace: exact search, plus compressed codes above a threshold.

Vectors are L2-normalised before they reach FAISS, so inner product equals cosine
similarity, the score ``InMemoryStore`` reports. FAISS ids are the store's vector ids.

Every index keeps all vectors in an exact ``IndexFlatIP``. From ``approx_threshold``
vectors on it also keeps 4-bit product-quantizer codes (``IndexPQFastScan``, two
dimensions per sub-quantizer): a search scans the codes for a few hundred candidates and
ranks them by their exact score. That keeps recall on data without cluster structure,
where IVF and HNSW lose it. Measured on 100k random unit vectors of 384 dimensions, one
thread, 2 shared cores: IVF with nprobe = nlist/12 found 0.30 of the exact top 5; HNSW
(M=48, 8-bit vectors) 0.83 at efSearch 512 in 10 ms after 225 s of building (at 20k,
plain HNSW with M=32 reached 0.95 only at efSearch 512, 3.6 ms); the codes with 256
candidates 0.997 in about 1 ms, after 3-5 s of training, which runs off the search path
(see :mod:`jarvis_graph.memory.index_cache`). A search scans every code, so its cost
grows linearly (about 1 ms per 100k vectors).

An index is a cache of the vectors held in SQLite: ``stamp`` says up to which store
sequence number it is complete; files are written whole (temp file, fsync, rename).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"JGFAISS2"
_HEADER = struct.Struct("<8sqqi")  # magic, stamp, trained_on, has codes

DEFAULT_APPROX_THRESHOLD = 20_000
"""Vectors in a namespace from which searches go through compressed codes."""
RERANK = 256
"""Candidates taken from the codes and ranked exactly (at least; 4 * k for large k)."""
_TRAIN_SAMPLE = 8_192
"""Vectors the product quantizer learns from (16 centroids per sub-quantizer)."""


@contextmanager
def omp_threads(count: int) -> Iterator[None]:
    """Run FAISS with ``count`` OpenMP threads, then restore the previous number.

    One query is searched single-threaded: on a busy machine, waking OpenMP threads for a
    sub-millisecond search costs tens of milliseconds (measured: 44 ms against 0.14 ms
    for an exact search over 2,000 vectors on 2 loaded cores).
    """
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(count)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation as float32 (zero rows stay zero)."""
    arr = np.array(vectors, dtype=np.float32, order="C")  # a copy: inputs stay untouched
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    norms = np.sqrt(np.einsum("ij,ij->i", arr, arr))[:, None]  # no squared temporary
    np.divide(arr, norms, out=arr, where=norms > 0)
    return arr


def _faiss() -> Any:
    """The faiss module, untyped: its type information lacks the I/O callbacks and ``get_xb``."""
    import faiss

    return faiss


def train_codes(vectors: np.ndarray, ids: np.ndarray) -> Any:
    """Product-quantizer codes of normalised ``vectors`` under ``ids`` (slow: seconds at 100k).

    Runs on one thread: it is meant for a background thread on a shared machine.
    """
    import faiss

    dims = vectors.shape[1]
    subs = dims // 2 if dims % 2 == 0 else dims
    pq = faiss.IndexPQFastScan(dims, subs, 4, faiss.METRIC_INNER_PRODUCT)
    pq.pq.cp.min_points_per_centroid = 1  # small namespaces train without a warning
    sample = vectors[np.random.default_rng(0).permutation(len(vectors))[:_TRAIN_SAMPLE]]
    with omp_threads(1):
        pq.train(np.ascontiguousarray(sample))
        codes = faiss.IndexIDMap(pq)
        codes.add_with_ids(vectors, np.ascontiguousarray(ids, dtype=np.int64))
    return codes


@dataclass
class NamespaceIndex:
    """The vector index of one namespace, complete up to ``stamp``."""

    exact: Any
    """``IndexIDMap2(IndexFlatIP)`` over every vector: exact scores."""
    dims: int
    stamp: int
    codes: Any = None
    """``IndexIDMap(IndexPQFastScan)`` over the same ids, or ``None`` (exact search)."""
    trained_on: int = 0
    """Vectors in the namespace when the codes were trained (0: no codes)."""

    @property
    def approximate(self) -> bool:
        """Whether searches scan compressed codes before the exact ranking."""
        return self.codes is not None

    @property
    def kind(self) -> str:
        """``"pq+rerank"`` or ``"exact"`` (for reports)."""
        return "pq+rerank" if self.approximate else "exact"

    @property
    def size(self) -> int:
        """Vectors in the index."""
        return int(self.exact.ntotal)

    @classmethod
    def build(cls, dims: int, ids: np.ndarray, unit: np.ndarray, stamp: int) -> NamespaceIndex:
        """An exact index over ``unit`` (rows of :func:`normalise`); :meth:`attach` adds codes."""
        import faiss

        exact = faiss.IndexIDMap2(faiss.IndexFlatIP(dims))
        if len(ids):
            exact.add_with_ids(unit, np.ascontiguousarray(ids, dtype=np.int64))
        return cls(exact, dims, stamp)

    def wants_codes(self, threshold: int) -> bool:
        """No codes yet at ``threshold`` vectors, or codes trained on far fewer vectors."""
        if self.codes is None:
            return self.size >= threshold
        return self.size > 8 * self.trained_on

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the ids and normalised vectors (to train codes on another thread)."""
        faiss = _faiss()

        ids = faiss.vector_to_array(self.exact.id_map).copy()
        flat = faiss.downcast_index(self.exact.index)
        vectors = faiss.rev_swig_ptr(flat.get_xb(), self.size * self.dims)
        return ids, np.array(vectors, dtype=np.float32).reshape(self.size, self.dims)

    def attach(self, codes: Any, trained_on: int) -> None:
        """Use ``codes`` (trained on a snapshot) after bringing them to the current ids."""
        import faiss

        have = faiss.vector_to_array(codes.id_map)
        want = faiss.vector_to_array(self.exact.id_map)
        gone = np.setdiff1d(have, want, assume_unique=True)
        new = np.setdiff1d(want, have, assume_unique=True)
        if len(gone):
            codes.remove_ids(gone)
        if len(new):
            codes.add_with_ids(self.exact.reconstruct_batch(new), new)
        self.codes, self.trained_on = codes, trained_on

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under the given ids."""
        if len(ids):
            vecs, ids64 = normalise(vectors), np.ascontiguousarray(ids, np.int64)
            self.exact.add_with_ids(vecs, ids64)
            if self.codes is not None:
                self.codes.add_with_ids(vecs, ids64)

    def remove(self, ids: np.ndarray) -> None:
        """Remove the given ids (unknown ids are ignored)."""
        if len(ids):
            ids64 = np.ascontiguousarray(ids, dtype=np.int64)
            self.exact.remove_ids(ids64)
            if self.codes is not None:
                self.codes.remove_ids(ids64)

    def search(self, query: np.ndarray, k: int) -> list[tuple[float, int]]:
        """The ``k`` best (score, id) pairs for one query vector, best first."""
        if self.size == 0 or k <= 0:
            return []
        q = normalise(query)
        k = min(k, self.size)
        candidates = max(RERANK, 4 * k)
        with omp_threads(1):
            if self.codes is None or candidates >= self.size // 2:
                scores, ids = self.exact.search(q, k)
                pairs = zip(scores[0].tolist(), ids[0].tolist(), strict=True)
                return [(s, i) for s, i in pairs if i >= 0]
            _, found = self.codes.search(q, candidates)
        ids = found[0][found[0] >= 0]
        scores = self.exact.reconstruct_batch(ids) @ q[0]  # the exact score of each candidate
        best = np.argsort(-scores, kind="stable")[:k]
        return [(float(scores[j]), int(ids[j])) for j in best]

    def save(self, path: Path) -> None:
        """Write the index to ``path`` atomically: readers see the old file or the new one."""
        faiss = _faiss()

        header = _HEADER.pack(MAGIC, self.stamp, self.trained_on, int(self.approximate))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(header)
            # streamed: no copy of a file of hundreds of MB in memory
            faiss.write_index(self.exact, faiss.PyCallbackIOWriter(fh.write))
            if self.codes is not None:
                faiss.write_index(self.codes, faiss.PyCallbackIOWriter(fh.write))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)

    @classmethod
    def load(cls, path: Path, dims: int) -> NamespaceIndex | None:
        """Read an index written by :meth:`save`; ``None`` when missing, old or unreadable."""
        faiss = _faiss()

        try:
            with open(path, "rb") as fh:
                raw = fh.read(_HEADER.size)
                if len(raw) < _HEADER.size:
                    return None
                magic, stamp, trained_on, has_codes = _HEADER.unpack(raw)
                if magic != MAGIC:
                    return None  # another format (IVF files of earlier versions): rebuilt
                exact = faiss.read_index(faiss.PyCallbackIOReader(fh.read))
                codes = faiss.read_index(faiss.PyCallbackIOReader(fh.read)) if has_codes else None
        except (OSError, RuntimeError):
            return None
        if exact.d != dims or (codes is not None and codes.ntotal != exact.ntotal):
            return None
        return cls(exact, dims, int(stamp), codes, int(trained_on) if codes is not None else 0)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
