"""FaissStore: a LangGraph ``BaseStore`` with records in SQLite and vectors in FAISS.

For the same operations it returns what LangGraph's ``InMemoryStore`` returns (the
reference; ``tests/unit/memory/test_store_semantics.py`` runs one suite against both):
items in insertion order (namespaces in order of first write, then keys), ``put`` on an
existing key keeps its place and sets both timestamps, gets and searches in a batch see
the state before the batch's puts, query results are ranked by cosine similarity with
the best field of each item, and items without vectors fill up a short result.

Two differences: ``list_namespaces`` lists namespaces that hold items (``InMemoryStore``
also lists namespaces that were only read or whose items were all deleted), and a put
with ``index=False`` drops the item's old vectors (``InMemoryStore`` keeps them).

Durability: SQLite in WAL mode is the source of truth and every batch is one transaction,
so a process killed mid-write leaves the state of its last committed batch. FAISS indexes
(one per namespace, see :mod:`jarvis_graph.memory.vector_index`) are caches stamped with
the sequence number they include; a stale or damaged index file is caught up from SQLite
or rebuilt. Writers hold a file lock (``store.lock``), so processes can share a folder.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    tokenize_path,
    validate_op_namespace,
)

from jarvis_graph.memory.filters import listed_namespaces, matches_filter
from jarvis_graph.memory.index_cache import IndexCache, matrix
from jarvis_graph.memory.records import MemoryStoreError
from jarvis_graph.memory.store_sql import SCHEMA, Key, ns_text, texts_to_embed, write_puts
from jarvis_graph.memory.vector_index import DEFAULT_APPROX_THRESHOLD, NamespaceIndex, normalise
from jarvis_graph.owned_paths import (
    OwnedPathError,
    check_owned,
    owned_dir,
    owned_file,
    split_owned,
)

_SQL_CHUNK = 900


def prepare_store_folder(path: Path, create: bool = True) -> None:
    """Check (and create) a store's folder as Jarvis' own: private, no component a link.

    A project's store (``<workspace>/.jarvis/memory``) is checked from the workspace down:
    a repository may ship ``.jarvis`` or ``.jarvis/memory`` as a link to elsewhere. Call it
    before resolving ``path``, which would follow such a link. ``create=False`` only checks
    what exists (reads create nothing).

    Raises:
        MemoryStoreError: A component is a symbolic link or a file.
    """
    base, rel = split_owned(path)
    try:
        if not create:
            check_owned(base, rel)
            return
        owned_dir(base, rel / "indexes")
        owned_file(path, "store.sqlite")  # private, and so are its -wal and -shm
    except OwnedPathError as exc:
        raise MemoryStoreError(str(exc)) from None


class FaissStore(BaseStore):
    """A persistent store in a folder: ``store.sqlite``, ``store.lock``, ``indexes/*.faiss``.

    Args:
        path: Folder of the store (created if missing).
        index: Semantic search settings as for ``InMemoryStore``: ``dims``, ``embed`` (a
            LangChain ``Embeddings`` or a function of a list of texts) and ``fields``
            (default ``["$"]``, the whole value).
        approx_threshold: Vectors in a namespace from which search scans compressed codes
            before ranking exactly (see :mod:`jarvis_graph.memory.vector_index`).
        save_every: Vector changes in a namespace after which its index file is rewritten
            (at least a quarter of the index; always written by :meth:`flush` and
            :meth:`close`).
        lock_timeout: Seconds to wait for another process's write.
    """

    __slots__ = (
        "path",
        "index_config",
        "embeddings",
        "approx_threshold",
        "save_every",
        "_conn",
        "_lock",
        "_mutex",
        "_cache",
        "_fields",
    )

    def __init__(
        self,
        path: str | Path,
        *,
        index: IndexConfig | None = None,
        approx_threshold: int = DEFAULT_APPROX_THRESHOLD,
        save_every: int = 5_000,
        lock_timeout: float = 60.0,
    ) -> None:
        self.path = Path(path)
        prepare_store_folder(self.path)
        self.approx_threshold = approx_threshold
        self.save_every = save_every
        self.index_config = dict(index) if index else None
        self.embeddings = ensure_embeddings(index.get("embed")) if index else None
        self._fields: list[tuple[str, Any]] = [
            (p, p if p == "$" else tokenize_path(p)) for p in ((index or {}).get("fields") or ["$"])
        ]
        if index and not isinstance(index.get("dims"), int):
            msg = f"index config needs an integer 'dims' (got {index.get('dims')!r})"
            raise ValueError(msg)
        self._lock = FileLock(str(self.path / "store.lock"), timeout=lock_timeout)
        self._mutex = threading.RLock()
        self._conn = sqlite3.connect(
            str(self.path / "store.sqlite"), check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA busy_timeout = 30000")
        with self._lock:
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.executescript(SCHEMA)
            self._check_dims()
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._cache: IndexCache | None = None
        if self.index_config:
            self._cache = IndexCache(
                self.path / "indexes",
                self._conn,
                self._lock,
                self._mutex,
                self._dims(),
                approx_threshold,
                save_every,
            )

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FaissStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def flush(self) -> None:
        """Write every index that has changes not yet on disk."""
        with self._mutex:
            if self._cache is not None:
                self._cache.flush()

    def index_for(self, namespace: tuple[str, ...]) -> NamespaceIndex:
        """The vector index of ``namespace``, brought up to date (for inspection and tests).

        Waits for the namespace's compressed codes when they are being built, so do not
        call it while holding the store's lock (from inside a batch).
        """
        ns = ns_text(namespace)
        with self._mutex:
            self._index(ns, self._seq())
        if self._cache is not None:
            self._cache.wait(ns)
        with self._mutex:
            return self._index(ns, self._seq())

    def _index(self, ns: str, seq: int) -> NamespaceIndex:
        if self._cache is None:
            msg = "this store has no index config; semantic search needs one"
            raise RuntimeError(msg)
        return self._cache.get(ns, seq)

    def close(self) -> None:
        """Write pending index changes and close the database.

        A store whose folder was deleted meanwhile writes nothing: flushing would create the
        folder again (its lock file and indexes) for a store nobody has any more.
        """
        with self._mutex:
            if self._conn is None:
                return
            if self.path.is_dir():
                self.flush()
            if self._cache is not None:
                self._cache.close()
            self._conn.close()
            self._conn = None  # type: ignore[assignment]

    def _check_dims(self) -> None:
        if not self.index_config:
            return
        dims = self._dims()
        row = self._conn.execute("SELECT value FROM meta WHERE name = 'dims'").fetchone()
        if row is None:
            self._conn.execute("INSERT INTO meta VALUES ('dims', ?)", (str(dims),))
        elif int(row[0]) != dims:
            msg = (
                f"the store at {self.path} holds {row[0]}-dimensional vectors but the index "
                f"config says dims={dims}; use the embedder the store was created with"
            )
            raise ValueError(msg)

    # -- BaseStore -------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; reads see the state before the batch's writes."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        with self._mutex:
            if self._conn is None:
                msg = f"the store at {self.path} is closed"
                raise RuntimeError(msg)
            results: list[Result] = []
            puts: dict[Key, PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op.namespace, op.key))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                elif isinstance(op, PutOp):
                    puts[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    msg = f"Unknown operation type: {type(op)}"
                    raise ValueError(msg)
            if puts:
                self._apply_puts(puts)
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (SQLite and FAISS calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- reads -----------------------------------------------------------------------------

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        row = self._conn.execute(
            "SELECT value, created_at, updated_at FROM items WHERE ns = ? AND key = ?",
            (ns_text(namespace), key),
        ).fetchone()
        if row is None:
            return None
        return Item(
            value=json.loads(row[0]),
            key=key,
            namespace=namespace,
            created_at=row[1],
            updated_at=row[2],
        )

    def _namespaces_under(self, prefix: tuple[str, ...]) -> list[str]:
        rows = self._conn.execute("SELECT ns FROM namespaces ORDER BY pos").fetchall()
        n = len(prefix)
        return [r[0] for r in rows if _tuple(r[0])[:n] == prefix]

    def _scan(self, namespaces: list[str], flt: dict[str, Any] | None) -> Iterator[SearchItem]:
        """Items of ``namespaces`` in store order that pass ``flt``."""
        for ns in namespaces:
            rows = self._conn.execute(
                "SELECT key, value, created_at, updated_at FROM items WHERE ns = ? ORDER BY rowid",
                (ns,),
            )
            for key, value, created, updated in rows:
                data = json.loads(value)
                if matches_filter(data, flt):
                    yield _search_item(ns, key, data, created, updated, None)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        namespaces = self._namespaces_under(tuple(op.namespace_prefix))
        if not (op.query and self.embeddings):
            if min(op.offset, op.limit) < 0:  # slices count negative bounds from the end
                return list(self._scan(namespaces, op.filter))[op.offset : op.offset + op.limit]
            out = []
            for n, item in enumerate(self._scan(namespaces, op.filter)):
                if n >= op.offset + op.limit:
                    break
                if n >= op.offset:
                    out.append(item)
            return out
        query = np.asarray(self.embeddings.embed_query(op.query), dtype=np.float32)
        self._check_vector_dims([query])
        if op.filter:
            return self._search_exact(namespaces, op, query)
        return self._search_indexed(namespaces, op, query)

    def _search_exact(
        self, namespaces: list[str], op: SearchOp, query: np.ndarray
    ) -> list[SearchItem]:
        """Filtered query: score the matching items' vectors directly."""
        candidates = list(self._scan(namespaces, op.filter))
        if not candidates:
            return []
        wanted = {(ns_text(c.namespace), c.key) for c in candidates}
        best: dict[tuple[str, str], float] = {}
        q = normalise(query)[0]
        for ns in {k[0] for k in wanted}:
            rows = self._conn.execute("SELECT key, vec FROM vectors WHERE ns = ?", (ns,))
            keys, blobs = [], []
            for key, blob in rows:
                if (ns, key) in wanted:
                    keys.append(key)
                    blobs.append(blob)
            if not keys:
                continue
            scores = normalise(matrix(blobs)) @ q
            for key, score in zip(keys, scores.tolist(), strict=True):
                if score > best.get((ns, key), -np.inf):
                    best[(ns, key)] = score
        return _rank(candidates, best, op)

    def _search_indexed(
        self, namespaces: list[str], op: SearchOp, query: np.ndarray
    ) -> list[SearchItem]:
        """Unfiltered query: the FAISS index of each namespace, results merged."""
        want = op.offset + op.limit
        best: dict[tuple[str, str], float] = {}
        seq = self._seq()
        for ns in namespaces:
            index = self._index(ns, seq)
            k = want + 8
            while True:
                hits = index.search(query, k)
                owners = self._owners([vid for _, vid in hits])
                found: dict[str, float] = {}
                for score, vid in hits:
                    key = owners.get(vid)
                    if key is not None and score > found.get(key, -np.inf):
                        found[key] = score
                if len(found) >= want or k >= index.size:
                    break
                k *= 4
            for key, score in found.items():
                best[(ns, key)] = score
        ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
        chosen = ranked[op.offset : op.offset + op.limit] if want >= 0 else []
        out = [self._scored_item(ns, key, score) for (ns, key), score in chosen]
        if len(out) < op.limit:
            out.extend(self._scoreless(namespaces, op.limit - len(out)))
        return [item for item in out if item is not None]

    def _scored_item(self, ns: str, key: str, score: float | None) -> SearchItem | None:
        row = self._conn.execute(
            "SELECT value, created_at, updated_at FROM items WHERE ns = ? AND key = ?", (ns, key)
        ).fetchone()
        if row is None:
            return None
        return _search_item(ns, key, json.loads(row[0]), row[1], row[2], score)

    def _scoreless(self, namespaces: list[str], limit: int) -> list[SearchItem]:
        """Items without vectors, in store order: they fill up short query results."""
        out: list[SearchItem] = []
        for ns in namespaces:
            rows = self._conn.execute(
                "SELECT key, value, created_at, updated_at FROM items i WHERE ns = ? AND NOT "
                "EXISTS (SELECT 1 FROM vectors v WHERE v.ns = i.ns AND v.key = i.key) "
                "ORDER BY rowid LIMIT ?",
                (ns, limit - len(out)),
            )
            out.extend(_search_item(ns, k, json.loads(v), c, u, None) for k, v, c, u in rows)
            if len(out) >= limit:
                break
        return out

    def _owners(self, vids: list[int]) -> dict[int, str]:
        """The record key of each vector id (ids removed meanwhile are left out)."""
        owners: dict[int, str] = {}
        for start in range(0, len(vids), _SQL_CHUNK):  # SQLite caps the ? per statement
            chunk = vids[start : start + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT vid, key FROM vectors WHERE vid IN ({marks})"
            owners.update(self._conn.execute(sql, chunk).fetchall())
        return owners

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        rows = self._conn.execute("SELECT DISTINCT ns FROM items").fetchall()
        return listed_namespaces(op, (_tuple(r[0]) for r in rows))

    # -- helpers ---------------------------------------------------------------------------

    def _seq(self) -> int:
        return int(self._conn.execute("SELECT value FROM meta WHERE name = 'seq'").fetchone()[0])

    def _dims(self) -> int:
        dims = (self.index_config or {}).get("dims")
        if not isinstance(dims, int):
            msg = "this store has no index config; semantic search needs one"
            raise RuntimeError(msg)
        return dims

    def _check_vector_dims(self, vectors: list[Any]) -> None:
        dims = self._dims()
        for vec in vectors:
            if len(vec) != dims:
                msg = (
                    f"the embedder returned a {len(vec)}-dimensional vector; "
                    f"the store expects {dims}"
                )
                raise ValueError(msg)

    # -- writes ----------------------------------------------------------------------------

    def _apply_puts(self, puts: dict[Key, PutOp]) -> None:
        encoded = {k: _encode(k, op) for k, op in puts.items()}
        to_embed = texts_to_embed(puts, self._fields) if self.embeddings else {}
        vectors: dict[Key, list[tuple[str, bytes]]] = defaultdict(list)
        if to_embed and self.embeddings:
            embedded = self.embeddings.embed_documents(list(to_embed))
            self._check_vector_dims(embedded)
            if len(embedded) != len(to_embed):
                msg = f"the embedder returned {len(embedded)} vectors for {len(to_embed)} texts"
                raise ValueError(msg)
            for owners, vec in zip(to_embed.values(), embedded, strict=True):
                blob = np.asarray(vec, dtype=np.float32).tobytes()
                for item_key, path in owners:
                    vectors[item_key].append((path, blob))
        now = datetime.now(UTC).isoformat()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                seq = self._seq() + 1
                changes = write_puts(self._conn, encoded, vectors, seq, now)
                self._conn.execute("UPDATE meta SET value = ? WHERE name = 'seq'", (str(seq),))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            if self._cache is not None:
                self._cache.apply(changes, seq)


def _tuple(ns: str) -> tuple[str, ...]:
    return tuple(ns.split("."))


def _encode(key: Key, op: PutOp) -> str | None:
    if op.value is None:
        return None
    try:
        return json.dumps(dict(op.value), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        msg = f"value of {key[1]!r} in {key[0]} cannot be stored as JSON: {exc}"
        raise ValueError(msg) from exc


def _search_item(
    ns: str, key: str, value: dict[str, Any], created: str, updated: str, score: float | None
) -> SearchItem:
    return SearchItem(
        namespace=_tuple(ns),
        key=key,
        value=value,
        created_at=datetime.fromisoformat(created),
        updated_at=datetime.fromisoformat(updated),
        score=score,
    )


def _rank(
    candidates: list[SearchItem], best: dict[tuple[str, str], float], op: SearchOp
) -> list[SearchItem]:
    """Order filtered candidates as InMemoryStore does: by best score, then fill up."""
    scored = [c for c in candidates if (ns_text(c.namespace), c.key) in best]
    scored.sort(key=lambda c: best[(ns_text(c.namespace), c.key)], reverse=True)
    kept = scored[op.offset : op.offset + op.limit] if op.offset + op.limit >= 0 else []
    for item in kept:
        item.score = float(best[(ns_text(item.namespace), item.key)])
    scoreless = [c for c in candidates if (ns_text(c.namespace), c.key) not in best]
    if scoreless and len(kept) < op.limit:
        kept.extend(scoreless[: op.limit - len(kept)])
    return kept
