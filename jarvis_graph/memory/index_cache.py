"""The vector indexes of a :class:`~jarvis_graph.memory.store.FaissStore`, kept in step with SQLite.

An index is complete up to a store sequence number (its ``stamp``). Before a search the
index of a namespace is loaded from its file, caught up from the rows written after its
stamp (new vectors, and tombstones of removed ones) or rebuilt as an exact index; after a
committed batch the loaded indexes are updated in place. Index files are rewritten after
``save_every`` vector changes or a quarter of the index, whichever is more, and on
:meth:`IndexCache.flush`.

Nothing slow runs on a search's path: an exact index is a copy of the vectors, and the
compressed codes of a large namespace (seconds of training) are built on a background
thread from a snapshot, brought up to date with the changes made meanwhile and swapped in
under the store's mutex; exact search answers until then. A process that is closed before
the codes are ready simply leaves them to the next one.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import defaultdict
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np

from jarvis_graph.memory.vector_index import NamespaceIndex, normalise, train_codes

_READ_CHUNK = 8_192
"""Rows read from SQLite at a time when an index is rebuilt."""

Changes = dict[str, tuple[list[int], list[tuple[int, bytes]]]]
"""Per namespace: vector ids removed, and (id, float32 bytes) of vectors added."""


def matrix(blobs: list[bytes]) -> np.ndarray:
    """float32 rows from the vector blobs of SQLite."""
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


class IndexCache:
    """Per-namespace indexes of one store folder.

    Args:
        folder: Where index files live.
        conn: The store's SQLite connection.
        lock: The store's file lock (held while an index file is written).
        mutex: The store's in-process lock (held by every caller of :meth:`get` and
            :meth:`apply`; background builds take it to swap their result in).
        dims: Vector dimensions.
        approx_threshold: Vectors from which a namespace gets compressed codes.
        save_every: Vector changes after which an index file is rewritten.
    """

    def __init__(
        self,
        folder: Path,
        conn: sqlite3.Connection,
        lock: AbstractContextManager[object],
        mutex: threading.RLock,
        dims: int,
        approx_threshold: int,
        save_every: int,
    ) -> None:
        self.folder = folder
        self.conn = conn
        self.lock = lock
        self.mutex = mutex
        self.dims = dims
        self.approx_threshold = approx_threshold
        self.save_every = save_every
        self.loaded: dict[str, NamespaceIndex] = {}
        self._unsaved: dict[str, int] = defaultdict(int)
        self._builds: dict[str, threading.Thread] = {}
        self._closed = False

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
        self.loaded[ns] = index
        self._train_later(ns, index)
        return index

    def wait(self, ns: str) -> None:
        """Wait for a background build of ``ns`` (call without holding the store's mutex)."""
        build = self._builds.get(ns)
        if build is not None:
            build.join()

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
            self._train_later(ns, index)

    def flush(self) -> None:
        """Write every loaded index that has changes not yet on disk."""
        with self.lock:
            for ns, count in list(self._unsaved.items()):
                if count and ns in self.loaded:
                    self.loaded[ns].save(self.file(ns))
                self._unsaved[ns] = 0

    def close(self) -> None:
        """Stop using the indexes: background builds still running are dropped."""
        self._closed = True

    def _changed(self, ns: str, count: int, locked: bool = False) -> None:
        self._unsaved[ns] += count
        # A quarter of the index at least: rewriting a file of hundreds of MB every
        # save_every changes made bulk loads quadratic in I/O, and put a whole write on a
        # search's path after a catch-up (measured 4.8 s at 380k vectors).
        if self._unsaved[ns] < max(self.save_every, self.loaded[ns].size // 4):
            return
        if locked:
            self.loaded[ns].save(self.file(ns))
        else:
            with self.lock:
                self.loaded[ns].save(self.file(ns))
        self._unsaved[ns] = 0

    def _build(self, ns: str, seq: int) -> NamespaceIndex:
        ids, unit = self._read_vectors(ns, seq)
        index = NamespaceIndex.build(self.dims, ids, unit, seq)
        self.loaded[ns] = index
        self._unsaved[ns] = 0
        if index.wants_codes(self.approx_threshold):
            self._unsaved[ns] = len(ids)  # saved with its codes, off the search's path
            self._train_later(ns, index, (ids, unit))
        else:
            self._changed(ns, len(ids))  # a big build is saved at once: the next open skips it
        return index

    def _read_vectors(self, ns: str, seq: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids and unit vectors of ``ns`` up to ``seq``, read in chunks into one array.

        Chunks keep the temporaries small: at 100k vectors, whole-table copies cost more in
        page faults than the reading itself (measured 0.4 s for one join of 150 MB).
        """
        self.conn.execute("BEGIN")  # the count and the rows from one snapshot
        try:
            (count,) = self.conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE ns = ? AND seq <= ?", (ns, seq)
            ).fetchone()
            ids = np.empty(count, dtype=np.int64)
            unit = np.empty((count, self.dims), dtype=np.float32)
            cur = self.conn.execute(
                "SELECT vid, vec FROM vectors WHERE ns = ? AND seq <= ?", (ns, seq)
            )
            done = 0
            while rows := cur.fetchmany(_READ_CHUNK):
                end = done + len(rows)
                ids[done:end] = [r[0] for r in rows]
                unit[done:end] = normalise(matrix([r[1] for r in rows]))
                done = end
        finally:
            self.conn.execute("COMMIT")
        return ids, unit

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

    # -- background builds ---------------------------------------------------------------

    def _train_later(
        self, ns: str, index: NamespaceIndex, snapshot: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        """Start building codes for ``index`` when it wants them and no build is running.

        ``snapshot``: the index's ids and unit vectors when the caller has them (no copy).
        """
        running = self._builds.get(ns)
        if self._closed or (running is not None and running.is_alive()):
            return
        if not index.wants_codes(self.approx_threshold):
            return
        ids, vectors = snapshot or index.snapshot()
        build = threading.Thread(
            target=self._train, args=(ns, index, ids, vectors), name=f"codes:{ns}", daemon=True
        )
        self._builds[ns] = build
        build.start()

    def _train(self, ns: str, index: NamespaceIndex, ids: np.ndarray, vectors: np.ndarray) -> None:
        codes = train_codes(vectors, ids)
        del vectors
        with self.mutex:
            if self._closed or self.loaded.get(ns) is not index:
                return  # the store closed or the index was replaced meanwhile
            index.attach(codes, len(ids))
            try:
                with self.lock:
                    index.save(self.file(ns))
            except OSError:
                return  # folder gone or disk full: the file is a cache, written again later
            self._unsaved[ns] = 0
