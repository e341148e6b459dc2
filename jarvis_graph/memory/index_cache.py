"""The FAISS indexes of a :class:`~jarvis_graph.memory.store.FaissStore`, kept in step with SQLite.

An index is complete up to a store sequence number (its ``stamp``). Before a search the
index of a namespace is loaded from its file, caught up from the rows written after its
stamp (new vectors, and tombstones of removed ones) or rebuilt; after a committed batch
the loaded indexes are updated in place. Index files are rewritten after ``save_every``
vector changes and on :meth:`IndexCache.flush`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import defaultdict
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np

from jarvis_graph.memory.vector_index import NamespaceIndex

Changes = dict[str, tuple[list[int], list[tuple[int, bytes]]]]
"""Per namespace: vector ids removed, and (id, float32 bytes) of vectors added."""


def matrix(blobs: list[bytes]) -> np.ndarray:
    """float32 rows from the vector blobs of SQLite."""
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


class IndexCache:
    """Per-namespace indexes of one store folder."""

    def __init__(
        self,
        folder: Path,
        conn: sqlite3.Connection,
        lock: AbstractContextManager[object],
        dims: int,
        approx_threshold: int,
        save_every: int,
    ) -> None:
        self.folder = folder
        self.conn = conn
        self.lock = lock
        self.dims = dims
        self.approx_threshold = approx_threshold
        self.save_every = save_every
        self.loaded: dict[str, NamespaceIndex] = {}
        self._unsaved: dict[str, int] = defaultdict(int)

    def file(self, ns: str) -> Path:
        """Where the index of namespace ``ns`` is saved."""
        digest = hashlib.sha1(ns.encode("utf-8")).hexdigest()[:20]
        return self.folder / f"{digest}.faiss"

    def get(self, ns: str, seq: int) -> NamespaceIndex:
        """The namespace's index, complete up to ``seq`` (loaded, caught up or rebuilt)."""
        index = self.loaded.get(ns)
        if index is None:
            index = NamespaceIndex.load(self.file(ns), self.dims)
        if index is not None and index.stamp > seq:  # a file newer than the data: distrust it
            index = None
        if index is None:
            index = self._build(ns, seq)
        elif index.stamp < seq:
            self._catch_up(index, ns, seq)
        if index.needs_rebuild(self.approx_threshold):
            index = self._build(ns, seq)
        self.loaded[ns] = index
        return index

    def apply(self, changes: Changes, seq: int) -> None:
        """Apply a committed batch to the loaded indexes that were current before it.

        Call with the store's write lock held (an index file may be rewritten).
        """
        for ns, (removed, added) in changes.items():
            index = self.loaded.get(ns)
            if index is None or index.stamp != seq - 1:
                continue  # not loaded, or behind: caught up on its next search
            index.remove(np.array(removed, dtype=np.int64))
            if added:
                index.add(np.array([a[0] for a in added], np.int64), matrix([a[1] for a in added]))
            index.stamp = seq
            self._changed(ns, len(removed) + len(added), locked=True)

    def flush(self) -> None:
        """Write every loaded index that has changes not yet on disk."""
        with self.lock:
            for ns, count in list(self._unsaved.items()):
                if count and ns in self.loaded:
                    self.loaded[ns].save(self.file(ns))
                self._unsaved[ns] = 0

    def _changed(self, ns: str, count: int, locked: bool = False) -> None:
        self._unsaved[ns] += count
        if self._unsaved[ns] < self.save_every:
            return
        if locked:
            self.loaded[ns].save(self.file(ns))
        else:
            with self.lock:
                self.loaded[ns].save(self.file(ns))
        self._unsaved[ns] = 0

    def _build(self, ns: str, seq: int) -> NamespaceIndex:
        rows = self.conn.execute(
            "SELECT vid, vec FROM vectors WHERE ns = ? AND seq <= ? ORDER BY vid", (ns, seq)
        ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = matrix([r[1] for r in rows]) if rows else np.zeros((0, self.dims), np.float32)
        index = NamespaceIndex.build(self.dims, ids, vecs, seq, self.approx_threshold)
        self.loaded[ns] = index
        self._unsaved[ns] = 0
        self._changed(ns, len(rows))  # a big build is saved at once: the next open skips it
        return index

    def _catch_up(self, index: NamespaceIndex, ns: str, seq: int) -> None:
        stamp = index.stamp
        self.conn.execute("BEGIN")  # one snapshot for both reads
        try:
            gone = self.conn.execute(
                "SELECT vid FROM tombstones WHERE ns = ? AND seq > ? AND seq <= ?", (ns, stamp, seq)
            ).fetchall()
            new = self.conn.execute(
                "SELECT vid, vec FROM vectors WHERE ns = ? AND seq > ? AND seq <= ?",
                (ns, stamp, seq),
            ).fetchall()
        finally:
            self.conn.execute("COMMIT")
        index.remove(np.array([r[0] for r in gone], dtype=np.int64))
        if new:
            index.add(np.array([r[0] for r in new], dtype=np.int64), matrix([r[1] for r in new]))
        index.stamp = seq
        self.loaded[ns] = index
        self._changed(ns, len(gone) + len(new))
